package flux

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/result"
)

// MayStillCreate is the rule a requested Flux object that does not exist waits by: another
// Flux object of the cluster, obj (a Kustomization or a ResourceSet), may still create it
// while its controller has not finished with what it is to apply. It returns what obj is
// doing then, said for a person, and "" when obj has applied all it will apply without a
// change (its source's newest revision, its current generation) or has stopped. src is obj's
// source as source-controller records it now (ReadSource of SourceOf), nil when it could not
// be read.
//
// A parent Kustomization applies the child's manifest; kustomize-controller v1.9.5
// (internal/controller/kustomization_controller.go) tells where it stands:
//   - Reconciling=True with reason Progressing ("Fetching manifests for revision …", set
//     before it fetches, builds and applies; Ready Unknown, reason Progressing, beside it):
//     at work; a failed attempt leaves Reconciling with reason ProgressingWithRetry
//     (finalizeStatus), which is its answer for that revision;
//   - Ready=False, reason DependencyNotReady: it waits for spec.dependsOn before it applies
//     anything (checkDependencies, retried every 30s);
//   - Ready=False, reason ArtifactFailed, with the words of a retry (artifactRetriedWords:
//     "Source artifact not found, retrying in …", "unable to get source '…'", a download
//     that failed): its source has no artifact it could fetch yet;
//   - Ready=False, reason ReconciliationFailed, with the words of a failure the same rollout
//     may remove (applyWording's retriedWords: `no matches for kind` while a CRD installs,
//     `namespaces "x" not found` while it is created, a webhook or the API server not
//     answering): fluxcd/pkg/ssa v0.76.2 (manager_apply.go ApplyAll) aborts the whole batch
//     when one dry-run fails, so nothing of it was created, and kustomize-controller tries
//     again at spec.retryInterval (else interval); the next attempt may create it
//     (RetriedFailure times that retry);
//   - Ready=False, reason BuildFailed, on a postBuild substitution that lacks a ConfigMap,
//     a Secret or a variable (buildRetriedWords): nothing was applied, and the next attempt
//     at spec.retryInterval may build once it exists (RetriedFailure times it; its words
//     name no namespace or CRD);
//   - no Ready condition, or Ready=Unknown: never reconciled, or at work;
//   - a spec not reconciled yet (status.observedGeneration below metadata.generation, Ready
//     not False): the controller reconciles a new generation at once;
//   - its source's artifact is a revision it has not attempted (status.lastAttemptedRevision):
//     source-controller's new artifact queues it (requestsForRevisionChangeOf), and a busy
//     controller may take minutes to start it.
//
// A Kustomization or ResourceSet being deleted only prunes. A suspended or Stalled
// Kustomization, or one whose attempt of its source's newest revision
// failed (Ready=False for any other reason), will not apply more without a change: the
// missing object is then Flux's answer. A ResourceSet (flux-operator v0.59.0) generates its
// objects the same way: at work (Ready missing or Unknown), waiting for its dependencies, or
// not reconciled at its generation yet (its Ready condition's observedGeneration); disabled
// (annotation fluxcd.controlplane.io/reconcile: disabled), Stalled or failed, it is done.
func MayStillCreate(kind Kind, obj *unstructured.Unstructured, src *Source) string {
	v := readView(kind, obj)
	if obj.GetDeletionTimestamp() != nil || v.suspended || v.cond(meta.StalledCondition).status == string(metav1.ConditionTrue) {
		return ""
	}
	ready, rc := v.cond(meta.ReadyCondition), v.cond(meta.ReconcilingCondition)
	switch {
	case ready.status == "":
		return "has not reconciled yet"
	case ready.status == string(metav1.ConditionFalse) && ready.reason == meta.DependencyNotReadyReason:
		return "waits for its dependencies (spec.dependsOn)"
	case kind == KindResourceSet && ready.reason == operatorDisabledReason:
		return ""
	case ready.status == string(metav1.ConditionUnknown),
		kind == KindKustomization && rc.status == string(metav1.ConditionTrue) && rc.reason == meta.ProgressingReason:
		if v.reconcilingRevision != "" {
			return "is applying " + ShortRevision(v.reconcilingRevision)
		}
		return "is reconciling"
	case kind == KindKustomization && ready.status == string(metav1.ConditionFalse) && ready.reason == meta.ArtifactFailedReason &&
		artifactRetriedWords.MatchString(ready.message):
		return "waits for its source's artifact"
	case ready.status == string(metav1.ConditionFalse) && retriedApply(kind, v, ready) && !kubeConfigSecretMissingWords.MatchString(ready.message):
		// (A remote Kustomization that waits for its kubeconfig Secret applies to another
		// cluster once it comes.)
		what := "an apply"
		if ready.reason == meta.BuildFailedReason {
			what = "a build"
		}
		return "retries " + what + " that failed on what may still come (" + ready.message + ")"
	case ready.status == string(metav1.ConditionFalse):
		return ""
	case v.observedGeneration < v.generation:
		return fmt.Sprintf("has not reconciled generation %d yet", v.generation)
	case kind == KindKustomization && src != nil && src.Revision != "" && !sameRecorded(src.Revision, v.lastAttempted):
		return fmt.Sprintf("has not applied %s of %s yet", ShortRevision(src.Revision), src.Ref.ID())
	}
	return ""
}

