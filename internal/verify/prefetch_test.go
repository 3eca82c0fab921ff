package verify

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// listBarrier holds each list a fake API server answers, once armed, until want lists are
// on their way together (or ten seconds passed, for a client that sends them one by one),
// and records how many were ever on their way at once.
type listBarrier struct {
	mu       sync.Mutex
	armed    bool
	want     int
	inFlight int
	most     int
	all      chan struct{}
}

func newListBarrier(want int) *listBarrier {
	return &listBarrier{want: want, all: make(chan struct{})}
}

func (b *listBarrier) arm() {
	b.mu.Lock()
	b.armed = true
	b.mu.Unlock()
}

// beforeGet is the server's BeforeGet: a read of one object waits at the barrier as a list
// does.
func (b *listBarrier) beforeGet(plural, namespace, _ string) { b.beforeList(plural, namespace) }

// beforeList is the server's BeforeList.
func (b *listBarrier) beforeList(string, string) {
	b.mu.Lock()
	if !b.armed {
		b.mu.Unlock()
		return
	}
	b.inFlight++
	b.most = max(b.most, b.inFlight)
	if b.inFlight == b.want {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-time.After(10 * time.Second):
	}
	b.mu.Lock()
	b.inFlight--
	b.mu.Unlock()
}

func (b *listBarrier) mostAtOnce() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.most
}

// appKinds are the lists of the fake app's three kinds in its namespace.
var appKinds = []assess.ListKey{appDeployments,
	{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}, Namespace: "app"},
	{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "app", Names: true},
}

// TestPrefetchListsAtOnce: a confirmation's lists (none another's owner) are on their way
// together, one round trip for them all, and each is then read from the set without another
// request.
func TestPrefetchListsAtOnce(t *testing.T) {
	t.Parallel()
	resources, objects := consistentApp()
	barrier := newListBarrier(len(appKinds))
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, BeforeList: barrier.beforeList})
	t.Cleanup(s.Close)
	state := consistentState(t, s, true)
	set := newListSet(t.Context(), state.readers(), time.Now, state.readOrder, listTimeout)
	barrier.arm()
	set.prefetch(appKinds)
	if got, want := barrier.mostAtOnce(), len(appKinds); got != want {
		t.Errorf("lists on their way at once = %d, want %d", got, want)
	}
	requests := s.Requests()
	for _, key := range appKinds {
		l := set.get(key)
		if l.Err() != nil || len(l.Items()) != 1 {
			t.Errorf("%s: %d items, error %v; want the app's one object", keyName(key), len(l.Items()), l.Err())
		}
	}
	if n := s.Requests() - requests; n != 0 {
		t.Errorf("get after prefetch made %d requests, want none", n)
	}
}

// TestConfirmWatchesReadsAtOnce: when the Kustomization's status moved past every watch of
// the app, the confirmation reads the three kinds' objects together, and still decides.
func TestConfirmWatchesReadsAtOnce(t *testing.T) {
	t.Parallel()
	resources, objects := consistentApp()
	barrier := newListBarrier(len(appKinds))
	_, state := clusterWithLaterStatus(t, fakeapi.Options{Resources: resources, BeforeList: barrier.beforeList, BeforeGet: barrier.beforeGet}, objects)
	barrier.arm()
	e, _ := decide(t, state)
	if !e.Current() {
		t.Errorf("decision: fatal %+v, pending %+v, want Current", e.Fatal, e.Pending)
	}
	if got, want := barrier.mostAtOnce(), len(appKinds); got != want {
		t.Errorf("confirmation reads on their way at once = %d, want %d", got, want)
	}
}

// BenchmarkConfirmWatches is one confirmation of the fake app's three kinds, each list
// answered after a 5ms round trip: what a confirmation adds to the verdict after the last
// change.
//
//	go test -run '^$' -bench BenchmarkConfirmWatches -count 5 ./internal/verify/
func BenchmarkConfirmWatches(b *testing.B) {
	resources, objects := consistentApp()
	var armed atomic.Bool
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, BeforeList: func(string, string) {
		if armed.Load() {
			time.Sleep(5 * time.Millisecond)
		}
	}})
	b.Cleanup(s.Close)
	state := consistentState(b, s, false)
	synced(b, state)
	// (Without the client's rate limit, which a loop of confirmations would measure instead.)
	cfg := insecureConfig(s)
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	state.metadataClient = md
	armed.Store(true)
	b.ResetTimer()
	for range b.N {
		if behind, _ := state.confirmWatches(b.Context(), appKinds, nil); behind != "" {
			b.Fatalf("confirmWatches: %s", behind)
		}
	}
}

