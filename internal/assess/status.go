package assess

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

var jobGroupKind = schema.GroupKind{Group: "batch", Kind: "Job"}

// objectStatus computes an inventory object's status with kstatus, and a message saying
// what it waits for, except that a Job is Current only once it has completed. kstatus calls a Job Current as soon as it has started,
// which would pass a migration that is about to fail; Flux's own health checks wait for Jobs
// to complete the same way (fluxcd/pkg/runtime statusreaders.NewCustomJobStatusReader).
func objectStatus(u *unstructured.Unstructured) (result.ObjectStatus, string, error) {
	res, err := status.Compute(u)
	if err != nil {
		return result.ObjectUnknown, "", fmt.Errorf("compute status: %w", err)
	}
	computed := result.ObjectStatus(res.Status.String())
	if res.Status != status.CurrentStatus || u.GroupVersionKind().GroupKind() != jobGroupKind {
		return computed, res.Message, nil
	}
	if suspended, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend"); suspended {
		return computed, res.Message, nil
	}
	conditions, _, _ := flux.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Complete" && m["status"] == string(corev1.ConditionTrue) {
			return computed, res.Message, nil
		}
	}
	count := func(field string) int64 {
		n, _, _ := unstructured.NestedInt64(u.Object, "status", field)
		return n
	}
	return result.ObjectInProgress, fmt.Sprintf("Job in progress: %d active, %d succeeded, %d failed", count("active"), count("succeeded"), count("failed")), nil
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
	u      *unstructured.Unstructured
	status result.ObjectStatus
	msg    string
	err    error
	ok     bool
	// What the object's annotations say, read once per state: readiness ignored (with a
	// note) and the keys set in the cluster, not by Flux (notFromGit).
	ignoreReadiness bool
	ignoreNote      string
	notFromGitKeys  string
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
// metadata-only object) and its status. The unstructured form of a metadata-only object is
// not kept: keeping it would hold a second copy of every Secret's and ConfigMap's metadata.
func (m *statusMemo) status(cached any, gvk schema.GroupVersionKind) memoStatus {
	v, ok := m.cur[cached]
	if ok {
		return v
	}
	if v, ok = m.prev[cached]; !ok {
		v.u, v.ok = AsUnstructured(cached, gvk)
		if v.ok {
			v.status, v.msg, v.err = objectStatus(v.u)
			annotations := v.u.GetAnnotations()
			v.ignoreReadiness, v.ignoreNote = classify.IgnoreReadiness(annotations)
			v.notFromGitKeys = annotations[NotFromGit]
		}
		if _, metadataOnly := cached.(*metav1.PartialObjectMetadata); metadataOnly {
			v.u = nil
		}
	}
	if m.cur == nil {
		m.cur = map[any]memoStatus{}
	}
	m.cur[cached] = v
	return v
}
