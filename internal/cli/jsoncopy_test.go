package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/fakeapi"
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
// (encoded once for both), and a failure of one never cuts the other short: a file that cannot
// be created or kept leaves stdout whole, a stdout that fails leaves the file whole, and the
// step fails saying which.
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
		wantCode   int
		wantStderr string
		wantFile   bool
		wantStdout bool
	}{
		{name: "both written", file: func(dir string) string { return filepath.Join(dir, "report.json") }, wantCode: 0, wantFile: true, wantStdout: true},
		{name: "file in a missing folder", file: func(dir string) string { return filepath.Join(dir, "missing", "report.json") },
			wantCode: 1, wantStderr: "write --json-file", wantStdout: true},
		{name: "file that cannot be kept", file: func(dir string) string {
			// A folder where the file should be: the document is written, the rename fails.
			p := filepath.Join(dir, "report.json")
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}, wantCode: 1, wantStderr: "write --json-file", wantStdout: true},
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
			env := f.env()
			if tt.stdout != nil {
				env.Stdout = tt.stdout
			}
			code := Run(context.Background(), []string{"verify", "--quiet", "--clusters-file", clusters, "--resource", "ks/app",
				"--revision", "a1b2c3d4", "--timeout", "20s", "-o", "json", "--json-file", path}, env)
			if code != tt.wantCode {
				t.Errorf("Run() = %d, want %d\n%s", code, tt.wantCode, f.stderr.String())
			}
			if tt.wantStderr != "" && !strings.Contains(f.stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q, want it to say %q", f.stderr.String(), tt.wantStderr)
			}
			file, err := os.ReadFile(path)
			if tt.wantFile {
				if err != nil {
					t.Fatalf("--json-file: %v", err)
				}
				assertReport(t, "--json-file", file)
			} else if err == nil {
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

// TestTeeWriter: a destination that fails is dropped and its error kept; the other gets
// everything; the writer fails only once both have.
func TestTeeWriter(t *testing.T) {
	t.Parallel()
	chunks := []string{strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)}
	for _, tt := range []struct {
		name                 string
		fileLimit, copyLimit int
		wantFile, wantCopy   string
		wantErrAt            int // the chunk whose Write fails, -1 for none
	}{
		{name: "both whole", fileLimit: 1000, copyLimit: 1000, wantFile: strings.Join(chunks, ""), wantCopy: strings.Join(chunks, ""), wantErrAt: -1},
		{name: "file fails", fileLimit: 50, copyLimit: 1000, wantFile: chunks[0], wantCopy: strings.Join(chunks, ""), wantErrAt: -1},
		{name: "copy fails", fileLimit: 1000, copyLimit: 50, wantFile: strings.Join(chunks, ""), wantCopy: chunks[0], wantErrAt: -1},
		{name: "both fail", fileLimit: 50, copyLimit: 90, wantFile: chunks[0], wantCopy: chunks[0] + chunks[1], wantErrAt: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file, copied := &failingWriter{limit: tt.fileLimit}, &failingWriter{limit: tt.copyLimit}
			tee := &teeWriter{file: file, copy: &teeCopy{w: copied}}
			errAt := -1
			for i, c := range chunks {
				if _, err := tee.Write([]byte(c)); err != nil && errAt < 0 {
					errAt = i
				}
			}
			if diff := cmp.Diff([]any{tt.wantFile, tt.wantCopy, tt.wantErrAt}, []any{file.got.String(), copied.got.String(), errAt}); diff != "" {
				t.Errorf("file, copy, failing write (-want +got):\n%s", diff)
			}
			if (tee.fileErr != nil) != (len(tt.wantFile) < 120) || (tee.copy.err != nil) != (len(tt.wantCopy) < 120) {
				t.Errorf("errors kept: file %v, copy %v", tee.fileErr, tee.copy.err)
			}
		})
	}
}
