package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// requestCounts are the API requests of one verification, per cluster.
type requestCounts struct {
	PerCluster float64            // mean over the clusters
	Max        int                // the most any cluster got
	ByKind     map[string]float64 // mean per cluster: discovery, get, list, watch, ...
}

// countRequests runs the engine in this process, as `app-status verify` (or `get`, snapshot)
// would with the same request, with a transport that counts every request per cluster. The
// product has no switch for this: the count is the bench's business.
func countRequests(ctx context.Context, clusters []*testbed.Cluster, app, revision string, snapshot bool) (requestCounts, error) {
	ref, err := flux.ParseResource("kustomization/"+app, "flux-system")
	if err != nil {
		return requestCounts{}, err
	}
	rev, err := flux.ParseRevision(revision)
	if err != nil {
		return requestCounts{}, err
	}
	counters := make([]*counter, len(clusters))
	req := verify.Request{
		Resources: []flux.Ref{ref}, Revision: rev, Timeout: 2 * time.Minute, MaxParallel: len(clusters),
		Workloads: true, Snapshot: snapshot,
		Classify: classify.Options{CrashRestarts: 3, UnschedulableGrace: 120 * time.Second},
	}
	for i, c := range clusters {
		counters[i] = &counter{byKind: map[string]int{}}
		cfg := rest.CopyConfig(c.Config)
		cfg.WrapTransport = counters[i].wrap
		req.Targets = append(req.Targets, verify.Target{Name: c.Name, Config: cfg})
	}
	run := verify.Run(ctx, req)
	if run.Status != result.RunSuccess {
		return requestCounts{}, fmt.Errorf("in-process verification of %s on %d clusters: %s: %s", app, len(clusters), run.Status, run.Condition.Message)
	}
	out := requestCounts{ByKind: map[string]float64{}}
	for _, c := range counters {
		c.mu.Lock()
		out.PerCluster += float64(c.total) / float64(len(counters))
		out.Max = max(out.Max, c.total)
		for k, n := range c.byKind {
			out.ByKind[k] += float64(n) / float64(len(counters))
		}
		c.mu.Unlock()
	}
	return out, nil
}

// counter counts the requests sent to one cluster.
type counter struct {
	mu     sync.Mutex
	total  int
	byKind map[string]int
}

func (c *counter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		c.mu.Lock()
		c.total++
		c.byKind[requestKind(r)]++
		c.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// requestKind names what a request does: discovery, get (one object), list, watch, or its
// method for anything else.
func requestKind(r *http.Request) string {
	q := r.URL.Query()
	if w := q.Get("watch"); w == "true" || w == "1" {
		return "watch"
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 1 && parts[0] == "api":
		if len(parts) <= 2 {
			return "discovery"
		}
		rest = parts[2:]
	case len(parts) >= 1 && parts[0] == "apis":
		if len(parts) <= 3 {
			return "discovery"
		}
		rest = parts[3:]
	default:
		return "other"
	}
	if r.Method != http.MethodGet {
		return strings.ToLower(r.Method)
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	if len(rest) == 1 {
		return "list"
	}
	return "get"
}

// kindsOf lists a count's kinds in a stable order.
func (rc requestCounts) kindsOf() []string {
	var ks []string
	for k := range rc.ByKind {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func (rc requestCounts) breakdown() string {
	var parts []string
	for _, k := range rc.kindsOf() {
		parts = append(parts, fmt.Sprintf("%s %.4g", k, rc.ByKind[k]))
	}
	return strings.Join(parts, ", ")
}
