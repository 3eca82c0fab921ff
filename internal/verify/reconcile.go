package verify

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/org/app-status-action/internal/assess"
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

// The annotation the Flux Operator disables reconciliation with (the ones Flux's controllers
// read a request from are flux.RequestedAtAnnotation and flux.ForceAtAnnotation).
const (
	operatorReconcile = "fluxcd.controlplane.io/reconcile"
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
type requestSlots = *semaphore.Weighted

func newRequestSlots(n int) requestSlots { return semaphore.NewWeighted(int64(n)) }

// trigger is what a cluster's reconcile requests did, for its result.
type trigger struct {
	mu          sync.Mutex
	start       time.Time
	requested   map[string]bool
	requestedAt time.Time
	sourceAt    time.Time
	notes       []string
	// roots are the tokens of the requests sent to the requested objects, by ID: without a
	// revision to gate on (or with force), the verdict waits until Flux has handled them.
	roots map[string]flux.ReconcileRequest
	// finished is set once the requests are all sent (or given up); poke wakes the cluster's
	// loop then.
	finished bool
	poke     func()
	// source is the source request the run waits for Flux to handle before it asks the next
	// step, when no revision is given (awaitHandled); nil when none.
	source *assess.ReconcileWait
}

// maxNotes bounds the notes of a cluster; the same note is kept once.
const maxNotes = 20

func (t *trigger) note(format string, args ...any) {
	n := sanitize.Compact(fmt.Sprintf(format, args...))
	if r := []rune(n); len(r) > 400 {
		n = string(r[:400]) + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if slices.Contains(t.notes, n) {
		return
	}
	if len(t.notes) == maxNotes {
		t.notes[maxNotes-1] = "(more notes left out)"
		return
	}
	t.notes = append(t.notes, n)
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

func (t *trigger) sentRoot(id string, r flux.ReconcileRequest) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.roots == nil {
		t.roots = map[string]flux.ReconcileRequest{}
	}
	t.roots[id] = r
}

func (t *trigger) finish() {
	t.mu.Lock()
	t.finished = true
	poke := t.poke
	t.mu.Unlock()
	if poke != nil {
		poke()
	}
}

// awaiting records the source request the requests wait for (nil for none), and wakes the
// cluster's loop so that its progress says so.
func (t *trigger) awaiting(w *assess.ReconcileWait) {
	t.mu.Lock()
	changed := (w == nil) != (t.source == nil) || (w != nil && *w != *t.source)
	t.source = w
	poke := t.poke
	t.mu.Unlock()
	if changed && poke != nil {
		poke()
	}
}

// sourceWait is the source request the requests wait for, nil for none.
func (t *trigger) sourceWait() *assess.ReconcileWait {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.source == nil {
		return nil
	}
	w := *t.source
	return &w
}

// state is whether the requests are all sent, and the requests sent to requested objects.
func (t *trigger) state() (finished bool, roots map[string]flux.ReconcileRequest) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.finished, maps.Clone(t.roots)
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
	source := t.sourceAt
	if source.IsZero() || (!applied.IsZero() && applied.Before(source)) {
		// The verdict came before the requests read the source again: it had the revision
		// when Flux applied it, at the latest.
		source = applied
	}
	r.RequestedMs, r.SourceReadyMs, r.AppliedMs = ms(t.requestedAt), ms(source), ms(applied)
	return r
}

// requestReconcile asks Flux to reconcile every requested object now, as `flux reconcile
// --with-source` does, and returns when it has asked (or ctx ends): first each object's source
// (a HelmChart's own source too), then the object itself. With a revision, the object is asked
// once the source's artifact carries it (the source asked again every 10 to 15 s while it does
// not: the commit may reach the Git host after the first request). Without one, nothing else
// says the source has fetched: each step is asked once Flux has handled the request of the one
// before (awaitHandled), upstream first, as flux waits for the source's request before it asks
// the Kustomization; else kustomize-controller would apply the artifact the source had before
// the run, and say so at once. Each source is asked once per round however many objects share
// it. It never touches a suspended object, and never changes the verdict: what it could not do
// is a note.
func (s *clusterState) requestReconcile(ctx context.Context, t *trigger, slots requestSlots) {
	defer t.finish()
	var plans []reconcilePlan
	graph := &sourceGraph{up: map[string][]flux.SourceRef{}}
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
			p.sources = s.withUpstream(ctx, graph, src, 0)
		}
		plans = append(plans, p)
	}
	if s.req.Revision.IsZero() {
		s.requestSourcesInTurn(ctx, t, slots, plans, graph.heights())
	} else {
		// The sources, once each.
		for _, src := range plans2sources(plans) {
			s.requestSource(ctx, t, slots, src)
		}
		s.awaitRevision(ctx, t, slots, plans)
	}
	for _, p := range plans {
		if ctx.Err() != nil {
			return
		}
		now := s.req.Clock()
		body := map[string]string{flux.RequestedAtAnnotation: token(now)}
		forced := s.req.Reconcile == ReconcileForce && p.ref.Kind == flux.KindHelmRelease
		if forced {
			body[flux.ForceAtAnnotation] = body[flux.RequestedAtAnnotation]
		}
		if obj := s.request(ctx, t, slots, p.ref.Kind.GroupVersionResource(), p.ref.ID(), p.ref.Namespace, p.ref.Name, body); obj != nil {
			t.sentRoot(p.ref.ID(), flux.NewReconcileRequest(obj, body[flux.RequestedAtAnnotation], forced))
		}
	}
}

