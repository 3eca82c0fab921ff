package assess

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

func TestObjectStatus(t *testing.T) {
	t.Parallel()
	const job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, namespace: shop, generation: 1}\n"
	tests := []struct {
		name     string
		manifest string
		want     result.ObjectStatus
	}{
		{
			name:     "job running is in progress",
			manifest: job + "status: {startTime: '2025-06-01T12:00:00Z', active: 1}",
			want:     result.ObjectInProgress,
		},
		{
			name:     "job not started is in progress",
			manifest: job + "status: {}",
			want:     result.ObjectInProgress,
		},
		{
			name: "job complete is current",
			manifest: job + "status: {startTime: '2025-06-01T12:00:00Z', succeeded: 1, conditions: [" +
				"{type: SuccessCriteriaMet, status: 'True'}, {type: Complete, status: 'True'}]}",
			want: result.ObjectCurrent,
		},
		{
			name: "job failed is failed",
			manifest: job + "status: {startTime: '2025-06-01T12:00:00Z', failed: 1, conditions: [" +
				"{type: FailureTarget, status: 'True', reason: BackoffLimitExceeded}, {type: Failed, status: 'True', reason: BackoffLimitExceeded}]}",
			want: result.ObjectFailed,
		},
		{
			name:     "job suspended after it started is current, as kstatus says",
			manifest: job + "spec: {suspend: true}\nstatus: {startTime: '2025-06-01T12:00:00Z'}",
			want:     result.ObjectCurrent,
		},
		{
			name:     "job suspended before it started is current, as Flux's Job reader says",
			manifest: job + "spec: {suspend: true}\nstatus: {}",
			want:     result.ObjectCurrent,
		},
		{
			name: "job complete while it is deleted is current, as Flux's Job reader says",
			manifest: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, namespace: shop, generation: 1, deletionTimestamp: '2025-06-01T12:01:00Z'}\n" +
				"status: {startTime: '2025-06-01T12:00:00Z', succeeded: 1, conditions: [{type: Complete, status: 'True'}]}",
			want: result.ObjectCurrent,
		},
		{
			name:     "other kinds are kstatus's",
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop}",
			want:     result.ObjectCurrent,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data, err := yaml.YAMLToJSON([]byte(tt.manifest))
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
			got, msg, err := objectStatus(u, fluxhealth.New(t.Context()), nil)
			if err != nil {
				t.Fatalf("objectStatus() error: %v", err)
			}
			if got != tt.want {
				t.Errorf("objectStatus() = %s (%s), want %s", got, msg, tt.want)
			}
		})
	}
}

// TestStatusMemo: the memo gives each cached state its own kstatus status, never an older
// state's (a new state is a new object in the store), and forgets states no longer seen; it
// reads an object's annotations once; a metadata-only object's status is kept without a
// second copy of it.
func TestStatusMemo(t *testing.T) {
	t.Parallel()
	deployment := func(ready int64) *unstructured.Unstructured {
		var u unstructured.Unstructured
		manifest := fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop, generation: 1}\n"+
			"spec: {replicas: 2}\nstatus: {observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: %d, availableReplicas: %d, "+
			"conditions: [{type: Available, status: 'True'}, {type: Progressing, status: 'True', reason: NewReplicaSetAvailable}]}", ready, ready)
		data, err := yaml.YAMLToJSON([]byte(manifest))
		if err != nil {
			t.Fatal(err)
		}
		if err := u.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
		return &u
	}
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	var m statusMemo
	health := fluxhealth.New(t.Context())
	rolling, done := deployment(1), deployment(2)

	m.turn()
	if got := m.status(rolling, gvk, health, nil); !got.ok || got.status != result.ObjectInProgress || got.u != rolling {
		t.Fatalf("rolling: %+v, want InProgress read from the cached object itself", got)
	}
	m.reserve(300) // room made mid-turn keeps what the turn has looked at
	if _, kept := m.cur[rolling]; !kept || m.curRoom < 301 {
		t.Fatalf("after reserve: rolling kept %t, room %d; want kept, room for 301", kept, m.curRoom)
	}
	m.turn()
	if got := m.status(done, gvk, health, nil); got.status != result.ObjectCurrent {
		t.Errorf("the next state: %s, want Current (never the previous state's status)", got.status)
	}
	if got := m.status(rolling, gvk, health, nil); got.status != result.ObjectInProgress {
		t.Errorf("the previous state, seen again: %s, want InProgress", got.status)
	}
	m.turn()
	m.turn()
	if len(m.prev) != 0 || len(m.cur) != 0 {
		t.Errorf("after two assessments without them the memo holds %d and %d states, want none", len(m.prev), len(m.cur))
	}

	cm := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop", UID: "u1", Annotations: map[string]string{"a": "b"}}}
	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	for turn := range 2 {
		m.turn()
		got := m.status(cm, cmGVK, health, nil)
		if !got.ok || got.status != result.ObjectCurrent || got.u != nil {
			t.Fatalf("turn %d, metadata only: %+v, want Current and no unstructured copy", turn, got)
		}
		if kept := m.cur[cm]; kept.u != nil {
			t.Errorf("turn %d: the memo keeps a second copy of a metadata-only object", turn)
		}
	}

	annotated := deployment(1)
	annotated.SetAnnotations(map[string]string{classify.AnnotationIgnoreReadiness: "true"})
	m.turn()
	got := m.status(annotated, gvk, health, nil)
	if !got.ignoreReadiness {
		t.Errorf("annotations read once: %+v, want readiness ignored", got)
	}
	if plain := m.status(rolling, gvk, health, nil); plain.ignoreReadiness || plain.ignoreNote != "" {
		t.Errorf("an object without annotations: %+v, want none of what they say", plain)
	}
}
