package verify

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
func consistentState(t testing.TB, s *fakeapi.Server, snapshot bool) *clusterState {
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

// listedBeforeItsFix is the state of a fake cluster read as get does, whose Deployment was
// listed stuck before its fix was applied and before the Kustomization said applied.
func listedBeforeItsFix(t *testing.T) *clusterState {
	t.Helper()
	resources, objects := consistentApp()
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(s.Close)
	state := consistentState(t, s, true)
	s.Set(stuck(appObject(t, objects, "app-000")))
	state.watches.get(appDeployments) // listed stuck, before the fix
	s.Set(appObject(t, objects, "app-000"))
	s.Set(appObject(t, objects, "app")) // the Kustomization says applied after it
	return state
}

// TestSnapshotFailureReadAgain: get reads the lists again that a failure rests on without their
// having been read after the Kustomization said applied: the Deployment listed stuck before its
// fix was applied is Current on the list after.
func TestSnapshotFailureReadAgain(t *testing.T) {
	t.Parallel()
	state := listedBeforeItsFix(t)
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

// synced assesses the cluster as its loop does until every list it needs has its first list;
// it fails the test after a minute.
func synced(t testing.TB, state *clusterState) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		e := state.assess(time.Now())
		if !e.Syncing && e.Needs.Empty() {
			return
		}
		select {
		case <-state.notifications():
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("the fake cluster's lists did not arrive within a minute: %+v", e.Pending)
		}
	}
}

// decide runs the cluster's loop as verifyCluster does, each round at the moment the last one
// asked to read again, until a decision other than Confirming or 8 rounds ran out; it returns
// the last assessment and the messages of the Confirming rounds.
func decide(t *testing.T, state *clusterState) (*assess.Assessment, []string) {
	t.Helper()
	const rounds = 8
	var c confirmations
	var confirming []string
	now := time.Now()
	for range rounds {
		e := state.consistently(t.Context(), state.assess(now), now, &c)
		if e.Pending == nil || e.Pending.Reason != "Confirming" {
			return e, confirming
		}
		confirming = append(confirming, e.Pending.Message)
		now = e.Recheck
	}
	t.Fatalf("no decision after %d rounds: %q", rounds, confirming)
	return nil, nil
}

// statusAfterLists writes the fake app's Kustomization again on s and delivers it to its
// watch in state at the resourceVersion s gave it: a status written after every other watch's
// first list, the server's copy and the watch's the same.
func statusAfterLists(t *testing.T, s *fakeapi.Server, state *clusterState, objects []map[string]any) {
	t.Helper()
	ks := appObject(t, objects, "app")
	ks["metadata"].(map[string]any)["resourceVersion"] = s.Set(ks)
	deliver(t, state, assess.ListKey{GVR: ksGVR, Namespace: "flux-system"}, ks)
}

// deliver hands obj to the watch of key in state, as its stream delivers a change.
func deliver(t *testing.T, state *clusterState, key assess.ListKey, obj map[string]any) {
	t.Helper()
	l, _ := state.watches.peek(key)
	if err := l.(*watch).store.Update(&unstructured.Unstructured{Object: obj}); err != nil {
		t.Fatal(err)
	}
}

// clusterWithLaterStatus starts a fake cluster of opts, serving the fake app's objects, and
// the state that verifies it, whose watches have their first lists; then the app's
// Kustomization's status is written again (statusAfterLists), so that every other watch must
// be confirmed against it.
func clusterWithLaterStatus(t *testing.T, opts fakeapi.Options, objects []map[string]any) (*fakeapi.Server, *clusterState) {
	t.Helper()
	opts.Objects = objects
	s := fakeapi.Start(opts)
	t.Cleanup(s.Close)
	state := consistentState(t, s, false)
	synced(t, state)
	statusAfterLists(t, s, state, objects)
	return s, state
}

