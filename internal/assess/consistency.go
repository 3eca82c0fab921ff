package assess

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/org/app-status-action/internal/flux"
)

// The consistency rule: every object judged comes from a read no older than the Flux object
// whose inventory names it. It holds on one View, which does not change while Assess reads it
// (View).

// consistency: a Current verdict rests on objects read no earlier than the Flux status that
// says applied. A Kustomization without wait is Ready on revision B a few milliseconds after
// kustomize-controller's server-side apply returns; a view whose Deployment was read before
// that status (a watch stream delivered later than the Kustomization's, or a list made
// before) may hold its previous generation, rolled out, and would pass. So every object
// judged, every nested Flux object and a nested object's own source must come from that very
// list (one list is one moment, one watch stream one ordered history) or from a Snapshot that
// holds the cluster as of the owner's status or later: its revision at least the owner
// object's resourceVersion (both etcd revisions of the same API server), or, where they do
// not compare, a list requested after the owner's list returned (Ordered). By induction down the tree, every object
// judged was read after every Flux status above it said applied. What cannot prove it (a
// watch, an owner not read) is Unconfirmed: the fetching side reads it again as a Snapshot.
func (a *assessor) consistent(key ListKey, l List, ownerID string) {
	if owner, known := a.fluxLists[ownerID]; !known || !readAfter(l, a.revisionAt(key, l), owner, a.fluxRevisions[ownerID]) {
		a.unconfirmed(key)
	}
}

// consistentObject applies the rule to the object namespace/name, judged on its own from l
// (an inventory's object): as consistent does for the whole list, or by a read of that object
// proven at ownerID's status or later (ObjectSnapshot). An object that neither proves is
// Unconfirmed with its list, and named (ObjectsToConfirm) where the owner's revision is a
// number: a linearizable read of it alone proves it then.
func (a *assessor) consistentObject(key ListKey, l List, ownerID, namespace, name string) {
	owner, known := a.fluxLists[ownerID]
	if !known {
		a.unconfirmed(key)
		return
	}
	ownerRV := a.fluxRevisions[ownerID]
	if readAfter(l, a.revisionAt(key, l), owner, ownerRV) {
		return
	}
	if o, ok := l.(ObjectSnapshot); ok {
		if c, err := resourceversion.CompareResourceVersion(o.ObjectRevision(namespace, name), ownerRV); err == nil && c >= 0 {
			return
		}
	}
	if _, err := strconv.ParseUint(ownerRV, 10, 64); err != nil {
		a.unconfirmed(key) // (no revision to prove the object at: the list is read whole)
		return
	}
	if !slices.Contains(a.e.Unconfirmed, key) {
		a.e.Unconfirmed = append(a.e.Unconfirmed, key)
	}
	if a.e.unconfirmedObjects == nil {
		a.e.unconfirmedObjects = map[ListKey][]ObjectProof{}
	}
	proofs := a.e.unconfirmedObjects[key]
	for i, p := range proofs {
		if p.Namespace == namespace && p.Name == name {
			// (An object of two inventories: read once, after the later status.)
			if c, err := resourceversion.CompareResourceVersion(ownerRV, p.AtLeast); err == nil && c > 0 {
				proofs[i].AtLeast = ownerRV
			}
			return
		}
	}
	a.e.unconfirmedObjects[key] = append(proofs, ObjectProof{Namespace: namespace, Name: name, AtLeast: ownerRV})
}

// ObjectsToConfirm are the objects of the Unconfirmed list key that the verdict rests on,
// each with the revision a read of it must follow, when they are all it rests on of that list:
// none when a judge read the list whole (a Job's pods, a claim's storage classes), or when
// the rule could not name one. The fetching side may read them one by one instead of the
// list.
func (e *Assessment) ObjectsToConfirm(key ListKey) []ObjectProof {
	if e.wholeUnconfirmed[key] {
		return nil
	}
	return e.unconfirmedObjects[key]
}

// revisionAt is the revision of the Snapshot l of key as the assessment first took it (list):
// a watch's revision only moves forward, and its cache takes in a change before its revision
// moves, so every object read from l since is at least that new; a revision asked after a
// read may have moved past the state that was read.
func (a *assessor) revisionAt(key ListKey, l List) string {
	if rev, ok := a.revisions[key]; ok {
		return rev
	}
	if snap, ok := l.(Snapshot); ok {
		return snap.Revision()
	}
	return ""
}

// took records the revision of the Snapshot l of key when the assessment first takes it.
func (a *assessor) took(key ListKey, l List) {
	snap, ok := l.(Snapshot)
	if !ok {
		return
	}
	if _, seen := a.revisions[key]; seen {
		return
	}
	if a.revisions == nil {
		a.revisions = map[ListKey]string{}
	}
	a.revisions[key] = snap.Revision()
}

// consistentSource applies the rule to the read of the source ref names when it alone decides
// a failure of ownerID (a source stalled short of the revision, one that moved past it): the
// source's list must hold the cluster as of ownerID's status or later, like any object judged,
// or the failure waits for it to be read again. (A source that only lets a gate pass is not
// asked for: the gate's own status says applied.)
func (a *assessor) consistentSource(ref flux.SourceRef, ownerID string) {
	if gvr, ok := ref.GroupVersionResource(); ok {
		key := ListKey{GVR: gvr, Namespace: ref.Namespace}
		a.consistent(key, a.list(key), ownerID)
	}
}

// readAfter reports whether l, at revision rev (revisionAt), holds the cluster as of the
// moment owner, the list an object was read from at resourceVersion ownerRV, held it, or
// later: l is owner itself, a Snapshot whose revision is at least ownerRV, or, where they do
// not compare, a list requested after owner's returned.
func readAfter(l List, rev string, owner List, ownerRV string) bool {
	if owner == l {
		return true
	}
	if _, ok := l.(Snapshot); ok {
		if c, err := resourceversion.CompareResourceVersion(rev, ownerRV); err == nil {
			return c >= 0
		}
	}
	lo, ok := l.(Ordered)
	oo, ownerOK := owner.(Ordered)
	if !ok || !ownerOK {
		return false
	}
	sent, _ := lo.ReadOrder()
	_, done := oo.ReadOrder()
	return sent >= done
}

// unconfirmed records key as a list to read again, once, and whole.
func (a *assessor) unconfirmed(key ListKey) {
	if !slices.Contains(a.e.Unconfirmed, key) {
		a.e.Unconfirmed = append(a.e.Unconfirmed, key)
	}
	if a.e.wholeUnconfirmed == nil {
		a.e.wholeUnconfirmed = map[ListKey]bool{}
	}
	a.e.wholeUnconfirmed[key] = true
}

// readFrom records that the Flux object id was read from w, as obj (consistency).
func (a *assessor) readFrom(id string, w List, obj *unstructured.Unstructured) {
	if a.fluxLists == nil {
		a.fluxLists, a.fluxRevisions = map[string]List{}, map[string]string{}
	}
	a.fluxLists[id], a.fluxRevisions[id] = w, obj.GetResourceVersion()
}

// fewKeys names up to three lists, and how many more.
func fewKeys(keys []ListKey) string {
	var names []string
	for _, k := range keys {
		n := k.GVR.Resource
		if k.Namespace != "" {
			n += " in " + k.Namespace
		}
		names = append(names, n)
	}
	return FewOf(names)
}

// FewOf names the first three of names, and counts the rest: "a, b, c and 4 more".
func FewOf(names []string) string {
	const few = 3
	if len(names) <= few {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:few], ", "), len(names)-few)
}
