package flux

import (
	"fmt"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/result"
)

// kustomizationFailures maps the reasons kustomize-controller gives Ready=False when an attempt
// to apply a revision failed, as opposed to one still in progress, to their codes.
var kustomizationFailures = map[string]result.Code{
	meta.BuildFailedReason:          result.CodeFluxBuildFailed,
	meta.ArtifactFailedReason:       result.CodeFluxArtifactFailed,
	meta.HealthCheckFailedReason:    result.CodeFluxHealthCheckFailed,
	meta.ReconciliationFailedReason: result.CodeFluxReconciliationFailed,
	meta.PruneFailedReason:          result.CodeFluxPruneFailed,
}

const kustomizeController = "kustomize-controller"

// kustomizationWording says what a Ready=False failure's words say: for an artifact that
// cannot be fetched, a build whose postBuild substitution lacks a ConfigMap, a Secret or a
// variable (buildRetriedWords), or an apply that failed on something not there yet or not
// answering (retriedWords), for a path the revision lacks, manifests that do not build or
// requests the API server refuses (finalWords). The other reasons say it by themselves.
//
// A prune that failed (PruneFailed) is retried whatever its words, for its next attempt
// decides, and the two controller generations decide it differently. kustomize-controller
// v1.9.5 (kustomization_controller.go reconcile, 490 and 504-505; prune and pruneSurvivors)
// keeps the objects whose deletion was not confirmed in the inventory "so that the next
// reconcile retries", and fails alike at its retry when the API server refuses again (a
// forbidden delete). v1.7.3 (reconcile, 479 and 490) sets status.inventory to the new one
// before it prunes and keeps no survivors: its next attempt finds nothing stale, prunes
// nothing and ends Ready=True on the revision. So the run waits the retry grace and that
// retry (fluxcd/pkg/ssa v0.76.2 manager_delete.go writes "delete failed, errors: OBJ delete
// failed: ERROR", the API server's words; v0.61.0 alike).
func kustomizationWording(v *view, ready condition) wording {
	switch ready.reason {
	case meta.ArtifactFailedReason:
		return artifactWording(ready.message)
	case meta.ReconciliationFailedReason:
		if w, ok := kubeConfigWording(ready.message); ok {
			return w
		}
		return applyWording(ready.message)
	case meta.PruneFailedReason:
		return retriedWords
	case meta.BuildFailedReason:
		if strictVariableWords.MatchString(ready.message) && !v.substitutesFrom() {
			// Only spec.postBuild.substituteFrom may bring a variable later: without it, a
			// variable not set is the manifests' typo, and the next attempt fails alike.
			return finalWords
		}
		if buildRetriedWords.MatchString(ready.message) || v.decryptionSecretMissing(ready.message) {
			return retriedWords
		}
	}
	return finalWords
}

// decryptionSecretMissing reports whether a BuildFailed message is kustomize-controller's
// for a spec.decryption.secretRef Secret that does not exist (yet): v1.9.5's decryptor
// (ImportKeys) returns the API's NotFound bare, `secrets "NAME" not found` (`Secret "NAME" not
// found` from its cache), and the next attempt at spec.retryInterval builds once an operator
// (External Secrets, Sealed Secrets) or another Kustomization creates it. Only the Secret the
// spec names counts: the same words of another object are the manifests'.
func (v *view) decryptionSecretMissing(message string) bool {
	name, _, _ := unstructured.NestedString(v.obj.Object, "spec", "decryption", "secretRef", "name")
	if name == "" {
		return false
	}
	m := notFoundWords.FindStringSubmatch(message)
	return m != nil && m[1] == name
}

// retriedKustomization reports whether a Ready=False failure is one kustomize-controller
// retries and that may pass by itself.
func retriedKustomization(v *view, ready condition) bool {
	return kustomizationWording(v, ready) == retriedWords
}

// substitutesFrom reports whether a Kustomization substitutes variables from objects
// (spec.postBuild.substituteFrom), which may be created, or gain a key, after an attempt.
func (v *view) substitutesFrom() bool {
	from, _, _ := NestedSlice(v.obj.Object, "spec", "postBuild", "substituteFrom")
	return len(from) > 0
}

