package assess

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
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

// settleValues holds back a nested HelmRelease that is Current on its chart while a ConfigMap
// or Secret it takes values from, applied by the tree (a Kustomization or a ResourceSet) (listed in an inventory the run read),
// changed after helm-controller last composed the values (flux.StaleValues). Objects of its
// valuesFrom that the tree does not apply (made by an operator, or by hand) are not this
// rollout's, and are not compared. Their list is judged (consistency): read no earlier than
// the HelmRelease's status and than the status of each Flux object whose inventory lists
// them, or a change made before those would go unseen, with or without the workloads.
func (a *assessor) settleValues(e *Assessment, gate *flux.Gate, obj *unstructured.Unstructured, parent *flux.Gate, now time.Time) (note string) {
	if gate.Verdict != result.VerdictCurrent || parent == nil ||
		parent.Object.Kind != string(flux.KindKustomization) && parent.Object.Kind != string(flux.KindResourceSet) {
		return ""
	}
	refs := flux.ValuesFrom(obj)
	if len(refs) == 0 {
		return ""
	}
	// Applied by the tree: listed by any inventory of the tree (treeInventories) (a sibling "config"
	// Kustomization's too), not only the owner's.
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
		owners := listed[r]
		if len(owners) == 0 {
			continue
		}
		gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
		if r.Kind == "Secret" {
			gvr.Resource = "secrets"
		}
		key := ListKey{GVR: gvr, Namespace: obj.GetNamespace()}
		w := a.list(key)
		ready, forbidden := a.optionalWatchReady(e, w, gvr.Resource+namespaceSuffix(obj.GetNamespace()))
		switch {
		case forbidden != "":
			note = joinMessage(note, "values from "+r.String()+" not compared with the release: "+forbidden)
			continue
		case !ready:
			override(gate, result.VerdictInProgress, "", "ValuesNotRead", "reading "+r.String()+", which its values come from")
			gate.Applied = false
			return note
		}
		a.consistent(key, w, gate.Object.ID)
		for _, ownerID := range owners {
			a.consistent(key, w, ownerID)
		}
		cached, ok := w.Object(obj.GetNamespace(), r.Name)
		if !ok {
			continue // the inventory's own check says it is missing
		}
		acc, err := meta.Accessor(cached)
		if err != nil {
			continue
		}
		var last time.Time
		for _, ownerID := range owners {
			if at, ok := flux.AppliedAt(acc.GetManagedFields(), fieldManager(ownerID)); ok && at.After(last) {
				last = at
			}
		}
		if !last.IsZero() {
			changed[r] = flux.ValuesChange{At: last, Watched: acc.GetLabels()[flux.WatchLabel] == flux.WatchLabelEnabled, ResourceVersion: acc.GetResourceVersion()}
		}
	}
	if len(changed) == 0 {
		return note
	}
	hr := a.list(ListKey{GVR: flux.KindHelmRelease.GroupVersionResource(), Namespace: obj.GetNamespace()})
	ev := flux.ValuesEvidence{ReconcileStarted: hr.Noted(obj.GetNamespace(), obj.GetName()), WatchingSince: hr.WaitingSince(), Now: now}
	if msg, stale, recheck := flux.StaleValues(obj, changed, ev); stale {
		override(gate, result.VerdictInProgress, "", "ValuesNotApplied", msg)
		gate.Applied = false
		e.recheckAt(recheck)
	}
	return note
}
