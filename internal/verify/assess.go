package verify

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// assessment is the state of one cluster at one moment, computed from the informers' caches.
type assessment struct {
	flux    []result.FluxObject
	objects []result.Object

	// fatal is set by the first thing that settles the cluster's verdict on its own:
	// a failure, a suspension, or credentials that may not read what is needed.
	fatal *verdictReason
	// pending is the first reason the cluster is not done yet; nil when everything is Current.
	pending *verdictReason
	// notFound is set when a requested Flux object does not exist (yet).
	notFound bool
	// syncing is true while a cache is still loading: a snapshot waits for it.
	syncing bool
	// listing is true while a first list is on its way (not failed): the work a connect slot
	// bounds. A list that failed waits for its retry, which costs nothing.
	listing bool
	// inFlight are the watches of the inventories' kinds whose first list is on its way, each
	// once (not the classifier's, nor the Flux objects' own: settleLists).
	inFlight []cachedList
	// recheck is the earliest moment a grace period ends.
	recheck time.Time
	// skippedSuspended are the nested objects reported suspended and not judged.
	skippedSuspended []string
	// rootsApplied is set when every requested object has applied the expected revision;
	// appliedRoots counts them.
	rootsApplied bool
	appliedRoots int
	// mappings are the answers of discovery this assessment got, one question per kind.
	mappings map[schema.GroupVersionKind]mappingAnswer
}

type mappingAnswer struct {
	mapping *meta.RESTMapping
	done    bool
	err     error
}

// assessMapping is clusterState.mapping asked once per kind in an assessment, however many
// objects of that kind the inventories list: they all get the same answer.
func (s *clusterState) assessMapping(e *assessment, gvk schema.GroupVersionKind, now time.Time) (*meta.RESTMapping, bool, error) {
	if a, ok := e.mappings[gvk]; ok {
		return a.mapping, a.done, a.err
	}
	m, done, err := s.mapping(gvk, now)
	if e.mappings == nil {
		e.mappings = map[schema.GroupVersionKind]mappingAnswer{}
	}
	e.mappings[gvk] = mappingAnswer{mapping: m, done: done, err: err}
	return m, done, err
}

// verdictReason explains a verdict.
type verdictReason struct {
	verdict result.Verdict
	code    result.Code
	reason  string
	message string
}

func (e *assessment) fail(v verdictReason) {
	if e.fatal == nil {
		e.fatal = &v
	}
}

func (e *assessment) wait(v verdictReason) {
	if e.pending == nil {
		e.pending = &v
	}
}

// listOnItsWay records w, a watch of an inventory's kind with no first list, in inFlight
// while its first list is on its way (not failed).
func (e *assessment) listOnItsWay(w cachedList) {
	if w.err() == nil && !slices.Contains(e.inFlight, w) {
		e.inFlight = append(e.inFlight, w)
	}
}

func (e *assessment) recheckAt(t time.Time) {
	if !t.IsZero() && (e.recheck.IsZero() || t.Before(e.recheck)) {
		e.recheck = t
	}
}

// assess computes the cluster's state from the caches, starting the watches it finds it
// needs (a namespace or kind seen for the first time in an inventory).
func (s *clusterState) assess(now time.Time) *assessment {
	e := &assessment{objects: make([]result.Object, 0, s.lastObjects)}
	defer func() { s.lastObjects = len(e.objects) }()
	s.statuses.turn()
	// Every requested resource is a root, judged on the run's revision, whatever the order
	// they were given in and whether another one's inventory lists it too: met as a nested
	// object, it is left for its own turn as a root (judged "at whatever it last applied"
	// there, a requested HelmRelease still on the previous chart would pass).
	visited := map[string]bool{}
	roots := map[string]bool{}
	for _, ref := range s.req.Resources {
		roots[ref.ID()] = true
	}
	for _, ref := range s.req.Resources {
		s.evalFlux(e, ref, nil, s.req.Revision, now, visited, roots)
	}
	e.rootsApplied = !s.req.Revision.IsZero() && e.appliedRoots == len(s.req.Resources)
	slices.SortStableFunc(e.objects, func(a, b result.Object) int {
		return cmp.Or(strings.Compare(a.Owner, b.Owner), strings.Compare(a.ID, b.ID))
	})
	return e
}

