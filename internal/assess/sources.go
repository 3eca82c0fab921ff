package assess

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// source reads the Flux source ref names from its watch. It returns nil while the source's
// list is on its way (the assessment then waits for it), when the credentials may not read it
// (note says so: the object is then judged without it) and for kinds that are not sources.
// A source that does not exist reads as one with no artifact.
func (a *assessor) source(e *Assessment, ref flux.SourceRef) (src *flux.Source, note string) {
	gvr, ok := ref.GroupVersionResource()
	if !ok || ref.Name == "" {
		return nil, ""
	}
	w := a.list(ListKey{GVR: gvr, Namespace: ref.Namespace})
	if err := w.Err(); err != nil && !w.Synced() && apierrors.IsNotFound(err) {
		return nil, "not compared with its source " + ref.ID() + ": the cluster does not serve " + gvr.Resource
	}
	ready, forbidden := a.optionalWatchReady(e, w, gvr.Resource+namespaceSuffix(ref.Namespace))
	if forbidden != "" {
		return nil, "not compared with its source " + ref.ID() + ": " + forbidden
	}
	if !ready {
		return nil, ""
	}
	cached, _ := w.Object(ref.Namespace, ref.Name)
	obj, ok := cached.(*unstructured.Unstructured)
	if !ok {
		// Flux reports a missing source itself (Ready=False), which the gate reads.
		return nil, ""
	}
	read := flux.ReadSource(ref, obj)
	return &read, ""
}

// firstArtifact returns the source as the run first saw it with an artifact, recording src
// when it is the first.
func (a *assessor) firstArtifact(src flux.Source) flux.Source {
	id := src.Ref.ID()
	if a.mem.firstArtifacts == nil {
		a.mem.firstArtifacts = map[string]flux.Source{}
	}
	if first, ok := a.mem.firstArtifacts[id]; ok {
		return first
	}
	if src.Revision != "" {
		a.mem.firstArtifacts[id] = src
	}
	return src
}

// settleSource holds a nested object's gate back while its own source is not settled
// (flux.SourceWait; an ExternalArtifact's generator, producerWait): Current waits; a source
// source-controller stalled on fails, and an ExternalArtifact its generator cannot build,
// unless a Flux object about to apply may change that generator (generatorFixPending, as
// for a root): then it waits, saying so. It
// returns a note when a HelmChart's own source, or an ExternalArtifact's generator, cannot be
// read.
func (a *assessor) settleSource(e *Assessment, gate *flux.Gate, src flux.Source, ownerSource string, ownerWant flux.Revision) (note string) {
	upstream, note, reading := a.chartUpstream(e, src)
	if reading && src.Stalled {
		return note // whether the stall is final, its repository says
	}
	verdict, code, message, until := flux.SourceWait(src, upstream, ownerSource, ownerWant, a.now)
	if !until.IsZero() {
		e.recheckAt(until)
	}
	if verdict == result.VerdictCurrent && src.Producer.Name != "" {
		// An ExternalArtifact: whether it holds its generator's build of its sources now.
		var producerNote string
		var failing []flux.Source
		verdict, code, message, producerNote, failing = a.producerWait(e, src, gate.Object.ID, flux.Revision{})
		note = joinMessage(note, producerNote)
		if verdict == result.VerdictFailed {
			switch pending, settled := a.generatorFixOnItsWay(e, src, failing, gate.Object.ID, flux.Revision{}, true); {
			case pending != "":
				verdict, message = result.VerdictInProgress, message+"; the fix may be on its way: "+pending
			case settled != "":
				message += "; no fix is on its way: " + settled
			}
		}
	}
	if verdict == result.VerdictCurrent && src.Message != "" {
		// It serves the artifact the object applied, but fails to fetch a newer one (an
		// expired key): what the object runs may be behind what its repository holds.
		note = joinMessage(note, fmt.Sprintf("its source %s fails to fetch: %s", src.Ref.ID(), sanitize.Compact(src.Message)))
	}
	switch {
	case verdict == result.VerdictFailed:
		override(gate, verdict, code, "SourceStalled", message)
	case verdict == result.VerdictInProgress && gate.Verdict == result.VerdictCurrent:
		// What it applied may be about to change. (A failure of what it applied stands: the
		// gate already waits on a failure of an artifact its source has replaced.)
		override(gate, verdict, "", "SourceNotReady", message)
		gate.Applied = false
	}
	return note
}

