package release

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// task is what the release tests read of the Tekton Task.
type task struct {
	Metadata struct {
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Params []struct {
			Name    string `json:"name"`
			Default any    `json:"default"` // a string, or an array param's list
		} `json:"params"`
	} `json:"spec"`
}

// checkPinnedTask fails unless the Task's image param defaults to image and its
// app.kubernetes.io/version label is version.
func checkPinnedTask(t *testing.T, manifest, image, version string) {
	t.Helper()
	var tk task
	if err := yaml.Unmarshal([]byte(manifest), &tk); err != nil {
		t.Fatalf("the pinned Task: %v\n%s", err, manifest)
	}
	if got := tk.Metadata.Labels["app.kubernetes.io/version"]; got != version {
		t.Errorf("the pinned Task's app.kubernetes.io/version label = %q, want %q", got, version)
	}
	found := false
	for _, p := range tk.Spec.Params {
		if p.Name != "image" {
			continue
		}
		found = true
		if p.Default != image {
			t.Errorf("the pinned Task's image param defaults to %v, want %s", p.Default, image)
		}
	}
	if !found {
		t.Error("the pinned Task has no image param")
	}
}

// TestTaskUnpinnedOnABranch: the repository's Task names no image and no version: only a
// release can, and the markers it replaces are there.
func TestTaskUnpinnedOnABranch(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "tekton", "task.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tk task
	if err := yaml.Unmarshal(data, &tk); err != nil {
		t.Fatal(err)
	}
	if v, ok := tk.Metadata.Labels["app.kubernetes.io/version"]; ok {
		t.Errorf("deploy/tekton/task.yaml has the version label %q: a release sets it", v)
	}
	for _, p := range tk.Spec.Params {
		if p.Name == "image" && p.Default != nil {
			t.Errorf("deploy/tekton/task.yaml's image param defaults to %v: a release sets it, by digest", p.Default)
		}
	}
}

// TestTektonCatalog: the files a release attaches for Tekton: the Task pinned to the release's
// image by digest and labelled with its version, and the same file in the Tekton catalog's
// layout (task/<name>/<version>/<name>.yaml with its README) in a tarball.
func TestTektonCatalog(t *testing.T) {
	for _, tc := range []struct{ tag, version string }{{"v1.4.2", "1.4.2"}, {"v1.5.0-rc.1", "1.5.0-rc.1"}} {
		t.Run(tc.tag, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command("./tekton-catalog.sh", tc.tag, image, dir)
			cmd.Env = append(os.Environ(), "GITHUB_REPOSITORY=acme/app-status-fork")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("tekton-catalog.sh: %v\n%s", err, out)
			}
			pinned, err := os.ReadFile(filepath.Join(dir, "app-status-tekton-task.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			checkPinnedTask(t, string(pinned), image, tc.version)

			readme, err := os.ReadFile(filepath.Join("..", "..", "deploy", "tekton", "README.md"))
			if err != nil {
				t.Fatal(err)
			}
			// The README's placeholders filled in: the release's repository and tag.
			filled := strings.ReplaceAll(string(readme), "<owner>/app-status-action", "acme/app-status-fork")
			filled = strings.ReplaceAll(filled, "<tag>", tc.tag)
			if filled == string(readme) || strings.Contains(filled, "<owner>") || strings.Contains(filled, "<tag>") {
				t.Errorf("deploy/tekton/README.md has no <owner>/app-status-action and <tag> placeholders to fill, or others left:\n%s", filled)
			}
			folder := "task/app-status/" + tc.version + "/"
			want := map[string]string{folder + "app-status.yaml": string(pinned), folder + "README.md": filled}
			if diff := cmp.Diff(want, tarFiles(t, filepath.Join(dir, "app-status-tekton-catalog.tar.gz"))); diff != "" {
				t.Errorf("app-status-tekton-catalog.tar.gz's files (-want +got):\n%s", diff)
			}
		})
	}
}

// tarFiles is the regular files of a .tar.gz, by name.
func tarFiles(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	r := tar.NewReader(gz)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = string(data)
	}
}

// TestPinTektonRefuses: a tag that is no version, an image not by digest and a Task pinned
// already (no markers) are refused, and the file is left as it was.
func TestPinTektonRefuses(t *testing.T) {
	source, err := os.ReadFile(filepath.Join("..", "..", "deploy", "tekton", "task.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, tag, ref string
		pinned         bool
		want           string
	}{
		{name: "not a version", tag: "v1", ref: image, want: "not vMAJOR.MINOR.PATCH"},
		{name: "a tag, not a digest", tag: "v1.4.2", ref: "ghcr.io/org/app-status-action:v1.4.2", want: "sha256"},
		{name: "YAML in the reference", tag: "v1.4.2", ref: image + "\n      x: y", want: "sha256"},
		{name: "pinned already", tag: "v1.4.2", ref: image, pinned: true, want: "was it pinned already?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "task.yaml")
			data := source
			if tc.pinned {
				if out, err := exec.Command("./pin-tekton.sh", "v1.4.1", image, filepath.Join("..", "..", "deploy", "tekton", "task.yaml"), file).CombinedOutput(); err != nil {
					t.Fatalf("pin-tekton.sh: %v\n%s", err, out)
				}
				if data, err = os.ReadFile(file); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("./pin-tekton.sh", tc.tag, tc.ref, file, file).CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("pin-tekton.sh %s %q = %v\n%s, want an error naming %q", tc.tag, tc.ref, err, out, tc.want)
			}
			if got, err := os.ReadFile(file); err != nil || string(got) != string(data) {
				t.Errorf("the Task changed (%v)", err)
			}
		})
	}
}

// TestReleaseWorkflowAttachesTheTask: the release workflow makes the pinned Tekton Task and
// its catalog folder on the tagged commit (hack/release/tekton-catalog.sh needs the Task's
// markers, which the released commit no longer has), then attaches them to the release.
func TestReleaseWorkflowAttachesTheTask(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Run string `json:"run"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	catalog, pin, upload := -1, -1, -1
	for i, s := range wf.Jobs["release"].Steps {
		switch {
		case strings.Contains(s.Run, "hack/release/tekton-catalog.sh"):
			catalog = i
		case strings.Contains(s.Run, "hack/release/pin-action.sh"):
			pin = i
		}
		if strings.Contains(s.Run, "gh release upload") && strings.Contains(s.Run, "app-status-tekton-task.yaml") &&
			strings.Contains(s.Run, "app-status-tekton-catalog.tar.gz") {
			upload = i
		}
	}
	if catalog < 0 || pin < 0 || upload < 0 || catalog > pin {
		t.Errorf("release job steps: tekton-catalog.sh at %d, pin-action.sh at %d, upload at %d: want the catalog made before the pin, and uploaded", catalog, pin, upload)
	}
}
