// Package release holds the test of the release workflow's scripts: what a release does to the
// repository's tags can only be seen on a real release otherwise.
package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const image = "ghcr.io/org/app-status-action@sha256:" +
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// repo is a clone of a bare origin holding the repository's action.yml, GitLab template, Tekton
// Task and release scripts.
type repo struct {
	t            *testing.T
	work, origin string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	dir := t.TempDir()
	r := &repo{t: t, work: filepath.Join(dir, "work"), origin: filepath.Join(dir, "origin.git")}
	r.git(dir, "init", "--quiet", "--bare", r.origin)
	r.git(dir, "init", "--quiet", "-b", "main", r.work)
	action, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.work, "action.yml"), action, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{
		{"templates/app-status.yml", 0o644},
		{"deploy/tekton/task.yaml", 0o644},
		{"setup/action.yml", 0o644},
		{"hack/release/pin-action.sh", 0o755},
		{"hack/release/pin-tekton.sh", 0o755},
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", f.path))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(r.work, filepath.Dir(f.path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.work, f.path), data, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	r.git(r.work, "add", ".")
	r.git(r.work, "commit", "--quiet", "-m", "the action")
	r.git(r.work, "remote", "add", "origin", r.origin)
	r.git(r.work, "push", "--quiet", "origin", "main")
	return r
}

func (r *repo) git(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.invalid"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// release tags HEAD as the maintainer does, pushes the tag, checks it out as the workflow does
// and runs the script; it returns the commit the tag named and the script's output and error.
func (r *repo) release(tag string, refs ...string) (source, out string, err error) {
	r.t.Helper()
	r.git(r.work, "tag", "--annotate", "--message", tag, tag)
	r.git(r.work, "push", "--quiet", "origin", tag)
	r.git(r.work, "checkout", "--quiet", "--detach", tag)
	source = r.git(r.work, "rev-parse", "HEAD")
	cmd := exec.Command(filepath.Join(r.work, "hack", "release", "pin-action.sh"), append([]string{tag}, refs...)...)
	cmd.Dir = r.work
	b, err := cmd.CombinedOutput()
	return source, string(b), err
}

// originTag is the commit a tag names on origin, or "" when origin has no such tag.
func (r *repo) originTag(tag string) string {
	r.t.Helper()
	out := r.git(r.origin, "for-each-ref", "--format=%(objectname) %(*objectname)", "refs/tags/"+tag)
	if f := strings.Fields(out); len(f) == 2 {
		return f[1] // the commit an annotated tag points to
	}
	return ""
}

// TestPinAction: a release moves the version tag and the major tag, on origin, to a child of the
// tagged commit whose only change is action.yml's image: the released image by digest.
func TestPinAction(t *testing.T) {
	r := newRepo(t)
	r.git(r.work, "tag", "--annotate", "--message", "an older v1", "v1")
	r.git(r.work, "push", "--quiet", "origin", "v1")

	source, out, err := r.release("v1.4.2", image)
	if err != nil {
		t.Fatalf("pin-action.sh v1.4.2: %v\n%s", err, out)
	}
	released := r.originTag("v1.4.2")
	if released == "" || released == source {
		t.Fatalf("origin's v1.4.2 = %q, want a new commit on top of %s\n%s", released, source, out)
	}
	if got := r.originTag("v1"); got != released {
		t.Errorf("origin's v1 = %s, want the released commit %s", got, released)
	}
	if parent := r.git(r.origin, "rev-parse", released+"^"); parent != source {
		t.Errorf("the released commit's parent = %s, want the tagged commit %s", parent, source)
	}
	if files := r.git(r.origin, "diff", "--name-only", source, released); files != "action.yml\ndeploy/tekton/task.yaml\nsetup/action.yml" {
		t.Errorf("the released commit changes %q, want action.yml, deploy/tekton/task.yaml and setup/action.yml", files)
	}
	diff := r.git(r.origin, "diff", "--unified=0", source, released, "--", "action.yml")
	for _, want := range []string{"\n-  image: Dockerfile\n", "\n+  image: docker://" + image + "\n"} {
		if !strings.Contains(diff+"\n", want) {
			t.Errorf("the released commit's diff lacks %q:\n%s", strings.TrimSpace(want), diff)
		}
	}
	if n := strings.Count(diff, "\n+") + strings.Count(diff, "\n-"); n != 4 { // ---/+++ headers and the two lines
		t.Errorf("the released commit changes more than the image line:\n%s", diff)
	}

	checkPinnedTask(t, r.git(r.origin, "show", released+":deploy/tekton/task.yaml"), image, "1.4.2")
	checkPinnedSetup(t, r.git(r.origin, "show", released+":setup/action.yml"), "v1.4.2")
	setupDiff := r.git(r.origin, "diff", "--unified=0", source, released, "--", "setup/action.yml")
	if n := strings.Count(setupDiff, "\n+") + strings.Count(setupDiff, "\n-"); n != 4 {
		t.Errorf("the released commit changes more of the setup action than its version:\n%s", setupDiff)
	}
	taskDiff := r.git(r.origin, "diff", "--unified=0", source, released, "--", "deploy/tekton/task.yaml")
	if n := strings.Count(taskDiff, "\n+") + strings.Count(taskDiff, "\n-"); n != 6 { // headers, the two markers and their lines
		t.Errorf("the released commit changes more of the Task than its image and version:\n%s", taskDiff)
	}

	// A re-run of the workflow checks out the released commit: nothing to pin, a clear error.
	r.git(r.work, "fetch", "--quiet", "--force", "origin", "refs/tags/v1.4.2:refs/tags/v1.4.2")
	r.git(r.work, "checkout", "--quiet", "--detach", "v1.4.2")
	cmd := exec.Command(filepath.Join(r.work, "hack", "release", "pin-action.sh"), "v1.4.2", image)
	cmd.Dir = r.work
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "released already") {
		t.Errorf("pin-action.sh on a released commit: %v\n%s, want an error saying it was released already", err, b)
	}
	if got := r.originTag("v1.4.2"); got != released {
		t.Errorf("the failed re-run moved v1.4.2 to %s", got)
	}
}

