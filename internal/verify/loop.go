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
//
// Its steps: build the clients, connect (the probe), start the reconcile requests, wait for a
// turn to read, then wait for the verdict, one pass (assess, confirm, conclude, report) after
// each change.
func verifyCluster(ctx context.Context, req Request, target Target, rep *reporter, slots *connectSlots, requests requestSlots, passes *int) result.Cluster {
	r := &clusterRun{
		req: req, target: target, rep: rep, passes: passes,
		start:       req.Clock(),
		out:         result.Cluster{SchemaVersion: result.SchemaVersion, Name: target.Name, ExpectedRevision: req.Revision.String()},
		stopTrigger: func() {},
		since:       sinceTracker{},
	}
	if target.Config == nil {
		return r.finish(verdictReason{Verdict: result.VerdictInvalidConfig, Reason: "InvalidConfig", Message: target.Invalid})
	}
	state, err := newClusterState(ctx, req, target.Config)
	if err != nil {
		return r.finish(verdictReason{Verdict: result.VerdictInvalidConfig, Reason: "InvalidConfig", Message: err.Error()})
	}
	r.state = state
	defer state.close()
	if v, failed := r.connect(ctx); failed {
		return r.finish(v)
	}
	if req.Reconcile != ReconcileOff && !req.Snapshot {
		r.startReconcile(ctx, requests)
	}
	if v, ended := r.waitForTurn(ctx, slots); ended {
		return r.finish(v)
	}
	release := slots.releaser()
	defer release()
	return r.finish(r.wait(ctx, release))
}

// clusterRun is one cluster's verification while it runs: what it has learnt so far, and
// what its result will report.
type clusterRun struct {
	req    Request
	target Target
	rep    *reporter
	start  time.Time
	// passes is where finish puts the number of assessments made.
	passes *int
	// state is the cluster's clients and memory, once they are built.
	state *clusterState
	out   result.Cluster

	// trig is the run's own reconcile requests, when it makes them; stopTrigger ends them.
	trig        *trigger
	stopTrigger func()
	// applied is when a pass first found the roots had applied the revision.
	applied time.Time
	since   sinceTracker
	// announcedApplied is set once progress has said the revision is applied.
	announcedApplied bool

	// confirms is when the pass may read consistently next (confirmations).
	confirms confirmations
	// preflightDone is set once the preflight needs no new look; before that, it looks again
	// at preflightAt.
	preflightDone bool
	preflightAt   time.Time
	// preflightWait is the object whose reconcile request the last preflight also checked the
	// controller of (assess.RequestControllers).
	preflightWait string
}

// finish is the cluster's result with verdict v, reported as its final progress.
func (r *clusterRun) finish(v verdictReason) result.Cluster {
	r.stopTrigger()
	if r.applied.IsZero() && v.Verdict == result.VerdictCurrent {
		// Current before an assessment marked the roots applied (a verdict from the
		// first look): they had applied the revision by now, at the latest.
		r.applied = r.req.Clock()
	}
	if r.trig != nil {
		r.out.Reconcile = r.trig.report(r.applied)
	}
	r.out.Verdict, r.out.Code, r.out.Reason, r.out.Message = v.Verdict, v.Code, v.Reason, v.Message
	r.out.DurationMs = r.req.Clock().Sub(r.start).Milliseconds()
	if !r.applied.IsZero() {
		r.out.AppliedMs = millis(r.applied.Sub(r.start))
	}
	r.since.stamp(&r.out)
	if r.out.Flux == nil {
		r.out.Flux = []result.FluxObject{}
	}
	if r.out.Objects == nil {
		r.out.Objects = []result.Object{}
	}
	if r.state != nil {
		*r.passes = r.state.mem.Passes()
	}
	r.rep.report(r.target.Name, r.req.Clock().Sub(r.start), r.out.Verdict, r.out.Summary(), progressFinal)
	return r.out
}

// connect probes the cluster; failed is set when the probe's answer is the verdict.
func (r *clusterRun) connect(ctx context.Context) (v verdictReason, failed bool) {
	r.rep.report(r.target.Name, 0, result.VerdictInProgress, "connecting", progressStep)
	// The probe is one small request: every cluster makes it at once, so an unreachable or
	// hung cluster never waits behind the others, nor makes them wait.
	if v, failed := r.state.probe(ctx); failed {
		return v, true
	}
	r.rep.report(r.target.Name, r.req.Clock().Sub(r.start), result.VerdictInProgress, "connected", progressMilestone)
	return verdictReason{}, false
}

