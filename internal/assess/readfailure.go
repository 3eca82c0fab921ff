package assess

import (
	"fmt"
	"strings"
	"time"

	"github.com/org/app-status-action/internal/result"
)

// ReadFailure is why a read failed, as the fetching side classified its error: typed, so that
// the decision words it (Explain) knowing what was read.
type ReadFailure struct {
	Cause ReadCause
	// Verdict is the verdict a credential provider's error means (ReadCredentials).
	Verdict result.Verdict
	// Said is what the error itself tells a person where its cause alone does not: a
	// credential provider's error, what is wrong with the API server's certificate, the end of
	// a network error (ReadCredentials, ReadTLS, ReadUnreachable).
	Said string
	// Detail is the API server's own message, or the error's when it has none.
	Detail string
	// RetryAfter is the wait a 429's Retry-After asked for (ReadThrottled); zero when none.
	RetryAfter time.Duration
}

// ReadCause is the kind of a read's failure.
type ReadCause int

// The causes of a read's failure.
const (
	// ReadOther is an error that is not about reaching the API server or being allowed to
	// read from it.
	ReadOther ReadCause = iota
	// ReadCredentials is a failure to obtain the request's credentials (a built-in cloud
	// provider's), which knows its verdict.
	ReadCredentials
	// ReadUnauthorized is a 401.
	ReadUnauthorized
	// ReadForbidden is a 403.
	ReadForbidden
	// ReadThrottled is a 429.
	ReadThrottled
	// ReadNotServed is a kind the cluster does not serve (no CRD, no mapping).
	ReadNotServed
	// ReadTLS is a problem with the API server's certificate, or with speaking TLS to it.
	ReadTLS
	// ReadUnreachable is an error of the network between here and the API server.
	ReadUnreachable
)

// Explanation is what an error of a read means for the cluster: Known is false for an error
// that is not about reaching the API server or being allowed to read; Detail is the API
// server's own message.
type Explanation struct {
	Verdict result.Verdict
	Message string
	Known   bool
	Detail  string
}

// Explain says what f means for the cluster when reading what, and what to do.
func (f ReadFailure) Explain(what string) Explanation {
	x := Explanation{Known: true, Detail: f.Detail}
	switch f.Cause {
	case ReadCredentials:
		x.Verdict, x.Message = f.Verdict, f.Said
	case ReadUnauthorized:
		x.Verdict = result.VerdictUnauthorized
		x.Message = fmt.Sprintf("the API server rejected the credentials (401) while reading %s: check that the token or client certificate in the kubeconfig is valid and not expired", what)
	case ReadForbidden:
		x.Verdict = result.VerdictForbidden
		x.Message = fmt.Sprintf("the credentials may not read %s (403): grant get, list and watch on it to the kubeconfig's user: %s", what, f.Detail)
	case ReadThrottled:
		x.Verdict, x.Message = result.VerdictThrottled, ThrottledMessage(f.RetryAfter, what)
	case ReadNotServed:
		x.Verdict, x.Message = result.VerdictNotFound, fmt.Sprintf("the cluster does not serve %s: is Flux installed?", what)
	case ReadTLS:
		x.Verdict, x.Message = result.VerdictInvalidConfig, f.Said
	case ReadUnreachable:
		x.Verdict, x.Message = result.VerdictUnreachable, "cannot reach the API server: "+f.Said
	default:
		return Explanation{Detail: f.Detail}
	}
	return x
}

// ReadFacts is what the fetching side found out about a list's reads, for the decision to
// word: why its last read failed, and whether this process itself was short of CPU while its
// first list was awaited.
type ReadFacts struct {
	// Failure classifies the list's Err (zero when it has none).
	Failure ReadFailure
	// CPUShort, when set, says this process was short of CPU for at least half of the wait
	// for the list's first list, once that wait is SlowListAfter long: the API server may
	// have answered in time.
	CPUShort *CPUShortage
}

// SlowListAfter is how long a first list may take before the wait is said to be the API
// server's (or, when this process was short of CPU, its own).
const SlowListAfter = 5 * time.Second

// CPUShortage is how short of CPU this process was: its threads' wait for a CPU per second
// they ran, and the goroutines' wait to run (zero when not long enough to tell).
type CPUShortage struct {
	WaitPerRun float64
	Latency    time.Duration
}

// Note says why a wait may not be the server's doing, and what to do.
func (c CPUShortage) Note() string {
	var how []string
	if c.WaitPerRun >= 1 {
		how = append(how, fmt.Sprintf("its threads waited %.1fs for a CPU for every second they ran", c.WaitPerRun))
	}
	if c.Latency > 0 {
		how = append(how, fmt.Sprintf("goroutines waited %s or more to run", c.Latency.Round(10*time.Millisecond)))
	}
	return fmt.Sprintf("this runner was short of CPU (%s), so the API server may have answered in time: "+
		"verify fewer clusters per runner (input shard), lower max-parallel, or give the step more CPU", strings.Join(how, "; "))
}

// waitingMessage says what a list that has no first list yet waits for at now: a server that
// has not answered, unless this process was short of CPU meanwhile (then it cannot tell).
func waitingMessage(l List, what string, now time.Time) string {
	if waited := now.Sub(l.WaitingSince()); waited >= SlowListAfter {
		if c := l.Read().CPUShort; c != nil {
			return fmt.Sprintf("the list of %s has not been read for %s: %s", what, waited.Round(time.Second), c.Note())
		}
		return fmt.Sprintf("the API server has not answered the list of %s for %s", what, waited.Round(time.Second))
	}
	return "waiting for the list of " + what
}
