package assess

import (
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

var (
	jobGroupKind        = schema.GroupKind{Group: "batch", Kind: "Job"}
	deploymentGroupKind = schema.GroupKind{Group: "apps", Kind: "Deployment"}
)

// Health judges objects as Flux's controllers do where they do not use kstatus as it is: Jobs,
// and the kinds a Kustomization's or HelmRelease's spec.healthCheckExprs name. Flux's own
// readers for both (fluxcd/pkg/runtime's statusreaders and cel) import controller-runtime and
// client-go, which this package never does: the caller gives them (internal/fluxhealth).
type Health interface {
	// Job is a Job's status as kustomize-controller's health checks and helm-controller's wait
	// read it: Current only once it has completed (kstatus calls a Job Current as soon as it
	// has started, which would pass a migration about to fail).
	Job(u *unstructured.Unstructured) (result.ObjectStatus, string)
	// Exprs compiles spec.healthCheckExprs as the object holds them (untrusted).
	Exprs(healthCheckExprs []any) ExprStatus
}

// ExprStatus is the status compiled spec.healthCheckExprs give u; matched is false when none
// names its kind or group. An error (an expression that does not compile or evaluate) leaves
// it Unknown.
type ExprStatus = func(u *unstructured.Unstructured) (status result.ObjectStatus, message string, matched bool, err error)

// objectStatus computes an inventory object's status, and a message saying what it waits
// for, with the readers Flux's health checks use, in their order: Jobs by Flux's Job reader,
// the kinds exprs names (nil: none) by the team's expressions, the rest by kstatus.
func objectStatus(u *unstructured.Unstructured, health Health, exprs *compiledExprs) (result.ObjectStatus, string, error) {
	if u.GroupVersionKind().GroupKind() == jobGroupKind {
		s, msg := health.Job(u)
		return s, msg, nil
	}
	if exprs != nil {
		if s, msg, matched, err := exprs.status(u); matched {
			if err != nil {
				return result.ObjectUnknown, "", fmt.Errorf("spec.healthCheckExprs: %w", err)
			}
			return s, joinMessage(msg, "judged by spec.healthCheckExprs"+exprs.note), nil
		}
	}
	res, err := status.Compute(withoutPausedDeadline(u))
	if err != nil {
		return result.ObjectUnknown, "", fmt.Errorf("compute status: %w", err)
	}
	return result.ObjectStatus(res.Status.String()), res.Message, nil
}

// withoutPausedDeadline is u as kstatus is to read it: a paused Deployment without its
// spec.progressDeadlineSeconds, any other object as it is. The Deployment controller skips
// the deadline while a Deployment is paused and replaces its Progressing condition with
// Unknown/DeploymentPaused (k8s.io/kubernetes v1.36.3, pkg/controller/deployment/sync.go
// checkPausedConditions); kstatus, reading a deadline and no Progressing=True
// NewReplicaSetAvailable, would wait for ever on a Deployment paused once rolled out. Without
// a deadline it reads the rest, as it does for a Deployment that has none. (A paused
// Deployment whose template waits is held: classify.HeldRollout.)
func withoutPausedDeadline(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u.GroupVersionKind().GroupKind() != deploymentGroupKind {
		return u
	}
	if paused, _, _ := unstructured.NestedBool(u.Object, "spec", "paused"); !paused {
		return u
	}
	if _, set, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "progressDeadlineSeconds"); !set {
		return u
	}
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "spec", "progressDeadlineSeconds")
	return c
}

// statusMemo keeps objectStatus per cached state of an object: assessments run after every
// change of any watched object, and an object's status changes only with it. A state is the
// store's pointer, never changed once stored (watch.go), so the memo is exact; it keeps the
// states seen in the last two assessments, so what left the cache is forgotten.
type statusMemo struct {
	prev, cur map[any]memoStatus
	// prevRoom and curRoom are the sizes the maps were made for (reserve).
	prevRoom, curRoom int
}

type memoStatus struct {
	// u is nil for a metadata-only object (a Secret, a ConfigMap): what is read of it below
	// kstatus, its annotations, it has none of (asUnstructured keeps its name, generation and
	// deletion alone).
	u  *unstructured.Unstructured
	ok bool
	// status, msg and err are its status by exprs, the owner's spec.healthCheckExprs it was
	// computed with (computed says it was).
	exprs    *compiledExprs
	computed bool
	status   result.ObjectStatus
	msg      string
	err      error
	// What the object's annotations say, read once per state: readiness ignored (with a
	// note).
	ignoreReadiness bool
	ignoreNote      string
	// held says why its rollout waits for a person (classify.HeldRollout), read once per
	// state too; heldServing whether what it runs meanwhile is all there and ready.
	held        string
	heldServing bool
	// heldStarted says a pod of its new template runs (classify.HeldRollout).
	heldStarted bool
}

