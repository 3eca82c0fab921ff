package verify_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/org/app-status-action/internal/testing/testbed"
)

// The failure tests measure the time from a failing state appearing in a cluster to the
// cluster's verdict. The clock starts when the test's own watch sees the state: a stateProbe
// recognises it on the objects of one resource, a stateClock notes when it was first seen.

// stateProbe recognises a failing state on objects of one resource.
type stateProbe struct {
	what string // the state, for the latency line
	gvr  schema.GroupVersionResource
	flux bool // the Kustomization named after the test's namespace, not the app's objects
	// match tells whether the object is in the state and, for a state that is fatal only after
	// a grace period, when that period ends (zero when it is fatal at once).
	match func(u *unstructured.Unstructured) (ok bool, graceEnds time.Time)
}

var (
	podsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	replicaSetsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// stateClock records when a failing state was first seen, and from when it is fatal: at once,
// or when a grace period that the state itself dates ends.
type stateClock struct {
	mu   sync.Mutex
	seen time.Time
	from time.Time
}

func (c *stateClock) observe(at, graceEnds time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen.IsZero() {
		c.seen = at
		c.from = at
		if graceEnds.After(at) {
			c.from = graceEnds
		}
	}
}

// fatalAt is when the state was first seen, or when its grace ended if that was later.
func (c *stateClock) fatalAt() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.from, !c.seen.IsZero()
}

// wait waits until the state has been seen, at most for timeout, and returns fatalAt.
func (c *stateClock) wait(ctx context.Context, timeout time.Duration) (time.Time, bool) {
	var from time.Time
	var seen bool
	_ = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		from, seen = c.fatalAt()
		return seen, nil
	})
	return from, seen
}

// watchState watches the objects of the probe's resource in the test's namespace (for a Flux
// probe, the Kustomization named after it) and notes when the probe first matches.
func watchState(ctx context.Context, t *testing.T, c *testbed.Cluster, ns string, p stateProbe) *stateClock {
	t.Helper()
	clock := &stateClock{}
	watchNS, tweak := ns, dynamicinformer.TweakListOptionsFunc(nil)
	if p.flux {
		watchNS = "flux-system"
		tweak = func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", ns).String()
		}
	}
	ctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	inf := dynamicinformer.NewFilteredDynamicInformer(c.Dynamic, p.gvr, watchNS, 0, cache.Indexers{}, tweak).Informer()
	check := func(obj any) {
		now := time.Now()
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if ok, graceEnds := p.match(u); ok {
				clock.observe(now, graceEnds)
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: check, UpdateFunc: func(_, obj any) { check(obj) }}); err != nil {
		t.Fatal(err)
	}
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatalf("watch %s in %s: no first list", p.gvr.Resource, c.Name)
	}
	return clock
}

// objectState is a probe of a typed object's state, fatal at once.
func objectState[T any](what string, gvr schema.GroupVersionResource, match func(*T) bool) stateProbe {
	return stateProbe{what: what, gvr: gvr, match: func(u *unstructured.Unstructured) (bool, time.Time) {
		obj := new(T)
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj) != nil {
			return false, time.Time{}
		}
		return match(obj), time.Time{}
	}}
}

func kustomizationState(what string, match func(u *unstructured.Unstructured) bool) stateProbe {
	return stateProbe{what: "Kustomization " + what, gvr: testbed.KustomizationGVR, flux: true,
		match: func(u *unstructured.Unstructured) (bool, time.Time) { return match(u), time.Time{} }}
}

// podState is a probe of a pod state, fatal at once.
func podState(what string, match func(p *corev1.Pod) bool) stateProbe {
	return objectState(what, podsGVR, match)
}

// gracedPodState is a probe of a pod state that is fatal once shortGrace has passed since the
// time the pod gives it.
func gracedPodState(what string, since func(p *corev1.Pod) (time.Time, bool)) stateProbe {
	return stateProbe{what: what + " plus " + shortGrace.String() + " grace", gvr: podsGVR, match: func(u *unstructured.Unstructured) (bool, time.Time) {
		var p corev1.Pod
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p) != nil {
			return false, time.Time{}
		}
		t, ok := since(&p)
		return ok, t.Add(shortGrace)
	}}
}

func waitingWith(reasons ...string) func(p *corev1.Pod) bool {
	return func(p *corev1.Pod) bool {
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && slices.Contains(reasons, w.Reason) {
				return true
			}
		}
		return false
	}
}

// crashedTimes matches a container that is not running after restarts restarts, its last exit
// having the reason.
func crashedTimes(restarts int32, reason string) func(p *corev1.Pod) bool {
	return func(p *corev1.Pod) bool {
		for _, cs := range p.Status.ContainerStatuses {
			last := cs.LastTerminationState.Terminated
			if cs.State.Running == nil && cs.RestartCount >= restarts && last != nil && last.Reason == reason {
				return true
			}
		}
		return false
	}
}

func podFailed(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed }

func unschedulableSince(p *corev1.Pod) (time.Time, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// runningUnreadySince dates a running pod that is not ready as the classifier does: from the
// later of the Ready condition's last change and its containers' start.
func runningUnreadySince(p *corev1.Pod) (time.Time, bool) {
	if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
		return time.Time{}, false
	}
	var since time.Time
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			if c.Status == corev1.ConditionTrue {
				return time.Time{}, false
			}
			since = c.LastTransitionTime.Time
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			return time.Time{}, false
		}
		if cs.State.Running.StartedAt.After(since) {
			since = cs.State.Running.StartedAt.Time
		}
	}
	return since, true
}

// createdWaiting dates a pod whose container waits for one of the reasons as the classifier
// does: from the pod's creation.
func createdWaiting(reasons ...string) func(p *corev1.Pod) (time.Time, bool) {
	return func(p *corev1.Pod) (time.Time, bool) {
		if waitingWith(reasons...)(p) {
			return p.CreationTimestamp.Time, true
		}
		return time.Time{}, false
	}
}

// gracedReplicaFailure is a probe of a ReplicaSet's ReplicaFailure condition, fatal once
// shortGrace has passed since it was set.
func gracedReplicaFailure() stateProbe {
	return stateProbe{what: "ReplicaSet ReplicaFailure plus " + shortGrace.String() + " grace", gvr: replicaSetsGVR, match: func(u *unstructured.Unstructured) (bool, time.Time) {
		var rs appsv1.ReplicaSet
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &rs) != nil {
			return false, time.Time{}
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
				return true, c.LastTransitionTime.Add(shortGrace)
			}
		}
		return false, time.Time{}
	}}
}

func replicaFailure(rs *appsv1.ReplicaSet) bool {
	for _, c := range rs.Status.Conditions {
		if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func deadlineExceeded(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return true
		}
	}
	return false
}

func readyFalse(reason string) func(u *unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Ready" && m["status"] == "False" && m["reason"] == reason {
				return true
			}
		}
		return false
	}
}

func suspended(u *unstructured.Unstructured) bool {
	s, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend")
	return s
}
