package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/org/app-status-action/internal/result"
)

// clusterState is what verifying one cluster keeps between evaluations.
type clusterState struct {
	req            Request
	watches        *watchSet
	kube           kubernetes.Interface
	dynamicClient  dynamic.Interface
	metadataClient metadata.Interface
	// releases caches what the Helm storage secrets read list (see releaseObjects).
	releases map[string]storedRelease

	// inventories caches each Flux object's parsed inventory by resourceVersion: evaluations
	// run after every change of any watched object, the inventory changes only with its owner.
	inventories map[string]parsedInventory

	mapperMu    sync.Mutex
	mapper      *restmapper.DeferredDiscoveryRESTMapper
	lastRefresh time.Time
	// mappings caches the mapper's answers: every assessment maps every inventory object, and
	// the mapper's own lookup (a walk over every group and version) costs far more.
	mappings map[schema.GroupVersionKind]*meta.RESTMapping
}

// verifyCluster verifies one cluster and returns its verdict; it never returns an error:
// whatever goes wrong is the verdict.
func verifyCluster(ctx context.Context, req Request, target Target, rep *reporter) result.Cluster {
	start := req.Clock()
	out := result.Cluster{SchemaVersion: result.SchemaVersion, Name: target.Name, ExpectedRevision: req.Revision.String()}
	finish := func(v verdictReason) result.Cluster {
		out.Verdict, out.Code, out.Reason, out.Message = v.verdict, v.code, v.reason, v.message
		out.DurationMs = req.Clock().Sub(start).Milliseconds()
		if out.Flux == nil {
			out.Flux = []result.FluxObject{}
		}
		if out.Objects == nil {
			out.Objects = []result.Object{}
		}
		rep.report(target.Name, req.Clock().Sub(start), out.Verdict, out.Summary(), true)
		return out
	}
	if target.Config == nil {
		return finish(verdictReason{verdict: result.VerdictInvalidConfig, reason: "InvalidConfig", message: target.Invalid})
	}
	if ctx.Err() != nil {
		v, msg := stopVerdict(ctx)
		return finish(verdictReason{verdict: v, reason: string(v), message: cmp.Or(msg, "not started before the timeout")})
	}

	cfg := rest.CopyConfig(target.Config)
	cfg.QPS, cfg.Burst = 50, 100
	cfg.Dial = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	cfg.UserAgent = "app-status-action"
	state, err := newClusterState(req, cfg)
	if err != nil {
		return finish(verdictReason{verdict: result.VerdictInvalidConfig, reason: "InvalidConfig", message: err.Error()})
	}
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	notify := make(chan struct{}, 1)
	state.watches = newWatchSet(watchCtx, state.dynamicClient, state.metadataClient, func() {
		select {
		case notify <- struct{}{}:
		default:
		}
	})
	rep.report(target.Name, 0, result.VerdictInProgress, "connecting", false)
	if v, failed := state.probe(ctx); failed {
		return finish(v)
	}

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var last *assessment
	for {
		now := req.Clock()
		e := state.assess(now)
		last = e
		out.Flux, out.Objects = e.flux, e.objects
		switch {
		case e.fatal != nil:
			if e.fatal.verdict == result.VerdictFailed {
				state.gatherEvidence(ctx, out.Objects)
			}
			return finish(*e.fatal)
		case e.pending == nil && !e.syncing:
			return finish(verdictReason{verdict: result.VerdictCurrent, message: currentMessage(out)})
		case req.Snapshot && !e.syncing:
			p := *e.pending
			if e.notFound {
				p.verdict = result.VerdictNotFound
			} else {
				p.verdict = result.VerdictInProgress
			}
			return finish(p)
		}
		if e.pending != nil {
			rep.report(target.Name, now.Sub(start), result.VerdictInProgress, e.pending.message, false)
		}
		if !e.recheck.IsZero() {
			timer.Reset(max(e.recheck.Sub(now), 0))
		}
		select {
		case <-ctx.Done():
			return finish(stopped(ctx, last, req.Timeout))
		case <-notify:
		case <-timer.C:
		}
	}
}

