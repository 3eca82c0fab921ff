package assess

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
	"k8s.io/apimachinery/pkg/runtime/schema"

	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// listOnItsWay records w, a list of an inventory's kind with no first list, in InFlight
// while its first list is on its way (not failed).
func (e *Assessment) listOnItsWay(w List) {
	if w.Err() == nil && !slices.Contains(e.InFlight, w) {
		e.InFlight = append(e.InFlight, w)
	}
}

// list returns the list of key from the view; one never asked for is a need, and reads as a
// list on its way that holds nothing.
func (a *assessor) list(key ListKey) List {
	if l, ok := a.view.List(key); ok && l != nil {
		return l
	}
	a.e.need(key)
	return notAsked{since: a.now}
}

// notAsked is a list the view has not asked for yet.
type notAsked struct{ since time.Time }

func (notAsked) Synced() bool                               { return false }
func (notAsked) Err() error                                 { return nil }
func (n notAsked) WaitingSince() time.Time                  { return n.since }
func (notAsked) Object(string, string) (any, bool)          { return nil, false }
func (notAsked) Items() []any                               { return nil }
func (notAsked) Gone(string, string) (any, time.Time, bool) { return nil, time.Time{}, false }
func (notAsked) Noted(string, string) time.Time             { return time.Time{} }

// assessMapping is what discovery answered for a kind, asked of the view once per kind in an
// assessment, however many objects of that kind the inventories list. A kind not mapped yet,
// or whose mapping failed, is a need (asked again once its last read is MappingRetry old: the
// fetching side keeps that time).
func (a *assessor) assessMapping(e *Assessment, gvk schema.GroupVersionKind) Mapping {
	if m, ok := e.mappings[gvk]; ok {
		return m
	}
	var m Mapping
	if gvk.Version == "" {
		// Flux's inventories and Helm's manifests name every object's version; this one
		// names none, and a kind is served per version.
		m = Mapping{Done: true, Err: fmt.Errorf("the inventory gives %s no API version", gvk.GroupKind())}
	} else {
		m = a.view.Mapping(gvk)
		if !m.Done || m.Err != nil {
			e.need(gvk)
		}
	}
	if e.mappings == nil {
		e.mappings = map[schema.GroupVersionKind]Mapping{}
	}
	e.mappings[gvk] = m
	return m
}

// assess computes the cluster's state from the view. The whole tree's inventories are read
// first (treeInventories), so that no judgement depends on the order of the walk.
func (a *assessor) assess() *Assessment {
	e := &Assessment{Objects: make([]result.Object, 0, a.mem.lastObjects)}
	a.e = e
	now := a.now
	defer func() { a.mem.lastObjects = len(e.Objects) }()
	a.mem.statuses.turn()
	a.tree = a.treeInventories()
	// Every requested resource is a root, judged on the run's revision, whatever the order
	// they were given in and whether another one's inventory lists it too: met as a nested
	// object, it is left for its own turn as a root (judged "at whatever it last applied"
	// there, a requested HelmRelease still on the previous chart would pass).
	visited := map[string]bool{}
	roots := map[string]bool{}
	for _, ref := range a.spec.Resources {
		roots[ref.ID()] = true
	}
	for _, ref := range a.spec.Resources {
		a.evalFlux(e, ref, nil, a.spec.Revision, now, visited, roots)
	}
	e.RootsApplied = !a.spec.Revision.IsZero() && e.appliedRoots == len(a.spec.Resources)
	if e.Fatal == nil && e.Pending == nil && e.Needs.Empty() && !e.Syncing && len(e.Unconfirmed) > 0 {
		// Current on what was read, but not on a consistent read: said once it is.
		e.AwaitsConsistentRead = true
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "Confirming",
			Message: fmt.Sprintf("confirming on a consistent read of %s", fewKeys(e.Unconfirmed))})
	}
	if !e.Needs.Empty() {
		// What was never asked for is not listed yet: nothing is Current without it.
		e.Syncing = true
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "Listing", Message: "reading the app's objects", Progress: ProgressStep})
	}
	slices.SortStableFunc(e.Objects, func(a, b result.Object) int {
		return cmp.Or(strings.Compare(a.Owner, b.Owner), strings.Compare(a.ID, b.ID))
	})
	return e
}

