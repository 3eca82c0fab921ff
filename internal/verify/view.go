package verify

import (
	"context"
	"fmt"

	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/assess"
)

// clusterView is what was read of a cluster, as assess.Assess reads it: the watches (or a
// snapshot's lists), discovery's answers and the Helm release records. It only reads.
type clusterView struct {
	s     *clusterState
	lists objectCache
}

func (v clusterView) List(key assess.ListKey) (assess.List, bool) { return v.lists.peek(key) }

func (v clusterView) Mapping(gvk schema.GroupVersionKind) assess.Mapping {
	return v.s.peekMapping(gvk)
}

func (v clusterView) Release(key string) (assess.StoredRelease, bool) {
	v.s.releasesMu.Lock()
	defer v.s.releasesMu.Unlock()
	r, ok := v.s.releases[key]
	return r, ok
}

func (v clusterView) Explain(err error, what string) assess.Explanation {
	verdict, msg, ok := connectionVerdict(err, what)
	return assess.Explanation{Verdict: verdict, Message: msg, Known: ok, Detail: apiMessage(err)}
}

func (v clusterView) WaitingMessage(l assess.List, what string, now time.Time) string {
	return waitingMessage(l, what, now, v.s.req.cpu)
}

// spec is what the cluster verifies, as the decision takes it.
func (s *clusterState) spec() assess.Spec {
	return assess.Spec{Resources: s.req.Resources, Revision: s.req.Revision, Workloads: s.req.Workloads,
		FailOnSuspended: s.req.FailOnSuspended, Classify: s.req.Classify, Snapshot: s.req.Snapshot}
}

// maxFetchRounds bounds the rounds of one assessment (assess, fetch what it needs, assess
// again): a tree is read a level a round.
const maxFetchRounds = 16

// assess decides the cluster's state from what its watches (or lists) hold at now, fetching
// what the decision lacks and deciding again while a fetch completed something: a list (for a
// snapshot, read at once; for watches, opened, so the next assessment knows it is on its
// way), a kind's mapping, a Helm release record.
func (s *clusterState) assess(now time.Time) *assess.Assessment {
	return s.assessFrom(s.watches, now)
}

func (s *clusterState) assessFrom(lists objectCache, now time.Time) *assess.Assessment {
	view := clusterView{s: s, lists: lists}
	var e *assess.Assessment
	for range maxFetchRounds {
		e = assess.Assess(view, s.mem, s.spec(), now)
		if !s.fetch(lists, e.Needs, now) {
			break
		}
	}
	return e
}

// fetch starts (for a snapshot: makes) the reads of needs; it reports whether any of them
// changed what the view holds, so the decision is worth making again.
func (s *clusterState) fetch(lists objectCache, needs assess.Needs, now time.Time) bool {
	changed := false
	for _, key := range needs.Lists {
		if _, ok := lists.peek(key); !ok {
			lists.get(key)
			changed = true
		}
	}
	for _, gvk := range needs.Mappings {
		before := s.peekMapping(gvk)
		s.mapping(gvk, now)
		if after := s.peekMapping(gvk); after.Done != before.Done || after.Mapping != before.Mapping || (after.Err == nil) != (before.Err == nil) {
			changed = true
		}
	}
	for _, r := range needs.Releases {
		fetchKey := "release " + r.Key
		v, done, _ := s.fetches.get(fetchKey, func(ctx context.Context) (any, error) {
			return s.readRelease(ctx, r.Owner, r.Namespace, r.Name, now), nil
		})
		if !done {
			continue
		}
		s.fetches.forget(fetchKey)
		stored, _ := v.(assess.StoredRelease)
		s.releasesMu.Lock()
		if s.releases == nil {
			s.releases = map[string]assess.StoredRelease{}
		}
		s.releases[r.Key] = stored
		s.releasesMu.Unlock()
		changed = true
	}
	return changed
}

// peekMapping is what discovery answered for gvk so far; it starts nothing (mapping does).
func (s *clusterState) peekMapping(gvk schema.GroupVersionKind) assess.Mapping {
	s.mappingsMu.Lock()
	defer s.mappingsMu.Unlock()
	if m, ok := s.mappings[gvk]; ok {
		return assess.Mapping{Mapping: m, Done: true}
	}
	if err, ok := s.mappingErrs[gvk]; ok {
		return assess.Mapping{Err: err, Done: true}
	}
	return assess.Mapping{}
}

