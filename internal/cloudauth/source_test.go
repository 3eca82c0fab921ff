package cloudauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// countingFetcher hands out "t1", "t2"... each valid for life, after waiting for release
// when it is set.
type countingFetcher struct {
	clock   *fakeClock
	life    time.Duration
	calls   atomic.Int32
	release chan struct{}
	fail    error
}

func (f *countingFetcher) fetch(ctx context.Context) (token, error) {
	n := f.calls.Add(1)
	if f.release != nil {
		select {
		case <-f.release:
		case <-ctx.Done():
			return token{}, ctx.Err()
		}
	}
	if f.fail != nil {
		return token{}, f.fail
	}
	return token{value: fmt.Sprintf("t%d", n), expiry: f.clock.Now().Add(f.life)}, nil
}

func newTestSource(f *countingFetcher, opts Options) *Source {
	opts.Clock = f.clock.Now
	opts = opts.withDefaults()
	return &Source{what: "TEST credentials", fetch: f.fetch, opts: opts, secrets: &secrets{onSecret: opts.OnSecret}}
}

func mustToken(t *testing.T, s *Source) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tok, err := s.Token(ctx)
	if err != nil {
		t.Fatalf("Token() error = %v", err)
	}
	return tok
}

// waitIdle waits until no fetch is in flight.
func waitIdle(t *testing.T, s *Source) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		idle := s.call == nil
		s.mu.Unlock()
		if idle {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("a fetch is still in flight")
}

// TestSourceRefreshesAhead: a token serves until RefreshMargin before it expires; then the
// next request still gets it while a new one is fetched in the background, and the requests
// after get the new one. An expired token is never served: the request waits for a new one.
func TestSourceRefreshesAhead(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	f := &countingFetcher{clock: clock, life: 10 * time.Minute}
	s := newTestSource(f, Options{RefreshMargin: 3 * time.Minute})

	if got := mustToken(t, s); got != "t1" {
		t.Fatalf("first Token() = %s, want t1", got)
	}
	clock.Add(6 * time.Minute)
	if got := mustToken(t, s); got != "t1" || f.calls.Load() != 1 {
		t.Fatalf("Token() before the margin = %s after %d fetches, want t1 after 1", got, f.calls.Load())
	}
	f.release = make(chan struct{})
	clock.Add(2 * time.Minute) // 2 minutes left: within the margin
	if got := mustToken(t, s); got != "t1" {
		t.Fatalf("Token() within the margin = %s, want t1 while t2 is fetched", got)
	}
	close(f.release)
	waitIdle(t, s)
	if got := mustToken(t, s); got != "t2" {
		t.Fatalf("Token() after the refresh = %s, want t2", got)
	}
	clock.Add(11 * time.Minute) // t2 expired
	if got := mustToken(t, s); got != "t3" {
		t.Fatalf("Token() after expiry = %s, want t3", got)
	}
}

// TestSourceOneFetchForManyRequests: concurrent requests share one fetch.
func TestSourceOneFetchForManyRequests(t *testing.T) {
	t.Parallel()
	f := &countingFetcher{clock: &fakeClock{now: time.Now()}, life: time.Hour, release: make(chan struct{})}
	s := newTestSource(f, Options{})
	var wg sync.WaitGroup
	got := make([]string, 20)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = mustToken(t, s)
		}()
	}
	// Released once a fetch is in flight: callers that came before share it, the ones after
	// get its token from the cache; either way, one fetch.
	for f.calls.Load() == 0 {
		runtime.Gosched()
	}
	close(f.release)
	wg.Wait()
	if f.calls.Load() != 1 {
		t.Errorf("fetches = %d, want 1", f.calls.Load())
	}
	for _, g := range got {
		if g != "t1" {
			t.Errorf("Token() = %s, want t1", g)
		}
	}
}

