package flux

import (
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// appliedRules holds, per kind, whether the objects a Flux object lists and the workloads
// they run are those of the expected revision (of the revision last attempted when none is
// expected). Only then may a workload's failure fail the rollout: before, the objects are
// the previous revision's, which the expected one may be fixing.
var appliedRules = map[Kind]func(*view, Revision) bool{
	KindKustomization: kustomizationApplied,
	KindHelmRelease:   helmReleaseApplied,
	KindResourceSet:   resourceSetApplied,
}

// kustomizationApplied: kustomize-controller records lastAttemptedRevision before it builds,
// swaps status.inventory for the new one after it applied the revision, writing it with the
// "Running health checks" progress (or with Ready=True when there are no health checks), and
// keeps that inventory when the health checks or the pruning fail. So the revision is applied
// when it is Ready on it at the current generation, when it is health-checking it, or when
// the health checks or the pruning of it failed.
func kustomizationApplied(v *view, want Revision) bool {
	if v.lastAttempted == "" && v.lastApplied == "" {
		return true // nothing applied yet: the inventory is empty
	}
	if v.lastAttempted != "" && !v.attempted(want) {
		return false // another revision is being worked on, or the expected one is not yet
	}
	// With no revision expected, the one applied must be the one last attempted.
	if (v.applied(want) && (!want.IsZero() || v.lastApplied == v.lastAttempted)) && v.observedGeneration == v.generation {
		return true
	}
	if rc := v.cond(meta.ReconcilingCondition); rc.status == string(metav1.ConditionTrue) &&
		v.currentGeneration(rc) && healthCheckingWords.MatchString(rc.message) && v.reconcileOfCurrentSpec() {
		// kustomize-controller patches the new inventory into the status just before it
		// writes these words: the objects listed from then on are the revision's, applied.
		return true
	}
	ready := v.cond(meta.ReadyCondition)
	return ready.status == string(metav1.ConditionFalse) && v.currentGeneration(ready) &&
		(ready.reason == meta.HealthCheckFailedReason || ready.reason == meta.PruneFailedReason)
}

// reconcileOfCurrentSpec reports whether the reconcile a Kustomization is at work on started
// on its current generation. The stamp of the Reconciling condition does not say it:
// kustomize-controller's patch helper (fluxcd/pkg/runtime patch.SerialPatcher,
// patchStatusConditions) applies each condition it changed to the object as the API server
// holds it at the write, conditions.Set stamping it with that object's generation, so "Running
// health checks" written after the spec moved on carries the new generation while the
// objects it checks are the previous one's (and, with CancelHealthCheckOnNewRevision off, its
// default, the check runs to its end). Ready=Unknown ("Reconciliation in progress") is set at
// the start of the reconcile, written with its first status patch moments after it read the
// object, and no later patch of the same reconcile changes it: its stamp is the generation the
// reconcile started on. (Its first status patch, moments after the read, stamps it: a spec
// changed in between still slips through.) Ready False next to "Running health checks" is a
// reconcile that ended (a failed or cancelled check, kept as ProgressingWithRetry) or the
// next one stopped early (dependsOn): not a check at work, whose evidence is the failure's
// own (the third rule of kustomizationApplied).
func (v *view) reconcileOfCurrentSpec() bool {
	ready := v.cond(meta.ReadyCondition)
	return ready.status == string(metav1.ConditionUnknown) && v.currentGeneration(ready)
}

// helmReleaseApplied: helm-controller records a release in status.history once its Helm
// action has returned, deployed or failed. So the expected chart is applied when the newest
// release is of it and finished, helm-controller is not at work on the release
// (Reconciling=True, reason Progressing: it may be running a Helm action), and it has worked on
// the current generation of the spec (a change of values alone upgrades the same chart
// version again).
func helmReleaseApplied(v *view, want Revision) bool {
	if len(v.history) == 0 {
		return true // nothing released: nothing to list
	}
	latest := v.history[0]
	if !want.IsZero() && !want.Matches(v.releaseRevisions(latest)...) {
		return false
	}
	if strings.HasPrefix(latest.status, "pending") || latest.status == "uninstalling" {
		return false
	}
	if v.helmWorking() {
		return false
	}
	return v.observedGeneration == v.generation || v.lastAttemptedGeneration == v.generation
}

// attempted reports whether a Kustomization's last attempted revision is the expected one (any
// is when none is expected), directly or through the origin revision of its source's artifact.
func (v *view) attempted(want Revision) bool {
	if want.IsZero() {
		return true
	}
	revs := v.withOrigin(v.lastAttempted)
	if v.lastAttempted != "" && v.lastAttempted == v.lastApplied {
		revs = append(revs, v.lastAppliedOrigin)
	}
	return want.Matches(revs...)
}

// attempting are the revisions the object is working on or last worked on: the one last
// attempted, and the one a Kustomization's Reconciling message names (with the origin
// revisions they stand for).
func (v *view) attempting() []string {
	revs := v.withOrigin(v.lastAttempted)
	if v.lastAttempted != "" && v.lastAttempted == v.lastApplied {
		revs = append(revs, v.lastAppliedOrigin)
	}
	revs = append(revs, v.withOrigin(v.reconcilingRevision)...)
	if v.kind == KindHelmRelease {
		revs = append(revs, v.lastAttemptedDigest)
		revs = append(revs, v.chartOrigins(v.lastAttemptedDigest)...)
	}
	return nonEmpty(revs...)
}

// applied reports whether a Kustomization's last applied revision is the expected one (any
// is when none is expected): lastAppliedRevision, lastAppliedOriginRevision, or the origin of
// its source's artifact when that is the artifact applied.
func (v *view) applied(want Revision) bool {
	return want.IsZero() || want.Matches(append(v.withOrigin(v.lastApplied), v.lastAppliedOrigin)...)
}

// hasApplied reports whether the expected revision is the one last applied: a
// Kustomization's lastAppliedRevision (or its origin), a HelmRelease's newest deployed release.
func (v *view) hasApplied(want Revision) bool {
	if v.kind != KindHelmRelease {
		return v.lastApplied != "" && v.applied(want)
	}
	r, ok := v.deployed()
	return ok && want.Matches(v.releaseRevisions(r)...)
}

// withOrigin is a recorded revision with the revision its artifact was built from, when the
// source's current artifact is that revision and says so, or when a Kustomization's
// status.history records it for an attempt of that revision: kustomize-controller v1.9.5
// writes metadata {revision, originRevision} for every attempt that built (applied, failed to
// apply, prune or pass its health checks), so the origin of an OCI artifact it attempted stays
// known after its source moved on to another artifact.
func (v *view) withOrigin(rev string) []string {
	revs := []string{rev}
	if rev == "" {
		return revs
	}
	if v.src != nil && v.src.OriginRevision != "" && sameRecorded(rev, v.src.Revision) {
		revs = append(revs, v.src.OriginRevision)
	}
	if v.kind == KindKustomization {
		for _, h := range nestedMaps(v.obj.Object, "status", "history") {
			md, _ := h["metadata"].(map[string]any)
			if origin := str(md, "originRevision"); origin != "" && str(md, "revision") == rev {
				revs = append(revs, origin)
				break
			}
		}
	}
	return revs
}

// currentGeneration reports whether a condition was set while the controller worked on the
// current generation of the spec. Controllers that do not record it are taken at their word.
func (v *view) currentGeneration(c condition) bool {
	return c.observedGeneration == 0 || c.observedGeneration == v.generation
}

// releaseRevisions are the revisions a release of the history stands for: its chart version,
// its OCI digest, the attempted revision's digest when it is of the attempted chart, and the
// origin revision of an OCI chart when the source's current artifact is that chart. (The
// revision a HelmChart built from does not count: with reconcileStrategy ChartVersion, the
// default, source-controller records each new commit of its source while it keeps serving the
// chart it built before, unchanged, when the version did not change; with Revision the chart
// version carries the commit already.)
func (v *view) releaseRevisions(r release) []string {
	revs := []string{r.chartVersion, r.ociDigest}
	if v.lastAttempted == r.chartVersion {
		revs = append(revs, v.lastAttemptedDigest)
	}
	return append(revs, v.chartOrigins(r.ociDigest)...)
}

// chartOrigins is the origin revision of the source's current artifact, when it is the OCI
// chart of the given digest. helm-controller records the digest alone (sha256:…) for a chart
// at a semver tag, and the whole artifact revision (latest@sha256:…) for any other tag
// (mutateChartWithSourceRevision, v1.6.4): both name the artifact by its digest.
func (v *view) chartOrigins(ociDigest string) []string {
	src := v.src
	if src == nil || src.Revision == "" || src.Ref.Kind != "OCIRepository" || ociDigest == "" {
		return nil
	}
	p, d := splitRevision(src.Revision), splitRevision(ociDigest)
	if p.digest != "" && p.digest == d.digest && p.algo == d.algo {
		return nonEmpty(src.OriginRevision)
	}
	return nil
}

// helmWorking reports whether helm-controller is at work on the release: Reconciling=True
// with reason Progressing (ProgressingWithRetry is a failure it waits to retry).
func (v *view) helmWorking() bool {
	rc := v.cond(meta.ReconcilingCondition)
	return rc.status == string(metav1.ConditionTrue) && rc.reason == meta.ProgressingReason
}

// releasing reports whether helm-controller runs Helm's install or upgrade of the expected
// chart at the current generation, from the conditions' reasons and the status fields, not
// its words (v1.6.4, reconcile/atomic_release.go): before a release action it marks
// Reconciling=True and Ready=Unknown, both with reason Progressing; it has recorded the chart
// and generation it attempts (lastAttemptedRevision, lastAttemptedGeneration) before; and
// the action has stored no release of that chart and values yet (attemptReleased: a
// rollback or an uninstall follows a release of the attempt, a test a deployed one). It is
// an install when no release is deployed, else an upgrade. (lastAttemptedReleaseAction is
// written with the action's outcome, after it, and names the one before while it runs.)
func (v *view) releasing(want Revision) bool {
	ready := v.cond(meta.ReadyCondition)
	return v.helmWorking() && ready.status == string(metav1.ConditionUnknown) && ready.reason == meta.ProgressingReason &&
		v.lastAttempted != "" && v.attemptedChart(want) && v.lastAttemptedGeneration == v.generation && !v.attemptReleased()
}

// installing reports whether helm-controller is running Helm's install of the expected chart
// at the current generation. What an install creates is the new chart's, all of it.
func (v *view) installing(want Revision) bool {
	_, deployed := v.deployed()
	return !deployed && v.releasing(want)
}

// upgrading reports whether helm-controller is running Helm's upgrade to the expected chart
// at the current generation.
func (v *view) upgrading(want Revision) bool {
	_, deployed := v.deployed()
	return deployed && v.releasing(want)
}

// attemptedChart reports whether the chart version helm-controller last attempted is the
// expected one.
func (v *view) attemptedChart(want Revision) bool {
	return want.IsZero() || want.Matches(append([]string{v.lastAttempted, v.lastAttemptedDigest}, v.chartOrigins(v.lastAttemptedDigest)...)...)
}