// confirm reads the cluster consistently after an assessment was Current but for the order of
// its reads (assess's consistency rule: every object judged read after the Flux status above
// it said applied), and returns the decision over that read. Lists are quorum reads (no
// resourceVersion: the API server answers from etcd, or from a watch cache it first brought up
// to date), so a list requested after another returned holds objects no older than it. With
// watches, whose streams are delivered in any order, everything is read anew as a snapshot
// reads it: the Flux objects a level of the tree a round, each list requested after the one
// of its owner's status returned; a snapshot (get) keeps its own lists. Then the lists still
// read too early (a Deployment listed in the same round as the nested Kustomization that owns
// it) are read once more, after every Flux list. It costs one list per kind and namespace of
// the app, once per Current verdict.
func (s *clusterState) confirm(ctx context.Context, e *assess.Assessment, now time.Time) *assess.Assessment {
	base := s.watches
	if !s.req.Snapshot {
		// Watches know no order: the Flux objects are read anew, a level of the tree a
		// round, with every other kind the decision reads.
		base = newListSet(ctx, s.dynamicClient, s.metadataClient, s.req.Clock, s.readOrder)
		if e = s.assessFrom(base, now); !e.AwaitsConsistentRead {
			return e
		}
	}
	// The lists read before a Flux status above them returned, read again after every one.
	again := newListSet(ctx, s.dynamicClient, s.metadataClient, s.req.Clock, s.readOrder)
	for _, key := range e.Unconfirmed {
		again.get(key)
	}
	return s.assessFrom(&layeredLists{top: again, base: base}, now)
}

// confirmBackoff is how long a cluster whose watches said Current, but whose consistent read
// did not, waits before it reads again (its watches usually catch up first).
func confirmBackoff(misses int) time.Duration {
	return min(250*time.Millisecond<<min(misses-1, 4), 4*time.Second)
}

// pendingMessage is what an assessment waits for or failed on.
func pendingMessage(e *assess.Assessment) string {
	switch {
	case e.Fatal != nil:
		return e.Fatal.Message
	case e.Pending != nil:
		return e.Pending.Message
	}
	return ""
}

// isFluxResource reports whether gvr is a Flux kind's (its objects are read as the tree is).
func isFluxResource(gvr schema.GroupVersionResource) bool {
	switch gvr.Group {
	case "kustomize.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io", "source.toolkit.fluxcd.io", "source.extensions.fluxcd.io":
		return true
	}
	return false
}

// layeredLists reads a key from top when top holds it, else from base: the lists read again
// after the tree over the tree's own.
type layeredLists struct {
	top, base objectCache
}

func (l *layeredLists) get(key assess.ListKey) assess.List {
	if w, ok := l.top.peek(key); ok {
		return w
	}
	if w, ok := l.base.peek(key); ok {
		return w
	}
	return l.top.get(key)
}

func (l *layeredLists) peek(key assess.ListKey) (assess.List, bool) {
	if w, ok := l.top.peek(key); ok {
		return w, true
	}
	return l.base.peek(key)
}

// typedKinds are the classifier's kinds: their caches hold typed objects, converted once
// when they arrive.
var typedKinds = map[schema.GroupVersionResource]func(any) (any, error){
	assess.PodsGVR:      typedTransform[corev1.Pod](),
	assess.RSGVR:        typedTransform[appsv1.ReplicaSet](),
	assess.RevisionsGVR: typedTransform[appsv1.ControllerRevision](),
	assess.JobsGVR:      typedTransform[batchv1.Job](),
}

// typedTransform returns an informer transform that converts unstructured objects to *T once,
// when they arrive, so evaluations read typed objects without converting again.
func typedTransform[T any]() func(any) (any, error) {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		var out T
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &out); err != nil {
			return nil, fmt.Errorf("convert %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		if acc, err := meta.Accessor(&out); err == nil {
			vetAnnotations(acc)
			acc.SetManagedFields(nil)
		}
		return &out, nil
	}
}
