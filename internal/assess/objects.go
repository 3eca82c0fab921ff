package assess

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// The objects of an inventory that are not Flux objects: judged by kstatus, Flux's health
// rules and the rollout classifier.

// workloadsExplain are the Flux failures that only say the workloads did not become healthy:
// when the classifier finds why, its failure is reported instead.
var workloadsExplain = map[result.Code]bool{
	result.CodeFluxHealthCheckFailed: true,
	result.CodeFluxInstallFailed:     true,
	result.CodeFluxUpgradeFailed:     true,
	result.CodeFluxTestFailed:        true,
}

// objectVisit is what the walk knows of one inventory object while it judges it.
type objectVisit struct {
	ref   flux.ObjectRef
	owner *flux.Gate
	ro    result.Object
	gvk   schema.GroupVersionKind
	// key and list are the list it is read from, in namespace ns ("" for a cluster-scoped
	// kind).
	key    ListKey
	list   List
	ns     string
	cached any
	memo   memoStatus
	u      *unstructured.Unstructured
	// current: the inventory's objects may fail the rollout only once Flux has applied the
	// expected revision: before, they are the previous revision's, which the expected one
	// may fix.
	current bool
}

// evalObject reads an inventory object and asks the judge of its kind (judgeOf): a Flux
// object by its gate, a Flux source as source-controller serves it, any other by kstatus and,
// when it is a workload that is not Current yet, the classifier, which says whether its
// rollout can still succeed. id is o.ID().
func (a *assessor) evalObject(e *Assessment, o flux.ObjectRef, id string, owner *flux.Gate, want flux.Revision, now time.Time, visited, roots map[string]bool) {
	v := objectVisit{ref: o, owner: owner, current: owner.Applied,
		ro:  result.Object{ID: id, Group: o.Group, Version: o.Version, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Owner: owner.Object.ID, Status: result.ObjectUnknown},
		gvk: schema.GroupVersionKind{Group: o.Group, Version: o.Version, Kind: o.Kind}}
	if !a.listObject(e, &v, now) || !a.readObject(e, &v) {
		return
	}
	if nested := judgeOf(o)(a, e, v, now); nested != nil {
		a.evalFlux(e, *nested, owner, want, now, visited, roots)
		a.failPausedSpec(e, &v)
	}
}

// listObject finds the list v's object is read from, by its kind's mapping; false, reported,
// while the mapping or the list is not there yet.
func (a *assessor) listObject(e *Assessment, v *objectVisit, now time.Time) bool {
	o, owner, gvk, ro := v.ref, v.owner, v.gvk, &v.ro
	answer := a.assessMapping(e, gvk)
	mapping, done, err := answer.Mapping, answer.Done, answer.Err
	if !done {
		ro.Message = "discovering the API of " + gvk.Kind
		e.Objects = append(e.Objects, *ro)
		if e.Pending == nil {
			e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "Discovering", Message: ro.ID + ": " + ro.Message, Progress: ProgressStep})
		}
		return false
	}
	if err != nil {
		ro.Message = err.Error()
		e.Objects = append(e.Objects, *ro)
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "UnknownKind", Message: ro.ID + ": " + err.Error()})
		e.recheckAt(now.Add(MappingRetry))
		return false
	}
	ns := o.Namespace
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		// A Helm manifest read from the storage secret gives every object the release's
		// namespace; a cluster-scoped one has none.
		ns, ro.Namespace, ro.ID = "", "", result.ObjectID(o.Kind, "", o.Name)
	}
	objKey := ListKey{GVR: mapping.Resource, Namespace: ns}
	w := a.list(objKey)
	v.key, v.list, v.ns = objKey, w, ns
	if w.Synced() {
		a.consistentObject(objKey, w, owner.Object.ID, ns, o.Name)
		return true
	}
	if w.Err() != nil && w.Read().Failure.Cause == ReadNotServed {
		// A kind mapped without discovery (a built-in one) that this cluster does not serve:
		// said as discovery would have said it, and looked at again as a kind discovery did
		// not find is (a version the cluster may start serving).
		ro.Message = NotServedError{GVK: gvk}.Error()
		e.Objects = append(e.Objects, *ro)
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "UnknownKind", Message: ro.ID + ": " + ro.Message})
		e.recheckAt(now.Add(MappingRetry))
		return false
	}
	// (What the watch is, said only while it has no first list: a synced watch is ready
	// either way.)
	what := mapping.Resource.Resource + namespaceSuffix(ns)
	if gr := mapping.Resource.GroupResource(); MetadataOnly[gr] || NoReadiness[gr] {
		// A Secret or a ConfigMap has no status: it is Current once it exists, which
		// Flux's inventory already says; configuration, RBAC, CRDs, quotas and sources
		// have no rollout of their own. Credentials that may not read them (least
		// privilege) leave them unverified, not the cluster Forbidden.
		ready, forbidden := a.optionalWatchReady(e, w, what)
		if forbidden != "" {
			ro.Message = "not verified: " + forbidden
			e.Objects = append(e.Objects, *ro)
			return false
		}
		if !ready {
			ro.Message = "not listed yet"
			e.Objects = append(e.Objects, *ro)
			e.listOnItsWay(w)
			return false
		}
	} else if !a.watchReady(e, w, what) {
		ro.Message = "not listed yet"
		e.Objects = append(e.Objects, *ro)
		e.listOnItsWay(w)
		a.discoverCanariesEarly(o)
		return false
	}
	return true
}

