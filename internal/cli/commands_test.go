package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/testing/runnertest"
)

// commandText is every runner command the tests know, in every disguise, on lines of its own
// and mid-line: what a hostile cluster, error body or repository file name may hold.
var commandText = runnertest.Hostile[0] + "\n" + strings.Join(runnertest.Hostile, "\n") + " tail " + strings.Join(runnertest.Hostile, " ")

// commandFleet starts three clusters whose text is commandText: one API server that refuses
// everything with it as the 403 message, one whose Kustomization fails its build with it (the
// message quotes a repository's file name), one whose Deployment misses its progress deadline
// with it. It returns a clusters input naming them, with their kubeconfigs as variables.
func commandFleet(t *testing.T) (clusters string, vars map[string]string) {
	t.Helper()
	const rev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403, "message": commandText})
	}))
	t.Cleanup(refusing.Close)

	resources, objects := fakeapi.App("app", rev, 3)
	objects[0]["status"].(map[string]any)["conditions"] = []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "BuildFailed", "message": commandText, "observedGeneration": int64(1)},
	}
	buildFailed := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(buildFailed.Close)

	resources, objects = fakeapi.App("app", rev, 3)
	objects[1]["status"].(map[string]any)["conditions"] = []any{
		map[string]any{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable", "message": commandText},
		map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": commandText},
	}
	objects[1]["status"].(map[string]any)["readyReplicas"] = int64(0)
	objects[1]["status"].(map[string]any)["availableReplicas"] = int64(0)
	stuck := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(stuck.Close)

	vars = map[string]string{}
	for name, url := range map[string]string{"refusing": refusing.URL, "build-failed": buildFailed.URL(), "stuck": stuck.URL()} {
		env := "KC_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		vars[env] = fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\nusers: [{name: u, user: {token: tok-%s-0123456789}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", url, name)
		clusters += name + "=env:" + env + "\n"
	}
	return clusters, vars
}

