package assess

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flagger"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// The judges of an inventory's objects, by kind, as kstatus's legacyTypes: the walk reads an
// object and asks the judge of its kind; a kind the table does not name is judged by
// judgeWorkload (kstatus, the team's annotations, a Canary and the rollout classifier).

// objectJudge judges the object v, read from its list, and reports it. A judge does not walk:
// nested is the Flux object the walk goes on to, if v is one. v is passed by value: a pointer
// passed through a func value escapes, and the walk would allocate a visit per object and pass.
type objectJudge func(a *assessor, e *Assessment, v objectVisit, now time.Time) (nested *flux.Ref)

// objectJudges are the judges of the kinds that are not judged as a workload alone: the Flux
// objects by their gate, the Flux sources as source-controller serves them, a
// PersistentVolumeClaim by its StorageClass's binding mode first.
var objectJudges = map[schema.GroupKind]objectJudge{
	flux.KindKustomization.GroupVersionKind().GroupKind():                judgeFluxObject,
	flux.KindHelmRelease.GroupVersionKind().GroupKind():                  judgeFluxObject,
	flux.KindResourceSet.GroupVersionKind().GroupKind():                  judgeFluxObject,
	{Group: "source.toolkit.fluxcd.io", Kind: "GitRepository"}:           judgeSourceObject,
	{Group: "source.toolkit.fluxcd.io", Kind: "OCIRepository"}:           judgeSourceObject,
	{Group: "source.toolkit.fluxcd.io", Kind: "Bucket"}:                  judgeSourceObject,
	{Group: "source.toolkit.fluxcd.io", Kind: "HelmChart"}:               judgeSourceObject,
	{Group: "source.toolkit.fluxcd.io", Kind: "HelmRepository"}:          judgeSourceObject,
	{Group: "source.toolkit.fluxcd.io", Kind: flux.KindExternalArtifact}: judgeSourceObject,
	{Kind: "PersistentVolumeClaim"}:                                      judgeClaimObject,
}

// judgeOf returns the judge of o's kind.
func judgeOf(o flux.ObjectRef) objectJudge {
	if j, ok := objectJudges[schema.GroupKind{Group: o.Group, Kind: o.Kind}]; ok {
		return j
	}
	return judgeWorkloadObject
}

// judgeFluxObject reports a Flux object an inventory lists by its kstatus status; the walk
// then judges it as a Flux object, by its gate and what it lists (evalFlux). One its
// Kustomization pauses (reconcile: disabled, ssa: Ignore) is walked all the same:
// kustomize-controller reads those keys on it only as its owner's apply selectors, and its own
// reconcile (helm-controller's too) goes on applying what its source offers. Only its spec in
// Git does not reach it: it is named so and counted as not rolled out, and under
// fail-on-suspended it fails the cluster once its walk found nothing first (failPausedSpec).
func judgeFluxObject(_ *assessor, e *Assessment, v objectVisit, _ time.Time) *flux.Ref {
	o := v.ref
	kind, _ := flux.IsFluxKind(o.Group, o.Kind)
	if skip := kustomizeSkip(v); skip.Paused() {
		v.ro.Message = joinMessage(v.ro.Message, pausedSpec(skip))
		if v.ro.Status == result.ObjectCurrent {
			e.PausedByKustomize++
		}
	}
	e.Objects = append(e.Objects, v.ro)
	return &flux.Ref{Kind: kind, Namespace: o.Namespace, Name: o.Name}
}

// failPausedSpec fails the cluster as suspended, under fail-on-suspended, when the
// Kustomization that owns v's Flux object pauses it (judgeFluxObject). It is called once that
// object's walk is done: a failure found there (a Deployment of the revision it applied that
// cannot pull its image) comes first and says more (Assessment.fail keeps the first).
func (a *assessor) failPausedSpec(e *Assessment, v *objectVisit) {
	if !a.spec.FailOnSuspended {
		return
	}
	if skip := kustomizeSkip(*v); skip.Paused() {
		e.fail(suspendedFinding(v.ro.ID + ": " + pausedSpec(skip)))
	}
}

// pausedSpec says why a Flux object its Kustomization pauses does not get its spec from Git.
func pausedSpec(skip flux.ApplySkip) string {
	return "its spec in Git is not applied: " + skipReason(skip)
}

// skipReason says that kustomize-controller skips an object, and why.
func skipReason(skip flux.ApplySkip) string {
	return "kustomize-controller skips it (" + skip.String() + ")"
}

// suspendedFinding is the failure of an object-level suspension under fail-on-suspended, as
// a suspended Flux object's.
func suspendedFinding(message string) Finding {
	return Finding{Verdict: result.VerdictSuspended, Code: result.CodeFluxSuspended, Reason: "Suspended", Message: message}
}

