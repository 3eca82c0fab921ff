package verify

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// consistentApp is the fake cluster's app as Start serves it: its Kustomization and, in
// namespace app, Deployment app-000, Service app-001 and ConfigMap app-002, all Current.
func consistentApp() ([]fakeapi.Resource, []map[string]any) {
	return fakeapi.App("app", "main@sha1:"+starveCommit, 3)
}

var appDeployments = assess.ListKey{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "app"}

// appObject returns a copy of the object of objects named name, its metadata copied too.
func appObject(t *testing.T, objects []map[string]any, name string) map[string]any {
	t.Helper()
	for _, o := range objects {
		md, _ := o["metadata"].(map[string]any)
		if md["name"] != name {
			continue
		}
		out := map[string]any{}
		for k, v := range o {
			out[k] = v
		}
		meta := map[string]any{}
		for k, v := range md {
			meta[k] = v
		}
		out["metadata"] = meta
		return out
	}
	t.Fatalf("the fake app has no object %s", name)
	return nil
}

// stuck is Deployment d past its progress deadline: a rollout failure (not-progressing).
func stuck(d map[string]any) map[string]any {
	d["status"] = map[string]any{"observedGeneration": int64(1), "replicas": int64(2), "updatedReplicas": int64(2),
		"readyReplicas": int64(0), "availableReplicas": int64(0), "unavailableReplicas": int64(2),
		"conditions": []any{
			map[string]any{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"},
			map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
				"message": "ReplicaSet \"app-000-1\" has timed out progressing."},
		}}
	return d
}

// consistentState is the state of the fake cluster s, read as get (snapshot) or verify does,
// probed; closed with the test.
func consistentState(t *testing.T, s *fakeapi.Server, snapshot bool) *clusterState {
	t.Helper()
	req := fakeClusterRequest(t)
	req.Snapshot = snapshot
	state, err := newClusterState(t.Context(), req.withDefaults(), insecureConfig(s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(state.close)
	if v, failed := state.probe(t.Context()); failed {
		t.Fatalf("probe: %s: %s", v.Verdict, v.Message)
	}
	return state
}

// TestSnapshotFailureReadAgain: get reads the lists again that a failure rests on without their
// having been read after the Kustomization said applied: the Deployment listed stuck before its
// fix was applied is Current on the list after.
func TestSnapshotFailureReadAgain(t *testing.T) {
	t.Parallel()
	resources, objects := consistentApp()
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(s.Close)
	state := consistentState(t, s, true)
	s.Set(stuck(appObject(t, objects, "app-000")))
	state.watches.get(appDeployments) // listed stuck, before the fix
	s.Set(appObject(t, objects, "app-000"))
	s.Set(appObject(t, objects, "app")) // the Kustomization says applied after it
	now := time.Now()
	e := state.assess(now)
	if e.Fatal == nil || e.Fatal.Verdict != result.VerdictFailed || len(e.Unconfirmed) == 0 {
		t.Fatalf("the first read is not a failure on a list read before its owner (fatal %+v, unconfirmed %v): the test proves nothing", e.Fatal, e.Unconfirmed)
	}
	got := state.consistently(t.Context(), e, now, &confirmations{})
	if got.Fatal != nil || got.Pending != nil {
		t.Errorf("consistently() = fatal %+v, pending %+v, want Current on the list read again", got.Fatal, got.Pending)
	}
	if !got.Current() {
		t.Errorf("consistently() is not Current: syncing %t, needs %+v", got.Syncing, got.Needs)
	}
}

// synced assesses the cluster as its loop does until every list it needs has its first list,
// and returns that assessment; it fails the test after a minute.
func synced(t *testing.T, state *clusterState) *assess.Assessment {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		e := state.assess(time.Now())
		if !e.Syncing && e.Needs.Empty() {
			return e
		}
		select {
		case <-state.notifications():
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("the fake cluster's lists did not arrive within a minute: %+v", e.Pending)
		}
	}
}

// TestFailureOnUnconfirmedListsWaits: a failure that, read again, still rests on lists not
// read after the Flux status above them (a server whose resourceVersions are no numbers, the
// Kustomization from its watch) is not the cluster's failure yet: the loop reads again later.
func TestFailureOnUnconfirmedListsWaits(t *testing.T) {
	t.Parallel()
	resources, objects := consistentApp()
	objects[1] = stuck(appObject(t, objects, "app-000"))
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, OpaqueRevisions: true})
	t.Cleanup(s.Close)
	state := consistentState(t, s, false)
	e := synced(t, state)
	if e.Fatal == nil || e.Fatal.Verdict != result.VerdictFailed || len(e.Unconfirmed) == 0 {
		t.Fatalf("the watches' view is not a failure on unconfirmed lists (fatal %+v, unconfirmed %v): the test proves nothing", e.Fatal, e.Unconfirmed)
	}
	got := state.consistently(t.Context(), e, time.Now(), &confirmations{})
	if got.Fatal != nil || got.Pending == nil || got.Pending.Reason != "Confirming" {
		t.Errorf("consistently() = fatal %+v, pending %+v, want Confirming", got.Fatal, got.Pending)
	}
}