// TestNoRunnerCommandFromClusterText (issue 20): with every command form in a 403 body, a Flux
// condition and a workload's condition, nothing the action prints is a command to the runner
// but the step's own (its masks and one error annotation per failed cluster), and nothing the
// CLI prints on stdout or stderr is one at all, in every output format.
func TestNoRunnerCommandFromClusterText(t *testing.T) {
	t.Parallel()
	clusters, vars := commandFleet(t)

	t.Run("action", func(t *testing.T) {
		t.Parallel()
		f := newFakeEnv(t, vars)
		f.vars["INPUT_CLUSTERS"], f.vars["INPUT_RESOURCE"], f.vars["INPUT_TIMEOUT"], f.vars["INPUT_REVISION"] = clusters, "ks/app", "20s", "a1b2c3d4"
		if code := Run(context.Background(), []string{"action"}, f.env()); code != 1 {
			t.Errorf("Run() = %d, want 1", code)
		}
		log := f.stdout.String() + f.stderr.String()
		if !strings.Contains(log, "## [stop-commands]") {
			t.Errorf("the cluster text did not reach the log, the test proves nothing:\n%s", log)
		}
		// The step's own masks all come before it contacts any cluster.
		masks, _, _ := strings.Cut(log, "Verifying ")
		errors, groups, ends := 0, 0, 0
		for _, c := range runnertest.Commands(log) {
			switch {
			case c.Form == "::" && c.Name == "add-mask" && strings.Contains(masks, c.Line+"\n"):
			case c.Form == "::" && strings.HasPrefix(c.Line, "::error title="):
				errors++
			case c.Form == "::" && c.Name == "group" && groups == ends:
				groups++
			case c.Form == "::" && c.Line == "::endgroup::" && groups == ends+1:
				ends++
			default:
				t.Errorf("the log holds a command that is not the step's own: %+v", c)
			}
		}
		if groups != 3 || ends != 3 {
			t.Errorf("%d groups and %d ends of groups, want 3 of each (one per failed cluster)\n%s", groups, ends, log)
		}
		if errors != 3 {
			t.Errorf("%d error annotations, want 3 (one per failed cluster)\n%s", errors, log)
		}
	})
	for _, output := range []string{"text", "json", "markdown"} {
		t.Run("cli -o "+output, func(t *testing.T) {
			t.Parallel()
			file := clustersFile(t, t.TempDir(), clusters, vars)
			f := newFakeEnv(t, nil)
			code := Run(context.Background(), []string{"verify", "--clusters-file", file, "--resource", "ks/app", "--revision", "a1b2c3d4",
				"--timeout", "20s", "-o", output}, f.env())
			if code != 1 {
				t.Errorf("Run() = %d, want 1\n%s", code, f.stderr.String())
			}
			for name, text := range map[string]string{"stdout": f.stdout.String(), "stderr": f.stderr.String()} {
				if !strings.Contains(text, "stop-commands") {
					t.Errorf("%s: the cluster text did not reach it, the test proves nothing:\n%s", name, text)
				}
				if cmds := runnertest.Commands(text); len(cmds) > 0 {
					t.Errorf("%s holds runner commands: %+v", name, cmds)
				}
			}
			if output == "json" {
				var doc map[string]any
				if err := json.Unmarshal(f.stdout.Bytes(), &doc); err != nil {
					t.Fatalf("stdout is no JSON document: %v", err)
				}
				if !strings.Contains(f.stdout.String(), `##\u005b`) {
					t.Errorf("want the brackets of commands in strings escaped:\n%s", f.stdout.String())
				}
			}
		})
	}
	// -o json with --json-file: stdout is the file's copy, passed through stdout's cleaning
	// again, and still the very same document.
	t.Run("cli -o json with --json-file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		file := clustersFile(t, dir, clusters, vars)
		report := filepath.Join(dir, "report.json")
		f := newFakeEnv(t, nil)
		code := Run(context.Background(), []string{"verify", "--quiet", "--clusters-file", file, "--resource", "ks/app", "--revision", "a1b2c3d4",
			"--timeout", "20s", "-o", "json", "--json-file", report}, f.env())
		if code != 1 {
			t.Errorf("Run() = %d, want 1\n%s", code, f.stderr.String())
		}
		data, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "stop-commands") {
			t.Errorf("the cluster text did not reach the report, the test proves nothing:\n%s", data)
		}
		if f.stdout.String() != string(data) {
			t.Errorf("stdout is not the --json-file document:\nstdout:\n%.600s\nfile:\n%.600s", f.stdout.String(), data)
		}
		if cmds := runnertest.Commands(f.stdout.String()); len(cmds) > 0 {
			t.Errorf("stdout holds runner commands: %+v", cmds)
		}
	})
	// The report files may be the job's log (/dev/stdout) or printed by a later step: they
	// hold the cluster's text with the same commands broken (JSON meaning the same).
	t.Run("cli report files", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		file := clustersFile(t, dir, clusters, vars)
		files := map[string]string{"--json-file": "report.json", "--summary-file": "summary.md", "--junit-file": "junit.xml", "--dotenv-file": "report.env"}
		args := []string{"verify", "--quiet", "--clusters-file", file, "--resource", "ks/app", "--revision", "a1b2c3d4", "--timeout", "20s"}
		for flag, name := range files {
			args = append(args, flag, filepath.Join(dir, name))
		}
		f := newFakeEnv(t, nil)
		if code := Run(context.Background(), args, f.env()); code != 1 {
			t.Errorf("Run() = %d, want 1\n%s", code, f.stderr.String())
		}
		for flag, name := range files {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if cmds := runnertest.Commands(string(data)); len(cmds) > 0 {
				t.Errorf("%s holds runner commands: %+v", flag, cmds)
			}
			if flag == "--dotenv-file" {
				continue // (names and counts only: no cluster text)
			}
			if !strings.Contains(string(data), "stop-commands") {
				t.Errorf("%s: the cluster text did not reach it, the test proves nothing:\n%s", flag, data)
			}
		}
		data, err := os.ReadFile(filepath.Join(dir, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("--json-file is no JSON document: %v", err)
		}
		if !strings.Contains(string(data), `##\u005b`) {
			t.Errorf("want the brackets of commands in --json-file's strings escaped:\n%s", data)
		}
	})
}

// clustersFile writes the kubeconfigs vars holds into dir, and a clusters file naming them
// (clusters, with env: references as file: ones); it returns the clusters file's path.
func clustersFile(t *testing.T, dir, clusters string, vars map[string]string) string {
	t.Helper()
	file := filepath.Join(dir, "clusters")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(clusters, "=env:", "=file:")), 0o600); err != nil {
		t.Fatal(err)
	}
	for env, doc := range vars {
		if err := os.WriteFile(filepath.Join(dir, env), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return file
}
