package assess

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// listOnItsWay records w, a list of an inventory's kind with no first list, in InFlight
// while its first list is on its way (not failed).
func (e *Assessment) listOnItsWay(w List) {
	if w.Err() == nil && !slices.Contains(e.InFlight, w) {
		e.InFlight = append(e.InFlight, w)
	}
}

// list returns the list of key from the view; one never asked for is a need, and reads as a
// list on its way that holds nothing.
func (a *assessor) list(key ListKey) List {
	if l, ok := a.view.List(key); ok && l != nil {
		a.took(key, l)
		return l
	}
	a.e.need(key)
	return notAsked{key: key, since: a.now}
}

// notAsked is a list the view has not asked for yet.
type notAsked struct {
	key   ListKey
	since time.Time
}

// NotAsked is the key of l when l stands for a list the view had not asked for when the
// assessment read it (a need, in InFlight when of an inventory's kind): such a list reads as
// one on its way that holds nothing, as a list just asked for does.
func NotAsked(l List) (ListKey, bool) {
	n, ok := l.(notAsked)
	return n.key, ok
}

func (notAsked) Synced() bool                               { return false }
func (notAsked) Err() error                                 { return nil }
func (n notAsked) WaitingSince() time.Time                  { return n.since }
func (notAsked) Object(string, string) (any, bool)          { return nil, false }
func (notAsked) Items() []any                               { return nil }
func (notAsked) Gone(string, string) (any, time.Time, bool) { return nil, time.Time{}, false }
func (notAsked) Noted(string, string) time.Time             { return time.Time{} }
func (notAsked) Facts(string, string) ObjectFacts           { return ObjectFacts{} }
func (notAsked) Read() ReadFacts                            { return ReadFacts{} }

// assessMapping is what discovery answered for a kind, asked of the view once per kind in an
// assessment, however many objects of that kind the inventories list. A kind not mapped yet,
// or whose mapping failed, is a need (asked again once its last read is MappingRetry old: the
// fetching side keeps that time).
func (a *assessor) assessMapping(e *Assessment, gvk schema.GroupVersionKind) Mapping {
	if m, ok := e.mappings[gvk]; ok {
		return m
	}
	var m Mapping
	if gvk.Version == "" {
		// Flux's inventories and Helm's manifests name every object's version; this one
		// names none, and a kind is served per version.
		m = Mapping{Done: true, Err: fmt.Errorf("the inventory gives %s no API version", gvk.GroupKind())}
	} else {
		m = a.view.Mapping(gvk)
		if !m.Done || m.Err != nil {
			e.need(gvk)
		}
	}
	if e.mappings == nil {
		e.mappings = map[schema.GroupVersionKind]Mapping{}
	}
	e.mappings[gvk] = m
	return m
}

// assess computes the cluster's state from the view. The whole tree's inventories are read
// first (treeInventories), so that no judgement depends on the order of the walk.
func (a *assessor) assess() *Assessment {
	e := &Assessment{Objects: make([]result.Object, 0, a.mem.lastObjects)}
	a.e = e
	now := a.now
	defer func() { a.mem.lastObjects = len(e.Objects) }()
	a.mem.statuses.turn()
	a.tree = a.treeInventories()
	// Every requested resource is a root, judged on the run's revision, whatever the order
	// they were given in and whether another one's inventory lists it too: met as a nested
	// object, it is left for its own turn as a root (judged "at whatever it last applied"
	// there, a requested HelmRelease still on the previous chart would pass).
	visited := map[string]bool{}
	roots := map[string]bool{}
	for _, ref := range a.spec.Resources {
		roots[ref.ID()] = true
	}
	for _, ref := range a.spec.Resources {
		a.evalFlux(e, ref, nil, a.spec.Revision, now, visited, roots)
	}
	e.RootsApplied = !a.spec.Revision.IsZero() && e.appliedRoots == len(a.spec.Resources)
	if e.Fatal == nil && e.Pending == nil && e.Needs.Empty() && !e.Syncing && len(e.Unconfirmed) > 0 {
		// Current on what was read, but not on a consistent read: said once it is.
		e.AwaitsConsistentRead = true
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "Confirming",
			Message: fmt.Sprintf("confirming on a consistent read of %s", fewKeys(e.Unconfirmed))})
	}
	if !e.Needs.Empty() {
		// What was never asked for is not listed yet: nothing is Current without it.
		e.Syncing = true
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "Listing", Message: "reading the app's objects", Progress: ProgressStep})
	}
	slices.SortStableFunc(e.Objects, func(a, b result.Object) int {
		return cmp.Or(strings.Compare(a.Owner, b.Owner), strings.Compare(a.ID, b.ID))
	})
	return e
}

// treeInventories reads, before anything is judged, every inventory of the tree under the
// requested objects (Flux objects nested at any depth, whatever their kind and order), as far
// as the view holds them: what the tree applies (a HelmRelease's values in a sibling
// Kustomization) is known before any object is judged against it. A Flux object the view does
// not hold yet leaves its subtree out, and the walk then waits for it anyway.
func (a *assessor) treeInventories() map[string][]flux.ObjectRef {
	tree := map[string][]flux.ObjectRef{}
	queue := slices.Clone(a.spec.Resources)
	for len(queue) > 0 {
		ref := queue[0]
		queue = queue[1:]
		id := ref.ID()
		if _, seen := tree[id]; seen {
			continue
		}
		tree[id] = nil
		w := a.list(ListKey{GVR: ref.Kind.GroupVersionResource(), Namespace: ref.Namespace})
		if !w.Synced() {
			continue
		}
		cached, _ := w.Object(ref.Namespace, ref.Name)
		obj, ok := cached.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		// (Known before the walk reaches it: what a sibling lists is judged against it.)
		a.readFrom(id, w, obj)
		if flux.IsRemote(obj) {
			continue
		}
		refs, _, err := a.inventory(id, obj)
		if err != nil {
			continue
		}
		tree[id] = refs
		for _, o := range refs {
			if kind, isFlux := flux.IsFluxKind(o.Group, o.Kind); isFlux {
				queue = append(queue, flux.Ref{Kind: kind, Namespace: o.Namespace, Name: o.Name})
			}
		}
	}
	return tree
}
