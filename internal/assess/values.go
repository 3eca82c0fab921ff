package assess

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// fieldManager is the field manager the Flux object ownerID (an ID of the tree) applies what
// its inventory lists with: flux-operator for a ResourceSet, kustomize-controller otherwise.
func fieldManager(ownerID string) string {
	if strings.HasPrefix(ownerID, string(flux.KindResourceSet)+"/") {
		return flux.FluxOperator
	}
	return flux.KustomizeController
}

// settleValues holds back a HelmRelease that is Current on its chart while a ConfigMap or
// Secret it takes values from, applied by Flux, changed after helm-controller last composed
// the values (flux.StaleValues). Requested or nested, the same rule: a requested HelmRelease
// is judged as a root (its owner's walk leaves it to its own turn), and its values are
// compared all the same, or a run that names it would pass what one naming its Kustomization
// holds back. Applied by Flux is listed by an inventory of the tree (a Kustomization or a
// ResourceSet; a sibling "config" Kustomization's too, not only the owner's), or else
// carrying the owner labels of a Kustomization or a ResourceSet (flux.AppliedBy: one that is
// not requested). Objects of its valuesFrom made otherwise (by an operator, or by hand) are
// not this rollout's, and are not compared. Their list is judged (consistency): read no
// earlier than the HelmRelease's status and than the status of each Flux object of the tree
// whose inventory lists them, or a change made before those would go unseen, with or without
// the workloads.
func (a *assessor) settleValues(e *Assessment, gate *flux.Gate, obj *unstructured.Unstructured, parent *flux.Gate, now time.Time) (note string) {
	if gate.Verdict != result.VerdictCurrent || parent != nil &&
		parent.Object.Kind != string(flux.KindKustomization) && parent.Object.Kind != string(flux.KindResourceSet) {
		return ""
	}
	refs := flux.ValuesFrom(obj)
	if len(refs) == 0 {
		return ""
	}
	listed := map[flux.ValuesRef][]string{}
	for ownerID, refs := range a.tree {
		for _, o := range refs {
			if o.Group == "" && o.Namespace == obj.GetNamespace() {
				r := flux.ValuesRef{Kind: o.Kind, Name: o.Name}
				listed[r] = append(listed[r], ownerID)
			}
		}
	}
	changed := map[flux.ValuesRef]flux.ValuesChange{}
	for _, r := range refs {
		change, found, forbidden, reading := a.valuesChange(e, gate, obj, r, listed[r])
		switch {
		case forbidden != "":
			note = joinMessage(note, "values from "+r.String()+" not compared with the release: "+forbidden)
		case reading:
			override(gate, result.VerdictInProgress, "", "ValuesNotRead", "reading "+r.String()+", which its values come from")
			gate.Applied = false
			return note
		case found:
			changed[r] = change
		}
	}
	if len(changed) == 0 {
		return note
	}
	hr := a.list(ListKey{GVR: flux.KindHelmRelease.GroupVersionResource(), Namespace: obj.GetNamespace()})
	ev := flux.ValuesEvidence{ReconcileStarted: hr.Noted(obj.GetNamespace(), obj.GetName()), WatchingSince: hr.WaitingSince(), Now: now}
	if msg, stale, recheck := flux.StaleValues(obj, changed, ev); stale && !a.valuesUnchanged(e, obj, refs) {
		override(gate, result.VerdictInProgress, "", "ValuesNotApplied", msg)
		gate.Applied = false
		e.recheckAt(recheck)
	}
	return note
}

// valuesUnchanged reports whether the values helm-controller would compose now for the
// HelmRelease obj, from the data of its valuesFrom (refs) as they are, are those it composed
// last: their digest is its status.lastAttemptedConfigDigest (flux.AttemptedConfigDigest).
// Then a change of those objects since (a new label alone: kustomize-controller's one
// server-side apply entry owns the labels and the data, and its time moves with either)
// changed nothing helm-controller would apply, and the release is not held for it. The
// fetching side composes and digests them (a ConfigNeed with Release set), from reads made
// after the assessment that asked, so after the HelmRelease's status it judged; the need is
// keyed by the release's generation and the resourceVersions its objects' lists hold, so a
// later change asks again. false while they are composed, when they cannot be read or
// composed, without a digest to compare with, and while helm-controller reconciles (the
// digest is set before its Helm action ends): the release is held as before.
func (a *assessor) valuesUnchanged(e *Assessment, obj *unstructured.Unstructured, refs []flux.ValuesRef) bool {
	recorded, ok := flux.AttemptedConfigDigest(obj)
	if _, reconciling := flux.ReconcileStarted(obj); !ok || reconciling {
		return false
	}
	key, ok := a.valuesKey(obj, refs)
	if !ok {
		return false
	}
	stored, cached := a.view.Config(key)
	if !cached || (!stored.RetryAt.IsZero() && !a.now.Before(stored.RetryAt)) {
		e.need(ConfigNeed{Key: key, GVR: flux.KindHelmRelease.GroupVersionResource(), Namespace: obj.GetNamespace(), Name: obj.GetName(), Release: obj})
	}
	if !cached {
		return false
	}
	e.retryReadAt(stored.RetryAt, a.now)
	return stored.Unreadable == "" && stored.Checksum == recorded
}

