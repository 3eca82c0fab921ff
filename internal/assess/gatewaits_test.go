package assess

import (
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

const (
	shaC = "ccccccc3333333333333333333333333333333cc"
	revC = "main@sha1:" + shaC
)

// gitRepoAt is GitRepository flux-system/app serving rev.
func gitRepoAt(rev string) string {
	return strings.Replace(gitRepo(), `revision: "`+revB+`"`, `revision: "`+rev+`"`, 1)
}

// notReadyDeployment is Deployment shop/web at generation 3, its controller there too, its
// replica not ready.
func notReadyDeployment() string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, generation: 3}
spec: {replicas: 1}
status: {observedGeneration: 3, replicas: 1, updatedReplicas: 0, readyReplicas: 0, availableReplicas: 0}`
}

// TestSupersededAfterApply: a revision Flux applied before the source moved on is done, as
// Flux said (lastAppliedRevision), whether or not the run saw the source move, when Flux
// waited for its workloads (spec.wait, health checks of each); without that wait they were
// never judged, and the newer revision's replace them: Unverified. One it never applied will
// not be, which only a move the run saw tells.
func TestSupersededAfterApply(t *testing.T) {
	t.Parallel()
	// app applied applied, and works on attempting (kustomize-controller records
	// lastAttemptedRevision before it builds).
	app := func(applied, attempting string) string {
		return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, generation: 2}
spec: {sourceRef: {kind: GitRepository, name: app}, wait: true}
status:
  observedGeneration: 2
  lastAppliedRevision: "` + applied + `"
  lastAttemptedRevision: "` + attempting + `"
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: "Building manifests for revision ` + attempting + ` with a timeout of 5m0s", observedGeneration: 2}
  - {type: Ready, status: Unknown, reason: Progressing, message: "Reconciliation in progress", observedGeneration: 2}
  inventory:
    entries: [{id: shop_web_apps_Deployment, v: v1}]`
	}
	later := fixtureNow.Add(time.Minute)
	// building waits while kustomize-controller builds C.
	building := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "Progressing"}, Says: []string{"Building manifests for revision " + revC}}
	unverified := expected{Outcome: outcome{Verdict: result.VerdictUnverified, Code: result.CodeFluxSupersededUnverified, Reason: "Superseded"},
		Says: []string{"superseded before its workloads were verified"}}
	noWait := func(applied, attempting string) string {
		return strings.Replace(app(applied, attempting), ", wait: true}", "}", 1)
	}
	healthChecked := func(applied, attempting string) string {
		return strings.Replace(app(applied, attempting), ", wait: true}", ", healthChecks: [{apiVersion: apps/v1, kind: Deployment, name: web, namespace: shop}]}", 1)
	}
	runFixtureCases(t, []fixtureCase{
		{name: "applied B, C started before the run looked", looks: []fixtureLook{
			{docs: []string{app(revB, revC), gitRepoAt(revB), deployment("Deployment", 3, 3)}, want: building},
			{docs: []string{app(revB, revC), gitRepoAt(revC), deployment("Deployment", 3, 3)}, at: later, want: expected{Outcome: current}},
		}},
		// The source serves C at the first look: no move is seen, but lastAppliedRevision
		// says Flux finished B before it started C.
		{name: "applied B, C started before the run first looked", looks: []fixtureLook{
			{docs: []string{app(revB, revC), gitRepoAt(revC), deployment("Deployment", 3, 3)}, want: expected{Outcome: current}},
		}},
		{name: "applied B without spec.wait, C started before the run looked: B's workloads never judged", looks: []fixtureLook{
			{docs: []string{noWait(revB, revC), gitRepoAt(revB), deployment("Deployment", 3, 3)}, want: building},
			{docs: []string{noWait(revB, revC), gitRepoAt(revC), deployment("Deployment", 3, 3)}, at: later, want: unverified},
		}},
		{name: "applied B without spec.wait, C started before the run first looked", looks: []fixtureLook{
			{docs: []string{noWait(revB, revC), gitRepoAt(revC), deployment("Deployment", 3, 3)}, want: unverified},
		}},
		{name: "applied B with health checks of every object, C started before the run first looked", looks: []fixtureLook{
			{docs: []string{healthChecked(revB, revC), gitRepoAt(revC), deployment("Deployment", 3, 3)}, want: expected{Outcome: current}},
		}},
		{name: "A applied, C started before the run first looked: only a move tells", looks: []fixtureLook{
			{docs: []string{app(revA, revC), gitRepoAt(revC), deployment("Deployment", 3, 3)}, want: building},
		}},
		{name: "A applied, C started: B will not be applied", looks: []fixtureLook{
			{docs: []string{app(revA, revC), gitRepoAt(revB), deployment("Deployment", 3, 3)}, want: building},
			{docs: []string{app(revA, revC), gitRepoAt(revC), deployment("Deployment", 3, 3)}, at: later,
				want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxRevisionSuperseded, Reason: "Superseded"}}},
		}},
	})
}

