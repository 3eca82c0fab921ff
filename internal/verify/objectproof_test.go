package verify

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// readCounter counts a fake server's lists and reads of one object once armed.
type readCounter struct {
	armed, lists, gets atomic.Int64
}

func (c *readCounter) beforeList(string, string) {
	if c.armed.Load() != 0 {
		c.lists.Add(1)
	}
}

func (c *readCounter) beforeGet(string, string, string) {
	if c.armed.Load() != 0 {
		c.gets.Add(1)
	}
}

// TestConfirmObjectsAlone: a confirmation whose decision rests on a few named objects of a
// watch reads each of them alone (a quorum read of one object, which the API server answers
// from etcd without waiting for its watch cache), and one that rests on more than
// objectReadLimit objects of a kind lists the kind. Either way the decision is Current once
// the watches hold what the reads found, and not before: an object changed behind a watch's
// back is not confirmed by its read until the watch takes the change in. At most
// objectReadLimit objects are read alone in one confirmation.
func TestConfirmObjectsAlone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		perKind   int
		wantGets  int64
		wantLists int64
	}{
		{name: "one object of each kind", perKind: 1, wantGets: 3},
		{name: "objectReadLimit of each kind: one kind read alone, the others listed", perKind: objectReadLimit, wantGets: objectReadLimit, wantLists: 2},
		{name: "more than objectReadLimit of each kind", perKind: objectReadLimit + 1, wantLists: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resources, objects := fakeapi.App("app", "main@sha1:"+starveCommit, 3*tt.perKind)
			var count readCounter
			_, state := clusterWithLaterStatus(t, fakeapi.Options{Resources: resources, BeforeList: count.beforeList, BeforeGet: count.beforeGet}, objects)
			count.armed.Store(1)
			e, confirming := decide(t, state)
			if !e.Current() || len(confirming) != 0 {
				t.Fatalf("decision: fatal %+v, pending %+v after %q, want Current at once", e.Fatal, e.Pending, confirming)
			}
			if got, lists := count.gets.Load(), count.lists.Load(); got != tt.wantGets || lists != tt.wantLists {
				t.Errorf("the confirmation made %d reads of one object and %d lists, want %d and %d", got, lists, tt.wantGets, tt.wantLists)
			}
		})
	}
	t.Run("an object changed behind its watch", func(t *testing.T) {
		t.Parallel()
		resources, objects := consistentApp()
		var count readCounter
		s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, BeforeList: count.beforeList, BeforeGet: count.beforeGet})
		t.Cleanup(s.Close)
		state := consistentState(t, s, false)
		synced(t, state)
		d := appObject(t, objects, "app-000")
		d["metadata"].(map[string]any)["labels"] = map[string]any{"moved": "yes"}
		s.Set(d) // at revision 2, which the quiet watch does not deliver
		statusAfterLists(t, s, state, objects)
		count.armed.Store(1)
		var c confirmations
		now := time.Now()
		e := state.consistently(t.Context(), state.assess(now), now, &c)
		if e.Pending == nil || e.Pending.Reason != "Confirming" {
			t.Fatalf("the watch behind: fatal %+v, pending %+v, want Confirming", e.Fatal, e.Pending)
		}
		if count.gets.Load() == 0 || count.lists.Load() != 0 {
			t.Fatalf("the confirmation made %d reads of one object and %d lists: the test proves nothing of the reads alone", count.gets.Load(), count.lists.Load())
		}
		// Read again once the backoff ends, the watch still behind: still not confirmed.
		now = c.next
		if e = state.consistently(t.Context(), state.assess(now), now, &c); e.Current() {
			t.Fatalf("the watch still behind after the backoff: Current, want Confirming")
		}
		d["metadata"].(map[string]any)["resourceVersion"] = "2"
		deliver(t, state, appDeployments, d)
		now = now.Add(time.Millisecond)
		if e = state.consistently(t.Context(), state.assess(now), now, &c); !e.Current() {
			t.Errorf("after the watch caught up: fatal %+v, pending %+v, want Current", e.Fatal, e.Pending)
		}
	})
}

// getRefused is a metadata client whose reads of one object fail with err, its lists not:
// credentials with list and watch on a kind, without get (403), or a server that fails them.
type getRefused struct {
	metadata.Interface
	err func(gr schema.GroupResource, name string) error
}

func (g getRefused) Resource(r schema.GroupVersionResource) metadata.Getter {
	return refusedGetter{Getter: g.Interface.Resource(r), gvr: r, err: g.err}
}

type refusedGetter struct {
	metadata.Getter
	gvr schema.GroupVersionResource
	err func(gr schema.GroupResource, name string) error
}

