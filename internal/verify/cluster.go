package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/result"
)

// The bounds of connecting to a cluster. A probe attempt that gets no answer in time is
// retried, up to probeAttempts counted (see probe for the ones that are not); a snapshot (get)
// tries less, to answer within seconds. A cluster holds its connect slot while its first lists
// are on their way, at most slotHold: one whose lists fail, or take longer, gives it back and
// goes on waiting, so failing or slow servers never starve the others.
const (
	probeTimeout          = 5 * time.Second
	probeAttempts         = 3
	snapshotProbeTimeout  = 3 * time.Second
	snapshotProbeAttempts = 2
	slotHold              = 5 * time.Second
)

// verdictReason explains a verdict.
type verdictReason = assess.Finding

// clusterState is what verifying one cluster keeps between assessments: its clients, its
// watches (or lists), the reads off the assessment (fetcher) and the run's memory.
type clusterState struct {
	req      Request
	ctx      context.Context // the cluster's own: cancelled when its verdict is given
	watches  objectCache
	closeAll func()

	httpClient     *http.Client
	dialed         *dialedConns
	core           corev1client.CoreV1Interface // events, logs and Helm's storage Secrets
	dynamicClient  dynamic.Interface
	metadataClient metadata.Interface
	throttled      *throttleRecorder
	// releasesMu guards releases, what the Helm storage secrets read list (assess.ReleaseNeed).
	releasesMu sync.Mutex
	releases   map[string]assess.StoredRelease
	// configsMu guards configs, the checksums of the data of the ConfigMaps and Secrets a
	// Flagger Canary tracks (assess.ConfigNeed), by object: the last read of each.
	configsMu sync.Mutex
	configs   map[string]storedConfig

	// mem is the run's own memory, which only assess.Assess and assess.Preflight change.
	mem *assess.Memory
	// readOrder numbers the cluster's list reads (assess.Snapshot).
	readOrder *readOrder

	// disco asks the API server which resources a group version serves (discover), off the
	// assessment (fetches).
	disco discovery.DiscoveryInterface
	// mappingsMu guards mappings and mappingErrs, which assessments read; it is never held
	// while discovery runs.
	mappingsMu sync.Mutex
	// mappings caches discovery's answers: every assessment maps every inventory object.
	mappings map[schema.GroupVersionKind]*meta.RESTMapping
	// mappingErrs is the last error of discovery for a kind, shown while it is asked again.
	mappingErrs map[schema.GroupVersionKind]error
	// fetches runs discovery and Helm storage reads off the assessment.
	fetches *fetcher
}

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

// newClusterState builds the clients for a cluster and its object cache: informers, or lists
// for a snapshot. Nothing is contacted yet. The clients share one HTTP client (see
// newClusterHTTPClient), so the cluster gets one connection (one TLS handshake).
func newClusterState(ctx context.Context, req Request, config *rest.Config) (*clusterState, error) {
	cfg := rest.CopyConfig(config)
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "app-status-action"
	throttled := &throttleRecorder{clock: req.Clock}
	cfg.Wrap(throttled.wrap)
	h, err := newClusterHTTPClient(cfg, req.onHandshake)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	httpClient := h.client
	dyn, err := newDynamicClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	md, err := metadata.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	// Only the core API is read with typed clients: the whole clientset would build ~50 REST
	// clients for every cluster of the fleet.
	core, err := corev1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	// Discovery requests get a deadline of their own (watches must have none), over the same
	// connections, and end with the cluster's verification (the discovery client takes no
	// context).
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, &http.Client{Transport: boundTransport{rt: httpClient.Transport, ctx: ctx}, Timeout: listTimeout})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("build client: %w", err)
	}
	s := &clusterState{
		req: req, ctx: ctx, httpClient: httpClient, dialed: h.dialed, core: core, dynamicClient: dyn, metadataClient: md, throttled: throttled,
		disco: disco,
		mem:   assess.NewMemory(), readOrder: &readOrder{}, mappings: map[schema.GroupVersionKind]*meta.RESTMapping{},
	}
	if req.Snapshot {
		s.watches = newListSet(ctx, dyn, md, req.Clock, s.readOrder, snapshotListTimeout)
		s.fetches = newFetcher(ctx, func() {}, true)
		s.closeAll = cancel
	} else {
		notify := make(chan struct{}, 1)
		ws := newWatchSet(ctx, dyn, md, req.Clock, func() {
			select {
			case notify <- struct{}{}:
			default:
			}
		})
		ws.notifyCh = notify
		s.watches = ws
		s.fetches = newFetcher(ctx, ws.notify, false)
		s.closeAll = func() {
			cancel()
			ws.close()
			s.fetches.wait()
		}
	}
	return s, nil
}

