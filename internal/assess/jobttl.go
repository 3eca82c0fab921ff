package assess

import (
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// awaitJobTTL holds back a Kustomization's failure to apply a Job's changed pod template
// (flux.ImmutableJob) while the Job's own TTL will clear the way: the API server refuses a new
// spec.template of a Job, kustomize-controller retries the apply at its retry interval, and
// once the TTL controller has deleted the finished Job (ttlSecondsAfterFinished after it
// completed or failed), the retry creates the new one. So a finished Job with a TTL waits
// until its deletion and the retry after it (and a tenth of it and 30 s, as graceRetried
// allows), and fails then if the failure stands; a Job already gone, or being deleted, waits
// for the retry as any retried failure does (graceRetried). A Job that still runs and has a TTL waits too
// (awaitRunningJob). A Job without a TTL is never deleted by itself: the failure stands at
// once, and so does one whose deletion is more than jobTTLWaitLimit away, saying when. The
// Jobs' list is judged (consistency), read no earlier than the Kustomization's status.
func (a *assessor) awaitJobTTL(e *Assessment, g *flux.Gate, now time.Time) {
	if g.Verdict != result.VerdictFailed || g.Code != result.CodeFluxReconciliationFailed || g.Object.Kind != string(flux.KindKustomization) {
		return
	}
	ns, name, ok := flux.ImmutableJob(g.Message)
	if !ok {
		return
	}
	key := ListKey{GVR: JobsGVR, Namespace: ns}
	w := a.list(key)
	ready, forbidden := a.optionalWatchReady(e, w, "jobs"+namespaceSuffix(ns))
	switch {
	case !ready && forbidden == "":
		override(g, result.VerdictInProgress, g.Code, g.Object.Reason, fmt.Sprintf(
			"reading the Jobs in namespace %s, which say whether Job/%s/%s will be deleted by its TTL: %s", ns, ns, name, g.Message))
		return
	case !ready:
		return // (the credentials may not list them: the failure stands, as before)
	}
	a.consistent(key, w, g.Object.ID)
	cached, found := w.Object(ns, name)
	if !found {
		g.Retried = true // deleted: the next retry creates it
		return
	}
	job, _ := cached.(*batchv1.Job)
	if job != nil && job.DeletionTimestamp != nil {
		// Being deleted (by hand, or by its TTL just now): gone once its pods are, and the
		// next retry creates the new one, as for a Job already gone.
		g.Retried = true
		return
	}
	if job == nil || job.Spec.TTLSecondsAfterFinished == nil {
		return // nothing deletes it: the failure stands
	}
	end, finished := jobFinishedAt(job)
	if !finished {
		if job.Spec.Suspend != nil && *job.Spec.Suspend && job.Labels[kueueQueueLabel] != "" {
			served, known := a.kueueServed(e)
			if !known {
				override(g, result.VerdictInProgress, g.Code, g.Object.Reason, fmt.Sprintf(
					"discovering whether the cluster runs Kueue, which would resume Job/%s/%s: %s", ns, name, g.Message))
				return
			}
			if !served {
				return // (nothing resumes it: the failure stands)
			}
		}
		awaitRunningJob(g, ns, name, job, now)
		return
	}
	deleted := end.Add(time.Duration(*job.Spec.TTLSecondsAfterFinished) * time.Second)
	if deleted.After(now.Add(jobTTLWaitLimit)) {
		// A day's TTL would turn a known answer into the run's Timeout: it fails now, saying
		// when the way clears.
		override(g, result.VerdictFailed, g.Code, g.Object.Reason, fmt.Sprintf(
			"%s (Job/%s/%s finished at %s, and its ttlSecondsAfterFinished deletes it only at %s, after which kustomize-controller's retry creates the new one; delete it to go on now)",
			g.Message, ns, name, stamp(end), stamp(deleted)))
		return
	}
	retry := g.RetryEvery
	if retry <= 0 {
		retry = a.retryGrace()
	}
	next := maxTime(deleted, g.FailedAt).Add(retry + retry/10 + 30*time.Second)
	if !now.Before(next) {
		return
	}
	override(g, result.VerdictInProgress, g.Code, g.Object.Reason, fmt.Sprintf(
		"Job/%s/%s finished at %s and its ttlSecondsAfterFinished deletes it by %s; kustomize-controller's retry after that creates the new one (a Job's template cannot change): fails at %s if it still fails: %s",
		ns, name, stamp(end), stamp(deleted), stamp(next), g.Message))
	e.recheckAt(next)
}

// awaitRunningJob holds back the failure while Job ns/name, which has a TTL, still runs (no
// Complete or Failed condition): once it finishes, the TTL controller deletes it
// ttlSecondsAfterFinished later, and kustomize-controller's retry after that creates the new
// one. No recheck is asked for: the Jobs' list is a watch, and the Job's finishing changes it
// and so wakes the next pass, which times the deletion and the retry as for any finished Job.
// A suspended Job does not run to its end (the refused apply cannot resume it): the failure
// stands; unless Kueue holds it for admission (kueueQueueLabel, in a cluster that runs Kueue:
// awaitJobTTL), which resumes it then: it waits as a running Job does. Nor does a TTL longer than jobTTLWaitLimit let the way clear in time even were the
// Job to finish now: it fails now, saying when at the earliest, as a finished Job does. A
// deadline (spec.activeDeadlineSeconds from status.startTime) is named, never a reason to
// fail: a Job ends before it, often long before. Without one, the run's timeout ends the wait.
func awaitRunningJob(g *flux.Gate, ns, name string, job *batchv1.Job, now time.Time) {
	running := fmt.Sprintf("Job/%s/%s is still running", ns, name)
	if job.Spec.Suspend != nil && *job.Spec.Suspend {
		queue := job.Labels[kueueQueueLabel]
		if queue == "" {
			return // nothing resumes it: the failure stands
		}
		running = fmt.Sprintf("Job/%s/%s waits for Kueue to admit it (queue %s), which resumes it", ns, name, queue)
	}
	ttl := time.Duration(*job.Spec.TTLSecondsAfterFinished) * time.Second
	if job.Spec.ActiveDeadlineSeconds != nil && job.Status.StartTime != nil {
		deadline := job.Status.StartTime.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second)
		running += fmt.Sprintf(" (until %s at the latest: its activeDeadlineSeconds)", stamp(deadline))
	}
	if ttl > jobTTLWaitLimit {
		override(g, result.VerdictFailed, g.Code, g.Object.Reason, fmt.Sprintf(
			"%s (%s, and its ttlSecondsAfterFinished (%d s) deletes it only that long after it finishes, at %s at the earliest, after which kustomize-controller's retry creates the new one; delete it to go on now)",
			g.Message, running, *job.Spec.TTLSecondsAfterFinished, stamp(now.Add(ttl))))
		return
	}
	retry := "at the Kustomization's retry interval"
	if g.RetryEvery > 0 {
		retry = fmt.Sprintf("every %s, the Kustomization's retry interval", g.RetryEvery)
	}
	override(g, result.VerdictInProgress, g.Code, g.Object.Reason, fmt.Sprintf(
		"%s; once it finishes, its ttlSecondsAfterFinished (%d s) deletes it and kustomize-controller's retry after that (%s) creates the new one (a Job's template cannot change): %s",
		running, *job.Spec.TTLSecondsAfterFinished, retry, g.Message))
}