// chartUpstream reads a HelmChart's own source (a HelmRepository, GitRepository or Bucket),
// which says whether its stall is final (flux.IndexWait). reading is set while that list is
// on its way (the assessment waits for it); note says when it cannot be read.
func (a *assessor) chartUpstream(e *Assessment, src flux.Source) (upstream *flux.Source, note string, reading bool) {
	if src.Upstream.Name == "" {
		return nil, "", false
	}
	upstream, note = a.source(e, src.Upstream)
	if gvr, ok := src.Upstream.GroupVersionResource(); ok && upstream == nil && note == "" {
		w := a.list(ListKey{GVR: gvr, Namespace: src.Upstream.Namespace})
		reading = !w.Synced() && w.Err() == nil
	}
	return upstream, note, reading
}

// override replaces a gate's verdict, keeping its object in agreement; the message may quote
// a cluster's text, and is made one line as the gate's own are.
func override(g *flux.Gate, v result.Verdict, code result.Code, reason, message string) {
	message = sanitize.Compact(message)
	g.Verdict, g.Code, g.Message, g.Retried = v, code, message, false
	g.Object.Verdict, g.Object.Code, g.Object.Reason, g.Object.Message = v, code, reason, message
}

// evalDependencies judges what a Flux object waits for (spec.dependsOn) when it is not in the
// tree under verification, followed to any depth (apps waits for infra-configs, which waits
// for infra-controllers): a dependency that failed, or is suspended short of Ready, holds the
// object back for good, and so fails the cluster (flux-dependency-failed), the message naming
// the chain down to it. A dependency of the same source as its dependent must apply the same
// revision; of another, what its source offers now. One that cannot be read is left to Flux's
// own wait; one that does not exist is NotFound once missing for the not-found grace while
// nothing may still create it (missingNeed).
func (a *assessor) evalDependencies(e *Assessment, id string, gate flux.Gate, want flux.Revision, now time.Time, visited, roots map[string]bool) {
	chain, reason, blocked := a.blockedBy(e, gate, want, now, visited, roots, map[string]bool{id: true}, true)
	if !blocked {
		return
	}
	message := "waits for " + chain
	e.fail(Finding{Verdict: result.VerdictFailed, Code: result.CodeFluxDependencyFailed, Reason: reason, Message: id + ": " + message})
	// The dependent's own state says so too: it will not go on.
	for i := range e.Flux {
		if e.Flux[i].ID == id {
			e.Flux[i].Verdict, e.Flux[i].Code, e.Flux[i].Message = result.VerdictFailed, result.CodeFluxDependencyFailed, message
		}
	}
}

// blockedBy finds a dependency of gate's object, or of a dependency it waits for (Flux says
// DependencyNotReady), at any depth, that holds it back for good. chain names the way down
// to it and what became of it; reason is its Flux reason. seen holds the objects already
// followed: a cycle of dependsOn is followed once. missing says whether a dependency not
// found is one the run waits for (missingNeed), as a root's is; else one that is NotFound
// (missingFinding: past the not-found grace, nothing creating it) holds it back for good.
func (a *assessor) blockedBy(e *Assessment, gate flux.Gate, want flux.Revision, now time.Time, visited, roots, seen map[string]bool, missing bool) (chain, reason string, blocked bool) {
	for _, dep := range gate.DependsOn {
		if seen[dep.ID()] {
			continue
		}
		seen[dep.ID()] = true
		if roots[dep.ID()] || (visited[dep.ID()] && !slices.Contains(e.SkippedSuspended, dep.ID())) {
			continue // judged in the tree, or on its own as a requested resource
		}
		key := ListKey{GVR: dep.Kind.GroupVersionResource(), Namespace: dep.Namespace}
		w := a.list(key)
		ready, forbidden := a.optionalWatchReady(e, w, dep.Kind.GroupVersionResource().Resource+namespaceSuffix(dep.Namespace))
		if !ready || forbidden != "" {
			continue
		}
		cached, _ := w.Object(dep.Namespace, dep.Name)
		obj, ok := cached.(*unstructured.Unstructured)
		if !ok {
			// Flux waits for it for ever; it may still be created (missingNeed).
			if missing {
				a.missingNeed(e, dep, gate.Object.ID, " (a dependency, dependsOn, of "+gate.Object.ID+")", key, w)
				continue
			}
			// Past the not-found grace, with nothing creating it, it holds the chain for good.
			m := missingObject{id: shownName(dep.ID()), ref: dep, needer: gate.Object.ID, key: key, list: w, hints: closeNames(dep.Namespace, dep.Name, w)}
			if f, final := a.missingFinding(e, m); final {
				// (It alone decides: read no earlier than the dependent's status.)
				a.consistent(key, w, gate.Object.ID)
				return fmt.Sprintf("%s (dependsOn), which is missing: %s", m.id, f.Message), f.Reason, true
			}
			continue
		}
		a.readFrom(dep.ID(), w, obj)
		srcRef := flux.SourceOf(dep.Kind, obj)
		src, _ := a.source(e, srcRef)
		depWant := flux.NestedWant(gate.Source, want, srcRef, src)
		g := flux.Evaluate(dep, obj, depWant, src)
		a.sourceStalled(e, &g, src, depWant)
		a.awaitGeneration(e, &g, now)
		a.awaitJobTTL(e, &g, now)
		a.graceRetried(e, &g, obj, now)
		what := "failed"
		switch g.Verdict {
		case result.VerdictSuspended:
			// Flux does not look at suspend: one Ready at its generation (and on the
			// dependent's revision, of the same source) lets the dependent go on.
			if flux.ReadyDependency(dep, obj, sameSourceWant(gate.Source, srcRef, want), src) {
				continue
			}
			what = "is suspended short of Ready"
		case result.VerdictFailed:
			if a.awaitsHealthRetry(e, dep, &g, now) {
				continue
			}
		case result.VerdictInProgress:
			if g.Code != result.CodeFluxDependencyNotReady {
				continue
			}
			// Flux checks the dependency's own dependencies before it: one of them may hold
			// the whole chain back.
			if deeper, r, ok := a.blockedBy(e, g, depWant, now, visited, roots, seen, missing); ok {
				a.consistent(key, w, gate.Object.ID)
				return fmt.Sprintf("%s (dependsOn), which waits for %s", dep.ID(), deeper), r, true
			}
			continue
		default:
			continue
		}
		// (It alone decides the failure: read no earlier than the dependent's status, as any
		// object judged, or read again first.)
		a.consistent(key, w, gate.Object.ID)
		return fmt.Sprintf("%s (dependsOn), which %s: %s", dep.ID(), what, g.Message), g.Object.Reason, true
	}
	return "", "", false
}

