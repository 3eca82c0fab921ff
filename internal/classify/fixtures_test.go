package classify

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// documentSeparator splits a multi-document YAML file.
var documentSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// load reads testdata/file, a multi-document YAML manifest: the first object is the workload,
// the others are passed along with it by kind.
func load(t *testing.T, file string) Input {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var in Input
	for i, doc := range documentSeparator.Split(string(data), -1) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%s: document %d: %v", file, i, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if in.Workload == nil {
			in.Workload = u
			continue
		}
		switch u.GetKind() {
		case "ReplicaSet":
			in.ReplicaSets = append(in.ReplicaSets, convert[appsv1.ReplicaSet](t, file, u))
		case "ControllerRevision":
			in.Revisions = append(in.Revisions, convert[appsv1.ControllerRevision](t, file, u))
		case "Job":
			in.Jobs = append(in.Jobs, convert[batchv1.Job](t, file, u))
		case "Pod":
			in.Pods = append(in.Pods, convert[corev1.Pod](t, file, u))
		default:
			t.Fatalf("%s: document %d: unexpected kind %q", file, i, u.GetKind())
		}
	}
	if in.Workload == nil {
		t.Fatalf("%s: no workload", file)
	}
	return in
}

// convert turns an unstructured object into a typed one.
func convert[T any](t *testing.T, file string, u *unstructured.Unstructured) *T {
	t.Helper()
	obj := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		t.Fatalf("%s: %s %s: %v", file, u.GetKind(), u.GetName(), err)
	}
	return obj
}
