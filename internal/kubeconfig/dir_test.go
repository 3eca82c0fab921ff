package kubeconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKubeconfigDir: --kubeconfig-dir on a real folder, laid out as a mounted Secret is (the
// keys are links into a ..data folder) and as people lay out their own. Every file is a cluster
// or a bad input, so that no cluster is left out unnoticed.
func TestKubeconfigDir(t *testing.T) {
	t.Parallel()
	kc := yamlOf(t, newConfig("a"))
	type entry struct{ name, link, content string } // link: a symbolic link's target; content "/" a folder
	tests := []struct {
		name    string
		entries []entry
		ci      bool
		want    []string // cluster=file
		wantErr string
	}{{
		name: "a mounted Secret: the keys, not the atomic writer's ..data",
		entries: []entry{
			{name: "..2026_11_24", content: "/"}, {name: "..2026_11_24/prod-eu", content: kc}, {name: "..2026_11_24/prod-us.yaml", content: kc},
			{name: "..data", link: "..2026_11_24"}, {name: "prod-eu", link: "..data/prod-eu"}, {name: "prod-us.yaml", link: "..data/prod-us.yaml"},
		},
		want: []string{"prod-eu=file:prod-eu", "prod-us=file:prod-us.yaml"},
	}, {
		name:    "folders and links to folders are not clusters",
		entries: []entry{{name: "sub", content: "/"}, {name: "sub/x", content: kc}, {name: "linked", link: "sub"}, {name: "prod.yml", content: kc}},
		want:    []string{"prod=file:prod.yml"},
	}, {
		name:    "one extension is taken off",
		entries: []entry{{name: "prod.yaml.yml", content: kc}},
		want:    []string{"prod.yaml=file:prod.yaml.yml"},
	}, {
		name:    "two files naming one cluster",
		entries: []entry{{name: "prod", content: kc}, {name: "prod.yaml", content: kc}},
		wantErr: `the files "prod" and "prod.yaml" both name the cluster "prod": keep one of them`,
	}, {
		name:    "a hidden file is not skipped unnoticed",
		entries: []entry{{name: ".prod", content: kc}, {name: "stg", content: kc}},
		wantErr: `the file ".prod" cannot name a cluster`,
	}, {
		name:    "a broken link",
		entries: []entry{{name: "prod", link: "gone"}},
		wantErr: `cannot read "prod"`,
	}, {
		name:    "in CI, a link to a file outside the folder",
		entries: []entry{{name: "prod", link: "../outside.yaml"}},
		ci:      true,
		wantErr: `"prod" is not read in a CI job: it links to a file outside the folder; put the file itself in the folder`,
	}, {
		name:    "at a terminal, a link to a file outside the folder",
		entries: []entry{{name: "prod", link: "../outside.yaml"}},
		want:    []string{"prod=file:prod"},
	}, {
		name: "in CI, a mounted Secret",
		entries: []entry{
			{name: "..2026_11_24", content: "/"}, {name: "..2026_11_24/prod-eu", content: kc},
			{name: "..data", link: "..2026_11_24"}, {name: "prod-eu", link: "..data/prod-eu"},
		},
		ci:   true,
		want: []string{"prod-eu=file:prod-eu"},
	}, {
		name:    "only folders",
		entries: []entry{{name: "sub", content: "/"}},
		wantErr: `no kubeconfig file in the folder`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "dir")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "..", "outside.yaml"), []byte(kc), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, e := range tt.entries {
				p := filepath.Join(dir, e.name)
				var err error
				switch {
				case e.link != "":
					err = os.Symlink(e.link, p)
				case e.content == "/":
					err = os.Mkdir(p, 0o755)
				default:
					err = os.WriteFile(p, []byte(e.content), 0o600)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			env := Env{ReadFile: os.ReadFile, Getenv: func(string) string { return "" }, Workspace: dir, CI: tt.ci}
			l := &loader{in: Input{CLI: true, KubeconfigDir: dir}, env: env}
			list, _, _, err := l.dirList()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, strings.Fields(list)); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			clusters, _, err := Load(Input{CLI: true, KubeconfigDir: dir}, env)
			if err != nil || len(clusters) != len(tt.want) {
				t.Errorf("Load: %d clusters, %v", len(clusters), err)
			}
		})
	}
}

// TestKubeconfigDirLinkedOut (attacker): in CI a --kubeconfig-dir of the workspace that is
// itself a link out of it (a pull request's link to the runner's ~/.kube) is bad input, and no
// file in it is read; at a terminal it is the user's folder.
func TestKubeconfigDirLinkedOut(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{ws, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "config"), []byte(yamlOf(t, newConfig("a"))), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, filepath.Join(ws, "kubeconfigs")); err != nil {
		t.Fatal(err)
	}
	for _, ci := range []bool{true, false} {
		env := Env{ReadFile: os.ReadFile, Getenv: func(string) string { return "" }, Workspace: ws, CI: ci}
		clusters, _, err := Load(Input{CLI: true, KubeconfigDir: "kubeconfigs"}, env)
		if ci {
			if err == nil || !strings.Contains(err.Error(), "--kubeconfig-dir kubeconfigs is not read in a CI job: it is in the workspace but links out of it") {
				t.Errorf("CI: error %v, clusters %d; want the folder refused", err, len(clusters))
			}
			continue
		}
		if err != nil || len(clusters) != 1 {
			t.Errorf("a terminal: error %v, clusters %d; want the folder's one cluster", err, len(clusters))
		}
	}
}
