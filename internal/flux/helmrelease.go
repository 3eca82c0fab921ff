package flux

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/result"
)

// The condition types and reasons helm-controller adds to those of apis/meta. They are
// declared in github.com/fluxcd/helm-controller/api/v2 (condition_types.go) and in
// helm-controller's internal/reconcile/atomic_release.go, which this module does not import.
const (
	releasedCondition    = "Released"    // v2.ReleasedCondition
	testSuccessCondition = "TestSuccess" // v2.TestSuccessCondition
	remediatedCondition  = "Remediated"  // v2.RemediatedCondition

	installFailedReason         = "InstallFailed"         // v2.InstallFailedReason
	upgradeFailedReason         = "UpgradeFailed"         // v2.UpgradeFailedReason
	retriesExceededReason       = "RetriesExceeded"       // Stalled: remediation retries are exhausted
	missingRollbackTargetReason = "MissingRollbackTarget" // Stalled: nothing to roll back to

	// releaseStatusDeployed is the Helm release status of the release that is running.
	releaseStatusDeployed = "deployed"

	// The reasons helm-controller gives Ready=False when it cannot even attempt the chart of
	// the source's artifact (helmrelease_controller.go, before it records
	// lastAttemptedRevision): the chart cannot be loaded or mutated, or the values cannot be
	// composed.
	chartMutateErrorReason = "ChartMutateError"
	valuesErrorReason      = "ValuesError"
)

const helmController = "helm-controller"

// helmReleaseGate applies the rules of a helm.toolkit.fluxcd.io/v2 HelmRelease.
//
// helm-controller records the chart version it tries in status.lastAttemptedRevision
// (VERSION+DIGEST12 for OCI charts, with the digest in status.lastAttemptedRevisionDigest),
// the outcome of the release in Released, of the tests in TestSuccess, of a rollback or
// uninstall in Remediated, and summarizes them into Ready. It marks Stalled when its
// remediation retries are exhausted. A failure counts when Ready=False (or Stalled) agrees
// with it, and it is about the expected chart version and the current generation of the
// spec. While helm-controller is not done with a failure (Reconciling=True, not Stalled: it
// retries with reason ProgressingWithRetry, or, with reason Progressing, it has recorded a
// failed upgrade and goes on to roll it back) the failure is InProgress with its code: the
// verdict waits for the remediation to say what runs. A failure helm-controller gives up on
// is Stalled. Success counts when the newest release is deployed with the expected chart
// version.
func helmReleaseGate(ref Ref, v *view, want Revision) decision {
	if v.suspended {
		return suspendedGate(ref)
	}
	ready := v.cond(meta.ReadyCondition)
	if d, ok := refusedChart(v, ready, want); ok {
		return d
	}
	stalled := v.cond(meta.StalledCondition)
	isStalled := stalled.status == string(metav1.ConditionTrue)
	if failure, ok := helmFailure(v, stalled); ok && (isStalled || ready.status == string(metav1.ConditionFalse) || retriedTest(v, failure)) {
		return releaseFailureGate(v, want, ready, stalled, failure)
	}
	if ready.status == string(metav1.ConditionFalse) && ready.reason == meta.DependencyNotReadyReason {
		return dependencyGate(v, ready)
	}
	if ready.status != string(metav1.ConditionTrue) {
		return progressing(v, helmController)
	}
	return releasedGate(v, ready, want)
}

