package verify

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/flux"
)

// sourceRequest is a reconcile request sent to a source (or to the producer of an
// ExternalArtifact), to wait on until Flux has handled it.
type sourceRequest struct {
	gvr           schema.GroupVersionResource
	id, ns, name  string
	req           flux.ReconcileRequest
	writesHandled bool
	// shard is the object's Flux shard (assess.ShardLabel), "" for none.
	shard string
}

// requestSourceObject sends a source (or a producer) the request annotation, and returns the
// request sent, nil when it was not.
func (s *clusterState) requestSourceObject(ctx context.Context, t *trigger, slots requestSlots, gvr schema.GroupVersionResource, id, ns, name string) *sourceRequest {
	tok := token(s.req.Clock())
	patched := s.request(ctx, t, slots, gvr, id, ns, name, map[string]string{flux.RequestedAtAnnotation: tok})
	if patched == nil {
		return nil
	}
	return &sourceRequest{gvr: gvr, id: id, ns: ns, name: name, req: flux.NewReconcileRequest(patched, tok, false), writesHandled: writesHandled(gvr, patched),
		shard: patched.GetLabels()[assess.ShardLabel]}
}

// writesHandled reports whether the controller of a source records the requests it handled
// (status.lastHandledReconcileAt), so that a request to it can be waited on. Source-controller
// does for every source it reconciles, at the end of each reconcile, failed or not (v1.9.5
// summarize.RecordReconcileReq), but a HelmRepository of type oci, which it only strips of its
// status (v1.9.5 helmrepository_controller.go:163, migrationToStatic). So does source-watcher
// for an ArtifactGenerator, in the status it patches at the end of every reconcile, disabled
// or failed included (summarizeStatus, deferred in Reconcile, since v2.0.0, the first release
// of its API).
func writesHandled(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) bool {
	return gvr.Resource != "helmrepositories" || !ociHelmRepository(obj)
}

// ociHelmRepository reports whether obj, a HelmRepository, is of type oci: it has no artifact
// and records no request; a HelmChart of it pulls the chart itself.
func ociHelmRepository(obj *unstructured.Unstructured) bool {
	typ, _, _ := unstructured.NestedString(obj.Object, "spec", "type")
	return typ == "oci"
}

// requestSourcesInTurn asks the sources of the plans to reconcile, each once, when no revision
// is given, in steps by height (sourceSteps): those that build from no other first (a
// HelmChart's GitRepository or HelmRepository), each step once Flux has handled the requests of
// the one before. It returns once the last step's requests are handled (or ctx ends): the
// objects may be asked then.
func (s *clusterState) requestSourcesInTurn(ctx context.Context, t *trigger, slots requestSlots, plans []reconcilePlan, height map[string]int) {
	for _, step := range sourceSteps(plans, height) {
		var sent []*sourceRequest
		for _, src := range step {
			if r := s.requestSource(ctx, t, slots, src); r != nil && r.writesHandled {
				sent = append(sent, r)
			}
		}
		s.awaitHandled(ctx, t, sent)
		if ctx.Err() != nil {
			return
		}
	}
}

// sourceSteps are the sources of the plans, once each, in the order they must be asked: by
// height (sourceGraph.heights), those that build from no other first, then each source once
// every source it builds from was asked before it (a HelmChart's own source before it; the
// sources of an ArtifactGenerator before its ExternalArtifact, theirs before them).
func sourceSteps(plans []reconcilePlan, height map[string]int) [][]flux.SourceRef {
	sources := plans2sources(plans)
	top := 0
	for _, src := range sources {
		top = max(top, height[src.ID()])
	}
	steps := make([][]flux.SourceRef, top+1)
	for _, src := range sources {
		h := height[src.ID()]
		steps[h] = append(steps[h], src)
	}
	return steps
}

// awaitHandled waits until Flux has handled each request (flux.ReconcileRequest.Handled), or
// ctx ends; the trigger says meanwhile which it waits for. A source that fails to fetch has
// handled the request all the same: the verdict judges it. One deleted meanwhile is not waited
// for.
func (s *clusterState) awaitHandled(ctx context.Context, t *trigger, sent []*sourceRequest) {
	defer t.awaiting(nil)
	poll := time.NewTicker(sourcePoll)
	defer poll.Stop()
	for {
		left := sent[:0]
		var wait *assess.ReconcileWait
		for _, r := range sent {
			obj, err := s.readSource(ctx, r.gvr, r.ns, r.name)
			switch {
			case apierrors.IsNotFound(err):
				continue
			case err != nil:
				left = append(left, r)
				continue
			}
			if ok, field := r.req.Handled(obj); !ok {
				left = append(left, r)
				if wait == nil {
					wait = &assess.ReconcileWait{ID: r.id, Token: r.req.Token, Field: field, Shard: r.shard}
				}
			}
		}
		sent = left
		if len(sent) == 0 || ctx.Err() != nil {
			return
		}
		if wait != nil {
			t.awaiting(wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		}
	}
}

// readSource reads a source, or a requested object, from the assessment's watch when that
// holds it (it watches the source of a requested object that is not Current yet), else from
// the API server. It starts no watch the assessment did not ask for: a poll every half second
// would keep one open, and every change to it would wake the cluster's loop.
func (s *clusterState) readSource(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	if w, ok := s.watches.peek(assess.ListKey{GVR: gvr, Namespace: ns}); ok && w.Synced() {
		cached, _ := w.Object(ns, name)
		if obj, ok := cached.(*unstructured.Unstructured); ok {
			return obj, nil
		}
	}
	return s.getFlux(ctx, gvr, ns, name)
}
