package verify

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// rolling is Deployment d half rolled out: InProgress, not failed.
func rolling(d map[string]any) map[string]any {
	d["status"] = map[string]any{"observedGeneration": int64(1), "replicas": int64(2), "updatedReplicas": int64(1),
		"readyReplicas": int64(1), "availableReplicas": int64(1),
		"conditions": []any{
			map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
			map[string]any{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"},
		}}
	return d
}

// TestConfirmedBeforeTheLastChange: while the app's Deployment still rolls out after its
// Kustomization applied the revision, the watches of the kinds the rollout does not change
// (its Service and ConfigMap) are confirmed at once, so the pass that sees the Deployment turn
// Current decides Current without another read: the verdict costs no round trip after the
// last change. The early reads are made once per state of each watch.
func TestConfirmedBeforeTheLastChange(t *testing.T) {
	t.Parallel()
	resources, objects := consistentApp()
	rolledOut := appObject(t, objects, "app-000")["status"]
	for i, o := range objects {
		if md, _ := o["metadata"].(map[string]any); md["name"] == "app-000" {
			objects[i] = rolling(appObject(t, objects, "app-000"))
		}
	}
	var count readCounter
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, BeforeList: count.beforeList, BeforeGet: count.beforeGet})
	t.Cleanup(s.Close)
	state := consistentState(t, s, false)
	synced(t, state)
	statusAfterLists(t, s, state, objects)
	s.Set(appObject(t, objects, "app")) // (the server's copy at 3 too, as its watch has it)
	count.armed.Store(1)

	var c confirmations
	now := time.Now()
	e := state.consistently(t.Context(), state.assess(now), now, &c)
	if e.Fatal != nil || e.Pending == nil || e.Pending.Reason == "Confirming" {
		t.Fatalf("while the Deployment rolls out: fatal %+v, pending %+v, want waiting on the rollout", e.Fatal, e.Pending)
	}
	if reads := count.gets.Load() + count.lists.Load(); reads == 0 {
		t.Fatalf("while the Deployment rolls out: no read, want the Service's and the ConfigMap's watches confirmed")
	}
	// A pass with no change reads nothing again.
	before := count.gets.Load() + count.lists.Load()
	now = now.Add(time.Millisecond)
	state.consistently(t.Context(), state.assess(now), now, &c)
	if again := count.gets.Load() + count.lists.Load() - before; again != 0 {
		t.Errorf("a second pass without a change made %d reads, want none", again)
	}

	// The Deployment turns Current, delivered by its watch at revision 4.
	d := appObject(t, objects, "app-000")
	d["status"] = rolledOut
	s.Set(d)
	d["metadata"].(map[string]any)["resourceVersion"] = "4"
	dl, _ := state.watches.peek(appDeployments)
	if err := dl.(*watch).store.Update(&unstructured.Unstructured{Object: d}); err != nil {
		t.Fatal(err)
	}
	count.gets.Store(0)
	count.lists.Store(0)
	now = now.Add(time.Millisecond)
	if e = state.consistently(t.Context(), state.assess(now), now, &c); !e.Current() {
		t.Fatalf("after the last change: fatal %+v, pending %+v, want Current", e.Fatal, e.Pending)
	}
	if gets, lists := count.gets.Load(), count.lists.Load(); gets+lists != 0 {
		t.Errorf("the verdict after the last change made %d reads of one object and %d lists, want none", gets, lists)
	}
}
