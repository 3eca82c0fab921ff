// Package classify decides whether the rollout of one workload can no longer succeed, and why,
// as a stable result.Code. It is a pure function of the objects it is given, like kstatus's
// status.Compute: it never talks to a cluster and never reads the clock.
//
// Only the current revision is judged: the pods of a Deployment's newest ReplicaSet, of a
// StatefulSet's update revision, of a DaemonSet's newest ControllerRevision, of a Job, of a
// CronJob's running Jobs, or a bare Pod. Pods of older revisions and terminating pods are
// about to go away, so they never fail a rollout.
package classify

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/result"
)

// The defaults of Options.
const (
	DefaultCrashRestarts int32 = 3
	// DefaultUnschedulableGrace is how long a pod of a workload without a deadline of its own
	// (a StatefulSet, a DaemonSet, a Job, a bare pod) may stay unschedulable: as long as a
	// Deployment's default deadline and the margin, since a node scale-up serves them alike.
	DefaultUnschedulableGrace = defaultProgressDeadline + neverReadyMargin
	// minUnschedulableGrace is the least a workload's own deadline makes the grace.
	minUnschedulableGrace = 120 * time.Second
	DefaultRetryGrace     = 120 * time.Second
	// DefaultNeverReadyGrace is the least a pod of a workload without a deadline of its own may
	// run unready.
	DefaultNeverReadyGrace = 120 * time.Second
	// neverReadyMargin is added to a workload's own deadline: its controller, or its probes,
	// speak first.
	neverReadyMargin = 30 * time.Second
	// defaultProgressDeadline is a Deployment's progressDeadlineSeconds when it sets none.
	defaultProgressDeadline = 600 * time.Second
)

// jobKind is the kind of a Job, whose pods are judged differently.
const jobKind = "Job"

// ErrUnsupported is returned by Classify for a kind that Supported rejects.
var ErrUnsupported = errors.New("unsupported kind")

// Options holds the thresholds; zero (or negative) values mean the defaults.
type Options struct {
	// CrashRestarts is how many restarts make a crashing or OOM-killed container fatal.
	// Below it the container may still recover, so nothing has failed yet.
	CrashRestarts int32
	// UnschedulableGrace is how long a pod may stay unschedulable before the rollout fails.
	// Zero means the workload's own deadline, a Deployment's progressDeadlineSeconds plus a
	// margin (its controller then says ProgressDeadlineExceeded, not-progressing, first), 2
	// minutes at least; for a workload without one, DefaultUnschedulableGrace: a node scale-up
	// (cluster-autoscaler, Karpenter) commonly takes minutes, and kstatus, so Flux's health
	// checks, keeps such a workload InProgress until that deadline.
	UnschedulableGrace time.Duration
	// NeverReadyGrace is how long a pod may run without becoming ready before the rollout
	// fails. Zero means the workload's own deadline: a Deployment's progressDeadlineSeconds
	// (its controller then says ProgressDeadlineExceeded, not-progressing, first), else what
	// its probes allow (startup and readiness probes' initialDelaySeconds plus periodSeconds
	// times failureThreshold) plus a margin, and never less than DefaultNeverReadyGrace. A
	// readiness probe's initialDelaySeconds extends a grace that is set too.
	NeverReadyGrace time.Duration
	// RetryGrace is how long an error the kubelet or a controller retries may last before the
	// rollout fails: a pull error that names the network or the registry, a container whose
	// configuration is missing (a Secret or ConfigMap an operator creates later), a pod the
	// controller may not create yet (a quota the old pods still hold, a webhook that is not
	// up, a service account on its way).
	RetryGrace time.Duration
}

// withDefaults replaces the unset thresholds by their defaults.
func (o Options) withDefaults() Options {
	if o.CrashRestarts <= 0 {
		o.CrashRestarts = DefaultCrashRestarts
	}
	if o.RetryGrace <= 0 {
		o.RetryGrace = DefaultRetryGrace
	}
	return o
}

// Input is one workload from a Flux inventory and the objects that may belong to it. Callers
// may pass a superset (e.g. every pod and ReplicaSet of the namespace): the classifier keeps
// only what the workload owns, following controller ownerReferences by UID.
type Input struct {
	// Workload is a Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob or Pod.
	Workload    *unstructured.Unstructured
	ReplicaSets []*appsv1.ReplicaSet         // for a Deployment
	Revisions   []*appsv1.ControllerRevision // for a DaemonSet
	Jobs        []*batchv1.Job               // for a CronJob
	Pods        []*corev1.Pod
	// Incomplete is set when a list the workload's objects come from could not be read (the
	// fields above then hold what was read before it): no rule takes the absence of an object
	// for a fact, so the verdict rests on what was read, the workload's own status at least.
	Incomplete bool
	// Now is the time of the observation, which grace periods are measured against.
	Now time.Time
}

// Outcome is what Classify found.
type Outcome struct {
	// Failure is why the rollout cannot succeed; nil when nothing has failed (yet).
	Failure *result.Failure
	// Recheck is the earliest time at which the verdict could change with no object changing
	// (a grace period ending); the engine re-evaluates then. It is zero when no grace period
	// is running, and always when Failure is set: a failure is final.
	Recheck time.Time
	// Note says what is failing within its grace period, for a person watching the wait.
	Note string
}