// discoverCanariesEarly asks, while the list of a workload a Canary may target is on its way,
// whether the cluster serves Flagger's Canaries, which judging the workload will ask
// (canaryOf): the discovery goes out beside the list, not a round trip and a pass after it.
// It waits for nothing and decides nothing.
func (a *assessor) discoverCanariesEarly(o flux.ObjectRef) {
	if o.Group == "apps" && canaryTargets[o.Kind] != (schema.GroupVersionResource{}) && !a.view.Mapping(CanaryGVK).Done {
		a.e.need(CanaryGVK)
	}
}

// readObject reads v's object from its list and computes its kstatus status; false,
// reported, when it is not there (a Job may be gone once done) or cannot be read.
func (a *assessor) readObject(e *Assessment, v *objectVisit) bool {
	o, owner, gvk, ro, w, ns := v.ref, v.owner, v.gvk, &v.ro, v.list, v.ns
	cached, ok := w.Object(ns, o.Name)
	if !ok {
		done, failedJob, msg := jobGone(w, ns, o, owner, a.mem.firstWorkedOn[owner.Object.ID])
		switch {
		case done:
			ro.Status, ro.Message = result.ObjectCurrent, msg
			e.Objects = append(e.Objects, *ro)
		case failedJob != nil && v.current:
			ro.Status, ro.Message = result.ObjectFailed, "deleted after it failed (ttlSecondsAfterFinished)"
			e.Objects = append(e.Objects, *ro)
			e.fail(Finding{Verdict: result.VerdictFailed, Code: result.CodeJobFailed, Reason: "Failed", Message: ro.ID + ": " + ro.Message})
		case unseenJobGone(o, owner, v.current):
			ro.Status, ro.Message = result.ObjectNotFound, "gone before the run saw how it ended (ttlSecondsAfterFinished)"
			e.Objects = append(e.Objects, *ro)
			// (listObject held the list to the consistency rule: read after the owner's status.)
			how := "(no spec.wait, no healthChecks naming it): whether it succeeded cannot be told; spec.wait: true, or a healthChecks entry for it, makes it verifiable"
			if owner.Object.Kind == string(flux.KindHelmRelease) {
				how = "(disableWait, or disableWaitForJobs): whether it succeeded cannot be told; Helm's wait for Jobs makes it verifiable"
			}
			e.fail(Finding{Verdict: result.VerdictUnverified, Code: result.CodeJobGoneUnverified, Reason: "NotFound",
				Message: fmt.Sprintf("%s: %s, and %s did not wait for it %s", ro.ID, ro.Message, owner.Object.ID, how)})
		case notCreatedCRD(o, owner):
			// helm-controller lists it in the inventory but never creates it: nothing will.
			ro.Status, ro.Message = result.ObjectNotFound, "not verified: not created by helm-controller: "+owner.CRDsSkippedBy
			e.CRDsNotCreated++
			e.Objects = append(e.Objects, *ro)
		default:
			ro.Status, ro.Message = result.ObjectNotFound, "not found in the cluster"
			e.Objects = append(e.Objects, *ro)
			e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "NotFound", Message: ro.ID + " not found"})
		}
		return false
	}
	memo := a.mem.statuses.status(cached, gvk, a.spec.Health, a.exprs[owner.Object.ID])
	if !memo.ok {
		// Every kind the caches hold converts: this is a defect, said as one, never a pass.
		ro.Message = fmt.Sprintf("compute status: cannot read the cached %T", cached)
		e.Objects = append(e.Objects, *ro)
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: string(result.ObjectUnknown), Message: ro.ID + ": " + ro.Message})
		return false
	}
	if memo.err != nil {
		ro.Message = memo.err.Error()
	} else {
		ro.Status, ro.Message = memo.status, memo.msg
	}
	v.cached, v.memo, v.u = cached, memo, memo.u
	return true
}