// releaseFailureGate decides a HelmRelease whose conditions record a failure (helmFailure)
// that Ready=False or Stalled agrees with: whether it is about the expected chart version and
// the current generation, and whether helm-controller is done with it.
func releaseFailureGate(v *view, want Revision, ready, stalled condition, failure decision) decision {
	isStalled := stalled.status == string(metav1.ConditionTrue)
	// A release failure is about the chart version attempted; a stall on the configuration
	// (an invalid CEL expression, access denied) holds for any version.
	revisionBound := !isStalled || retriesStall(stalled)
	if revisionBound && !v.attemptedChart(want) {
		return staleFailure(want, v.lastAttempted, failure)
	}
	if revisionBound && v.lastAttemptedGeneration > 0 && v.lastAttemptedGeneration < v.generation {
		// A release failure is of the generation helm-controller last attempted
		// (status.lastAttemptedGeneration), whatever the conditions say: fluxcd/pkg/runtime's
		// patch helper stamps every condition it writes with the object's generation at the
		// time of the write, so a spec changed during a failing upgrade gets the old failure
		// stamped with its new generation (helm-controller's reconcile/state.go warns of it).
		// helm-controller attempts the new generation next, and resets its failure counts.
		return staleGeneration(v, v.lastAttemptedGeneration, helmController, failure)
	}
	decided := ready // summarize stamps Ready with the generation it summarized
	if isStalled {
		decided = stalled
	}
	if v.olderGeneration(decided) {
		return staleGeneration(v, decided.observedGeneration, helmController, failure)
	}
	if rc := v.cond(meta.ReconcilingCondition); !isStalled && rc.status == string(metav1.ConditionTrue) {
		return unfinishedFailure(v, rc, failure)
	}
	return failure
}

// retriedTest reports whether failure is a failed test helm-controller counts as the
// release's failure and retries (Reconciling=True, ProgressingWithRetry), though Ready stays
// True: spec.test.ignoreFailures leaves TestSuccess out of Ready, while the remediation's
// ignoreTestFailures: false counts it (testFailureIgnored), and with upgrade.strategy
// RetryOnFailure the upgrade is tried again every retryInterval (helm-controller v1.6.4,
// reconcile/atomic_release.go).
func retriedTest(v *view, failure decision) bool {
	rc := v.cond(meta.ReconcilingCondition)
	return failure.code == result.CodeFluxTestFailed && rc.status == string(metav1.ConditionTrue) && rc.reason == meta.ProgressingWithRetryReason
}

// unfinishedFailure decides a release failure helm-controller is not done with
// (Reconciling=True, not Stalled): it retries, or it records a failed install or upgrade
// before it goes on to remediate it within the same reconciliation.
func unfinishedFailure(v *view, rc condition, failure decision) decision {
	if rc.reason == meta.ProgressingWithRetryReason && failure.code == result.CodeFluxRolledBack {
		// Remediated (rolled back, uninstalled) with remediation retries left:
		// helm-controller v1.6.4 and v1.4.3 (reconcile/atomic_release.go) remediate
		// before they requeue (MustStop after the remediation, ErrMustRequeue), and
		// try the action again at once; the history's newest release is the
		// remediation's. With finite retries it ends Stalled RetriesExceeded, Flux's own
		// answer, which the run waits for (a workload failure seen meanwhile fails at
		// once). With unlimited ones (-1) it never does: each attempt gets a window of
		// its timeout (Gate.RetryEvery).
		if retries := remediationRetries(v.obj); retries >= 0 {
			failure.verdict = result.VerdictInProgress
			failure.message = fmt.Sprintf("%s remediated the failed release and tries it again (remediation retries: %d), until it passes or stalls with its retries exhausted: %s",
				helmController, retries, failure.message)
			return failure
		}
		failure.retried = true
		failure.message = fmt.Sprintf("%s remediated the failed release and tries it again without end (remediation retries: -1): %s", helmController, failure.message)
		return failure
	}
	if !v.failedReleaseStored(failure) && (rc.reason == meta.ProgressingWithRetryReason || releaseActionFailed(failure.code)) {
		// The attempt stored no release (a template or a values schema error, objects
		// Helm may not adopt: Helm refused before it changed anything), so helm-controller
		// counts no failure and retries it with a back-off for ever, whatever the
		// remediation retries or upgrade.strategy: RetryOnFailure. Without a strategy it
		// returns the action's error to controller-runtime and leaves Reconciling as it
		// marked it before the action ("Running 'upgrade' action", Progressing), with
		// Ready False (reconcile/atomic_release.go, upgrade.go and install.go, v1.6.4);
		// while an action runs, Ready is Unknown. No workload changed to tell more: it
		// fails once it has lasted its retry window, as a Kustomization's retried failure.
		failure.retried = true
		failure.message = fmt.Sprintf("%s retries, and the attempt released nothing: %s", helmController, failure.message)
		return failure
	}
	if rc.reason == meta.ProgressingWithRetryReason && (failure.code == result.CodeFluxInstallFailed || failure.code == result.CodeFluxUpgradeFailed ||
		failure.code == result.CodeFluxTestFailed) {
		// The attempt stored a failed release, and helm-controller tries the action
		// again instead of remediating it: upgrade.strategy (install.strategy)
		// RetryOnFailure, every retryInterval (reconcile/atomic_release.go, v1.6.4
		// and v1.4.3: "retrying after %s", ErrRetryAfterInterval), or remediation
		// retries not exhausted (ErrMustRequeue). Each retry is another release of
		// the same failure; nothing tells it will pass. Its workloads are judged as
		// they run (a crash loop fails at once); the failure itself gets the retry
		// window a Kustomization's retried failure gets.
		failure.retried = true
		failure.message = fmt.Sprintf("%s retries the failed release: %s", helmController, failure.message)
		return failure
	}
	failure.verdict = result.VerdictInProgress
	if rc.reason == meta.ProgressingWithRetryReason {
		failure.message = fmt.Sprintf("%s is retrying after: %s", helmController, failure.message)
	} else {
		failure.message = fmt.Sprintf("%s is still reconciling the release after: %s", helmController, failure.message)
	}
	return failure
}

