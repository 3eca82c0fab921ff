package classify

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/org/app-status-action/internal/result"
)

// revisionAnnotation is the revision the Deployment controller writes on a Deployment and on
// each of its ReplicaSets; the ReplicaSet that shares the Deployment's is the current one.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// reasonProgressDeadlineExceeded is the Deployment controller's reason for Progressing=False.
const reasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"

// The rules below that read a controller's status first check that the controller has seen
// the latest spec (observedGeneration). Until it has, its conditions and revision describe
// the previous rollout: a ProgressDeadlineExceeded left over from a failed rollout would
// otherwise fail the very change that fixes it.

// deployment judges a Deployment by its own conditions and by its current ReplicaSets.
func deployment(d *appsv1.Deployment, e *findings) {
	if stale(d.Generation, d.Status.ObservedGeneration) {
		return
	}
	e.readyDeadline = defaultProgressDeadline
	if s := d.Spec.ProgressDeadlineSeconds; s != nil {
		e.readyDeadline = time.Duration(*s) * time.Second
		if *s == math.MaxInt32 {
			e.readyDeadline = 0 // "no deadline", as the controller reads it: the probes' budget
		}
	}
	revision := d.Annotations[revisionAnnotation]
	current := false
	for _, rs := range e.in.ReplicaSets {
		current = current || (revision != "" && controlledBy(rs, d.UID) && rs.Annotations[revisionAnnotation] == revision)
	}
	for _, c := range d.Status.Conditions {
		switch {
		case c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == reasonProgressDeadlineExceeded:
			e.fail(objectFailure(result.CodeNotProgressing, "deployment", d.Name, c.Reason, c.Message))
			e.deadlinePassed = true
		case c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue && !current && !e.in.Incomplete:
			// (The Deployment keeps this condition, its time and its message, from a previous
			// rollout while any ReplicaSet still fails: the current ReplicaSet's own says
			// what this rollout meets. Without the ReplicaSets read, which one failed is
			// unknown.)
			if message, ok := e.refusal(c.Message, c.LastTransitionTime.Time); ok {
				e.fail(objectFailure(replicaFailureCode(c.Message), "deployment", d.Name, c.Reason, message))
			}
		}
	}
	if revision == "" {
		return // the controller has not picked a ReplicaSet yet
	}
	for _, rs := range e.in.ReplicaSets {
		if controlledBy(rs, d.UID) && rs.Annotations[revisionAnnotation] == revision {
			replicaSet(rs, e)
		}
	}
	if e.stuck != nil {
		// Name the pod the Deployment waited for, so that its events and logs are gathered.
		for i := range e.failures {
			if f := &e.failures[i]; f.Code == result.CodeNotProgressing && f.Pod == "" {
				f.Pod, f.Container = e.stuck.pod.Name, e.stuck.name
				f.Message += fmt.Sprintf(" (%s: running, not ready)", e.stuck.describe())
			}
		}
	}
}

// replicaSet judges a ReplicaSet by its ReplicaFailure condition (pods it could not create:
// a ResourceQuota or a LimitRange, an admission webhook or policy, an invalid pod) and by its pods. The pods are its own
// whatever its generation, so only the condition waits for the controller to catch up.
func replicaSet(rs *appsv1.ReplicaSet, e *findings) {
	if !stale(rs.Generation, rs.Status.ObservedGeneration) {
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
				if message, ok := e.refusal(c.Message, c.LastTransitionTime.Time); ok {
					e.fail(objectFailure(replicaFailureCode(c.Message), "replicaset", rs.Name, c.Reason, message))
				}
			}
		}
	}
	e.podsOf(rs.UID, nil)
}

// statefulSet judges the pods of a StatefulSet's update revision (its current revision when
// no update is going on). StatefulSets report pods they cannot create only by events, so
// there is no quota rule here.
func statefulSet(s *appsv1.StatefulSet, e *findings) {
	if stale(s.Generation, s.Status.ObservedGeneration) {
		return
	}
	revision := cmp.Or(s.Status.UpdateRevision, s.Status.CurrentRevision)
	if revision == "" {
		return
	}
	e.podsOf(s.UID, labelled(appsv1.StatefulSetRevisionLabel, revision))
	e.blockedUpdate(s)
}

// blockedUpdate fails a StatefulSet whose rolling update cannot go on: with the OrderedReady
// pod management policy (the default) the controller updates no pod while any pod is not
// Running and Ready, so a broken pod of an older revision (say, the one a crash loop left
// behind, now being fixed) blocks the very update that fixes it, for ever. This is a
// Kubernetes limitation (see "Forced rollback" in the StatefulSet documentation): the pod must
// be deleted by hand. A pod of an older revision counts as broken by the same rules as any pod.
func (e *findings) blockedUpdate(s *appsv1.StatefulSet) {
	update := s.Status.UpdateRevision
	if update == "" || update == s.Status.CurrentRevision ||
		(s.Spec.PodManagementPolicy != "" && s.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement) ||
		(s.Spec.UpdateStrategy.Type != "" && s.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType) {
		return
	}
	for _, p := range e.in.Pods {
		if !controlledBy(p, s.UID) || p.Labels[appsv1.StatefulSetRevisionLabel] == update {
			continue
		}
		old := &findings{in: e.in, opts: e.opts}
		old.pod(p)
		if old.recheck.After(e.in.Now) {
			e.recheckAt(old.recheck)
		}
		if len(old.failures) == 0 {
			continue
		}
		cause := slices.MinFunc(old.failures, compareFailures)
		e.fail(result.Failure{
			Code:   result.CodeStatefulSetBlocked,
			Reason: cause.Reason,
			Message: fmt.Sprintf("statefulset %s: pod %s of revision %s is broken (%s: %s) and the rolling update to %s waits for it "+
				"(podManagementPolicy OrderedReady); delete it so the update can go on: kubectl delete pod %s -n %s",
				s.Name, p.Name, p.Labels[appsv1.StatefulSetRevisionLabel], cause.Code, cause.Message, update, p.Name, p.Namespace),
			Pod: p.Name, Container: cause.Container, RestartCount: cause.RestartCount,
		})
	}
}

