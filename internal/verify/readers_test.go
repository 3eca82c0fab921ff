package verify

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// builtinObjects are one object of each kind the typed clients read, as kubectl apply leaves
// them (managedFields, last-applied-configuration), in the fake app's namespace.
func builtinObjects() ([]fakeapi.Resource, []map[string]any, []assess.ListKey) {
	md := func(name string) map[string]any {
		return map[string]any{"name": name, "namespace": "app", "resourceVersion": "7", "uid": "uid-" + name,
			"labels":      map[string]any{"app": "web"},
			"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": `{"kind":"x"}`, "team": "web"},
			"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
				"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:metadata": map[string]any{}}}}}
	}
	container := []any{map[string]any{"name": "web", "image": "web:2"}}
	template := map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}, "spec": map[string]any{"containers": container}}
	objects := []map[string]any{
		{"apiVersion": "v1", "kind": "Pod", "metadata": md("web-1"), "spec": map[string]any{"containers": container},
			"status": map[string]any{"phase": "Running", "containerStatuses": []any{map[string]any{"name": "web", "ready": true, "image": "web:2", "imageID": "", "restartCount": 2}}}},
		{"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": md("web-abc"),
			"spec":   map[string]any{"replicas": 1, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}, "template": template},
			"status": map[string]any{"replicas": 1, "readyReplicas": 1, "observedGeneration": 1}},
		{"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": md("db-1"), "revision": 3},
		{"apiVersion": "batch/v1", "kind": "Job", "metadata": md("migrate"), "spec": map[string]any{"template": template},
			"status": map[string]any{"succeeded": 1}},
	}
	resources := []fakeapi.Resource{
		{Version: "v1", Kind: "Pod", Plural: "pods", Namespaced: true},
		{Group: "apps", Version: "v1", Kind: "ReplicaSet", Plural: "replicasets", Namespaced: true},
		{Group: "apps", Version: "v1", Kind: "ControllerRevision", Plural: "controllerrevisions", Namespaced: true},
		{Group: "batch", Version: "v1", Kind: "Job", Plural: "jobs", Namespaced: true},
	}
	keys := []assess.ListKey{
		{GVR: assess.PodsGVR, Namespace: "app"}, {GVR: assess.RSGVR, Namespace: "app"},
		{GVR: assess.RevisionsGVR, Namespace: "app"}, {GVR: assess.JobsGVR, Namespace: "app"},
	}
	return resources, objects, keys
}

// TestBuiltinKindsReadInProtobuf: the lists of Pods, ReplicaSets, ControllerRevisions and Jobs
// are asked for in protobuf (no JSON decoded to maps and converted), by the watches and by a
// snapshot's lists, and the caches hold the same typed objects the JSON path made of them.
func TestBuiltinKindsReadInProtobuf(t *testing.T) {
	t.Parallel()
	appResources, appObjects := consistentApp()
	builtinResources, objects, keys := builtinObjects()
	for _, snapshot := range []bool{true, false} {
		name := "watches"
		if snapshot {
			name = "snapshot"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := fakeapi.Start(fakeapi.Options{Resources: append(appResources, builtinResources...), Objects: append(appObjects, objects...)})
			t.Cleanup(s.Close)
			state := consistentState(t, s, snapshot)
			before := s.ProtobufLists()
			for i, key := range keys {
				l := state.watches.get(key)
				deadline := time.Now().Add(30 * time.Second)
				for !l.Synced() && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				items := l.Items()
				if len(items) != 1 {
					t.Fatalf("%s: %d items (error %v), want 1", keyName(key), len(items), l.Err())
				}
				// What the JSON path makes of the same object: the dynamic client's
				// unstructured object, through the same transform.
				want, _, err := transformFor(key)(&unstructured.Unstructured{Object: objects[i]})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, items[0]); diff != "" {
					t.Errorf("%s: cached object differs from the JSON path's (-json +protobuf):\n%s", keyName(key), diff)
				}
			}
			if got, want := s.ProtobufLists()-before, int64(len(keys)); got != want {
				t.Errorf("lists answered in protobuf = %d, want %d (one per kind)", got, want)
			}
		})
	}
}
