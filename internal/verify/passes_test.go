package verify

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// TestPassJudgesOnceWhenItStartsWatches: a pass whose decision lacks lists starts their
// watches and judges the tree once, not once more on watches that hold nothing yet; the lists
// of the inventory's kinds it waits for are the live watches, whose first lists a
// notification may wait for (settleLists). Every pass on the way to Current is one
// assessment.
func TestPassJudgesOnceWhenItStartsWatches(t *testing.T) {
	t.Parallel()
	resources, objects := consistentApp()
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(s.Close)
	state := consistentState(t, s, false)
	// Discovery's answers are there from the start: only the lists make the passes.
	for _, r := range resources {
		gvk := schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
		state.mappings[gvk] = &meta.RESTMapping{GroupVersionKind: gvk, Scope: meta.RESTScopeNamespace,
			Resource: schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Plural}}
	}
	state.mappingErrs = map[schema.GroupVersionKind]error{assess.CanaryGVK: assess.NotServedError{GVK: assess.CanaryGVK}}
	type pass struct {
		Assessments int
		InFlight    []string // the lists a notification may wait for, live watches only
	}
	var got []pass
	for range 10 {
		before := state.mem.Passes()
		e := state.assess(time.Now())
		p := pass{Assessments: state.mem.Passes() - before}
		for _, l := range e.InFlight {
			w, ok := l.(*watch)
			if !ok {
				p.InFlight = append(p.InFlight, "not a watch")
				continue
			}
			for key, live := range state.watches.(*watchSet).watches {
				if live == w {
					p.InFlight = append(p.InFlight, keyName(key))
				}
			}
		}
		slices.Sort(p.InFlight)
		got = append(got, p)
		if e.Current() || e.AwaitsConsistentRead || e.Fatal != nil {
			break
		}
		select {
		case <-state.notifications():
		case <-time.After(10 * time.Second):
			t.Fatalf("no change within 10s after passes %+v", got)
		}
	}
	if len(got) < 3 {
		t.Fatalf("passes %+v: want at least 3 (the Kustomization's list, the app's lists, their arrival)", got)
	}
	want := []pass{{Assessments: 1}, {Assessments: 1, InFlight: []string{"configmaps in app", "deployments in app", "services in app"}}}
	for range got[2:] {
		want = append(want, pass{Assessments: 1})
	}
	for i := range got[2:] {
		got[2+i].InFlight = nil // (which lists are still on their way depends on the timing)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("passes (-want +got):\n%s", diff)
	}
}