// poke wakes the cluster's loop, as a change of a watched object does.
func (s *clusterState) poke() {
	if ws, ok := s.watches.(*watchSet); ok {
		ws.notify()
	}
}

// notifications is the channel that says something changed (never for a snapshot).
func (s *clusterState) notifications() <-chan struct{} {
	if ws, ok := s.watches.(*watchSet); ok {
		return ws.notifyCh
	}
	return nil
}

// close stops every informer, waits for their goroutines and closes the idle connections of
// the transport underneath client-go's wrappers (http.Client's own CloseIdleConnections stops
// at the first wrapper).
func (s *clusterState) close() {
	s.closeAll()
	utilnet.CloseIdleConnectionsFor(s.httpClient.Transport)
	s.dialed.closeAll()
}

// park closes the cluster's idle connections (the probe's) while it waits for its turn: the
// first lists open a new one, which resumes the probe's TLS session where the server allows it
// (newClusterHTTPClient), so the client key does not sign again and the server's certificate
// signatures are not checked again. Open, each would hold its TLS and HTTP/2 buffers and a
// reader goroutine, about 30 KB and a stack; a fleet of 1000 clusters with 20 read at once held
// about 1000 of them at its peak, 60 MiB of its 310 MiB. The new connection costs about 0.5 ms
// of CPU (its key exchange, HTTP/2's set-up and reads). With client-go's HTTP/2 pings (a
// cluster behind a proxy, HTTP2_READ_IDLE_TIMEOUT_SECONDS), the ping's timer holds a closed
// connection's buffers for its period (newClusterHTTPClient), so parking frees less there.
func (s *clusterState) park() {
	utilnet.CloseIdleConnectionsFor(s.httpClient.Transport)
}