// TestSourceFailures: a failure is classified and reused for errorBackoff, then retried; a
// fetch that never ends is given up after Options.Timeout; a request that ends while waiting
// says so.
func TestSourceFailures(t *testing.T) {
	t.Parallel()
	t.Run("reused, then retried", func(t *testing.T) {
		t.Parallel()
		clock := &fakeClock{now: time.Now()}
		f := &countingFetcher{clock: clock, life: time.Hour, fail: &url404{}}
		s := newTestSource(f, Options{})
		_, err := s.Token(context.Background())
		var e *Error
		if !errors.As(err, &e) || e.Verdict != result.VerdictUnauthorized || e.Message != "TEST credentials: could not get a token: 404 from the token endpoint" {
			t.Fatalf("Token() error = %v, want Unauthorized naming the provider", err)
		}
		_, _ = s.Token(context.Background())
		if f.calls.Load() != 1 {
			t.Errorf("fetches within the backoff = %d, want 1", f.calls.Load())
		}
		clock.Add(errorBackoff)
		f.fail = nil
		if got := mustToken(t, s); got != "t2" {
			t.Errorf("Token() after the backoff = %s, want t2", got)
		}
	})
	t.Run("a fetch that never ends", func(t *testing.T) {
		t.Parallel()
		f := &countingFetcher{clock: &fakeClock{now: time.Now()}, life: time.Hour}
		s := newTestSource(f, Options{Timeout: 50 * time.Millisecond})
		never := make(chan struct{})
		t.Cleanup(func() { close(never) })
		s.fetch = func(context.Context) (token, error) { <-never; return token{}, nil } // ignores its context
		start := time.Now()
		_, err := s.Token(context.Background())
		var e *Error
		if !errors.As(err, &e) || e.Verdict != result.VerdictUnreachable || !strings.Contains(e.Message, "no token within 50ms") {
			t.Errorf("Token() error = %v, want Unreachable: no token within 50ms", err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("Token() took %s", took)
		}
	})
	t.Run("the request ends while waiting", func(t *testing.T) {
		t.Parallel()
		f := &countingFetcher{clock: &fakeClock{now: time.Now()}, life: time.Hour, release: make(chan struct{})}
		defer close(f.release)
		s := newTestSource(f, Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := s.Token(ctx)
		var e *Error
		if !errors.As(err, &e) || e.Verdict != result.VerdictUnreachable || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Token() error = %v, want Unreachable wrapping the deadline", err)
		}
	})
}

type url404 struct{}

func (url404) Error() string       { return "404 from the token endpoint" }
func (url404) HTTPStatusCode() int { return http.StatusNotFound }

// TestRefreshTime: the margin, or half the remaining life when that is shorter.
func TestRefreshTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		life, margin, want time.Duration
	}{
		{14 * time.Minute, 5 * time.Minute, 9 * time.Minute},
		{time.Hour, 5 * time.Minute, 55 * time.Minute},
		{4 * time.Minute, 5 * time.Minute, 2 * time.Minute},
		{0, 5 * time.Minute, 0},
	}
	for _, tt := range tests {
		if got := refreshTime(now, now.Add(tt.life), tt.margin).Sub(now); got != tt.want {
			t.Errorf("refreshTime(life %s, margin %s) = +%s, want +%s", tt.life, tt.margin, got, tt.want)
		}
	}
}

// TestWrapTransport: requests carry the token without the caller's request being changed; a
// 401 makes the source drop the token, and the request (its body too) is sent again once with
// a new one; when the new one is refused too, the 401 stands, as an Unauthorized error that
// names the provider.
func TestWrapTransport(t *testing.T) {
	t.Parallel()
	var accepted atomic.Value
	accepted.Store("t2")
	var seen []string
	var mu sync.Mutex
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+" "+string(body))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+accepted.Load().(string) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer server.Close()
	f := &countingFetcher{clock: &fakeClock{now: time.Now()}, life: time.Hour}
	s := newTestSource(f, Options{})
	client := &http.Client{Transport: s.WrapTransportFor(server.URL)(http.DefaultTransport)}

	req, _ := http.NewRequest(http.MethodPost, server.URL, strings.NewReader("payload"))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d, want 200 after the retry with a new token", resp.StatusCode)
	}
	if req.Header.Get("Authorization") != "" {
		t.Error("the caller's request was changed")
	}
	mu.Lock()
	want := []string{"Bearer t1 payload", "Bearer t2 payload"}
	if strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Errorf("requests seen = %q, want %q", seen, want)
	}
	seen = nil
	mu.Unlock()

	accepted.Store("never")
	_, err = client.Get(server.URL)
	var e *Error
	if !errors.As(err, &e) || e.Verdict != result.VerdictUnauthorized || !strings.HasPrefix(e.Message, "TEST credentials: the API server refused the token (401): ") {
		t.Errorf("Get() error = %v, want the 401 to stand as Unauthorized naming the provider", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Errorf("requests seen = %q, want one retry, not more", seen)
	}
}