// startReconcile starts the run's reconcile requests. They run beside the verification, which
// they never hold up; they end with the cluster's verdict (finish).
func (r *clusterRun) startReconcile(ctx context.Context, requests requestSlots) {
	r.trig = &trigger{start: r.start, poke: r.state.poke}
	tctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.state.requestReconcile(tctx, r.trig, requests)
	}()
	r.stopTrigger = func() {
		cancel()
		<-done
	}
	r.rep.report(r.target.Name, r.req.Clock().Sub(r.start), result.VerdictInProgress, "asking Flux to reconcile", progressMilestone)
}

// waitForTurn takes a connect slot. The first lists are the part that costs CPU and memory: at
// most MaxParallel clusters make them at once. Waiting afterwards costs nothing and holds no
// slot. A cluster that must wait for its turn waits without a connection (park), unless its
// reconcile requests are using it. ended is set, with the verdict, when the run ends first.
func (r *clusterRun) waitForTurn(ctx context.Context, slots *connectSlots) (v verdictReason, ended bool) {
	acquired := slots.tryAcquire()
	if !acquired {
		parked := r.trig == nil
		if parked {
			r.state.park()
		}
		if r.req.onTurnWait != nil {
			r.req.onTurnWait(r.target.Name, parked)
		}
	}
	if !acquired && !slots.acquire(ctx) {
		// The API server answered the probe; the wait was this run's own.
		turn := &assess.Assessment{Pending: &verdictReason{Verdict: result.VerdictInProgress, Reason: "WaitingForATurn",
			Message: fmt.Sprintf("the API server answered; the cluster was waiting for its turn to be read (at most %d clusters are read at once: max-parallel)", r.req.MaxParallel)}}
		return r.state.stopped(ctx, turn, assess.Facts{}), true
	}
	return verdictReason{}, false
}

// wait makes a pass at once, then after every change and at every recheck the last pass
// asked for, until a pass concludes or the run ends; it returns the verdict. It calls
// release, which gives the connect slot back, once the slot is no longer needed.
func (r *clusterRun) wait(ctx context.Context, release func()) verdictReason {
	holdUntil := r.req.Clock().Add(slotHold)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	notify := r.state.notifications()
	var (
		last      *assess.Assessment
		lastFacts assess.Facts
	)
	for {
		now := r.req.Clock()
		e, facts, c := r.pass(ctx, now)
		last, lastFacts = e, facts
		r.out.Flux, r.out.Objects = e.Flux, e.Objects
		// The slot goes back once no first list is on its way: all arrived, or the ones
		// left failed and wait for their retry (a server answering 500 or 429 costs nothing
		// to wait on), or after slotHold, for a server that is slow to answer.
		if !e.Listing || !now.Before(holdUntil) {
			release()
		}
		if c.Done && c.Verdict.Verdict == result.VerdictFailed {
			r.state.gatherEvidence(ctx, r.out.Objects)
		}
		r.state.dropEvidenceAhead() // (read for a failure this pass did not conclude)
		if c.Done {
			return c.Verdict
		}
		r.reportPending(now, e, c)
		if wake := wakeAt(e, now, holdUntil, r.req.ProgressSteps); !wake.IsZero() {
			timer.Reset(max(wake.Sub(now), 0))
		}
		select {
		case <-ctx.Done():
			return r.state.stopped(ctx, r.state.lastLook(last, r.req.Clock()), lastFacts)
		case <-notify:
			if !settleLists(ctx, last, notify, listSettle) {
				// (The run ended during the wait: the verdict is what the last assessment
				// waited for, as when it ends at the select.)
				return r.state.stopped(ctx, r.state.lastLook(last, r.req.Clock()), lastFacts)
			}
		case <-timer.C:
		}
	}
}

// pass is one look at the cluster at now: what is known assessed, confirmed
// (consistently), and concluded with the run's facts; before the cluster waits, the
// preflight.
func (r *clusterRun) pass(ctx context.Context, now time.Time) (*assess.Assessment, assess.Facts, assess.Conclusion) {
	e := r.state.assess(now)
	if r.applied.IsZero() && e.RootsApplied {
		r.applied = now
	}
	e = r.state.consistently(ctx, e, now, &r.confirms)
	// The timeline's moments are of the objects the result shows: a consistent read's, when
	// one replaced the watches' view.
	r.since.note(e, now.Sub(r.start))
	facts := assess.Facts{Snapshot: r.req.Snapshot}
	if r.trig != nil && r.state.awaitsHandling() {
		// The state before the run's own request would pass: wait for Flux to handle it.
		facts.Reconcile = r.state.unhandled(r.trig)
	}
	c := assess.Conclude(e, facts)
	if w := facts.Reconcile; w != nil && w.ID != r.preflightWait && len(assess.RequestControllers(w)) > 0 {
		// A request waited on whose controller the tree does not show: looked at too.
		r.preflightWait, r.preflightDone = w.ID, false
	}
	if !r.req.Snapshot && !r.preflightDone && !c.Done && c.Pending != nil && !e.Syncing && !now.Before(r.preflightAt) {
		c = r.preflight(ctx, e, &facts, c)
	}
	return e, facts, c
}