// turn starts an assessment.
func (m *statusMemo) turn() {
	// The map of two turns ago is emptied and used again: its room is the size one turn needs.
	m.prev, m.cur = m.cur, m.prev
	m.prevRoom, m.curRoom = m.curRoom, m.prevRoom
	clear(m.cur)
}

// reserve makes room for n more objects in this turn's map before they are looked up: a map
// made at its size, not grown to it a doubling at a time (an inventory of 200 objects grew
// through six maps).
func (m *statusMemo) reserve(n int) {
	if need := len(m.cur) + n; need > m.curRoom {
		// At least doubled: many small nested inventories copy each object a few times at
		// most.
		room := max(need, 2*m.curRoom)
		grown := make(map[any]memoStatus, room)
		maps.Copy(grown, m.cur)
		m.cur, m.curRoom = grown, room
	}
}

// status returns the cached state as unstructured (ok false when it cannot be; nil for a
// metadata-only object) and its status by health and exprs, its owner's spec.healthCheckExprs
// (nil: none). The unstructured form of a metadata-only object is not kept: keeping it would
// hold a second copy of every Secret's and ConfigMap's metadata.
func (m *statusMemo) status(cached any, gvk schema.GroupVersionKind, health Health, exprs *compiledExprs) memoStatus {
	v, ok := m.cur[cached]
	if ok && v.computed && v.exprs == exprs {
		return v
	}
	if !ok {
		v, ok = m.prev[cached]
	}
	var u *unstructured.Unstructured
	if !ok {
		u, v.ok = AsUnstructured(cached, gvk)
		v.u = u
		if v.ok {
			v.ignoreReadiness, v.ignoreNote = classify.IgnoreReadiness(u.GetAnnotations())
			v.held, v.heldServing, v.heldStarted = classify.HeldRollout(u)
		}
	}
	if v.ok && (!v.computed || v.exprs != exprs) {
		if u == nil {
			u, _ = AsUnstructured(cached, gvk)
		}
		v.status, v.msg, v.err = objectStatus(u, health, exprs)
		v.exprs, v.computed = exprs, true
	}
	if _, metadataOnly := cached.(*metav1.PartialObjectMetadata); metadataOnly {
		v.u = nil
	}
	if m.cur == nil {
		m.cur = map[any]memoStatus{}
	}
	m.cur[cached] = v
	return v
}

// compiledExprs is an owner's spec.healthCheckExprs as compiled at one generation.
type compiledExprs struct {
	generation int64
	status     ExprStatus
	// note is added to what the expressions judge when the owner's controller did not use them
	// itself (flux.HealthExprsApply).
	note string
}

// healthExprs returns the compiled spec.healthCheckExprs of the Flux object id of kind (nil
// when it has none), compiled again only when its spec changed. The run judges the objects
// by them whenever it judges the objects, as the team meant their kinds to be judged: a
// HelmRelease's too when helm-controller's wait did not use them (flux.HealthExprsApply),
// which a Ready HelmRelease then does not vouch for; the note says so.
func (a *assessor) healthExprs(id string, kind flux.Kind, obj *unstructured.Unstructured) *compiledExprs {
	raw, _, _ := flux.NestedSlice(obj.Object, "spec", "healthCheckExprs")
	if len(raw) == 0 {
		delete(a.mem.healthExprs, id)
		return nil
	}
	note := ""
	if !flux.HealthExprsApply(kind, obj) {
		note = " (helm-controller's wait did not use them: the release's action has disableWait, or waitStrategy is legacy)"
	}
	if c, ok := a.mem.healthExprs[id]; ok && c.generation == obj.GetGeneration() && obj.GetGeneration() != 0 && c.note == note {
		return c
	}
	if a.mem.healthExprs == nil {
		a.mem.healthExprs = map[string]*compiledExprs{}
	}
	c := &compiledExprs{generation: obj.GetGeneration(), status: a.spec.Health.Exprs(raw), note: note}
	a.mem.healthExprs[id] = c
	return c
}
