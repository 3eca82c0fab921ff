package verify

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/http2"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// Dead connections are found by TCP itself: keepalive probes after keepAliveIdle of silence,
// keepAliveCount of them keepAliveInterval apart, and a connection whose sent data goes
// unacknowledged for userTimeout is closed by the kernel (where it can be told, Linux).
const (
	keepAliveIdle     = 30 * time.Second
	keepAliveInterval = 10 * time.Second
	keepAliveCount    = 3
	userTimeout       = keepAliveIdle + keepAliveCount*keepAliveInterval
)

// newClusterHTTPClient is the HTTP client every request to one cluster goes through: client-go's
// own (transport.New, as rest.HTTPClientFor builds it: the same TLS configuration, proxy, and
// wrappers for credentials and the user agent), but for four things.
//
//   - The transport is the cluster's alone, never kept in client-go's process-wide cache.
//   - It keeps the cluster's TLS sessions, so that a connection after the first resumes one.
//   - Its connections are dialed by the returned dialedConns, which closes every one still
//     open when the cluster is done.
//   - A cluster reached directly gets HTTP/2 without health-check pings. x/net's health-check
//     timer is armed again by the read that fails when a connection closes, and nothing stops
//     it (golang/go#80920): for its period (30s in client-go) it holds the closed connection,
//     its buffers and the whole transport, about 60 KB a cluster, 60 MB for a fleet of 1000
//     whose verdicts come within seconds. There, TCP finds a broken connection instead, as the
//     ping would have in 45s: keepalive probes after 30s of silence and the kernel's user
//     timeout, about a minute; every request but a watch has a deadline of its own. A cluster
//     reached through a proxy (proxy-url, HTTPS_PROXY) keeps client-go's pings, since TCP sees
//     only the path to the proxy, as does every cluster when HTTP2_READ_IDLE_TIMEOUT_SECONDS
//     is set (client-go's own setting of the ping).
//
// Once the cluster is done, its transport is garbage within seconds: at once, or when x/net lets
// go of a connection that was dialed and never carried a request (5s after it was made), or a
// TCP connect net/http started ends (probeTimeout); with the pings, 30s later. A cluster behind
// a load balancer or an authenticating proxy that is its kubeconfig's server gets no pings:
// HTTP2_READ_IDLE_TIMEOUT_SECONDS=30 brings them back. onHandshake, when set, is told of every
// TLS handshake, resumed or not.
func newClusterHTTPClient(cfg *rest.Config, onHandshake func(tls.ConnectionState)) (*clusterHTTP, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Dial = (&net.Dialer{
		Timeout:         probeTimeout,
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: keepAliveIdle, Interval: keepAliveInterval, Count: keepAliveCount},
		Control:         setUserTimeout,
	}).DialContext
	tc, err := cfg.TransportConfig()
	if err != nil {
		return nil, err
	}
	h := &clusterHTTP{}
	if tc.Transport != nil {
		// A transport given with the config is used as client-go uses it (it dials itself).
		h.dialed = newDialedConns(tc.DialHolder.Dial)
		rt, err := transport.New(tc)
		if err != nil {
			return nil, err
		}
		h.client = &http.Client{Transport: rt, Timeout: cfg.Timeout}
		return h, nil
	}
	tlsConfig, err := transport.TLSConfigFor(tc)
	if err != nil {
		return nil, err
	}
	// The connections are counted outermost: an exec plugin's client certificate wraps the
	// dialer (client-go's tracker, to close them when the certificate changes), and a
	// connection closed here must leave that tracker too.
	h.dialed = newDialedConns(tc.DialHolder.Dial)
	dial := h.dialed.DialContext
	if tlsConfig != nil {
		configureClusterTLS(tc, tlsConfig, onHandshake)
	}
	proxy := http.ProxyFromEnvironment
	if tc.Proxy != nil {
		proxy = tc.Proxy
	}
	base := utilnet.SetOldTransportDefaults(&http.Transport{
		Proxy:               proxy,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 25,
		DialContext:         dial,
		DisableCompression:  tc.DisableCompression,
	})
	// No idle timeout: the cluster's connections end with it (dialedConns), and x/net's idle
	// timer, armed again when a stream ends after its connection closed, would hold the
	// connection and the transport for its 90s.
	base.IdleConnTimeout = 0
	// HTTP/2 as client-go configures it (utilnet.SetTransportDefaults), with its pings only
	// where TCP cannot stand for them.
	if os.Getenv("DISABLE_HTTP2") == "" && (tlsConfig == nil || len(tlsConfig.NextProtos) == 0 || slices.Contains(tlsConfig.NextProtos, http2.NextProtoTLS)) {
		if h.h2, err = configureHTTP2(cfg, base); err != nil {
			return nil, err
		}
	}
	rt, err := transport.HTTPWrappersForConfig(tc, base)
	if err != nil {
		return nil, err
	}
	h.client = &http.Client{Transport: rt, Timeout: cfg.Timeout}
	return h, nil
}

// configureClusterTLS sets up tlsConfig, a cluster's own: its session cache, and onHandshake,
// when set, told of every handshake.
func configureClusterTLS(tc *transport.Config, tlsConfig *tls.Config, onHandshake func(tls.ConnectionState)) {
	// The cluster's own session cache, never shared: a connection after the first (a
	// cluster that waited for its turn without one, a connection that broke) resumes the
	// session where the server allows it (Go's, so Kubernetes' API servers do; one of
	// several replicas behind a load balancer may not), proving the same identity to the
	// same server without a new signature by the client's key (1 ms of CPU for an RSA
	// 2048 key); the server's certificates are checked again for expiry, host name and
	// root, not their signatures. Two kubeconfigs of one server never resume each other's
	// sessions. A client certificate that may change gets no cache, since a resumed
	// session would carry the old one: an exec plugin's (client-go closes the connections
	// when it changes, so that the new one is presented) and one read from files at each
	// handshake (a rest.Config's CertFile and KeyFile; the CLI's kubeconfigs carry theirs
	// inline).
	if !tc.HasCertCallback() && !tc.TLS.ReloadTLSFiles {
		tlsConfig.ClientSessionCache = tls.NewLRUClientSessionCache(sessionCacheSize)
	}
	if onHandshake != nil {
		verify := tlsConfig.VerifyConnection
		tlsConfig.VerifyConnection = func(cs tls.ConnectionState) error {
			onHandshake(cs)
			if verify != nil {
				return verify(cs)
			}
			return nil
		}
	}
}

