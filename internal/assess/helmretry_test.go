package assess

import (
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// templateErrorHR is HelmRelease shop/web (chartRef OCIRepository web) whose upgrade to 1.1.0
// failed to render at failedAt (no release stored), with the conditions helm-controller v1.6.4
// leaves when no retry strategy is set: atomic_release.go marks Reconciling Progressing
// "Running 'upgrade' action…" before the action, the action returns the error (upgrade.go),
// and nothing marks Reconciling again.
func templateErrorHR(failedAt time.Time) string {
	const msg = "Helm upgrade failed for release shop/web with chart web@1.1.0: template: web/templates/deployment.yaml:32:28: executing \\\"web/templates/deployment.yaml\\\" at <.Values.service.port>: nil pointer evaluating interface {}.port"
	at := failedAt.Format(time.RFC3339)
	chart := "1.1.0+" + dig2[:12]
	return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: shop, generation: 2}
spec:
  interval: 10m
  chartRef: {kind: OCIRepository, name: web}
status:
  observedGeneration: 1
  lastAttemptedGeneration: 2
  lastAttemptedRevision: "` + chart + `"
  lastAttemptedRevisionDigest: "sha256:` + dig2 + `"
  lastAttemptedReleaseAction: upgrade
  lastAttemptedConfigDigest: "sha256:` + dig1 + `"
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: "Running 'upgrade' action with timeout of 5m0s", observedGeneration: 2, lastTransitionTime: "` + at + `"}
  - {type: Ready, status: "False", reason: UpgradeFailed, message: "` + msg + `", observedGeneration: 2, lastTransitionTime: "` + at + `"}
  - {type: Released, status: "False", reason: UpgradeFailed, message: "` + msg + `", observedGeneration: 2, lastTransitionTime: "` + at + `"}
  history:
  - {name: web, namespace: shop, version: 2, status: deployed, chartName: web, chartVersion: "1.0.0+` + dig1[:12] + `", ociDigest: "sha256:` + dig1 + `", configDigest: "sha256:` + dig1 + `"}
  inventory:
    entries: [{id: shop_web_apps_Deployment, v: v1}]`
}

// installRefusedHR is HelmRelease shop/web whose first install, of 1.1.0, Helm refused at
// failedAt before it stored a release: objects it may not adopt (helm v4's install checks
// ownership before it creates the release). helm-controller v1.6.4 returns the error
// (install.go) and leaves Reconciling as it marked it before the action.
func installRefusedHR(failedAt time.Time) string {
	const msg = `Helm install failed for release shop/web with chart web@1.1.0: unable to continue with install: Service \"web\" in namespace \"shop\" exists and cannot be imported into the current release: invalid ownership metadata`
	at := failedAt.Format(time.RFC3339)
	chart := "1.1.0+" + dig2[:12]
	return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: shop, generation: 1}
spec:
  interval: 10m
  chartRef: {kind: OCIRepository, name: web}