// evalFlux evaluates a Flux object and what its inventory lists: every object when workloads
// are verified, the Flux objects alone otherwise.
func (s *clusterState) evalFlux(e *assessment, ref flux.Ref, parent *flux.Gate, want flux.Revision, now time.Time, visited, roots map[string]bool) {
	// want is the run's expected revision; a nested object's own is derived from it below.
	owner := ""
	if parent != nil {
		owner = parent.Object.ID
	}
	id := ref.ID()
	if visited[id] || (parent != nil && roots[id]) {
		return
	}
	visited[id] = true
	fo := result.FluxObject{ID: id, Kind: string(ref.Kind), Namespace: ref.Namespace, Name: ref.Name, Owner: owner, Ready: "Unknown", Verdict: result.VerdictInProgress}

	w := s.watches.get(watchKey{gvr: ref.Kind.GroupVersionResource(), namespace: ref.Namespace})
	if !s.watchReady(e, w, string(ref.Kind)+" in namespace "+ref.Namespace) {
		fo.Message = "not listed yet"
		e.flux = append(e.flux, fo)
		return
	}
	cached, ok := w.object(ref.Namespace, ref.Name)
	obj, isU := cached.(*unstructured.Unstructured)
	if !ok || !isU {
		fo.Verdict = result.VerdictNotFound
		fo.Message = id + " not found"
		e.flux = append(e.flux, fo)
		if owner == "" {
			e.notFound = true
		}
		e.wait(verdictReason{verdict: result.VerdictNotFound, reason: "NotFound", message: id + " not found"})
		return
	}
	srcRef := flux.SourceOf(ref.Kind, obj)
	ownSource := parent != nil && srcRef.ID() != parent.Source
	var (
		gate    flux.Gate
		src     *flux.Source
		srcNote string
	)
	if ownSource {
		src, srcNote = s.source(e, srcRef)
	}
	ownerWant := want
	if parent != nil {
		want = flux.NestedWant(parent.Source, want, srcRef, src)
	}
	gate = flux.Evaluate(ref, obj, want, src)
	if !ownSource && gate.Verdict != result.VerdictCurrent && !want.IsZero() {
		// Judged on the run's revision, its source only tells more when that is not Current
		// yet: the origin revision of an OCI artifact, a source that moved on.
		src, srcNote = s.source(e, srcRef)
		gate = flux.Evaluate(ref, obj, want, src)
	}
	if parent != nil && !parent.Applied {
		// Its owner has not applied the expected revision: its own spec may still change, and
		// an upgrade it runs now may be undone by it.
		gate.Applied, gate.Upgrading, gate.Installing = false, "", ""
	}
	switch {
	case ownSource && src != nil:
		// A nested object of another source must have applied what that source offers now,
		// once source-controller is done with it.
		srcNote = joinMessage(srcNote, s.settleSource(e, &gate, *src, parent.Source, ownerWant))
	case parent == nil && src != nil && !want.IsZero() && gate.Verdict == result.VerdictInProgress:
		// (A failure of the expected revision is the answer, whatever came after it.)
		if flux.Superseded(want, s.firstArtifact(srcRef.ID(), src.Revision), *src, gate.Attempting) {
			override(&gate, result.VerdictFailed, result.CodeFluxRevisionSuperseded, "Superseded", flux.SupersededMessage(want, *src))
		}
	}
	if ref.Kind == flux.KindHelmRelease && parent != nil && parent.Applied {
		srcNote = joinMessage(srcNote, s.settleValues(e, &gate, obj, parent, now))
	}
	if parent == nil && gate.Applied && (gate.Verdict == result.VerdictCurrent || want.Matches(gate.Attempting...)) {
		e.appliedRoots++
	}
	s.graceRetried(e, &gate, obj, now)
	s.noteAttempt(&gate, want, now)
	fo = gate.Object
	fo.Owner = owner
	fo.Message = joinMessage(fo.Message, srcNote)
	e.flux = append(e.flux, fo)
	// A failure that only says the workloads are not healthy (a Flux health check, a Helm
	// install, upgrade or test) waits for the workloads' own failure, which says why; it
	// counts when the classifier finds nothing more precise.
	var deferred *verdictReason
	switch gate.Verdict {
	case result.VerdictFailed:
		v := verdictReason{verdict: result.VerdictFailed, code: gate.Code, reason: fo.Reason, message: id + ": " + gate.Message}
		switch {
		case parent != nil && !parent.Applied:
			// Its owner has not applied the expected revision yet, which may change its spec
			// and fix what failed (a values fix for a broken release): the failure is of the
			// previous revision, so it waits, as the workloads do.
			e.wait(verdictReason{verdict: result.VerdictInProgress, code: gate.Code, reason: fo.Reason,
				message: id + ": " + gate.Message + " (before " + parent.Object.ID + " applied the expected revision)"})
		case gate.Applied && s.req.Workloads && !gate.Remote && workloadsExplain[gate.Code]:
			deferred = &v
		default:
			e.fail(v)
		}
	case result.VerdictSuspended:
		if parent != nil && !s.req.FailOnSuspended {
			// Suspended on purpose, as a team may a sub-Kustomization: reported, and what it
			// lists (whatever it last applied) is not verified. (Another object's dependsOn
			// may still judge it.)
			e.skippedSuspended = append(e.skippedSuspended, id)
			return
		}
		e.fail(verdictReason{verdict: result.VerdictSuspended, code: gate.Code, reason: "Suspended", message: id + ": " + gate.Message})
		return
	case result.VerdictInProgress:
		e.wait(verdictReason{verdict: result.VerdictInProgress, code: gate.Code, reason: fo.Reason, message: id + ": " + gate.Message})
		if gate.Code == result.CodeFluxDependencyNotReady && (parent == nil || parent.Applied) {
			// (Before its owner applied the expected revision, its dependsOn may change.)
			s.evalDependencies(e, id, gate, want, now, visited, roots)
		}
	}
	if deferred != nil {
		defer e.fail(*deferred)
	}
	if gate.Remote {
		// What it applied lives in another cluster: looking it up here would find nothing,
		// or a namesake.
		return
	}
	refs, ids, err := s.inventory(id, obj)
	if err != nil {
		e.wait(verdictReason{verdict: result.VerdictInProgress, reason: "InvalidInventory", message: id + ": " + err.Error()})
		return
	}
	if !s.req.Workloads {
		// Without the workloads, the Flux objects the inventory lists are still judged, as
		// flux tree walks them: a root that is Ready right after applying (no wait) says
		// nothing of a nested HelmRelease that failed its upgrade.
		for _, o := range refs {
			if kind, isFlux := flux.IsFluxKind(o.Group, o.Kind); isFlux {
				s.evalFlux(e, flux.Ref{Kind: kind, Namespace: o.Namespace, Name: o.Name}, &gate, want, now, visited, roots)
			}
		}
		return
	}
	switch {
	case gate.Installing != "":
		// What a previous release listed is gone or about to be: the install's own objects.
		var ok bool
		if refs, ok = s.installObjects(e, &gate, s.firstInstalling(id, gate.Installing, now)); !ok {
			return
		}
		ids = objectIDs(refs)
	case ref.Kind == flux.KindHelmRelease && !hasInventory(obj):
		var ok bool
		if refs, ok = s.releaseObjects(e, id, obj, now); !ok {
			return
		}
		ids = objectIDs(refs)
	}
	e.objects = slices.Grow(e.objects, len(refs))
	s.statuses.reserve(len(refs))
	for i, o := range refs {
		s.evalObject(e, o, ids[i], &gate, want, now, visited, roots)
	}
}