// Classify tells whether the rollout of in.Workload cannot succeed. When several failures are
// found it returns the most specific one (see severity), then the first by pod name, then by
// container name, so the same objects always give the same verdict. It returns an error
// wrapping ErrUnsupported for a kind Supported rejects, or when the workload cannot be read.
func Classify(in Input, opts Options) (Outcome, error) {
	if in.Workload == nil {
		return Outcome{}, errors.New("classify: no workload")
	}
	gk := in.Workload.GroupVersionKind().GroupKind()
	id := result.ObjectID(gk.Kind, in.Workload.GetNamespace(), in.Workload.GetName())
	classify, ok := classifiers[gk]
	if !ok {
		return Outcome{}, fmt.Errorf("classify %s: %w %s", id, ErrUnsupported, gk)
	}
	e := &findings{in: in, opts: opts.withDefaults()}
	if err := classify(e); err != nil {
		return Outcome{}, fmt.Errorf("classify %s: %w", id, err)
	}
	return e.outcome(), nil
}

// Supported reports whether Classify knows the kind, so the engine only feeds those.
func Supported(group, kind string) bool {
	_, ok := classifiers[schema.GroupKind{Group: group, Kind: kind}]
	return ok
}

// classifier adds the failures of in.Workload to the findings.
type classifier func(e *findings) error

// classifiers holds the per-kind rules, in the manner of kstatus's legacy status readers.
var classifiers = map[schema.GroupKind]classifier{
	{Group: appsv1.GroupName, Kind: "Deployment"}:  typedRule(deployment),
	{Group: appsv1.GroupName, Kind: "StatefulSet"}: typedRule(statefulSet),
	{Group: appsv1.GroupName, Kind: "DaemonSet"}:   typedRule(daemonSet),
	{Group: appsv1.GroupName, Kind: "ReplicaSet"}:  typedRule(replicaSet),
	{Group: batchv1.GroupName, Kind: jobKind}:      typedRule(job),
	{Group: batchv1.GroupName, Kind: "CronJob"}:    typedRule(cronJob),
	{Group: corev1.GroupName, Kind: "Pod"}:         typedRule(pod),
}

// typedRule turns a rule over a typed object into a classifier of the unstructured workload.
func typedRule[T any](rule func(*T, *findings)) classifier {
	return func(e *findings) error {
		obj := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(e.in.Workload.Object, obj); err != nil {
			return fmt.Errorf("convert to %T: %w", obj, err)
		}
		rule(obj, e)
		return nil
	}
}

// severity orders the codes from the most to the least specific cause. A container's own
// error names what to fix, so it comes first; not-progressing is only the Deployment
// controller noticing the consequence of one of the others, so it comes last.
var severity = []result.Code{
	result.CodeImagePull,
	result.CodeConfig,
	result.CodeOOM,
	result.CodeCrashLoop,
	result.CodeUnschedulable,
	result.CodeQuota,
	result.CodeAdmissionDenied,
	result.CodeJobFailed,
	result.CodeStatefulSetBlocked,
	result.CodeNeverReady,
	result.CodeNotProgressing,
}

// compareFailures orders failures by severity, pod, container, reason then message.
func compareFailures(a, b result.Failure) int {
	return cmp.Or(
		cmp.Compare(slices.Index(severity, a.Code), slices.Index(severity, b.Code)),
		cmp.Compare(a.Pod, b.Pod),
		cmp.Compare(a.Container, b.Container),
		cmp.Compare(a.Reason, b.Reason),
		cmp.Compare(a.Message, b.Message),
	)
}

// findings gathers the failures found, and the earliest end of a running grace period,
// while one workload is classified.
type findings struct {
	in       Input
	opts     Options
	failures []result.Failure
	recheck  time.Time
	// readyDeadline is the workload's own deadline for its pods to become ready (a
	// Deployment's progressDeadlineSeconds); zero when it has none.
	readyDeadline time.Duration
	// notes say what fails within its grace period.
	notes []string
	// deadlinePassed is set when a Deployment is past its progress deadline: its controller
	// gave up (not-progressing), and stuck is its first unready container, which says why.
	deadlinePassed bool
	stuck          *container
}

// lasted says how long something has lasted since since; when since is unknown, that it has
// lasted at least grace.
func (e *findings) lasted(since time.Time, grace time.Duration) time.Duration {
	if since.IsZero() {
		return grace
	}
	return e.in.Now.Sub(since).Round(time.Second)
}

// stamp is a moment in a note: absolute, so the note does not change while it waits.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "(unknown)"
	}
	return t.UTC().Format(time.RFC3339)
}

// note records what fails within its grace period.
func (e *findings) note(s string) {
	e.notes = append(e.notes, s)
}

// fail records a failure.
func (e *findings) fail(f result.Failure) {
	e.failures = append(e.failures, f)
}

// recheckAt records a moment the outcome may change by itself.
func (e *findings) recheckAt(t time.Time) {
	if e.recheck.IsZero() || t.Before(e.recheck) {
		e.recheck = t
	}
}

// elapsed reports whether grace has passed since start. When it has not, it records the
// moment it will, so the engine comes back then.
func (e *findings) elapsed(start time.Time, grace time.Duration) bool {
	deadline := start.Add(grace)
	if !e.in.Now.Before(deadline) {
		return true
	}
	e.recheckAt(deadline)
	return false
}

// outcome picks the failure to report, or when there is none, says when to look again.
func (e *findings) outcome() Outcome {
	if len(e.failures) == 0 {
		var note string
		if len(e.notes) > 0 {
			note = e.notes[0]
		}
		return Outcome{Recheck: e.recheck, Note: note}
	}
	f := slices.MinFunc(e.failures, compareFailures)
	return Outcome{Failure: &f}
}
