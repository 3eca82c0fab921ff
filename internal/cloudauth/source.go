package cloudauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"golang.org/x/oauth2"

	"github.com/org/app-status-action/internal/result"
)

// token is a bearer token and when it stops being accepted.
type token struct {
	value  string
	expiry time.Time
}

// fetcher obtains a fresh token. Its errors are *Error when the provider knows what they
// mean; others are classified by what they say about the token endpoint.
type fetcher func(ctx context.Context) (token, error)

// Source is the token of one cluster's built-in provider: obtained on the first request,
// shared by every request to the cluster, replaced in the background before it expires (the
// old one serves until then), and replaced at once when the API server rejects it. A failure
// is reported to the requests as an *Error and reused for a few seconds.
type Source struct {
	cloud   string // "EKS", "GKE" or "AKS"
	what    string // "EKS credentials (aws eks get-token, built in)", for messages
	refused string // what to check when the API server refuses the token
	// refusedBy, when set, says what to check when the API server refuses the token given
	// (an ID token's own claims), instead of refused.
	refusedBy func(token string) string
	fetch     fetcher
	locate    locator   // asks the cloud where the cluster is; nil when the provider cannot
	locatable locatable // why the cloud cannot be asked about an entry's cluster; nil when it always can
	pin       *pinned   // what RequireEndpoint checks before any request; nil when nothing is
	opts      Options
	secrets   *secrets

	mu        sync.Mutex
	current   token
	refreshAt time.Time
	call      *fetchCall // the fetch in flight, if any
	failed    *Error     // the last fetch's failure, reused until retryAt
	retryAt   time.Time
}

type fetchCall struct {
	done  chan struct{}
	value string
	err   *Error
}

// Cloud is the cloud whose token the source obtains: "EKS", "GKE" or "AKS".
func (s *Source) Cloud() string { return s.cloud }

// Name names the provider in messages: "EKS credentials (aws eks get-token, built in)".
func (s *Source) Name() string { return s.what }

// Token returns a token to present now, obtaining one first when none is valid. It waits at
// most until ctx ends.
func (s *Source) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	now := s.opts.Clock()
	if s.current.value != "" && now.Before(s.refreshAt) {
		defer s.mu.Unlock()
		return s.current.value, nil
	}
	if s.failed != nil && now.Before(s.retryAt) {
		defer s.mu.Unlock()
		return "", s.failed
	}
	call := s.startLocked(ctx)
	if s.current.value != "" && now.Before(s.current.expiry) {
		defer s.mu.Unlock()
		return s.current.value, nil // still valid: the refresh runs in the background
	}
	s.mu.Unlock()
	select {
	case <-call.done:
		if call.err != nil {
			return "", call.err
		}
		return call.value, nil
	case <-ctx.Done():
		return "", &Error{Verdict: result.VerdictUnreachable, err: ctx.Err(),
			Message: s.what + ": no token yet (the request ended while waiting for the token endpoint): " + ctx.Err().Error()}
	}
}

// startLocked returns the fetch in flight, starting one when there is none. The fetch is
// bounded by Options.Timeout and outlives the request that started it, so the requests that
// wait for it share it.
func (s *Source) startLocked(ctx context.Context) *fetchCall {
	if s.call != nil {
		return s.call
	}
	call := &fetchCall{done: make(chan struct{})}
	s.call = call
	go func() {
		tok, err := s.fetchWithin(context.WithoutCancel(ctx))
		if err == nil && tok.value == "" {
			err = errors.New("the token endpoint returned an empty token")
		}
		if err == nil {
			s.secrets.add(tok.value) // masked before any request can carry it
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.call = nil
		now := s.opts.Clock()
		if err != nil {
			call.err = s.asError(err)
			s.failed, s.retryAt = call.err, now.Add(errorBackoff)
		} else {
			call.value = tok.value
			s.current, s.refreshAt, s.failed = tok, refreshTime(now, tok.expiry, s.opts.RefreshMargin), nil
		}
		close(call.done)
	}()
	return call
}

// fetchWithin runs the provider's fetch for at most Options.Timeout: an SDK that ignores its
// context (or a token endpoint that never answers) cannot hold the requests longer.
func (s *Source) fetchWithin(ctx context.Context) (token, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	type outcome struct {
		tok token
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		tok, err := s.fetch(ctx)
		done <- outcome{tok, err}
	}()
	select {
	case o := <-done:
		return o.tok, o.err
	case <-ctx.Done():
		return token{}, &Error{Verdict: result.VerdictUnreachable, err: ctx.Err(),
			Message: fmt.Sprintf("no token within %s: the token endpoint did not answer", s.opts.Timeout)}
	}
}

// refreshTime is when a token obtained at now and expiring at expiry is replaced: margin
// before it expires, or halfway through its remaining life when that is shorter (a provider
// may hand out a cached token that is already old).
func refreshTime(now, expiry time.Time, margin time.Duration) time.Time {
	life := expiry.Sub(now)
	if life <= 0 {
		return now
	}
	return expiry.Add(-min(margin, life/2))
}

// invalidate drops a token the API server rejected, so the next request obtains a new one. A
// token already replaced is left alone.
func (s *Source) invalidate(value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current.value == value {
		s.current = token{}
	}
}

// asError turns a provider's error into the cluster's verdict and a message naming the
// provider.
func (s *Source) asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return &Error{Verdict: e.Verdict, Message: s.what + ": " + e.Message, err: e.err, cannotLocate: e.cannotLocate}
	}
	return &Error{Verdict: classify(err), Message: s.what + ": could not get a token: " + s.secrets.quote(err), err: err}
}