// TestTokenNotSentOnRedirect: the token goes to the cluster's own server alone. A server
// answering 302 to another host (B, whose certificate the client trusts, as it does every
// httptest server's) gets its redirect followed without the token; a redirect within the
// server keeps it; a server given as no URL gets no token at all, nor does the name without
// the final dot of a server written with one (another name to the resolver).
func TestTokenNotSentOnRedirect(t *testing.T) {
	t.Parallel()
	type seen struct{ A, B []string } // the Authorization headers each server received
	tests := []struct {
		name     string
		server   func(a *httptest.Server) string // what the source is for
		redirect func(b *httptest.Server) string // where A sends the client
		want     seen
	}{{
		name:     "to another host",
		server:   func(a *httptest.Server) string { return a.URL },
		redirect: func(b *httptest.Server) string { return b.URL + "/version" },
		want:     seen{A: []string{"Bearer t1"}, B: []string{""}},
	}, {
		name:     "to another host, the server written with a slash",
		server:   func(a *httptest.Server) string { return a.URL + "/" },
		redirect: func(b *httptest.Server) string { return b.URL + "/version" },
		want:     seen{A: []string{"Bearer t1"}, B: []string{""}},
	}, {
		// "127.0.0.1." is another name than the one the client dials: no token.
		name:     "a server written with a final dot",
		server:   func(a *httptest.Server) string { return strings.Replace(a.URL, "127.0.0.1", "127.0.0.1.", 1) },
		redirect: func(b *httptest.Server) string { return b.URL + "/version" },
		want:     seen{A: []string{""}, B: []string{""}},
	}, {
		name:     "within the server",
		server:   func(a *httptest.Server) string { return a.URL },
		redirect: func(*httptest.Server) string { return "/version" },
		want:     seen{A: []string{"Bearer t1", "Bearer t1"}},
	}, {
		name:     "a server that is no URL",
		server:   func(*httptest.Server) string { return "https://[::1" },
		redirect: func(b *httptest.Server) string { return b.URL + "/version" },
		want:     seen{A: []string{""}, B: []string{""}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var got seen
			b := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got.B = append(got.B, r.Header.Get("Authorization"))
				mu.Unlock()
				_, _ = io.WriteString(w, "ok")
			}))
			t.Cleanup(b.Close)
			a := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got.A = append(got.A, r.Header.Get("Authorization"))
				mu.Unlock()
				if r.URL.Path == "/version" {
					_, _ = io.WriteString(w, "ok")
					return
				}
				http.Redirect(w, r, tt.redirect(b), http.StatusFound)
			}))
			t.Cleanup(a.Close)
			f := &countingFetcher{clock: &fakeClock{now: time.Now()}, life: time.Hour}
			s := newTestSource(f, Options{})
			// a.Client() trusts the certificate every httptest TLS server has, B's too.
			client := &http.Client{Transport: s.WrapTransportFor(tt.server(a))(a.Client().Transport)}
			resp, err := client.Get(a.URL + "/")
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Authorization headers received (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHostComparisonsAreExact: the guards compare a server's host as it is dialled, in lower
// case, the port the scheme's when none is given; a final dot makes another name ("host."
// is looked up as it is, "host" through the DNS search domains too), so neither the token's
// guard (serverOrigin against requestOrigin) nor the cloud's endpoint check (hostPort) takes
// one for the other.
func TestHostComparisonsAreExact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		server, request string
		want            bool
	}{
		{"https://k8s.example.com", "https://k8s.example.com/version", true},
		{"https://K8S.example.com", "https://k8s.example.com:443/version", true},
		{"k8s.example.com:6443", "https://k8s.example.com:6443/api", true},
		{"https://k8s.example.com.", "https://k8s.example.com./version", true},
		{"https://k8s.example.com.", "https://k8s.example.com/version", false},
		{"https://k8s.example.com", "https://k8s.example.com./version", false},
		{"https://k8s.example.com:443.", "https://k8s.example.com/version", false},
		{"https://k8s", "https://k8s./version", false},
		{"https://k8s.example.com", "http://k8s.example.com/version", false},
	}
	for _, tt := range tests {
		req, err := url.Parse(tt.request)
		if err != nil {
			t.Fatal(err)
		}
		if got := serverOrigin(tt.server) != "" && serverOrigin(tt.server) == requestOrigin(req); got != tt.want {
			t.Errorf("serverOrigin(%q) == requestOrigin(%q): %t, want %t (%q, %q)", tt.server, tt.request, got, tt.want, serverOrigin(tt.server), requestOrigin(req))
		}
		if req.Scheme != "https" {
			continue
		}
		server, err := url.Parse(tt.server)
		if err != nil || server.Host == "" {
			continue // not a URL the cloud's check is given
		}
		if got := hostPort(server) == hostPort(req); got != tt.want {
			t.Errorf("hostPort(%q) == hostPort(%q): %t, want %t", tt.server, tt.request, got, tt.want)
		}
	}
}