// kueueQueueLabel names the Kueue queue of a Job Kueue manages: its webhook suspends the Job
// when it is created, and Kueue resumes it once it admits it to the queue.
const kueueQueueLabel = "kueue.x-k8s.io/queue-name"

// KueueWorkloadGVKs are Kueue's Workload kind in the versions Kueue serves (v1beta2 since
// v0.15, v1beta1 before and beside it): a cluster that serves either runs Kueue, which admits
// the Jobs labelled kueueQueueLabel.
var KueueWorkloadGVKs = []schema.GroupVersionKind{
	{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "Workload"},
	{Group: "kueue.x-k8s.io", Version: "v1beta1", Kind: "Workload"},
}

// kueueServed reports whether the cluster serves Kueue's Workloads in any of their versions
// (discovery, asked for on first use); known is false while discovery has not answered for
// all of them and none was found served. A discovery that fails is asked again, and the wait
// goes on meanwhile.
func (a *assessor) kueueServed(e *Assessment) (served, known bool) {
	known = true
	for _, gvk := range KueueWorkloadGVKs {
		m := a.view.Mapping(gvk)
		var notServed NotServedError
		switch {
		case m.Done && m.Err == nil:
			return true, true
		case m.Done && errors.As(m.Err, &notServed):
		case m.Done:
			a.e.need(gvk)
			e.recheckAt(a.now.Add(MappingRetry))
			known = false
		default:
			a.e.need(gvk)
			known = false
		}
	}
	return false, known
}

// stamp is t as the messages give a moment.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// jobTTLWaitLimit is how far off a Job's deletion by its TTL awaitJobTTL waits for: the
// default timeout and 30 s, as the unschedulable grace of kinds without a deadline.
const jobTTLWaitLimit = 10*time.Minute + 30*time.Second

// jobFinishedAt is when a Job completed or failed (the transition time of its Complete or
// Failed condition, else its completionTime), and whether it has.
func jobFinishedAt(job *batchv1.Job) (time.Time, bool) {
	if job == nil {
		return time.Time{}, false
	}
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			at := c.LastTransitionTime.Time
			if at.IsZero() && job.Status.CompletionTime != nil {
				at = job.Status.CompletionTime.Time
			}
			return at, true
		}
	}
	return time.Time{}, false
}

// maxTime is the later of a and b.
func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
