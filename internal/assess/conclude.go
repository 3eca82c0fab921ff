package assess

import (
	"cmp"
	"fmt"
	"time"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/result"
)

// CurrentMessage says what was verified; the applied revision has a column of its own. It
// names what was left out: objects the credentials may not read, nested Flux objects that are
// suspended, objects applied to a remote cluster.
func CurrentMessage(c *Assessment) string {
	msg := fmt.Sprintf("%d Flux objects Ready", len(c.Flux))
	if len(c.Objects) > 0 {
		unverified, ignored, skipped, unbound, uncreated := 0, c.ReadinessIgnored, c.SkippedByKustomize+c.HeldNotVerified, c.AwaitingConsumer, c.CRDsNotCreated
		for _, o := range c.Objects {
			if o.Status != result.ObjectCurrent {
				unverified++
			}
		}
		unverified -= ignored + skipped + unbound + uncreated
		msg = fmt.Sprintf("%d objects Current", len(c.Objects)-unverified-ignored-skipped-unbound-uncreated)
		if unverified > 0 {
			msg += fmt.Sprintf(", %d not verified (the credentials may not read them)", unverified)
		}
		if ignored > 0 {
			msg += fmt.Sprintf(", %d not verified (%s)", ignored, classify.AnnotationIgnoreReadiness)
		}
		if byKustomize := c.SkippedByKustomize; byKustomize > 0 {
			msg += fmt.Sprintf(", %d not verified (kustomize-controller skips them)", byKustomize)
		}
		if held := c.HeldNotVerified; held > 0 {
			msg += fmt.Sprintf(", %d not verified (their rollout waits for a person)", held)
		}
		if unbound > 0 {
			msg += fmt.Sprintf(", %d not verified (claims bound when a pod that uses them is scheduled)", unbound)
		}
		if uncreated > 0 {
			msg += fmt.Sprintf(", %d not verified (CRDs helm-controller does not create: crds: Skip)", uncreated)
		}
		if paused := c.PausedByKustomize; paused > 0 {
			msg += fmt.Sprintf(", %d of them not rolled out (kustomize-controller skips them)", paused)
		}
		if held := c.HeldRollouts; held > 0 {
			msg += fmt.Sprintf(", %d of them not rolled out (their rollout waits for a person)", held)
		}
	}
	var suspended, remote []string
	for _, f := range c.Flux {
		switch {
		case f.Verdict == result.VerdictSuspended:
			suspended = append(suspended, f.ID)
		case f.Remote:
			remote = append(remote, f.ID)
		}
	}
	if len(suspended) > 0 {
		msg += "; suspended, not verified: " + FewOf(suspended)
	}
	if len(remote) > 0 {
		msg += "; applied to a remote cluster (spec.kubeConfig), not verified here: " + FewOf(remote)
	}
	return msg
}

// ThrottledMessage says the API server refuses to answer for now, and for how long it asked
// to wait.
func ThrottledMessage(wait time.Duration, what string) string {
	after := ""
	if wait > 0 {
		after = fmt.Sprintf(" and asked to retry after %s", wait)
	}
	return fmt.Sprintf("the API server answered 429 Too Many Requests while reading %s%s: it is overloaded or limits this client "+
		"(API Priority and Fairness); retry later or raise the limits of the kubeconfig's user", what, after)
}

// ReconcileRequested is the reason of the pending verdict while the run waits for Flux to
// handle its own reconcile requests.
const ReconcileRequested = "ReconcileRequested"

// Facts are what the run knows of a cluster beside what it read: whether it reads once, what
// its own reconcile requests still wait for, what the preflight found, and why it stopped
// waiting.
type Facts struct {
	// Snapshot is set when every list is read once (app-status get): the state found is the
	// verdict.
	Snapshot bool
	// Reconcile is what the run's own reconcile requests still wait for, when the verdict
	// waits until Flux has handled them; nil when it does not, or they are handled.
	Reconcile *ReconcileWait
	// Preflight is the preflight's finding, when a Flux controller the tree needs is down.
	Preflight *Finding
	// Stop is set when the run stopped waiting for the cluster: its deadline, or a
	// cancellation.
	Stop *Stop
}