// conflictRetries is how often a request is read and sent again when the object changed
// between the two (its status moves all the time).
const conflictRetries = 5

// request reads an object and, unless it is suspended, sends it the request annotations,
// patched with the resourceVersion read: one suspended in between is refused (409) and read
// again, so a suspended object is never asked. It returns the object as the accepted request
// left it, nil when the request was not accepted.
func (s *clusterState) request(ctx context.Context, t *trigger, slots requestSlots, gvr schema.GroupVersionResource, id, ns, name string, annotations map[string]string) *unstructured.Unstructured {
	for range conflictRetries {
		obj, err := s.getFlux(ctx, gvr, ns, name)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			t.note("reconciliation not requested: reading %s: %s", id, apiMessage(err))
			return nil
		case suspended(obj):
			t.note("reconciliation not requested: %s is suspended", id)
			return nil
		}
		patched, conflict := s.patchRequest(ctx, t, slots, gvr, id, ns, name, obj.GetResourceVersion(), annotations)
		if !conflict {
			return patched
		}
	}
	t.note("reconciliation not requested: %s changed each time it was read (409)", id)
	return nil
}

// reconcilePlan is a requested object and its sources, upstream first (its direct source
// last).
type reconcilePlan struct {
	ref     flux.Ref
	sources []flux.SourceRef
}

// maxSourceDepth is how many levels of sources withUpstream follows above an object's own
// source: a HelmChart's source, an ArtifactGenerator's sources, theirs in turn.
const maxSourceDepth = 4

// sourceGraph is what each source the run asks builds from, by ID, each read once.
type sourceGraph struct {
	up map[string][]flux.SourceRef
}

// withUpstream is src preceded by the sources it builds from, each of those preceded by its
// own, upstream first: a HelmChart's own source (chartUpstream), the sources of the
// ArtifactGenerator that writes an ExternalArtifact (generatorSources), to maxSourceDepth
// levels above the object's own source (a loop of generators ends there). What each source
// builds from is read once, into g.
func (s *clusterState) withUpstream(ctx context.Context, g *sourceGraph, src flux.SourceRef, depth int) []flux.SourceRef {
	if depth >= maxSourceDepth {
		return []flux.SourceRef{src}
	}
	up, read := g.up[src.ID()]
	if !read {
		switch src.Kind {
		case "HelmChart":
			if u, ok := s.chartUpstream(ctx, src); ok {
				up = []flux.SourceRef{u}
			}
		case flux.KindExternalArtifact:
			up = s.generatorSources(ctx, src)
		}
		g.up[src.ID()] = up
	}
	var out []flux.SourceRef
	for _, u := range up {
		out = append(out, s.withUpstream(ctx, g, u, depth+1)...)
	}
	return append(out, src)
}

