package verify

import (
	"context"
	"crypto/tls"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// handshakes counts the TLS handshakes a side saw, full and resumed.
type handshakes struct {
	mu            sync.Mutex
	full, resumed int
}

func (h *handshakes) see(cs tls.ConnectionState) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cs.DidResume {
		h.resumed++
	} else {
		h.full++
	}
}

func (h *handshakes) counts() (full, resumed int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.full, h.resumed
}

// startTLSFleet starts n healthy fake clusters over TLS whose servers count the handshakes
// they accept.
func startTLSFleet(t *testing.T, n int) ([]*fakeapi.Server, *handshakes) {
	t.Helper()
	seen := &handshakes{}
	var servers []*fakeapi.Server
	for range n {
		resources, objects := fakeapi.App("app", "main@sha1:"+starveCommit, 30)
		s := fakeapi.Start(fakeapi.Options{Behaviour: fakeapi.Healthy, Resources: resources, Objects: objects,
			TLS: &tls.Config{MinVersion: tls.VersionTLS12, VerifyConnection: func(cs tls.ConnectionState) error {
				seen.see(cs)
				return nil
			}}})
		t.Cleanup(s.Close)
		servers = append(servers, s)
	}
	return servers, seen
}

// TestParkedClusterResumes: a cluster parked after its probe holds no connection, and its
// first lists reach the server over a resumed TLS session (no second full handshake), then
// come to the same verdict.
func TestParkedClusterResumes(t *testing.T) {
	t.Parallel()
	servers, serverSeen := startTLSFleet(t, 1)
	clientSeen := &handshakes{}
	state := fakeClusterState(t, servers[0], clientSeen.see)
	defer state.close()
	if v, failed := state.probe(t.Context()); failed {
		t.Fatalf("probe: %s: %s", v.Verdict, v.Message)
	}
	conns := state.dialed.dialedSoFar()
	if len(conns) == 0 {
		t.Fatal("the probe left no connection open: the test proves nothing")
	}
	state.park()
	checkClosed(t, conns, "once the cluster was parked")
	if left := state.dialed.dialedSoFar(); len(left) != 0 {
		t.Errorf("%d connections still open once the cluster was parked", len(left))
	}
	untilCurrent(t, state)
	full, resumed := serverSeen.counts()
	if full != 1 || resumed == 0 {
		t.Errorf("the server saw %d full handshakes and %d resumed ones, want 1 full (the probe's) and the lists' resumed", full, resumed)
	}
	if cf, cr := clientSeen.counts(); cf != full || cr != resumed {
		t.Errorf("the client was told of %d full and %d resumed handshakes, the server saw %d and %d", cf, cr, full, resumed)
	}
}

// TestWaitingClustersPark: clusters that find every turn taken after their probe park (their
// probes' connections closed) and, when the turn is given back, resume their sessions and are
// Current, with one full handshake per cluster; a cluster that finds a turn free does not park.
// The test holds the one turn itself until every waiting cluster has parked.
func TestWaitingClustersPark(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		turnTaken bool
	}{
		{name: "turn taken", turnTaken: true},
		{name: "turn free", turnTaken: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			servers, serverSeen := startTLSFleet(t, 3)
			parked := make(chan string, len(servers))
			turns := len(servers)
			if tt.turnTaken {
				turns = 1
			}
			req := fakeClusterRequest(t)
			req.MaxParallel = turns
			req.onTurnWait = func(cluster string, didPark bool) {
				if didPark {
					parked <- cluster
				}
			}
			req = req.withDefaults()
			// Run's deadline, which verifyCluster does not set itself.
			ctx, cancel := context.WithTimeoutCause(t.Context(), req.Timeout, errTimeout)
			defer cancel()
			slots := newConnectSlots(turns)
			if tt.turnTaken && !slots.acquire(ctx) {
				t.Fatal("no turn")
			}
			rep := newReporter(nil, false)
			results := make(chan result.Cluster, len(servers))
			for i, s := range servers {
				target := Target{Name: string(rune('a' + i)), Config: insecureConfig(s)}
				go func() {
					results <- verifyCluster(ctx, req, target, rep, slots, newRequestSlots(1), new(int))
				}()
			}
			var parks []string
			if tt.turnTaken {
				for range servers {
					select {
					case c := <-parked:
						parks = append(parks, c)
					case <-time.After(30 * time.Second):
						t.Fatalf("only %v parked within 30s while the one turn was taken", parks)
					}
				}
				slots.releaser()()
			}
			got := map[string]result.Verdict{}
			for range servers {
				c := <-results
				got[c.Name] = c.Verdict
			}
			rep.close()
			wantVerdicts := map[string]result.Verdict{"a": result.VerdictCurrent, "b": result.VerdictCurrent, "c": result.VerdictCurrent}
			if diff := cmp.Diff(wantVerdicts, got); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			full, resumed := serverSeen.counts()
			if full != len(servers) {
				t.Errorf("the servers saw %d full handshakes, want %d (one per cluster)", full, len(servers))
			}
			if tt.turnTaken && resumed < len(parks) {
				t.Errorf("%d clusters parked and %d sessions were resumed; want each resuming", len(parks), resumed)
			}
			if !tt.turnTaken && len(parked) != 0 {
				t.Errorf("%d clusters parked with a turn free for each", len(parked))
			}
		})
	}
}

// TestReconcilingClusterKeepsItsConnection: a cluster whose reconcile requests run while it
// waits for its turn does not park: the requests use its connection.
func TestReconcilingClusterKeepsItsConnection(t *testing.T) {
	t.Parallel()
	servers, serverSeen := startTLSFleet(t, 1)
	waits := make(chan bool, 1)
	req := fakeClusterRequest(t)
	req.Reconcile, req.MaxParallel = ReconcileOn, 1
	req.onTurnWait = func(_ string, parked bool) { waits <- parked }
	req = req.withDefaults()
	ctx, cancel := context.WithTimeoutCause(t.Context(), req.Timeout, errTimeout)
	defer cancel()
	slots := newConnectSlots(1)
	if !slots.acquire(ctx) {
		t.Fatal("no turn")
	}
	rep := newReporter(nil, false)
	done := make(chan result.Cluster, 1)
	go func() {
		done <- verifyCluster(ctx, req, Target{Name: "a", Config: insecureConfig(servers[0])}, rep, slots, newRequestSlots(1), new(int))
	}()
	select {
	case parked := <-waits:
		if parked {
			t.Error("a cluster with reconcile requests parked while it waited for its turn")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cluster did not wait for its turn within 30s")
	}
	// With the turn, the cluster's lists go over the connection it kept: the server sees no
	// second handshake. The verdict is not this test's: the fake API server does not handle
	// the reconcile requests.
	slots.releaser()()
	for deadline := time.Now().Add(30 * time.Second); servers[0].Requests() < 8; {
		if time.Now().After(deadline) {
			t.Fatalf("the server saw %d requests in 30s; want the probe, the reconcile request and the lists", servers[0].Requests())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	rep.close()
	if full, resumed := serverSeen.counts(); full != 1 || resumed != 0 {
		t.Errorf("the server saw %d full and %d resumed handshakes; want the one connection kept", full, resumed)
	}
}