func (f refusedGetter) Namespace(ns string) metadata.ResourceInterface {
	return refusedRI{ResourceInterface: f.Getter.Namespace(ns), gvr: f.gvr, err: f.err}
}

type refusedRI struct {
	metadata.ResourceInterface
	gvr schema.GroupVersionResource
	err func(gr schema.GroupResource, name string) error
}

func (f refusedRI) Get(_ context.Context, name string, _ metav1.GetOptions, _ ...string) (*metav1.PartialObjectMetadata, error) {
	return nil, f.err(f.gvr.GroupResource(), name)
}

func forbidden(gr schema.GroupResource, name string) error {
	return apierrors.NewForbidden(gr, name, errors.New("cannot get"))
}

// TestObjectReadsRefusedAreListed: where the reads alone of the app's kinds fail, the
// confirmation lists those kinds in the same round and decides at once; kinds whose reads the
// server refused (credentials that may list and watch a kind, not get it) are listed from then
// on, and kinds whose reads failed otherwise (a server error) are read alone again next time.
func TestObjectReadsRefusedAreListed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		err          func(gr schema.GroupResource, name string) error
		wantListOnly bool
	}{
		{name: "refused (403)", err: forbidden, wantListOnly: true},
		{name: "a server error (500)", err: func(schema.GroupResource, string) error { return apierrors.NewInternalError(errors.New("boom")) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resources, objects := consistentApp()
			_, state := clusterWithLaterStatus(t, fakeapi.Options{Resources: resources}, objects)
			state.metadataClient = getRefused{Interface: state.metadataClient, err: tt.err}
			e, confirming := decide(t, state)
			if !e.Current() || len(confirming) != 0 {
				t.Errorf("reads alone failed: fatal %+v, pending %+v after %q, want Current at once", e.Fatal, e.Pending, confirming)
			}
			for _, key := range appKinds[:2] {
				state.listOnlyMu.Lock()
				listOnly := state.listOnly[key]
				state.listOnlyMu.Unlock()
				if listOnly != tt.wantListOnly {
					t.Errorf("%s: listed from then on %t, want %t", keyName(key), listOnly, tt.wantListOnly)
				}
			}
		})
	}
}

// TestRefusedKindListedWithTheOthers: a kind whose reads alone are refused is listed as soon
// as they answered, on its way with the lists of the other kinds, not after them.
func TestRefusedKindListedWithTheOthers(t *testing.T) {
	t.Parallel()
	resources, objects := fakeapi.App("app", "main@sha1:"+starveCommit, 3*objectReadLimit)
	barrier := newListBarrier(3)
	_, state := clusterWithLaterStatus(t, fakeapi.Options{Resources: resources, BeforeList: barrier.beforeList}, objects)
	state.metadataClient = getRefused{Interface: state.metadataClient, err: forbidden}
	barrier.arm()
	e, confirming := decide(t, state)
	if !e.Current() || len(confirming) != 0 {
		t.Fatalf("decision: fatal %+v, pending %+v after %q, want Current at once", e.Fatal, e.Pending, confirming)
	}
	if most := barrier.mostAtOnce(); most != 3 {
		t.Errorf("lists on their way at once = %d, want 3: the refused kind's with the two others", most)
	}
}

// opaqueMeta is a metadata client whose answers carry resourceVersions that are no numbers
// (an aggregated API's), for reads alone and lists.
type opaqueMeta struct{ metadata.Interface }

func (g opaqueMeta) Resource(r schema.GroupVersionResource) metadata.Getter {
	return opaqueGetter{Getter: g.Interface.Resource(r)}
}

type opaqueGetter struct{ metadata.Getter }

func (f opaqueGetter) Namespace(ns string) metadata.ResourceInterface {
	return opaqueRI{ResourceInterface: f.Getter.Namespace(ns)}
}

type opaqueRI struct{ metadata.ResourceInterface }

func (f opaqueRI) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*metav1.PartialObjectMetadata, error) {
	got, err := f.ResourceInterface.Get(ctx, name, o, sub...)
	if got != nil {
		got.ResourceVersion = "o" + got.ResourceVersion
	}
	return got, err
}

func (f opaqueRI) List(ctx context.Context, o metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	got, err := f.ResourceInterface.List(ctx, o)
	if got != nil {
		got.ResourceVersion = "o" + got.ResourceVersion
	}
	return got, err
}