// preflight runs before the cluster waits: a Flux controller the tree needs that is down is
// named now, not waited out. It returns the conclusion, c or the preflight's verdict.
func (r *clusterRun) preflight(ctx context.Context, e *assess.Assessment, facts *assess.Facts, c assess.Conclusion) assess.Conclusion {
	pf := r.state.preflight(ctx, e, c.AwaitsReconcile, facts.Reconcile)
	r.out.Preflight = preflightResult(pf)
	r.preflightAt, r.preflightDone = pf.RetryAt, pf.RetryAt.IsZero()
	if pf.Fatal != nil {
		facts.Preflight, r.preflightDone = pf.Fatal, true
		c = assess.Conclude(e, *facts)
	}
	e.RecheckAt(pf.RetryAt)
	return c
}

// reportPending reports what a cluster that goes on waiting waits for, and once that the
// revision is applied.
func (r *clusterRun) reportPending(now time.Time, e *assess.Assessment, c assess.Conclusion) {
	if !r.announcedApplied && e.RootsApplied {
		// (Said only while the cluster still waits: a verdict at once says it all.)
		if msg := appliedMessage(e.Flux, r.req.Revision); msg != "" {
			r.announcedApplied = true
			r.rep.report(r.target.Name, now.Sub(r.start), result.VerdictInProgress, msg, progressMilestone)
		}
	}
	if c.Pending != nil {
		r.rep.report(r.target.Name, now.Sub(r.start), result.VerdictInProgress, c.Pending.Message, progressOf(c.Pending.Progress))
	}
}

// wakeAt is when a cluster that waits after assessment e at now makes its next pass without a
// change: the recheck e asks for, the end of the slot's hold while first lists are on their
// way, or, when the run shows its steps, in a second while an API server has not answered (to
// refresh the step "has not answered for Ns"); zero: only at a change.
//
// Without steps nothing a person sees changes with that count: a list's error, its arrival
// and a fetch's end each notify, and a wait that ends with time (the evidence's, a grace)
// asks for its own recheck. A server that answers 429 or 500 for the whole timeout then costs
// a pass at each of its answers, not one a second.
func wakeAt(e *assess.Assessment, now, holdUntil time.Time, steps bool) time.Time {
	wake := e.Recheck
	if e.Listing && now.Before(holdUntil) && (wake.IsZero() || holdUntil.Before(wake)) {
		wake = holdUntil
	}
	if steps && e.Syncing && (wake.IsZero() || now.Add(time.Second).Before(wake)) {
		wake = now.Add(time.Second) // refresh "has not answered for Ns"
	}
	return wake
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
// last assessment, concluded with the facts it was concluded with and the run's stop. A
// Timeout on a failure held for the run's own reconcile request (assess.Conclusion.
// HeldFailure) gets the evidence a Failed verdict gets, on the last assessment's objects:
// read once the deadline has passed, within heldEvidenceGrace.
func (s *clusterState) stopped(ctx context.Context, last *assess.Assessment, facts assess.Facts) verdictReason {
	if last == nil {
		last = &assess.Assessment{}
	}
	v, cause := stopVerdict(ctx)
	stop := &assess.Stop{Verdict: v, Cause: cause, Timeout: s.req.Timeout}
	stop.RetryAfter, stop.Throttled = s.throttled.recent()
	facts.Stop = stop
	c := assess.Conclude(last, facts)
	if c.HeldFailure {
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), heldEvidenceGrace)
		defer cancel()
		s.gatherEvidence(ectx, last.Objects)
	}
	return c.Verdict
}

// lastLook is what the verdict at the run's stop concludes from: last, the last pass's
// assessment, or, while last waited for lists still to come, a look at now, which says how long
// they have been waited for (a run that shows no steps makes no pass only to count that: see
// wakeAt). The look is used only while it still waits for lists and has found no failure: it
// reads no list again and makes no request.
func (s *clusterState) lastLook(last *assess.Assessment, now time.Time) *assess.Assessment {
	if last == nil || !last.Syncing {
		return last
	}
	e := assess.Assess(clusterView{s: s, lists: freezeLists(s.watches, s.moment(now))}, s.mem, s.spec(), now)
	if !e.Syncing || e.Fatal != nil {
		return last
	}
	return e
}

// heldEvidenceGrace bounds what the evidence of a failure held at the deadline may add to the
// run past its timeout: a few requests (events, a log tail), well under a second from a
// healthy API server; one that does not answer costs no more than this.
const heldEvidenceGrace = 3 * time.Second