// judgeSourceObject judges a Flux source an inventory lists as source-controller serves it,
// then as any other object.
func judgeSourceObject(a *assessor, e *Assessment, v objectVisit, now time.Time) *flux.Ref {
	if src, isSource := flux.InventorySource(v.ref); isSource && v.u != nil && v.ro.Status != result.ObjectTerminating &&
		kustomizeSkip(v) == flux.NotSkipped {
		a.judgeSource(e, &v, src, now)
	}
	a.judgeWorkload(e, &v, now)
	return nil
}

// judgeWorkloadObject judges any other object (judgeWorkload).
func judgeWorkloadObject(a *assessor, e *Assessment, v objectVisit, now time.Time) *flux.Ref {
	a.judgeWorkload(e, &v, now)
	return nil
}

// kustomizeSkip is why the Kustomization that owns v's object does not apply it (the view's
// ObjectFacts.KustomizeSkip); flux.NotSkipped under any other owner, whose controller applies
// it whatever it says.
func kustomizeSkip(v objectVisit) flux.ApplySkip {
	if v.owner.Object.Kind != string(flux.KindKustomization) {
		return flux.NotSkipped
	}
	return v.list.Facts(v.ns, v.ref.Name).KustomizeSkip
}

// judgeSource judges a Flux source of v's inventory as source-controller serves it, not by
// kstatus: one whose next fetch fails keeps Reconciling=True while what applies from it goes
// on.
func (a *assessor) judgeSource(e *Assessment, v *objectVisit, src flux.SourceRef, now time.Time) {
	ro := &v.ro
	read := flux.ReadSource(src, v.u)
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
	if status == result.ObjectFailed && v.current {
		ro.Failure = &result.Failure{Code: code, Reason: "Stalled", Message: ro.Message}
	}
}

// judgeWorkload judges v's object by its kstatus status, the team's annotations, the Canary
// that judges it and, for a workload that is not Current, the rollout classifier, and
// reports it.
func (a *assessor) judgeWorkload(e *Assessment, v *objectVisit, now time.Time) {
	o, owner, ro, memo := v.ref, v.owner, &v.ro, v.memo
	ro.Message = joinMessage(ro.Message, memo.ignoreNote)
	if keys := v.list.Facts(v.ns, o.Name).NotFromGit; len(keys) > 0 {
		ro.Message = joinMessage(ro.Message, "annotations "+strings.Join(keys, ",")+" ignored: not applied by Flux (set them in Git)")
	}
	if a.judgeSkipped(e, v) {
		return
	}
	if memo.ignoreReadiness && ro.Status != result.ObjectCurrent {
		// The team said so in Git: reported as it is, neither waited for nor failed.
		ro.Message = joinMessage(ro.Message, IgnoredReadiness)
		e.ReadinessIgnored++
		e.Objects = append(e.Objects, *ro)
		return
	}
	var byCanary *flagger.Judgement
	if v.u != nil && ro.Status != result.ObjectTerminating {
		j, judged, ok := a.canaryJudgement(e, o, v.u, owner.Object.ID, ro)
		if !ok {
			ro.Status, ro.Message = result.ObjectUnknown, joinMessage("not listed yet", ro.Message)
			e.Objects = append(e.Objects, *ro)
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
		v.current = true
	}
	upgraded := a.updatedByUpgrade(owner, ro.ID, v.u) && !v.current
	if upgraded {
		// helm-controller records the release only once Helm's wait is over; Helm updated
		// this workload since the run first saw it, during the upgrade to the expected chart:
		// it is the new chart's, and may fail the rollout now.
		v.current = true
	}
	classified := true
	if heldPending(v) {
		classified = a.classifyRollout(e, v, installing, upgraded, now)
	}
	if byCanary != nil && ro.Failure == nil {
		// (A failure the classifier found in the target's own pods stands: Flagger fails the
		// analysis of a crashing revision only at its deadline.)
		judgedByCanary(ro, *byCanary, v.current)
	}
	if classified && a.judgeHeld(e, v) {
		return
	}
	e.Objects = append(e.Objects, *ro)
	switch {
	case ro.Failure != nil:
		e.fail(Finding{Verdict: result.VerdictFailed, Code: ro.Failure.Code, Reason: ro.Failure.Reason, Message: ro.ID + ": " + ro.Failure.Message})
	case ro.Status == result.ObjectFailed && v.current && classified && !installing:
		e.fail(Finding{Verdict: result.VerdictFailed, Reason: "Failed", Message: ro.ID + ": " + ro.Message})
	case ro.Status != result.ObjectCurrent && e.Pending == nil:
		// (Only the first reason to wait is kept: the message is not made for the others.)
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: string(ro.Status), Message: waitingFor(*ro)})
	}
}