// TestObjectReadsOfOpaqueRevisions: where a kind's reads alone answer with resourceVersions
// that are no numbers (an aggregated API's), the decision goes to fresh lists at once, as with
// such a list; it does not wait out three reads said to be behind.
func TestObjectReadsOfOpaqueRevisions(t *testing.T) {
	t.Parallel()
	resources, objects := consistentApp()
	_, state := clusterWithLaterStatus(t, fakeapi.Options{Resources: resources}, objects)
	state.metadataClient = opaqueMeta{state.metadataClient}
	e, confirming := decide(t, state)
	if len(confirming) != 0 {
		t.Errorf("%d rounds before the decision (%q), want none: fresh lists at once", len(confirming), confirming)
	}
	if !e.Current() {
		t.Errorf("decision: fatal %+v, pending %+v, want Current", e.Fatal, e.Pending)
	}
}

// TestObjectReadsInOneRoundTrip: 3 kinds of objectReadLimit objects each: the confirmation
// reads one kind's objects alone and lists the others, every read on its way at once.
func TestObjectReadsInOneRoundTrip(t *testing.T) {
	t.Parallel()
	resources, objects := fakeapi.App("app", "main@sha1:"+starveCommit, 3*objectReadLimit)
	var armed atomic.Bool
	var mu sync.Mutex
	inFlight, most, gets, lists := 0, 0, 0, 0
	roundTrip := func(get bool) {
		if !armed.Load() {
			return
		}
		mu.Lock()
		inFlight++
		if get {
			gets++
		} else {
			lists++
		}
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
	}
	_, state := clusterWithLaterStatus(t, fakeapi.Options{Resources: resources,
		BeforeGet: func(string, string, string) { roundTrip(true) }, BeforeList: func(string, string) { roundTrip(false) }}, objects)
	armed.Store(true)
	e, confirming := decide(t, state)
	if !e.Current() || len(confirming) != 0 {
		t.Fatalf("decision: fatal %+v, pending %+v after %q, want Current at once", e.Fatal, e.Pending, confirming)
	}
	mu.Lock()
	defer mu.Unlock()
	if gets != objectReadLimit || lists != 2 || most != gets+lists {
		t.Errorf("%d reads alone and %d lists, at most %d at once; want %d and 2, all at once", gets, lists, most, objectReadLimit)
	}
}

// TestProofNeedsANumberedResourceVersion: a server whose objects carry no resourceVersion (an
// aggregated API may) proves nothing of a state by a read alone: a later state would carry
// the same empty one.
func TestProofNeedsANumberedResourceVersion(t *testing.T) {
	t.Parallel()
	w := &watch{store: &notifyingStore{transform: stripManagedFields, onChange: func() {}}}
	w.store.isSynced.Store(true)
	obj := func(phase string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x.example/v1", "kind": "Thing",
			"metadata": map[string]any{"name": "a", "namespace": "ns"}, "status": map[string]any{"phase": phase}}}
	}
	if err := w.store.Add(obj("Old")); err != nil {
		t.Fatal(err)
	}
	key := assess.ListKey{GVR: schema.GroupVersionResource{Group: "x.example", Version: "v1", Resource: "things"}, Namespace: "ns"}
	note := confirmObjects(w, key, []objectRead{{proof: assess.ObjectProof{Namespace: "ns", Name: "a", AtLeast: "100"},
		got: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}}})
	if note == "" {
		t.Errorf("a read of an object without a resourceVersion confirmed it")
	}
	if err := w.store.Update(obj("New")); err != nil {
		t.Fatal(err)
	}
	f := w.freeze(passMoment{now: time.Now(), wall: time.Now()})
	if got := f.ObjectRevision("ns", "a"); got != "" {
		t.Errorf("a state the read never saw is proven at %q", got)
	}
}

// TestProofKeepsTheLaterOwner: one object named by two owners whose resourceVersions differ,
// read for each: the proof kept is the later one's, whatever the order.
func TestProofKeepsTheLaterOwner(t *testing.T) {
	t.Parallel()
	w := &watch{store: &notifyingStore{transform: stripManagedFields, onChange: func() {}}}
	w.store.isSynced.Store(true)
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "shared", "resourceVersion": "7"}}}
	if err := w.store.Add(o); err != nil {
		t.Fatal(err)
	}
	got := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "shared", ResourceVersion: "7"}}
	key := assess.ListKey{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}}
	confirmObjects(w, key, []objectRead{
		{proof: assess.ObjectProof{Name: "shared", AtLeast: "150"}, got: got},
		{proof: assess.ObjectProof{Name: "shared", AtLeast: "100"}, got: got},
	})
	f := w.freeze(passMoment{now: time.Now(), wall: time.Now()})
	if r := f.ObjectRevision("", "shared"); r != "150" {
		t.Errorf("proven at %q, want 150 (both reads followed 150)", r)
	}
}
