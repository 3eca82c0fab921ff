package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubeconfigListMissingFile: a file of $KUBECONFIG that does not exist is a note on a
// workstation, as kubectl skips it, and bad input in CI, where the file left out (a failed
// secret's mount) may name the clusters the job is meant to verify.
func TestKubeconfigListMissingFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		ci       bool
		wantCode int
		want     []string
		notWant  []string
	}{{
		name:     "workstation: a note, and the run goes on",
		wantCode: 2, // --context nope: the run got past the list
		want: []string{
			"app-status verify: note: KUBECONFIG lists {dir}/prod.yaml, which does not exist: skipped, as kubectl skips it\n",
			`--context "nope": context "nope" not found`,
		},
	}, {
		name:     "CI: bad input naming the missing file",
		ci:       true,
		wantCode: 2,
		want:     []string{"{dir}/prod.yaml does not exist, and a CI job does not go on without a file it lists"},
		notWant:  []string{"note:", `context "nope"`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "config"), []byte(tokenKubeconfig), 0o600); err != nil {
				t.Fatal(err)
			}
			f := newFakeEnv(t, map[string]string{"KUBECONFIG": filepath.Join(dir, "prod.yaml") + string(filepath.ListSeparator) + filepath.Join(dir, "config")})
			if !tt.ci {
				delete(f.vars, "GITHUB_ACTIONS")
			}
			code := Run(context.Background(), []string{"verify", "--context", "nope", "--resource", "ks/app", "--quiet"}, f.env())
			stderr := f.stderr.String()
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d:\n%s", code, tt.wantCode, stderr)
			}
			for _, w := range tt.want {
				if w = strings.ReplaceAll(w, "{dir}", dir); !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr has %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestCurrentContextOfSeveral: with no flag naming the clusters, a kubeconfig of several
// contexts has its current one verified with a note on a workstation, and is bad input in CI,
// where the job must say which clusters it verifies.
func TestCurrentContextOfSeveral(t *testing.T) {
	t.Parallel()
	// The current context cannot name a cluster, so that the workstation's run stops, as bad
	// input, right after the note and before any cluster is contacted.
	const several = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: Prod EU
  context: {cluster: c, user: u}
- name: dev
  context: {cluster: c, user: u}
current-context: Prod EU
users:
- name: u
  user:
    token: s3cr3t-t0ken-value-that-must-never-leak
`
	const narrowed = "verifying the current context Prod EU only (2 contexts in the kubeconfig): --all-contexts verifies every one, --context NAME one of them"
	tests := []struct {
		name    string
		ci      bool
		args    []string
		want    []string
		notWant []string
	}{{
		name: "workstation: a note, and the current context is verified",
		want: []string{"app-status verify: note: " + narrowed + "\n", `the current-context "Prod EU"`},
	}, {
		name:    "CI: bad input, the sentence as the error",
		ci:      true,
		want:    []string{"app-status verify: " + narrowed + "\n"},
		notWant: []string{"note:", `the current-context "Prod EU"`},
	}, {
		name:    "CI with --context: no note, no refusal",
		ci:      true,
		args:    []string{"--context", "nope"},
		want:    []string{`--context "nope": context "nope" not found`},
		notWant: []string{"note:", narrowed},
	}, {
		name:    "workstation with --all-contexts: no note",
		args:    []string{"--all-contexts"},
		want:    []string{`context "Prod EU" of kubeconfig`},
		notWant: []string{"note:", narrowed},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(path, []byte(several), 0o600); err != nil {
				t.Fatal(err)
			}
			f := newFakeEnv(t, nil)
			if !tt.ci {
				delete(f.vars, "GITHUB_ACTIONS")
			}
			args := append([]string{"verify", "--kubeconfig", path, "--resource", "ks/app", "--quiet"}, tt.args...)
			code := Run(context.Background(), args, f.env())
			stderr := f.stderr.String()
			if code != 2 {
				t.Errorf("exit %d, want 2 (bad input):\n%s", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr has %q:\n%s", w, stderr)
				}
			}
		})
	}
}