// classifyRollout asks the classifier whether v's workload, not Current, can still roll out,
// once it may fail the rollout; a failure found during Helm's install or upgrade says so. It
// returns false while what the classifier reads is still being listed.
func (a *assessor) classifyRollout(e *Assessment, v *objectVisit, installing, upgraded bool, now time.Time) (classified bool) {
	o, owner, ro := v.ref, v.owner, &v.ro
	classified = true
	if ro.Status != result.ObjectCurrent && v.current && classify.Supported(o.Group, o.Kind) {
		u := v.u
		if u == nil {
			// (A metadata-only kind is never one the classifier reads.)
			u, _ = AsUnstructured(v.cached, v.gvk)
		}
		status := ro.Status
		classified = a.classify(e, ro, u, v.key, v.list, now)
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
	return classified
}

// judgeSkipped reports v's object when the Kustomization that owns it skips it
// (kustomizeSkip), and says whether it did. A pause (reconcile: disabled, ssa: Ignore) is an
// object-level suspension: the object does not get the revision, Current or not, so it is
// named as not rolled out, never verified, and under fail-on-suspended fails the cluster as a
// suspended Flux object does. ssa: IfNotPresent creates an object once, on purpose (a seeded
// Secret, a PVC): Current it is judged as any other; not Current, it is not verified, never
// failed. (A workload whose own rollout waits for a person is judgeHeld's.)
func (a *assessor) judgeSkipped(e *Assessment, v *objectVisit) bool {
	ro, skip := &v.ro, kustomizeSkip(*v)
	paused := skip.Paused()
	switch {
	case skip == flux.NotSkipped, !paused && ro.Status == result.ObjectCurrent:
		return false
	case paused && a.spec.FailOnSuspended:
		e.fail(suspendedFinding(ro.ID + ": " + skipReason(skip) + ": it does not get the revision"))
	case ro.Status == result.ObjectCurrent:
		ro.Message = joinMessage(ro.Message, "not rolled out: "+skipReason(skip))
		e.PausedByKustomize++
	default:
		ro.Message = joinMessage(ro.Message, "not verified: "+skipReason(skip))
		e.SkippedByKustomize++
	}
	e.Objects = append(e.Objects, *ro)
	return true
}

// heldPending readies v's workload, whose rollout waits for a person (classify.HeldRollout),
// for the classifier, and says whether the classifier is to read it. While no pod of its new
// template runs, nothing of the rollout can fail: what kstatus and the classifier would find
// is the previous template's (a paused Deployment has no ReplicaSet of the new template; its
// revision and a deadline exceeded before the pause are the previous one's), so it is not
// Failed and not classified. Once one runs, a set not all there and ready is not Current
// (kstatus calls a StatefulSet under OnDelete Current whatever its pods), and the classifier
// reads its pods of the new template, as any rollout's.
func heldPending(v *objectVisit) (classify bool) {
	switch {
	case v.memo.held == "":
	case !v.memo.heldStarted:
		if v.ro.Status == result.ObjectFailed {
			v.ro.Status = result.ObjectInProgress
		}
		return false
	case !v.memo.heldServing && v.ro.Status == result.ObjectCurrent:
		v.ro.Status, v.ro.Message = result.ObjectInProgress, joinMessage(v.ro.Message, "not all of its pods are ready")
	}
	return true
}

// judgeHeld reports v's workload when its rollout waits for a person (classify.HeldRollout),
// once it may fail the rollout (v.current: before, the revision Flux applies next may release
// it), and says whether it did. A failure the classifier found in its pods of the new
// template stands: what waits for a person is the rest of the rollout, not a pod that cannot
// run. Otherwise what it runs meanwhile, all there and ready, is Current and not rolled out,
// and anything less is not verified, neither waited for (the controller will not move) nor
// failed; under fail-on-suspended it fails the cluster, as a paused object does.
func (a *assessor) judgeHeld(e *Assessment, v *objectVisit) bool {
	ro, held := &v.ro, v.memo.held
	if held == "" || !v.current || ro.Status == result.ObjectTerminating || ro.Failure != nil || ro.Status == result.ObjectFailed {
		return false
	}
	if v.memo.heldServing {
		// kstatus waits for the update the controller will not make (a DaemonSet's
		// "Updated: 0/2"): what runs is Current.
		ro.Status = result.ObjectCurrent
	}
	switch {
	case a.spec.FailOnSuspended:
		e.fail(suspendedFinding(ro.ID + ": not rolled out: " + held))
	case ro.Status == result.ObjectCurrent:
		ro.Message = joinMessage(ro.Message, "not rolled out: "+held)
		e.HeldRollouts++
	default:
		ro.Message = joinMessage(ro.Message, "not verified: "+held)
		e.HeldNotVerified++
	}
	e.Objects = append(e.Objects, *ro)
	return true
}