// probe reads the first requested Flux object once, directly, so an unreachable cluster,
// refused credentials or a bad certificate get their verdict in seconds instead of an informer
// retrying for ever. An attempt without an answer in probeTimeout is retried up to
// probeAttempts counted tries, never past the run's deadline; a missing object is not an error
// (it may be created).
func (s *clusterState) probe(ctx context.Context) (verdictReason, bool) {
	if len(s.req.Resources) == 0 {
		return verdictReason{}, false
	}
	ref := s.req.Resources[0]
	attempts, timeout := probeAttempts, probeTimeout
	if s.req.Snapshot {
		attempts, timeout = snapshotProbeAttempts, snapshotProbeTimeout
	}
	unreachable := verdictReason{Verdict: result.VerdictUnreachable, Reason: string(result.VerdictUnreachable)}
	// An attempt that ran out of time while this client was short of CPU (for at least half of
	// the attempt) says nothing about the server: it is not counted, and the next one follows
	// a pause with jitter, so that a starved fleet's tries do not line up. In `verify` such
	// attempts go on until one is answered (the CPU came back) or the run's deadline, whose
	// Timeout says that the runner was short of CPU: never Unreachable, which would blame a
	// server that may be fine (bench shards found 2647 healthy clusters of a crowded runner
	// Unreachable after seven tries). `get` answers at once: past as many again as it counts,
	// the server is Unreachable, and the message says the runner was short of CPU.
	var starvedFor cpuShortage
	uncounted, maxUncounted := 0, math.MaxInt
	if s.req.Snapshot {
		maxUncounted = attempts
	}
	// silent counts the tries that got no answer in time while the runner was not short of
	// CPU; lastFullStarved is whether the last try that ran its whole time was starved: a try
	// the deadline cuts short says little on its own.
	silent, lastFullStarved := 0, false
	// deadline is the verdict when the run's deadline (or a cancellation) came first, from how
	// the last attempt ended.
	deadline := func(err error, timedOut, starved bool) (verdictReason, bool) {
		v, msg := stopVerdict(ctx)
		message := cmp.Or(msg, fmt.Sprintf("timed out after %s", s.req.Timeout)) + " while connecting: "
		if starved {
			message += "no answer read: "
			if silent > 0 {
				// Said first: the advice that ends the note stays last.
				message += fmt.Sprintf("%s, while the runner was not short of CPU, got no answer within %s; then ", tries(silent), timeout)
			}
			message += starvedNote(starvedFor)
		} else {
			message += connectingMessage(err, timedOut)
		}
		return verdictReason{Verdict: v, Reason: string(v), Message: message}, true
	}
	for attempt := 0; attempt < attempts; {
		began := time.Now()
		attemptCtx, cancel := context.WithTimeout(ctx, timeout)
		// Its metadata only: the answer says the server is there, the credentials work and
		// the kind is served, as the whole object would, without a Kustomization's inventory
		// of thousands of entries to send and decode.
		_, err := s.metadataClient.Resource(ref.Kind.GroupVersionResource()).Namespace(ref.Namespace).Get(attemptCtx, ref.Name, metav1.GetOptions{})
		timedOut := attemptCtx.Err() != nil
		cancel()
		if err == nil || (apierrors.IsNotFound(err) && !isNotServed(err)) {
			return verdictReason{}, false
		}
		v, msg, ok := connectionVerdict(err, ref.ID())
		if ok && v != result.VerdictUnreachable {
			// An answer (refused credentials, a bad certificate...), even at the deadline.
			return verdictReason{Verdict: v, Reason: string(v), Message: msg}, true
		}
		starvedNow := false
		if isClientTimeout(err) || timedOut && !ok {
			// The wait ran out: the server's silence, or this client's own wait for a CPU.
			if waited, starved := s.req.cpu.starvedSince(began); starved {
				starvedFor, starvedNow = waited, true
			}
		}
		if ctx.Err() != nil {
			if time.Since(began) < timeout/2 && lastFullStarved {
				// Cut short by the deadline, too short to say much: the last whole try
				// says whether the runner was short of CPU.
				starvedNow = true
			}
			return deadline(err, timedOut, starvedNow)
		}
		// (An answer, a refusal included, says the runner could read it.)
		lastFullStarved = timedOut && starvedNow
		if wait, ok := s.throttled.recent(); ok {
			return verdictReason{Verdict: result.VerdictThrottled, Reason: string(result.VerdictThrottled), Message: assess.ThrottledMessage(wait, ref.ID())}, true
		}
		if starvedNow && uncounted < maxUncounted {
			uncounted++
			pause := time.Duration(min(uncounted, 4)) * 500 * time.Millisecond
			select {
			case <-ctx.Done():
				return deadline(err, timedOut, starvedNow)
			case <-time.After(pause + rand.N(pause/2)): //nolint:gosec // jitter, not a secret
			}
			continue
		}
		switch {
		case ok:
			unreachable.Message = msg
		case timedOut && starvedNow:
			// get, past its bound: every try ran out of time, this one starved too.
			unreachable.Message = fmt.Sprintf("the API server did not answer within %s (%s); %s", timeout, tries(silent+uncounted+1), starvedNote(starvedFor))
			return unreachable, true
		case timedOut:
			silent++
			unreachable.Message = fmt.Sprintf("the API server did not answer within %s (%s)", timeout, tries(silent))
			if uncounted > 0 {
				unreachable.Message += fmt.Sprintf("; not counted: %s while this runner was short of CPU", tries(uncounted))
			}
		default:
			return verdictReason{}, false // the informers will meet it again and say more
		}
		attempt++
		if attempt == attempts {
			break
		}
		select {
		case <-ctx.Done():
			return deadline(err, timedOut, false)
		case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
		}
	}
	return unreachable, true
}

// tries says n tries.
func tries(n int) string {
	if n == 1 {
		return "1 try"
	}
	return fmt.Sprintf("%d tries", n)
}

// connectingMessage says how the last probe attempt ended.
func connectingMessage(err error, timedOut bool) string {
	if timedOut || errors.Is(err, context.DeadlineExceeded) {
		return "no answer from the API server yet"
	}
	return err.Error()
}

// throttleRecorder remembers the last 429 Too Many Requests a cluster's API server answered,
// and the wait it asked for, so a cluster that times out because it is throttled says so.
type throttleRecorder struct {
	clock      func() time.Time
	mu         sync.Mutex
	last       time.Time
	retryAfter time.Duration
}

func (t *throttleRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return &throttleRoundTripper{next: rt, recorder: t}
}

// throttleRoundTripper records the 429s its requests get. It says what it wraps, so that
// closing the idle connections reaches the transport underneath.
type throttleRoundTripper struct {
	next     http.RoundTripper
	recorder *throttleRecorder
}

func (t *throttleRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		wait := time.Duration(0)
		if secs, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && secs > 0 {
			wait = time.Duration(secs) * time.Second
		}
		t.recorder.mu.Lock()
		t.recorder.last, t.recorder.retryAfter = t.recorder.clock(), wait
		t.recorder.mu.Unlock()
	}
	return resp, err
}

// WrappedRoundTripper is the transport underneath.
func (t *throttleRoundTripper) WrappedRoundTripper() http.RoundTripper { return t.next }

// recent returns the wait the last 429 asked for, when one came in the last minute.
func (t *throttleRecorder) recent() (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last.IsZero() || t.clock().Sub(t.last) > time.Minute {
		return 0, false
	}
	return t.retryAfter, true
}