// retriedApply reports whether ready, a Ready=False condition of a Kustomization or a
// ResourceSet, is a failure to apply that its controller retries and that may pass by itself:
// the words the gates read (kustomizationWording, resourceSetGate) say so.
func retriedApply(kind Kind, v *view, ready condition) bool {
	switch kind {
	case KindKustomization:
		return (ready.reason == meta.ReconciliationFailedReason || ready.reason == meta.BuildFailedReason) && retriedKustomization(v, ready)
	case KindResourceSet:
		return ready.reason == meta.ReconciliationFailedReason && !resourceSetHealthWords.MatchString(ready.message) &&
			applyWording(ready.message) == retriedWords
	}
	return false
}

// RetriedApply is what a Kustomization's or ResourceSet's apply that failed on what may still
// come (MayStillCreate's retried apply) says of itself.
type RetriedApply struct {
	// FailedAt is when the failure was written: the end of the latest attempt (each starts by
	// marking Ready Unknown, so the failure's lastTransitionTime moves with every attempt).
	FailedAt time.Time
	// AttemptStarted is when the latest attempt began, at the latest: its status.history
	// entry's end less its duration, less a second (condition times are cut to the second);
	// FailedAt less a minute when the history does not record the attempt.
	AttemptStarted time.Time
	// FailingSince is the end of the first attempt that failed so on the same build and
	// revision: the status.history entry kustomize-controller v1.9.5 and flux-operator v0.59.0
	// upsert per build digest and result (fluxcd/pkg/apis/meta History.Upsert keeps its
	// firstReconciled). It may be older than the latest streak (the same build failed, passed,
	// then failed again); it is zero when the history does not record the latest attempt.
	FailingSince time.Time
	// Every is how soon the controller tries again: a Kustomization's spec.retryInterval,
	// else spec.interval; for a ResourceSet, controller-runtime's back-off after as many
	// failures as the history counts (750ms doubling, at most 15m: fluxcd/pkg/runtime's
	// rate limiter), and the attempt's own timeout. Zero when unknown.
	Every time.Duration
	// Namespaces and Groups are what the failure's words name as missing: `namespaces "x"
	// not found` (the namespace x), `no matches for kind "K" in version "g/v"` (or `in
	// versions [...]`, `in group "g"`: a CRD of group g). Both are empty when the words name
	// neither (a webhook or the API server not answering), and for an object that applies
	// to another cluster (spec.kubeConfig), whose namespaces and CRDs are not this cluster's.
	Namespaces, Groups []string
}

// NextAttempt is the latest moment the controller has surely tried again after the failure:
// its retry interval, a tenth and 30s after it (a busy controller starts late); zero when the
// interval is unknown.
func (r RetriedApply) NextAttempt() time.Time {
	if r.Every <= 0 || r.FailedAt.IsZero() {
		return time.Time{}
	}
	return r.FailedAt.Add(r.Every + r.Every/10 + 30*time.Second)
}

