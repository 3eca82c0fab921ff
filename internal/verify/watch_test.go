package verify

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// TestStreamPosition: a watch's store knows the revision its stream delivered it up to, and a
// watch's Revision says it: the list's, then each event's, then a bookmark's, forward only,
// and none where the server's revisions are no numbers. A bookmark that moves it wakes the
// cluster's loop.
func TestStreamPosition(t *testing.T) {
	t.Parallel()
	obj := func(name, rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("app")
		u.SetName(name)
		u.SetResourceVersion(rv)
		return u
	}
	type step struct {
		do         func(n *notifyingStore) error
		want       string
		wantNotify int
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "a list, then events and a bookmark", steps: []step{
			{do: func(n *notifyingStore) error { return n.Add(obj("early", "7")) }, want: "", wantNotify: 1},
			{do: func(n *notifyingStore) error { return n.Replace([]any{obj("a", "3")}, "10") }, want: "10", wantNotify: 1},
			{do: func(n *notifyingStore) error { return n.Add(obj("b", "12")) }, want: "12", wantNotify: 1},
			{do: func(n *notifyingStore) error { return n.Update(obj("b", "15")) }, want: "15", wantNotify: 1},
			{do: func(n *notifyingStore) error { return n.Delete(obj("a", "16")) }, want: "16", wantNotify: 1},
			// The reflector's word after each event repeats the event's revision: no wake-up.
			{do: func(n *notifyingStore) error { n.UpdateResourceVersion("16"); return nil }, want: "16"},
			{do: func(n *notifyingStore) error { n.UpdateResourceVersion("40"); return nil }, want: "40", wantNotify: 1},
			{do: func(n *notifyingStore) error { n.UpdateResourceVersion("30"); return nil }, want: "40"},
			{do: func(n *notifyingStore) error { return n.Add(obj("c", "41")) }, want: "41", wantNotify: 1},
			// A list again (after 410 Gone) starts from its own revision.
			{do: func(n *notifyingStore) error { return n.Replace(nil, "50") }, want: "50", wantNotify: 1},
		}},
		{name: "revisions that are no numbers", steps: []step{
			{do: func(n *notifyingStore) error { return n.Replace([]any{obj("a", "x1")}, "opaque-1") }, want: "", wantNotify: 1},
			{do: func(n *notifyingStore) error { return n.Add(obj("b", "opaque-2")) }, want: "", wantNotify: 1},
			{do: func(n *notifyingStore) error { n.UpdateResourceVersion("opaque-3"); return nil }, want: ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			notified := 0
			n := &notifyingStore{transform: stripManagedFields,
				onChange: func() { notified++ }}
			w := &watch{store: n}
			for i, s := range tt.steps {
				notified = 0
				if err := s.do(n); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if got := w.Revision(); got != s.want {
					t.Errorf("step %d: Revision() = %q, want %q", i, got, s.want)
				}
				if notified != s.wantNotify {
					t.Errorf("step %d: the loop was woken %d times, want %d", i, notified, s.wantNotify)
				}
			}
		})
	}
}

// TestRevisionConfirmedOrStreamed: Revision is the later of the stream's position and a
// quorum list's confirmation, the confirmation only while the cache has not changed.
func TestRevisionConfirmedOrStreamed(t *testing.T) {
	t.Parallel()
	n := &notifyingStore{transform: stripManagedFields, onChange: func() {}}
	w := &watch{store: n}
	if err := n.Replace(nil, "10"); err != nil {
		t.Fatal(err)
	}
	w.confirm("20", n.changes.Load())
	if got := w.Revision(); got != "20" {
		t.Errorf("confirmed at 20 with the stream at 10: Revision() = %q, want 20", got)
	}
	u := &unstructured.Unstructured{}
	u.SetNamespace("app")
	u.SetName("a")
	u.SetResourceVersion("12")
	// An event the stream had not delivered when the list found the cache equal (an object
	// created and deleted between 10 and 20): the cache is as of the stream again, 12.
	if err := n.Add(u); err != nil {
		t.Fatal(err)
	}
	if got := w.Revision(); got != "12" {
		t.Errorf("after a change: Revision() = %q, want the stream's 12", got)
	}
	n.UpdateResourceVersion("25")
	if got := w.Revision(); got != "25" {
		t.Errorf("a bookmark at 25: Revision() = %q, want 25", got)
	}
}

// TestStreamPositionLostOnAFailedChange: a change the store cannot take in (an object that
// does not convert) leaves the cache behind the stream: the position is forgotten until the
// next list, and the events and bookmarks after it do not bring it back.
func TestStreamPositionLostOnAFailedChange(t *testing.T) {
	t.Parallel()
	n := &notifyingStore{transform: builtinKinds[assess.PodsGVR].transform, onChange: func() {}}
	w := &watch{store: n}
	pod := func(rv string, phase any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "web", "namespace": "app", "resourceVersion": rv},
			"status":   map[string]any{"phase": phase}}}
		return u
	}
	if err := n.Replace([]any{pod("90", "Running")}, "100"); err != nil {
		t.Fatal(err)
	}
	if err := n.Update(pod("205", int64(7))); err == nil {
		t.Fatal("a Pod whose phase is a number converted: the test proves nothing")
	}
	n.UpdateResourceVersion("205")
	if got := w.Revision(); got != "" {
		t.Errorf("after a change the store could not take in: Revision() = %q, want none", got)
	}
	if err := n.Replace([]any{pod("210", "Running")}, "220"); err != nil {
		t.Fatal(err)
	}
	if got := w.Revision(); got != "220" {
		t.Errorf("after a list again: Revision() = %q, want 220", got)
	}
}

// TestStoppedListIsNoFailure: a list that the cluster's own end stops (the run's deadline, a
// cancel) records no failure on its watch and wakes no pass: the verdict at the deadline says
// what the cluster waited for, not "listing ...: context canceled".
func TestStoppedListIsNoFailure(t *testing.T) {
	t.Parallel()
	resources, objects := consistentApp()
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects,
		Refusals: []fakeapi.Refusal{{Plural: "deployments", Namespace: "app", Code: 0}}})
	t.Cleanup(s.Close)
	ctx, cancel := context.WithCancel(t.Context())
	req := fakeClusterRequest(t)
	state, err := newClusterState(ctx, req.withDefaults(), insecureConfig(s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(state.close)
	if v, failed := state.probe(ctx); failed {
		t.Fatalf("probe: %s: %s", v.Verdict, v.Message)
	}
	w, ok := state.watches.get(appDeployments).(*watch)
	if !ok {
		t.Fatal("not a watch")
	}
	time.Sleep(100 * time.Millisecond) // (the list is on its way, and hangs)
	cancel()
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if err := w.Err(); err != nil {
			t.Fatalf("the stopped list recorded %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
