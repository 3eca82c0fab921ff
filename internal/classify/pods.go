package classify

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/org/app-status-action/internal/result"
)

// waitingCodes maps the kubelet's reasons for a container that cannot start to the code they
// fail with: the image or the configuration must change before the pod can run. Pull errors
// that may pass by themselves get a grace period first (see pullError).
var waitingCodes = map[string]result.Code{
	reasonErrImagePull:           result.CodeImagePull,
	reasonImagePullBackOff:       result.CodeImagePull,
	"ErrImageNeverPull":          result.CodeImagePull,
	"InvalidImageName":           result.CodeImagePull,
	"ImageInspectError":          result.CodeImagePull,
	reasonRegistryUnavailable:    result.CodeImagePull,
	"CreateContainerConfigError": result.CodeConfig,
	"CreateContainerError":       result.CodeConfig,
}

// permanentStartWords are the words of a CreateContainerConfigError or CreateContainerError
// that no retry fixes: the image would run as root under runAsNonRoot, the command does not
// exist. Every other one the kubelet retries may pass by itself: a Secret or ConfigMap (or a
// key of one) that does not exist yet, as when External Secrets or Sealed Secrets create it
// seconds later; a secret cache not synced yet; a runtime that is busy (a container name
// still reserved, a timeout); a host path a DaemonSet has yet to create.
var permanentStartWords = []string{
	"runasnonroot and image will run as root", "non-numeric user", "breaks non-root policy",
	"executable file not found", "no command specified",
}

// retriedStart reports whether a container that cannot be created may be created later.
func retriedStart(reason, message string) bool {
	if reason != "CreateContainerConfigError" && reason != "CreateContainerError" {
		return false
	}
	m := strings.ToLower(message)
	for _, w := range permanentStartWords {
		if strings.Contains(m, w) {
			return false
		}
	}
	return true
}

// describe names the container: container "web" of pod web-7d9f-abcde.
func (c container) describe() string {
	kind := "container"
	if c.init {
		kind = "init container"
	}
	return fmt.Sprintf("%s %q of pod %s", kind, c.status.Name, c.pod.Name)
}

// startableSince is when the container could first have started: the latest of the pod's
// creation, its scheduling, its init containers' completion (for a regular container), and
// its previous run's end. A pod that waited for a node, or for a migration in an init
// container, has not been failing to start all that time.
func (c container) startableSince() time.Time {
	since := c.pod.CreationTimestamp.Time
	later := func(t time.Time) {
		if t.After(since) {
			since = t
		}
	}
	if s := podCondition(c.pod, corev1.PodScheduled); s != nil && s.Status == corev1.ConditionTrue {
		later(s.LastTransitionTime.Time)
	}
	if i := podCondition(c.pod, corev1.PodInitialized); !c.init && i != nil && i.Status == corev1.ConditionTrue {
		later(i.LastTransitionTime.Time)
	}
	if c.init {
		// Init containers run in turn: this one could start once those before it finished
		// (or, sidecars, started).
		for _, prev := range c.pod.Status.InitContainerStatuses {
			if prev.Name == c.status.Name {
				break
			}
			if t := prev.State.Terminated; t != nil {
				later(t.FinishedAt.Time)
			}
			if r := prev.State.Running; r != nil {
				later(r.StartedAt.Time)
			}
		}
	}
	if t := c.status.LastTerminationState.Terminated; t != nil {
		later(t.FinishedAt.Time)
	}
	return since
}

// The kubelet's reasons for an image it is pulling, may pull again or cannot reach.
const (
	reasonErrImagePull        = "ErrImagePull"
	reasonImagePullBackOff    = "ImagePullBackOff"
	reasonRegistryUnavailable = "RegistryUnavailable"
)

// crashReasons are the kubelet's reasons for a container that waits because it keeps failing
// to run; they fail only once the container has restarted Options.CrashRestarts times.
var crashReasons = map[string]bool{
	"CrashLoopBackOff":  true,
	"RunContainerError": true,
}

// The reasons of a terminated container: killed for exceeding its memory limit, or any other
// failure (also used when the runtime gave no reason).
const (
	reasonOOMKilled = "OOMKilled"
	reasonError     = "Error"
)

