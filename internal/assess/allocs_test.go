package assess

import (
	"fmt"
	"strings"
	"testing"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// TestWalkAllocsPerObject: once the statuses are memoised, a pass's walk allocates for an
// inventory's object no more than its share of the reports' slice (the verdict does not
// matter: every object is read and judged), so that a fleet's thousands of
// passes over hundreds of objects each cost the engine little garbage.
//
// Not parallel: testing.AllocsPerRun counts the whole process's allocations.
func TestWalkAllocsPerObject(t *testing.T) {
	root := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	spec := Spec{Resources: []flux.Ref{root}, Workloads: true, Health: fluxhealth.New(t.Context())}
	allocs := func(objects int) float64 {
		view := newFixtureView(t, inventoryOfConfigMaps(objects))
		mem := NewMemory()
		e := Assess(view, mem, spec, fixtureNow)
		current := 0
		for _, o := range e.Objects {
			if o.Status == result.ObjectCurrent {
				current++
			}
		}
		if e.Fatal != nil || current != objects {
			t.Fatalf("Assess of %d ConfigMaps: fatal %v, %d objects Current; want none, %d", objects, e.Fatal, current, objects)
		}
		return testing.AllocsPerRun(20, func() { Assess(view, mem, spec, fixtureNow) })
	}
	const few, many = 10, 110
	// The objects' reports grow one slice, which allocates a few times in all: less than a
	// tenth of an allocation per object; a visit put on the heap is one each.
	perObject := (allocs(many) - allocs(few)) / (many - few)
	if perObject > 0.1 {
		t.Errorf("a pass allocates %.2f times per inventory object, want at most 0.1", perObject)
	}
}

// inventoryOfConfigMaps is a Kustomization Ready at a revision whose inventory lists n
// ConfigMaps, and those ConfigMaps. It has a resourceVersion, so that its inventory is parsed
// once, as a cluster's is.
func inventoryOfConfigMaps(n int) string {
	var entries, docs strings.Builder
	for i := range n {
		fmt.Fprintf(&entries, "    - {id: shop_cm-%d__ConfigMap, v: v1}\n", i)
		fmt.Fprintf(&docs, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: shop}\n", i)
	}
	return withRevision(kustomizationFixture, "7") + "  inventory:\n    entries:\n" + entries.String() + docs.String()
}
