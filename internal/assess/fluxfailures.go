package assess

import (
	"fmt"
	"time"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// The failures of a Flux object: reported at once, or once the objects its inventory lists are
// judged, after its controller's retry of its health checks.

// failFlux reports the failure of the Flux object ref, or returns it when it is deferred until
// the objects its inventory lists are judged (failOrAwaitHealthRetry).
func (a *assessor) failFlux(e *Assessment, ref flux.Ref, parent, gate *flux.Gate) (deferred *Finding) {
	id := ref.ID()
	v := Finding{Verdict: result.VerdictFailed, Code: gate.Code, Reason: gate.Object.Reason, Message: id + ": " + gate.Message}
	switch {
	case parent != nil && !parent.Applied:
		// Its owner has not applied the expected revision yet, which may change its spec
		// and fix what failed (a values fix for a broken release): the failure is of the
		// previous revision, so it waits, as the workloads do.
		e.wait(Finding{Verdict: result.VerdictInProgress, Code: gate.Code, Reason: gate.Object.Reason,
			Message: id + ": " + gate.Message + " (before " + parent.Object.ID + " applied the expected revision)"})
	case (gate.Applied || ref.Kind == flux.KindResourceSet) && !gate.Remote && workloadsExplain[gate.Code] &&
		(a.spec.Workloads || ref.Kind == flux.KindResourceSet || gate.Code == result.CodeFluxHealthCheckFailed):
		// (A ResourceSet's failed wait is for the Flux objects it generated, judged
		// with or without the workloads: theirs says why; a wait of a step before the
		// last, its previous objects still listed, as well. Failed health checks wait for
		// the controller's retry without the workloads too.)
		return &v
	default:
		e.fail(v)
	}
	return nil
}

// failOrAwaitHealthRetry reports a deferred Flux failure once the inventory's objects are
// judged. Failed health checks of a Kustomization (or the failed wait of a ResourceSet, whose
// flux-operator retries with a backoff: flux.Gate.RetryEvery) are not final while none of its objects has
// failed: kustomize-controller runs them again at its next retry (spec.retryInterval, else
// spec.interval: kustomize-controller v1.9.5 Reconcile returns RequeueAfter:
// obj.GetRetryInterval() on a failed reconcile), and turns Ready if the objects are Current by
// then (a Deployment that became ready after spec.timeout). They wait until the retry after
// the first failure the run saw is due, with a margin for its jitter and the checks' own time,
// and fail then if Flux still says so. Without the workloads only the Flux objects it lists
// are judged: it waits for the retry whether or not it lists any.
func (a *assessor) failOrAwaitHealthRetry(e *Assessment, id string, gate *flux.Gate, failure Finding, now time.Time) {
	if gate.Code != result.CodeFluxHealthCheckFailed || gate.FailedAt.IsZero() || gate.RetryEvery <= 0 || e.failed() {
		e.fail(failure)
		return
	}
	listed, current := 0, 0
	for _, o := range e.Objects {
		if o.Owner != id {
			continue
		}
		if o.Status == result.ObjectFailed {
			e.fail(failure)
			return
		}
		listed++
		if o.Status == result.ObjectCurrent {
			current++
		}
	}
	for _, f := range e.Flux {
		// (The Flux objects it lists, judged as Flux objects: without the workloads, all
		// that is judged of a ResourceSet's.)
		if f.Owner != id {
			continue
		}
		if f.Verdict == result.VerdictFailed {
			e.fail(failure)
			return
		}
		if !a.spec.Workloads {
			listed++
			if f.Verdict == result.VerdictCurrent {
				current++
			}
		}
	}
	first, next := a.healthRetryAt(id, gate)
	if (listed == 0 && a.spec.Workloads) || !now.Before(next) {
		e.fail(failure)
		return
	}
	retry := "kustomize-controller checks them again by %s (spec.retryInterval, else spec.interval)"
	if gate.Object.Kind == string(flux.KindResourceSet) {
		retry = flux.FluxOperator + " retries with a backoff and waits for them again by %s (its step's timeout, else the fluxcd.controlplane.io/reconcileTimeout annotation, else 5m)"
	}
	judged := fmt.Sprintf("%d of the %d objects it lists are Current now, and none failed", current, listed)
	if !a.spec.Workloads {
		judged = fmt.Sprintf("the objects it lists are not verified (workloads: false), and none of the %d Flux objects among them failed", listed)
	}
	message := fmt.Sprintf("its health checks failed at %s, %s: "+retry+", and fails then if it still fails: %s",
		first.UTC().Format(time.RFC3339), judged, next.UTC().Format(time.RFC3339), gate.Message)
	for i := range e.Flux {
		if e.Flux[i].ID == id {
			e.Flux[i].Verdict, e.Flux[i].Message = result.VerdictInProgress, message
		}
	}
	e.wait(Finding{Verdict: result.VerdictInProgress, Code: gate.Code, Reason: failure.Reason, Message: id + ": " + message})
	e.recheckAt(next)
}

// healthRetryAt is when the first failure of gate's health checks the run saw (by object and
// revision, kept in the run's memory) was reported, and when the controller's retry after it
// is surely over: its retry interval, a tenth of it for the jitter, and 30 s for the checks.
func (a *assessor) healthRetryAt(id string, gate *flux.Gate) (first, next time.Time) {
	if a.mem.healthFailedAt == nil {
		a.mem.healthFailedAt = map[string]time.Time{}
	}
	key := id + "|" + gate.Object.LastAttemptedRevision
	first, ok := a.mem.healthFailedAt[key]
	if !ok || gate.FailedAt.Before(first) {
		first, a.mem.healthFailedAt[key] = gate.FailedAt, gate.FailedAt
	}
	return first, first.Add(gate.RetryEvery + gate.RetryEvery/10 + 30*time.Second)
}