// The reasons the kubelet gives a pod's Ready=False condition.
const (
	reasonContainersNotReady     = "ContainersNotReady"
	reasonReadinessGatesNotReady = "ReadinessGatesNotReady"
)

// pod judges one pod of the current revision: each of its containers, then its scheduling and
// its readiness. A terminating pod is on its way out and a succeeded one has done its job.
func (e *findings) pod(p *corev1.Pod) {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded {
		return
	}
	for _, c := range containersOf(p) {
		e.container(c)
	}
	e.unschedulable(p)
	e.neverReady(p)
}

// container is one init or regular container of a pod, with its spec and status.
type container struct {
	pod    *corev1.Pod
	spec   *corev1.Container // nil when the status names no container of the spec
	status corev1.ContainerStatus
	name   string // the name in a Failure: init containers are prefixed "init:"
	init   bool
}

// containersOf lists the containers of a pod that have a status, init containers first.
func containersOf(p *corev1.Pod) []container {
	var cs []container
	add := func(specs []corev1.Container, statuses []corev1.ContainerStatus, init bool) {
		for _, s := range statuses {
			c := container{pod: p, status: s, name: s.Name, init: init}
			if init {
				c.name = "init:" + s.Name
			}
			for i := range specs {
				if specs[i].Name == s.Name {
					c.spec = &specs[i]
				}
			}
			cs = append(cs, c)
		}
	}
	add(p.Spec.InitContainers, p.Status.InitContainerStatuses, true)
	add(p.Spec.Containers, p.Status.ContainerStatuses, false)
	return cs
}

// container fails a container that waits for a reason of waitingCodes, or that keeps exiting.
// Once a pod has failed, its containers only tell how it ended, so only exits count then.
func (e *findings) container(c container) {
	if w := c.status.State.Waiting; w != nil && c.pod.Status.Phase != corev1.PodFailed {
		if code, ok := waitingCodes[w.Reason]; ok {
			message := cmp.Or(w.Message, w.Reason)
			if retriedPull(w.Reason, w.Message) || retriedStart(w.Reason, w.Message) {
				// The registry may answer again, the Secret may be created: fail only once
				// the grace period has passed since the container could first start.
				what := "failing"
				if code == result.CodeImagePull {
					what = "failing to pull"
				}
				since := c.startableSince()
				if !e.elapsed(since, e.opts.RetryGrace) {
					e.note(fmt.Sprintf("%s: %s since %s, fails at %s: %s", c.describe(), w.Reason,
						stamp(since), stamp(since.Add(e.opts.RetryGrace)), message))
					return
				}
				message = fmt.Sprintf("still %s after %s: %s", what, e.lasted(since, e.opts.RetryGrace), message)
			}
			e.fail(c.failure(code, w.Reason, message))
			return
		}
	}
	e.exits(c)
}

// exits fails a container that keeps exiting: once it has restarted Options.CrashRestarts
// times and is not running again, or at once when the kubelet will never restart it. An OOM
// kill is treated like any other exit (one kill can be a start-up spike the container
// survives), only reported with the more precise code oom. A container running again gets
// the benefit of the doubt: if it still crashes, it will be waiting in back-off soon.
func (e *findings) exits(c container) {
	s := c.status
	if s.State.Running != nil {
		return
	}
	last := cmp.Or(s.State.Terminated, s.LastTerminationState.Terminated)
	var waiting string
	if w := s.State.Waiting; w != nil && crashReasons[w.Reason] {
		waiting = w.Reason
	}
	if waiting == "" && !failedExit(last) {
		return
	}
	final := c.final()
	if !final && (c.pod.Status.Phase == corev1.PodFailed || s.RestartCount < e.opts.CrashRestarts) {
		return
	}
	code, reason := result.CodeCrashLoop, waiting
	if last != nil {
		reason = cmp.Or(reason, last.Reason)
		if last.Reason == reasonOOMKilled {
			code, reason = result.CodeOOM, reasonOOMKilled
		}
	}
	e.fail(c.failure(code, cmp.Or(reason, reasonError), c.exitDetail(last, final)))
}

// final reports whether the container exited with an error and the kubelet will not restart
// it (restartPolicy Never), so the pod can never become ready. A Job's pods are left out: the
// Job decides whether to retry with a new pod, and its Failed condition says when it gives up.
func (c container) final() bool {
	if !failedExit(c.status.State.Terminated) || c.restarts() {
		return false
	}
	ref := metav1.GetControllerOfNoCopy(c.pod)
	return ref == nil || ref.Kind != jobKind
}

