package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// ReconcileMode says whether the run asks Flux to reconcile before it verifies.
type ReconcileMode string

// The reconcile modes.
const (
	// ReconcileOff only reads (the default).
	ReconcileOff ReconcileMode = ""
	// ReconcileOn requests the reconciliation of the sources and the requested objects
	// (reconcile.fluxcd.io/requestedAt).
	ReconcileOn ReconcileMode = "true"
	// ReconcileForce also sets reconcile.fluxcd.io/forceAt on HelmReleases: helm-controller
	// then runs the release again, hooks included, even when nothing changed.
	ReconcileForce ReconcileMode = "force"
)

// The annotations Flux's controllers read a reconcile request from (fluxcd/pkg/apis/meta
// ReconcileRequestAnnotation, and helm-controller's ForceRequestAnnotation), and the one the
// Flux Operator disables reconciliation with.
const (
	requestedAtAnnotation = "reconcile.fluxcd.io/requestedAt"
	forceAtAnnotation     = "reconcile.fluxcd.io/forceAt"
	operatorReconcile     = "fluxcd.controlplane.io/reconcile"
	// FieldManager is the field manager of the run's requests. It must not start with
	// "kubectl": kustomize-controller removes the fields of kubectl* managers.
	FieldManager = "app-status"
)

// The pace of the requests: while the source has not the expected revision (it may reach the
// Git host or the registry after the first request), it is asked again every 10 to 15 s; its
// artifact is read every half second meanwhile.
const (
	reRequestEvery  = 10 * time.Second
	reRequestJitter = 5 * time.Second
	sourcePoll      = 500 * time.Millisecond
)

// requestSlots bounds how many reconcile requests the clusters of a run send at once, so a
// fleet does not send a Git host a thousand fetches in the same second.
type requestSlots chan struct{}

// trigger is what a cluster's reconcile requests did, for its result.
type trigger struct {
	mu          sync.Mutex
	start       time.Time
	requested   map[string]bool
	requestedAt time.Time
	sourceAt    time.Time
	notes       []string
}

func (t *trigger) note(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.notes = append(t.notes, sanitize.Compact(fmt.Sprintf(format, args...)))
}

func (t *trigger) sent(id string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.requested == nil {
		t.requested = map[string]bool{}
	}
	t.requested[id] = true
	if t.requestedAt.IsZero() {
		t.requestedAt = at
	}
}

func (t *trigger) sourceReady(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sourceAt.IsZero() || at.After(t.sourceAt) {
		t.sourceAt = at
	}
}

// report is the trigger's part of the cluster's result; applied is when the run first saw
// every requested object apply the expected revision.
func (t *trigger) report(applied time.Time) *result.Reconcile {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &result.Reconcile{Requested: []string{}, Notes: append([]string{}, t.notes...)}
	for id := range t.requested {
		r.Requested = append(r.Requested, id)
	}
	sort.Strings(r.Requested)
	ms := func(at time.Time) *int64 {
		if at.IsZero() {
			return nil
		}
		v := max(at.Sub(t.start).Milliseconds(), 0)
		return &v
	}
	r.RequestedMs, r.SourceReadyMs, r.AppliedMs = ms(t.requestedAt), ms(t.sourceAt), ms(applied)
	return r
}

// requestReconcile asks Flux to reconcile every requested object now, as `flux reconcile
// --with-source` does, and returns when it has asked (or ctx ends): first each object's source
// (a HelmChart's own source too), then, once the source's artifact carries the expected
// revision (asked again every 10 to 15 s while it does not: the commit may reach the Git host
// after the first request), the object itself. Each source is asked once per round however
// many objects share it. It never waits for its own request token (two runs at once coalesce
// their requests; the revision gate decides), never touches a suspended object, and never
// changes the verdict: what it could not do is a note.
func (s *clusterState) requestReconcile(ctx context.Context, t *trigger, slots requestSlots) {
	var plans []reconcilePlan
	for _, ref := range s.req.Resources {
		obj, err := s.getFlux(ctx, ref.Kind.GroupVersionResource(), ref.Namespace, ref.Name)
		switch {
		case ctx.Err() != nil:
			return // the verdict came first
		case apierrors.IsNotFound(err):
			t.note("reconciliation not requested: %s not found", ref.ID())
			continue
		case err != nil:
			t.note("reconciliation not requested: reading %s: %s", ref.ID(), apiMessage(err))
			continue
		case suspended(obj):
			t.note("reconciliation not requested: %s is suspended", ref.ID())
			continue
		}
		p := reconcilePlan{ref: ref}
		if src := flux.SourceOf(ref.Kind, obj); src.Name != "" {
			if src.Kind == "HelmChart" {
				if up, ok := s.chartUpstream(ctx, src); ok {
					p.sources = append(p.sources, up)
				}
			}
			p.sources = append(p.sources, src)
		}
		plans = append(plans, p)
	}
	// The sources, once each.
	asked := map[string]bool{}
	var direct []flux.SourceRef
	for _, p := range plans {
		for i, src := range p.sources {
			if !asked[src.ID()] {
				asked[src.ID()] = true
				s.requestSource(ctx, t, slots, src)
			}
			if i == len(p.sources)-1 {
				direct = append(direct, src)
			}
		}
	}
	if !s.req.Revision.IsZero() {
		s.awaitRevision(ctx, t, slots, plans2sources(plans), direct)
	}
	for _, p := range plans {
		if ctx.Err() != nil {
			return
		}
		body := map[string]string{requestedAtAnnotation: token(s.req.Clock())}
		if s.req.Reconcile == ReconcileForce && p.ref.Kind == flux.KindHelmRelease {
			body[forceAtAnnotation] = body[requestedAtAnnotation]
		}
		s.patchRequest(ctx, t, slots, p.ref.Kind.GroupVersionResource(), p.ref.ID(), p.ref.Namespace, p.ref.Name, body)
	}
}

