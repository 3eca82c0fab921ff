package verify

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// TestClusterConnectionsEndWithIt: once a cluster is done (close), none of its connections is
// open and its transport, with every connection's buffers, is garbage within seconds, not 30s
// later, when x/net's HTTP/2 health-check timer would let go of it (golang/go#80920), nor after
// an idle timeout. Usually at once; x/net holds a connection that was dialed and never carried
// a request for up to 5s after it was made, and a TCP connect net/http started may still finish
// (probeTimeout, 5s), so on a loaded machine the test allows 15s.
func TestClusterConnectionsEndWithIt(t *testing.T) {
	t.Parallel()
	if v := os.Getenv("HTTP2_READ_IDLE_TIMEOUT_SECONDS"); v != "" && v != "0" {
		t.Skip("HTTP2_READ_IDLE_TIMEOUT_SECONDS asks for client-go's pings, whose timer holds a closed connection for its period")
	}
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
			closed := time.Now()
			for {
				runtime.GC()
				select {
				case <-freed:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if held := time.Since(closed); held > 15*time.Second {
					t.Fatalf("the cluster's transport (its connections and their buffers) was still held %v after the cluster was done", held.Round(time.Second))
				}
			}
		})
	}
}

// verifyAndClose verifies the fake cluster until it is Current, with its watches open, closes
// it as verifyCluster does, and closes freed when its transport is garbage collected.
func verifyAndClose(t *testing.T, s *fakeapi.Server, wantProto int, freed chan struct{}) {
	t.Helper()
	state := fakeClusterState(t, s, nil)
	resp, err := state.httpClient.Get(s.URL() + "/version")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.ProtoMajor != wantProto {
		t.Fatalf("the fake API server was read over HTTP/%d, want HTTP/%d", resp.ProtoMajor, wantProto)
	}
	if v, failed := state.probe(t.Context()); failed {
		t.Fatalf("probe: %s: %s", v.Verdict, v.Message)
	}
	untilCurrent(t, state)
	runtime.AddCleanup(baseTransport(t, state.httpClient.Transport), func(struct{}) { close(freed) }, struct{}{})
	conns := state.dialed.dialedSoFar()
	if len(conns) == 0 {
		t.Fatal("no connection of the cluster was open before it was closed: the test proves nothing")
	}
	state.close()
	checkClosed(t, conns, "once the cluster was closed")
}

// fakeClusterRequest is a request for the app the fake API servers hold, at its revision.
func fakeClusterRequest(t testing.TB) Request {
	t.Helper()
	want, err := flux.ParseRevision(starveCommit[:7])
	if err != nil {
		t.Fatal(err)
	}
	cpu := fixedCPUWatch(time.Millisecond)
	cpu.sample()
	return Request{
		Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}},
		Revision:  want, Timeout: time.Minute, Workloads: true, cpu: cpu,
	}
}

// fakeClusterState is the state of the fake cluster s, reached without checking its
// certificate, whose handshakes onHandshake (when set) is told of. The caller closes it.
func fakeClusterState(t *testing.T, s *fakeapi.Server, onHandshake func(tls.ConnectionState)) *clusterState {
	t.Helper()
	req := fakeClusterRequest(t)
	req.onHandshake = onHandshake
	state, err := newClusterState(t.Context(), req.withDefaults(), insecureConfig(s))
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// insecureConfig reaches the fake cluster s without checking its certificate.
func insecureConfig(s *fakeapi.Server) *rest.Config {
	return &rest.Config{Host: s.URL(), TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
}

// untilCurrent assesses the cluster after every change until it is Current, and fails the
// test on a fatal verdict or after a minute.
func untilCurrent(t *testing.T, state *clusterState) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		e := state.assess(time.Now())
		if e.AwaitsConsistentRead {
			// As the cluster's loop does: Current is said on a consistent read.
			e = state.confirm(t.Context(), e, time.Now())
		}
		if e.Fatal != nil {
			t.Fatalf("verdict %s: %s", e.Fatal.Verdict, e.Fatal.Message)
		}
		if e.Pending == nil && !e.Syncing {
			return
		}
		select {
		case <-state.notifications():
		case <-time.After(time.Second):
		case <-deadline:
			t.Fatal("the healthy fake cluster was not Current within a minute")
		}
	}
}

// checkClosed fails the test for every connection of conns still open (when says after what).
func checkClosed(t *testing.T, conns []net.Conn, when string) {
	t.Helper()
	for _, c := range conns {
		// A closed connection refuses a deadline.
		if err := c.SetDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
			t.Errorf("connection to %s still open %s (SetDeadline: %v)", c.RemoteAddr(), when, err)
		}
	}
}

