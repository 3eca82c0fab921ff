package verify

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"
)

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
	if err == nil && resp.StatusCode == http.StatusTooManyRequests && req.Context().Value(noThrottleRecord{}) == nil {
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

// noThrottleRecord marks a context whose requests' 429s are not recorded: reads made before
// any verdict rests on them (readEvidenceAhead), whose throttling says nothing of the app's
// objects.
type noThrottleRecord struct{}

// withoutThrottleRecord is ctx, its requests' 429s not recorded.
func withoutThrottleRecord(ctx context.Context) context.Context {
	return context.WithValue(ctx, noThrottleRecord{}, true)
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