// reconcilePlan is a requested object and its sources, upstream first.
type reconcilePlan struct {
	ref     flux.Ref
	sources []flux.SourceRef
}

// plans2sources lists every source of the plans, upstream ones first, once each.
func plans2sources(plans []reconcilePlan) []flux.SourceRef {
	seen := map[string]bool{}
	var out []flux.SourceRef
	for _, p := range plans {
		for _, src := range p.sources {
			if !seen[src.ID()] {
				seen[src.ID()] = true
				out = append(out, src)
			}
		}
	}
	return out
}

// awaitRevision waits until every direct source's artifact carries the expected revision,
// asking all the sources again every 10 to 15 s while one does not.
func (s *clusterState) awaitRevision(ctx context.Context, t *trigger, slots requestSlots, all, direct []flux.SourceRef) {
	next := s.req.Clock().Add(reRequestPause())
	poll := time.NewTicker(sourcePoll)
	defer poll.Stop()
	for {
		missing := false
		for _, src := range direct {
			gvr, ok := src.GroupVersionResource()
			if !ok {
				continue
			}
			obj, err := s.getFlux(ctx, gvr, src.Namespace, src.Name)
			if err != nil || !s.req.Revision.Matches(flux.ReadSource(src, obj).Revisions()...) {
				missing = true
			}
		}
		if !missing {
			t.sourceReady(s.req.Clock())
			return
		}
		if now := s.req.Clock(); !now.Before(next) {
			for _, src := range all {
				s.requestSource(ctx, t, slots, src)
			}
			next = now.Add(reRequestPause())
		}
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		}
	}
}

// reRequestPause is how long to wait before asking a source again: 10 to 15 s, spread so a
// fleet's clusters do not ask in step. (Jitter, not a secret: math/rand is right.)
func reRequestPause() time.Duration {
	return reRequestEvery + rand.N(reRequestJitter) //nolint:gosec // jitter, not a secret
}

// chartUpstream is the source a HelmChart builds from, when it can be asked to reconcile (a
// HelmRepository of type oci has no artifact, and nothing to reconcile, as flux says).
func (s *clusterState) chartUpstream(ctx context.Context, chart flux.SourceRef) (flux.SourceRef, bool) {
	gvr, _ := chart.GroupVersionResource()
	obj, err := s.getFlux(ctx, gvr, chart.Namespace, chart.Name)
	if err != nil {
		return flux.SourceRef{}, false
	}
	up := flux.ReadSource(chart, obj).Upstream
	if up.Name == "" {
		return flux.SourceRef{}, false
	}
	if up.Kind == "HelmRepository" {
		upGVR, _ := up.GroupVersionResource()
		repo, err := s.getFlux(ctx, upGVR, up.Namespace, up.Name)
		if err == nil {
			if typ, _, _ := unstructured.NestedString(repo.Object, "spec", "type"); typ == "oci" {
				return flux.SourceRef{}, false
			}
		}
	}
	return up, true
}

// requestSource asks source-controller to reconcile a source now, unless it is suspended.
func (s *clusterState) requestSource(ctx context.Context, t *trigger, slots requestSlots, src flux.SourceRef) {
	gvr, ok := src.GroupVersionResource()
	if !ok {
		return
	}
	obj, err := s.getFlux(ctx, gvr, src.Namespace, src.Name)
	switch {
	case ctx.Err() != nil:
		return
	case err != nil:
		t.note("reconciliation not requested: reading %s: %s", src.ID(), apiMessage(err))
		return
	case suspended(obj):
		t.note("reconciliation not requested: %s is suspended", src.ID())
		return
	}
	s.patchRequest(ctx, t, slots, gvr, src.ID(), src.Namespace, src.Name, map[string]string{requestedAtAnnotation: token(s.req.Clock())})
}

// patchRequest sends one request: a merge patch of the object's annotations alone, with the
// run's field manager, within a request slot. A 403 is a note, never the verdict.
func (s *clusterState) patchRequest(ctx context.Context, t *trigger, slots requestSlots, gvr schema.GroupVersionResource, id, ns, name string, annotations map[string]string) {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return
	}
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-slots }()
	rctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	_, err = s.dynamicClient.Resource(gvr).Namespace(ns).Patch(rctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager})
	switch {
	case err == nil:
		t.sent(id, s.req.Clock())
	case ctx.Err() != nil:
	case apierrors.IsForbidden(err):
		t.note("reconciliation not requested: the credentials may not patch %s (403): %s", id, apiMessage(err))
	default:
		t.note("reconciliation request for %s failed: %s", id, apiMessage(err))
	}
}

// getFlux reads one object with a deadline of its own.
func (s *clusterState) getFlux(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	rctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	return s.dynamicClient.Resource(gvr).Namespace(ns).Get(rctx, name, metav1.GetOptions{})
}

// suspended reports whether Flux must not be asked to reconcile an object: spec.suspend, or
// the Flux Operator's reconcile: disabled.
func suspended(obj *unstructured.Unstructured) bool {
	if s, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend"); s {
		return true
	}
	return obj.GetAnnotations()[operatorReconcile] == "disabled"
}

// token is the request's value, the time it was made, as flux reconcile writes it.
func token(now time.Time) string { return now.UTC().Format(time.RFC3339Nano) }