status:
  lastAttemptedGeneration: 1
  lastAttemptedRevision: "` + chart + `"
  lastAttemptedRevisionDigest: "sha256:` + dig2 + `"
  lastAttemptedReleaseAction: install
  lastAttemptedConfigDigest: "sha256:` + dig1 + `"
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: "Running 'install' action with timeout of 5m0s", observedGeneration: 1, lastTransitionTime: "` + at + `"}
  - {type: Ready, status: "False", reason: InstallFailed, message: "` + msg + `", observedGeneration: 1, lastTransitionTime: "` + at + `"}
  - {type: Released, status: "False", reason: InstallFailed, message: "` + msg + `", observedGeneration: 1, lastTransitionTime: "` + at + `"}`
}

// TestReleaseRefusedWithoutAStrategy: an install or upgrade Helm refuses before it stores a
// release (templates that do not render, objects it may not adopt), without a retry strategy.
// helm-controller v1.6.4 returns the action's error and controller-runtime retries it with a
// back-off for ever; Reconciling keeps "Running 'upgrade' action…" (Progressing), Ready is
// False. Such a failure waits for its retry window, then fails, as with RetryOnFailure: it
// never waits to the deadline as an action still running.
func TestReleaseRefusedWithoutAStrategy(t *testing.T) {
	t.Parallel()
	root := flux.Ref{Kind: flux.KindHelmRelease, Namespace: "shop", Name: "web"}
	repo := strings.Replace(ociRepo(), `revision: "1.0.0@sha256:`+dig1+`"`, `revision: "1.1.0@sha256:`+dig2+`"`, 1)
	failedAt := fixtureNow.Add(-30 * time.Second)
	upgrade := []string{templateErrorHR(failedAt), repo, deployment("Deployment", 3, 3)}
	install := []string{installRefusedHR(failedAt), repo}
	// The latest attempt ended 10 minutes ago; the values were fixed 3 minutes ago: the next
	// attempt, within 15m of the latest, reads them.
	refusedAt := fixtureNow.Add(-10 * time.Minute)
	valuesFixed := []string{strings.Replace(templateErrorHR(refusedAt), "  chartRef: {kind: OCIRepository, name: web}\n",
		"  chartRef: {kind: OCIRepository, name: web}\n  valuesFrom: [{kind: ConfigMap, name: web-values}]\n", 1),
		repo, deployment("Deployment", 3, 3), valuesConfigMap(fixtureNow.Add(-3 * time.Minute).Format(time.RFC3339))}
	upgradeFailed := outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxUpgradeFailed, Reason: "UpgradeFailed"}
	installFailed := outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxInstallFailed, Reason: "InstallFailed"}
	waiting := func(o outcome) expected {
		o.Verdict = result.VerdictInProgress
		return expected{Outcome: o}
	}
	runFixtureCases(t, []fixtureCase{
		{name: "upgrade that does not render", resources: []flux.Ref{root}, revision: "1.1.0", looks: []fixtureLook{
			{docs: upgrade, want: waiting(upgradeFailed)},
			{docs: upgrade, at: fixtureNow.Add(30 * time.Minute), want: expected{Outcome: upgradeFailed}},
		}},
		{name: "upgrade refused, its values fixed since: waits for the next attempt", resources: []flux.Ref{root}, revision: "1.1.0", looks: []fixtureLook{
			{docs: valuesFixed, want: waiting(upgradeFailed)},
			{docs: valuesFixed, at: fixtureNow.Add(2*time.Minute + time.Second), want: waiting(upgradeFailed)},
			{docs: valuesFixed, at: refusedAt.Add(15*time.Minute + 31*time.Second), want: expected{Outcome: upgradeFailed}},
		}},
		{name: "install refused before any release", resources: []flux.Ref{root}, revision: "1.1.0", looks: []fixtureLook{
			{docs: install, want: waiting(installFailed)},
			{docs: install, at: fixtureNow.Add(30 * time.Minute), want: expected{Outcome: installFailed}},
		}},
	})
}

// TestValuesThatDidNotParseFixed: values that do not parse fail at once, unless an object of
// valuesFrom changed after the failure. helm-controller v1.6.4 composes the values again at
// every attempt (helmrelease_controller.go returns the error; controller-runtime retries it
// with a back-off), so its next attempt reads the fixed ConfigMap: the release waits for
// retry-grace from that change, then fails if Flux still says so. The everyday layout: the
// Kustomization that applies the ConfigMap and the HelmRelease applied the fix at B.
func TestValuesThatDidNotParseFixed(t *testing.T) {
	t.Parallel()
	const hr = `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: shop, generation: 2}
spec:
  interval: 10m
  chartRef: {kind: OCIRepository, name: web}
  valuesFrom: [{kind: ConfigMap, name: web-values}]
status:
  observedGeneration: 2
  lastAttemptedGeneration: 2
  conditions:
  - {type: Ready, status: "False", reason: ValuesError, lastTransitionTime: "2026-11-01T11:30:00Z", observedGeneration: 2,
     message: "could not resolve ConfigMap chart values reference 'shop/web-values' with key 'values.yaml': error converting YAML to JSON: yaml: line 2: did not find expected key"}`
	root := flux.Ref{Kind: flux.KindHelmRelease, Namespace: "shop", Name: "web"}
	fixed := []string{hr, ociRepo(), valuesConfigMap("2026-11-01T11:59:00Z")}
	notFixed := []string{hr, ociRepo(), valuesConfigMap("2026-11-01T11:00:00Z")}
	nested := append([]string{ks("app", "GitRepository", "app", "", revB, "shop_web-values__ConfigMap", "shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2"), gitRepo()}, fixed...)
	failed := outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxValuesFailed, Reason: "ValuesError"}
	// Failing since 11:30, the back-off's wait at 11:59 is at most 15m: the next attempt comes
	// by 12:14, and the run gives it a margin of 30 s.
	waiting := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxValuesFailed, Reason: "ValuesError"},
		Says: []string{"ConfigMap/web-values changed at 2026-11-01T11:59:00Z, after the failure", "by 2026-11-01T12:14:30Z at the latest"}}
	pastGrace := fixtureNow.Add(time.Minute + time.Second)
	pastAttempt := fixtureNow.Add(14*time.Minute + 31*time.Second)
	runFixtureCases(t, []fixtureCase{
		{name: "the ConfigMap changed after the failure: waits for the next attempt, fails past it", resources: []flux.Ref{root}, revision: "1.0.0",
			looks: []fixtureLook{{docs: fixed, want: waiting}, {docs: fixed, at: pastGrace, want: waiting}, {docs: fixed, at: pastAttempt, want: expected{Outcome: failed}}}},
		{name: "nested: the Kustomization applied the ConfigMap's fix", looks: []fixtureLook{
			{docs: nested, want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxValuesFailed, Reason: "ValuesError"}}},
			{docs: nested, at: pastAttempt, want: expected{Outcome: failed}},
		}},
		{name: "the ConfigMap unchanged since the failure: fails at once", resources: []flux.Ref{root}, revision: "1.0.0",
			looks: []fixtureLook{{docs: notFixed, want: expected{Outcome: failed}}}},
	})
}