// failedReleaseStored reports whether the attempt that failed with failure stored a release:
// the history's newest is of the chart version and values attempted (attemptReleased) and,
// for a failed install or upgrade, not the deployed one. An upgrade with the same chart and
// values (a changed post-renderer or commonMetadata, a forced upgrade: helm-controller v1.6.4
// reconcile/state.go finds the release out of sync) that Helm refused leaves the deployed
// release newest; one Helm stored and that failed is newest, failed (or pending).
func (v *view) failedReleaseStored(failure decision) bool {
	if !v.attemptReleased() {
		return false
	}
	return !releaseActionFailed(failure.code) || v.history[0].status != releaseStatusDeployed
}

// releaseActionFailed reports whether code is the failure of a release action: an install or
// an upgrade.
func releaseActionFailed(code result.Code) bool {
	return code == result.CodeFluxInstallFailed || code == result.CodeFluxUpgradeFailed
}

// releasedGate decides a HelmRelease Ready=True: Current once helm-controller runs no action
// and the Released condition, the generation and the newest release of the history agree
// with the expected chart version. Its tests and a remediation run under the Ready of the
// release before them (helmRunningActionWords): a failed test may still roll it back.
func releasedGate(v *view, ready condition, want Revision) decision {
	if rc := v.cond(meta.ReconcilingCondition); v.helmWorking() {
		if m := helmRunningActionWords.FindStringSubmatch(rc.message); m != nil {
			return decision{reason: rc.reason, message: fmt.Sprintf("waiting for %s's '%s' action to finish: %s", helmController, m[1], rc.message)}
		}
	}
	if released := v.cond(releasedCondition); released.status != string(metav1.ConditionTrue) {
		return decision{reason: ready.reason, message: fmt.Sprintf("waiting for the Released condition to be True (it is %q)", released.status)}
	}
	if v.observedGeneration != v.generation {
		return decision{reason: ready.reason, message: generationPending(v, helmController)}
	}
	if len(v.history) == 0 || v.history[0].status != releaseStatusDeployed {
		status := "missing"
		if len(v.history) > 0 {
			status = fmt.Sprintf("%q with chart version %s", v.history[0].status, v.history[0].chartVersion)
		}
		return decision{reason: ready.reason, message: "waiting for the latest Helm release to be deployed; it is " + status}
	}
	if !want.Matches(v.releaseRevisions(v.history[0])...) {
		return decision{reason: ready.reason, message: staleSuccess(v.history[0].chartVersion, want)}
	}
	return decision{verdict: result.VerdictCurrent, reason: ready.reason, message: ready.message}
}