// notCreatedCRD reports whether o, not found, is a CRD of a HelmRelease's chart that
// helm-controller did not create: the policy of the action that made the release skips them
// (flux.Gate.CRDsSkippedBy), though the inventory lists every CRD of the chart.
func notCreatedCRD(o flux.ObjectRef, owner *flux.Gate) bool {
	return owner.Object.Kind == string(flux.KindHelmRelease) && owner.CRDsSkippedBy != "" &&
		o.Group == crdsKey.GVR.Group && o.Kind == "CustomResourceDefinition"
}

// recoversDuringInstall are the failures of a workload that may still pass during a first
// install, as what the chart installs beside it comes up: they are left to Helm's wait.
var recoversDuringInstall = map[result.Code]bool{
	result.CodeCrashLoop: true, result.CodeOOM: true, result.CodeNotProgressing: true, result.CodeNeverReady: true,
}

// IgnoredReadiness ends the message of a workload whose annotation says its readiness does not
// count.
const IgnoredReadiness = "not verified (" + classify.AnnotationIgnoreReadiness + ")"

func waitingFor(o result.Object) string {
	if o.Message == "" {
		return fmt.Sprintf("waiting for %s (%s)", o.ID, o.Status)
	}
	return fmt.Sprintf("waiting for %s: %s", o.ID, o.Message)
}
func namespaceSuffix(ns string) string {
	if ns == "" {
		return ""
	}
	return " in namespace " + ns
}

// watchReady reports whether a watch has its first list; a list the credentials may not make
// settles the cluster as Forbidden (or Unauthorized) at once, since waiting will not fix it.
func (a *assessor) watchReady(e *Assessment, w List, what string) bool {
	if w.Synced() {
		return true
	}
	if err := w.Err(); err != nil {
		x := w.Read().Failure.Explain(what)
		if x.Known && x.Verdict != result.VerdictUnreachable {
			e.fail(Finding{Verdict: x.Verdict, Reason: string(x.Verdict), Message: x.Message})
			return false
		}
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "ListFailed", Message: fmt.Sprintf("listing %s: %s", what, x.Detail)})
	} else {
		if e.Pending == nil {
			e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "Listing", Message: waitingMessage(w, what, a.now), Progress: ProgressStep})
		}
		e.Listing = true
	}
	e.Syncing = true
	return false
}

// classifierReads lists, per workload kind, the kinds the classifier reads besides the
// workload itself; only those are watched, so credentials need only what the app's kinds need.
var classifierReads = map[schema.GroupKind][]schema.GroupVersionResource{
	{Group: "apps", Kind: "Deployment"}:  {RSGVR, PodsGVR},
	{Group: "apps", Kind: "ReplicaSet"}:  {PodsGVR},
	{Group: "apps", Kind: "StatefulSet"}: {PodsGVR},
	{Group: "apps", Kind: "DaemonSet"}:   {RevisionsGVR, PodsGVR},
	{Group: "batch", Kind: "Job"}:        {PodsGVR},
	{Group: "batch", Kind: "CronJob"}:    {JobsGVR, PodsGVR},
	{Group: "", Kind: "Pod"}:             nil,
}

