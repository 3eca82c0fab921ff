// Package tekton checks deploy/tekton/task.yaml with Tekton Pipelines' own code: the API types
// and the validation its admission webhook runs on every Task (SetDefaults, then Validate),
// pinned in this module's go.mod so that the main module does not carry Tekton's dependencies.
package tekton

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"sigs.k8s.io/yaml"
)

// source is the repository's Task; a release pins it (hack/release/pin-tekton.sh).
const source = "../../deploy/tekton/task.yaml"

func readTask(t *testing.T, path string) v1.Task {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var task v1.Task
	// Strict: a misspelt field is an error, as the API server's strict field validation says.
	if err := yaml.UnmarshalStrict(data, &task); err != nil {
		t.Fatalf("%s is not a tekton.dev/v1 Task: %v", path, err)
	}
	return task
}

// validate fails unless the webhook would admit the Task.
func validate(t *testing.T, task v1.Task) {
	t.Helper()
	if task.APIVersion != "tekton.dev/v1" || task.Kind != "Task" {
		t.Errorf("apiVersion %s kind %s, want tekton.dev/v1 Task", task.APIVersion, task.Kind)
	}
	ctx := context.Background()
	task.SetDefaults(ctx)
	if err := task.Validate(ctx); err != nil {
		t.Fatalf("Tekton's validation refuses the Task: %v", err)
	}
}

// TestTaskValidates: the webhook would admit the Task.
func TestTaskValidates(t *testing.T) {
	validate(t, readTask(t, source))
}

// TestReleasedTaskValidates: the Task a release attaches, in the Tekton catalog's layout
// (hack/release/tekton-catalog.sh: task/app-status/<version>/app-status.yaml and README.md),
// pinned to the image by digest and labelled with its version, is admitted too.
func TestReleasedTaskValidates(t *testing.T) {
	const image = "ghcr.io/org/app-status-action@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	dir := t.TempDir()
	out, err := exec.Command(filepath.Join("..", "release", "tekton-catalog.sh"), "v1.4.2", image, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("hack/release/tekton-catalog.sh: %v\n%s", err, out)
	}
	folder := filepath.Join(dir, "task", "app-status", "1.4.2")
	task := readTask(t, filepath.Join(folder, "app-status.yaml"))
	validate(t, task)
	if got := task.Labels["app.kubernetes.io/version"]; got != "1.4.2" {
		t.Errorf("the released Task's app.kubernetes.io/version label = %q, want its folder's version, 1.4.2", got)
	}
	if task.Name != "app-status" {
		t.Errorf("the released Task is named %q, want app-status, as its folder and file", task.Name)
	}
	for _, p := range task.Spec.Params {
		if p.Name == "image" && (p.Default == nil || p.Default.StringVal != image) {
			t.Errorf("the released Task's image param defaults to %v, want %s", p.Default, image)
		}
	}
	if _, err := os.Stat(filepath.Join(folder, "README.md")); err != nil {
		t.Errorf("the catalog folder has no README.md: %v", err)
	}
}

// TestTaskFailsAfterItsResults: the catalog's pattern for results on failure. The verify step
// continues on error, so that Tekton records its exit code and goes on; the last step, and
// only it, stops on error: it runs `app-status exit` on verify's exit code file, which fails
// the TaskRun with that code.
func TestTaskFailsAfterItsResults(t *testing.T) {
	task := readTask(t, source)
	validate(t, task)
	if len(task.Spec.Steps) != 2 {
		t.Fatalf("%d steps, want 2: verify, then exit", len(task.Spec.Steps))
	}
	verify, exit := task.Spec.Steps[0], task.Spec.Steps[1]
	if verify.Name != "verify" || verify.OnError != v1.Continue {
		t.Errorf("the first step is %q with onError %q, want verify with onError %q", verify.Name, verify.OnError, v1.Continue)
	}
	if exit.OnError != "" && exit.OnError != v1.StopAndFail {
		t.Errorf("the last step has onError %q: it must fail the TaskRun", exit.OnError)
	}
	want := []string{"exit", "$(steps.step-" + verify.Name + ".exitCode.path)"}
	if exit.Script != "" || !cmp.Equal(exit.Command, []string{"/app-status"}) || !cmp.Equal(exit.Args, want) {
		t.Errorf("the last step runs %v %v (script %q), want /app-status %v", exit.Command, exit.Args, exit.Script, want)
	}
	if exit.Image != verify.Image {
		t.Errorf("the last step runs the image %s, want verify's, %s (no other image to pull)", exit.Image, verify.Image)
	}
}

// TestTaskRunsTheBinaryWithoutAShell: the verify step runs the image's binary (no shell in it),
// hands it the results folder, and every workspace, param and result is used.
func TestTaskRunsTheBinaryWithoutAShell(t *testing.T) {
	task := readTask(t, source)
	if len(task.Spec.Steps) == 0 {
		t.Fatal("no steps")
	}
	step := task.Spec.Steps[0]
	if step.Script != "" || !cmp.Equal(step.Command, []string{"/app-status"}) {
		t.Errorf("the step runs %v (script %q): the image has no shell, it must run /app-status", step.Command, step.Script)
	}
	args := strings.Join(step.Args, " ")
	for _, p := range task.Spec.Params {
		ref := "$(params." + p.Name + ")"
		if p.Type == v1.ParamTypeArray {
			ref = "$(params." + p.Name + "[*])"
		}
		if !strings.Contains(args+" "+step.Image, ref) {
			t.Errorf("param %s is not used (%s)", p.Name, ref)
		}
	}
	for _, w := range task.Spec.Workspaces {
		if !strings.Contains(args, "$(workspaces."+w.Name+".path)") {
			t.Errorf("workspace %s is not used", w.Name)
		}
	}
	if !slices.Contains(step.Args, "--tekton-results=/tekton/results") {
		t.Errorf("the step is not told where the results go: %v", step.Args)
	}
	var results []string
	for _, r := range task.Spec.Results {
		results = append(results, r.Name)
	}
	// The files app-status verify --tekton-results writes (internal/cli/tekton.go).
	want := []string{"status", "ready-count", "failed-count", "failed-clusters", "duration"}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}
