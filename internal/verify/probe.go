package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// The bounds of connecting to a cluster. A probe attempt that gets no answer in time is
// retried, up to probeAttempts counted (see probe for the ones that are not); a snapshot (get)
// tries less, to answer within seconds.
const (
	probeTimeout          = 5 * time.Second
	probeAttempts         = 3
	snapshotProbeTimeout  = 3 * time.Second
	snapshotProbeAttempts = 2
)

// probe reads the first requested Flux object once, directly, so an unreachable cluster,
// refused credentials or a bad certificate get their verdict in seconds instead of an informer
// retrying for ever. An attempt without an answer in probeTimeout is retried up to
// probeAttempts counted tries, never past the run's deadline; a missing object is not an error
// (it may be created).
func (s *clusterState) probe(ctx context.Context) (verdictReason, bool) {
	if len(s.req.Resources) == 0 {
		return verdictReason{}, false
	}
	p := s.newProber()
	for attempt := 0; attempt < p.attempts; {
		began := time.Now()
		timedOut, err := p.get(ctx)
		if err == nil || (apierrors.IsNotFound(err) && !isNotServed(err)) {
			return verdictReason{}, false
		}
		v, msg, ok := connectionVerdict(err, p.ref.ID())
		if ok && v != result.VerdictUnreachable {
			// An answer (refused credentials, a bad certificate...), even at the deadline.
			return verdictReason{Verdict: v, Reason: string(v), Message: msg}, true
		}
		starvedNow := false
		if isClientTimeout(err) || timedOut && !ok {
			// The wait ran out: the server's silence, or this client's own wait for a CPU.
			if waited, starved := s.req.cpu.starvedSince(began); starved {
				p.starvedFor, starvedNow = waited, true
			}
		}
		if ctx.Err() != nil {
			if time.Since(began) < p.timeout/2 && p.lastFullStarved {
				// Cut short by the deadline, too short to say much: the last whole try
				// says whether the runner was short of CPU.
				starvedNow = true
			}
			return p.deadline(ctx, err, timedOut, starvedNow)
		}
		// (An answer, a refusal included, says the runner could read it.)
		p.lastFullStarved = timedOut && starvedNow
		if wait, ok := s.throttled.recent(); ok {
			return verdictReason{Verdict: result.VerdictThrottled, Reason: string(result.VerdictThrottled), Message: assess.ThrottledMessage(wait, p.ref.ID())}, true
		}
		if starvedNow && p.uncounted < p.maxUncounted {
			p.uncounted++
			if !p.pause(ctx) {
				return p.deadline(ctx, err, timedOut, starvedNow)
			}
			continue
		}
		if v, failed, settled := p.count(ok, msg, timedOut, starvedNow); settled {
			return v, failed
		}
		attempt++
		if attempt == p.attempts {
			break
		}
		select {
		case <-ctx.Done():
			return p.deadline(ctx, err, timedOut, false)
		case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
		}
	}
	return p.unreachable, true
}

// prober is one probe's attempts, and what they found so far.
//
// An attempt that ran out of time while this client was short of CPU (for at least half of
// the attempt) says nothing about the server: it is not counted, and the next one follows
// a pause with jitter, so that a starved fleet's tries do not line up. In `verify` such
// attempts go on until one is answered (the CPU came back) or the run's deadline, whose
// Timeout says that the runner was short of CPU: never Unreachable, which would blame a
// server that may be fine (bench shards found 2647 healthy clusters of a crowded runner
// Unreachable after seven tries). `get` answers at once: past as many again as it counts,
// the server is Unreachable, and the message says the runner was short of CPU.
type prober struct {
	s   *clusterState
	ref flux.Ref
	// attempts is how many counted tries the probe makes, each of at most timeout.
	attempts int
	timeout  time.Duration
	// unreachable is the verdict if the last counted try is not answered either.
	unreachable verdictReason
	// starvedFor is how long the last starved try waited for a CPU.
	starvedFor cpuShortage
	// uncounted is the number of starved tries, which are not counted up to maxUncounted.
	uncounted, maxUncounted int
	// silent counts the tries that got no answer in time while the runner was not short of
	// CPU; lastFullStarved is whether the last try that ran its whole time was starved: a try
	// the deadline cuts short says little on its own.
	silent          int
	lastFullStarved bool
}