// TestHealthCheckRetry: failed health checks of a Kustomization none of whose objects failed
// wait for kustomize-controller's next retry, which turns it Ready once they are Current;
// past that retry they fail.
func TestHealthCheckRetry(t *testing.T) {
	t.Parallel()
	failedAt := fixtureNow.Add(-30 * time.Second)
	app := `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, generation: 2}
spec: {sourceRef: {kind: GitRepository, name: app}, interval: 10m, retryInterval: 1m, wait: true, timeout: 30s}
status:
  observedGeneration: 2
  lastAppliedRevision: "` + revA + `"
  lastAttemptedRevision: "` + revB + `"
  conditions:
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "Running health checks for revision ` + revB + ` with a timeout of 30s", observedGeneration: 2}
  - {type: Ready, status: "False", reason: HealthCheckFailed, observedGeneration: 2, lastTransitionTime: "` + failedAt.Format(time.RFC3339) + `",
     message: "health check failed after 30.004s: timeout waiting for: [Deployment/shop/web status: 'InProgress']"}
  inventory:
    entries: [{id: shop_web_apps_Deployment, v: v1}, {id: shop_web__Service, v: v1}]`
	healthFailed := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxHealthCheckFailed, Reason: "HealthCheckFailed"}}
	waiting := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxHealthCheckFailed, Reason: "HealthCheckFailed"}}
	retry := failedAt.Add(time.Minute + 6*time.Second + 30*time.Second)
	allCurrent := []string{app, gitRepoAt(revB), deployment("Deployment", 3, 3), service}
	notReady := []string{app, gitRepoAt(revB), notReadyDeployment(), service}
	// notReadyYet waits for the Deployment.
	notReadyYet := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "InProgress"}, Says: []string{"waiting for Deployment/shop/web"}}
	healthy := []string{healthyApp(app), gitRepoAt(revB), deployment("Deployment", 3, 3), service}
	runFixtureCases(t, []fixtureCase{
		{name: "every object Current: waits for the retry, fails after it", looks: []fixtureLook{
			{docs: allCurrent, want: waiting},
			{docs: allCurrent, at: retry.Add(time.Second), want: healthFailed},
		}},
		{name: "a Deployment that turns ready after spec.timeout: waits, Current at the retry", looks: []fixtureLook{
			{docs: notReady, want: notReadyYet},
			{docs: healthy, at: retry.Add(-time.Second), want: expected{Outcome: current}},
		}},
		{name: "a Deployment still not ready at the retry: fails", looks: []fixtureLook{
			{docs: notReady, want: notReadyYet},
			{docs: notReady, at: retry.Add(time.Second), want: healthFailed},
		}},
		// Without the workloads nothing says whether an object failed: kustomize-controller's
		// retry (RequeueAfter: GetRetryInterval()) decides, as it does with them.
		{name: "workloads false: waits for the retry, fails after it", noWorkloads: true, looks: []fixtureLook{
			{docs: notReady, want: waiting},
			{docs: notReady, at: retry.Add(-time.Second), want: waiting},
			{docs: notReady, at: retry.Add(time.Second), want: healthFailed},
		}},
		{name: "workloads false: Current once the retry finds the objects ready", noWorkloads: true, looks: []fixtureLook{
			{docs: notReady, want: waiting},
			{docs: healthy, at: retry.Add(-time.Second), want: expected{Outcome: current}},
		}},
	})
}