// consistency: a Current verdict rests on objects read no earlier than the Flux status that
// says applied. A Kustomization without wait is Ready on revision B a few milliseconds after
// kustomize-controller's server-side apply returns; a view whose Deployment was read before
// that status (a watch stream delivered later than the Kustomization's, or a list made
// before) may hold its previous generation, rolled out, and would pass. So every object
// judged, every nested Flux object and a nested object's own source must come from that very
// list (one list is one moment, one watch stream one ordered history) or from a Snapshot that
// holds the cluster as of the owner's status or later: its revision at least the owner
// object's resourceVersion (both etcd revisions of the same API server), or, where they do
// not compare, a list requested after the owner's list returned (Ordered). By induction down the tree, every object
// judged was read after every Flux status above it said applied. What cannot prove it (a
// watch, an owner not read) is Unconfirmed: the fetching side reads it again as a Snapshot.
func (a *assessor) consistent(key ListKey, l List, ownerID string) {
	if owner, known := a.fluxLists[ownerID]; !known || !readAfter(l, owner, a.fluxRevisions[ownerID]) {
		a.unconfirmed(key)
	}
}

// readAfter reports whether l holds the cluster as of the moment owner, the list an object
// was read from at resourceVersion ownerRV, held it, or later: l is owner itself, a Snapshot
// whose revision is at least ownerRV, or, where they do not compare, a list requested after
// owner's returned.
func readAfter(l, owner List, ownerRV string) bool {
	if owner == l {
		return true
	}
	if snap, ok := l.(Snapshot); ok {
		if c, err := resourceversion.CompareResourceVersion(snap.Revision(), ownerRV); err == nil {
			return c >= 0
		}
	}
	lo, ok := l.(Ordered)
	oo, ownerOK := owner.(Ordered)
	if !ok || !ownerOK {
		return false
	}
	sent, _ := lo.ReadOrder()
	_, done := oo.ReadOrder()
	return sent >= done
}

// unconfirmed records key as a list to read again, once.
func (a *assessor) unconfirmed(key ListKey) {
	if !slices.Contains(a.e.Unconfirmed, key) {
		a.e.Unconfirmed = append(a.e.Unconfirmed, key)
	}
}

// readFrom records that the Flux object id was read from w, as obj (consistency).
func (a *assessor) readFrom(id string, w List, obj *unstructured.Unstructured) {
	if a.fluxLists == nil {
		a.fluxLists, a.fluxRevisions = map[string]List{}, map[string]string{}
	}
	a.fluxLists[id], a.fluxRevisions[id] = w, obj.GetResourceVersion()
}

// fewKeys names up to three lists, and how many more.
func fewKeys(keys []ListKey) string {
	var names []string
	for _, k := range keys {
		n := k.GVR.Resource
		if k.Namespace != "" {
			n += " in " + k.Namespace
		}
		names = append(names, n)
	}
	if len(names) > 3 {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
	}
	return strings.Join(names, ", ")
}

