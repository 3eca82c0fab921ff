package verify_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/verify"
)

// The faults a real API server does not produce on demand, against fake servers on 127.0.0.1:
// every cluster keeps its own verdict, the healthy ones come at once, and each says what is
// wrong.

const fakeRevision = "main@sha1:" + commitA

// fakeCluster starts a fake API server holding the app "app" with 30 objects.
func fakeCluster(t *testing.T, b fakeapi.Behaviour) *fakeapi.Server {
	t.Helper()
	resources, objects := fakeapi.App("app", fakeRevision, 30)
	s := fakeapi.Start(fakeapi.Options{Behaviour: b, Resources: resources, Objects: objects, RetryAfter: 30})
	t.Cleanup(s.Close)
	return s
}

func fakeTarget(name string, s *fakeapi.Server) verify.Target {
	return verify.Target{Name: name, Config: &rest.Config{Host: s.URL()}}
}

// refusedTarget is a cluster whose address refuses connections: port 1 on the loopback, where
// nothing listens. (A port just closed would do until a parallel test's server reuses it.)
func refusedTarget(t *testing.T, name string) verify.Target {
	t.Helper()
	const addr = "127.0.0.1:1"
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = c.Close()
		t.Fatalf("something listens on %s: the test needs an address that refuses connections", addr)
	}
	return verify.Target{Name: name, Config: &rest.Config{Host: "http://" + addr}}
}

func fakeRequest(targets []verify.Target, timeout time.Duration) verify.Request {
	return verify.Request{
		Targets:   targets,
		Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}},
		Revision:  mustRevisionOf(commitA[:7]),
		Timeout:   timeout,
		Workloads: true,
	}
}

func mustRevisionOf(s string) flux.Revision {
	r, err := flux.ParseRevision(s)
	if err != nil {
		panic(err)
	}
	return r
}

func resultOf(run result.Run, name string) result.Cluster {
	for _, c := range run.Results {
		if c.Name == name {
			return c
		}
	}
	return result.Cluster{}
}

// TestHungClustersDoNotDelayHealthyOnes: 40 clusters that never answer and one healthy
// cluster listed last, default settings: the healthy one is Current within a second or two,
// the others time out with what they were doing.
func TestHungClustersDoNotDelayHealthyOnes(t *testing.T) {
	t.Parallel()
	var targets []verify.Target
	for i := range 40 {
		targets = append(targets, fakeTarget(fmt.Sprintf("hung-%02d", i), fakeCluster(t, fakeapi.Hang)))
	}
	targets = append(targets, fakeTarget("zz-healthy", fakeCluster(t, fakeapi.Healthy)))
	const timeout = 12 * time.Second
	start := time.Now()
	run := verify.Run(context.Background(), fakeRequest(targets, timeout))
	took := time.Since(start)
	healthy := resultOf(run, "zz-healthy")
	if healthy.Verdict != result.VerdictCurrent || healthy.DurationMs > 3000 {
		t.Errorf("healthy cluster: %s after %dms (%s), want Current within 3s", healthy.Verdict, healthy.DurationMs, healthy.Message)
	}
	for _, c := range run.Results[:40] {
		if c.Verdict != result.VerdictTimeout || !strings.Contains(c.Message, "while connecting") {
			t.Errorf("%s: %s: %s; want Timeout while connecting", c.Name, c.Verdict, c.Message)
		}
	}
	if took > timeout+3*time.Second {
		t.Errorf("Run took %s with a %s timeout", took, timeout)
	}
	t.Logf("40 hung + 1 healthy: healthy Current in %dms, run %s", healthy.DurationMs, took.Round(time.Millisecond))
}

// TestRefusedClusters: 500 clusters whose API servers refuse connections and a healthy one:
// every cluster gets Unreachable in seconds, the healthy one is Current.
func TestRefusedClusters(t *testing.T) {
	t.Parallel()
	var targets []verify.Target
	for i := range 500 {
		targets = append(targets, refusedTarget(t, fmt.Sprintf("refused-%03d", i)))
	}
	targets = append(targets, fakeTarget("zz-healthy", fakeCluster(t, fakeapi.Healthy)))
	start := time.Now()
	run := verify.Run(context.Background(), fakeRequest(targets, time.Minute))
	took := time.Since(start)
	counts := map[result.Verdict]int{}
	for _, c := range run.Results {
		counts[c.Verdict]++
	}
	if counts[result.VerdictUnreachable] != 500 || counts[result.VerdictCurrent] != 1 {
		t.Errorf("verdicts %v, want 500 Unreachable and 1 Current", counts)
	}
	if c := run.Results[0]; !strings.Contains(c.Message, "connection refused") {
		t.Errorf("%s message %q, want it to say the connection was refused", c.Name, c.Message)
	}
	if took > 20*time.Second {
		t.Errorf("500 refused clusters took %s", took)
	}
	t.Logf("500 refused + 1 healthy: %s", took.Round(time.Millisecond))
}