// TestConsistentlyDecides: the loop that confirms a verdict on a consistent read comes to a
// decision within a few rounds however the watches lag or churn, and while it waits it names
// the lists it waits for.
func TestConsistentlyDecides(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		opaque bool
		// broken makes the Deployment stuck from the start.
		broken bool
		// moved is changed in the cluster once the watches are in, behind their backs.
		moved func(t *testing.T, objects []map[string]any) map[string]any
		// churn makes the Deployments' cache change all the time, its objects the same.
		churn bool
		// atOnce: decided in the first round.
		atOnce     bool
		wantFailed bool
		// wantNamed is said by the first Confirming round, when there is one.
		wantNamed string
		// noList: the decision makes no list of Deployments after their watch's first.
		noList bool
	}{
		{name: "a watch left behind the cluster",
			moved: func(t *testing.T, objects []map[string]any) map[string]any {
				d := appObject(t, objects, "app-000")
				d["metadata"].(map[string]any)["labels"] = map[string]any{"moved": "yes"}
				return d
			},
			wantNamed: "the watch of deployments in app is behind the cluster"},
		// The Deployments' watch listed after the Kustomization's status: its stream proves
		// the rule, with no list to confirm it.
		{name: "a watch whose stream is past its owner's status", atOnce: true, noList: true},
		{name: "a namespace whose objects change all the time", churn: true, atOnce: true},
		{name: "resourceVersions that are no numbers", opaque: true, atOnce: true},
		{name: "a failure on resourceVersions that are no numbers", opaque: true, broken: true, wantFailed: true, atOnce: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resources, objects := consistentApp()
			if tt.broken {
				objects[1] = stuck(appObject(t, objects, "app-000"))
			}
			// churn, once set, changes the Deployments' cache while each of their lists is
			// answered: the cache never holds still from before a list to after it.
			var churn atomic.Pointer[func()]
			var deploymentLists atomic.Int64
			s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, OpaqueRevisions: tt.opaque,
				BeforeList: func(plural, _ string) {
					if plural == "deployments" {
						deploymentLists.Add(1)
					}
					if f := churn.Load(); f != nil && plural == "deployments" {
						(*f)()
					}
				}})
			t.Cleanup(s.Close)
			state := consistentState(t, s, false)
			synced(t, state)
			if tt.moved != nil {
				s.Set(tt.moved(t, objects))
				// The Kustomization's watch then delivers a status written after the move:
				// the Deployments' stream, still at its first list, is behind its owner.
				statusAfterLists(t, s, state, objects)
			}
			listed := deploymentLists.Load()
			if tt.churn {
				l, _ := state.watches.peek(appDeployments)
				w := l.(*watch)
				obj, ok := w.Object("app", "app-000")
				if !ok {
					t.Fatal("the Deployments' watch holds no app-000")
				}
				touch := func() { _ = w.store.Update(obj) }
				churn.Store(&touch)
			}
			e, confirming := decide(t, state)
			if tt.atOnce && len(confirming) > 0 {
				t.Errorf("Confirming rounds said %q, want a decision at once", confirming)
			}
			if tt.wantFailed {
				if e.Fatal == nil || e.Fatal.Verdict != result.VerdictFailed {
					t.Errorf("decision: fatal %+v, pending %+v, want Failed", e.Fatal, e.Pending)
				}
			} else if !e.Current() {
				t.Errorf("decision: fatal %+v, pending %+v, want Current", e.Fatal, e.Pending)
			}
			if n := deploymentLists.Load() - listed; tt.noList && n != 0 {
				t.Errorf("the decision listed Deployments %d times, want none: their watch proves the rule", n)
			}
			if tt.wantNamed != "" && (len(confirming) == 0 || !strings.Contains(confirming[0], tt.wantNamed)) {
				t.Errorf("Confirming rounds said %q, want the first to say %q", confirming, tt.wantNamed)
			}
		})
	}
}