// treeInventories reads, before anything is judged, every inventory of the tree under the
// requested objects (Flux objects nested at any depth, whatever their kind and order), as far
// as the view holds them: what the tree applies (a HelmRelease's values in a sibling
// Kustomization) is known before any object is judged against it. A Flux object the view does
// not hold yet leaves its subtree out, and the walk then waits for it anyway.
func (a *assessor) treeInventories() map[string][]flux.ObjectRef {
	tree := map[string][]flux.ObjectRef{}
	queue := slices.Clone(a.spec.Resources)
	for len(queue) > 0 {
		ref := queue[0]
		queue = queue[1:]
		id := ref.ID()
		if _, seen := tree[id]; seen {
			continue
		}
		tree[id] = nil
		w := a.list(ListKey{GVR: ref.Kind.GroupVersionResource(), Namespace: ref.Namespace})
		if !w.Synced() {
			continue
		}
		cached, _ := w.Object(ref.Namespace, ref.Name)
		obj, ok := cached.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		// (Known before the walk reaches it: what a sibling lists is judged against it.)
		a.readFrom(id, w, obj)
		if flux.IsRemote(obj) {
			continue
		}
		refs, _, err := a.inventory(id, obj)
		if err != nil {
			continue
		}
		tree[id] = refs
		for _, o := range refs {
			if kind, isFlux := flux.IsFluxKind(o.Group, o.Kind); isFlux {
				queue = append(queue, flux.Ref{Kind: kind, Namespace: o.Namespace, Name: o.Name})
			}
		}
	}
	return tree
}