// configureHTTP2 adds HTTP/2 to base as client-go configures it, with client-go's pings only
// where TCP cannot stand for them (needsPings), and returns its HTTP/2 transport.
func configureHTTP2(cfg *rest.Config, base *http.Transport) (*http2.Transport, error) { //nolint:staticcheck // SA1019: as client-go configures HTTP/2 (newHTTP)
	pings, err := needsPings(cfg, base)
	if err != nil {
		return nil, err
	}
	h2, err := http2.ConfigureTransports(base) //nolint:staticcheck // SA1019 since x/net v0.63.0: client-go (utilnet.SetTransportDefaults) configures HTTP/2 so still
	if err != nil {
		return nil, fmt.Errorf("configure HTTP/2: %w", err)
	}
	if pings {
		h2.ReadIdleTimeout = envSeconds("HTTP2_READ_IDLE_TIMEOUT_SECONDS", 30*time.Second) //nolint:staticcheck // SA1019: as client-go does, above
		h2.PingTimeout = envSeconds("HTTP2_PING_TIMEOUT_SECONDS", 15*time.Second)          //nolint:staticcheck // SA1019: as client-go does, above
	}
	return h2, nil
}

// sessionCacheSize is how many TLS sessions a cluster keeps: one per host name (a later ticket
// replaces the one before), its server's and an HTTPS proxy's.
const sessionCacheSize = 2

// clusterHTTP is a cluster's HTTP client, and what ends its connections.
type clusterHTTP struct {
	client *http.Client
	dialed *dialedConns
	// h2 is the client's HTTP/2 transport; nil without HTTP/2 (DISABLE_HTTP2, a TLS
	// configuration that does not offer it, a transport given with the config).
	h2 *http2.Transport //nolint:staticcheck // SA1019: as client-go configures HTTP/2 (newHTTP)
}

// envSeconds is client-go's reading of its HTTP/2 ping settings (utilnet): a whole number of
// seconds from the environment variable, 0 for none, def when unset or not a number.
func envSeconds(name string, def time.Duration) time.Duration {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return def
	}
	return time.Duration(n) * time.Second
}

// needsPings reports whether the cluster's HTTP/2 connection keeps client-go's health-check
// pings: when a proxy stands between the runner and the API server (TCP's own checks would
// see only the proxy), or when HTTP2_READ_IDLE_TIMEOUT_SECONDS asks for client-go's setting.
func needsPings(cfg *rest.Config, base *http.Transport) (bool, error) {
	if os.Getenv("HTTP2_READ_IDLE_TIMEOUT_SECONDS") != "" {
		return true, nil
	}
	server, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return false, err
	}
	proxyURL, err := base.Proxy(&http.Request{URL: server})
	// A proxy setting that cannot be read keeps the pings: requests meet the same error and
	// say it; whether to ping is no reason to fail the cluster here.
	return err != nil || proxyURL != nil, nil
}

// dialedConns dials a cluster's connections and closes every one still open when the cluster
// is done (closeAll). Closing the transport's idle connections is not enough: an HTTP/2
// connection whose last stream is still being torn down is not idle yet, and would stay open,
// with its buffers, until the transport's idle timeout (90s).
type dialedConns struct {
	dial   func(ctx context.Context, network, address string) (net.Conn, error)
	mu     sync.Mutex
	conns  map[*dialedConn]struct{}
	closed bool
}

// errClusterDone is what a dial after closeAll gets.
var errClusterDone = errors.New("the cluster's verification has ended")

func newDialedConns(dial func(ctx context.Context, network, address string) (net.Conn, error)) *dialedConns {
	return &dialedConns{dial: dial, conns: map[*dialedConn]struct{}{}}
}

// DialContext dials as the net.Dialer does, and keeps the connection until it is closed.
func (d *dialedConns) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := d.dial(ctx, network, address)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		_ = c.Close()
		return nil, errClusterDone
	}
	dc := &dialedConn{Conn: c, owner: d}
	d.conns[dc] = struct{}{}
	return dc, nil
}

// closeAll closes every connection still open; later dials fail.
func (d *dialedConns) closeAll() {
	d.mu.Lock()
	conns := d.conns
	d.conns, d.closed = nil, true
	d.mu.Unlock()
	for c := range conns {
		_ = c.Conn.Close()
	}
}

// dialedSoFar returns the connections dialed and not closed yet.
func (d *dialedConns) dialedSoFar() []net.Conn {
	d.mu.Lock()
	defer d.mu.Unlock()
	conns := make([]net.Conn, 0, len(d.conns))
	for c := range d.conns {
		conns = append(conns, c.Conn)
	}
	return conns
}

// dialedConn is a connection that leaves its dialedConns when closed.
type dialedConn struct {
	net.Conn
	owner *dialedConns
	once  sync.Once
}

func (c *dialedConn) Close() error {
	c.once.Do(func() {
		c.owner.mu.Lock()
		delete(c.owner.conns, c)
		c.owner.mu.Unlock()
	})
	return c.Conn.Close()
}