// workloadsExplain are the Flux failures that only say the workloads did not become healthy:
// when the classifier finds why, its failure is reported instead.
var workloadsExplain = map[result.Code]bool{
	result.CodeFluxHealthCheckFailed: true,
	result.CodeFluxInstallFailed:     true,
	result.CodeFluxUpgradeFailed:     true,
	result.CodeFluxTestFailed:        true,
}

// evalObject computes an inventory object's status with kstatus and, when it is a workload
// that is not Current yet, asks the classifier whether its rollout can still succeed.
// id is o.ID().
func (s *clusterState) evalObject(e *assessment, o flux.ObjectRef, id string, owner *flux.Gate, want flux.Revision, now time.Time, visited, roots map[string]bool) {
	// The inventory's objects may fail the rollout only once Flux has applied the expected
	// revision: before, they are the previous revision's, which the expected one may fix.
	current := owner.Applied
	ro := result.Object{ID: id, Group: o.Group, Version: o.Version, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Owner: owner.Object.ID, Status: result.ObjectUnknown}
	gvk := schema.GroupVersionKind{Group: o.Group, Version: o.Version, Kind: o.Kind}
	mapping, done, err := s.assessMapping(e, gvk, now)
	if !done {
		ro.Message = "discovering the API of " + gvk.Kind
		e.objects = append(e.objects, ro)
		if e.pending == nil {
			e.wait(verdictReason{verdict: result.VerdictInProgress, reason: "Discovering", message: ro.ID + ": " + ro.Message})
		}
		return
	}
	if err != nil {
		ro.Message = err.Error()
		e.objects = append(e.objects, ro)
		e.wait(verdictReason{verdict: result.VerdictInProgress, reason: "UnknownKind", message: ro.ID + ": " + err.Error()})
		e.recheckAt(now.Add(mappingRetry))
		return
	}
	ns := o.Namespace
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		// A Helm manifest read from the storage secret gives every object the release's
		// namespace; a cluster-scoped one has none.
		ns, ro.Namespace, ro.ID = "", "", result.ObjectID(o.Kind, "", o.Name)
	}
	w := s.watches.get(watchKey{gvr: mapping.Resource, namespace: ns})
	if !w.synced() {
		// (What the watch is, said only while it has no first list: a synced watch is ready
		// either way.)
		what := mapping.Resource.Resource + namespaceSuffix(ns)
		if gr := mapping.Resource.GroupResource(); metadataOnly[gr] || noReadiness[gr] {
			// A Secret or a ConfigMap has no status: it is Current once it exists, which
			// Flux's inventory already says; configuration, RBAC, CRDs, quotas and sources
			// have no rollout of their own. Credentials that may not read them (least
			// privilege) leave them unverified, not the cluster Forbidden.
			ready, forbidden := s.optionalWatchReady(e, w, what)
			if forbidden != "" {
				ro.Message = "not verified: " + forbidden
				e.objects = append(e.objects, ro)
				return
			}
			if !ready {
				ro.Message = "not listed yet"
				e.objects = append(e.objects, ro)
				e.listOnItsWay(w)
				return
			}
		} else if !s.watchReady(e, w, what) {
			ro.Message = "not listed yet"
			e.objects = append(e.objects, ro)
			e.listOnItsWay(w)
			return
		}
	}
	cached, ok := w.object(ns, o.Name)
	if !ok {
		done, failedJob, msg := jobGone(w, ns, o, owner, s.firstWorkedOn[owner.Object.ID])
		switch {
		case done:
			ro.Status, ro.Message = result.ObjectCurrent, msg
			e.objects = append(e.objects, ro)
		case failedJob != nil && current:
			ro.Status, ro.Message = result.ObjectFailed, "deleted after it failed (ttlSecondsAfterFinished)"
			e.objects = append(e.objects, ro)
			e.fail(verdictReason{verdict: result.VerdictFailed, code: result.CodeJobFailed, reason: "Failed", message: ro.ID + ": " + ro.Message})
		default:
			ro.Status, ro.Message = result.ObjectNotFound, "not found in the cluster"
			e.objects = append(e.objects, ro)
			e.wait(verdictReason{verdict: result.VerdictInProgress, reason: "NotFound", message: ro.ID + " not found"})
		}
		return
	}
	memo := s.statuses.status(cached, gvk)
	u := memo.u
	if !memo.ok {
		// Every kind the caches hold converts: this is a defect, said as one, never a pass.
		ro.Message = fmt.Sprintf("compute status: cannot read the cached %T", cached)
		e.objects = append(e.objects, ro)
		e.wait(verdictReason{verdict: result.VerdictInProgress, reason: string(result.ObjectUnknown), message: ro.ID + ": " + ro.Message})
		return
	}
	if memo.err != nil {
		ro.Message = memo.err.Error()
	} else {
		ro.Status, ro.Message = memo.status, memo.msg
	}

	if kind, isFlux := flux.IsFluxKind(o.Group, o.Kind); isFlux {
		e.objects = append(e.objects, ro)
		s.evalFlux(e, flux.Ref{Kind: kind, Namespace: o.Namespace, Name: o.Name}, owner, want, now, visited, roots)
		return
	}
	ro.Message = joinMessage(ro.Message, memo.ignoreNote)
	if keys := memo.notFromGitKeys; keys != "" {
		ro.Message = joinMessage(ro.Message, "annotations "+keys+" ignored: not applied by Flux (set them in Git)")
	}
	if memo.ignoreReadiness && ro.Status != result.ObjectCurrent {
		// The team said so in Git: reported as it is, neither waited for nor failed.
		ro.Message = joinMessage(ro.Message, ignoredReadiness)
		e.objects = append(e.objects, ro)
		return
	}
	installing := owner.Installing != ""
	if installing {
		// Created by Helm's install of the expected chart, which records nothing until its
		// wait is over: the new chart's, and may fail the rollout now.
		current = true
	}
	upgraded := s.updatedByUpgrade(owner, ro.ID, u) && !current
	if upgraded {
		// helm-controller records the release only once Helm's wait is over; Helm updated
		// this workload since the run first saw it, during the upgrade to the expected chart:
		// it is the new chart's, and may fail the rollout now.
		current = true
	}
	classified := true
	if ro.Status != result.ObjectCurrent && current && classify.Supported(o.Group, o.Kind) {
		if u == nil {
			// (A metadata-only kind is never one the classifier reads.)
			u, _ = asUnstructured(cached, gvk)
		}
		status := ro.Status
		classified = s.classify(e, &ro, u, now)
		switch {
		case upgraded && ro.Failure != nil:
			ro.Failure.Message += fmt.Sprintf(" (during Helm's upgrade of %s to %s, which waits for it)", owner.Object.ID, owner.Upgrading)
		case installing && ro.Failure != nil && recoversDuringInstall[ro.Failure.Code]:
			// A first install may crash until what the chart installs beside it (a
			// database, an operator) is up: Helm's own wait says.
			ro.Message = joinMessage(ro.Message, fmt.Sprintf("%s (%s), left to Helm's wait during the install of chart %s", ro.Failure.Code, ro.Failure.Reason, owner.Installing))
			ro.Failure, ro.Status = nil, status
		case installing && ro.Failure != nil:
			ro.Failure.Message += fmt.Sprintf(" (during Helm's install of %s, chart %s, which waits for it)", owner.Object.ID, owner.Installing)
		}
	}
	e.objects = append(e.objects, ro)
	switch {
	case ro.Failure != nil:
		e.fail(verdictReason{verdict: result.VerdictFailed, code: ro.Failure.Code, reason: ro.Failure.Reason, message: ro.ID + ": " + ro.Failure.Message})
	case ro.Status == result.ObjectFailed && current && classified && !installing:
		e.fail(verdictReason{verdict: result.VerdictFailed, reason: "Failed", message: ro.ID + ": " + ro.Message})
	case ro.Status != result.ObjectCurrent && e.pending == nil:
		// (Only the first reason to wait is kept: the message is not made for the others.)
		e.wait(verdictReason{verdict: result.VerdictInProgress, reason: string(ro.Status), message: waitingFor(ro)})
	}
}