// healthyApp is the Kustomization app of TestHealthCheckRetry once kustomize-controller's
// retry found its objects healthy: Ready on revB.
func healthyApp(failed string) string {
	ready := strings.Replace(failed, `lastAppliedRevision: "`+revA+`"`, `lastAppliedRevision: "`+revB+`"`, 1)
	return ready[:strings.Index(ready, "  conditions:")] + `  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: ` + revB + `", observedGeneration: 2}
  inventory:
    entries: [{id: shop_web_apps_Deployment, v: v1}, {id: shop_web__Service, v: v1}]`
}

// TestHelmRetryOnFailure: a failed release helm-controller tries again instead of remediating
// it (upgrade.strategy RetryOnFailure) waits its retry window, then for helm-controller's
// retry at the strategy's retryInterval, and fails with flux-upgrade-failed once a retry
// failed too or the retry is past, as a Kustomization's retried failure does.
func TestHelmRetryOnFailure(t *testing.T) {
	t.Parallel()
	root := flux.Ref{Kind: flux.KindHelmRelease, Namespace: "shop", Name: "web"}
	chart := "1.1.0+" + dig2[:12]
	hr := func(failedAt time.Time) string {
		const msg = "Helm upgrade failed for release shop/web with chart web@1.1.0: context deadline exceeded"
		at := failedAt.Format(time.RFC3339)
		return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: shop, generation: 2}
spec:
  interval: 10m
  chartRef: {kind: OCIRepository, name: web}
  upgrade: {strategy: {name: RetryOnFailure, retryInterval: 5m}}
status:
  observedGeneration: 1
  lastAttemptedGeneration: 2
  lastAttemptedRevision: "` + chart + `"
  lastAttemptedRevisionDigest: "sha256:` + dig2 + `"
  lastAttemptedReleaseAction: upgrade
  lastAttemptedConfigDigest: "sha256:` + dig1 + `"
  conditions:
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "retrying after 5m0s", observedGeneration: 2, lastTransitionTime: "` + at + `"}
  - {type: Ready, status: "False", reason: UpgradeFailed, message: "` + msg + `", observedGeneration: 2, lastTransitionTime: "` + at + `"}
  - {type: Released, status: "False", reason: UpgradeFailed, message: "` + msg + `", observedGeneration: 2, lastTransitionTime: "` + at + `"}
  history:
  - {name: web, namespace: shop, version: 3, status: failed, chartName: web, chartVersion: "` + chart + `", ociDigest: "sha256:` + dig2 + `", configDigest: "sha256:` + dig1 + `"}
  - {name: web, namespace: shop, version: 2, status: deployed, chartName: web, chartVersion: "1.0.0+` + dig1[:12] + `", ociDigest: "sha256:` + dig1 + `", configDigest: "sha256:` + dig1 + `"}
  inventory:
    entries: [{id: shop_web_apps_Deployment, v: v1}]`
	}
	repo := strings.Replace(ociRepo(), `revision: "1.0.0@sha256:`+dig1+`"`, `revision: "1.1.0@sha256:`+dig2+`"`, 1)
	failedAt := fixtureNow.Add(-30 * time.Second)
	retrying := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxUpgradeFailed, Reason: "UpgradeFailed"}}
	failed := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxUpgradeFailed, Reason: "UpgradeFailed"}}
	// waitsThenFails are the looks of a release that failed at failedAt, given as hr, and
	// was not retried since: it waits for helm-controller's retry, and fails past it.
	waitsThenFails := func(hr string) []fixtureLook {
		docs := []string{hr, repo, deployment("Deployment", 3, 3)}
		return []fixtureLook{
			{docs: docs, want: retrying},
			{docs: docs, at: fixtureNow.Add(3 * time.Minute), want: retrying},
			{docs: docs, at: failedAt.Add(5*time.Minute + 30*time.Second + 31*time.Second), want: failed},
		}
	}
	// helm-controller's DefaultToRetryOnFailure feature gate: no strategy in the spec, only
	// its words tell the interval; words not recognised wait for the documented default, 5m.
	byDefault := func(failedAt time.Time, words string) string {
		doc := strings.Replace(hr(failedAt), "  upgrade: {strategy: {name: RetryOnFailure, retryInterval: 5m}}\n", "", 1)
		return strings.Replace(doc, `message: "retrying after 5m0s"`, `message: "`+words+`"`, 1)
	}
	again := fixtureNow.Add(4*time.Minute + 30*time.Second)
	resources := []flux.Ref{root}
	runFixtureCases(t, []fixtureCase{
		{name: "not retried since: waits for helm-controller's retry, fails past it", resources: resources, revision: "1.1.0",
			looks: waitsThenFails(hr(failedAt))},
		{name: "RetryOnFailure by default, by its words: waits for helm-controller's retry, fails past it", resources: resources, revision: "1.1.0",
			looks: waitsThenFails(byDefault(failedAt, "retrying after 5m0s"))},
		{name: "RetryOnFailure by default, its words unrecognised: waits for helm-controller's retry, fails past it", resources: resources, revision: "1.1.0",
			looks: waitsThenFails(byDefault(failedAt, "will retry in 5m0s"))},
		{name: "retried and failed again past the window: fails", resources: resources, revision: "1.1.0", looks: []fixtureLook{
			{docs: []string{hr(failedAt), repo, deployment("Deployment", 3, 3)}, want: retrying},
			{docs: []string{hr(again), repo, deployment("Deployment", 3, 3)}, at: again.Add(10 * time.Second), want: failed},
		}},
	})
}

// TestHelmRemediationRetries: helm-controller remediates a failed upgrade before it tries
// again under remediation retries (a rollback at history[0], Remediated=True, Reconciling
// ProgressingWithRetry). With finite retries the run waits for Flux's own answer, Stalled
// RetriesExceeded, whatever retry-grace; with unlimited ones (-1) each attempt gets its
// timeout (5m) plus a margin, then it fails with flux-rolled-back. (The workloads of the
// next attempt are judged as it runs, Gate.Upgrading, as before.)
func TestHelmRemediationRetries(t *testing.T) {
	t.Parallel()
	root := flux.Ref{Kind: flux.KindHelmRelease, Namespace: "shop", Name: "web"}
	chart := "1.1.0+" + dig2[:12]
	old := "1.0.0+" + dig1[:12]
	hr := func(retries string, failedAt time.Time, stalled bool) string {
		const upgradeMsg = "Helm upgrade failed for release shop/web with chart web@1.1.0: context deadline exceeded"
		rollbackMsg := "Helm rollback to previous release shop/web.v2 with chart web@" + old + " succeeded"
		at := failedAt.Format(time.RFC3339)
		rc := `  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "` + rollbackMsg + `", observedGeneration: 2, lastTransitionTime: "` + at + `"}`
		if stalled {
			rc = `  - {type: Stalled, status: "True", reason: RetriesExceeded, message: "Failed to upgrade after 4 attempt(s)", observedGeneration: 2, lastTransitionTime: "` + at + `"}`
		}
		return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: shop, generation: 2}
spec:
  interval: 10m
  chartRef: {kind: OCIRepository, name: web}
  upgrade: {remediation: {retries: ` + retries + `}}
status:
  observedGeneration: 1
  lastAttemptedGeneration: 2
  lastAttemptedRevision: "` + chart + `"
  lastAttemptedRevisionDigest: "sha256:` + dig2 + `"
  lastAttemptedReleaseAction: upgrade
  lastAttemptedConfigDigest: "sha256:` + dig1 + `"
  conditions:
` + rc + `
  - {type: Ready, status: "False", reason: RollbackSucceeded, message: "` + rollbackMsg + `", observedGeneration: 2, lastTransitionTime: "` + at + `"}
  - {type: Released, status: "False", reason: UpgradeFailed, message: "` + upgradeMsg + `", observedGeneration: 2, lastTransitionTime: "` + at + `"}
  - {type: Remediated, status: "True", reason: RollbackSucceeded, message: "` + rollbackMsg + `", observedGeneration: 2, lastTransitionTime: "` + at + `"}
  history:
  - {name: web, namespace: shop, version: 4, action: rollback, status: deployed, chartName: web, chartVersion: "` + old + `", ociDigest: "sha256:` + dig1 + `", configDigest: "sha256:` + dig1 + `"}
  - {name: web, namespace: shop, version: 3, action: upgrade, status: failed, chartName: web, chartVersion: "` + chart + `", ociDigest: "sha256:` + dig2 + `", configDigest: "sha256:` + dig1 + `"}
  - {name: web, namespace: shop, version: 2, action: upgrade, status: superseded, chartName: web, chartVersion: "` + old + `", ociDigest: "sha256:` + dig1 + `", configDigest: "sha256:` + dig1 + `"}
  inventory:
    entries: [{id: shop_web_apps_Deployment, v: v1}]`
	}
	repo := strings.Replace(ociRepo(), `revision: "1.0.0@sha256:`+dig1+`"`, `revision: "1.1.0@sha256:`+dig2+`"`, 1)
	failedAt := fixtureNow.Add(-30 * time.Second)
	again := fixtureNow.Add(4 * time.Minute)
	deploy := deployment("Deployment", 3, 3)
	retrying := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxRolledBack, Reason: "RollbackSucceeded"}}
	rolledBack := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxRolledBack, Reason: "RollbackSucceeded"}}
	tests := []struct {
		name  string
		looks []fixtureLook
	}{
		{"retries left: waits past retry-grace for helm-controller's answer", []fixtureLook{
			{docs: []string{hr("3", failedAt, false), repo, deploy}, want: retrying},
			{docs: []string{hr("3", failedAt, false), repo, deploy}, at: fixtureNow.Add(30 * time.Minute), want: retrying},
		}},
		{"retries exhausted: fails with Flux's answer", []fixtureLook{
			{docs: []string{hr("3", failedAt, false), repo, deploy}, want: retrying},
			{docs: []string{hr("3", again, true), repo, deploy}, at: again.Add(time.Second), want: rolledBack},
		}},
		{"unlimited retries: an attempt's timeout and a margin, then fails", []fixtureLook{
			{docs: []string{hr("-1", failedAt, false), repo, deploy}, want: retrying},
			{docs: []string{hr("-1", failedAt, false), repo, deploy}, at: failedAt.Add(5*time.Minute + 30*time.Second + 29*time.Second), want: retrying},
			{docs: []string{hr("-1", failedAt, false), repo, deploy}, at: failedAt.Add(5*time.Minute + 30*time.Second + 30*time.Second), want: rolledBack},
		}},
		{"unlimited retries: a later attempt failed too past retry-grace, fails", []fixtureLook{
			{docs: []string{hr("-1", failedAt, false), repo, deploy}, want: retrying},
			{docs: []string{hr("-1", again, false), repo, deploy}, at: again.Add(time.Second), want: rolledBack},
		}},
	}
	cases := make([]fixtureCase, 0, len(tests))
	for _, tt := range tests {
		cases = append(cases, fixtureCase{name: tt.name, resources: []flux.Ref{root}, revision: "1.1.0", looks: tt.looks})
	}
	runFixtureCases(t, cases)
}