// awaitsHealthRetry reports whether dep, a dependency outside the tree whose gate g failed,
// may still let its dependent go on: its health checks failed, which kustomize-controller
// v1.9.5 runs again at its retry (Reconcile: RequeueAfter: obj.GetRetryInterval()), and the
// dependent goes on once the dependency is Ready at that retry (checkDependencies). Its
// objects are not judged here (they are not the tree's), so it waits for the retry after the
// first failure the run saw, as failOrAwaitHealthRetry does, and holds the dependent back for
// good only past it.
func (a *assessor) awaitsHealthRetry(e *Assessment, dep flux.Ref, g *flux.Gate, now time.Time) bool {
	if g.Code != result.CodeFluxHealthCheckFailed || g.FailedAt.IsZero() || g.RetryEvery <= 0 {
		return false
	}
	_, next := a.healthRetryAt(dep.ID(), g)
	if !now.Before(next) {
		return false
	}
	e.recheckAt(next)
	return true
}

// sourceStalled fails a gate that waits on a source source-controller stalled on
// (flux.SourceStalled): the object applies whatever artifact its source serves, and that
// is not want. A failure of the object's own (not one its controller retries) stands. A
// HelmChart its HTTP HelmRepository's index may still list waits for the repository's next
// fetch (flux.IndexWait), and one built from another revision than its source's artifact now
// for its build from it, and says so. An ExternalArtifact short of want is its
// ArtifactGenerator's (producerStalled). It returns a note when that generator cannot be
// read.
func (a *assessor) sourceStalled(e *Assessment, g *flux.Gate, src *flux.Source, want flux.Revision) (note string) {
	retried := g.Verdict == result.VerdictFailed && g.Retried
	if src == nil || (g.Verdict != result.VerdictInProgress && !retried) {
		return ""
	}
	if src.Producer.Name != "" && !src.Stalled {
		return a.producerStalled(e, g, *src, want)
	}
	var upstream *flux.Source
	if src.Stalled {
		var reading bool
		if upstream, _, reading = a.chartUpstream(e, *src); reading {
			return ""
		}
	}
	code, message, stalled, until := flux.SourceStalled(*src, upstream, want, a.now)
	switch {
	case stalled:
		override(g, result.VerdictFailed, code, "SourceStalled", message)
		a.consistentSource(src.Ref, g.Object.ID)
	case src.Stalled:
		// It may heal: its index's next fetch (until), or a build from its source's new
		// artifact, which source-controller has queued.
		if !until.IsZero() {
			e.recheckAt(until)
		}
		if g.Verdict == result.VerdictInProgress {
			_, _, message, _ := flux.SourceWait(*src, upstream, "", flux.Revision{}, a.now)
			override(g, result.VerdictInProgress, g.Code, g.Object.Reason, joinMessage(g.Message, message))
		}
	}
	return ""
}