// valuesKey is the key of the composition of obj's values (valuesUnchanged): the release, its
// generation, and each of refs at the resourceVersion its list holds ("" when it holds none:
// an optional one may be missing). false while a list is not read, or failed.
func (a *assessor) valuesKey(obj *unstructured.Unstructured, refs []flux.ValuesRef) (string, bool) {
	var key strings.Builder
	fmt.Fprintf(&key, "helmreleases/%s/%s@%d", obj.GetNamespace(), obj.GetName(), obj.GetGeneration())
	for _, r := range refs {
		gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
		if r.Kind == "Secret" {
			gvr.Resource = "secrets"
		}
		w := a.list(ListKey{GVR: gvr, Namespace: obj.GetNamespace()})
		if !w.Synced() || w.Err() != nil {
			return "", false
		}
		rv := ""
		if cached, ok := w.Object(obj.GetNamespace(), r.Name); ok {
			if acc, err := meta.Accessor(cached); err == nil {
				rv = acc.GetResourceVersion()
			}
		}
		fmt.Fprintf(&key, ";%s@%s", r, rv)
	}
	return key.String(), true
}

// valuesChange reads r, a ConfigMap or Secret the HelmRelease obj takes values from, that the
// tree's inventories of owners list (none: not listed): found when Flux applied it, with when
// it last did; forbidden says why it cannot be compared, reading that its list is on its way.
// One no inventory lists is Flux's when it carries a Flux object's owner labels; when its list
// may not be read, nothing says it is, and it is left out without a word.
func (a *assessor) valuesChange(e *Assessment, gate *flux.Gate, obj *unstructured.Unstructured, r flux.ValuesRef, owners []string) (
	change flux.ValuesChange, found bool, forbidden string, reading bool) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	if r.Kind == "Secret" {
		gvr.Resource = "secrets"
	}
	key := ListKey{GVR: gvr, Namespace: obj.GetNamespace()}
	w := a.list(key)
	ready, forbidden := a.optionalWatchReady(e, w, gvr.Resource+namespaceSuffix(obj.GetNamespace()))
	switch {
	case forbidden != "" && len(owners) == 0:
		return change, false, "", false
	case forbidden != "":
		return change, false, forbidden, false
	case !ready:
		return change, false, "", true
	}
	cached, ok := w.Object(obj.GetNamespace(), r.Name)
	var acc metav1.Object
	if ok {
		acc, _ = meta.Accessor(cached)
	}
	if len(owners) == 0 {
		// (Judged only once its labels say Flux applied it: nothing else of it is compared.)
		owner, isFlux := flux.AppliedBy(labelsOf(acc))
		if !isFlux {
			return change, false, "", false
		}
		a.consistent(key, w, gate.Object.ID)
		owners = []string{owner.ID()}
	} else {
		a.consistent(key, w, gate.Object.ID)
		for _, ownerID := range owners {
			a.consistent(key, w, ownerID)
		}
	}
	if acc == nil {
		return change, false, "", false // the inventory's own check says it is missing
	}
	var last time.Time
	for _, ownerID := range owners {
		if at, ok := flux.AppliedAt(acc.GetManagedFields(), fieldManager(ownerID)); ok && at.After(last) {
			last = at
		}
	}
	if last.IsZero() {
		return change, false, "", false
	}
	return flux.ValuesChange{At: last, Watched: acc.GetLabels()[flux.WatchLabel] == flux.WatchLabelEnabled, ResourceVersion: acc.GetResourceVersion()}, true, "", false
}

// labelsOf is the labels of o, none when it is nil.
func labelsOf(o metav1.Object) map[string]string {
	if o == nil {
		return nil
	}
	return o.GetLabels()
}