// refusedChart is the decision for a chart helm-controller cannot attempt at all, at the
// current generation: its Ready condition is then the current word, more recent than any
// failed release the other conditions still describe. Values that cannot be composed fail
// whatever the revision; a chart that cannot be loaded or mutated fails when Flux's message
// names the expected revision (or none is expected), and is waited on otherwise: the source
// may not have the expected revision yet.
func refusedChart(v *view, ready condition, want Revision) (decision, bool) {
	if ready.status != string(metav1.ConditionFalse) || v.olderGeneration(ready) {
		return decision{}, false
	}
	var code result.Code
	switch {
	case ready.reason == valuesErrorReason:
		// A ConfigMap or Secret of valuesFrom (or its key) that is not there yet may be
		// created by an operator (External Secrets, Sealed Secrets) in a moment; helm-controller
		// retries. Values that do not parse fail at once, unless an object of valuesFrom changed
		// after the failure (assess holds them: helm-controller composes them again).
		d := decision{verdict: result.VerdictFailed, code: result.CodeFluxValuesFailed, reason: ready.reason,
			message: "the values cannot be composed: " + ready.message}
		switch valuesWording(ready.message) {
		case retriedWords:
			d.retried = true
		case unrecognised:
			d.verdict = result.VerdictInProgress
			d.message = joinSentences(d.message, unrecognisedNote(helmController, "v1.6.4 with fluxcd/pkg/chartutil v1.27.2"))
		}
		return d, true
	case ready.reason == chartMutateErrorReason,
		ready.reason == meta.ArtifactFailedReason && chartLoadWords.MatchString(ready.message):
		code = result.CodeFluxChartFailed
	default:
		return decision{}, false
	}
	// helm-controller loads the chart of the source's current artifact, before it records
	// lastAttemptedRevision: the chart refused is the source's, when the run reads it.
	d := decision{code: code, reason: ready.reason, message: "the chart cannot be applied: " + ready.message}
	switch {
	case want.IsZero() || (v.src != nil && v.src.Done && want.Matches(v.src.Revisions()...)):
		d.verdict = result.VerdictFailed
	case v.src == nil:
		d.message = fmt.Sprintf("waiting for %s; helm-controller cannot apply the source's chart, and the source was not read to tell which: %s", ShortRevision(want.String()), ready.message)
	default:
		d.message = fmt.Sprintf("waiting for %s; helm-controller cannot apply the source's chart (%s): %s", ShortRevision(want.String()), ShortRevision(v.src.Revision), ready.message)
	}
	return d, true
}

// attemptReleased reports whether helm-controller's last attempt stored a Helm release: the
// newest release of the history is of the chart and values it attempted
// (lastAttemptedRevision, lastAttemptedConfigDigest). An upgrade that fails to render stores
// none (helm-controller v1.6.4 reconcile/upgrade.go: "we did not store a release, as this
// does not affect state and the caller should e.g. retry").
func (v *view) attemptReleased() bool {
	if len(v.history) == 0 || v.lastAttempted == "" {
		return false
	}
	r := v.history[0]
	return r.chartVersion == v.lastAttempted && (v.lastAttemptedConfigDigest == "" || r.configDigest == v.lastAttemptedConfigDigest)
}

// retriesStall reports whether helm-controller stalled because remediation ran out: the
// failed release explains the stall better than the stall does.
func retriesStall(stalled condition) bool {
	return stalled.reason == retriesExceededReason || stalled.reason == missingRollbackTargetReason
}

