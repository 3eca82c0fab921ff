package verify

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/assess"
)

// clusterState is what verifying one cluster keeps between assessments: its clients, its
// watches (or lists), the reads off the assessment (fetcher) and the run's memory.
type clusterState struct {
	req      Request
	ctx      context.Context // the cluster's own: cancelled when its verdict is given
	watches  objectCache
	closeAll func()

	httpClient     *http.Client
	dialed         *dialedConns
	core           corev1client.CoreV1Interface // events, logs and Helm's storage Secrets
	dynamicClient  dynamic.Interface
	metadataClient metadata.Interface
	// builtin lists and watches the built-in kinds the classifier reads.
	builtin   *builtinClients
	throttled *throttleRecorder
	// releasesMu guards releases, what the Helm storage secrets read list (assess.ReleaseNeed).
	releasesMu sync.Mutex
	releases   map[string]assess.StoredRelease
	// configsMu guards configs, the checksums of the data of the ConfigMaps and Secrets a
	// Flagger Canary tracks (assess.ConfigNeed), by object: the last read of each.
	configsMu sync.Mutex
	configs   map[string]storedConfig

	// listOnlyMu guards listOnly, the watches whose objects a confirmation read alone was
	// refused (credentials that may list and watch a kind, not get it): they are listed.
	listOnlyMu sync.Mutex
	listOnly   map[assess.ListKey]bool

	// mem is the run's own memory, which only assess.Assess and assess.Preflight change.
	mem *assess.Memory
	// readOrder numbers the cluster's list reads (assess.Snapshot).
	readOrder *readOrder

	// disco asks the API server which resources a group version serves (discover), off the
	// assessment (fetches).
	disco discovery.DiscoveryInterface
	// mappingsMu guards mappings and mappingErrs, which assessments read; it is never held
	// while discovery runs.
	mappingsMu sync.Mutex
	// mappings caches discovery's answers: every assessment maps every inventory object.
	mappings map[schema.GroupVersionKind]*meta.RESTMapping
	// mappingErrs is the last error of discovery for a kind, shown while it is asked again.
	mappingErrs map[schema.GroupVersionKind]error
	// fetches runs discovery and Helm storage reads off the assessment.
	fetches *fetcher
	// awaited is what the last assessment needed of fetches (no lists: those are the object
	// cache's) and was still on its way when it ended.
	awaited assess.Needs
	// ahead is the evidence of a failure read while its lists were read again, for the
	// verdict that confirms it, and aheadOf the failures the last such read was of, until a
	// pass fails nothing; only the cluster's loop uses them.
	ahead   *evidenceAhead
	aheadOf []evidenceReads
}

// newClusterState builds the clients for a cluster and its object cache: informers, or lists
// for a snapshot. Nothing is contacted yet. The clients share one HTTP client (see
// newClusterHTTPClient), so the cluster gets one connection (one TLS handshake).
func newClusterState(ctx context.Context, req Request, config *rest.Config) (*clusterState, error) {
	cfg := rest.CopyConfig(config)
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "app-status-action"
	throttled := &throttleRecorder{clock: req.Clock}
	cfg.Wrap(throttled.wrap)
	h, err := newClusterHTTPClient(cfg, req.onHandshake)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	httpClient := h.client
	dyn, err := newDynamicClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	md, err := metadata.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	// Only the core API is read with typed clients: the whole clientset would build ~50 REST
	// clients for every cluster of the fleet.
	core, err := corev1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	// Discovery requests get a deadline of their own (watches must have none), over the same
	// connections, and end with the cluster's verification (the discovery client takes no
	// context).
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, &http.Client{Transport: boundTransport{rt: httpClient.Transport, ctx: ctx}, Timeout: listTimeout})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("build client: %w", err)
	}
	s := &clusterState{
		req: req, ctx: ctx, httpClient: httpClient, dialed: h.dialed, core: core, dynamicClient: dyn, metadataClient: md, throttled: throttled,
		builtin: &builtinClients{core: core, config: cfg, http: httpClient},
		disco:   disco,
		mem:     assess.NewMemory(), readOrder: &readOrder{}, mappings: map[schema.GroupVersionKind]*meta.RESTMapping{},
	}
	if req.Snapshot {
		s.watches = newListSet(ctx, s.readers(), req.Clock, s.readOrder, snapshotListTimeout)
		s.fetches = newFetcher(ctx, func() {}, true)
		s.closeAll = cancel
	} else {
		notify := make(chan struct{}, 1)
		ws := newWatchSet(ctx, s.readers(), req.Clock, func() {
			select {
			case notify <- struct{}{}:
			default:
			}
		})
		ws.notifyCh = notify
		s.watches = ws
		s.fetches = newFetcher(ctx, ws.notify, false)
		s.closeAll = func() {
			cancel()
			ws.close()
			s.fetches.wait()
		}
	}
	return s, nil
}

// readers are the clients of the cluster's lists and watches.
func (s *clusterState) readers() readers {
	return readers{dynamic: s.dynamicClient, metadata: s.metadataClient, builtin: s.builtin}
}

// poke wakes the cluster's loop, as a change of a watched object does.
func (s *clusterState) poke() {
	if ws, ok := s.watches.(*watchSet); ok {
		ws.notify()
	}
}

// notifications is the channel that says something changed (never for a snapshot).
func (s *clusterState) notifications() <-chan struct{} {
	if ws, ok := s.watches.(*watchSet); ok {
		return ws.notifyCh
	}
	return nil
}

// close stops every informer, waits for their goroutines and closes the idle connections of
// the transport underneath client-go's wrappers (http.Client's own CloseIdleConnections stops
// at the first wrapper).
func (s *clusterState) close() {
	s.dropEvidenceAhead()
	s.closeAll()
	utilnet.CloseIdleConnectionsFor(s.httpClient.Transport)
	s.dialed.closeAll()
}

// park closes the cluster's idle connections (the probe's) while it waits for its turn: the
// first lists open a new one, which resumes the probe's TLS session where the server allows it
// (newClusterHTTPClient), so the client key does not sign again and the server's certificate
// signatures are not checked again. Open, each would hold its TLS and HTTP/2 buffers and a
// reader goroutine, about 30 KB and a stack; a fleet of 1000 clusters with 20 read at once held
// about 1000 of them at its peak, 60 MiB of its 310 MiB. The new connection costs about 0.5 ms
// of CPU (its key exchange, HTTP/2's set-up and reads). With client-go's HTTP/2 pings (a
// cluster behind a proxy, HTTP2_READ_IDLE_TIMEOUT_SECONDS), the ping's timer holds a closed
// connection's buffers for its period (newClusterHTTPClient), so parking frees less there.
func (s *clusterState) park() {
	utilnet.CloseIdleConnectionsFor(s.httpClient.Transport)
}