// heights gives each source of g its height: 0 for one that builds from no source the run
// asks, else one more than the highest of those it builds from, over every plan's sources
// at once (a source cut off at maxSourceDepth in one plan has its height from another); a
// loop is cut where it closes, the walk entering it in the order of the IDs.
func (g *sourceGraph) heights() map[string]int {
	height := map[string]int{}
	onPath := map[string]bool{}
	var of func(id string) int
	of = func(id string) int {
		if h, ok := height[id]; ok {
			return h
		}
		onPath[id] = true
		h := 0
		for _, u := range g.up[id] {
			if !onPath[u.ID()] {
				h = max(h, of(u.ID())+1)
			}
		}
		onPath[id] = false
		height[id] = h
		return h
	}
	// (In the order of the IDs: where a loop is cut depends on where the walk enters it, and
	// the steps must not change from one run to the next.)
	for _, id := range slices.Sorted(maps.Keys(g.up)) {
		of(id)
	}
	return height
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

// awaitRevision waits until the direct source of every plan has the expected revision, or has
// moved past it (flux.MovedPast: the object applied it before the source moved on, or the
// source's artifact moved to another while the run watched), asking the sources of the plans
// still lacking it again every 10 to 15 s. A source past the revision will never have it:
// the object is asked all the same, and the verdict rules judge what it applies.
func (s *clusterState) awaitRevision(ctx context.Context, t *trigger, slots requestSlots, plans []reconcilePlan) {
	next := s.req.Clock().Add(reRequestPause())
	poll := time.NewTicker(sourcePoll)
	defer poll.Stop()
	first := map[string]flux.Source{}
	for {
		var lacking []reconcilePlan
		moved, missing := false, false
		for _, p := range plans {
			if len(p.sources) == 0 {
				continue
			}
			src := p.sources[len(p.sources)-1]
			read, known := s.readArtifact(ctx, src)
			switch {
			case !known:
				missing = missing || read.Ref.Name != ""
				continue
			case s.req.Revision.Matches(read.Revisions()...):
				continue
			}
			if _, seen := first[src.ID()]; !seen && read.Revision != "" {
				first[src.ID()] = read
			}
			// (The object's own read is made only when the source's reads do not tell.)
			if flux.MovedPast(s.req.Revision, first[src.ID()], read, false) || flux.MovedPast(s.req.Revision, first[src.ID()], read, s.hasApplied(ctx, p.ref, read)) {
				moved = true
				continue
			}
			lacking = append(lacking, p)
		}
		if ctx.Err() != nil {
			return
		}
		if len(lacking) == 0 {
			if !moved && !missing {
				t.sourceReady(s.req.Clock())
			}
			return
		}
		if now := s.req.Clock(); !now.Before(next) {
			for _, src := range plans2sources(lacking) {
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

// readArtifact reads what a source's artifact is now; known is false for a kind that is not
// a Flux source (an empty Source), or a source not found (its Ref alone): nothing to wait
// for, the verdict judges the object without it. Otherwise the Source holds no revision when
// it cannot be read or has no artifact of its current spec yet (a HelmChart that has not
// built).
func (s *clusterState) readArtifact(ctx context.Context, src flux.SourceRef) (read flux.Source, known bool) {
	gvr, ok := src.GroupVersionResource()
	if !ok {
		return flux.Source{}, false
	}
	obj, err := s.readSource(ctx, gvr, src.Namespace, src.Name)
	if apierrors.IsNotFound(err) {
		return flux.Source{Ref: src}, false
	}
	if err != nil || obj == nil {
		return flux.Source{Ref: src}, true
	}
	read = flux.ReadSource(src, obj)
	if src.Kind == "HelmChart" && !read.Done {
		// It records the revision it builds from before it has built.
		return flux.Source{Ref: src}, true
	}
	return read, true
}

// hasApplied reports whether a requested object last applied the expected revision
// (flux.Gate.HasApplied), as the run reads it now.
func (s *clusterState) hasApplied(ctx context.Context, ref flux.Ref, src flux.Source) bool {
	obj, err := s.readSource(ctx, ref.Kind.GroupVersionResource(), ref.Namespace, ref.Name)
	if err != nil || obj == nil {
		return false
	}
	return flux.Evaluate(ref, obj, s.req.Revision, &src).HasApplied
}

// reRequestPause is how long to wait before asking a source again: 10 to 15 s, spread so a
// fleet's clusters do not ask in step. (Jitter, not a secret: math/rand is right.)
func reRequestPause() time.Duration {
	return reRequestEvery + rand.N(reRequestJitter) //nolint:gosec // jitter, not a secret
}

// generatorSources are the sources the ArtifactGenerator that writes an ExternalArtifact
// builds from (spec.sources): asked before the generator, which builds from their artifacts
// as they stand. None when another producer writes it, or it cannot be read.
func (s *clusterState) generatorSources(ctx context.Context, artifact flux.SourceRef) []flux.SourceRef {
	gvr, _ := artifact.GroupVersionResource()
	obj, err := s.getFlux(ctx, gvr, artifact.Namespace, artifact.Name)
	if err != nil {
		return nil
	}
	gen := flux.ReadSource(artifact, obj).Producer
	if gen.Name == "" {
		return nil
	}
	genObj, err := s.getFlux(ctx, flux.ArtifactGeneratorGVR, gen.Namespace, gen.Name)
	if err != nil {
		return nil
	}
	var out []flux.SourceRef
	for _, in := range flux.ReadGenerator(gen, genObj).Sources {
		if _, ok := in.Ref.GroupVersionResource(); ok && in.Ref.Name != "" {
			out = append(out, in.Ref)
		}
	}
	return out
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
		if err == nil && ociHelmRepository(repo) {
			return flux.SourceRef{}, false
		}
	}
	return up, true
}

// requestSource asks source-controller to reconcile a source now, unless it is suspended. An
// ExternalArtifact has no controller of its own to ask: its producer is asked when it is an
// ArtifactGenerator (spec.sourceRef), and a note says so when it is not. It returns the request
// sent, nil when none was.
func (s *clusterState) requestSource(ctx context.Context, t *trigger, slots requestSlots, src flux.SourceRef) *sourceRequest {
	gvr, ok := src.GroupVersionResource()
	if !ok {
		return nil
	}
	if src.Kind == flux.KindExternalArtifact {
		obj, err := s.getFlux(ctx, gvr, src.Namespace, src.Name)
		if err != nil {
			t.note("reconciliation not requested: reading %s: %s", src.ID(), apiMessage(err))
			return nil
		}
		gen := flux.ReadSource(src, obj).Producer
		if gen.Name == "" {
			producer, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "sourceRef")
			t.note("reconciliation not requested: %s is written by %s, which app-status cannot ask to reconcile; its artifact is verified as it is",
				src.ID(), cmp.Or(strings.TrimSpace(producer["kind"]+" "+producer["name"]), "an unnamed producer"))
			return nil
		}
		return s.requestSourceObject(ctx, t, slots, flux.ArtifactGeneratorGVR, gen.ID(), gen.Namespace, gen.Name)
	}
	return s.requestSourceObject(ctx, t, slots, gvr, src.ID(), src.Namespace, src.Name)
}

// patchRequest sends one request: a merge patch of the object's annotations alone, with the
// run's field manager and the resourceVersion the run read (a version changed since, say
// suspended, is refused with 409), within a request slot. A refusal is a note, never the
// verdict. It returns the object as the accepted request left it (nil if not accepted), and
// whether the object had changed.
func (s *clusterState) patchRequest(ctx context.Context, t *trigger, slots requestSlots, gvr schema.GroupVersionResource, id, ns, name, resourceVersion string, annotations map[string]string) (patched *unstructured.Unstructured, conflict bool) {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations, "resourceVersion": resourceVersion}})
	if err != nil {
		return nil, false
	}
	if slots.Acquire(ctx, 1) != nil {
		return nil, false
	}
	defer slots.Release(1)
	rctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	patched, err = s.dynamicClient.Resource(gvr).Namespace(ns).Patch(rctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager})
	switch {
	case err == nil:
		t.sent(id, s.req.Clock())
		return patched, false
	case ctx.Err() != nil:
		t.note("reconciliation request for %s may have been sent as the cluster's verdict came", id)
	case apierrors.IsConflict(err):
		return nil, true
	case apierrors.IsForbidden(err):
		t.note("reconciliation not requested: the credentials may not patch %s (403): %s", id, apiMessage(err))
	default:
		t.note("reconciliation request for %s failed: %s", id, apiMessage(err))
	}
	return nil, false
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

