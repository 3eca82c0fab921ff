package verify

import (
	"context"
	"fmt"
	"time"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/result"
)

// A cluster holds its connect slot while its first lists are on their way, at most slotHold:
// one whose lists fail, or take longer, gives it back and goes on waiting, so failing or slow
// servers never starve the others.
const slotHold = 5 * time.Second

// verdictReason explains a verdict.
type verdictReason = assess.Finding

// verifyCluster verifies one cluster and returns its verdict; it never returns an error:
// whatever goes wrong is the verdict. Every goroutine and connection it opened is gone when it
// returns. It sets *passes to the number of assessments it made.
func verifyCluster(ctx context.Context, req Request, target Target, rep *reporter, slots *connectSlots, requests requestSlots, passes *int) result.Cluster {
	start := req.Clock()
	// state is the cluster's clients and memory, once they are built.
	var state *clusterState
	out := result.Cluster{SchemaVersion: result.SchemaVersion, Name: target.Name, ExpectedRevision: req.Revision.String()}
	var (
		trig        *trigger
		stopTrigger = func() {}
		applied     time.Time
		since       = sinceTracker{}
		// announcedApplied is set once progress has said the revision is applied.
		announcedApplied bool
	)
	finish := func(v verdictReason) result.Cluster {
		stopTrigger()
		if applied.IsZero() && v.Verdict == result.VerdictCurrent {
			// Current before an assessment marked the roots applied (a verdict from the
			// first look): they had applied the revision by now, at the latest.
			applied = req.Clock()
		}
		if trig != nil {
			out.Reconcile = trig.report(applied)
		}
		out.Verdict, out.Code, out.Reason, out.Message = v.Verdict, v.Code, v.Reason, v.Message
		out.DurationMs = req.Clock().Sub(start).Milliseconds()
		if !applied.IsZero() {
			out.AppliedMs = millis(applied.Sub(start))
		}
		since.stamp(&out)
		if out.Flux == nil {
			out.Flux = []result.FluxObject{}
		}
		if out.Objects == nil {
			out.Objects = []result.Object{}
		}
		if state != nil {
			*passes = state.mem.Passes()
		}
		rep.report(target.Name, req.Clock().Sub(start), out.Verdict, out.Summary(), progressFinal)
		return out
	}
	if target.Config == nil {
		return finish(verdictReason{Verdict: result.VerdictInvalidConfig, Reason: "InvalidConfig", Message: target.Invalid})
	}
	state, err := newClusterState(ctx, req, target.Config)
	if err != nil {
		return finish(verdictReason{Verdict: result.VerdictInvalidConfig, Reason: "InvalidConfig", Message: err.Error()})
	}
	defer state.close()
	rep.report(target.Name, 0, result.VerdictInProgress, "connecting", progressStep)
	// The probe is one small request: every cluster makes it at once, so an unreachable or
	// hung cluster never waits behind the others, nor makes them wait.
	if v, failed := state.probe(ctx); failed {
		return finish(v)
	}
	rep.report(target.Name, req.Clock().Sub(start), result.VerdictInProgress, "connected", progressMilestone)
	if req.Reconcile != ReconcileOff && !req.Snapshot {
		// The requests run beside the verification, which they never hold up; they end with
		// the cluster's verdict.
		trig = &trigger{start: start, poke: state.poke}
		tctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			state.requestReconcile(tctx, trig, requests)
		}()
		stopTrigger = func() {
			cancel()
			<-done
		}
		rep.report(target.Name, req.Clock().Sub(start), result.VerdictInProgress, "asking Flux to reconcile", progressMilestone)
	}
	// The first lists are the part that costs CPU and memory: at most MaxParallel clusters
	// make them at once. Waiting afterwards costs nothing and holds no slot. A cluster that
	// must wait for its turn waits without a connection (park), unless its reconcile
	// requests are using it.
	acquired := slots.tryAcquire()
	if !acquired {
		parked := trig == nil
		if parked {
			state.park()
		}
		if req.onTurnWait != nil {
			req.onTurnWait(target.Name, parked)
		}
	}
	if !acquired && !slots.acquire(ctx) {
		// The API server answered the probe; the wait was this run's own.
		turn := &assess.Assessment{Pending: &verdictReason{Verdict: result.VerdictInProgress, Reason: "WaitingForATurn",
			Message: fmt.Sprintf("the API server answered; the cluster was waiting for its turn to be read (at most %d clusters are read at once: max-parallel)", req.MaxParallel)}}
		return finish(state.stopped(ctx, turn, assess.Facts{}))
	}
	release := slots.releaser()
	defer release()

	holdUntil := req.Clock().Add(slotHold)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	notify := state.notifications()
	var (
		last      *assess.Assessment
		lastFacts assess.Facts
	)
	var confirms confirmations
	var preflightDone bool
	var preflightAt time.Time
	for {
		now := req.Clock()
		e := state.assess(now)
		since.note(e, now.Sub(start))
		if applied.IsZero() && e.RootsApplied {
			applied = now
		}
		e = state.consistently(ctx, e, now, &confirms)
		facts := assess.Facts{Snapshot: req.Snapshot}
		if trig != nil && state.awaitsHandling() {
			// The state before the run's own request would pass: wait for Flux to handle it.
			facts.Reconcile = state.unhandled(trig)
		}
		c := assess.Conclude(e, facts)
		if !req.Snapshot && !preflightDone && !c.Done && c.Pending != nil && !e.Syncing && !now.Before(preflightAt) {
			// Before it waits: a Flux controller the tree needs that is down is named now,
			// not waited out.
			pf := state.preflight(ctx, e, c.AwaitsReconcile)
			out.Preflight = preflightResult(pf)
			preflightAt, preflightDone = pf.RetryAt, pf.RetryAt.IsZero()
			if pf.Fatal != nil {
				facts.Preflight, preflightDone = pf.Fatal, true
				c = assess.Conclude(e, facts)
			}
			e.RecheckAt(pf.RetryAt)
		}
		last, lastFacts = e, facts
		out.Flux, out.Objects = e.Flux, e.Objects
		// The slot goes back once no first list is on its way: all arrived, or the ones
		// left failed and wait for their retry (a server answering 500 or 429 costs nothing
		// to wait on), or after slotHold, for a server that is slow to answer.
		if !e.Listing || !now.Before(holdUntil) {
			release()
		}
		if c.Done {
			if c.Verdict.Verdict == result.VerdictFailed {
				state.gatherEvidence(ctx, out.Objects)
			}
			return finish(c.Verdict)
		}
		if !announcedApplied && e.RootsApplied {
			// (Said only while the cluster still waits: a verdict at once says it all.)
			if msg := appliedMessage(e.Flux, req.Revision); msg != "" {
				announcedApplied = true
				rep.report(target.Name, now.Sub(start), result.VerdictInProgress, msg, progressMilestone)
			}
		}
		if c.Pending != nil {
			rep.report(target.Name, now.Sub(start), result.VerdictInProgress, c.Pending.Message, progressOf(c.Pending.Progress))
		}
		wake := e.Recheck
		if e.Listing && now.Before(holdUntil) && (wake.IsZero() || holdUntil.Before(wake)) {
			wake = holdUntil
		}
		if e.Syncing && (wake.IsZero() || now.Add(time.Second).Before(wake)) {
			wake = now.Add(time.Second) // refresh "has not answered for Ns"
		}
		if !wake.IsZero() {
			timer.Reset(max(wake.Sub(now), 0))
		}
		select {
		case <-ctx.Done():
			return finish(state.stopped(ctx, last, lastFacts))
		case <-notify:
			if !settleLists(ctx, last, notify, listSettle) {
				// (The run ended during the wait: the verdict is what the last assessment
				// waited for, as when it ends at the select.)
				return finish(state.stopped(ctx, last, lastFacts))
			}
		case <-timer.C:
		}
	}
}