// recoversDuringInstall are the failures of a workload that may still pass during a first
// install, as what the chart installs beside it comes up: they are left to Helm's wait.
var recoversDuringInstall = map[result.Code]bool{
	result.CodeCrashLoop: true, result.CodeOOM: true, result.CodeNotProgressing: true, result.CodeNeverReady: true,
}

// ignoredReadiness ends the message of a workload whose annotation says its readiness does not
// count.
const ignoredReadiness = "not verified (" + classify.AnnotationIgnoreReadiness + ")"

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
func (s *clusterState) watchReady(e *assessment, w cachedList, what string) bool {
	if w.synced() {
		return true
	}
	if err := w.err(); err != nil {
		if v, msg, ok := connectionVerdict(err, what); ok && v != result.VerdictUnreachable {
			e.fail(verdictReason{verdict: v, reason: string(v), message: msg})
			return false
		}
		e.wait(verdictReason{verdict: result.VerdictInProgress, reason: "ListFailed", message: fmt.Sprintf("listing %s: %s", what, apiMessage(err))})
	} else {
		if e.pending == nil {
			e.wait(verdictReason{verdict: result.VerdictInProgress, reason: "Listing", message: waitingMessage(w, what, s.req.Clock(), s.req.cpu)})
		}
		e.listing = true
	}
	e.syncing = true
	return false
}