// mapping finds the resource of a kind through discovery of its group version alone (the
// resources one group version serves, never the whole API: see discover). A kind the read
// does not find, or a read that failed, is read again once the read is mappingRetry old: a
// kind the cluster starts serving since, such as one whose CRD the app itself installs, is
// found then, and a kind first asked of an old read is never told "not served" from it.
func (s *clusterState) mapping(gvk schema.GroupVersionKind, now time.Time) (m *meta.RESTMapping, done bool, err error) {
	s.mappingsMu.Lock()
	m, ok := s.mappings[gvk]
	lastErr := s.mappingErrs[gvk]
	s.mappingsMu.Unlock()
	if ok {
		return m, true, nil
	}
	if gvk.Version == "" {
		// Flux's inventories and Helm's manifests name every object's version; this one
		// names none, and a kind is served per version.
		return nil, true, fmt.Errorf("the inventory gives %s no API version", schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind})
	}
	// One read per group version, whatever number of its kinds the inventories list: they
	// share it, and reads of different group versions run at once.
	gv := gvk.GroupVersion()
	key := "discovery " + gv.String()
	read := func(context.Context) (any, error) {
		mapper, err := s.discover(gv)
		return discovered{mapper: mapper, at: now}, err
	}
	v, done, err := s.fetches.get(key, read)
	if done {
		m, err = mappingFrom(gvk, v, err)
		if d, _ := v.(discovered); err != nil && now.Sub(d.at) >= mappingRetry {
			s.fetches.forget(key)
			v, done, err = s.fetches.get(key, read)
			if done {
				m, err = mappingFrom(gvk, v, err)
			}
		}
	}
	if !done {
		// Asked again: the last answer stands meanwhile.
		return nil, lastErr != nil, lastErr
	}
	s.mappingsMu.Lock()
	defer s.mappingsMu.Unlock()
	if err != nil {
		if s.mappingErrs == nil {
			s.mappingErrs = map[schema.GroupVersionKind]error{}
		}
		s.mappingErrs[gvk] = err
		return nil, true, err
	}
	s.mappings[gvk] = m
	delete(s.mappingErrs, gvk)
	return m, true, nil
}

// mappingFrom is a kind's mapping in the read of its group version (a discovered, and the
// read's error).
func mappingFrom(gvk schema.GroupVersionKind, v any, readErr error) (*meta.RESTMapping, error) {
	if readErr != nil {
		return nil, discoveryError(gvk, readErr)
	}
	d, _ := v.(discovered)
	m, err := d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case meta.IsNoMatchError(err):
		return nil, assess.NotServedError{GVK: gvk}
	case err != nil:
		return nil, fmt.Errorf("discover %s: %w", gvk.Kind, err)
	}
	return m, nil
}

// mappingRetry is how long a kind that could not be mapped waits before it is asked again:
// the decision's own (assess.MappingRetry), which rechecks then.
const mappingRetry = assess.MappingRetry

// discovered is the answer of discovery for a group version, and when it was asked.
type discovered struct {
	mapper meta.RESTMapper
	at     time.Time
}

// discover asks the API server for the resources of one group version (/apis/GROUP/VERSION,
// /api/v1) and returns client-go's discovery mapper over them: the same resource and scope
// for a kind as discovery of the whole API gives, for a few kilobytes. The whole API (what
// /api and /apis answer, aggregated) lists every resource of every CRD the cluster has, often
// megabytes to decode and hold per cluster, and fails or lags with any aggregated API server
// that is down. It runs off the assessment (fetcher): the discovery client has a deadline of
// its own and ends with the cluster's verification.
func (s *clusterState) discover(gv schema.GroupVersion) (meta.RESTMapper, error) {
	list, err := s.disco.ServerResourcesForGroupVersion(gv.String())
	if err != nil {
		return nil, err
	}
	group := metav1.APIGroup{
		Name:             gv.Group,
		Versions:         []metav1.GroupVersionForDiscovery{{GroupVersion: gv.String(), Version: gv.Version}},
		PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version},
	}
	return restmapper.NewDiscoveryRESTMapper([]*restmapper.APIGroupResources{{
		Group:              group,
		VersionedResources: map[string][]metav1.APIResource{gv.Version: list.APIResources},
	}}), nil
}

// discoveryError says why a kind's group version could not be read: not served (404), or
// what the API server answered.
func discoveryError(gvk schema.GroupVersionKind, err error) error {
	if apierrors.IsNotFound(err) {
		return assess.NotServedError{GVK: gvk}
	}
	return fmt.Errorf("discover %s: %w", gvk.Kind, err)
}
