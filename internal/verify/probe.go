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
