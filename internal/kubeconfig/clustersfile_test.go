package kubeconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestClustersFileLinesStayInTheFolder (attacker): a clusters file can come from the
// repository, so from a pull request. In CI its file: lines name only files in the folder its
// relative paths start at: a path going up with "..", an absolute one outside the folder, or a
// link out of it gives the cluster InvalidConfig naming the line and the fix, and the file
// (a kubeconfig of the runner's the pipeline never listed) is never read. The pipeline's own
// lines (--cluster) and a clusters file at a terminal keep reading any file.
func TestClustersFileLinesStayInTheFolder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	outside := filepath.Join(root, "outside.yaml")
	kc := yamlOf(t, newConfig("a"))
	for path, data := range map[string]string{outside: kc, filepath.Join(ws, "kc", "a.yaml"): kc} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(ws, "kc", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	// A folder of the clone a pull request turned into a link out of it.
	if err := os.Symlink(root, filepath.Join(ws, "linked")); err != nil {
		t.Fatal(err)
	}
	const fix = "may refer only to files in the folder its relative paths start at"
	tests := []struct {
		name        string
		line        string
		lineFlag    bool   // the line is a --cluster flag, the pipeline's own
		clustersDir string // --clusters-dir
		ci          bool
		wantInvalid []string // what Invalid says; none: the cluster loads
	}{
		{name: "CI, a file in the folder", line: "c=file:kc/a.yaml", ci: true},
		{name: "CI, a path going up", line: "c=file:../outside.yaml", ci: true,
			wantInvalid: []string{`clusters.txt line 1: file:../outside.yaml is not read: it goes up with ".."`, fix, "(" + ws + ")", "--cluster"}},
		{name: "CI, an absolute path outside", line: "c=file:" + outside, ci: true,
			wantInvalid: []string{`clusters.txt line 1: file:` + outside + ` is not read: it is outside that folder`, fix}},
		{name: "CI, a link out of the folder", line: "c=file:kc/link.yaml", ci: true,
			wantInvalid: []string{`clusters.txt line 1: file:kc/link.yaml is not read: it links to a file outside that folder`, fix}},
		{name: "CI, a --cluster line going up", line: "c=file:../outside.yaml", lineFlag: true, ci: true},
		{name: "CI, --clusters-dir a link out of the workspace", line: "c=file:outside.yaml", clustersDir: "linked", ci: true,
			wantInvalid: []string{`clusters.txt line 1: file:outside.yaml is not read: the folder its relative paths start at (` + filepath.Join(ws, "linked") + `) is in the workspace but links out of it`, "--cluster"}},
		{name: "CI, --clusters-dir a folder of the workspace", line: "c=file:a.yaml", clustersDir: "kc", ci: true},
		{name: "a terminal, --clusters-dir a link out of the workspace", line: "c=file:outside.yaml", clustersDir: "linked"},
		{name: "a terminal, a path going up", line: "c=file:../outside.yaml"},
		{name: "a terminal, an absolute path outside", line: "c=file:" + outside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var read []string
			env := Env{
				Getenv: func(string) string { return "" },
				ReadFile: func(p string) ([]byte, error) {
					mu.Lock()
					read = append(read, p)
					mu.Unlock()
					if p == filepath.Join(ws, "clusters.txt") {
						return []byte(tt.line + "\n"), nil
					}
					return os.ReadFile(p)
				},
				Workspace: ws, Home: filepath.Join(root, "home"), CI: tt.ci,
			}
			in := Input{CLI: true, ClustersFile: "clusters.txt", ClustersBase: tt.clustersDir}
			if tt.lineFlag {
				in = Input{CLI: true, ClusterLines: []string{tt.line}}
			}
			clusters, _, err := Load(in, env)
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			got := clusters[0]
			for _, s := range tt.wantInvalid {
				if !strings.Contains(got.Invalid, s) {
					t.Errorf("Invalid = %q\nwant it to say %q", got.Invalid, s)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			readOutside := slices.Contains(read, outside) || slices.Contains(read, filepath.Join(ws, "kc", "link.yaml")) ||
				slices.Contains(read, filepath.Join(ws, "linked", "outside.yaml"))
			want := []any{len(tt.wantInvalid) > 0, len(tt.wantInvalid) == 0 && strings.Contains(tt.line, "outside")}
			if diff := cmp.Diff(want, []any{got.Invalid != "", readOutside}); diff != "" {
				t.Errorf("[invalid, outside file read] (-want +got):\n%s\nInvalid: %s", diff, got.Invalid)
			}
		})
	}
}

// TestClustersFileContextLines (attacker): in CI a clusters file, which can come from the
// repository, does not choose among the contexts of the pipeline's kubeconfig: its
// NAME=context:CTX line is InvalidConfig naming the line and the fix (--context, --cluster),
// so a pull request cannot have the job verify, or with reconcile write to, a cluster of the
// pipeline's kubeconfig it never listed. The pipeline's own lines and a clusters file at a
// terminal pick any context.
func TestClustersFileContextLines(t *testing.T) {
	t.Parallel()
	kc := yamlOf(t, newConfig("a"))
	tests := []struct {
		name        string
		in          Input
		ci          bool
		wantInvalid []string // what Invalid says; none: the cluster loads
	}{
		{name: "CI, a line of a clusters file", in: Input{CLI: true, ClustersFile: "clusters.txt"}, ci: true,
			wantInvalid: []string{`clusters.txt line 1: context:a: in a CI job a clusters file`, "a pull request", "a cluster the pipeline never listed", "--context a", "--cluster 'x=context:a'"}},
		{name: "CI, a --cluster line", in: Input{CLI: true, ClusterLines: []string{"x=context:a"}}, ci: true},
		{name: "CI, the action's clusters input", in: Input{Clusters: "x=context:a", Kubeconfig: kc}, ci: true},
		{name: "a terminal, a line of a clusters file", in: Input{CLI: true, ClustersFile: "clusters.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := fakeEnv{files: map[string]string{"/ws/clusters.txt": "x=context:a\n", "/home/me/.kube/config": kc}, ci: tt.ci}.env()
			clusters, _, err := Load(tt.in, env)
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			got := clusters[0]
			for _, s := range tt.wantInvalid {
				if !strings.Contains(got.Invalid, s) {
					t.Errorf("Invalid = %q\nwant it to say %q", got.Invalid, s)
				}
			}
			if diff := cmp.Diff(len(tt.wantInvalid) > 0, got.Invalid != ""); diff != "" {
				t.Errorf("invalid (-want +got):\n%s\nInvalid: %s", diff, got.Invalid)
			}
			if len(tt.wantInvalid) == 0 && got.Config == nil {
				t.Errorf("Config = nil, want the context's cluster")
			}
		})
	}
}