// restarts reports whether the kubelet restarts the container after a failed exit.
func (c container) restarts() bool {
	policy := string(c.pod.Spec.RestartPolicy)
	if c.spec != nil && c.spec.RestartPolicy != nil {
		policy = string(*c.spec.RestartPolicy)
	}
	return policy != string(corev1.RestartPolicyNever)
}

// sidecar reports whether the container is a sidecar: an init container that keeps running
// beside the others, restarted whatever the pod's restartPolicy, and counted in its readiness.
func (c container) sidecar() bool {
	return c.init && c.spec != nil && c.spec.RestartPolicy != nil &&
		*c.spec.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// failedExit reports whether a termination was a failure.
func failedExit(t *corev1.ContainerStateTerminated) bool {
	return t != nil && (t.ExitCode != 0 || t.Reason == reasonOOMKilled)
}

// exitDetail describes how a container keeps exiting, for a Failure's message.
func (c container) exitDetail(last *corev1.ContainerStateTerminated, final bool) string {
	var parts []string
	if !final {
		parts = append(parts, fmt.Sprintf("restartCount %d", c.status.RestartCount))
	}
	if last != nil {
		exit := fmt.Sprintf("exit code %d (%s)", last.ExitCode, cmp.Or(last.Reason, reasonError))
		if !final {
			exit = "last " + exit
		}
		parts = append(parts, exit)
		if limit, ok := c.memoryLimit(); ok && last.Reason == reasonOOMKilled {
			parts = append(parts, "memory limit "+limit)
		}
	}
	if final {
		parts = append(parts, "not restarted (restartPolicy Never)")
	}
	detail := strings.Join(parts, ", ")
	if w := c.status.State.Waiting; w != nil && w.Message != "" {
		detail += ": " + w.Message
	}
	return detail
}

// memoryLimit returns the container's memory limit, if it has one.
func (c container) memoryLimit() (string, bool) {
	if c.spec == nil {
		return "", false
	}
	limit, ok := c.spec.Resources.Limits[corev1.ResourceMemory]
	return limit.String(), ok
}

// failure is a failure of the container.
func (c container) failure(code result.Code, reason, detail string) result.Failure {
	return result.Failure{
		Code:         code,
		Reason:       reason,
		Message:      c.describe() + ": " + detail,
		Pod:          c.pod.Name,
		Container:    c.name,
		RestartCount: c.status.RestartCount,
	}
}

// podFailure is a failure of the pod as a whole.
func podFailure(code result.Code, p *corev1.Pod, reason, detail string) result.Failure {
	return result.Failure{Code: code, Reason: reason, Message: "pod " + p.Name + ": " + detail, Pod: p.Name}
}

// unschedulable fails a pod the scheduler has found no node for during the grace period:
// unschedulable-grace when set, else the workload's own deadline and a margin (a node
// scale-up may bring one), 2 minutes at least, and DefaultUnschedulableGrace for a workload
// without a deadline of its own.
func (e *findings) unschedulable(p *corev1.Pod) {
	c := podCondition(p, corev1.PodScheduled)
	if c == nil || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable {
		return
	}
	since := c.LastTransitionTime.Time
	if since.IsZero() {
		since = p.CreationTimestamp.Time
	}
	grace := e.opts.UnschedulableGrace
	if grace <= 0 {
		grace = DefaultUnschedulableGrace
		if e.readyDeadline > 0 {
			grace = max(minUnschedulableGrace, e.readyDeadline+neverReadyMargin)
		}
	}
	if !e.elapsed(since, grace) {
		return
	}
	e.fail(podFailure(result.CodeUnschedulable, p, c.Reason, fmt.Sprintf("not scheduled for %s: %s", grace, c.Message)))
}

// neverReady fails a running pod that has not been Ready during the grace period, counted
// from the later of the Ready condition's last change and the last start of a container or
// sidecar. A readiness probe's initialDelaySeconds extends the grace period, as the probe does
// not run before. A container whose startup probe has not passed yet is starting, not unready:
// if the probe keeps failing, the kubelet restarts it and the crash-loop rule takes over. So is
// a container that is not running: it is being restarted, which the crash-loop rule judges.
func (e *findings) neverReady(p *corev1.Pod) {
	ready := podCondition(p, corev1.PodReady)
	if p.Status.Phase != corev1.PodRunning || (ready != nil && ready.Status == corev1.ConditionTrue) ||
		len(p.Status.ContainerStatuses) < len(p.Spec.Containers) {
		return
	}
	var since time.Time
	if ready != nil {
		since = ready.LastTransitionTime.Time
	}
	grace := e.opts.NeverReadyGrace
	if grace <= 0 && e.readyDeadline > 0 {
		grace = e.readyDeadline + neverReadyMargin
	}
	ownDeadline := e.opts.NeverReadyGrace <= 0 && e.readyDeadline <= 0
	if ownDeadline {
		grace = DefaultNeverReadyGrace
	}
	var unready []container
	for _, c := range containersOf(p) {
		if c.init && !c.sidecar() {
			continue // it has completed, or the pod would not be running
		}
		running := c.status.State.Running
		if running == nil || (c.status.Started != nil && !*c.status.Started) {
			return
		}
		if running.StartedAt.After(since) {
			since = running.StartedAt.Time
		}
		if !c.status.Ready {
			unready = append(unready, c)
			grace = max(grace, c.readinessDelay())
			if ownDeadline {
				grace = max(grace, c.probeBudget()+neverReadyMargin)
			}
		}
	}
	if since.IsZero() {
		since = p.CreationTimestamp.Time
	}
	if e.deadlinePassed {
		// The Deployment's controller gave up on it (not-progressing): the pod is why, and
		// the failure names it.
		if len(unready) > 0 && e.stuck == nil {
			c := unready[0]
			e.stuck = &c
		}
		return
	}
	if !e.elapsed(since, grace) {
		e.note(fmt.Sprintf("pod %s running, not ready since %s; fails at %s", p.Name, stamp(since), stamp(since.Add(grace))))
		return
	}
	reason := reasonContainersNotReady
	if len(unready) == 0 {
		reason = reasonReadinessGatesNotReady
	}
	if ready != nil {
		reason = cmp.Or(ready.Reason, reason)
	}
	e.notReady(p, unready, reason, grace)
}

// notReady fails each unready container of a pod, or the pod itself when its containers are
// ready but a readiness gate is not.
func (e *findings) notReady(p *corev1.Pod, unready []container, reason string, grace time.Duration) {
	if len(unready) == 0 {
		detail := fmt.Sprintf("containers ready but pod not ready for %s", grace)
		if ready := podCondition(p, corev1.PodReady); ready != nil && ready.Message != "" {
			detail += ": " + ready.Message
		}
		e.fail(podFailure(result.CodeNeverReady, p, reason, detail))
		return
	}
	for _, c := range unready {
		detail := fmt.Sprintf("running but not ready for %s", grace)
		if c.spec != nil && c.spec.ReadinessProbe != nil {
			detail += ": readiness probe failing"
		}
		e.fail(c.failure(result.CodeNeverReady, reason, detail))
	}
}

// probeBudget is how long a started container's readiness probe allows it to become ready:
// its initialDelaySeconds, then periodSeconds (10 by default) times the successes it needs
// and the failures it tolerates (1 and 3 by default), each attempt up to timeoutSeconds. (The
// neverReady rule runs once the startup probe has passed.)
func (c container) probeBudget() time.Duration {
	if c.spec == nil || c.spec.ReadinessProbe == nil {
		return 0
	}
	p := c.spec.ReadinessProbe
	second := func(n int32) time.Duration { return time.Duration(n) * time.Second }
	attempts := time.Duration(cmp.Or(p.SuccessThreshold, 1)) + time.Duration(cmp.Or(p.FailureThreshold, 3))
	return second(p.InitialDelaySeconds) + attempts*(second(cmp.Or(p.PeriodSeconds, 10))+second(cmp.Or(p.TimeoutSeconds, 1)))
}

// readinessDelay is how long after the container starts its readiness probe first runs.
func (c container) readinessDelay() time.Duration {
	if c.spec == nil || c.spec.ReadinessProbe == nil {
		return 0
	}
	return time.Duration(c.spec.ReadinessProbe.InitialDelaySeconds) * time.Second
}

// podCondition returns the pod's condition of type t, or nil.
func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}