// TestSettled: the decision on a consistent read is the cluster's only when it rests on lists
// it confirmed, or is a state of its own; otherwise the loop reads again later.
func TestSettled(t *testing.T) {
	t.Parallel()
	deployments := []assess.ListKey{appDeployments}
	failure := &assess.Finding{Verdict: result.VerdictFailed, Code: result.CodeNotProgressing}
	wait := &assess.Finding{Verdict: result.VerdictInProgress, Reason: "InProgress"}
	tests := []struct {
		name    string
		failure bool // the watches' view failed (else: Current but for the order of its reads)
		read    *assess.Assessment
		want    bool
	}{
		{name: "a failure confirmed", failure: true, read: &assess.Assessment{Fatal: failure}, want: true},
		{name: "a failure read again on lists still unconfirmed", failure: true, read: &assess.Assessment{Fatal: failure, Unconfirmed: deployments}},
		{name: "a failure that became a wait", failure: true, read: &assess.Assessment{Pending: wait}},
		{name: "a failure that became Current", failure: true, read: &assess.Assessment{}},
		{name: "Current confirmed", read: &assess.Assessment{}, want: true},
		{name: "Current still unconfirmed", read: &assess.Assessment{Pending: wait, Unconfirmed: deployments, AwaitsConsistentRead: true}},
		{name: "a wait of its own", read: &assess.Assessment{Pending: wait, Unconfirmed: deployments}, want: true},
		{name: "a failure on confirmed lists", read: &assess.Assessment{Fatal: failure}, want: true},
		{name: "a failure on lists still unconfirmed", read: &assess.Assessment{Fatal: failure, Unconfirmed: deployments}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := settled(tt.read, tt.failure); got != tt.want {
				t.Errorf("settled(%+v, %t) = %t, want %t", tt.read, tt.failure, got, tt.want)
			}
		})
	}
}

// TestConfirmingWhenTheWatchCatchesUp: a read that found a watch behind the cluster waits for
// the watch, not for a backoff: once the watch takes in a change, the next round reads again
// at once, and the verdict follows one list after the last change.
func TestConfirmingWhenTheWatchCatchesUp(t *testing.T) {
	t.Parallel()
	resources, objects := consistentApp()
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(s.Close)
	state := consistentState(t, s, false)
	synced(t, state)
	d := appObject(t, objects, "app-000")
	d["metadata"].(map[string]any)["labels"] = map[string]any{"moved": "yes"}
	s.Set(d) // at revision 2, which the quiet watch does not deliver
	statusAfterLists(t, s, state, objects)
	var c confirmations
	now := time.Now()
	e := state.consistently(t.Context(), state.assess(now), now, &c)
	if e.Pending == nil || e.Pending.Reason != "Confirming" {
		t.Fatalf("first round: fatal %+v, pending %+v, want Confirming on a watch behind the cluster: the test proves nothing", e.Fatal, e.Pending)
	}
	// The watch delivers the change it missed, well before the backoff ends.
	d["metadata"].(map[string]any)["resourceVersion"] = "2"
	deliver(t, state, appDeployments, d)
	now = now.Add(time.Millisecond)
	if !now.Before(c.next) {
		t.Fatalf("the backoff ends at %s, not after %s: the test proves nothing", c.next, now)
	}
	e = state.consistently(t.Context(), state.assess(now), now, &c)
	if !e.Current() {
		t.Errorf("after the watch caught up: fatal %+v, pending %+v, want Current at once", e.Fatal, e.Pending)
	}
}

// TestMomentsOfTheConsistentRead: when a consistent read replaces the watches' view, the
// objects the result shows (the read's) each have the moment the run saw them in their status:
// the Deployment the watches saw stuck and the read saw Current has one.
func TestMomentsOfTheConsistentRead(t *testing.T) {
	t.Parallel()
	state := listedBeforeItsFix(t)
	now := time.Now()
	r := &clusterRun{req: state.req, state: state, start: now.Add(-time.Second), since: sinceTracker{}}
	e, _, c := r.pass(t.Context(), now)
	if !c.Done || c.Verdict.Verdict != result.VerdictCurrent {
		t.Fatalf("pass() concluded %+v, want Current on the list read again: the test proves nothing", c)
	}
	r.out.Flux, r.out.Objects = e.Flux, e.Objects
	r.since.stamp(&r.out)
	if len(r.out.Objects) == 0 {
		t.Fatal("the pass shows no objects: the test proves nothing")
	}
	for _, o := range r.out.Objects {
		if o.SinceMs == nil || *o.SinceMs != 1000 {
			t.Errorf("object %s (%s): sinceMs = %v, want 1000", o.ID, o.Status, o.SinceMs)
		}
	}
}