// TestFaultVerdicts: each kind of misbehaving server gets the verdict that says what is wrong,
// in one run, with a healthy cluster beside them.
func TestFaultVerdicts(t *testing.T) {
	t.Parallel()
	targets := []verify.Target{
		fakeTarget("healthy", fakeCluster(t, fakeapi.Healthy)),
		fakeTarget("throttled", fakeCluster(t, fakeapi.Throttle)),
		fakeTarget("failing", fakeCluster(t, fakeapi.Fail)),
		fakeTarget("hung-watches", fakeCluster(t, fakeapi.HangWatch)),
		fakeTarget("expired-watches", fakeCluster(t, fakeapi.GoneWatch)),
	}
	run := verify.Run(context.Background(), fakeRequest(targets, 15*time.Second))
	tests := []struct {
		cluster string
		verdict result.Verdict
		message string
		within  time.Duration
	}{
		{"healthy", result.VerdictCurrent, "30 objects Current", 3 * time.Second},
		{"throttled", result.VerdictThrottled, "asked to retry after 30s", 8 * time.Second},
		{"hung-watches", result.VerdictCurrent, "30 objects Current", 3 * time.Second},
		{"expired-watches", result.VerdictCurrent, "30 objects Current", 5 * time.Second},
	}
	for _, tt := range tests {
		c := resultOf(run, tt.cluster)
		if c.Verdict != tt.verdict || !strings.Contains(c.Message, tt.message) || time.Duration(c.DurationMs)*time.Millisecond > tt.within {
			t.Errorf("%s: %s after %dms: %s; want %s within %s, saying %q", tt.cluster, c.Verdict, c.DurationMs, c.Message, tt.verdict, tt.within, tt.message)
		}
	}
	// A server that answers 500 to everything but the probe's 404-free... fails every
	// request: the probe gets a 500, which is no verdict of its own, so the cluster waits and
	// says why at the timeout.
	if c := resultOf(run, "failing"); c.Verdict != result.VerdictTimeout || !strings.Contains(c.Message, "etcdserver: request timed out") {
		t.Errorf("failing: %s: %s; want Timeout quoting the server's error", c.Verdict, c.Message)
	}
}

// TestGetIsASnapshot: `get` answers within seconds whatever the servers do: no watch, a short
// deadline on every request.
func TestGetIsASnapshot(t *testing.T) {
	t.Parallel()
	targets := []verify.Target{
		fakeTarget("healthy", fakeCluster(t, fakeapi.Healthy)),
		fakeTarget("hung", fakeCluster(t, fakeapi.Hang)),
		fakeTarget("hung-watches", fakeCluster(t, fakeapi.HangWatch)),
		fakeTarget("throttled", fakeCluster(t, fakeapi.Throttle)),
		fakeTarget("failing", fakeCluster(t, fakeapi.Fail)),
	}
	req := fakeRequest(targets, 10*time.Minute)
	req.Snapshot = true
	start := time.Now()
	run := verify.Run(context.Background(), req)
	took := time.Since(start)
	want := map[string]result.Verdict{
		"healthy": result.VerdictCurrent, "hung": result.VerdictUnreachable, "hung-watches": result.VerdictCurrent,
		"throttled": result.VerdictThrottled, "failing": result.VerdictInProgress,
	}
	for name, v := range want {
		c := resultOf(run, name)
		if name == "hung" && c.Verdict == result.VerdictTimeout && strings.Contains(c.Message, "this runner was short of CPU") {
			continue // a busy test machine: the client cannot tell a hung server, and says so
		}
		if c.Verdict != v {
			t.Errorf("%s: %s (%s), want %s", name, c.Verdict, c.Message, v)
		}
	}
	// The proof is that get does not wait out the 10m timeout; how fast it answers is a
	// figure (logged below and in the bench), not a timed assertion a loaded machine can fail.
	if took > 2*time.Minute {
		t.Errorf("get took %s with a 10m timeout: it must not wait for the deadline", took)
	}
	t.Logf("get over healthy, hung, hung-watch, throttled and failing servers: %s", took.Round(time.Millisecond))
}

// TestStuckProgressDoesNotHoldTheRun: a Progress function that never returns (a terminal
// nobody reads) delays no verdict, and Run still returns.
func TestStuckProgressDoesNotHoldTheRun(t *testing.T) {
	t.Parallel()
	var targets []verify.Target
	for i := range 5 {
		targets = append(targets, fakeTarget(fmt.Sprintf("c%d", i), fakeCluster(t, fakeapi.Healthy)))
	}
	req := fakeRequest(targets, time.Minute)
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	req.Progress = func(verify.Progress) { <-stuck }
	start := time.Now()
	run := verify.Run(context.Background(), req)
	took := time.Since(start)
	for _, c := range run.Results {
		if c.Verdict != result.VerdictCurrent || c.DurationMs > 3000 {
			t.Errorf("%s: %s after %dms; want Current at once", c.Name, c.Verdict, c.DurationMs)
		}
	}
	if took > 10*time.Second {
		t.Errorf("Run took %s with a stuck Progress", took)
	}
}