// producerStalled judges a gate that waits on the ExternalArtifact src by the
// ArtifactGenerator that writes it, with the rule a nested object's source gets
// (producerWait): when src does not serve what the object waits for (no artifact, or none of
// want, flux.ArtifactAwaited), a generator source-watcher stalled on, or that failed to build
// from its sources' current artifacts, one of which serves want, fails it (the artifact will
// not come), and one still at work holds it, saying so. A generator's failure fails it only
// when no apply is coming that may change the generator (generatorFixPending): else it
// holds it too, saying what may bring the fix.
func (a *assessor) producerStalled(e *Assessment, g *flux.Gate, src flux.Source, want flux.Revision) (note string) {
	if !flux.ArtifactAwaited(src, want) {
		return ""
	}
	verdict, code, message, note, failing := a.producerWait(e, src, g.Object.ID, want)
	settled := ""
	if verdict == result.VerdictFailed {
		var pending string
		if pending, settled = a.generatorFixOnItsWay(e, src, failing, g.Object.ID, want, false); pending != "" {
			verdict, message = result.VerdictInProgress, message+"; the fix may be on its way: "+pending
		}
	}
	switch {
	case verdict == result.VerdictFailed:
		failed := flux.ProducerFailedMessage(src, want, message)
		if settled != "" {
			failed += "; no fix is on its way: " + settled
		}
		override(g, result.VerdictFailed, code, "SourceStalled", failed)
	case verdict == result.VerdictInProgress && g.Verdict == result.VerdictInProgress:
		override(g, result.VerdictInProgress, g.Code, g.Object.Reason, joinMessage(g.Message, message))
	}
	return note
}

// rootArtifactSettled holds a root Current on the ExternalArtifact src, which serves want (any
// artifact when want is zero), while src is not settled by its chain of generators
// (producerWait, with no revision, as settleSource judges a nested object's source): its
// generator built it from an ExternalArtifact whose own generator has not built from its
// sources' current artifacts. When that generator builds, src is built again under the same
// revision (one a source it takes its revision from serves), and kustomize-controller does not
// requeue on it, nor does helm-controller (SourceRevisionChangePredicate compares revisions
// only): the root applied a stale artifact under that revision, and applies the new one only
// at its interval. A chain
// at work holds it; one that failed fails it, unless a fix may be on its way
// (generatorFixOnItsWay, as for a root's own generator). Not when a source src takes its
// revision from serves another revision than want now: its next build is of another revision,
// which the root applies on its own, and the one asked about was applied.
func (a *assessor) rootArtifactSettled(e *Assessment, g *flux.Gate, src *flux.Source, want flux.Revision) (note string) {
	if src == nil || src.Producer.Name == "" || g.Verdict != result.VerdictCurrent || flux.ArtifactAwaited(*src, want) {
		return ""
	}
	if gen, inputs, ok := a.generatorOf(e, *src); ok && !want.IsZero() && gen.RevisionMovedOn(src.Ref.Name, inputs, want) {
		return ""
	}
	verdict, code, message, note, failing := a.producerWait(e, *src, g.Object.ID, flux.Revision{})
	served := fmt.Sprintf("%s serves %s, which it applied", src.Ref.ID(), flux.ShortRevision(src.Revision))
	switch verdict {
	case result.VerdictFailed:
		pending, settled := a.generatorFixOnItsWay(e, *src, failing, g.Object.ID, flux.Revision{}, false)
		if pending != "" {
			override(g, result.VerdictInProgress, "", g.Object.Reason, fmt.Sprintf("%s, but %s; the fix may be on its way: %s", served, message, pending))
			g.Applied = false
			return note
		}
		failed := fmt.Sprintf("%s, but %s; built again, %s keeps its revision, and %s applies it only at its interval", served, message, src.Ref.ID(), retryingController(g.Object.Kind))
		if settled != "" {
			failed += "; no fix is on its way: " + settled
		}
		override(g, result.VerdictFailed, code, "SourceStalled", failed)
	case result.VerdictInProgress:
		override(g, result.VerdictInProgress, "", g.Object.Reason, fmt.Sprintf("%s, but %s", served, message))
		g.Applied = false
	}
	return note
}