// TestHelmTestRemediation: tests enabled with ignoreFailures, and the upgrade's remediation
// told not to ignore them (upgrade.remediation.ignoreTestFailures: false, which wins for the
// remediation): helm-controller v1.6.4 runs the tests after the upgrade under Ready=True
// (summarize leaves TestSuccess out of it), then rolls back on a failed one, still under it.
// The run waits while an action runs, and is Current once none does and the tests passed.
func TestHelmTestRemediation(t *testing.T) {
	t.Parallel()
	root := flux.Ref{Kind: flux.KindHelmRelease, Namespace: "shop", Name: "web"}
	hr := func(testCond, reconciling string) string {
		return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: shop, generation: 2}
spec:
  interval: 10m
  chartRef: {kind: OCIRepository, name: web}
  test: {enable: true, ignoreFailures: true}
  upgrade: {remediation: {retries: 3, ignoreTestFailures: false}}
status:
  observedGeneration: 2
  lastAttemptedGeneration: 2
  lastAttemptedRevision: "1.1.0+` + dig2[:12] + `"
  lastAttemptedReleaseAction: upgrade
  storageNamespace: shop
  conditions:
` + reconciling + `  - {type: Ready, status: "True", reason: UpgradeSucceeded, message: "Helm upgrade succeeded for release shop/web.v3 with chart web@1.1.0", observedGeneration: 2}
  - {type: Released, status: "True", reason: UpgradeSucceeded, message: "Helm upgrade succeeded for release shop/web.v3 with chart web@1.1.0", observedGeneration: 2}
` + testCond + `
  history:
  - {name: web, namespace: shop, version: 3, status: deployed, chartName: web, chartVersion: "1.1.0+` + dig2[:12] + `", ociDigest: "sha256:` + dig2 + `", configDigest: "sha256:` + dig1 + `"}
  - {name: web, namespace: shop, version: 2, status: superseded, chartName: web, chartVersion: "1.0.0+` + dig1[:12] + `", ociDigest: "sha256:` + dig1 + `", configDigest: "sha256:` + dig1 + `"}
  inventory:
    entries: [{id: shop_web_apps_Deployment, v: v1}]`
	}
	running := func(action string) string {
		return `  - {type: Reconciling, status: "True", reason: Progressing, message: "Running '` + action + `' action with timeout of 5m0s", observedGeneration: 2}
`
	}
	const (
		awaiting   = `  - {type: TestSuccess, status: Unknown, reason: AwaitingTests, message: "Release shop/web.v3 with chart web@1.1.0 awaiting tests", observedGeneration: 2}`
		failedTest = `  - {type: TestSuccess, status: "False", reason: TestFailed, message: "Helm test failed for release shop/web.v3 with chart web@1.1.0: pod web-test failed", observedGeneration: 2}`
		passed     = `  - {type: TestSuccess, status: "True", reason: TestSucceeded, message: "Helm test succeeded for release shop/web.v3 with chart web@1.1.0 with tests: 1 test hook completed successfully", observedGeneration: 2}`
	)
	repo := strings.Replace(ociRepo(), `revision: "1.0.0@sha256:`+dig1+`"`, `revision: "1.1.0@sha256:`+dig2+`"`, 1)
	deploy := deployment("Deployment", 3, 3)
	waiting := func(action string) expected {
		return expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "Progressing"},
			Says: []string{"HelmRelease/shop/web: waiting for helm-controller's '" + action + "' action to finish"}}
	}
	runFixtureCases(t, []fixtureCase{
		{name: "tests running, a failure will be rolled back: waits", resources: []flux.Ref{root}, revision: "1.1.0",
			looks: []fixtureLook{{docs: []string{hr(awaiting, running("test")), repo, deploy}, want: waiting("test")}}},
		{name: "test failed, rollback running: waits", resources: []flux.Ref{root}, revision: "1.1.0",
			looks: []fixtureLook{{docs: []string{hr(failedTest, running("rollback")), repo, deploy}, want: waiting("rollback")}}},
		{name: "tests passed, no action running: Current", resources: []flux.Ref{root}, revision: "1.1.0",
			looks: []fixtureLook{{docs: []string{hr(passed, ""), repo, deploy}, want: expected{Outcome: current}}}},
	})
}

// TestKustomizationOlderGeneration: a Kustomization's failure stamped with a generation that
// never ended Ready may be of an earlier one (kustomize-controller records no generation of
// a failed attempt; Flux's patch helper stamps the current one): it waits until
// kustomize-controller has tried the current generation, which fails it once a later attempt
// failed, and passes it once that generation is applied. A generation change requeues at
// once: with no later attempt seen it fails by the failure's time plus its retry interval or
// the retry-grace (2m), whichever is shorter, plus 31s (a margin and lastTransitionTime's
// second), however long spec.interval is, and a Stalled one alike.
func TestKustomizationOlderGeneration(t *testing.T) {
	t.Parallel()
	failedAt := fixtureNow.Add(-10 * time.Second)
	doc := func(spec string, stalled bool, at time.Time) string {
		stall := ""
		if stalled {
			stall = `
  - {type: Stalled, status: "True", reason: BuildFailed, message: "kustomize build failed: accumulating resources: missing ./web.yaml", observedGeneration: 3, lastTransitionTime: "` + at.Format(time.RFC3339) + `"}`
		}
		return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, generation: 3}
spec: {sourceRef: {kind: GitRepository, name: app}, ` + spec + `}
status:
  observedGeneration: 2
  lastAppliedRevision: "` + revA + `"
  lastAttemptedRevision: "` + revB + `"
  conditions:
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "Building manifests for revision ` + revB + ` with a timeout of 5m0s", observedGeneration: 3, lastTransitionTime: "` + at.Format(time.RFC3339) + `"}
  - {type: Ready, status: "False", reason: BuildFailed, message: "kustomize build failed: accumulating resources: missing ./web.yaml", observedGeneration: 3, lastTransitionTime: "` + at.Format(time.RFC3339) + `"}` + stall + `
  inventory:
    entries: [{id: shop_web_apps_Deployment, v: v1}]`
	}
	applied := strings.Replace(ks("app", "GitRepository", "app", "", revB, "shop_web_apps_Deployment"), "generation: 2", "generation: 3", 1)
	applied = strings.ReplaceAll(applied, "observedGeneration: 2", "observedGeneration: 3")
	waiting := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxBuildFailed, Reason: "BuildFailed"}}
	buildFailed := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxBuildFailed, Reason: "BuildFailed"}}
	stalledWaiting := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxStalled, Reason: "BuildFailed"}}
	stalledFailed := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxStalled, Reason: "BuildFailed"}}
	deploy := deployment("Deployment", 3, 3)
	const short, hourly = "interval: 10m, retryInterval: 1m", "interval: 1h"
	again := fixtureNow.Add(20 * time.Second)
	runFixtureCases(t, []fixtureCase{
		{name: "the failure was of generation 2: generation 3 applies", looks: []fixtureLook{
			{docs: []string{doc(short, false, failedAt), gitRepoAt(revB), deploy}, want: waiting},
			{docs: []string{applied, gitRepoAt(revB), deploy}, at: fixtureNow.Add(5 * time.Second), want: expected{Outcome: current}},
		}},
		{name: "a later attempt fails at generation 3: fails", looks: []fixtureLook{
			{docs: []string{doc(short, false, failedAt), gitRepoAt(revB), deploy}, want: waiting},
			{docs: []string{doc(short, false, again), gitRepoAt(revB), deploy}, at: again.Add(time.Second), want: buildFailed},
		}},
		{name: "no attempt since, retryInterval 1m: fails by it", looks: []fixtureLook{
			{docs: []string{doc(short, false, failedAt), gitRepoAt(revB), deploy}, want: waiting},
			{docs: []string{doc(short, false, failedAt), gitRepoAt(revB), deploy}, at: failedAt.Add(time.Minute + 30*time.Second), want: waiting},
			{docs: []string{doc(short, false, failedAt), gitRepoAt(revB), deploy}, at: failedAt.Add(time.Minute + 31*time.Second), want: buildFailed},
		}},
		{name: "no attempt since, interval 1h: fails by the retry-grace", looks: []fixtureLook{
			{docs: []string{doc(hourly, false, failedAt), gitRepoAt(revB), deploy}, want: waiting},
			{docs: []string{doc(hourly, false, failedAt), gitRepoAt(revB), deploy}, at: failedAt.Add(2*time.Minute + 30*time.Second), want: waiting},
			{docs: []string{doc(hourly, false, failedAt), gitRepoAt(revB), deploy}, at: failedAt.Add(2*time.Minute + 31*time.Second), want: buildFailed},
		}},
		{name: "stalled, interval 1h: fails by the retry-grace", looks: []fixtureLook{
			{docs: []string{doc(hourly, true, failedAt), gitRepoAt(revB), deploy}, want: stalledWaiting},
			{docs: []string{doc(hourly, true, failedAt), gitRepoAt(revB), deploy}, at: failedAt.Add(2*time.Minute + 30*time.Second), want: stalledWaiting},
			{docs: []string{doc(hourly, true, failedAt), gitRepoAt(revB), deploy}, at: failedAt.Add(2*time.Minute + 31*time.Second), want: stalledFailed},
		}},
	})
}

