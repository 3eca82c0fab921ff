package verify_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/fakeapi"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/verify"
)

// requestLog records the lists and watches one cluster's client sends, in order. A request
// for the path hang, if set, gets no answer until the client gives up on it: a slow read.
type requestLog struct {
	hang     string
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
		if l.hang != "" && r.URL.Path == l.hang {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}
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

// watched returns the paths watched, each once, in the order of their first watch, and fails
// the test for a watch sent before its path was listed.
func (l *requestLog) watched(t *testing.T) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	listed, seen := map[string]bool{}, map[string]bool{}
	var out []string
	for _, r := range l.requests {
		switch path := r[len("watch "):]; {
		case r[:5] == "list ":
			listed[r[len("list "):]] = true
		case !listed[path]:
			t.Errorf("%s was watched before it was listed (requests %q)", path, l.requests)
		case !seen[path]:
			seen[path] = true
			out = append(out, path)
		}
	}
	return out
}

// A reflector's watch of an inventory's kind waits until the cluster's loop has assessed,
// with every read it needed in (a settled assessment), and is still waiting: a cluster its
// lists settle, as a healthy one's do, never opens such a watch to cancel it at once. One still
// waiting watches every kind it listed; a slow read (here discovery of apps/v1 that never
// answers) holds the watches of what was listed for the watch hold at most. The watch of
// Flux's own objects opens at once, whatever else is read: a revision applied after their list
// must never go unseen.
func TestWatchesWaitForASettledAssessment(t *testing.T) {
	t.Parallel()
	const (
		kustomizations = "/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/flux-system/kustomizations"
		deployments    = "/apis/apps/v1/namespaces/app/deployments"
		services       = "/api/v1/namespaces/app/services"
		configmaps     = "/api/v1/namespaces/app/configmaps"
		appsDiscovery  = "/apis/apps/v1"
	)
	tests := []struct {
		name        string
		hang        string // a path that never answers
		revision    string // the expected revision
		hold        time.Duration
		timeout     time.Duration
		wantVerdict result.Verdict
		// wantWatched are the inventory's kinds watched, in any order; the Kustomizations
		// are watched too, but for a cluster whose verdict comes at once, which may end
		// before that watch is sent.
		wantWatched []string
	}{
		{name: "a cluster its lists settle watches none of its inventory's kinds", revision: commitA[:7],
			hold: time.Hour, timeout: time.Minute, wantVerdict: result.VerdictCurrent},
		{name: "a cluster still waiting watches every kind it listed", revision: "b2c3d4e",
			hold: time.Hour, timeout: 3 * time.Second, wantVerdict: result.VerdictTimeout,
			wantWatched: []string{services, configmaps, deployments}},
		{name: "a read that never ends holds the watches", hang: appsDiscovery, revision: commitA[:7],
			hold: time.Hour, timeout: 3 * time.Second, wantVerdict: result.VerdictTimeout},
		{name: "for the watch hold at most", hang: appsDiscovery, revision: commitA[:7],
			hold: 200 * time.Millisecond, timeout: 3 * time.Second, wantVerdict: result.VerdictTimeout,
			wantWatched: []string{services, configmaps}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			log := &requestLog{hang: tt.hang}
			req := fakeRequest([]verify.Target{loggedFakeCluster(t, "c", fakeapi.Healthy, log)}, tt.timeout)
			req.Revision = mustRevisionOf(tt.revision)
			run := verify.Run(context.Background(), verify.WithWatchHold(req, tt.hold))
			if got := resultOf(run, "c"); got.Verdict != tt.wantVerdict {
				t.Fatalf("verdict %s (%s), want %s", got.Verdict, got.Message, tt.wantVerdict)
			}
			var inventory []string
			fluxWatched := false
			for _, path := range log.watched(t) {
				if path == kustomizations {
					fluxWatched = true
					continue
				}
				inventory = append(inventory, path)
			}
			if diff := cmp.Diff(tt.wantWatched, inventory, cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("inventory paths watched (-want +got):\n%s\nrequests: %q", diff, log.requests)
			}
			if tt.wantVerdict != result.VerdictCurrent && !fluxWatched {
				t.Errorf("the Kustomizations were not watched (requests %q)", log.requests)
			}
		})
	}
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