// The objects the classifier reads besides the workload itself. Their watches hold typed
// objects, converted once when they arrive.
var (
	podsGVR      = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	rsGVR        = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	revisionsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}
	jobsGVR      = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}

	typedKinds = map[schema.GroupVersionResource]func(any) (any, error){
		podsGVR:      typedTransform[corev1.Pod](),
		rsGVR:        typedTransform[appsv1.ReplicaSet](),
		revisionsGVR: typedTransform[appsv1.ControllerRevision](),
		jobsGVR:      typedTransform[batchv1.Job](),
	}
)

// classifierReads lists, per workload kind, the kinds the classifier reads besides the
// workload itself; only those are watched, so credentials need only what the app's kinds need.
var classifierReads = map[schema.GroupKind][]schema.GroupVersionResource{
	{Group: "apps", Kind: "Deployment"}:  {rsGVR, podsGVR},
	{Group: "apps", Kind: "ReplicaSet"}:  {podsGVR},
	{Group: "apps", Kind: "StatefulSet"}: {podsGVR},
	{Group: "apps", Kind: "DaemonSet"}:   {revisionsGVR, podsGVR},
	{Group: "batch", Kind: "Job"}:        {podsGVR},
	{Group: "batch", Kind: "CronJob"}:    {jobsGVR, podsGVR},
	{Group: "", Kind: "Pod"}:             nil,
}

