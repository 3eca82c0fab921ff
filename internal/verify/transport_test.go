package verify

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"testing"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/fakeapi"
	"github.com/org/app-status-action/internal/flux"
)

// TestClusterConnectionsEndWithIt: once a cluster is done (close), none of its connections is
// open and its transport, with every connection's buffers, is garbage at once: not 30s later,
// when x/net's HTTP/2 health-check timer would let go of it (golang/go#80920), nor after an
// idle timeout. A fleet's memory then holds the clusters still being verified, not the ones
// done (about 60 KB each, 60 MB for 1000 clusters whose verdicts came within seconds).
func TestClusterConnectionsEndWithIt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		tls       bool
		wantProto int
	}{
		{name: "HTTP/2 over TLS", tls: true, wantProto: 2},
		{name: "plain HTTP/1.1", wantProto: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resources, objects := fakeapi.App("app", "main@sha1:"+starveCommit, 30)
			opts := fakeapi.Options{Behaviour: fakeapi.Healthy, Resources: resources, Objects: objects}
			if tt.tls {
				opts.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
			}
			s := fakeapi.Start(opts)
			t.Cleanup(s.Close)
			freed := make(chan struct{})
			verifyAndClose(t, s, tt.wantProto, freed)
			for wait := 0; ; wait++ {
				runtime.GC()
				select {
				case <-freed:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if wait == 100 {
					t.Fatal("the cluster's transport (its connections and their buffers) was still held 5s after the cluster was done")
				}
			}
		})
	}
}

// verifyAndClose verifies the fake cluster until it is Current, with its watches open, closes
// it as verifyCluster does, and closes freed when its transport is garbage collected.
func verifyAndClose(t *testing.T, s *fakeapi.Server, wantProto int, freed chan struct{}) {
	t.Helper()
	want, err := flux.ParseRevision(starveCommit[:7])
	if err != nil {
		t.Fatal(err)
	}
	cpu := fixedCPUWatch(time.Millisecond)
	cpu.sample()
	req := Request{
		Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}},
		Revision:  want, Timeout: time.Minute, Workloads: true, cpu: cpu,
	}.withDefaults()
	ctx := t.Context()
	state, err := newClusterState(ctx, req, &rest.Config{Host: s.URL(), TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := state.httpClient.Get(s.URL() + "/version")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.ProtoMajor != wantProto {
		t.Fatalf("the fake API server was read over HTTP/%d, want HTTP/%d", resp.ProtoMajor, wantProto)
	}
	if v, failed := state.probe(ctx); failed {
		t.Fatalf("probe: %s: %s", v.verdict, v.message)
	}
	deadline := time.After(time.Minute)
	for current := false; !current; {
		e := state.assess(time.Now())
		current = e.fatal == nil && e.pending == nil && !e.syncing
		if e.fatal != nil {
			t.Fatalf("verdict %s: %s", e.fatal.verdict, e.fatal.message)
		}
		if !current {
			select {
			case <-state.notifications():
			case <-time.After(time.Second):
			case <-deadline:
				t.Fatal("the healthy fake cluster was not Current within a minute")
			}
		}
	}
	rt := state.httpClient.Transport
	for {
		if tr, ok := rt.(*http.Transport); ok {
			runtime.AddCleanup(tr, func(struct{}) { close(freed) }, struct{}{})
			break
		}
		w, ok := rt.(utilnet.RoundTripperWrapper)
		if !ok {
			t.Fatalf("the cluster's transport %T wraps no *http.Transport that can be reached", rt)
		}
		rt = w.WrappedRoundTripper()
	}
	conns := state.dialed.dialedSoFar()
	if len(conns) == 0 {
		t.Fatal("no connection of the cluster was open before it was closed: the test proves nothing")
	}
	state.close()
	for _, c := range conns {
		// A closed connection refuses a deadline.
		if err := c.SetDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
			t.Errorf("connection to %s still open once the cluster was closed (SetDeadline: %v)", c.RemoteAddr(), err)
		}
	}
}

// TestPingsThroughAProxy: a cluster reached through a proxy keeps client-go's HTTP/2 pings
// (TCP's keepalive sees only the path to the proxy), as does every cluster when
// HTTP2_READ_IDLE_TIMEOUT_SECONDS asks for them; one reached directly has none.
func TestPingsThroughAProxy(t *testing.T) {
	proxy, err := url.Parse("http://proxy.example:3128")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		proxy     func(*http.Request) (*url.URL, error)
		idleEnv   string
		wantPings bool
	}{
		{name: "direct", proxy: func(*http.Request) (*url.URL, error) { return nil, nil }},
		{name: "proxy-url", proxy: http.ProxyURL(proxy), wantPings: true},
		{name: "direct, HTTP2_READ_IDLE_TIMEOUT_SECONDS set", proxy: func(*http.Request) (*url.URL, error) { return nil, nil }, idleEnv: "20", wantPings: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HTTP2_READ_IDLE_TIMEOUT_SECONDS", tt.idleEnv)
			if tt.idleEnv == "" {
				if err := os.Unsetenv("HTTP2_READ_IDLE_TIMEOUT_SECONDS"); err != nil {
					t.Fatal(err)
				}
			}
			got, err := needsPings(&rest.Config{Host: "https://cluster.example:6443"}, &http.Transport{Proxy: tt.proxy})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.wantPings {
				t.Errorf("needsPings = %v, want %v", got, tt.wantPings)
			}
		})
	}
}