// awaitGeneration holds back a Kustomization's failure that may be of an older generation
// than the current one (flux.Gate.MaybeOlderGeneration: kustomize-controller records no
// generation of a failed attempt, and Flux's patch helper stamps its conditions with the
// current one): it waits until kustomize-controller has surely tried the current generation,
// and fails then if the failure stands. A generation change requeues the object at once
// (kustomize-controller's GenerationChangedPredicate), so the current generation's own attempt
// follows an older one's end within moments, marking Ready Unknown while it runs: its failure
// is seen as one that ends later than the first the run saw. Surely tried by the failure's
// time plus its retry interval (spec.retryInterval, else spec.interval) or the run's
// retry-grace, whichever is shorter, plus a margin for the attempt's own time and the
// one-second precision of lastTransitionTime; a Stalled failure (no retry coming) too.
func (a *assessor) awaitGeneration(e *Assessment, g *flux.Gate, now time.Time) {
	if !g.MaybeOlderGeneration || g.Verdict != result.VerdictFailed || g.FailedAt.IsZero() {
		return
	}
	if a.mem.generationFailedAt == nil {
		a.mem.generationFailedAt = map[string]time.Time{}
	}
	key := g.Object.ID + "|" + strconv.FormatInt(g.Object.Generation, 10)
	first, ok := a.mem.generationFailedAt[key]
	if !ok || g.FailedAt.Before(first) {
		first, a.mem.generationFailedAt[key] = g.FailedAt, g.FailedAt
	}
	if g.FailedAt.After(first) {
		return // an attempt that started after a failure written at this generation: of it
	}
	wait := a.retryGrace()
	if g.RetryEvery > 0 {
		wait = min(wait, g.RetryEvery)
	}
	next := g.FailedAt.Add(time.Second + wait + generationMargin)
	if !now.Before(next) {
		return
	}
	g.Applied = false
	override(g, result.VerdictInProgress, g.Code, g.Object.Reason, fmt.Sprintf(
		"generation %d has not ended Ready (observed %d), and this failure, stamped with it, may be of an earlier one: kustomize-controller records no generation of a failed attempt, and tries a new generation at once; fails at %s if it still fails: %s",
		g.Object.Generation, g.Object.ObservedGeneration, next.UTC().Format(time.RFC3339), g.Message))
	e.recheckAt(next)
}

// awaitSpecReconciled holds back a ResourceSet Current on a Ready=True that may be of the
// generation before its current one (flux.ResourceSetReadyBeforeSpec: flux-operator's patch
// stamps it with the current one when the spec changed while it reconciled the previous one),
// until flux-operator's reconcile of the current generation shows, or the bound passes.
func (a *assessor) awaitSpecReconciled(e *Assessment, ref flux.Ref, g *flux.Gate, obj *unstructured.Unstructured, now time.Time) {
	if ref.Kind != flux.KindResourceSet || g.Verdict != result.VerdictCurrent {
		return
	}
	msg, until, stale := flux.ResourceSetReadyBeforeSpec(obj)
	if !stale || !now.Before(until) {
		return
	}
	override(g, result.VerdictInProgress, "", "SpecNotReconciled", msg)
	g.Applied = false
	e.recheckAt(until)
}

// generationMargin is the time awaitGeneration gives the attempt of a new generation, which
// starts at once, beyond its bound.
const generationMargin = 30 * time.Second

// retryGrace is the run's retry-grace (classify.Options.RetryGrace, its default when unset).
func (a *assessor) retryGrace() time.Duration {
	if a.spec.Classify.RetryGrace > 0 {
		return a.spec.Classify.RetryGrace
	}
	return classify.DefaultRetryGrace
}

