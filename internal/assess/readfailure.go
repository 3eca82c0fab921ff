package assess

import (
	"fmt"
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
