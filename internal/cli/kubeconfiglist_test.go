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