// graceRetried lets a failure that its controller retries (flux.Gate.Retried: a dry-run
// against a CRD not served yet, a valuesFrom Secret an operator creates in a moment) last the
// retry grace period, from when the run first saw it, before it counts; meanwhile the object
// waits and its message says until when. Past the window it fails once the controller has
// tried again and failed again: a Kustomization retries at spec.retryInterval (else its
// interval), a HelmRelease under strategy RetryOnFailure at its retryInterval, which may be
// longer than the window; a failure not tried since the window began
// waits for that retry, as what it lacked may be there now. A HelmRelease whose values
// could not be composed waits while an object of its valuesFrom changed after the failure
// (helm-controller retries with a back-off). The Ready condition's lastTransitionTime cannot
// time the window itself: kustomize-controller marks Ready Unknown at the start of every
// attempt, so it is the end of the latest one (flux.Gate.FailedAt).
func (a *assessor) graceRetried(e *Assessment, g *flux.Gate, obj *unstructured.Unstructured, now time.Time) {
	id := g.Object.ID
	if g.Verdict == result.VerdictCurrent {
		// Done with the failure: a later one starts a new window. (Not on a mere pause:
		// kustomize-controller marks Ready Unknown at every attempt.)
		for k := range a.mem.retriedSince {
			if strings.HasPrefix(k, id+"|") {
				delete(a.mem.retriedSince, k)
			}
		}
		return
	}
	if g.Verdict == result.VerdictFailed && !g.Retried && g.Code == result.CodeFluxValuesFailed {
		a.holdFixedValues(e, g, obj, now)
		return
	}
	if g.Verdict != result.VerdictFailed || !g.Retried {
		return
	}
	if a.mem.retriedSince == nil {
		a.mem.retriedSince = map[string]time.Time{}
	}
	// A failure of another revision is another failure.
	key := id + "|" + string(g.Code) + "|" + g.Object.LastAttemptedRevision
	since, ok := a.mem.retriedSince[key]
	if !ok {
		since, a.mem.retriedSince[key] = now, now
	}
	controller := retryingController(g.Object.Kind)
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	end := since.Add(a.retryGrace())
	if now.Before(end) {
		override(g, result.VerdictInProgress, g.Code, g.Object.Reason, fmt.Sprintf("%s retries since %s, fails at %s: %s",
			controller, stamp(since), stamp(end), g.Message))
		e.recheckAt(end)
		return
	}
	notRead := ""
	switch {
	case g.RetryEvery > 0 && !g.FailedAt.IsZero() && g.FailedAt.Before(end):
		next := g.FailedAt.Add(g.RetryEvery + g.RetryEvery/10 + 30*time.Second)
		every := "spec.retryInterval, else spec.interval"
		switch {
		case g.Code == result.CodeFluxRolledBack:
			every = "its next attempt after the remediation, within the action's timeout"
		case g.Object.Kind == string(flux.KindHelmRelease):
			every = "its strategy's retryInterval"
		}
		if now.Before(next) {
			override(g, result.VerdictInProgress, g.Code, g.Object.Reason, fmt.Sprintf(
				"failing since %s; not tried again since, %s tries again by %s (%s) and it fails then if it still fails: %s",
				stamp(since), controller, stamp(next), every, g.Message))
			e.recheckAt(next)
			return
		}
	case helmBackoffRetried(g) && obj != nil:
		var waits bool
		if notRead, waits = a.awaitValuesFix(e, g, obj, since, now); waits {
			return
		}
	}
	override(g, result.VerdictFailed, g.Code, g.Object.Reason, fmt.Sprintf("still failing after %s of %s's retries: %s%s",
		now.Sub(since).Round(time.Second), controller, g.Message, notRead))
}

// awaitValuesFix holds g, a HelmRelease failure helm-controller retries on controller-runtime's
// back-off, failing since since, while an object of its valuesFrom changed after the failure:
// it waits for helm-controller's next attempt, which reads it (valuesFixedBy). waits is set
// when it holds g; notRead says, as a note for the failure, what could not be compared.
func (a *assessor) awaitValuesFix(e *Assessment, g *flux.Gate, obj *unstructured.Unstructured, since, now time.Time) (notRead string, waits bool) {
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	v := a.valuesChangedSince(e, obj, g.FailedAt)
	if v.reading != "" {
		override(g, result.VerdictInProgress, g.Code, g.Object.Reason, fmt.Sprintf(
			"failing since %s; reading %s, which its values come from, to see whether it changed since: %s", stamp(since), v.reading, g.Message))
		return "", true
	}
	if v.notRead != "" {
		notRead = " (" + v.notRead + ")"
	}
	if end := a.valuesFixedBy(g, v.at); v.changed != "" && now.Before(end) {
		override(g, result.VerdictInProgress, g.Code, g.Object.Reason, fmt.Sprintf(
			"failing since %s; %s changed at %s, after the failure, and helm-controller tries again with a back-off, by %s at the latest; fails then: %s",
			stamp(since), v.changed, stamp(v.at), stamp(end), g.Message))
		e.recheckAt(end)
		return notRead, true
	}
	return notRead, false
}

// valuesFixedBy is when a failure of g, retried on helm-controller's back-off, that an object of
// its valuesFrom changed at changed may fix, is to stand at the latest: helm-controller's next
// attempt (flux.HelmAttemptBy) and a margin, and at least the run's retry-grace from the change.
func (a *assessor) valuesFixedBy(g *flux.Gate, changed time.Time) time.Time {
	return maxTime(changed.Add(a.retryGrace()), flux.HelmAttemptBy(g.Code, g.FailedAt, changed).Add(generationMargin))
}