// newProber is the probe of the first requested Flux object, with the bounds of a snapshot
// (get) or of verify.
func (s *clusterState) newProber() *prober {
	p := &prober{s: s, ref: s.req.Resources[0], attempts: probeAttempts, timeout: probeTimeout, maxUncounted: math.MaxInt,
		unreachable: verdictReason{Verdict: result.VerdictUnreachable, Reason: string(result.VerdictUnreachable)}}
	if s.req.Snapshot {
		p.attempts, p.timeout = snapshotProbeAttempts, snapshotProbeTimeout
		p.maxUncounted = p.attempts
	}
	return p
}

// get is one attempt: a read of the object's metadata only, whose answer says the server is
// there, the credentials work and the kind is served, as the whole object would, without a
// Kustomization's inventory of thousands of entries to send and decode. timedOut is set when
// the attempt ran out of time.
func (p *prober) get(ctx context.Context) (timedOut bool, err error) {
	attemptCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	_, err = p.s.metadataClient.Resource(p.ref.Kind.GroupVersionResource()).Namespace(p.ref.Namespace).Get(attemptCtx, p.ref.Name, metav1.GetOptions{})
	return attemptCtx.Err() != nil, err
}

// pause waits before a try that follows an uncounted one, with jitter; it returns false if the
// run ended first.
func (p *prober) pause(ctx context.Context) bool {
	pause := time.Duration(min(p.uncounted, 4)) * 500 * time.Millisecond
	select {
	case <-ctx.Done():
		return false
	case <-time.After(pause + rand.N(pause/2)): //nolint:gosec // jitter, not a secret
		return true
	}
}

// count counts a try that was not answered, or whose error says the server is unreachable
// (ok, with its message msg). settled is set when the probe ends with it, with its verdict
// and whether the cluster failed.
func (p *prober) count(ok bool, msg string, timedOut, starved bool) (v verdictReason, failed, settled bool) {
	switch {
	case ok:
		p.unreachable.Message = msg
	case timedOut && starved:
		// get, past its bound: every try ran out of time, this one starved too.
		p.unreachable.Message = fmt.Sprintf("the API server did not answer within %s (%s); %s", p.timeout, tries(p.silent+p.uncounted+1), starvedNote(p.starvedFor))
		return p.unreachable, true, true
	case timedOut:
		p.silent++
		p.unreachable.Message = fmt.Sprintf("the API server did not answer within %s (%s)", p.timeout, tries(p.silent))
		if p.uncounted > 0 {
			p.unreachable.Message += fmt.Sprintf("; not counted: %s while this runner was short of CPU", tries(p.uncounted))
		}
	default:
		return verdictReason{}, false, true // the informers will meet it again and say more
	}
	return verdictReason{}, false, false
}

// deadline is the verdict when the run's deadline (or a cancellation) came first, from how
// the last attempt ended.
func (p *prober) deadline(ctx context.Context, err error, timedOut, starved bool) (verdictReason, bool) {
	v, msg := stopVerdict(ctx)
	message := cmp.Or(msg, fmt.Sprintf("timed out after %s", p.s.req.Timeout)) + " while connecting: "
	if starved {
		message += "no answer read: "
		if p.silent > 0 {
			// Said first: the advice that ends the note stays last.
			message += fmt.Sprintf("%s, while the runner was not short of CPU, got no answer within %s; then ", tries(p.silent), p.timeout)
		}
		message += starvedNote(p.starvedFor)
	} else {
		message += connectingMessage(err, timedOut)
	}
	return verdictReason{Verdict: v, Reason: string(v), Message: message}, true
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
