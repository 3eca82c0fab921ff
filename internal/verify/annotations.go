package verify

import (
	"encoding/json"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
)

// gitManagers are the field managers that write what a Git repository (or a chart) says.
var gitManagers = map[string]bool{"kustomize-controller": true, "helm-controller": true}

// vetAnnotations keeps a workload's app-status.io annotations only when Flux applied them
// (kustomize-controller's server-side apply, or helm-controller, owns the field in
// metadata.managedFields): they are settings a team writes in Git. One added in the cluster
// (kubectl annotate, a mutating policy, an operator) survives Flux's reconciliations, and
// would turn a verdict green by accident. It is dropped, and its key returned, sorted, for the
// object's facts (assess.ObjectFacts.NotFromGit, which its message names); so are they all
// when the object has no managedFields (they can be stripped). Field manager names are the
// client's word: this guards against accidents, not against someone who may patch the
// workload, who can change what runs anyway.
func vetAnnotations(acc metav1.Object) (dropped []string) {
	annotations := acc.GetAnnotations()
	var ours []string
	for k := range annotations {
		if strings.HasPrefix(k, classify.AnnotationPrefix) {
			ours = append(ours, k)
		}
	}
	if len(ours) > 0 {
		owned := fluxOwnedAnnotations(acc.GetManagedFields())
		for _, k := range ours {
			if !owned[k] {
				dropped = append(dropped, k)
				delete(annotations, k)
			}
		}
	}
	if len(dropped) > 0 {
		sort.Strings(dropped)
		acc.SetAnnotations(annotations)
	}
	return dropped
}

// fluxOwnedAnnotations are the annotation keys a Flux controller owns in managedFields.
func fluxOwnedAnnotations(fields []metav1.ManagedFieldsEntry) map[string]bool {
	owned := map[string]bool{}
	for _, f := range fields {
		if !gitManagers[f.Manager] || f.Subresource != "" || f.FieldsV1 == nil ||
			(f.Manager == "kustomize-controller" && f.Operation != metav1.ManagedFieldsOperationApply) {
			continue
		}
		var set struct {
			Metadata struct {
				Annotations map[string]json.RawMessage `json:"f:annotations"`
			} `json:"f:metadata"`
		}
		if json.Unmarshal(f.FieldsV1.GetRawBytes(), &set) != nil {
			continue
		}
		for k := range set.Metadata.Annotations {
			owned[strings.TrimPrefix(k, "f:")] = true
		}
	}
	return owned
}

// kustomizeSkip reads whether kustomize-controller skips applying the object (flux.KustomizeSkip)
// before its managedFields are dropped: ssa: IfNotPresent counts only when kustomize-controller's
// apply owns it, the manifest's.
func kustomizeSkip(acc metav1.Object) flux.ApplySkip {
	return flux.KustomizeSkip(acc.GetLabels(), acc.GetAnnotations(), func(label bool) bool {
		return kustomizeApplied(acc.GetManagedFields(), label)
	})
}

// kustomizeApplied reports whether kustomize-controller's apply owns the label (label) or
// annotation kustomize.toolkit.fluxcd.io/ssa.
func kustomizeApplied(fields []metav1.ManagedFieldsEntry, label bool) bool {
	for _, f := range fields {
		if f.Manager != "kustomize-controller" || f.Operation != metav1.ManagedFieldsOperationApply || f.Subresource != "" || f.FieldsV1 == nil {
			continue
		}
		var set struct {
			Metadata struct {
				Labels      map[string]json.RawMessage `json:"f:labels"`
				Annotations map[string]json.RawMessage `json:"f:annotations"`
			} `json:"f:metadata"`
		}
		if json.Unmarshal(f.FieldsV1.GetRawBytes(), &set) != nil {
			continue
		}
		owned := set.Metadata.Annotations
		if label {
			owned = set.Metadata.Labels
		}
		if _, ok := owned["f:kustomize.toolkit.fluxcd.io/ssa"]; ok {
			return true
		}
	}
	return false
}