// classify says what an SDK's failure to obtain a token means: a token endpoint that refused
// (a 4xx) is Unauthorized, one that could not be reached or failed (a 5xx, a 429, a network
// error, a timeout) Unreachable.
func classify(err error) result.Verdict {
	if status := httpStatus(err); status != 0 {
		if status >= 500 || status == http.StatusTooManyRequests {
			return result.VerdictUnreachable
		}
		return result.VerdictUnauthorized
	}
	var netErr net.Error
	var urlErr *url.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) || errors.As(err, &urlErr) || networkText.MatchString(err.Error()) {
		return result.VerdictUnreachable
	}
	return result.VerdictUnauthorized
}

// networkText recognises a network failure in the SDKs that quote an error instead of
// wrapping it (the Google and Azure SDKs do).
var networkText = regexp.MustCompile(`connection refused|connection reset|no such host|i/o timeout|network is unreachable|` +
	`TLS handshake|context deadline exceeded|Client\.Timeout exceeded|EOF$`)

// statusText finds the HTTP status the Google SDK quotes: "status code 403: ...".
var statusText = regexp.MustCompile(`status code (\d{3})`)

// httpStatus finds the HTTP status of a token endpoint's answer in an SDK's error, or 0.
func httpStatus(err error) int {
	var withStatus interface{ HTTPStatusCode() int } // the AWS SDK's response errors
	var retrieve *oauth2.RetrieveError
	var azure *azidentity.AuthenticationFailedError
	switch {
	case errors.As(err, &withStatus):
		return withStatus.HTTPStatusCode()
	case errors.As(err, &retrieve) && retrieve.Response != nil:
		return retrieve.Response.StatusCode
	case errors.As(err, &azure) && azure.RawResponse != nil:
		return azure.RawResponse.StatusCode
	}
	if m := statusText.FindStringSubmatch(err.Error()); m != nil {
		status, _ := strconv.Atoi(m[1])
		return status
	}
	return 0
}

// WrapTransportFor is for rest.Config.WrapTransport: every request to server (the cluster's
// own API server: its scheme, host and port) gets the source's token as its bearer token, and
// a request the API server answers 401 is sent once more with a new token when the old one was
// replaced; a 401 that stands is an *Error (Unauthorized) that names the provider and what to
// check. A request to any other host (one the server redirects to) goes as it is, without
// the token, so a compromised server answering 302 cannot send it elsewhere. With
// RequireEndpoint, no request is sent, and no token obtained, until the cloud has said that
// the server and CA are the cluster's. It works with client-go's transport cache, which caches
// the transport below it, and with one HTTP client shared by a cluster's clients.
func (s *Source) WrapTransportFor(server string) func(http.RoundTripper) http.RoundTripper {
	origin := serverOrigin(server)
	return func(next http.RoundTripper) http.RoundTripper {
		return &bearerTransport{source: s, origin: origin, next: next}
	}
}

type bearerTransport struct {
	source *Source
	origin string // the server's scheme://host:port; "" (not a URL) matches no request
	next   http.RoundTripper
}

// serverOrigin is a server's scheme://host:port, the host in lower case and the port the
// scheme's when none is given; a server without a scheme is taken as https, as client-go
// takes one with TLS. "" when server is not a URL.
func serverOrigin(server string) string {
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return ""
	}
	return requestOrigin(u)
}

// requestOrigin is a URL's scheme://host:port, as serverOrigin gives it.
func requestOrigin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		port = "443"
		if scheme == "http" {
			port = "80"
		}
	}
	// A final dot is kept: "host." and "host" may be different servers (DNS search domains).
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

func (t *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.origin == "" || requestOrigin(req.URL) != t.origin {
		return t.next.RoundTrip(req) // not the cluster's server: no token
	}
	if err := t.source.checkEndpoint(req); err != nil {
		return nil, err
	}
	tok, err := t.source.Token(req.Context())
	if err != nil {
		return nil, err
	}
	resp, err := t.next.RoundTrip(withBearer(req, tok))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	if replayable(req) {
		t.source.invalidate(tok)
		if fresh, ferr := t.source.Token(req.Context()); ferr == nil && fresh != tok {
			retry := withBearer(req, fresh)
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return resp, nil
				}
				retry.Body = body
			}
			discard(resp)
			if resp, err = t.next.RoundTrip(retry); err != nil || resp.StatusCode != http.StatusUnauthorized {
				return resp, err
			}
			tok = fresh
		}
	}
	// The 401 stands: say whose token it was and what to check, rather than the API server's
	// generic answer.
	discard(resp)
	check := t.source.refused
	if t.source.refusedBy != nil {
		check = t.source.refusedBy(tok)
	}
	return nil, &Error{Verdict: result.VerdictUnauthorized,
		Message: t.source.what + ": the API server refused the token (401): " + check}
}

// discard drains and closes an answer that is not passed on.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// WrappedRoundTripper lets client-go's debugging and cancellation helpers see through.
func (t *bearerTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// withBearer is a copy of req that carries the token; a RoundTripper must not change the
// request it was given.
func withBearer(req *http.Request, tok string) *http.Request {
	out := req.Clone(req.Context())
	out.Header.Set("Authorization", "Bearer "+tok)
	return out
}

// replayable reports whether a request can be sent again.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}