// helmRetryInterval is how soon helm-controller tries a release action again after a failure
// it retries (code, the failure's), and a note when the words that tell it were not
// recognised:
//   - under strategy RetryOnFailure, the action's strategy.retryInterval (5m when unset; api/v2
//     GetRetry, GetRetryInterval; the action is status.lastAttemptedReleaseAction, the
//     upgrade's when unknown);
//   - a remediated release with unlimited remediation retries is tried again at once, and the
//     attempt takes up to the action's timeout (spec.<action>.timeout, else spec.timeout, else
//     5m: atomic_release.go timeoutForAction, api/v2 GetTimeout);
//   - else Reconciling says: helm-controller v1.6.4 and v1.4.3 (atomic_release.go) write
//     ProgressingWithRetry with Ready's own message when they requeue at once
//     (ErrMustRequeue: zero), and "retrying after 5m0s" under RetryOnFailure, which
//     helm-controller v1.6's DefaultToRetryOnFailure feature gate makes the default without
//     a spec field. Other words are not recognised: RetryOnFailure's documented default,
//     5m, is assumed, and the note says so.
func helmRetryInterval(obj *unstructured.Unstructured, v *view, code result.Code) (time.Duration, string) {
	action := "upgrade"
	if last, _, _ := unstructured.NestedString(obj.Object, "status", "lastAttemptedReleaseAction"); last == "install" {
		action = last
	}
	if name, _, _ := unstructured.NestedString(obj.Object, "spec", action, "strategy", "name"); name == retryOnFailureStrategy {
		if iv, _, _ := unstructured.NestedString(obj.Object, "spec", action, "strategy", "retryInterval"); iv != "" {
			if d, err := time.ParseDuration(iv); err == nil && d > 0 {
				return d, ""
			}
		}
		return defaultHelmRetryInterval, ""
	}
	if code == result.CodeFluxRolledBack && remediationRetries(obj) < 0 {
		return actionTimeout(obj, action), ""
	}
	reconciling := v.cond(meta.ReconcilingCondition)
	if reconciling.reason != meta.ProgressingWithRetryReason {
		return 0, ""
	}
	if reconciling.message == v.cond(meta.ReadyCondition).message {
		return 0, "" // requeued at once
	}
	if m := helmRetryingAfterWords.FindStringSubmatch(reconciling.message); m != nil {
		if d, err := time.ParseDuration(m[1]); err == nil && d > 0 {
			return d, ""
		}
	}
	return defaultHelmRetryInterval, fmt.Sprintf("%s's words of its retry were not recognised (read from v1.6.4): its documented default interval, %s, is assumed",
		helmController, defaultHelmRetryInterval)
}

// defaultHelmRetryInterval is api/v2's default strategy retryInterval, and the default
// spec.timeout of a release action.
const defaultHelmRetryInterval = 5 * time.Minute

// remediationRetries is spec.<action>.remediation.retries of the action helm-controller last
// attempted (status.lastAttemptedReleaseAction, the upgrade's when unknown): 0 when unset, -1
// for unlimited.
func remediationRetries(obj *unstructured.Unstructured) int64 {
	action := "upgrade"
	if last, _, _ := unstructured.NestedString(obj.Object, "status", "lastAttemptedReleaseAction"); last == "install" {
		action = last
	}
	return int64Field(obj.Object, "spec", action, "remediation", "retries")
}

// actionTimeout is how long a release action may take: spec.<action>.timeout, else
// spec.timeout, else 5m.
func actionTimeout(obj *unstructured.Unstructured, action string) time.Duration {
	for _, path := range [][]string{{"spec", action, "timeout"}, {"spec", "timeout"}} {
		if s, _, _ := unstructured.NestedString(obj.Object, path...); s != "" {
			if d, err := time.ParseDuration(s); err == nil && d > 0 {
				return d
			}
		}
	}
	return defaultHelmRetryInterval
}

// retryOnFailureStrategy is api/v2 ActionStrategyRetryOnFailure.
const retryOnFailureStrategy = "RetryOnFailure"

