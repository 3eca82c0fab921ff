package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// failingWriter accepts limit bytes, then fails every write.
type failingWriter struct {
	limit int
	got   bytes.Buffer
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.got.Len()+len(p) > w.limit {
		return 0, errors.New("no space left on device")
	}
	return w.got.Write(p)
}

// TestJSONOutputWithJSONFile: -o json with --json-file prints the very document the file holds
// (encoded once, into the file, then copied from it), the file whole before stdout gets a byte
// (a reader that stops early kills the process with SIGPIPE); a file that cannot be written,
// or is written in place, leaves stdout its own whole document; a stdout that fails leaves the
// file whole; the step fails saying which.
func TestJSONOutputWithJSONFile(t *testing.T) {
	t.Parallel()
	const rev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	resources, objects := fakeapi.App("app", rev, 30)
	healthy := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(healthy.Close)
	kubeconfig := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\nusers: [{name: u, user: {token: tok-0123456789}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", healthy.URL())

	tests := []struct {
		name       string
		file       func(dir string) string
		stdout     *failingWriter
		terminal   bool // run at a user's terminal, not in a CI job (GITHUB_ACTIONS unset)
		wantCode   int
		wantStderr string
		wantFile   bool
		wantStdout bool
	}{
		{name: "both written", file: func(dir string) string { return filepath.Join(dir, "report.json") }, wantCode: 0, wantFile: true, wantStdout: true},
		{name: "file in a missing folder", file: func(dir string) string { return filepath.Join(dir, "missing", "report.json") },
			wantCode: 1, wantStderr: "write --json-file", wantStdout: true},
		{name: "a folder at the path", file: func(dir string) string {
			p := filepath.Join(dir, "report.json")
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}, wantCode: 1, wantStderr: "write --json-file", wantStdout: true},
		{name: "file written in place (a symbolic link) at a terminal", file: func(dir string) string {
			return jsonLink(t, dir)
		}, terminal: true, wantCode: 0, wantFile: true, wantStdout: true},
		{name: "a symbolic link in a CI job's clone", file: func(dir string) string {
			return jsonLink(t, dir)
		}, wantCode: 1, wantStderr: "write --json-file: write " + "DIR/report.json: it is a symbolic link", wantStdout: true},
		{name: "stdout fails midway", file: func(dir string) string { return filepath.Join(dir, "report.json") },
			stdout: &failingWriter{limit: 100}, wantCode: 1, wantStderr: "write output: no space left on device", wantFile: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			clusters := clustersFile(t, dir, "prod=env:KC\n", map[string]string{"KC": kubeconfig})
			path := tt.file(dir)
			f := newFakeEnv(t, nil)
			if tt.terminal {
				delete(f.vars, "GITHUB_ACTIONS")
			}
			env := f.env()
			if tt.stdout != nil {
				env.Stdout = tt.stdout
			}
			if tt.wantFile && tt.stdout == nil {
				// At stdout's first byte, the file is already whole.
				env.Stdout = &checkFirst{w: env.Stdout, check: func() {
					data, err := os.ReadFile(path)
					if err != nil {
						t.Errorf("--json-file when stdout is first written: %v", err)
						return
					}
					assertReport(t, "--json-file when stdout is first written", data)
				}}
			}
			code := Run(context.Background(), []string{"verify", "--quiet", "--clusters-file", clusters, "--resource", "ks/app",
				"--revision", "a1b2c3d4", "--timeout", "20s", "-o", "json", "--json-file", path}, env)
			if code != tt.wantCode {
				t.Errorf("Run() = %d, want %d\n%s", code, tt.wantCode, f.stderr.String())
			}
			if want := strings.ReplaceAll(tt.wantStderr, "DIR", dir); want != "" && !strings.Contains(f.stderr.String(), want) {
				t.Errorf("stderr %q, want it to say %q", f.stderr.String(), tt.wantStderr)
			}
			file, err := os.ReadFile(path)
			if tt.wantFile {
				if err != nil {
					t.Fatalf("--json-file: %v", err)
				}
				assertReport(t, "--json-file", file)
			} else if err == nil && string(file) != "old" {
				t.Errorf("--json-file kept although it could not be written whole:\n%.200s", file)
			}
			if tt.wantStdout {
				assertReport(t, "stdout", f.stdout.Bytes())
			}
			if tt.wantFile && tt.wantStdout {
				if diff := cmp.Diff(string(file), f.stdout.String()); diff != "" {
					t.Errorf("stdout is not the --json-file document (-file +stdout):\n%s", diff)
				}
			}
		})
	}
}

// jsonLink is a symbolic link report.json in dir to target.json, which holds "old".
func jsonLink(t *testing.T, dir string) string {
	t.Helper()
	target, link := filepath.Join(dir, "target.json"), filepath.Join(dir, "report.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// assertReport checks that data is a whole report with the cluster Current.
func assertReport(t *testing.T, what string, data []byte) {
	t.Helper()
	var doc struct {
		Results []struct {
			Cluster, Verdict string
			Objects          []any
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s is no whole JSON document: %v\n%.300s", what, err, data)
	}
	if len(doc.Results) != 1 || doc.Results[0].Cluster != "prod" || doc.Results[0].Verdict != "Current" || len(doc.Results[0].Objects) != 30 {
		t.Errorf("%s: results %+v, want prod Current with its 30 objects", what, doc.Results)
	}
}

// checkFirst calls check before its first write goes to w.
type checkFirst struct {
	w       io.Writer
	check   func()
	checked bool
}

func (c *checkFirst) Write(p []byte) (int, error) {
	if !c.checked {
		c.checked = true
		c.check()
	}
	return c.w.Write(p)
}
