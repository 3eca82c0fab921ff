package flux

import (
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	case ready.status == string(metav1.ConditionFalse) && retriedApply(kind, ready):
		return "retries an apply that failed on what may still come (" + ready.message + ")"
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
func retriedApply(kind Kind, ready condition) bool {
	switch kind {
	case KindKustomization:
		return ready.reason == meta.ReconciliationFailedReason && retriedKustomization(ready)
	case KindResourceSet:
		return ready.reason == meta.ReconciliationFailedReason && !resourceSetHealthWords.MatchString(ready.message) &&
			applyWording(ready.message) == retriedWords
	}
	return false
}

// RetriedFailure says, of a Kustomization or ResourceSet whose apply failed on what may still
// come (MayStillCreate's retried apply), when that failure was written (the end of the latest
// attempt: each starts by marking Ready Unknown) and how soon its controller tries again; ok
// is false for any other state. The engine bounds by it how long the missing objects such an
// apply would create may be waited for.
func RetriedFailure(kind Kind, obj *unstructured.Unstructured) (failedAt time.Time, every time.Duration, ok bool) {
	v := readView(kind, obj)
	ready := v.cond(meta.ReadyCondition)
	if ready.status != string(metav1.ConditionFalse) || !retriedApply(kind, ready) {
		return time.Time{}, 0, false
	}
	if kind == KindResourceSet {
		return ready.since, resourceSetRetry(obj), true
	}
	return ready.since, retryInterval(obj, ready.message), true
}