// testFailureIgnored reports whether helm-controller ignores a failed test of a HelmRelease
// altogether. Two settings say it (helm-controller v1.6.4): spec.test.ignoreFailures leaves
// TestSuccess out of Ready (reconcile/release.go summarize); the remediation of the action
// last attempted (status.lastAttemptedReleaseAction, install or upgrade: api/v2
// GetActiveRemediation) decides whether it is a failure of the release, counted and
// remediated, by its ignoreTestFailures, spec.test.ignoreFailures when unset
// (MustIgnoreTestFailures; reconcile/state.go, test.go). With no such action, no remediation
// counts it. So with test.ignoreFailures and upgrade.remediation.ignoreTestFailures: false a
// failed test leaves Ready True and rolls the upgrade back.
func testFailureIgnored(obj *unstructured.Unstructured) bool {
	ignore, _, _ := unstructured.NestedBool(obj.Object, "spec", "test", "ignoreFailures")
	if !ignore {
		return false
	}
	last, _, _ := unstructured.NestedString(obj.Object, "status", "lastAttemptedReleaseAction")
	if last != "install" && last != "upgrade" {
		return true
	}
	remediation, found, _ := unstructured.NestedBool(obj.Object, "spec", last, "remediation", "ignoreTestFailures")
	return !found || remediation
}