// evalFlux evaluates a Flux object and what its inventory lists: every object when workloads
// are verified, the Flux objects alone otherwise.
func (a *assessor) evalFlux(e *Assessment, ref flux.Ref, parent *flux.Gate, want flux.Revision, now time.Time, visited, roots map[string]bool) {
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

	fluxKey := ListKey{GVR: ref.Kind.GroupVersionResource(), Namespace: ref.Namespace}
	w := a.list(fluxKey)
	if !a.watchReady(e, w, string(ref.Kind)+" in namespace "+ref.Namespace) {
		fo.Message = "not listed yet"
		e.Flux = append(e.Flux, fo)
		return
	}
	if parent != nil {
		a.consistent(fluxKey, w, parent.Object.ID)
	}
	cached, ok := w.Object(ref.Namespace, ref.Name)
	obj, isU := cached.(*unstructured.Unstructured)
	if isU {
		a.readFrom(id, w, obj)
	}
	if !ok || !isU {
		fo.Verdict = result.VerdictNotFound
		fo.Message = id + " not found"
		e.Flux = append(e.Flux, fo)
		if owner == "" {
			e.NotFound = true
		}
		e.wait(Finding{Verdict: result.VerdictNotFound, Reason: "NotFound", Message: id + " not found"})
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
		src, srcNote = a.source(e, srcRef)
		if gvr, ok := srcRef.GroupVersionResource(); ok && src != nil {
			// What it must apply is what its source offers as of its own status, or later.
			key := ListKey{GVR: gvr, Namespace: srcRef.Namespace}
			a.consistent(key, a.list(key), id)
		}
	}
	ownerWant := want
	if parent != nil {
		// (Generated by a ResourceSet whose inputs do not carry the expected revision: one
		// of its generated objects must have applied it, generatedWaits; each applies what
		// its own source offers.)
		want = flux.NestedWant(parent.Source, want, srcRef, src)
	}
	gate = flux.Evaluate(ref, obj, want, src)
	supersededAfterApply := false
	if !ownSource && gate.Verdict != result.VerdictCurrent {
		// Judged on the run's revision, its source only tells more when that is not Current
		// yet: the origin revision of an OCI artifact, a source that moved on, a source
		// source-controller stalled on.
		src, srcNote = a.source(e, srcRef)
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
		srcNote = joinMessage(srcNote, a.settleSource(e, &gate, *src, parent.Source, ownerWant))
	case parent == nil && src != nil && !want.IsZero() && gate.Verdict == result.VerdictInProgress:
		// (A failure of the expected revision is the answer, whatever came after it.)
		first := a.firstArtifact(srcRef.ID(), src.Revision)
		switch {
		case gate.HasApplied && flux.MovedOn(want, *src, gate.Attempting):
			// Flux applied it (lastAppliedRevision) before it started the artifact it works
			// on now: done, as Flux said, whether or not the run saw the source move; what
			// the inventory lists is the newer revision's now.
			override(&gate, result.VerdictCurrent, "", "Superseded", flux.SupersededAfterApplyMessage(want, *src))
			supersededAfterApply = true
		case flux.Superseded(want, first, *src, gate.Attempting):
			override(&gate, result.VerdictFailed, result.CodeFluxRevisionSuperseded, "Superseded", flux.SupersededMessage(want, *src))
		}
	}
	if !ownSource {
		// Of the run's revision, or its owner's: a source stalled short of it will not
		// fetch it (a nested object of another source is settleSource's).
		a.sourceStalled(e, &gate, src, want)
	}
	if ref.Kind == flux.KindHelmRelease && parent != nil && parent.Applied {
		srcNote = joinMessage(srcNote, a.settleValues(e, &gate, obj, parent, now))
	}
	if gate.GeneratedWant && gate.Verdict == result.VerdictCurrent {
		// Ready says it applied what it rendered, which its inputs do not tie to the
		// expected revision: one of the Flux objects it generated must have applied it.
		if msg := a.generatedWaits(e, ref, obj, want); msg != "" {
			override(&gate, result.VerdictInProgress, "", "RevisionNotApplied", msg)
			gate.Applied = false
		}
	}
	if parent == nil && gate.Applied && (gate.Verdict == result.VerdictCurrent || want.Matches(gate.Attempting...)) {
		e.appliedRoots++
	}
	a.awaitGeneration(e, &gate, now)
	a.graceRetried(e, &gate, obj, now)
	a.noteAttempt(&gate, want, now)
	fo = gate.Object
	fo.Owner = owner
	fo.Message = joinMessage(fo.Message, srcNote)
	e.Flux = append(e.Flux, fo)
	if supersededAfterApply {
		return
	}
	// A failure that only says the workloads are not healthy (a Flux health check, a Helm
	// install, upgrade or test) waits for the workloads' own failure, which says why; it
	// counts when the classifier finds nothing more precise.
	var deferred *Finding
	switch gate.Verdict {
	case result.VerdictFailed:
		v := Finding{Verdict: result.VerdictFailed, Code: gate.Code, Reason: fo.Reason, Message: id + ": " + gate.Message}
		switch {
		case parent != nil && !parent.Applied:
			// Its owner has not applied the expected revision yet, which may change its spec
			// and fix what failed (a values fix for a broken release): the failure is of the
			// previous revision, so it waits, as the workloads do.
			e.wait(Finding{Verdict: result.VerdictInProgress, Code: gate.Code, Reason: fo.Reason,
				Message: id + ": " + gate.Message + " (before " + parent.Object.ID + " applied the expected revision)"})
		case (gate.Applied || ref.Kind == flux.KindResourceSet) && (a.spec.Workloads || ref.Kind == flux.KindResourceSet) && !gate.Remote && workloadsExplain[gate.Code]:
			// (A ResourceSet's failed wait is for the Flux objects it generated, judged
			// with or without the workloads: theirs says why; a wait of a step before the
			// last, its previous objects still listed, as well.)
			deferred = &v
		default:
			e.fail(v)
		}
	case result.VerdictSuspended:
		if parent != nil && !a.spec.FailOnSuspended {
			// Suspended on purpose, as a team may a sub-Kustomization: reported, and what it
			// lists (whatever it last applied) is not verified. (Another object's dependsOn
			// may still judge it.)
			e.SkippedSuspended = append(e.SkippedSuspended, id)
			return
		}
		e.fail(Finding{Verdict: result.VerdictSuspended, Code: gate.Code, Reason: "Suspended", Message: id + ": " + gate.Message})
		return
	case result.VerdictInProgress:
		v := Finding{Verdict: result.VerdictInProgress, Code: gate.Code, Reason: fo.Reason, Message: id + ": " + gate.Message}
		if gate.Working() {
			v.Progress = ProgressPhase
		}
		e.wait(v)
		if gate.Code == result.CodeFluxDependencyNotReady && (parent == nil || parent.Applied) {
			// (Before its owner applied the expected revision, its dependsOn may change.)
			a.evalDependencies(e, id, gate, want, now, visited, roots)
		}
	}
	if deferred != nil {
		defer a.failOrAwaitHealthRetry(e, id, &gate, *deferred, now)
	}
	if gate.Remote {
		// What it applied lives in another cluster: looking it up here would find nothing,
		// or a namesake.
		return
	}
	refs, ids, err := a.inventory(id, obj)
	if err != nil {
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "InvalidInventory", Message: id + ": " + err.Error()})
		return
	}
	if !a.spec.Workloads {
		// Without the workloads, the Flux objects the inventory lists are still judged, as
		// flux tree walks them: a root that is Ready right after applying (no wait) says
		// nothing of a nested HelmRelease that failed its upgrade.
		for _, o := range refs {
			if kind, isFlux := flux.IsFluxKind(o.Group, o.Kind); isFlux {
				a.evalFlux(e, flux.Ref{Kind: kind, Namespace: o.Namespace, Name: o.Name}, &gate, want, now, visited, roots)
			}
		}
		return
	}
	switch {
	case gate.Installing != "":
		// What a previous release listed is gone or about to be: the install's own objects.
		var ok bool
		if refs, ok = a.installObjects(e, &gate, a.firstInstalling(id, gate.Installing, now)); !ok {
			return
		}
		ids = objectIDs(refs)
	case ref.Kind == flux.KindHelmRelease && !hasInventory(obj):
		var ok bool
		if refs, ok = a.releaseObjects(e, id, obj, now); !ok {
			return
		}
		ids = objectIDs(refs)
	}
	if exprs := a.healthExprs(id, ref.Kind, obj); exprs != nil {
		if a.exprs == nil {
			a.exprs = map[string]*compiledExprs{}
		}
		a.exprs[id] = exprs
	}
	e.Objects = slices.Grow(e.Objects, len(refs))
	a.mem.statuses.reserve(len(refs))
	for i, o := range refs {
		a.evalObject(e, o, ids[i], &gate, want, now, visited, roots)
	}
}