// awaitsHandling reports whether the verdict must wait until Flux has handled the run's own
// requests: with no revision to gate on, the state before the request would pass; a forced
// Helm release runs again (hooks included) whatever the revision.
func (s *clusterState) awaitsHandling() bool {
	return s.req.Reconcile == ReconcileForce || s.req.Revision.IsZero()
}

// unhandled is what the run still waits for when its verdict waits for its own requests: the
// requests not sent yet (the source request they wait on, when there is one), or a requested
// object whose controller has not handled the run's request, or one sent after it
// (flux.ReconcileRequest.Handled): the first whose reconcile is not handled, else the first
// whose force alone is left; nil when nothing. Before and Forced say whether a failure read now
// is the state before the request (assess.ReconcileWait): while a request is not sent, or a
// requested object's reconcile, not its force alone, is not handled; Before only without a
// revision, Forced only for a forced Helm release.
func (s *clusterState) unhandled(t *trigger) *assess.ReconcileWait {
	finished, roots := t.state()
	before := s.req.Revision.IsZero() // (with a revision, the revision gate tells the states apart)
	if !finished {
		w := t.sourceWait()
		if w == nil {
			w = &assess.ReconcileWait{Sending: true}
		}
		w.Before = before
		w.Forced = s.req.Reconcile == ReconcileForce && slices.ContainsFunc(s.req.Resources, func(r flux.Ref) bool { return r.Kind == flux.KindHelmRelease })
		return w
	}
	var first, reconciling *assess.ReconcileWait
	forced := false
	for _, id := range slices.Sorted(maps.Keys(roots)) {
		r := roots[id]
		obj := s.requestedObject(id)
		if obj == nil {
			continue
		}
		ok, field := r.Handled(obj)
		if ok {
			continue
		}
		w := &assess.ReconcileWait{ID: id, Token: r.Token, Field: field}
		first = cmp.Or(first, w)
		// (Handled names the reconcile's own field first: only the force is left otherwise.)
		if field != flux.ForceHandledField {
			reconciling = cmp.Or(reconciling, w)
			forced = forced || r.Forced
		}
	}
	if reconciling == nil {
		return first
	}
	reconciling.Before, reconciling.Forced = before, forced
	return reconciling
}

// requestedObject is the requested object of ID id as the watches hold it; nil when they do
// not, or id is not one of the run's resources.
func (s *clusterState) requestedObject(id string) *unstructured.Unstructured {
	for _, ref := range s.req.Resources {
		if ref.ID() != id {
			continue
		}
		cached, _ := s.watches.get(assess.ListKey{GVR: ref.Kind.GroupVersionResource(), Namespace: ref.Namespace}).Object(ref.Namespace, ref.Name)
		obj, _ := cached.(*unstructured.Unstructured)
		return obj
	}
	return nil
}