// classify runs the rollout classifier on a workload that is not Current, read from the list
// wl. What it reads is evidence (evidenceReady): when a list fails (the credentials may not
// make it, the server does not serve the kind there, it errs) the workload is classified on
// what was read before it, its own status at least, and its message says what could not be
// read; the lists after it are not read, as they only matter through it (a Deployment's pods
// through its ReplicaSets). It returns false while what it reads is still being listed: a
// kstatus failure then waits for the precise one (a Job Failed waits for its pods, which name
// the backoff limit and the logs). A failure rests on lists read no earlier than the
// workload's own state (consistency): an old ReplicaSet's refusal, as a watch behind the
// cluster still holds it, is not the failure of a Deployment that has replaced it since. The
// lists that cannot prove it are Unconfirmed, after the workload's own list, wk: read again in
// that order, they prove it even where revisions do not compare.
func (a *assessor) classify(e *Assessment, ro *result.Object, u *unstructured.Unstructured, wk ListKey, wl List, now time.Time) bool {
	ns := ro.Namespace
	in := classify.Input{Workload: u, Now: now}
	var before []ListKey
	for _, gvr := range classifierReads[schema.GroupKind{Group: ro.Group, Kind: ro.Kind}] {
		key := ListKey{GVR: gvr, Namespace: ns}
		w := a.list(key)
		ready, note := a.evidenceReady(e, w, gvr.Resource+namespaceSuffix(ns))
		if note != "" {
			ro.Message = joinMessage(ro.Message, "rollout failures classified without "+gvr.Resource+": "+note)
			in.Incomplete = true
			break
		}
		if !ready {
			return false
		}
		if !readAfter(w, a.revisionAt(key, w), wl, u.GetResourceVersion()) {
			before = append(before, key)
		}
		switch gvr {
		case PodsGVR:
			in.Pods = listOf[corev1.Pod](w)
		case RSGVR:
			in.ReplicaSets = listOf[appsv1.ReplicaSet](w)
		case RevisionsGVR:
			in.Revisions = listOf[appsv1.ControllerRevision](w)
		case JobsGVR:
			in.Jobs = listOf[batchv1.Job](w)
		}
	}
	opts, notes := a.spec.Classify.ForObject(u.GetAnnotations())
	for _, n := range notes {
		ro.Message = joinMessage(ro.Message, n)
	}
	v, err := classify.Classify(in, opts)
	if err != nil {
		ro.Message = joinMessage(ro.Message, "classify: "+err.Error())
		return true
	}
	e.recheckAt(v.Recheck)
	if v.Note != "" {
		// What fails within its grace period: the wait says why.
		ro.Message = joinMessage(ro.Message, v.Note)
	}
	if v.Failure != nil {
		ro.Failure = v.Failure
		ro.Status = result.ObjectFailed
		if len(before) > 0 {
			a.unconfirmed(wk)
		}
		for _, key := range before {
			a.unconfirmed(key)
		}
	}
	return true
}

// optionalWatchReady is watchReady for what the verdict can do without: a list the
// credentials may not make (403) is not the cluster's verdict but a note, returned as
// forbidden, saying what to grant.
func (a *assessor) optionalWatchReady(e *Assessment, w List, what string) (ready bool, forbidden string) {
	if w.Synced() {
		return true, ""
	}
	if err := w.Err(); err != nil && apierrors.IsForbidden(err) {
		return false, fmt.Sprintf("the credentials may not list %s (403); grant get, list and watch on it for a precise reason", what)
	}
	return a.watchReady(e, w, what), ""
}
func joinMessage(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "; " + b
}
func listOf[T any](w List) []*T {
	items := w.Items()
	out := make([]*T, 0, len(items))
	for _, it := range items {
		if t, ok := it.(*T); ok {
			out = append(out, t)
		}
	}
	return out
}
