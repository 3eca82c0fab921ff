package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v89/github"
	"golang.org/x/time/rate"
)

// GitHub's limits on content-creating requests for one token are 80 a minute and 500 an
// hour (its secondary rate limits). A run writes at most 70 a minute (a burst of 10, then one
// every 6/7 s) and gives up live updates past liveWriteBudget writes, so that every final
// status still fits in the hour.
const (
	writesPerMinute = 70
	writeBurst      = 10
	liveWriteBudget = 300
	// maxWait is the longest a request waits for a rate limit to reset before it gives up.
	maxWait = 2 * time.Minute
	// serverRetries is how many times a 5xx or a transport error is retried.
	serverRetries = 2
)

// api is the part of GitHub's REST API the publisher calls, through go-github.
type api struct {
	gh          *github.Client
	graphQL     string // the GraphQL endpoint's URL
	owner, repo string
	writes      *rate.Limiter
	clock       func() time.Time
	sleep       func(ctx context.Context, d time.Duration) error
}

func newAPI(cfg Config) (*api, error) {
	owner, repo, ok := strings.Cut(cfg.Repository, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name: run it in a GitHub Actions job, or set GITHUB_REPOSITORY", cfg.Repository)
	}
	base := cfg.APIURL
	if base == "" {
		base = "https://api.github.com"
	}
	u, err := url.Parse(strings.TrimSuffix(base, "/") + "/")
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("GITHUB_API_URL %q is not an http(s) URL", base)
	}
	graphQL := cfg.GraphQLURL
	if graphQL == "" {
		graphQL = graphQLURL(u)
	}
	if g, err := url.Parse(graphQL); err != nil || (g.Scheme != "https" && g.Scheme != "http") || g.Host == "" {
		return nil, fmt.Errorf("GITHUB_GRAPHQL_URL %q is not an http(s) URL", graphQL)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	base = u.String()
	opts := []github.ClientOptionsFunc{
		github.WithHTTPClient(hc), github.WithURLs(&base, nil), github.WithUserAgent("app-status-action"),
	}
	if cfg.Token != "" { // New refuses an empty token before this
		opts = append(opts, github.WithAuthToken(cfg.Token))
	}
	gh, err := github.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("GitHub client for %s: %w", base, err)
	}
	clock := cfg.Clock
	if clock == nil {
		clock = time.Now
	}
	return &api{gh: gh, graphQL: graphQL, owner: owner, repo: repo, clock: clock, sleep: sleepCtx,
		writes: rate.NewLimiter(rate.Every(time.Minute/writesPerMinute), writeBurst)}, nil
}

// graphQLURL is the GraphQL endpoint beside a REST API's base URL (with its trailing slash):
// https://api.github.com/graphql, or HOST/api/graphql beside GitHub Enterprise Server's
// HOST/api/v3/.
func graphQLURL(rest *url.URL) string {
	g := *rest
	if base, ok := strings.CutSuffix(g.Path, "/api/v3/"); ok {
		g.Path = base + "/api/graphql"
	} else {
		g.Path += "graphql"
	}
	return g.String()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// call runs one request, paced when it writes, and retries it when GitHub asks to wait (a
// primary or secondary rate limit: retry-after, x-ratelimit-reset) or fails on its side (5xx),
// within maxWait and ctx.
func (a *api) call(ctx context.Context, write bool, do func() (*github.Response, error)) error {
	serverErrors := 0
	for {
		if write {
			if err := a.writes.Wait(ctx); err != nil {
				return fmt.Errorf("waiting for GitHub's content-creation limit: %w", err)
			}
		}
		resp, err := do()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait, retry := a.retryAfter(err, resp)
		if !retry && serverErrors < serverRetries && serverSide(err, resp) {
			serverErrors++
			wait, retry = time.Duration(serverErrors)*time.Second, true
		}
		if !retry {
			return err
		}
		if wait > maxWait {
			return &waitTooLongError{err: err, wait: wait}
		}
		if err := a.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%w (while waiting for GitHub's rate limit)", err)
		}
	}
}

// retryAfter reads how long GitHub asks to wait: a secondary limit's retry-after (60 s when
// it says nothing, as GitHub advises), or the reset of an exhausted primary limit.
func (a *api) retryAfter(err error, resp *github.Response) (time.Duration, bool) {
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &abuse) {
		if abuse.RetryAfter != nil {
			return *abuse.RetryAfter, true
		}
		return time.Minute, true
	}
	var limited *github.RateLimitError
	if errors.As(err, &limited) {
		return max(limited.Rate.Reset.Sub(a.clock()), time.Second), true
	}
	if resp == nil || resp.Response == nil {
		return 0, false
	}
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusForbidden {
		return 0, false
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(s); err == nil && secs >= 0 {
			return time.Duration(secs) * time.Second, true
		}
	}
	if resp.Header.Get("X-Ratelimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
			return max(time.Unix(reset, 0).Sub(a.clock()), time.Second), true
		}
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return time.Minute, true
	}
	return 0, false
}

func serverSide(err error, resp *github.Response) bool {
	if resp == nil || resp.Response == nil {
		// A transport error (no answer): not a context error, which call returns first.
		var urlErr *url.Error
		return errors.As(err, &urlErr)
	}
	return resp.StatusCode >= 500
}

// denied reports whether err is GitHub refusing the token the permission (403 without a rate
// limit, or 404 for a repository the token may not see).
func denied(err error) bool {
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil {
		return false
	}
	return er.Response.StatusCode == http.StatusForbidden || er.Response.StatusCode == http.StatusNotFound
}

// brief is a one-line account of a GitHub error: its status and message, never the request's
// headers (the token).
func brief(err error) string {
	var tooLong *waitTooLongError
	if errors.As(err, &tooLong) {
		return fmt.Sprintf("%s (GitHub asks to wait %s, longer than %s)", brief(tooLong.err), tooLong.wait.Round(time.Second), maxWait)
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return fmt.Sprintf("%d %s", er.Response.StatusCode, er.Message)
	}
	var limited *github.RateLimitError
	if errors.As(err, &limited) {
		return "rate limit exceeded: " + limited.Message
	}
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &abuse) {
		return "secondary rate limit: " + abuse.Message
	}
	return err.Error()
}

// waitTooLongError is GitHub asking to wait longer than a run waits for it.
type waitTooLongError struct {
	err  error
	wait time.Duration
}

func (e *waitTooLongError) Error() string {
	return fmt.Sprintf("%v (GitHub asks to wait %s, longer than %s)", e.err, e.wait.Round(time.Second), maxWait)
}

func (e *waitTooLongError) Unwrap() error { return e.err }
