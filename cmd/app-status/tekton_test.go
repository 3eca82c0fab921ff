package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/testing/testbed"
)

// TestTektonTaskAgainstItsCRD creates deploy/tekton/task.yaml on a real API server that serves
// Tekton Pipelines' own Task CRD (from the module hack/tekton pins), with strict field
// validation: the server checks it against the CRD's schema, a misspelt field included. (Tekton's
// controllers cannot run on the test bed; hack/tekton runs Tekton's webhook validation.)
func TestTektonTaskAgainstItsCRD(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	list := exec.CommandContext(ctx, "go", "-C", repoFile("hack", "tekton"), "list", "-m", "-f", "{{.Dir}}", "github.com/tektoncd/pipeline")
	dir, err := list.Output()
	if err != nil {
		t.Fatalf("go list the Tekton Pipelines module of hack/tekton: %v", err)
	}
	crd, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "config", "300-crds", "300-task.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testbed.DecodeManifests(crd)
	if err != nil || len(objs) != 1 {
		t.Fatalf("Tekton's Task CRD: %v (%d objects)", err, len(objs))
	}
	// Its conversion webhook is Tekton's, which is not running: v1 Tasks need no conversion.
	unstructured.RemoveNestedField(objs[0].Object, "spec", "conversion")
	if err := c.ApplyObject(ctx, "", objs[0]); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(repoFile("deploy", "tekton", "task.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tasks := c.Dynamic.Resource(schema.GroupVersionResource{Group: "tekton.dev", Version: "v1", Resource: "tasks"}).Namespace(b.Namespace(t))
	create := func(manifest string) error {
		objs, err := testbed.DecodeManifests([]byte(manifest))
		if err != nil || len(objs) != 1 {
			t.Fatalf("decode: %v (%d objects)", err, len(objs))
		}
		for {
			_, err := tasks.Create(ctx, objs[0], metav1.CreateOptions{FieldValidation: "Strict"})
			if err == nil || !strings.Contains(err.Error(), "the server could not find the requested resource") || ctx.Err() != nil {
				return err // the CRD is served a moment after it is created
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if err := create(string(data)); err != nil {
		t.Fatalf("the API server refuses deploy/tekton/task.yaml: %v", err)
	}
	misspelt := strings.Replace(string(data), "name: app-status\n", "name: misspelt\n", 1)
	misspelt = strings.Replace(misspelt, "      readOnly: true\n", "      readonly: true\n", 1)
	if err := create(misspelt); err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Errorf("a misspelt field is not refused (%v): the check proves nothing", err)
	}
}