// classify runs the rollout classifier on a workload that is not Current. What it reads is
// optional: when the credentials may not list it, the workload is only judged by its kstatus
// status, and its message says what could not be read. It returns false while what it reads
// is still being listed: a kstatus failure then waits for the precise one (a Job Failed waits
// for its pods, which name the backoff limit and the logs).
func (s *clusterState) classify(e *assessment, ro *result.Object, u *unstructured.Unstructured, now time.Time) bool {
	ns := ro.Namespace
	in := classify.Input{Workload: u, Now: now}
	for _, gvr := range classifierReads[schema.GroupKind{Group: ro.Group, Kind: ro.Kind}] {
		w := s.watches.get(watchKey{gvr: gvr, namespace: ns})
		ready, forbidden := s.optionalWatchReady(e, w, gvr.Resource+namespaceSuffix(ns))
		if forbidden != "" {
			ro.Message = joinMessage(ro.Message, "rollout failures not classified: "+forbidden)
			return true
		}
		if !ready {
			if err := w.err(); err != nil || s.req.Snapshot {
				// A list that fails (or a snapshot, which lists once) leaves the workload to
				// its kstatus status.
				ro.Message = joinMessage(ro.Message, "rollout failures not classified: "+gvr.Resource+" not listed")
				return true
			}
			return false
		}
		switch gvr {
		case podsGVR:
			in.Pods = listOf[corev1.Pod](w)
		case rsGVR:
			in.ReplicaSets = listOf[appsv1.ReplicaSet](w)
		case revisionsGVR:
			in.Revisions = listOf[appsv1.ControllerRevision](w)
		case jobsGVR:
			in.Jobs = listOf[batchv1.Job](w)
		}
	}
	opts, notes := s.req.Classify.ForObject(u.GetAnnotations())
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
	}
	return true
}

// optionalWatchReady is watchReady for what the verdict can do without: a list the
// credentials may not make (403) is not the cluster's verdict but a note, returned as
// forbidden, saying what to grant.
func (s *clusterState) optionalWatchReady(e *assessment, w cachedList, what string) (ready bool, forbidden string) {
	if w.synced() {
		return true, ""
	}
	if err := w.err(); err != nil && apierrors.IsForbidden(err) {
		return false, fmt.Sprintf("the credentials may not list %s (403); grant get, list and watch on it for a precise reason", what)
	}
	return s.watchReady(e, w, what), ""
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

// typedTransform returns an informer transform that converts unstructured objects to *T once, when
// they arrive, so evaluations read typed objects without converting again.
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

func listOf[T any](w cachedList) []*T {
	items := w.list()
	out := make([]*T, 0, len(items))
	for _, it := range items {
		if t, ok := it.(*T); ok {
			out = append(out, t)
		}
	}
	return out
}

// parsedInventory is a Flux object's inventory as parsed at one resourceVersion.
type parsedInventory struct {
	resourceVersion string
	refs            []flux.ObjectRef
	// ids are the refs' IDs, made once per parse rather than once per object and assessment.
	ids []string
	err error
}

// inventory returns the object's parsed inventory and its objects' IDs, parsing it again only
// when the object changed.
func (s *clusterState) inventory(id string, obj *unstructured.Unstructured) ([]flux.ObjectRef, []string, error) {
	rv := obj.GetResourceVersion()
	if p, ok := s.inventories[id]; ok && rv != "" && p.resourceVersion == rv {
		return p.refs, p.ids, p.err
	}
	refs, ids, err := flux.InventoryIDs(obj)
	s.inventories[id] = parsedInventory{resourceVersion: rv, refs: refs, ids: ids, err: err}
	return refs, ids, err
}

// objectIDs are the refs' IDs, in their order.
func objectIDs(refs []flux.ObjectRef) []string {
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID()
	}
	return ids
}