// stopped is the verdict of a cluster whose wait ended before it had one of its own.
func stopped(ctx context.Context, last *assessment, timeout time.Duration) verdictReason {
	v, msg := stopVerdict(ctx)
	pending := verdictReason{message: "waiting for the first list"}
	if last != nil && last.pending != nil {
		pending = *last.pending
	}
	if v == result.VerdictTimeout {
		if last != nil && last.notFound {
			v = result.VerdictNotFound
		}
		return verdictReason{verdict: v, code: pending.code, reason: cmp.Or(pending.reason, "Timeout"),
			message: fmt.Sprintf("timed out after %s: %s", timeout, pending.message)}
	}
	return verdictReason{verdict: v, code: pending.code, reason: "Cancelled", message: msg + "; was " + pending.message}
}

// currentMessage says what was verified; the applied revision has a column of its own.
func currentMessage(c result.Cluster) string {
	if len(c.Objects) == 0 {
		return fmt.Sprintf("%d Flux objects Ready", len(c.Flux))
	}
	unverified := 0
	for _, o := range c.Objects {
		if o.Status != result.ObjectCurrent {
			unverified++
		}
	}
	if unverified > 0 {
		return fmt.Sprintf("%d objects Current, %d not verified (the credentials may not read them)", len(c.Objects)-unverified, unverified)
	}
	return fmt.Sprintf("%d objects Current", len(c.Objects))
}

// newClusterState builds the clients for a cluster. Nothing is contacted yet. The clients share
// one HTTP client, so the cluster gets one connection (one TLS handshake): built from the
// config separately, they would not share a transport, since the custom Dial makes client-go's
// transport cache miss.
func newClusterState(req Request, cfg *rest.Config) (*clusterState, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	md, err := metadata.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	kube, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("build client: %w", err)
	}
	disco := memory.NewMemCacheClient(kube.Discovery())
	return &clusterState{
		req: req, kube: kube, dynamicClient: dyn, metadataClient: md,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(disco), inventories: map[string]parsedInventory{},
		mappings: map[schema.GroupVersionKind]*meta.RESTMapping{},
	}, nil
}

// probe reads the first requested Flux object once, directly, so an unreachable cluster or
// refused credentials get their verdict in seconds instead of an informer retrying forever.
// Network errors are retried briefly; a missing object is not an error (it may be created).
func (s *clusterState) probe(ctx context.Context) (verdictReason, bool) {
	if len(s.req.Resources) == 0 {
		return verdictReason{}, false
	}
	ref := s.req.Resources[0]
	var err error
	for attempt := range 3 {
		attemptCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err = s.dynamicClient.Resource(ref.Kind.GroupVersionResource()).Namespace(ref.Namespace).Get(attemptCtx, ref.Name, metav1.GetOptions{})
		cancel()
		if err == nil || (apierrors.IsNotFound(err) && !isNotServed(err)) {
			return verdictReason{}, false
		}
		v, msg, ok := connectionVerdict(err, ref.ID())
		if !ok {
			return verdictReason{}, false // the informers will meet it again and say more
		}
		if v != result.VerdictUnreachable || ctx.Err() != nil || attempt == 2 {
			if ctx.Err() != nil && !errors.Is(context.Cause(ctx), errTimeout) {
				v, msg = stopVerdict(ctx)
			}
			return verdictReason{verdict: v, reason: string(v), message: msg}, true
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempt+1) * 500 * time.Millisecond):
		}
	}
	return verdictReason{}, false
}

// mapping finds the resource of a kind through discovery, refreshing it (at most every two
// seconds) for kinds the cluster started serving since, such as CRDs the app itself installs.
func (s *clusterState) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	s.mapperMu.Lock()
	defer s.mapperMu.Unlock()
	if m, ok := s.mappings[gvk]; ok {
		return m, nil
	}
	m, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) && time.Since(s.lastRefresh) > 2*time.Second {
		s.lastRefresh = time.Now()
		s.mapper.Reset()
		m, err = s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("the cluster does not serve %s", gvk.GroupVersion().WithKind(gvk.Kind))
		}
		return nil, fmt.Errorf("discover %s: %w", gvk.Kind, err)
	}
	s.mappings[gvk] = m
	return m, nil
}
