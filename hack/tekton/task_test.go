// Package tekton checks deploy/tekton/task.yaml with Tekton Pipelines' own code: the API types
// and the validation its admission webhook runs on every Task (SetDefaults, then Validate),
// pinned in this module's go.mod so that the main module does not carry Tekton's dependencies.
package tekton

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"sigs.k8s.io/yaml"
)

func readTask(t *testing.T) v1.Task {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "tekton", "task.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var task v1.Task
	// Strict: a misspelt field is an error, as the API server's strict field validation says.
	if err := yaml.UnmarshalStrict(data, &task); err != nil {
		t.Fatalf("deploy/tekton/task.yaml is not a tekton.dev/v1 Task: %v", err)
	}
	return task
}

// TestTaskValidates: the webhook would admit the Task.
func TestTaskValidates(t *testing.T) {
	task := readTask(t)
	if task.APIVersion != "tekton.dev/v1" || task.Kind != "Task" {
		t.Errorf("apiVersion %s kind %s, want tekton.dev/v1 Task", task.APIVersion, task.Kind)
	}
	ctx := context.Background()
	task.SetDefaults(ctx)
	if err := task.Validate(ctx); err != nil {
		t.Fatalf("Tekton's validation refuses the Task: %v", err)
	}
}

// TestTaskRunsTheBinaryWithoutAShell: the step runs the image's binary (no shell in it), hands
// it the results folder, and every workspace, param and result is used.
func TestTaskRunsTheBinaryWithoutAShell(t *testing.T) {
	task := readTask(t)
	if len(task.Spec.Steps) != 1 {
		t.Fatalf("%d steps, want 1", len(task.Spec.Steps))
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
