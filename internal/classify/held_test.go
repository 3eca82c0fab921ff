package classify

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestHeldRollout(t *testing.T) {
	t.Parallel()
	const (
		onDelete0of2 = "updateStrategy OnDelete, its pods change only when deleted (0 of 2 updated)"
		paused       = "spec.paused (kubectl rollout resume)"
	)
	for _, tc := range []struct {
		name, doc   string
		why         string
		wantServing bool
		// wantStarted: a pod of the new template runs.
		wantStarted bool
	}{
		{name: "StatefulSet OnDelete, no pod updated", why: onDelete0of2, wantServing: true,
			doc: `{apiVersion: apps/v1, kind: StatefulSet, metadata: {generation: 3}, spec: {replicas: 2, updateStrategy: {type: OnDelete}},
status: {observedGeneration: 3, replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 0, currentRevision: a, updateRevision: b}}`},
		{name: "StatefulSet OnDelete, no pod updated, one not ready: held, not serving", why: onDelete0of2,
			doc: `{apiVersion: apps/v1, kind: StatefulSet, metadata: {generation: 3}, spec: {replicas: 2, updateStrategy: {type: OnDelete}},
status: {observedGeneration: 3, replicas: 2, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 0, currentRevision: a, updateRevision: b}}`},
		{name: "StatefulSet OnDelete, a pod more than it wants: held, not serving", why: onDelete0of2,
			doc: `{apiVersion: apps/v1, kind: StatefulSet, metadata: {generation: 3}, spec: {replicas: 2, updateStrategy: {type: OnDelete}},
status: {observedGeneration: 3, replicas: 3, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 0, currentRevision: a, updateRevision: b}}`},
		{name: "StatefulSet OnDelete, replicas defaulted", why: "updateStrategy OnDelete, its pods change only when deleted (0 of 1 updated)", wantServing: true,
			doc: `{apiVersion: apps/v1, kind: StatefulSet, metadata: {generation: 3}, spec: {updateStrategy: {type: OnDelete}},
status: {observedGeneration: 3, replicas: 1, readyReplicas: 1, availableReplicas: 1, currentRevision: a, updateRevision: b}}`},
		{name: "StatefulSet OnDelete, every pod updated, currentRevision left behind",
			doc: `{apiVersion: apps/v1, kind: StatefulSet, metadata: {generation: 3}, spec: {replicas: 2, updateStrategy: {type: OnDelete}},
status: {observedGeneration: 3, replicas: 2, updatedReplicas: 2, currentRevision: a, updateRevision: b}}`},
		{name: "StatefulSet OnDelete, spec not observed",
			doc: `{apiVersion: apps/v1, kind: StatefulSet, metadata: {generation: 3}, spec: {replicas: 2, updateStrategy: {type: OnDelete}},
status: {observedGeneration: 2, replicas: 2, updatedReplicas: 0}}`},
		{name: "StatefulSet RollingUpdate, no pod updated",
			doc: `{apiVersion: apps/v1, kind: StatefulSet, metadata: {generation: 3}, spec: {replicas: 2},
status: {observedGeneration: 3, replicas: 2, updatedReplicas: 0}}`},
		{name: "DaemonSet OnDelete, no pod updated, all available", why: onDelete0of2, wantServing: true,
			doc: `{apiVersion: apps/v1, kind: DaemonSet, metadata: {generation: 3}, spec: {updateStrategy: {type: OnDelete}},
status: {observedGeneration: 3, desiredNumberScheduled: 2, currentNumberScheduled: 2, updatedNumberScheduled: 0, numberAvailable: 2, numberReady: 2}}`},
		{name: "DaemonSet OnDelete, no pod updated, one not ready", why: onDelete0of2,
			doc: `{apiVersion: apps/v1, kind: DaemonSet, metadata: {generation: 3}, spec: {updateStrategy: {type: OnDelete}},
status: {observedGeneration: 3, desiredNumberScheduled: 2, currentNumberScheduled: 2, updatedNumberScheduled: 0, numberAvailable: 2, numberReady: 1}}`},
		{name: "DaemonSet OnDelete, the old pods deleted, the new ones being created",
			doc: `{apiVersion: apps/v1, kind: DaemonSet, metadata: {generation: 3}, spec: {updateStrategy: {type: OnDelete}},
status: {observedGeneration: 3, desiredNumberScheduled: 2, currentNumberScheduled: 1, updatedNumberScheduled: 1, numberAvailable: 1, numberReady: 1}}`},
		{name: "DaemonSet RollingUpdate, no pod updated",
			doc: `{apiVersion: apps/v1, kind: DaemonSet, metadata: {generation: 3}, spec: {updateStrategy: {type: RollingUpdate}},
status: {observedGeneration: 3, desiredNumberScheduled: 2, currentNumberScheduled: 2, updatedNumberScheduled: 0}}`},
		{name: "Deployment paused, no pod of its template", why: paused, wantServing: true,
			doc: `{apiVersion: apps/v1, kind: Deployment, metadata: {generation: 4}, spec: {replicas: 1, paused: true},
status: {observedGeneration: 4, replicas: 1, updatedReplicas: 0, availableReplicas: 1, readyReplicas: 1}}`},
		{name: "Deployment paused mid-rollout, a surge pod beside the old ones", wantStarted: true, why: paused,
			doc: `{apiVersion: apps/v1, kind: Deployment, metadata: {generation: 4}, spec: {replicas: 2, paused: true},
status: {observedGeneration: 4, replicas: 3, updatedReplicas: 1, availableReplicas: 2, readyReplicas: 2}}`},
		{name: "Deployment paused, rolled out",
			doc: `{apiVersion: apps/v1, kind: Deployment, metadata: {generation: 4}, spec: {replicas: 1, paused: true},
status: {observedGeneration: 4, replicas: 1, updatedReplicas: 1, availableReplicas: 1, readyReplicas: 1}}`},
		{name: "Deployment not paused, no pod of its template",
			doc: `{apiVersion: apps/v1, kind: Deployment, metadata: {generation: 4}, spec: {replicas: 1},
status: {observedGeneration: 4, replicas: 1, updatedReplicas: 0}}`},
		{name: "another group's kind",
			doc: `{apiVersion: example.com/v1, kind: Deployment, metadata: {generation: 4}, spec: {replicas: 1, paused: true}, status: {observedGeneration: 4}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// As the API's JSON decodes it (integers as int64), which the cache holds.
			j, err := yaml.YAMLToJSON([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(j); err != nil {
				t.Fatal(err)
			}
			if why, serving, started := HeldRollout(u); why != tc.why || serving != tc.wantServing || started != tc.wantStarted {
				t.Errorf("HeldRollout() = %q, %t, %t, want %q, %t, %t", why, serving, started, tc.why, tc.wantServing, tc.wantStarted)
			}
		})
	}
}

// TestHeldRolloutUnreadableCounts: an object whose integers are not int64 (decoded from YAML
// into any, as float64) has no generation for GetGeneration; its counts are not read either,
// so it is never held on counts read one way and a generation read another.
func TestHeldRolloutUnreadableCounts(t *testing.T) {
	t.Parallel()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`{apiVersion: apps/v1, kind: StatefulSet, metadata: {generation: 3}, spec: {replicas: 2, updateStrategy: {type: OnDelete}},
status: {observedGeneration: 2, replicas: 2, updatedReplicas: 0}}`), &u.Object); err != nil {
		t.Fatal(err)
	}
	if why, serving, started := HeldRollout(u); why != "" || serving || started {
		t.Errorf("HeldRollout() = %q, %t, %t, want \"\", false, false", why, serving, started)
	}
}
