package flux

import (
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// pathMissing reports whether an ArtifactFailed failure is kustomize-controller's "kustomization
// path not found" (or a path it refuses), which the revision's content decides: every other
// ArtifactFailed (the artifact cannot be downloaded, the source has none yet) is retried.
func pathMissing(ready condition) bool {
	return ready.reason == meta.ArtifactFailedReason &&
		(strings.HasPrefix(ready.message, "kustomization path not found") || strings.Contains(ready.message, "path escapes"))
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
			return staleGeneration(v, st, kustomizeController, stalled)
		}
		return stalled
	}
	ready := v.cond(meta.ReadyCondition)
	if ready.status == string(metav1.ConditionFalse) {
		if code, ok := kustomizationFailures[ready.reason]; ok {
			failure := decision{verdict: result.VerdictFailed, code: code, reason: ready.reason, message: ready.message}
			// The revision that failed is the one last attempted, or, when the failure came
			// before kustomize-controller recorded it because the path is not in the artifact,
			// the one its Reconciling message names. (Not for an artifact that cannot be
			// downloaded: kustomize-controller retries that, and the Reconciling message may be
			// left from the attempt before.)
			failedRevision, attempted := v.lastAttempted, v.attempted(want)
			if pathMissing(ready) && v.reconcilingRevision != "" && v.reconcilingRevision != v.lastAttempted {
				failedRevision, attempted = v.reconcilingRevision, want.IsZero() || want.Matches(v.withOrigin(v.reconcilingRevision)...)
			}
			if !attempted && !want.MentionedIn(ready.message) {
				return staleFailure(want, failedRevision, failure)
			}
			if failedRevision != "" {
				failure.message = fmt.Sprintf("revision %s failed: %s", ShortRevision(failedRevision), ready.message)
			}
			if v.olderGeneration(ready) {
				return staleGeneration(v, ready, kustomizeController, failure)
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