// The words of a retried apply that name what it lacks (kustomize-controller v1.9.5 and
// flux-operator write the API server's error after the object: "ConfigMap/apps/web
// not found: namespaces \"apps\" not found", "ServiceMonitor/apps/web dry-run failed: no
// matches for kind \"ServiceMonitor\" in version \"monitoring.coreos.com/v1\""; apimachinery's
// NoKindMatchError says `in group "g"` with no version searched, `in versions ["g/v1"
// "g/v2"]` with several).
var (
	lackedNamespaceWords = regexp.MustCompile(`namespaces "([^"]+)" not found`)
	lackedKindWords      = regexp.MustCompile(`no matches for kind "[^"]+" in (?:group "([^"]+)"|versions? \[?"([^"/]+)/)`)
)

// Controller-runtime's back-off between failed attempts, as Flux's controllers set it
// (fluxcd/pkg/runtime v0.91.0 controller/rate_limiter.go: --min-retry-delay 750ms,
// --max-retry-delay 15m).
const (
	minRetryDelay = 750 * time.Millisecond
	maxRetryDelay = 15 * time.Minute
)

// RetriedFailure says, of a Kustomization or ResourceSet whose apply failed on what may still
// come (MayStillCreate's retried apply), when that failure was written, since when it fails
// so, how soon its controller tries again and what it lacks; ok is false for any other state.
// The engine bounds by it how long the missing objects such an apply would create may be
// waited for.
func RetriedFailure(kind Kind, obj *unstructured.Unstructured) (r RetriedApply, ok bool) {
	v := readView(kind, obj)
	ready := v.cond(meta.ReadyCondition)
	if ready.status != string(metav1.ConditionFalse) || !retriedApply(kind, v, ready) {
		return RetriedApply{}, false
	}
	r.FailedAt = ready.since
	r.AttemptStarted = r.FailedAt.Add(-time.Minute)
	failures := 0
	if latest, ok := latestAttempt(kind, v, r.FailedAt); ok {
		r.FailingSince, _ = time.Parse(time.RFC3339, str(latest, "firstReconciled"))
		if d, err := time.ParseDuration(str(latest, "lastReconciledDuration")); err == nil && d >= 0 {
			r.AttemptStarted = r.FailedAt.Add(-d - time.Second)
		}
		n, _, _ := unstructured.NestedInt64(latest, "totalReconciliations")
		failures = int(min(n, 64))
	}
	if kind == KindResourceSet {
		r.Every = resourceSetRetry(obj) + backoffAfter(failures)
	} else {
		r.Every = retryInterval(obj, ready.message)
	}
	if v.remote {
		return r, true
	}
	for _, m := range lackedNamespaceWords.FindAllStringSubmatch(ready.message, -1) {
		r.Namespaces = appendNew(r.Namespaces, m[1])
	}
	for _, m := range lackedKindWords.FindAllStringSubmatch(ready.message, -1) {
		r.Groups = appendNew(r.Groups, m[1]+m[2])
	}
	return r, true
}

// latestAttempt is the status.history entry of the attempt that wrote the failure at
// failedAt: the newest entry, a failure, ended within two seconds of it, and (a
// Kustomization's) of the revision it last attempted. Another entry would be another attempt's
// (kustomize-controller writes no history for a failure before the build: a kube client that
// cannot be made).
func latestAttempt(kind Kind, v *view, failedAt time.Time) (map[string]any, bool) {
	history := nestedMaps(v.obj.Object, "status", "history")
	if len(history) == 0 || str(history[0], "lastReconciledStatus") != meta.ReconciliationFailedReason {
		return nil, false
	}
	end, err := time.Parse(time.RFC3339, str(history[0], "lastReconciled"))
	if err != nil || end.Sub(failedAt).Abs() > 2*time.Second {
		return nil, false
	}
	if kind == KindKustomization {
		revision, _, _ := unstructured.NestedString(history[0], "metadata", "revision")
		if revision != v.lastAttempted {
			return nil, false
		}
	}
	return history[0], true
}

// HelmAttemptBy is when helm-controller makes its next attempt at the latest, for a HelmRelease
// failure it retries on controller-runtime's back-off (no strategy's interval: values it
// cannot compose, an action that failed and is requeued, one Helm refused before it stored a
// release), when a change at changedAt may make the next attempt pass. failedAt is Ready's
// lastTransitionTime. A ValuesError keeps Ready False across its attempts, so failedAt is the
// first failure: the delay doubles from 750ms, so the wait at changedAt is at most the time
// failed since, and at most 15m. A release action marks Ready Unknown at each attempt
// (reconcile/atomic_release.go, v1.6.4), so failedAt is the end of the latest, and the next
// comes within 15m of it. --max-retry-delay other than its default, 15m, is not known here.
func HelmAttemptBy(code result.Code, failedAt, changedAt time.Time) time.Time {
	if code == result.CodeFluxValuesFailed {
		return changedAt.Add(min(maxRetryDelay, changedAt.Sub(failedAt)+time.Second))
	}
	return failedAt.Add(maxRetryDelay)
}