// daemonSet judges the pods of a DaemonSet's newest ControllerRevision. Without one (the
// engine did not pass them) it cannot tell new pods from old ones, so it judges none.
func daemonSet(d *appsv1.DaemonSet, e *findings) {
	if stale(d.Generation, d.Status.ObservedGeneration) {
		return
	}
	var newest *appsv1.ControllerRevision
	for _, r := range e.in.Revisions {
		if controlledBy(r, d.UID) && (newest == nil || r.Revision > newest.Revision) {
			newest = r
		}
	}
	if newest == nil {
		return
	}
	// The controller labels both the revision and its pods with the template hash; the
	// revision's name is the DaemonSet's name and that hash.
	hash := cmp.Or(newest.Labels[appsv1.DefaultDaemonSetUniqueLabelKey], strings.TrimPrefix(newest.Name, d.Name+"-"))
	e.podsOf(d.UID, labelled(appsv1.DefaultDaemonSetUniqueLabelKey, hash))
}

// job judges a Job by its Failed condition and by its pods. A failed Job names the container
// of its newest failed pod, so that the evidence holds that container's log and events.
func job(j *batchv1.Job, e *findings) {
	if c := jobFailure(j); c != nil {
		f := objectFailure(result.CodeJobFailed, "job", j.Name, c.Reason, c.Message)
		if last, ok := e.lastFailedContainer(j.UID); ok {
			f.Pod, f.Container, f.RestartCount = last.pod.Name, last.name, last.status.RestartCount
		}
		e.fail(f)
	}
	e.podsOf(j.UID, nil)
}

// lastFailedContainer returns the first container (init containers first) whose last run
// failed, of the newest pod controlled by owner that has one.
func (e *findings) lastFailedContainer(owner types.UID) (container, bool) {
	var found container
	ok := false
	for _, p := range e.in.Pods {
		if !controlledBy(p, owner) || (ok && !newer(p, found.pod)) {
			continue
		}
		for _, c := range containersOf(p) {
			if failedExit(cmp.Or(c.status.State.Terminated, c.status.LastTerminationState.Terminated)) {
				found, ok = c, true
				break
			}
		}
	}
	return found, ok
}

// newer orders pods by creation, then by name, so the choice among equals is stable.
func newer(a, b *corev1.Pod) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.Name > b.Name
}

// cronJob judges the Jobs a CronJob is running now: those in status.active and those it owns
// that have not finished. Finished Jobs are history: the last one may well have failed before
// the change being verified, and failing on it would block the very fix.
func cronJob(c *batchv1.CronJob, e *findings) {
	active := make(map[types.UID]bool, len(c.Status.Active))
	for _, ref := range c.Status.Active {
		active[ref.UID] = true
	}
	for _, j := range e.in.Jobs {
		if controlledBy(j, c.UID) && (active[j.UID] || !finished(j)) {
			job(j, e)
		}
	}
}

// pod judges a bare Pod.
func pod(p *corev1.Pod, e *findings) {
	e.pod(p)
}

// podsOf judges the pods controlled by owner that keep accepts (all of them when keep is nil).
func (e *findings) podsOf(owner types.UID, keep func(*corev1.Pod) bool) {
	for _, p := range e.in.Pods {
		if controlledBy(p, owner) && (keep == nil || keep(p)) {
			e.pod(p)
		}
	}
}

// labelled accepts the pods whose label key has the value value.
func labelled(key, value string) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool { return p.Labels[key] == value }
}

// controlledBy reports whether obj's controller ownerReference points at uid.
func controlledBy(obj metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return uid != "" && ref != nil && ref.UID == uid
}

// stale reports whether a controller has not yet observed the latest spec of its object.
func stale(generation, observed int64) bool {
	return observed < generation
}

// jobFailure returns the condition saying that the Job has failed, or is failing (its
// remaining pods are being terminated); nil when there is none.
func jobFailure(j *batchv1.Job) *batchv1.JobCondition {
	var target *batchv1.JobCondition
	for i, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			return &j.Status.Conditions[i]
		case batchv1.JobFailureTarget:
			target = &j.Status.Conditions[i]
		}
	}
	return target
}

// finished reports whether a Job has completed or failed.
func finished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// objectFailure is a failure reported by a controller's condition rather than by a pod.
func objectFailure(code result.Code, kind, name, reason, message string) result.Failure {
	return result.Failure{Code: code, Reason: reason, Message: kind + " " + name + ": " + message}
}