// TestHTTP2Pings: a cluster reached through a proxy (proxy-url) keeps client-go's HTTP/2
// health-check pings, since TCP's keepalive sees only the path to the proxy; one reached
// directly has none; HTTP2_READ_IDLE_TIMEOUT_SECONDS and HTTP2_PING_TIMEOUT_SECONDS set them
// as they set client-go's (0: none, not a number: the default), and DISABLE_HTTP2 turns HTTP/2
// off. (HTTPS_PROXY is read once per process by net/http, so it is not varied here: it takes
// the proxy-url path through the same proxy function.)
func TestHTTP2Pings(t *testing.T) {
	proxy, err := url.Parse("http://proxy.example:3128")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name               string
		proxyURL           bool
		env                map[string]string
		wantH2             bool
		wantIdle, wantPing time.Duration
	}{
		{name: "direct", wantH2: true},
		{name: "proxy-url", proxyURL: true, wantH2: true, wantIdle: 30 * time.Second, wantPing: 15 * time.Second},
		{name: "direct, HTTP2_READ_IDLE_TIMEOUT_SECONDS=20", env: map[string]string{"HTTP2_READ_IDLE_TIMEOUT_SECONDS": "20"},
			wantH2: true, wantIdle: 20 * time.Second, wantPing: 15 * time.Second},
		{name: "proxy-url, HTTP2_READ_IDLE_TIMEOUT_SECONDS=0", proxyURL: true, env: map[string]string{"HTTP2_READ_IDLE_TIMEOUT_SECONDS": "0"},
			wantH2: true, wantPing: 15 * time.Second},
		{name: "proxy-url, HTTP2_PING_TIMEOUT_SECONDS not a number", proxyURL: true, env: map[string]string{"HTTP2_PING_TIMEOUT_SECONDS": "soon"},
			wantH2: true, wantIdle: 30 * time.Second, wantPing: 15 * time.Second},
		{name: "DISABLE_HTTP2", proxyURL: true, env: map[string]string{"DISABLE_HTTP2": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, name := range []string{"HTTP2_READ_IDLE_TIMEOUT_SECONDS", "HTTP2_PING_TIMEOUT_SECONDS", "DISABLE_HTTP2"} {
				t.Setenv(name, tt.env[name])
				if _, set := tt.env[name]; !set {
					if err := os.Unsetenv(name); err != nil {
						t.Fatal(err)
					}
				}
			}
			cfg := &rest.Config{Host: "https://cluster.example:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
			if tt.proxyURL {
				cfg.Proxy = http.ProxyURL(proxy)
			}
			h, err := newClusterHTTPClient(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if (h.h2 != nil) != tt.wantH2 {
				t.Fatalf("HTTP/2 configured: %v, want %v", h.h2 != nil, tt.wantH2)
			}
			if h.h2 == nil {
				return
			}
			if h.h2.ReadIdleTimeout != tt.wantIdle || h.h2.PingTimeout != tt.wantPing { //nolint:staticcheck // SA1019: the fields newHTTP sets
				t.Errorf("pings after %v of silence, answered within %v; want %v and %v",
					h.h2.ReadIdleTimeout, h.h2.PingTimeout, tt.wantIdle, tt.wantPing) //nolint:staticcheck // SA1019: as above
			}
		})
	}
}

// TestSessionCache: a cluster's TLS sessions are kept for its later connections to resume,
// in a cache of its own, but not when its client certificate may change (an exec plugin's):
// a resumed session would present the old one.
func TestSessionCache(t *testing.T) {
	// Not parallel, nor its cases: they collect the caches they saw.
	certPEM, keyPEM := clientKeyPair(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		cfg       rest.Config
		wantCache bool
	}{
		{name: "token", cfg: rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "t", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, wantCache: true},
		{name: "client certificate inline", cfg: rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true, CertData: certPEM, KeyData: keyPEM}}, wantCache: true},
		{name: "client certificate files, read at each handshake", cfg: rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true, CertFile: certFile, KeyFile: keyFile}}},
		{name: "exec plugin", cfg: rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true},
			ExecProvider: &clientcmdapi.ExecConfig{Command: "true", APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}},
	}
	var caches []tls.ClientSessionCache
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := newClusterHTTPClient(&tt.cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			base := baseTransport(t, h.client.Transport)
			cache := base.TLSClientConfig.ClientSessionCache
			if got := cache != nil; got != tt.wantCache {
				t.Fatalf("session cache kept: %v, want %v", got, tt.wantCache)
			}
			if cache != nil {
				caches = append(caches, cache)
				again, err := newClusterHTTPClient(&tt.cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				if baseTransport(t, again.client.Transport).TLSClientConfig.ClientSessionCache == cache {
					t.Error("two clusters of one kubeconfig share a session cache")
				}
			}
		})
	}
	if len(caches) == 0 {
		t.Error("no case kept a session cache: the test proves nothing")
	}
}

// baseTransport is the *http.Transport under client-go's wrappers.
func baseTransport(t *testing.T, rt http.RoundTripper) *http.Transport {
	t.Helper()
	for {
		if tr, ok := rt.(*http.Transport); ok {
			return tr
		}
		w, ok := rt.(utilnet.RoundTripperWrapper)
		if !ok {
			t.Fatalf("the cluster's transport %T wraps no *http.Transport that can be reached", rt)
		}
		rt = w.WrappedRoundTripper()
	}
}

// clientKeyPair is a self-signed client certificate and its key, PEM-encoded.
func clientKeyPair(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}
