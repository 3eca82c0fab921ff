package flux

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// KustomizeController is the field manager kustomize-controller applies objects with.
const KustomizeController = "kustomize-controller"

// ValuesRef is a ConfigMap or Secret a HelmRelease composes its values from
// (spec.valuesFrom), in the HelmRelease's namespace.
type ValuesRef struct {
	Kind string // ConfigMap or Secret
	Name string
}

func (r ValuesRef) String() string { return r.Kind + "/" + r.Name }

// ValuesFrom returns a HelmRelease's spec.valuesFrom, each object once, sorted.
func ValuesFrom(obj *unstructured.Unstructured) []ValuesRef {
	items, _, _ := NestedSlice(obj.Object, "spec", "valuesFrom")
	seen := map[ValuesRef]bool{}
	var refs []ValuesRef
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		kind, _ := m["kind"].(string)
		name, _ := m["name"].(string)
		r := ValuesRef{Kind: kind, Name: name}
		if (kind != "ConfigMap" && kind != "Secret") || name == "" || seen[r] {
			continue
		}
		seen[r] = true
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].String() < refs[j].String() })
	return refs
}

// AppliedAt returns when a field manager last changed an object with server-side apply: the
// time of its Apply entry in metadata.managedFields, which the API server moves only when the
// manager's fields or their values change, not on an apply that changes nothing.
func AppliedAt(fields []metav1.ManagedFieldsEntry, manager string) (time.Time, bool) {
	var at time.Time
	for _, f := range fields {
		if f.Manager == manager && f.Operation == metav1.ManagedFieldsOperationApply && f.Time != nil && f.Time.After(at) {
			at = f.Time.Time
		}
	}
	return at, !at.IsZero()
}

// AppliedBy is the Flux object whose owner labels an object carries: kustomize-controller
// (v1.9.5 reconcile: ssa.Owner{Group: kustomize.toolkit.fluxcd.io}, SetOwnerLabels) and
// flux-operator (v0.59.0 ResourceSet apply: resourceset.fluxcd.controlplane.io) label every
// object they apply GROUP/name and GROUP/namespace with their own. false when it carries
// neither pair.
func AppliedBy(labels map[string]string) (Ref, bool) {
	for _, owner := range []struct {
		kind  Kind
		group string
	}{{KindKustomization, "kustomize.toolkit.fluxcd.io"}, {KindResourceSet, "resourceset.fluxcd.controlplane.io"}} {
		name, namespace := labels[owner.group+"/name"], labels[owner.group+"/namespace"]
		if name != "" && namespace != "" {
			return Ref{Kind: owner.kind, Namespace: namespace, Name: name}, true
		}
	}
	return Ref{}, false
}

// ValuesChange is when Flux last applied a new content to a ConfigMap or Secret a
// HelmRelease takes values from, and whether it carries the label that makes helm-controller
// reconcile on its change.
type ValuesChange struct {
	At      time.Time
	Watched bool
	// ResourceVersion is the object's: within the second of the evidence, a release whose
	// status was last written before the change (a lower resourceVersion of the same etcd)
	// cannot have composed it.
	ResourceVersion string
}

// WatchLabel on a ConfigMap or Secret makes helm-controller reconcile the HelmReleases that
// take values from it as soon as it changes (its default --watch-configs-label-selector).
// Label selectors are case-sensitive: the value is exactly WatchLabelEnabled.
const (
	WatchLabel        = "reconcile.fluxcd.io/watch"
	WatchLabelEnabled = "Enabled"
)

// composeMargin is how long helm-controller may take to start a reconcile it was asked for.
const composeMargin = 30 * time.Second

// ReconcileStarted is when helm-controller started the reconcile of a HelmRelease it is in:
// it marks Reconciling=True ("Fulfilling prerequisites") before it composes the values, and
// removes the condition when it is done. Zero outside a reconcile.
func ReconcileStarted(obj *unstructured.Unstructured) (time.Time, bool) {
	for _, m := range nestedMaps(obj.Object, "status", "conditions") {
		if str(m, "type") == "Reconciling" && str(m, "status") == "True" {
			t, err := time.Parse(time.RFC3339, str(m, "lastTransitionTime"))
			return t, err == nil
		}
	}
	return time.Time{}, false
}

// ValuesEvidence is what says helm-controller composed a HelmRelease's values since a moment.
type ValuesEvidence struct {
	// ReconcileStarted is the latest start of a reconcile the run saw (ReconcileStarted of
	// any state of the object, even one replaced before it was read).
	ReconcileStarted time.Time
	// WatchingSince is when the run started to watch the HelmRelease: a reconcile before it
	// may have been missed.
	WatchingSince time.Time
	// Now is the time of the assessment.
	Now time.Time
}

