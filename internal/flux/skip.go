package flux

import "strings"

// ApplySkip is why kustomize-controller does not apply an object of its inventory: its apply
// (v1.9.5 kustomization_controller.go apply, fluxcd/pkg/ssa v0.76.2 shouldSkipApply) skips an
// object whose labels or annotations, in Git or in the cluster, say
// kustomize.toolkit.fluxcd.io/reconcile: disabled or kustomize.toolkit.fluxcd.io/ssa: Ignore,
// and one that exists when its manifest says kustomize.toolkit.fluxcd.io/ssa: IfNotPresent.
// A skipped object stays in the inventory, created or not (inventory.AddChangeSet), and
// spec.wait leaves it out (checkHealth drops ssa.SkippedAction). Zero: not skipped.
type ApplySkip uint8

// The reasons kustomize-controller skips an object, as ssa's selectors name them.
const (
	NotSkipped ApplySkip = iota
	SkipReconcileDisabled
	SkipSSAIgnore
	SkipSSAIfNotPresent
)

// The keys of kustomize-controller's selectors (kustomizev1.GroupVersion.Group + "/reconcile",
// "/ssa").
const (
	kustomizeReconcileKey = "kustomize.toolkit.fluxcd.io/reconcile"
	kustomizeSSAKey       = "kustomize.toolkit.fluxcd.io/ssa"
)

// String names the label or annotation, with its value as kustomize-controller spells it.
func (s ApplySkip) String() string {
	switch s {
	case SkipReconcileDisabled:
		return kustomizeReconcileKey + ": disabled"
	case SkipSSAIgnore:
		return kustomizeSSAKey + ": Ignore"
	case SkipSSAIfNotPresent:
		return kustomizeSSAKey + ": IfNotPresent"
	}
	return ""
}

// Paused reports whether s is an object-level suspension (reconcile: disabled, ssa: Ignore):
// the object does not get any revision while it says so. ssa: IfNotPresent is not one: it
// creates the object once, on purpose.
func (s ApplySkip) Paused() bool {
	return s == SkipReconcileDisabled || s == SkipSSAIgnore
}

// KustomizeSkip reads, from an object in the cluster, whether kustomize-controller skips it.
// Its selectors match a label or an annotation of that key whose value is the selector's,
// ignoring case (ssa utils.AnyInMetadata). reconcile: disabled and ssa: Ignore count wherever
// they were set; ssa: IfNotPresent only from the manifest, so only when
// appliedIfNotPresent(label) says kustomize-controller's apply wrote it (into the labels when
// label): set in the cluster, it does not stop the apply. An object that is in the cluster
// exists, which IfNotPresent needs.
func KustomizeSkip(labels, annotations map[string]string, appliedIfNotPresent func(label bool) bool) ApplySkip {
	has := func(key, value string) (inLabels, inAnnotations bool) {
		return strings.EqualFold(labels[key], value), strings.EqualFold(annotations[key], value)
	}
	if l, a := has(kustomizeReconcileKey, "disabled"); l || a {
		return SkipReconcileDisabled
	}
	if l, a := has(kustomizeSSAKey, "Ignore"); l || a {
		return SkipSSAIgnore
	}
	if l, a := has(kustomizeSSAKey, "IfNotPresent"); (l && appliedIfNotPresent(true)) || (a && appliedIfNotPresent(false)) {
		return SkipSSAIfNotPresent
	}
	return NotSkipped
}