// backoffAfter is controller-runtime's delay before the next attempt after failures failed
// attempts in a row (minRetryDelay doubling, at most maxRetryDelay); maxRetryDelay when the
// count is unknown (zero).
func backoffAfter(failures int) time.Duration {
	if failures <= 0 {
		return maxRetryDelay
	}
	d := minRetryDelay
	for range failures - 1 {
		if d >= maxRetryDelay {
			break
		}
		d *= 2
	}
	return min(d, maxRetryDelay)
}

// HelmReleaseAtWork reports whether helm-controller is at work on obj, a HelmRelease: not
// suspended, being deleted or Stalled, and Ready missing or Unknown, Reconciling=True with
// reason Progressing, or a spec it has not reconciled yet. Such a release may create
// namespaces (install.createNamespace, a chart's own) and CRDs that a Kustomization's or a
// ResourceSet's retried apply lacks.
func HelmReleaseAtWork(obj *unstructured.Unstructured) bool {
	v := readView(KindHelmRelease, obj)
	if obj.GetDeletionTimestamp() != nil || v.suspended || v.cond(meta.StalledCondition).status == string(metav1.ConditionTrue) {
		return false
	}
	ready, rc := v.cond(meta.ReadyCondition), v.cond(meta.ReconcilingCondition)
	return ready.status == "" || ready.status == string(metav1.ConditionUnknown) ||
		rc.status == string(metav1.ConditionTrue) && rc.reason == meta.ProgressingReason ||
		v.observedGeneration < v.generation
}

// InputProviderInterval is how often a ResourceSetInputProvider exports its inputs when it
// says nothing else: flux-operator v0.59.0 (api/v1 ResourceSetInputProvider.GetInterval,
// without its fluxcd.controlplane.io/reconcileEvery annotation).
const InputProviderInterval = 10 * time.Minute

// ProvidersMayGenerate reports whether obj, a ResourceSet, takes inputs from providers
// (spec.inputsFrom) and may generate an object of kind in namespace from inputs they have not
// exported yet: a pull request opened a minute ago becomes an input at the provider's next
// poll (InputProviderInterval), and flux-operator renders the ResourceSet again when the
// inputs change (resourceset_manager.go, exportedInputsChangePredicate). It may when one of
// spec.resources has ref's kind, namespace (or none) and name, each or any of them templated,
// or spec.resourcesTemplate names that kind (or a templated one); a ResourceSet being deleted,
// or disabled (fluxcd.controlplane.io/reconcile: disabled), will not.
func ProvidersMayGenerate(obj *unstructured.Unstructured, ref Ref) bool {
	inputsFrom, _, _ := NestedSlice(obj.Object, "spec", "inputsFrom")
	if len(inputsFrom) == 0 || obj.GetDeletionTimestamp() != nil || strings.EqualFold(obj.GetAnnotations()[operatorReconcileAnnotation], "disabled") {
		return false
	}
	templated := func(s string) bool { return strings.Contains(s, "<<") }
	for _, r := range nestedMaps(obj.Object, "spec", "resources") {
		k := str(r, "kind")
		ns, _, _ := unstructured.NestedString(r, "metadata", "namespace")
		name, _, _ := unstructured.NestedString(r, "metadata", "name")
		if (k == string(ref.Kind) || templated(k)) && (ns == "" || ns == ref.Namespace || templated(ns)) && (name == ref.Name || templated(name)) {
			return true
		}
	}
	template, _, _ := unstructured.NestedString(obj.Object, "spec", "resourcesTemplate")
	for _, line := range strings.Split(template, "\n") {
		if k, ok := strings.CutPrefix(strings.TrimSpace(line), "kind:"); ok {
			if k = strings.Trim(strings.TrimSpace(k), `"'`); k == string(ref.Kind) || templated(k) || strings.Contains(k, "{{") {
				return true
			}
		}
	}
	return false
}

// appendNew appends s to list unless it holds it.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
