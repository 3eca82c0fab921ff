package hack

import (
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// dependabotConfig is the part of .github/dependabot.yml these tests read.
type dependabotConfig struct {
	Version int `json:"version"`
	Updates []struct {
		Ecosystem   string   `json:"package-ecosystem"`
		Directory   string   `json:"directory"`
		Directories []string `json:"directories"`
		Groups      map[string]struct {
			Patterns []string `json:"patterns"`
		} `json:"groups"`
	} `json:"updates"`
}

// manifestFolders returns, for each Dependabot ecosystem, the folders of the repository's
// tracked files that Dependabot reads for it, as Dependabot names them ("/", "/hack"). testdata
// is left out: nothing there is built.
func manifestFolders(t *testing.T, files []string) map[string][]string {
	t.Helper()
	image := regexp.MustCompile(`(?i)(dockerfile|containerfile)`) // Dependabot's docker file fetcher
	found := map[string][]string{}
	add := func(ecosystem, dir string) {
		dir = path.Clean("/" + dir)
		if !slices.Contains(found[ecosystem], dir) {
			found[ecosystem] = append(found[ecosystem], dir)
		}
	}
	for _, f := range files {
		if slices.Contains(strings.Split(f, "/"), "testdata") {
			continue
		}
		dir, name := path.Split(f)
		switch {
		case name == "go.mod":
			add("gomod", dir)
		case image.MatchString(name):
			add("docker", dir)
		case name == "action.yml" || name == "action.yaml":
			add("github-actions", dir)
		case strings.HasPrefix(f, ".github/workflows/"):
			add("github-actions", "/") // Dependabot reads the workflows from the root's entry
		case name == "package.json":
			add("npm", dir)
		}
	}
	for _, dirs := range found {
		slices.Sort(dirs)
	}
	return found
}

// trackedFiles lists the repository's files as git tracks them, relative to its root.
func trackedFiles(t *testing.T) []string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", "ls-files", "-z")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// matchFolders returns the folders among dirs that one of the patterns names (a Dependabot
// directory: a path, or a glob whose * stands for one path element).
func matchFolders(t *testing.T, patterns, dirs []string) []string {
	t.Helper()
	var matched []string
	for _, dir := range dirs {
		for _, p := range patterns {
			if strings.Contains(p, "**") {
				t.Fatalf("directory %q: ** is not checked by this test; list the folders or use *", p)
			}
			ok, err := path.Match(path.Clean(p), dir)
			if err != nil {
				t.Fatalf("directory %q: %v", p, err)
			}
			if ok {
				matched = append(matched, dir)
				break
			}
		}
	}
	return matched
}

// TestDependabotCoversEveryManifest checks that Dependabot watches every go.mod, every action
// and workflow, every folder with a Dockerfile or Containerfile and every package.json of the
// repository, except the folders left out on purpose (whose reason dependabot.yml gives), that
// every folder it lists still holds what its ecosystem reads, and that each entry groups its
// updates so that they arrive as few pull requests.
func TestDependabotCoversEveryManifest(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../.github/dependabot.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg dependabotConfig
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("parse .github/dependabot.yml: %v", err)
	}
	if cfg.Version != 2 {
		t.Errorf("dependabot.yml: version = %d, want 2", cfg.Version)
	}
	found := manifestFolders(t, trackedFiles(t))

	cases := []struct {
		ecosystem string
		// leftOut are the folders Dependabot must not update, each with its reason in
		// dependabot.yml.
		leftOut []string
	}{
		// The test bed's binaries, pinned by hand to the releases the tests run against.
		{ecosystem: "gomod", leftOut: []string{"/hack/bins/*"}},
		{ecosystem: "github-actions"},
		{ecosystem: "docker"},
		{ecosystem: "npm"},
	}
	checked := map[string]bool{}
	for _, tc := range cases {
		checked[tc.ecosystem] = true
	}
	for _, u := range cfg.Updates {
		if !checked[u.Ecosystem] {
			t.Errorf("dependabot.yml: ecosystem %q is not checked by this test", u.Ecosystem)
		}
	}
	for _, tc := range cases {
		t.Run(tc.ecosystem, func(t *testing.T) {
			t.Parallel()
			dirs := found[tc.ecosystem]
			if len(dirs) == 0 {
				t.Fatalf("no %s manifest found in the repository: remove its entry from this test and from dependabot.yml", tc.ecosystem)
			}
			leftOut := matchFolders(t, tc.leftOut, dirs)
			for _, p := range tc.leftOut {
				if len(matchFolders(t, []string{p}, dirs)) == 0 {
					t.Errorf("left out %q matches no %s folder: remove it", p, tc.ecosystem)
				}
			}
			var want []string
			for _, d := range dirs {
				if !slices.Contains(leftOut, d) {
					want = append(want, d)
				}
			}

			var listed []string
			entries := 0
			for _, u := range cfg.Updates {
				if u.Ecosystem != tc.ecosystem {
					continue
				}
				entries++
				listed = append(listed, u.Directories...)
				if u.Directory != "" {
					listed = append(listed, u.Directory)
				}
				catchAll := false
				for _, g := range u.Groups {
					catchAll = catchAll || slices.Contains(g.Patterns, "*")
				}
				if !catchAll {
					t.Errorf("the %s entry has no group with the pattern \"*\": each update would be a pull request of its own", tc.ecosystem)
				}
			}
			if entries != 1 {
				t.Errorf("dependabot.yml has %d %s entries, want 1 (one entry groups across its folders)", entries, tc.ecosystem)
			}
			got := matchFolders(t, listed, want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the %s folders Dependabot watches (-want +got):\n%s", tc.ecosystem, diff)
			}
			for _, p := range listed {
				if len(matchFolders(t, []string{p}, dirs)) == 0 {
					t.Errorf("dependabot.yml lists %s folder %q, which holds nothing it reads", tc.ecosystem, p)
				}
				if len(matchFolders(t, []string{p}, leftOut)) > 0 {
					t.Errorf("dependabot.yml lists %s folder %q, which is left out on purpose", tc.ecosystem, p)
				}
			}
		})
	}
}

// TestManifestFolders checks which files count as an ecosystem's manifest, as Dependabot's
// file fetchers read them.
func TestManifestFolders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files []string
		want  map[string][]string
	}{
		{
			name:  "go modules, testdata left out",
			files: []string{"go.mod", "go.sum", "hack/go.mod", "hack/bins/etcd/go.mod", "internal/x/testdata/go.mod"},
			want:  map[string][]string{"gomod": {"/", "/hack", "/hack/bins/etcd"}},
		},
		{
			name:  "Dockerfile and Containerfiles, one folder each",
			files: []string{"Dockerfile", "hack/image/Containerfile", "hack/image/Containerfile.shell", "hack/image/build.sh"},
			want:  map[string][]string{"docker": {"/", "/hack/image"}},
		},
		{
			name:  "workflows are the root's; an action's folder is its own",
			files: []string{".github/workflows/ci.yml", "action.yml", "setup/action.yml", ".github/dependabot.yml"},
			want:  map[string][]string{"github-actions": {"/", "/setup"}},
		},
		{
			name:  "package.json",
			files: []string{"hack/gitlab-ci-local/package.json", "hack/gitlab-ci-local/package-lock.json"},
			want:  map[string][]string{"npm": {"/hack/gitlab-ci-local"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, manifestFolders(t, tc.files)); diff != "" {
				t.Errorf("manifestFolders(%q) (-want +got):\n%s", tc.files, diff)
			}
		})
	}
}
