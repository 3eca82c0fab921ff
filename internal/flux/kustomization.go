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

// retriedApply are the words of a failure to apply (ReconciliationFailed, from the server-side
// dry-run or apply) that something of the same rollout may remove: a kind whose CRD is not
// served yet, a webhook that cannot be called yet, a namespace not created yet, an API server
// that did not answer. kustomize-controller tries again at spec.retryInterval.
var retriedApply = []string{
	"no matches for kind", "the server could not find the requested resource", "ensure crds are installed first",
	"failed calling webhook", "failed to call webhook", "connection refused", "no endpoints available for service",
	"i/o timeout", "context deadline exceeded", "the server is currently unable to handle the request",
	"etcdserver: request timed out", "too many requests",
}

// retriedKustomization reports whether a Ready=False failure is one kustomize-controller
// retries and that may pass by itself: an artifact that cannot be fetched (not a path the
// revision lacks), or an apply that failed on something not there yet, and nothing that says
// the manifests are invalid.
func retriedKustomization(ready condition) bool {
	switch ready.reason {
	case meta.ArtifactFailedReason:
		return !pathMissing(ready)
	case meta.ReconciliationFailedReason:
		m := strings.ToLower(ready.message)
		if strings.Contains(m, "is invalid") || strings.Contains(m, "immutable") || strings.Contains(m, "denied the request") {
			return false
		}
		if strings.Contains(m, "namespaces \"") && strings.Contains(m, "not found") {
			return true
		}
		for _, w := range retriedApply {
			if strings.Contains(m, w) {
				return true
			}
		}
	}
	return false
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
		return stalled
	}
	ready := v.cond(meta.ReadyCondition)
	if ready.status == string(metav1.ConditionFalse) {
		if code, ok := kustomizationFailures[ready.reason]; ok {
			failure := decision{verdict: result.VerdictFailed, code: code, reason: ready.reason, message: ready.message,
				retried: retriedKustomization(ready)}
			// The revision that failed is the one last attempted, or, for an artifact that
			// failed before kustomize-controller recorded it (a download or checksum failure,
			// a path the artifact lacks), the one its Reconciling condition names: it writes
			// "Fetching manifests for revision B" before it fetches, and lastAttemptedRevision
			// only once the path is found. A fetch of B that fails is never a failure of A.
			failedRevision, attempted := v.lastAttempted, v.attempted(want)
			if ready.reason == meta.ArtifactFailedReason && v.reconcilingRevision != "" && v.reconcilingRevision != v.lastAttempted {
				failedRevision, attempted = v.reconcilingRevision, want.IsZero() || want.Matches(v.withOrigin(v.reconcilingRevision)...)
			}
			if !attempted && !want.MentionedIn(ready.message) {
				return staleFailure(want, failedRevision, failure)
			}
			if failedRevision != "" {
				failure.message = fmt.Sprintf("revision %s failed: %s", ShortRevision(failedRevision), ready.message)
			}
			if v.olderGeneration(ready) {
				return staleGeneration(v, ready.observedGeneration, kustomizeController, failure)
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
