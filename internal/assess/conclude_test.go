package assess

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
)

// TestConclude: the cluster's verdict, or what it waits for, from an assessment and the run's
// facts: the run's stop first, then a failure (the assessment's or the preflight's), Current,
// a snapshot's state, and otherwise the wait, the run's own reconcile requests last.
func TestConclude(t *testing.T) {
	t.Parallel()
	failed := &Finding{Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "Stalled", Message: "web: image pull"}
	waiting := &Finding{Verdict: result.VerdictInProgress, Code: result.CodeNeverReady, Reason: "Progressing", Message: "web: 1/2 ready"}
	controllerDown := &Finding{Verdict: result.VerdictFailed, Reason: "ControllerUnavailable", Message: "kustomize-controller has no available replica"}
	requested := &ReconcileWait{ID: "Kustomization/flux-system/app", Token: "t1", Field: "lastHandledReconcileAt"}
	before := &ReconcileWait{ID: "Kustomization/flux-system/app", Token: "t1", Field: "lastHandledReconcileAt", Before: true}
	requestedPending := &Finding{Verdict: result.VerdictInProgress, Reason: ReconcileRequested,
		Message: "Kustomization/flux-system/app: waiting for Flux to handle the reconcile request t1 (status.lastHandledReconcileAt)"}
	current := []result.Object{{Kind: "Deployment", Name: "web", Status: result.ObjectCurrent}}
	fluxReady := []result.FluxObject{{ID: "Kustomization/flux-system/app"}}
	timeout := &Stop{Verdict: result.VerdictTimeout, Timeout: 5 * time.Minute}
	tests := []struct {
		name  string
		e     Assessment
		facts Facts
		want  Conclusion
	}{
		{name: "a failure", e: Assessment{Fatal: failed, Pending: waiting},
			want: Conclusion{Done: true, Verdict: *failed}},
		{name: "the preflight's failure", e: Assessment{Pending: waiting}, facts: Facts{Preflight: controllerDown},
			want: Conclusion{Done: true, Verdict: *controllerDown}},
		{name: "the assessment's failure before the preflight's", e: Assessment{Fatal: failed}, facts: Facts{Preflight: controllerDown},
			want: Conclusion{Done: true, Verdict: *failed}},
		{name: "Current", e: Assessment{Flux: fluxReady, Objects: current},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictCurrent, Message: "1 objects Current"}}},
		{name: "Current, an ignored workload counted from the assessment",
			e: Assessment{Flux: fluxReady, Objects: append(current, result.Object{Kind: "Deployment", Name: "batch", Status: result.ObjectInProgress,
				Message: "not verified (app-status.io/ignore-readiness)"}), ReadinessIgnored: 1},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictCurrent, Message: "1 objects Current, 1 not verified (app-status.io/ignore-readiness)"}}},
		{name: "Current, an object kustomize-controller skips counted from the assessment",
			e: Assessment{Flux: fluxReady, Objects: append(current, result.Object{Kind: "Deployment", Name: "paused", Status: result.ObjectInProgress,
				Message: "not verified: kustomize-controller skips it (kustomize.toolkit.fluxcd.io/reconcile: disabled)"}), SkippedByKustomize: 1},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictCurrent, Message: "1 objects Current, 1 not verified (kustomize-controller skips them)"}}},
		{name: "Current, a paused object counted as not rolled out",
			e: Assessment{Flux: fluxReady, Objects: append(current, result.Object{Kind: "Deployment", Name: "paused", Status: result.ObjectCurrent,
				Message: "not rolled out: kustomize-controller skips it (kustomize.toolkit.fluxcd.io/reconcile: disabled)"}), PausedByKustomize: 1},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictCurrent, Message: "2 objects Current, 1 of them not rolled out (kustomize-controller skips them)"}}},
		{name: "Current, a workload whose rollout waits for a person counted as not rolled out",
			e: Assessment{Flux: fluxReady, Objects: append(current, result.Object{Kind: "StatefulSet", Name: "db", Status: result.ObjectCurrent,
				Message: "not rolled out: updateStrategy OnDelete, its pods change only when deleted (0 of 2 updated)"}), HeldRollouts: 1},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictCurrent, Message: "2 objects Current, 1 of them not rolled out (their rollout waits for a person)"}}},
		{name: "Current, a workload whose rollout waits for a person, its pods not all ready: not verified",
			e: Assessment{Flux: fluxReady, Objects: append(current, result.Object{Kind: "DaemonSet", Name: "agent", Status: result.ObjectInProgress,
				Message: "not verified: updateStrategy OnDelete, its pods change only when deleted (0 of 2 updated)"}), HeldNotVerified: 1},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictCurrent, Message: "1 objects Current, 1 not verified (their rollout waits for a person)"}}},
		{name: "Current: an object's words say nothing of what was verified",
			e: Assessment{Flux: fluxReady, Objects: append(current, result.Object{Kind: "Secret", Name: "s", Status: result.ObjectUnknown,
				Message: "not verified (app-status.io/ignore-readiness)"})},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictCurrent, Message: "1 objects Current, 1 not verified (the credentials may not read them)"}}},
		{name: "Current, a nested Flux object suspended",
			e: Assessment{Flux: []result.FluxObject{{ID: "Kustomization/flux-system/app", Verdict: result.VerdictCurrent},
				{ID: "Kustomization/flux-system/infra", Owner: "Kustomization/flux-system/app", Verdict: result.VerdictSuspended, Suspended: true}}},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictCurrent, Message: "2 Flux objects Ready; suspended, not verified: Kustomization/flux-system/infra"}}},
		{name: "a list loading", e: Assessment{Syncing: true},
			want: Conclusion{}},
		{name: "waiting", e: Assessment{Pending: waiting},
			want: Conclusion{Pending: waiting}},
		{name: "Current but for the run's reconcile request", e: Assessment{Flux: fluxReady}, facts: Facts{Reconcile: requested},
			want: Conclusion{Pending: requestedPending, AwaitsReconcile: true}},
		{name: "the requests not sent yet", e: Assessment{}, facts: Facts{Reconcile: &ReconcileWait{Sending: true}},
			want: Conclusion{Pending: &Finding{Verdict: result.VerdictInProgress, Reason: ReconcileRequested, Message: "sending the reconcile requests"}, AwaitsReconcile: true}},
		{name: "a list loading, the request not handled", e: Assessment{Syncing: true}, facts: Facts{Reconcile: requested},
			want: Conclusion{Pending: requestedPending, AwaitsReconcile: true}},
		{name: "the assessment's wait before the request's", e: Assessment{Pending: waiting}, facts: Facts{Reconcile: requested},
			want: Conclusion{Pending: waiting}},
		{name: "a failure before the request is handled is held", e: Assessment{Fatal: failed, Pending: waiting}, facts: Facts{Reconcile: before},
			want: Conclusion{Pending: &Finding{Verdict: result.VerdictInProgress, Code: result.CodeImagePull, Reason: ReconcileRequested,
				Message: requestedPending.Message + "; before it: web: image pull"}, AwaitsReconcile: true}},
		{name: "a failure while the requests are sent is held", e: Assessment{Fatal: failed}, facts: Facts{Reconcile: &ReconcileWait{Sending: true, Before: true}},
			want: Conclusion{Pending: &Finding{Verdict: result.VerdictInProgress, Code: result.CodeImagePull, Reason: ReconcileRequested,
				Message: "sending the reconcile requests; before it: web: image pull"}, AwaitsReconcile: true}},
		{name: "a failure after the state before the request: a forced request not handled, a revision given", e: Assessment{Fatal: failed}, facts: Facts{Reconcile: requested},
			want: Conclusion{Done: true, Verdict: *failed}},
		{name: "a forced release's upgrade failure before the force is handled is held, with a revision",
			e:     Assessment{Fatal: &Finding{Verdict: result.VerdictFailed, Code: result.CodeFluxUpgradeFailed, Reason: "UpgradeFailed", Message: "web: upgrade failed"}},
			facts: Facts{Reconcile: &ReconcileWait{ID: "HelmRelease/shop/web", Token: "t1", Field: "lastHandledReconcileAt", Forced: true}},
			want: Conclusion{Pending: &Finding{Verdict: result.VerdictInProgress, Code: result.CodeFluxUpgradeFailed, Reason: ReconcileRequested,
				Message: "HelmRelease/shop/web: waiting for Flux to handle the reconcile request t1 (status.lastHandledReconcileAt); before it: web: upgrade failed"}, AwaitsReconcile: true}},
		{name: "a forced release's dependency failure is not what the force reruns",
			e:     Assessment{Fatal: &Finding{Verdict: result.VerdictFailed, Code: result.CodeFluxDependencyFailed, Message: "infra failed"}},
			facts: Facts{Reconcile: &ReconcileWait{ID: "HelmRelease/shop/web", Token: "t1", Field: "lastHandledReconcileAt", Forced: true}},
			want:  Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictFailed, Code: result.CodeFluxDependencyFailed, Message: "infra failed"}}},
		{name: "the preflight's failure while the request is not handled", e: Assessment{Fatal: failed}, facts: Facts{Reconcile: before, Preflight: controllerDown},
			want: Conclusion{Done: true, Verdict: *controllerDown}},
		{name: "a failure once the request is handled", e: Assessment{Fatal: failed}, facts: Facts{},
			want: Conclusion{Done: true, Verdict: *failed}},
		{name: "timed out on a held failure: the failure's reason, and the request Flux never handled", e: Assessment{Fatal: failed, Pending: waiting},
			facts: Facts{Reconcile: before, Stop: timeout},
			want: Conclusion{Done: true, HeldFailure: true, Verdict: Finding{Verdict: result.VerdictTimeout, Code: result.CodeImagePull, Reason: "Stalled",
				Message: "timed out after 5m0s: failing: web: image pull; Flux never handled the run's reconcile request t1 of Kustomization/flux-system/app " +
					"(status.lastHandledReconcileAt), so whether it still fails after it is not known"}}},
		{name: "timed out on a forced release's held upgrade failure",
			e:     Assessment{Fatal: &Finding{Verdict: result.VerdictFailed, Code: result.CodeFluxUpgradeFailed, Reason: "UpgradeFailed", Message: "HelmRelease/shop/web: upgrade failed"}},
			facts: Facts{Reconcile: &ReconcileWait{ID: "HelmRelease/shop/web", Token: "t1", Field: "lastHandledForceAt", Forced: true}, Stop: timeout},
			want: Conclusion{Done: true, HeldFailure: true, Verdict: Finding{Verdict: result.VerdictTimeout, Code: result.CodeFluxUpgradeFailed, Reason: "UpgradeFailed",
				Message: "timed out after 5m0s: failing: HelmRelease/shop/web: upgrade failed; Flux never handled the run's reconcile request t1 of HelmRelease/shop/web " +
					"(status.lastHandledForceAt), so whether it still fails after it is not known"}}},
		{name: "timed out on a failure held while the requests are sent", e: Assessment{Fatal: failed},
			facts: Facts{Reconcile: &ReconcileWait{Sending: true, Before: true}, Stop: timeout},
			want: Conclusion{Done: true, HeldFailure: true, Verdict: Finding{Verdict: result.VerdictTimeout, Code: result.CodeImagePull, Reason: "Stalled",
				Message: "timed out after 5m0s: failing: web: image pull; the run's reconcile requests were not all sent, so whether it still fails after it is not known"}}},
		{name: "cancelled on a held failure: what it was waiting for", e: Assessment{Fatal: failed},
			facts: Facts{Reconcile: before, Stop: &Stop{Verdict: result.VerdictCancelled, Cause: "stopped: the run was cancelled"}},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictCancelled, Code: result.CodeImagePull, Reason: "Cancelled",
				Message: "stopped: the run was cancelled; was " + requestedPending.Message + "; before it: web: image pull"}}},
		{name: "snapshot: the wait is the verdict", e: Assessment{Pending: waiting}, facts: Facts{Snapshot: true},
			want: Conclusion{Done: true, Verdict: *waiting}},
		{name: "snapshot: a list that did not load", e: Assessment{Syncing: true}, facts: Facts{Snapshot: true},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictInProgress, Message: "waiting"}}},
		{name: "snapshot: not found", e: Assessment{NotFound: true, Pending: &Finding{Verdict: result.VerdictNotFound, Reason: "NotFound", Message: "Kustomization/flux-system/app not found"}},
			facts: Facts{Snapshot: true},
			want:  Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictNotFound, Reason: "NotFound", Message: "Kustomization/flux-system/app not found"}}},
		{name: "snapshot: a wait said NotFound elsewhere is in progress", e: Assessment{Pending: &Finding{Verdict: result.VerdictNotFound, Message: "m"}},
			facts: Facts{Snapshot: true},
			want:  Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictInProgress, Message: "m"}}},
		{name: "timed out waiting", e: Assessment{Pending: waiting}, facts: Facts{Stop: timeout},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictTimeout, Code: result.CodeNeverReady, Reason: "Progressing",
				Message: "timed out after 5m0s: web: 1/2 ready"}}},
		{name: "timed out with nothing to wait for yet", e: Assessment{Syncing: true}, facts: Facts{Stop: timeout},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictTimeout, Reason: "Timeout",
				Message: "timed out after 5m0s: no answer from the API server yet"}}},
		{name: "timed out waiting for the run's reconcile request", e: Assessment{}, facts: Facts{Reconcile: requested, Stop: timeout},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictTimeout, Reason: ReconcileRequested,
				Message: "timed out after 5m0s: " + requestedPending.Message}}},
		{name: "timed out, not found", e: Assessment{NotFound: true, Pending: &Finding{Verdict: result.VerdictInProgress, Reason: "NotFound", Message: "app not found"}},
			facts: Facts{Stop: timeout},
			want:  Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictNotFound, Reason: "NotFound", Message: "timed out after 5m0s: app not found"}}},
		{name: "timed out throttled while the lists load", e: Assessment{Syncing: true, Pending: waiting},
			facts: Facts{Stop: &Stop{Verdict: result.VerdictTimeout, Timeout: time.Minute, Throttled: true, RetryAfter: 3 * time.Second}},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictThrottled, Reason: "Throttled",
				Message: "timed out after 1m0s: " + ThrottledMessage(3*time.Second, "the app's objects")}}},
		{name: "timed out throttled, the lists loaded: the wait says", e: Assessment{Pending: waiting},
			facts: Facts{Stop: &Stop{Verdict: result.VerdictTimeout, Timeout: time.Minute, Throttled: true}},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictTimeout, Code: result.CodeNeverReady, Reason: "Progressing",
				Message: "timed out after 1m0s: web: 1/2 ready"}}},
		{name: "cancelled", e: Assessment{Pending: waiting, NotFound: true, Syncing: true},
			facts: Facts{Stop: &Stop{Verdict: result.VerdictCancelled, Cause: "stopped: the run was cancelled", Throttled: true}},
			want: Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictCancelled, Code: result.CodeNeverReady, Reason: "Cancelled",
				Message: "stopped: the run was cancelled; was web: 1/2 ready"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, Conclude(&tt.e, tt.facts)); diff != "" {
				t.Errorf("Conclude (-want +got):\n%s", diff)
			}
		})
	}
}
