package verify_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/verify"
)

// requestLog records the lists and watches one cluster's client sends, in order.
type requestLog struct {
	mu       sync.Mutex
	requests []string // "watch PATH", or "list PATH" for any other request
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		what := "list " // or a get, or discovery: paths tell them apart
		if r.URL.Query().Get("watch") == "true" {
			what = "watch "
		}
		l.mu.Lock()
		l.requests = append(l.requests, what+r.URL.Path)
		l.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

// loggedFakeCluster is a fake cluster of 30 objects whose client's requests go to log.
func loggedFakeCluster(t *testing.T, name string, behaviour fakeapi.Behaviour, log *requestLog) verify.Target {
	t.Helper()
	resources, objects := fakeapi.App("app", fakeRevision, 30)
	s := fakeapi.Start(fakeapi.Options{Behaviour: behaviour, Resources: resources, Objects: objects})
	t.Cleanup(s.Close)
	return verify.Target{Name: name, Config: &rest.Config{Host: s.URL(), WrapTransport: log.wrap}}
}

// Watch faults of a cluster that is still waiting, so that its watches open: watches that
// hang leave the lists' state standing, and a watch that ends with 410 Gone is followed by a
// new list and a new watch; the verdict says what the cluster waited for, never blames the
// watches.
func TestWatchFaultsWhileWaiting(t *testing.T) {
	t.Parallel()
	const kustomizations = "/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/flux-system/kustomizations"
	tests := []struct {
		behaviour            fakeapi.Behaviour
		wantLists, wantWatch int // of the Kustomizations, at least
	}{
		{behaviour: fakeapi.HangWatch, wantLists: 1, wantWatch: 1},
		{behaviour: fakeapi.GoneWatch, wantLists: 2, wantWatch: 2},
	}
	for _, tt := range tests {
		t.Run(tt.behaviour.String(), func(t *testing.T) {
			t.Parallel()
			log := &requestLog{}
			req := fakeRequest([]verify.Target{loggedFakeCluster(t, "c", tt.behaviour, log)}, 4*time.Second)
			req.Revision = mustRevisionOf("b2c3d4e")
			run := verify.Run(context.Background(), req)
			c := resultOf(run, "c")
			if c.Verdict != result.VerdictTimeout || !strings.Contains(c.Message, "b2c3d4e") {
				t.Errorf("verdict %s: %s; want Timeout waiting for revision b2c3d4e", c.Verdict, c.Message)
			}
			log.mu.Lock()
			defer log.mu.Unlock()
			lists, watches := 0, 0
			for _, r := range log.requests {
				switch r {
				case "list " + kustomizations:
					lists++
				case "watch " + kustomizations:
					watches++
				}
			}
			if lists < tt.wantLists || watches < tt.wantWatch {
				t.Errorf("%d lists and %d watches of the Kustomizations, want at least %d and %d (requests %q)", lists, watches, tt.wantLists, tt.wantWatch, log.requests)
			}
		})
	}
}