// holdFixedValues holds a HelmRelease whose values do not parse (a final ValuesError) while an
// object of its valuesFrom changed after the failure, until helm-controller's next attempt
// (valuesFixedBy):
// helm-controller composes the values again at every attempt (v1.6.4 returns the error, and
// controller-runtime retries it with a back-off), so its next attempt reads the fix. Without
// such a change the failure stands at once: the same values get the same answer.
func (a *assessor) holdFixedValues(e *Assessment, g *flux.Gate, obj *unstructured.Unstructured, now time.Time) {
	if obj == nil {
		return
	}
	v := a.valuesChangedSince(e, obj, g.FailedAt)
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	if v.reading != "" {
		override(g, result.VerdictInProgress, g.Code, g.Object.Reason, fmt.Sprintf(
			"reading %s, which its values come from, to see whether it changed since the failure: %s", v.reading, g.Message))
		return
	}
	if v.changed == "" {
		return
	}
	if end := a.valuesFixedBy(g, v.at); now.Before(end) {
		override(g, result.VerdictInProgress, g.Code, g.Object.Reason, fmt.Sprintf(
			"%s changed at %s, after the failure, and helm-controller composes the values again at its next attempt, by %s at the latest; fails then: %s",
			v.changed, stamp(v.at), stamp(end), g.Message))
		e.recheckAt(end)
	}
}

// helmBackoffRetried reports whether g is a HelmRelease failure helm-controller tries again on
// controller-runtime's back-off, with no interval of its own to wait for: values it cannot
// compose, or a release action without an upgrade.strategy (install.strategy) interval.
func helmBackoffRetried(g *flux.Gate) bool {
	if g.Object.Kind != string(flux.KindHelmRelease) || g.RetryEvery > 0 {
		return false
	}
	switch g.Code {
	case result.CodeFluxValuesFailed, result.CodeFluxInstallFailed, result.CodeFluxUpgradeFailed, result.CodeFluxTestFailed:
		return true
	}
	return false
}

// retryingController names the controller that retries a failed Flux object of kind.
func retryingController(kind string) string {
	controller := "kustomize-controller"
	switch kind {
	case string(flux.KindHelmRelease):
		controller = "helm-controller"
	case string(flux.KindResourceSet):
		controller = flux.FluxOperator
	}
	return controller
}

// valuesSince is what valuesChangedSince found.
type valuesSince struct {
	// changed names the object that changed after the failure, at at.
	changed string
	at      time.Time
	// reading names an object whose list is still on its way; notRead says which could not
	// be read.
	reading, notRead string
}

// valuesChangedSince names a ConfigMap or Secret of a HelmRelease's valuesFrom that was
// created or written after failed (its creationTimestamp or a managedFields time). They are
// evidence (evidenceReady): one that cannot be read is not compared, and the failure stands.
func (a *assessor) valuesChangedSince(e *Assessment, obj *unstructured.Unstructured, failed time.Time) (v valuesSince) {
	if failed.IsZero() {
		return v
	}
	for _, r := range flux.ValuesFrom(obj) {
		gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
		if r.Kind == "Secret" {
			gvr.Resource = "secrets"
		}
		w := a.list(ListKey{GVR: gvr, Namespace: obj.GetNamespace()})
		ready, note := a.evidenceReady(e, w, gvr.Resource+namespaceSuffix(obj.GetNamespace()))
		if !ready && note == "" {
			return valuesSince{reading: r.String()}
		}
		if !ready {
			v.notRead = joinMessage(v.notRead, r.String()+" not compared: "+note)
			continue
		}
		cached, ok := w.Object(obj.GetNamespace(), r.Name)
		if !ok {
			continue
		}
		acc, err := meta.Accessor(cached)
		if err != nil {
			continue
		}
		at := acc.GetCreationTimestamp().Time
		for _, f := range acc.GetManagedFields() {
			if f.Time != nil && f.Time.After(at) {
				at = f.Time.Time
			}
		}
		if at.After(failed) {
			return valuesSince{changed: r.String(), at: at}
		}
	}
	return v
}

// noteAttempt records when the run first saw a Flux object working on the expected revision
// (attempting it, or applied on it): a Job deleted before was of another revision (jobGone).
func (a *assessor) noteAttempt(g *flux.Gate, want flux.Revision, now time.Time) {
	if !g.Applied && (want.IsZero() || !want.Matches(g.Attempting...)) {
		return
	}
	if a.mem.firstWorkedOn == nil {
		a.mem.firstWorkedOn = map[string]time.Time{}
	}
	if _, ok := a.mem.firstWorkedOn[g.Object.ID]; !ok {
		a.mem.firstWorkedOn[g.Object.ID] = now
	}
}