// healthFailedKs is Kustomization flux-system/name of GitRepository app whose health checks
// of revB failed at failedAt (retryInterval 1m, kustomize-controller v1.9.5's words), revA
// applied before.
func healthFailedKs(name string, failedAt time.Time) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ` + name + `, namespace: flux-system, generation: 2}
spec: {sourceRef: {kind: GitRepository, name: app}, interval: 10m, retryInterval: 1m, wait: true, timeout: 30s}
status:
  observedGeneration: 2
  lastAppliedRevision: "` + revA + `"
  lastAttemptedRevision: "` + revB + `"
  conditions:
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "Running health checks for revision ` + revB + ` with a timeout of 30s", observedGeneration: 2}
  - {type: Ready, status: "False", reason: HealthCheckFailed, observedGeneration: 2, lastTransitionTime: "` + failedAt.Format(time.RFC3339) + `",
     message: "health check failed after 30.004s: timeout waiting for: [Deployment/infra/ingress status: 'InProgress']"}
  inventory:
    entries: [{id: infra_ingress_apps_Deployment, v: v1}]`
}

// TestDependencyHealthRetry: a dependency outside the tree whose health checks failed does not
// hold its dependent back for good: kustomize-controller runs them again at its retry
// (RequeueAfter: GetRetryInterval()) and lets the dependent go on once the dependency is Ready
// (checkDependencies). The dependent waits for that retry, as the dependency's own failure
// would, and fails with flux-dependency-failed after it.
func TestDependencyHealthRetry(t *testing.T) {
	t.Parallel()
	apps := []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "apps"}}
	failedAt := fixtureNow.Add(-30 * time.Second)
	retry := failedAt.Add(time.Minute + 6*time.Second + 30*time.Second)
	failing := []string{waitingKs("apps", "infra"), healthFailedKs("infra", failedAt), gitRepoAt(revB)}
	waiting := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxDependencyNotReady, Reason: "DependencyNotReady"}}
	runFixtureCases(t, []fixtureCase{
		{name: "the dependency still failing after its retry: fails", resources: apps, looks: []fixtureLook{
			{docs: failing, want: waiting},
			{docs: failing, at: retry.Add(-time.Second), want: waiting},
			{docs: failing, at: retry.Add(time.Second), want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxDependencyFailed, Reason: "HealthCheckFailed"}}},
		}},
		{name: "the dependency Ready at its retry: the dependent goes on", resources: apps, looks: []fixtureLook{
			{docs: failing, want: waiting},
			{docs: []string{ks("apps", "GitRepository", "app", ", dependsOn: [{name: infra}]", revB), ks("infra", "GitRepository", "app", "", revB), gitRepoAt(revB)},
				at: retry.Add(-time.Second), want: expected{Outcome: current}},
		}},
	})
}