// TestPinActionShellImage: with the image with a shell, the released commit also makes it the
// GitLab component's default image, and changes nothing else.
func TestPinActionShellImage(t *testing.T) {
	r := newRepo(t)
	const shellImage = "ghcr.io/org/app-status-action@sha256:" +
		"fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
	source, out, err := r.release("v1.5.0", image, shellImage)
	if err != nil {
		t.Fatalf("pin-action.sh v1.5.0: %v\n%s", err, out)
	}
	released := r.originTag("v1.5.0")
	if files := r.git(r.origin, "diff", "--name-only", source, released); files != "action.yml\ndeploy/tekton/task.yaml\nsetup/action.yml\ntemplates/app-status.yml" {
		t.Errorf("the released commit changes %q, want action.yml, deploy/tekton/task.yaml, setup/action.yml and templates/app-status.yml", files)
	}
	diff := r.git(r.origin, "diff", "--unified=0", source, released, "--", "templates/app-status.yml")
	for _, want := range []string{
		"\n-      # default: set by a release (hack/release/pin-action.sh) to its image with a shell, by digest\n",
		"\n+      default: " + shellImage + "\n",
	} {
		if !strings.Contains(diff+"\n", want) {
			t.Errorf("the template's diff lacks %q:\n%s", strings.TrimSpace(want), diff)
		}
	}
	var spec struct {
		Spec struct {
			Inputs map[string]struct {
				Default string `json:"default"`
			} `json:"inputs"`
		} `json:"spec"`
	}
	header, _, _ := strings.Cut(r.git(r.origin, "show", released+":templates/app-status.yml"), "\n---\n")
	if err := yaml.Unmarshal([]byte(header), &spec); err != nil || spec.Spec.Inputs["image"].Default != shellImage {
		t.Errorf("the released template's image input defaults to %q (%v), want %s", spec.Spec.Inputs["image"].Default, err, shellImage)
	}
}

// TestPinActionPrerelease: a pre-release gets its own released commit but leaves the major tag
// where it was.
func TestPinActionPrerelease(t *testing.T) {
	r := newRepo(t)
	_, out, err := r.release("v1.4.2", image)
	if err != nil {
		t.Fatalf("pin-action.sh v1.4.2: %v\n%s", err, out)
	}
	v1 := r.originTag("v1")
	r.git(r.work, "checkout", "--quiet", "main")
	r.git(r.work, "commit", "--quiet", "--allow-empty", "-m", "next")
	source, out, err := r.release("v1.5.0-rc.1", image)
	if err != nil {
		t.Fatalf("pin-action.sh v1.5.0-rc.1: %v\n%s", err, out)
	}
	released := r.originTag("v1.5.0-rc.1")
	if released == "" || released == source {
		t.Errorf("origin's v1.5.0-rc.1 = %q, want a released commit on top of %s", released, source)
	} else {
		checkPinnedTask(t, r.git(r.origin, "show", released+":deploy/tekton/task.yaml"), image, "1.5.0-rc.1")
	}
	if got := r.originTag("v1"); got != v1 {
		t.Errorf("a pre-release moved v1 from %s to %s", v1, got)
	}
}

// TestPinActionRefusesBadArguments: names that would put something else into action.yml, or
// tag something that is not a version, are refused before anything changes.
func TestPinActionRefusesBadArguments(t *testing.T) {
	for _, tc := range []struct{ tag, ref, want string }{
		{"v1.4.2", "ghcr.io/Org/app-status-action@sha256:" + strings.Repeat("a", 64), "lower case"},
		{"v1.4.2", "ghcr.io/org/app-status-action:v1.4.2", "sha256"},
		{"v1.4.2", "ghcr.io/org/other@sha256:" + strings.Repeat("a", 64), "app-status-action"},
		{"v1.4.2", image + "|x", "sha256"},
		{"v1", image, "not vMAJOR.MINOR.PATCH"},
		{"release-1", image, "not vMAJOR.MINOR.PATCH"},
	} {
		t.Run(tc.tag+" "+tc.ref, func(t *testing.T) {
			r := newRepo(t)
			head := r.git(r.work, "rev-parse", "HEAD")
			cmd := exec.Command(filepath.Join(r.work, "hack", "release", "pin-action.sh"), tc.tag, tc.ref)
			cmd.Dir = r.work
			b, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(b), tc.want) {
				t.Errorf("pin-action.sh %s %s = %v\n%s, want an error naming %q", tc.tag, tc.ref, err, b, tc.want)
			}
			if got := r.git(r.work, "rev-parse", "HEAD"); got != head {
				t.Errorf("HEAD moved to %s", got)
			}
		})
	}
}

// checkPinnedSetup: the released setup action installs version by default.
func checkPinnedSetup(t *testing.T, setup, version string) {
	t.Helper()
	var a struct {
		Inputs map[string]struct {
			Default string `json:"default"`
		} `json:"inputs"`
	}
	if err := yaml.Unmarshal([]byte(setup), &a); err != nil || a.Inputs["version"].Default != version {
		t.Errorf("the released setup action's version input defaults to %q (%v), want %s", a.Inputs["version"].Default, err, version)
	}
}