// ReconcileWait is what the run's own reconcile requests still wait for: to be sent (Sending),
// or the controller of the requested object ID to handle the request Token, which its
// status.Field says (flux.ReconcileRequest.Handled).
type ReconcileWait struct {
	Sending          bool
	ID, Token, Field string
	// Shard is the Flux shard of the object ID (ShardLabel), "" for none.
	Shard string
	// Before says that what the run reads is the state before its own request, a failure
	// included: no revision was given, and a request is not sent yet, or its reconcile not
	// handled (its force aside: helm-controller records a forced request only once it gets to
	// Helm's action, and a failure before that, of a dependency, the chart or the values, is
	// the state after the request).
	Before bool
	// Forced says the same of a failure of Helm's action (an install, upgrade or test that
	// failed, a rollback), with or without a revision: a forced request makes helm-controller
	// run the action again, even after its retries ran out, and such a failure is the one the
	// force was sent for.
	Forced bool
}

// heldBefore reports whether the failure f is the state before the run's own request w.
func (w *ReconcileWait) heldBefore(f *Finding) bool {
	if w == nil || f == nil {
		return false
	}
	switch f.Code {
	case result.CodeFluxInstallFailed, result.CodeFluxUpgradeFailed, result.CodeFluxTestFailed, result.CodeFluxRolledBack:
		return w.Before || w.Forced
	}
	return w.Before
}

// message says what the requests wait for.
func (w ReconcileWait) message() string {
	if w.Sending {
		return "sending the reconcile requests"
	}
	return fmt.Sprintf("%s: waiting for Flux to handle the reconcile request %s (status.%s)", w.ID, w.Token, w.Field)
}

// unhandled says, once the run stopped waiting, what never came of its requests.
func (w ReconcileWait) unhandled() string {
	if w.Sending {
		return "the run's reconcile requests were not all sent"
	}
	return fmt.Sprintf("Flux never handled the run's reconcile request %s of %s (status.%s)", w.Token, w.ID, w.Field)
}

// Stop is why the run stopped waiting for a cluster before it had a verdict of its own.
type Stop struct {
	// Verdict is Timeout (the run's deadline) or Cancelled.
	Verdict result.Verdict
	// Cause says why a run was cancelled ("stopped: …"); "" for its deadline.
	Cause string
	// Timeout is the run's timeout.
	Timeout time.Duration
	// Throttled is set when the API server answered 429 Too Many Requests in the last minute,
	// and RetryAfter is the wait it asked for then (zero for none).
	Throttled  bool
	RetryAfter time.Duration
}

// Conclusion is the cluster's verdict, once it has one, or what it waits for.
type Conclusion struct {
	// Done is set once Verdict is the cluster's.
	Done    bool
	Verdict Finding
	// Pending is the first reason the cluster is not done yet, the run's own reconcile
	// requests included; nil when none (a list still loading, or Done).
	Pending *Finding
	// AwaitsReconcile is set when Pending is the run's own reconcile requests.
	AwaitsReconcile bool
	// HeldFailure is set on a Timeout that came while a failure was held for the run's own
	// reconcile request: the verdict carries that failure's code and reason, and the
	// failure's evidence is gathered for it as for a Failed one.
	HeldFailure bool
}