// helmFailure finds the failure the conditions record, the most specific first: a stall on
// the configuration, a rollback (the new version is not running), a failed install or
// upgrade, failed tests (unless helm-controller ignores them: testFailureIgnored), then a
// stall on retries. A stall on retries is added to the message of the failure it stopped
// retrying.
func helmFailure(v *view, stalled condition) (decision, bool) {
	isStalled := stalled.status == string(metav1.ConditionTrue)
	if isStalled && !retriesStall(stalled) {
		return decision{verdict: result.VerdictFailed, code: result.CodeFluxStalled, reason: stalled.reason, message: "stalled: " + stalled.message}, true
	}
	released := v.cond(releasedCondition)
	exhausted := ""
	if isStalled {
		exhausted = " (" + stalled.message + ")"
	}
	if rem := v.cond(remediatedCondition); rem.status == string(metav1.ConditionTrue) {
		msg := fmt.Sprintf("chart version %s is not running, helm-controller remediated the release (%s: %s)", orUnknown(v.lastAttempted), rem.reason, rem.message)
		if released.status == string(metav1.ConditionFalse) {
			msg += fmt.Sprintf(" after %s: %s", released.reason, released.message)
		}
		return decision{verdict: result.VerdictFailed, code: result.CodeFluxRolledBack, reason: rem.reason, message: msg + exhausted}, true
	}
	if released.status == string(metav1.ConditionFalse) {
		switch released.reason {
		case installFailedReason:
			return decision{verdict: result.VerdictFailed, code: result.CodeFluxInstallFailed, reason: released.reason, message: released.message + exhausted}, true
		case upgradeFailedReason:
			return decision{verdict: result.VerdictFailed, code: result.CodeFluxUpgradeFailed, reason: released.reason, message: released.message + exhausted}, true
		}
	}
	if test := v.cond(testSuccessCondition); test.status == string(metav1.ConditionFalse) && !v.testFailureIgnored {
		return decision{verdict: result.VerdictFailed, code: result.CodeFluxTestFailed, reason: test.reason, message: test.message + exhausted}, true
	}
	if isStalled {
		return decision{verdict: result.VerdictFailed, code: result.CodeFluxStalled, reason: stalled.reason, message: "stalled: " + stalled.message}, true
	}
	return decision{}, false
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// releaseName is the name and namespace of a HelmRelease's Helm release, as helm-controller
// derives them (api/v2 GetReleaseName, GetReleaseNamespace; release.ShortenName): spec.releaseName,
// else [targetNamespace-]name, shortened to 53 characters with a hash; spec.targetNamespace,
// else the HelmRelease's namespace.
func releaseName(obj *unstructured.Unstructured) (name, namespace string) {
	name, _, _ = unstructured.NestedString(obj.Object, "spec", "releaseName")
	namespace, _, _ = unstructured.NestedString(obj.Object, "spec", "targetNamespace")
	if name == "" {
		name = obj.GetName()
		if namespace != "" {
			name = namespace + "-" + name
		}
	}
	if namespace == "" {
		namespace = obj.GetNamespace()
	}
	const maxLength, shortHashLength = 53, 12
	if len(name) > maxLength {
		sum := fmt.Sprintf("%x", sha256.Sum256([]byte(name)))
		name = name[:maxLength-(shortHashLength+1)] + "-" + sum[:shortHashLength]
	}
	return name, namespace
}

// HealthExprsApply reports whether a Flux object's controller judges the objects it applied
// by its spec.healthCheckExprs. kustomize-controller always does (its health checks read
// them). helm-controller v1.6.4 hands them to the kstatus waiter it builds for Helm
// (internal/controller/helmrelease_controller.go, cel.NewStatusReader; internal/action/wait.go):
// only for the action that made the release (status.lastAttemptedReleaseAction; install and
// upgrade both when unknown) when that action waits (not spec.<action>.disableWait, which is
// Helm's hook-only strategy) and with the poller strategy (spec.waitStrategy.name poller, or
// none: the default unless helm-controller runs with the UseHelm3Defaults feature gate, which
// no object tells). With spec.waitStrategy.name legacy Helm's own wait judges them, without
// the expressions. disableWaitForJobs changes nothing: Wait and WaitWithJobs both read them.
// helm-controller v1.4.3 has no spec.healthCheckExprs (its CRD prunes the field). It says
// what Flux itself checked, never whether the run judges by them: the run always does.
func HealthExprsApply(kind Kind, obj *unstructured.Unstructured) bool {
	if kind != KindHelmRelease {
		return true
	}
	if strategy, _, _ := unstructured.NestedString(obj.Object, "spec", "waitStrategy", "name"); strategy == "legacy" {
		return false
	}
	for _, action := range releaseActions(obj) {
		if off, _, _ := unstructured.NestedBool(obj.Object, "spec", action, "disableWait"); off {
			return false
		}
	}
	return true
}

// releaseActions are the actions whose settings made a HelmRelease's release:
// status.lastAttemptedReleaseAction (helm-controller v1.6), both install and upgrade when it
// is not recorded.
func releaseActions(obj *unstructured.Unstructured) []string {
	if last, _, _ := unstructured.NestedString(obj.Object, "status", "lastAttemptedReleaseAction"); last == "install" || last == "upgrade" {
		return []string{last}
	}
	return []string{"install", "upgrade"}
}

// crdsSkippedBy says which of a HelmRelease's settings kept helm-controller from creating the
// CRDs of its chart's crds/ directory ("spec.upgrade.crds: Skip"), "" when it creates those
// that do not exist. helm-controller v1.6.4 lists every CRD of the chart in status.inventory
// whatever the policy (internal/reconcile/release.go observeInventory, inventory.AddCRDs) but
// applies them before the release only when the policy of the action is not Skip
// (internal/action/crds.go applyCRDs; install.go reads spec.install.crds, upgrade.go
// spec.upgrade.crds). An unset policy is Create for both (crdPolicyOrDefault, DefaultCRDPolicy),
// though the API's comment says Skip for the upgrade; the deprecated spec.install.skipCRDs is
// not read. A rollback keeps the upgrade's record: the upgrade applied the CRDs before it
// failed. The action is status.lastAttemptedReleaseAction; when it is not recorded, only both
// policies Skip tell.
func crdsSkippedBy(obj *unstructured.Unstructured) string {
	actions := releaseActions(obj)
	for _, action := range actions {
		if policy, _, _ := unstructured.NestedString(obj.Object, "spec", action, "crds"); policy != "Skip" {
			return ""
		}
	}
	fields := make([]string, len(actions))
	for i, action := range actions {
		fields[i] = "spec." + action + ".crds"
	}
	return strings.Join(fields, " and ") + ": Skip"
}
