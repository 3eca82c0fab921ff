package verify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/result"
)

// hookedView is a view that runs hook on its first read of a list of hookOn, before it
// answers: a change that lands while an assessment runs.
type hookedView struct {
	clusterView
	hookOn assess.ListKey
	hook   func()
}

func (v *hookedView) List(key assess.ListKey) (assess.List, bool) {
	if key == v.hookOn && v.hook != nil {
		v.hook()
		v.hook = nil
	}
	return v.clusterView.List(key)
}

// watchesOf moves the fixture lists of s into watches, as informers hold them after their
// first lists.
func watchesOf(t *testing.T, s *clusterState) *watchSet {
	t.Helper()
	ws := &watchSet{watches: map[assess.ListKey]*watch{}, clock: s.req.Clock}
	for key, l := range s.watches.(*fakeCache).lists {
		w := &watch{since: fixtureNow, store: &notifyingStore{transform: transformFor(key), onChange: func() {}, clock: s.req.Clock}}
		if err := w.store.Replace(l.store.List(), "10"); err != nil {
			t.Fatal(err)
		}
		ws.watches[key] = w
	}
	s.watches = ws
	return ws
}

// TestAssessReadsOneFrozenView: an assessment reads its lists as they were when it began. A
// Deployment deleted from its watch's store once the walk has read the Kustomization changes
// nothing in that pass over a frozen view (the next pass sees it), where the live stores
// would have judged half the tree before the deletion and half after.
func TestAssessReadsOneFrozenView(t *testing.T) {
	t.Parallel()
	ksKey := assess.ListKey{GVR: ksGVR, Namespace: "flux-system"}
	deployKey := assess.ListKey{GVR: deployGVR, Namespace: "shop"}
	docs := kustomization(readyOnB) + "\n---\n" + service + "\n---\n" + deploymentCurrent
	summary := func(e *assess.Assessment) []string {
		var out []string
		for _, o := range e.Objects {
			out = append(out, o.ID+" "+string(o.Status))
		}
		return out
	}
	current := []string{"Deployment/shop/web " + string(result.ObjectCurrent), "Service/shop/web " + string(result.ObjectCurrent)}
	tests := []struct {
		name   string
		frozen bool
		want   []string
	}{
		{name: "frozen", frozen: true, want: current},
		// (The control: the same change seen by a pass over the live stores.)
		{name: "live", want: []string{"Deployment/shop/web " + string(result.ObjectNotFound), "Service/shop/web " + string(result.ObjectCurrent)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newFakeState(t, revB, docs)
			ws := watchesOf(t, s)
			var lists objectCache = ws
			if tt.frozen {
				lists = freezeLists(ws)
			}
			view := &hookedView{clusterView: clusterView{s: s, lists: lists}, hookOn: ksKey, hook: func() {
				w := ws.watches[deployKey]
				obj, ok := w.Object("shop", "web")
				if !ok {
					t.Fatal("no Deployment shop/web in the fixtures")
				}
				if err := w.store.Delete(obj.(*unstructured.Unstructured)); err != nil {
					t.Fatal(err)
				}
			}}
			e := assess.Assess(view, s.mem, s.spec(), fixtureNow)
			if diff := cmp.Diff(tt.want, summary(e)); diff != "" {
				t.Errorf("objects of the pass (-want +got):\n%s", diff)
			}
			if view.hook != nil {
				t.Fatal("the pass never read the Kustomizations")
			}
			next := summary(s.assessFrom(ws, fixtureNow))
			if diff := cmp.Diff(tests[1].want, next); diff != "" {
				t.Errorf("objects of the next pass (-want +got):\n%s", diff)
			}
		})
	}
}
