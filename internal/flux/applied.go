package flux

import (
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Reconciling messages that say what a controller is doing now.
const (
	// kustomize-controller patches the new inventory into the status just before it writes
	// this message: the objects listed from then on are the revision's, applied.
	healthCheckingPrefix = "Running health checks for revision "
	// helm-controller runs a Helm action (install, upgrade, rollback, test, uninstall) while
	// its Reconciling message reads "Running 'upgrade' action with timeout of 5m0s". It records
	// the new release in status.history only when the action has returned.
	helmActionPrefix = "Running '"
)

// appliedRules holds, per kind, whether the objects a Flux object lists and the workloads
// they run are those of the expected revision (of the revision last attempted when none is
// expected). Only then may a workload's failure fail the rollout: before, the objects are
// the previous revision's, which the expected one may be fixing.
var appliedRules = map[Kind]func(*view, Revision) bool{
	KindKustomization: kustomizationApplied,
	KindHelmRelease:   helmReleaseApplied,
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
		v.currentGeneration(rc) && strings.HasPrefix(rc.message, healthCheckingPrefix) {
		return true
	}
	ready := v.cond(meta.ReadyCondition)
	return ready.status == string(metav1.ConditionFalse) && v.currentGeneration(ready) &&
		(ready.reason == meta.HealthCheckFailedReason || ready.reason == meta.PruneFailedReason)
}

// helmReleaseApplied: helm-controller records a release in status.history once its Helm
// action has returned, deployed or failed. So the expected chart is applied when the newest
// release is of it and finished, no Helm action is running, and the controller has worked on
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
	if rc := v.cond(meta.ReconcilingCondition); rc.status == string(metav1.ConditionTrue) && strings.HasPrefix(rc.message, helmActionPrefix) {
		return false
	}
	return v.observedGeneration == v.generation || v.lastAttemptedGeneration == v.generation
}

// attempted reports whether a Kustomization's last attempted revision is the expected one (any
// is when none is expected), directly or through the origin revision of its source's artifact.
func (v *view) attempted(want Revision) bool {
	return want.IsZero() || want.Matches(v.withOrigin(v.lastAttempted)...)
}

// applied reports whether a Kustomization's last applied revision is the expected one (any
// is when none is expected): lastAppliedRevision, lastAppliedOriginRevision, or the origin of
// its source's artifact when that is the artifact applied.
func (v *view) applied(want Revision) bool {
	return want.IsZero() || want.Matches(append(v.withOrigin(v.lastApplied), v.lastAppliedOrigin)...)
}

// withOrigin is a recorded revision with the revision its artifact was built from, when the
// source's current artifact is that revision and says so.
func (v *view) withOrigin(rev string) []string {
	if v.src != nil && rev != "" && v.src.OriginRevision != "" && sameRecorded(rev, v.src.Revision) {
		return []string{rev, v.src.OriginRevision}
	}
	return []string{rev}
}

// currentGeneration reports whether a condition was set while the controller worked on the
// current generation of the spec. Controllers that do not record it are taken at their word.
func (v *view) currentGeneration(c condition) bool {
	return c.observedGeneration == 0 || c.observedGeneration == v.generation
}

// releaseRevisions are the revisions a release of the history stands for: its chart version,
// its OCI digest, the attempted revision's digest when it is of the attempted chart, and what
// the chart was built from when the source's current artifact is that chart: an OCI
// artifact's origin revision, or the revision a HelmChart built it from (once it is done
// building: it records the revision it builds from before it has built).
func (v *view) releaseRevisions(r release) []string {
	revs := []string{r.chartVersion, r.ociDigest}
	if v.lastAttempted == r.chartVersion {
		revs = append(revs, v.lastAttemptedDigest)
	}
	return append(revs, v.chartOrigins(r.chartVersion, r.ociDigest)...)
}

// chartOrigins are the revisions the source's current artifact was built from, when it is the
// chart of the given version and OCI digest.
func (v *view) chartOrigins(chartVersion, ociDigest string) []string {
	src := v.src
	if src == nil || src.Revision == "" {
		return nil
	}
	switch src.Ref.Kind {
	case "OCIRepository":
		if p := splitRevision(src.Revision); ociDigest != "" && p.digest != "" && p.algo+":"+p.digest == ociDigest {
			return nonEmpty(src.OriginRevision)
		}
	case "HelmChart":
		if chartVersion == src.Revision && src.Done {
			return nonEmpty(src.BuiltFrom)
		}
	}
	return nil
}

// attemptedChart reports whether the chart version helm-controller last attempted is the
// expected one.
func (v *view) attemptedChart(want Revision) bool {
	return want.IsZero() || want.Matches(append([]string{v.lastAttempted, v.lastAttemptedDigest}, v.chartOrigins(v.lastAttempted, v.lastAttemptedDigest)...)...)
}