// StaleValues tells whether a HelmRelease that is Ready on its chart may still run values
// older than the ConfigMaps and Secrets it takes them from. helm-controller composes
// spec.valuesFrom at every reconcile, which a change to such an object triggers at once only
// when it carries WatchLabel (and helm-controller watches them); else at spec.interval. When
// Flux applied a new content to one (changed) after helm-controller last composed the values,
// the release may hold the old ones: StaleValues returns the message to wait with.
//
// helm-controller composed them since a change when it deployed the release after it, when it
// finished a reconcile that started after it (seen by the run: a reconcile that finds the
// values unchanged leaves nothing else; one under way proves nothing yet), or when it handled a reconcile request made after it (a time token,
// as flux reconcile writes, not in the future). A change within the second of that evidence
// counts as composed (the times have one-second resolution). Only when the run may have missed
// the reconcile (it started watching after the change) does a bound replace the evidence:
// composeMargin after the change for a watched object, spec.interval with helm-controller's
// jitter and that margin for another; recheck is when that bound ends.
func StaleValues(obj *unstructured.Unstructured, changed map[ValuesRef]ValuesChange, ev ValuesEvidence) (msg string, stale bool, recheck time.Time) {
	deployed, ok := lastDeployed(obj)
	if !ok {
		return "", false, time.Time{}
	}
	composed, since := deployed, "the release was last deployed ("+deployed.UTC().Format(time.RFC3339)+")"
	if _, reconciling := ReconcileStarted(obj); reconciling {
		// A reconcile under way has composed the values, or is about to, but the release may
		// not hold them yet (Ready stays True until Helm's action starts): only a finished
		// one tells.
		ev.ReconcileStarted = time.Time{}
	}
	if ev.ReconcileStarted.After(composed) {
		composed, since = ev.ReconcileStarted, "helm-controller last started to reconcile it ("+ev.ReconcileStarted.UTC().Format(time.RFC3339)+")"
	}
	if handled, ok := lastHandledReconcile(obj); ok && handled.After(composed) && !handled.After(ev.Now.Add(time.Minute)) {
		composed, since = handled, "the reconcile request it last handled ("+handled.UTC().Format(time.RFC3339)+")"
	}
	interval, hasInterval := reconcileInterval(obj)
	var newer []string
	latest := time.Time{}
	for _, r := range sortedRefs(changed) {
		c := changed[r]
		switch {
		case c.At.Truncate(time.Second).Before(composed.Truncate(time.Second)):
			continue
		case !c.At.Truncate(time.Second).After(composed.Truncate(time.Second)) && !writtenBefore(obj.GetResourceVersion(), c.ResourceVersion):
			// In the second of the evidence: taken as composed (an apply of the values and
			// the release together), unless the release's status was last written before
			// the change.
			continue
		}
		if ev.WatchingSince.After(c.At) {
			// The run may have missed the reconcile that composed it: bounded.
			settled := c.At.Add(composeMargin)
			switch {
			case c.Watched:
			case hasInterval:
				settled = settled.Add(interval + interval/10)
			default:
				settled = time.Time{}
			}
			if !settled.IsZero() && !ev.Now.Before(settled) {
				continue
			}
			if !settled.IsZero() && (recheck.IsZero() || settled.Before(recheck)) {
				recheck = settled
			}
		}
		newer = append(newer, r.String())
		if c.At.After(latest) {
			latest = c.At
		}
	}
	if len(newer) == 0 {
		return "", false, time.Time{}
	}
	return fmt.Sprintf("values from %s changed at %s, after %s: helm-controller applies them when it next reconciles "+
		"(spec.interval, or at once with the label %s: %s on them, or flux reconcile helmrelease)",
		strings.Join(newer, ", "), latest.UTC().Format(time.RFC3339), since, WatchLabel, WatchLabelEnabled), true, recheck
}

// AttemptedConfigDigest is a HelmRelease's status.lastAttemptedConfigDigest: the digest of
// the values helm-controller composed at its last reconcile that went as far as loading the
// chart (v1.6.4 reconcileRelease: chartutil.DigestValues(digest.Canonical, values), SHA-256,
// set before its Helm action). Older controllers recorded a SHA-1 in
// lastAttemptedValuesChecksum instead, which v1.6.4 clears when it sets the digest: false
// when the status has no digest.
func AttemptedConfigDigest(obj *unstructured.Unstructured) (string, bool) {
	d, _, _ := unstructured.NestedString(obj.Object, "status", "lastAttemptedConfigDigest")
	return d, d != ""
}

// reconcileInterval is a HelmRelease's spec.interval.
func reconcileInterval(obj *unstructured.Unstructured) (time.Duration, bool) {
	s, _, _ := unstructured.NestedString(obj.Object, "spec", "interval")
	d, err := time.ParseDuration(s)
	return d, err == nil && d > 0
}

func sortedRefs(m map[ValuesRef]ValuesChange) []ValuesRef {
	refs := make([]ValuesRef, 0, len(m))
	for r := range m {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].String() < refs[j].String() })
	return refs
}

// writtenBefore reports whether resourceVersion a was written before b, when both are the
// decimal revisions of one etcd (kube-apiserver's); false when either is not.
func writtenBefore(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x < y
}

// lastDeployed is when the newest release in status.history was deployed.
func lastDeployed(obj *unstructured.Unstructured) (time.Time, bool) {
	history, _, _ := NestedSlice(obj.Object, "status", "history")
	if len(history) == 0 {
		return time.Time{}, false
	}
	latest, ok := history[0].(map[string]any)
	if !ok {
		return time.Time{}, false
	}
	s, _ := latest["lastDeployed"].(string)
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

// lastHandledReconcile is the reconcile request helm-controller handled last, when its token
// is a time (flux reconcile writes one).
func lastHandledReconcile(obj *unstructured.Unstructured) (time.Time, bool) {
	s, _, _ := unstructured.NestedString(obj.Object, "status", "lastHandledReconcileAt")
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}