// stuckAppWithItsPods is the fake app with its Deployment stuck (a rollout failure), served
// with the kinds the classifier reads of it: ReplicaSets and Pods.
func stuckAppWithItsPods(t *testing.T) ([]fakeapi.Resource, []map[string]any) {
	t.Helper()
	resources, objects := consistentApp()
	resources = append(resources,
		fakeapi.Resource{Group: "apps", Version: "v1", Kind: "ReplicaSet", Plural: "replicasets", Namespaced: true},
		fakeapi.Resource{Version: "v1", Kind: "Pod", Plural: "pods", Namespaced: true})
	objects[1] = stuck(appObject(t, objects, "app-000"))
	return resources, objects
}

// TestOpaqueFailureConfirmed: a stuck Deployment on a server whose resourceVersions are no
// numbers, with its ReplicaSets and Pods served: the failure rests on the workload's list read
// again and then the classifier's lists, each sent after the one before returned, so the
// confirmation reads them in turn and decides Failed (sent together, they would prove nothing
// of each other's order, and the run would confirm until its timeout).
func TestOpaqueFailureConfirmed(t *testing.T) {
	t.Parallel()
	resources, objects := stuckAppWithItsPods(t)
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, OpaqueRevisions: true})
	t.Cleanup(s.Close)
	state := consistentState(t, s, false)
	synced(t, state)
	e, confirming := decide(t, state)
	if e.Fatal == nil || e.Fatal.Verdict != result.VerdictFailed {
		t.Errorf("decision: fatal %+v, pending %+v, want Failed; confirming rounds %q", e.Fatal, e.Pending, confirming)
	}
}

// TestFailureListsAtOnce: a failure read on watches behind the Kustomization's status is read
// again with every list it could not confirm on its way at once, one round trip, where the
// watches' streams say the server's revisions are numbers; and it stands.
func TestFailureListsAtOnce(t *testing.T) {
	t.Parallel()
	resources, objects := stuckAppWithItsPods(t)
	barrier := newListBarrier(0)
	_, state := clusterWithLaterStatus(t, fakeapi.Options{Resources: resources, BeforeList: barrier.beforeList}, objects)
	now := time.Now()
	e := state.assess(now)
	if !failedOn(e) || len(e.Unconfirmed) < 2 {
		t.Fatalf("the watches' view: fatal %+v, unconfirmed %v; want a failure on two lists or more: the test proves nothing", e.Fatal, e.Unconfirmed)
	}
	barrier.want = len(e.Unconfirmed)
	barrier.arm()
	var c confirmations
	got := state.consistently(t.Context(), e, now, &c)
	if got.Fatal == nil || got.Fatal.Verdict != result.VerdictFailed {
		t.Errorf("decision: fatal %+v, pending %+v, want Failed", got.Fatal, got.Pending)
	}
	if most, want := barrier.mostAtOnce(), len(e.Unconfirmed); most != want {
		t.Errorf("lists read again on their way at once = %d, want %d (%v)", most, want, keyNames(e.Unconfirmed))
	}
}

// TestEvidenceReadsAtOnce: the evidence of a failing object, its pod's Warning events and its
// own, is read with both lists on their way at once: one round trip after the verdict.
func TestEvidenceReadsAtOnce(t *testing.T) {
	t.Parallel()
	resources, objects := consistentApp()
	resources = append(resources, fakeapi.Resource{Version: "v1", Kind: "Event", Plural: "events", Namespaced: true})
	barrier := newListBarrier(2)
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, BeforeList: barrier.beforeList})
	t.Cleanup(s.Close)
	state := consistentState(t, s, false)
	synced(t, state)
	barrier.arm()
	failing := []result.Object{{Kind: "Deployment", Namespace: "app", Name: "app-000",
		Failure: &result.Failure{Code: result.CodeImagePull, Pod: "app-000-abc"}}}
	state.gatherEvidence(t.Context(), failing)
	if most := barrier.mostAtOnce(); most != 2 {
		t.Errorf("event lists on their way at once = %d, want 2", most)
	}
	if f := failing[0].Failure; f.EventsError != "" {
		t.Errorf("events error %q, want none", f.EventsError)
	}
}