// updatedByUpgrade reports whether Helm has rolled out a new pod template of a workload of a
// HelmRelease during its upgrade to the expected chart (flux.Gate.Upgrading): the workload's
// rollout revision (a Deployment's deployment.kubernetes.io/revision, a StatefulSet's
// updateRevision) differs from the one it had when the attempt started, the last the run saw
// before it or, for a run that starts during it, the first. A change of replicas alone (an
// autoscaler, kubectl scale) is no new revision; a rollback then a retry is a new attempt.
// A workload first seen already updated waits for Helm: whose it is, nothing here tells.
func (a *assessor) updatedByUpgrade(owner *flux.Gate, id string, u *unstructured.Unstructured) bool {
	if u == nil || owner.Object.Kind != string(flux.KindHelmRelease) {
		return false
	}
	marker := rolloutRevision(u)
	if marker == "" {
		return false
	}
	if a.mem.upgradeBaselines == nil {
		a.mem.upgradeBaselines, a.mem.lastRevisions = map[string]string{}, map[string]string{}
	}
	if owner.Upgrading == "" {
		a.mem.lastRevisions[id] = marker
		return false
	}
	key := owner.Object.ID + " " + owner.UpgradeAttempt + " " + id
	base, ok := a.mem.upgradeBaselines[key]
	if !ok {
		base = cmp.Or(a.mem.lastRevisions[id], marker)
		a.mem.upgradeBaselines[key] = base
	}
	return marker != base
}

// rolloutRevision is what changes when a workload's pod template does: a Deployment's
// revision annotation, a StatefulSet's update revision, a DaemonSet's generation; "" for
// other kinds.
func rolloutRevision(u *unstructured.Unstructured) string {
	switch u.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		return u.GetAnnotations()["deployment.kubernetes.io/revision"]
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		rev, _, _ := unstructured.NestedString(u.Object, "status", "updateRevision")
		return rev
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		// No replicas to scale: its generation changes with its template (or its update
		// strategy) only.
		return strconv.FormatInt(u.GetGeneration(), 10)
	}
	return ""
}

// sameSourceWant is the revision Flux requires of a dependency: the dependent's, when both
// apply from the same source; none otherwise.
func sameSourceWant(dependentSource string, depSource flux.SourceRef, want flux.Revision) flux.Revision {
	if depSource.ID() != "" && depSource.ID() == dependentSource {
		return want
	}
	return flux.Revision{}
}

// jobGone says what became of a Job of the inventory that is not found, its owner having
// applied the expected revision: one with a ttlSecondsAfterFinished that the run saw finish
// and then vanish, since its owner started on the expected revision, was deleted by its TTL
// (Helm's wait for Jobs, or Flux's, may have lasted until then); and kustomize-controller and
// helm-controller count a Job with a TTL that is gone as finished (fluxcd/pkg/ssa's wait), so
// one a Kustomization with spec.wait, or a HelmRelease whose release waited for Jobs, counted
// healthy was too (flux.Gate.WaitsForAll). done is false when neither says so. since is when
// the run first saw the owner working on the expected revision. (Helm's hook Jobs are in
// neither the inventory nor the release's manifest: helm-controller is Ready only once Helm
// waited for them.)
func jobGone(w List, ns string, o flux.ObjectRef, owner *flux.Gate, since time.Time) (done bool, failed *batchv1.Job, message string) {
	if o.Group != "batch" || o.Kind != "Job" || !owner.Applied {
		return false, nil, ""
	}
	if last, at, ok := w.Gone(ns, o.Name); ok && !since.IsZero() && !at.Before(since) {
		job, _ := last.(*batchv1.Job)
		switch {
		case job == nil || job.Spec.TTLSecondsAfterFinished == nil:
		case jobCondition(job, batchv1.JobComplete) || jobCondition(job, batchv1.JobSuccessCriteriaMet):
			return true, nil, "deleted after it completed (ttlSecondsAfterFinished)"
		case jobCondition(job, batchv1.JobFailed):
			return false, job, ""
		}
		return false, nil, ""
	}
	if owner.WaitsForAll && owner.Verdict == result.VerdictCurrent {
		how := "is Ready with spec.wait, and kustomize-controller"
		if owner.Object.Kind == string(flux.KindHelmRelease) {
			how = "is Ready after Helm's wait for Jobs, and helm-controller"
		}
		return true, nil, "gone; " + owner.Object.ID + " " + how + " counts a Job deleted by its ttlSecondsAfterFinished as finished (its outcome was not seen)"
	}
	return false, nil, ""
}

// unseenJobGone reports whether o, an object of owner's inventory the list read after owner's
// status does not hold (and the run never saw), is a Job that owner applied without waiting
// for it (jobGone, which counts it done when owner waited, comes first): kustomize-controller
// created it with that apply, and something deleted it since, as the TTL controller does once
// it finished (ttlSecondsAfterFinished). How it ended cannot be told, and nothing will tell:
// the verdict is Unverified, not a wait until the timeout. current: owner applied the
// expected revision (before that, the inventory is the previous revision's).
func unseenJobGone(o flux.ObjectRef, owner *flux.Gate, current bool) bool {
	return o.Group == "batch" && o.Kind == "Job" && current && owner.Applied && !owner.WaitsForAll &&
		owner.Verdict == result.VerdictCurrent
}

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