// listSettle is how long a notification may wait for the first lists still on their way.
const listSettle = 100 * time.Millisecond

// settleLists waits, after a notification, while first lists of the inventories' kinds that
// the last assessment waited for are still on their way, for at most window (listSettle), and
// never into the run's last window (settleWindow): each list arriving alone would make an
// assessment of its own, walking every object again to say "not listed yet" once more. The
// last list to arrive, one that fails or the end of the window ends the wait, and the next
// assessment follows; the end of the run ends it too, and settleLists then returns false. A list only the
// classifier reads (pods, ReplicaSets…) never makes a notification wait; whatever else a
// notification brings while an inventory's kind is still being listed (a failure in a kind
// already listed, or a state that is Current without that kind) is judged at most window
// later.
func settleLists(ctx context.Context, last *assess.Assessment, notify <-chan struct{}, window time.Duration) bool {
	deadline, hasDeadline := ctx.Deadline()
	window = settleWindow(window, deadline, hasDeadline, time.Now())
	if window <= 0 || last == nil || last.Fatal != nil || !listsInFlight(last.InFlight) {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(window)
	defer timer.Stop()
	for listsInFlight(last.InFlight) {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return ctx.Err() == nil
		case <-notify:
		}
	}
	return ctx.Err() == nil
}

// settleWindow is how long a notification may wait at now: at most window, and never into the
// run's last window before its deadline (what the notification brought is judged before the
// deadline, not turned into a Timeout); zero or less: not at all.
func settleWindow(window time.Duration, deadline time.Time, hasDeadline bool, now time.Time) time.Duration {
	if !hasDeadline {
		return window
	}
	return min(window, deadline.Sub(now)-window)
}

// listsInFlight reports whether a first list of ws is still on its way (neither arrived nor
// failed), and none has failed: a list that fails (each had no error when it was recorded)
// may settle the verdict (401, 403) and is judged at once.
func listsInFlight(ws []assess.List) bool {
	inFlight := false
	for _, w := range ws {
		switch {
		case w.Err() != nil:
			return false
		case !w.Synced():
			inFlight = true
		}
	}
	return inFlight
}

// stopped is the verdict of a cluster whose wait ended before it had one of its own: the
// last assessment, concluded with the facts it was concluded with and the run's stop.
func (s *clusterState) stopped(ctx context.Context, last *assess.Assessment, facts assess.Facts) verdictReason {
	if last == nil {
		last = &assess.Assessment{}
	}
	v, cause := stopVerdict(ctx)
	stop := &assess.Stop{Verdict: v, Cause: cause, Timeout: s.req.Timeout}
	stop.RetryAfter, stop.Throttled = s.throttled.recent()
	facts.Stop = stop
	return assess.Conclude(last, facts).Verdict
}