// Conclude turns an assessment and the run's facts into the cluster's verdict, or what it
// waits for. In order: the run's stop, which gives what the cluster waited for (a 429 while
// the lists loaded, a requested object not found, a failure held, timedOutHeld); the
// assessment's own failure (held while it is the state before the run's own reconcile
// request, ReconcileWait.Before and Forced), or the preflight's; Current, once nothing is
// pending nor loading; a snapshot's state as it is; otherwise the cluster waits, for what the
// assessment waits for or, when nothing else, for Flux to handle the run's own reconcile
// requests.
func Conclude(e *Assessment, f Facts) Conclusion {
	c := Conclusion{Pending: e.Pending}
	fatal := e.Fatal
	if f.Reconcile.heldBefore(fatal) {
		if other := e.unheldFatal(f.Reconcile); other != nil {
			fatal = other
		}
	}
	var held *Finding
	switch {
	case f.Reconcile.heldBefore(fatal):
		// What failed is the state before the run's own request, which Flux has not handled
		// yet: a Kustomization left BuildFailed by the commit before the merge is asked to
		// apply the merge. It is held as its success is, and named.
		c.Pending = &Finding{Verdict: result.VerdictInProgress, Code: fatal.Code, Reason: ReconcileRequested,
			Message: f.Reconcile.message() + "; before it: " + fatal.Message}
		c.AwaitsReconcile, held, fatal = true, fatal, nil
	case f.Reconcile != nil && fatal == nil && e.Pending == nil:
		c.Pending = &Finding{Verdict: result.VerdictInProgress, Reason: ReconcileRequested, Message: f.Reconcile.message()}
		c.AwaitsReconcile = true
	}
	if fatal == nil {
		fatal = f.Preflight
	}
	switch {
	case f.Stop != nil:
		v := stopped(e, c.Pending, *f.Stop)
		if held != nil && v.Verdict == result.VerdictTimeout {
			// What was failing is the answer to give, but for Flux's handling of the request.
			return Conclusion{Done: true, Verdict: timedOutHeld(*held, *f.Reconcile, *f.Stop), HeldFailure: true}
		}
		return Conclusion{Done: true, Verdict: v}
	case fatal != nil:
		return Conclusion{Done: true, Verdict: *fatal}
	case c.Pending == nil && !e.Syncing:
		return Conclusion{Done: true, Verdict: Finding{Verdict: result.VerdictCurrent, Message: CurrentMessage(e)}}
	case f.Snapshot:
		p := Finding{Verdict: result.VerdictInProgress, Message: "waiting"}
		if c.Pending != nil {
			p = *c.Pending
		}
		p.Verdict = result.VerdictInProgress
		if e.NotFound {
			p.Verdict = result.VerdictNotFound
		}
		return Conclusion{Done: true, Verdict: p}
	}
	return c
}

// timedOutHeld is the verdict of a cluster whose run reached its deadline while the failure
// held was the state before the run's own reconcile request w: Timeout, since whether the
// failure outlives Flux's handling of the request is not known, with the failure's own code
// and reason, and a message that says both what was failing and what Flux never handled.
func timedOutHeld(held Finding, w ReconcileWait, stop Stop) Finding {
	return Finding{Verdict: result.VerdictTimeout, Code: held.Code, Reason: cmp.Or(held.Reason, "Timeout"),
		Message: fmt.Sprintf("timed out after %s: failing: %s; %s, so whether it still fails after it is not known",
			stop.Timeout, held.Message, w.unhandled())}
}

// stopped is the verdict of a cluster whose wait ended before it had one of its own: what it
// was waiting for (pending), and the API server's 429 if that is why.
func stopped(e *Assessment, pending *Finding, stop Stop) Finding {
	was := Finding{Message: "no answer from the API server yet"}
	if pending != nil {
		was = *pending
	}
	if stop.Verdict != result.VerdictTimeout {
		return Finding{Verdict: stop.Verdict, Code: was.Code, Reason: "Cancelled", Message: stop.Cause + "; was " + was.Message}
	}
	if stop.Throttled && e.Syncing {
		return Finding{Verdict: result.VerdictThrottled, Reason: string(result.VerdictThrottled),
			Message: fmt.Sprintf("timed out after %s: %s", stop.Timeout, ThrottledMessage(stop.RetryAfter, "the app's objects"))}
	}
	v := stop.Verdict
	if e.NotFound {
		v = result.VerdictNotFound
	}
	return Finding{Verdict: v, Code: was.Code, Reason: cmp.Or(was.Reason, "Timeout"),
		Message: fmt.Sprintf("timed out after %s: %s", stop.Timeout, was.Message)}
}