// mayBeOlderGeneration reports whether a Kustomization's failure condition c, carrying the
// current generation, may still be of an older one. kustomize-controller v1.9.5 and v1.7.3
// (internal/controller/kustomization_controller.go) write no field that says which generation
// an attempt that failed was of: it has no lastAttemptedGeneration; status.observedGeneration
// is written only when an attempt ends Ready=True (finalizeStatus; and with the Stalled of an
// invalid CEL expression); lastAttemptedRevision is the source's revision, the same for every
// generation; lastHandledReconcileAt answers a reconcile request only; status.history records
// applied manifests' checksums, not generations, and nothing of a build failure. Its
// conditions cannot tell either: fluxcd/pkg/runtime's patch helper (v0.110.3 and v0.91.0,
// patch.go patchStatusConditions) applies them to the object as the API server holds it at
// the write, and conditions.Set stamps each with that object's generation, so an attempt of
// generation 2 that ends after the spec moved to 3 writes a failure stamped 3; the Reconciling
// condition it leaves (ProgressingWithRetry) is stamped alike. So a failure stamped with the
// current generation G may be of an older one whenever G has never ended Ready
// (observedGeneration < G) and an older one exists (G > 1). The engine waits on it
// (Gate.MaybeOlderGeneration) until kustomize-controller has surely tried G: a later failure
// seen at G (attempts of one object run one after another, and each starts by marking Ready
// Unknown, so the end of the next failure moves), or, as the generation change requeues it at
// once (GenerationChangedPredicate, kustomization_manager.go), a short bound after the failure.
func (v *view) mayBeOlderGeneration(c condition) bool {
	return v.generation > 1 && v.observedGeneration < v.generation && c.observedGeneration == v.generation
}

// kustomizationGate applies the rules of a kustomize.toolkit.fluxcd.io/v1 Kustomization.
//
// kustomize-controller records status.lastAttemptedRevision once it has fetched a revision and
// status.lastAppliedRevision once that revision is applied and healthy; it updates
// status.observedGeneration only when it ends Ready=True. A failure counts only when it is
// about the expected revision (recorded as attempted, or named by the message; a failure of
// another one means the expected one has not been attempted yet) and about the current generation of the spec (the condition's own
// observedGeneration). Success counts only for the expected revision at the current generation.
func kustomizationGate(ref Ref, v *view, want Revision) decision {
	if v.suspended {
		return suspendedGate(ref)
	}
	if st := v.cond(meta.StalledCondition); st.status == string(metav1.ConditionTrue) {
		stalled := decision{verdict: result.VerdictFailed, code: result.CodeFluxStalled, reason: st.reason, message: "stalled: " + st.message}
		if v.olderGeneration(st) {
			return staleGeneration(v, st.observedGeneration, kustomizeController, stalled)
		}
		stalled.olderGeneration = v.mayBeOlderGeneration(st)
		return stalled
	}
	ready := v.cond(meta.ReadyCondition)
	if ready.status == string(metav1.ConditionFalse) {
		if code, ok := kustomizationFailures[ready.reason]; ok {
			failure := decision{verdict: result.VerdictFailed, code: code, reason: ready.reason, message: ready.message,
				retried: retriedKustomization(v, ready)}
			// The revision that failed is the one last attempted, or, for an artifact that
			// failed before kustomize-controller recorded it (a download or checksum failure,
			// a path the artifact lacks), the one its Reconciling condition names: it writes
			// "Fetching manifests for revision B" before it fetches, and lastAttemptedRevision
			// only once the path is found. A fetch of B that fails is never a failure of A.
			failedRevision, attempted := v.lastAttempted, v.attempted(want)
			if ready.reason == meta.ArtifactFailedReason && v.reconcilingUnrecognised {
				// Which revision failed, only the Reconciling words say.
				return decision{code: code, reason: ready.reason, message: joinSentences(ready.message, unrecognisedNote(kustomizeController, "v1.9.5"))}
			}
			if ready.reason == meta.ArtifactFailedReason && v.reconcilingRevision != "" && v.reconcilingRevision != v.lastAttempted {
				failedRevision, attempted = v.reconcilingRevision, want.IsZero() || want.Matches(v.withOrigin(v.reconcilingRevision)...)
			}
			if !attempted {
				return staleFailure(want, failedRevision, failure)
			}
			if failedRevision != "" {
				failure.message = fmt.Sprintf("revision %s failed: %s", ShortRevision(failedRevision), ready.message)
			}
			if v.olderGeneration(ready) {
				return staleGeneration(v, ready.observedGeneration, kustomizeController, failure)
			}
			failure.olderGeneration = v.mayBeOlderGeneration(ready)
			if kustomizationWording(v, ready) == unrecognised {
				// Retried or final, only its words would say: neither fail nor pass on them.
				failure.verdict = result.VerdictInProgress
				failure.message = joinSentences(failure.message, unrecognisedNote(kustomizeController, "v1.9.5"))
			}
			return failure
		}
		if ready.reason == meta.DependencyNotReadyReason {
			return dependencyGate(v, ready)
		}
	}
	if ready.status != string(metav1.ConditionTrue) {
		return progressing(v, kustomizeController)
	}
	if v.observedGeneration != v.generation {
		return decision{reason: ready.reason, message: generationPending(v, kustomizeController)}
	}
	if !v.applied(want) {
		return decision{reason: ready.reason, message: staleSuccess(v.lastApplied, want)}
	}
	return decision{verdict: result.VerdictCurrent, reason: ready.reason, message: ready.message}
}