// failOrAwaitHealthRetry reports a deferred Flux failure once the inventory's objects are
// judged. Failed health checks of a Kustomization (or the failed wait of a ResourceSet, whose
// flux-operator retries with a backoff: flux.Gate.RetryEvery) are not final while none of its objects has
// failed: kustomize-controller runs them again at its next retry (spec.retryInterval, else
// spec.interval), and turns Ready if the objects are Current by then (a Deployment that
// became ready after spec.timeout). They wait until the retry after the first failure the run
// saw is due, with a margin for its jitter and the checks' own time, and fail then if Flux
// still says so.
func (a *assessor) failOrAwaitHealthRetry(e *Assessment, id string, gate *flux.Gate, failure Finding, now time.Time) {
	if gate.Code != result.CodeFluxHealthCheckFailed || gate.FailedAt.IsZero() || gate.RetryEvery <= 0 || e.Fatal != nil {
		e.fail(failure)
		return
	}
	listed, current := 0, 0
	for _, o := range e.Objects {
		if o.Owner != id {
			continue
		}
		if o.Status == result.ObjectFailed {
			e.fail(failure)
			return
		}
		listed++
		if o.Status == result.ObjectCurrent {
			current++
		}
	}
	for _, f := range e.Flux {
		// (The Flux objects it lists, judged as Flux objects: without the workloads, all
		// that is judged of a ResourceSet's.)
		if f.Owner != id {
			continue
		}
		if f.Verdict == result.VerdictFailed {
			e.fail(failure)
			return
		}
		if !a.spec.Workloads {
			listed++
			if f.Verdict == result.VerdictCurrent {
				current++
			}
		}
	}
	if a.mem.healthFailedAt == nil {
		a.mem.healthFailedAt = map[string]time.Time{}
	}
	key := id + "|" + gate.Object.LastAttemptedRevision
	first, ok := a.mem.healthFailedAt[key]
	if !ok || gate.FailedAt.Before(first) {
		first, a.mem.healthFailedAt[key] = gate.FailedAt, gate.FailedAt
	}
	next := first.Add(gate.RetryEvery + gate.RetryEvery/10 + 30*time.Second)
	if listed == 0 || !now.Before(next) {
		e.fail(failure)
		return
	}
	retry := "kustomize-controller checks them again by %s (spec.retryInterval, else spec.interval)"
	if gate.Object.Kind == string(flux.KindResourceSet) {
		retry = flux.FluxOperator + " retries with a backoff and waits for them again by %s (its step's timeout, else the fluxcd.controlplane.io/reconcileTimeout annotation, else 5m)"
	}
	message := fmt.Sprintf("its health checks failed at %s, %d of the %d objects it lists are Current now, and none failed: "+retry+", and fails then if it still fails: %s",
		first.UTC().Format(time.RFC3339), current, listed, next.UTC().Format(time.RFC3339), gate.Message)
	for i := range e.Flux {
		if e.Flux[i].ID == id {
			e.Flux[i].Verdict, e.Flux[i].Message = result.VerdictInProgress, message
		}
	}
	e.wait(Finding{Verdict: result.VerdictInProgress, Code: gate.Code, Reason: failure.Reason, Message: id + ": " + message})
	e.recheckAt(next)
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
func (a *assessor) evalObject(e *Assessment, o flux.ObjectRef, id string, owner *flux.Gate, want flux.Revision, now time.Time, visited, roots map[string]bool) {
	// The inventory's objects may fail the rollout only once Flux has applied the expected
	// revision: before, they are the previous revision's, which the expected one may fix.
	current := owner.Applied
	ro := result.Object{ID: id, Group: o.Group, Version: o.Version, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Owner: owner.Object.ID, Status: result.ObjectUnknown}
	gvk := schema.GroupVersionKind{Group: o.Group, Version: o.Version, Kind: o.Kind}
	answer := a.assessMapping(e, gvk)
	mapping, done, err := answer.Mapping, answer.Done, answer.Err
	if !done {
		ro.Message = "discovering the API of " + gvk.Kind
		e.Objects = append(e.Objects, ro)
		if e.Pending == nil {
			e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "Discovering", Message: ro.ID + ": " + ro.Message, Progress: ProgressStep})
		}
		return
	}
	if err != nil {
		ro.Message = err.Error()
		e.Objects = append(e.Objects, ro)
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "UnknownKind", Message: ro.ID + ": " + err.Error()})
		e.recheckAt(now.Add(MappingRetry))
		return
	}
	ns := o.Namespace
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		// A Helm manifest read from the storage secret gives every object the release's
		// namespace; a cluster-scoped one has none.
		ns, ro.Namespace, ro.ID = "", "", result.ObjectID(o.Kind, "", o.Name)
	}
	objKey := ListKey{GVR: mapping.Resource, Namespace: ns}
	w := a.list(objKey)
	if w.Synced() {
		a.consistent(objKey, w, owner.Object.ID)
	} else {
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
				e.Objects = append(e.Objects, ro)
				return
			}
			if !ready {
				ro.Message = "not listed yet"
				e.Objects = append(e.Objects, ro)
				e.listOnItsWay(w)
				return
			}
		} else if !a.watchReady(e, w, what) {
			ro.Message = "not listed yet"
			e.Objects = append(e.Objects, ro)
			e.listOnItsWay(w)
			return
		}
	}
	cached, ok := w.Object(ns, o.Name)
	if !ok {
		done, failedJob, msg := jobGone(w, ns, o, owner, a.mem.firstWorkedOn[owner.Object.ID])
		switch {
		case done:
			ro.Status, ro.Message = result.ObjectCurrent, msg
			e.Objects = append(e.Objects, ro)
		case failedJob != nil && current:
			ro.Status, ro.Message = result.ObjectFailed, "deleted after it failed (ttlSecondsAfterFinished)"
			e.Objects = append(e.Objects, ro)
			e.fail(Finding{Verdict: result.VerdictFailed, Code: result.CodeJobFailed, Reason: "Failed", Message: ro.ID + ": " + ro.Message})
		default:
			ro.Status, ro.Message = result.ObjectNotFound, "not found in the cluster"
			e.Objects = append(e.Objects, ro)
			e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "NotFound", Message: ro.ID + " not found"})
		}
		return
	}
	memo := a.mem.statuses.status(cached, gvk, a.spec.Health, a.exprs[owner.Object.ID])
	u := memo.u
	if !memo.ok {
		// Every kind the caches hold converts: this is a defect, said as one, never a pass.
		ro.Message = fmt.Sprintf("compute status: cannot read the cached %T", cached)
		e.Objects = append(e.Objects, ro)
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: string(result.ObjectUnknown), Message: ro.ID + ": " + ro.Message})
		return
	}
	if memo.err != nil {
		ro.Message = memo.err.Error()
	} else {
		ro.Status, ro.Message = memo.status, memo.msg
	}

	if kind, isFlux := flux.IsFluxKind(o.Group, o.Kind); isFlux {
		e.Objects = append(e.Objects, ro)
		a.evalFlux(e, flux.Ref{Kind: kind, Namespace: o.Namespace, Name: o.Name}, owner, want, now, visited, roots)
		return
	}
	if src, isSource := flux.InventorySource(o); isSource && u != nil && ro.Status != result.ObjectTerminating {
		// A Flux source is judged as source-controller serves it, not by kstatus: one whose
		// next fetch fails keeps Reconciling=True while what applies from it goes on.
		read := flux.ReadSource(src, u)
		var (
			upstream *flux.Source
			note     string
			reading  bool
		)
		if read.Stalled {
			// Whether a stalled HelmChart may heal, its repository says (flux.IndexWait).
			upstream, note, reading = a.chartUpstream(e, read)
		}
		status, code, msg, until := flux.Serving(read, upstream, now)
		if reading && read.Stalled {
			status, code, msg = result.ObjectInProgress, "", "stalled; reading its source, which says whether it may heal: "+read.Message
		}
		e.recheckAt(until)
		ro.Status, ro.Message = status, sanitize.Compact(joinMessage(msg, note))
		if status == result.ObjectFailed && current {
			ro.Failure = &result.Failure{Code: code, Reason: "Stalled", Message: ro.Message}
		}
	}
	ro.Message = joinMessage(ro.Message, memo.ignoreNote)
	if keys := memo.notFromGitKeys; keys != "" {
		ro.Message = joinMessage(ro.Message, "annotations "+keys+" ignored: not applied by Flux (set them in Git)")
	}
	if memo.ignoreReadiness && ro.Status != result.ObjectCurrent {
		// The team said so in Git: reported as it is, neither waited for nor failed.
		ro.Message = joinMessage(ro.Message, IgnoredReadiness)
		e.Objects = append(e.Objects, ro)
		return
	}
	var byCanary *canaryJudgement
	if u != nil && ro.Status != result.ObjectTerminating {
		j, judged, ok := a.canaryJudgement(e, o, u, owner.Object.ID, &ro)
		if !ok {
			ro.Status, ro.Message = result.ObjectUnknown, joinMessage("not listed yet", ro.Message)
			e.Objects = append(e.Objects, ro)
			return
		}
		if judged {
			byCanary = &j
		}
	}
	installing := owner.Installing != ""
	if installing {
		// Created by Helm's install of the expected chart, which records nothing until its
		// wait is over: the new chart's, and may fail the rollout now.
		current = true
	}
	upgraded := a.updatedByUpgrade(owner, ro.ID, u) && !current
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
			u, _ = AsUnstructured(cached, gvk)
		}
		status := ro.Status
		classified = a.classify(e, &ro, u, objKey, w, now)
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
	if byCanary != nil && ro.Failure == nil {
		// (A failure the classifier found in the target's own pods stands: Flagger fails the
		// analysis of a crashing revision only at its deadline.)
		judgedByCanary(&ro, *byCanary, current)
	}
	e.Objects = append(e.Objects, ro)
	switch {
	case ro.Failure != nil:
		e.fail(Finding{Verdict: result.VerdictFailed, Code: ro.Failure.Code, Reason: ro.Failure.Reason, Message: ro.ID + ": " + ro.Failure.Message})
	case ro.Status == result.ObjectFailed && current && classified && !installing:
		e.fail(Finding{Verdict: result.VerdictFailed, Reason: "Failed", Message: ro.ID + ": " + ro.Message})
	case ro.Status != result.ObjectCurrent && e.Pending == nil:
		// (Only the first reason to wait is kept: the message is not made for the others.)
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: string(ro.Status), Message: waitingFor(ro)})
	}
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
		if x := a.view.Explain(err, what); x.Known && x.Verdict != result.VerdictUnreachable {
			e.fail(Finding{Verdict: x.Verdict, Reason: string(x.Verdict), Message: x.Message})
			return false
		}
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "ListFailed", Message: fmt.Sprintf("listing %s: %s", what, a.view.Explain(err, what).Detail)})
	} else {
		if e.Pending == nil {
			e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "Listing", Message: a.view.WaitingMessage(w, what, a.now), Progress: ProgressStep})
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
		if !readAfter(w, wl, u.GetResourceVersion()) {
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
func (a *assessor) inventory(id string, obj *unstructured.Unstructured) ([]flux.ObjectRef, []string, error) {
	rv := obj.GetResourceVersion()
	if p, ok := a.mem.inventories[id]; ok && rv != "" && p.resourceVersion == rv {
		return p.refs, p.ids, p.err
	}
	refs, ids, err := flux.InventoryIDs(obj)
	a.mem.inventories[id] = parsedInventory{resourceVersion: rv, refs: refs, ids: ids, err: err}
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

// generatedWaits says why a ResourceSet whose inputs do not carry the expected revision
// (Gate.GeneratedWant) has not brought it yet, or "" once one of the Flux objects it generated
// (its inventory) has applied it. Its Ready says nothing of the revision: inputs from
// providers (spec.inputsFrom) are not read, and a provider that has not exported yet leaves
// it Ready on zero inputs with an empty inventory.
func (a *assessor) generatedWaits(e *Assessment, ref flux.Ref, obj *unstructured.Unstructured, want flux.Revision) string {
	if flux.ResourceSetWithoutInputs(obj) {
		return fmt.Sprintf("its input providers (spec.inputsFrom) gave it no inputs at its last reconcile (status.history): it generated nothing that applies %s yet", want)
	}
	refs, _, err := a.inventory(ref.ID(), obj)
	if err != nil {
		return err.Error()
	}
	generated := 0
	for _, o := range refs {
		kind, isFlux := flux.IsFluxKind(o.Group, o.Kind)
		if !isFlux {
			continue
		}
		generated++
		w := a.list(ListKey{GVR: kind.GroupVersionResource(), Namespace: o.Namespace})
		if !w.Synced() {
			continue
		}
		cached, _ := w.Object(o.Namespace, o.Name)
		child, ok := cached.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		src, _ := a.source(e, flux.SourceOf(kind, child))
		if flux.Evaluate(flux.Ref{Kind: kind, Namespace: o.Namespace, Name: o.Name}, child, want, src).HasApplied {
			return ""
		}
	}
	if generated == 0 {
		return fmt.Sprintf("no inline input (spec.inputs) carries %s and it generated no Kustomization or HelmRelease that could apply it: "+
			"nothing says the revision is applied (inputs from providers are not read)", want)
	}
	return fmt.Sprintf("none of the %d Flux objects it generated has applied %s yet (no inline input carries it)", generated, want)
}