// TestTLSProblems: a certificate the kubeconfig does not trust, one for another name, and a
// server that speaks plain HTTP where the kubeconfig says https are InvalidConfig at once,
// naming the kubeconfig field that fixes them, never Unreachable: retrying cannot help.
func TestTLSProblems(t *testing.T) {
	t.Parallel()
	tlsServer := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsServer.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes fail on purpose
	tlsServer.StartTLS()
	t.Cleanup(tlsServer.Close)
	plain := fakeCluster(t, fakeapi.Healthy)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsServer.Certificate().Raw})
	port := tlsServer.Listener.Addr().(*net.TCPAddr).Port
	targets := []verify.Target{
		// The test server's certificate holds example.com, 127.0.0.1 and ::1.
		{Name: "untrusted", Config: &rest.Config{Host: tlsServer.URL}},
		{Name: "other-name", Config: &rest.Config{Host: fmt.Sprintf("https://localhost:%d", port), TLSClientConfig: rest.TLSClientConfig{CAData: ca}}},
		{Name: "plain-http", Config: &rest.Config{Host: strings.Replace(plain.URL(), "http://", "https://", 1)}},
		fakeTarget("healthy", fakeCluster(t, fakeapi.Healthy)),
	}
	run := verify.Run(context.Background(), fakeRequest(targets, time.Minute))
	tests := []struct {
		cluster string
		verdict result.Verdict
		message string
	}{
		{"healthy", result.VerdictCurrent, "30 objects Current"},
		{"untrusted", result.VerdictInvalidConfig, "signed by an authority the kubeconfig does not trust: set the cluster's certificate-authority-data"},
		{"other-name", result.VerdictInvalidConfig, "127.0.0.1, ::1, not for localhost: set the cluster's server to a name the certificate holds"},
		{"plain-http", result.VerdictInvalidConfig, "answered in plain HTTP, not TLS"},
	}
	for _, tt := range tests {
		c := resultOf(run, tt.cluster)
		if c.Verdict != tt.verdict || !strings.Contains(c.Message, tt.message) || c.DurationMs > 5000 {
			t.Errorf("%s: %s after %dms: %s; want %s at once, saying %q", tt.cluster, c.Verdict, c.DurationMs, c.Message, tt.verdict, tt.message)
		}
	}
}

// TestHungDiscoveryKeepsTheDeadline (issue 18): discovery that never answers is asked off the
// assessment, so the cluster still gets its verdict at the run's timeout, saying what it
// waited for, and the run returns then, not when discovery's own deadline (30s) ends.
func TestHungDiscoveryKeepsTheDeadline(t *testing.T) {
	t.Parallel()
	start := time.Now()
	run := verify.Run(context.Background(), fakeRequest([]verify.Target{fakeTarget("hung-discovery", fakeCluster(t, fakeapi.HangDiscovery))}, 3*time.Second))
	took := time.Since(start)
	c := resultOf(run, "hung-discovery")
	if c.Verdict != result.VerdictTimeout || !strings.Contains(c.Message, "discovering") {
		t.Errorf("verdict %s: %s; want Timeout, waiting for discovery", c.Verdict, c.Message)
	}
	if took > 6*time.Second {
		t.Errorf("run took %s with a 3s timeout, want it to end at the timeout", took)
	}
}

// TestHungDiscoveryDoesNotHoldAFailure: while discovery of the inventory's kinds hangs, a
// failure the Kustomization itself says is the verdict at once: no assessment waits for
// discovery.
func TestHungDiscoveryDoesNotHoldAFailure(t *testing.T) {
	t.Parallel()
	resources, objects := fakeapi.App("app", fakeRevision, 30)
	objects[0]["status"].(map[string]any)["conditions"] = []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "BuildFailed", "message": "kustomize build failed", "observedGeneration": int64(1)},
		map[string]any{"type": "Stalled", "status": "True", "reason": "BuildFailed", "message": "kustomize build failed", "observedGeneration": int64(1)},
	}
	s := fakeapi.Start(fakeapi.Options{Behaviour: fakeapi.HangDiscovery, Resources: resources, Objects: objects})
	t.Cleanup(s.Close)
	run := verify.Run(context.Background(), fakeRequest([]verify.Target{fakeTarget("hung-discovery", s)}, 20*time.Second))
	c := resultOf(run, "hung-discovery")
	if c.Verdict != result.VerdictFailed || c.Code != result.CodeFluxStalled || c.DurationMs > 3000 {
		t.Errorf("verdict %s (%s) after %dms; want Failed flux-stalled within 3s, whatever discovery does", c.Verdict, c.Message, c.DurationMs)
	}
}
