package assess

import (
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// TestMissingSource: a Flux object whose source or dependsOn target does not exist is
// retried by its controller for ever, in words that are neither final nor a known retry; the
// run decides the missing object as it decides a requested one: NotFound once missing for the
// not-found grace, unless a Kustomization or ResourceSet may still create it.
func TestMissingSource(t *testing.T) {
	t.Parallel()
	// app names the GitRepository "ap", which does not exist: kustomize-controller v1.9.5
	// (getSource) writes the API server's bare NotFound.
	app := strings.Replace(ks("app", "GitRepository", "ap", "", revA), `  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revA+`", observedGeneration: 2}`,
		`  - {type: Ready, status: "False", reason: ArtifactFailed, message: 'gitrepositories.source.toolkit.fluxcd.io "ap" not found', observedGeneration: 2}`, 1)
	// web's chartRef names an OCIRepository that does not exist (helm-controller v1.6.4).
	web := `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: shop, generation: 1}
spec:
  interval: 10m
  chartRef: {kind: OCIRepository, name: web}
status:
  conditions:
  - {type: Ready, status: "False", reason: ArtifactFailed, message: 'could not get Source object: ocirepositories.source.toolkit.fluxcd.io "web" not found', observedGeneration: 1}`
	// podinfo's spec.chart names a HelmRepository that does not exist: helm-controller made
	// the HelmChart, source-controller cannot fetch it (FetchFailed, not stalled).
	podinfo := `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: shop, generation: 1}
spec:
  interval: 10m
  chart: {spec: {chart: podinfo, version: 6.5.0, sourceRef: {kind: HelmRepository, name: podinfo}}}
status:
  helmChart: shop/shop-podinfo
  conditions:
  - {type: Ready, status: "False", reason: SourceNotReady, message: "HelmChart 'shop/shop-podinfo' is not ready: failed to get source: helmrepositories.source.toolkit.fluxcd.io \"podinfo\" not found", observedGeneration: 1}`
	chart := `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata: {name: shop-podinfo, namespace: shop, generation: 1}
spec: {chart: podinfo, version: 6.5.0, sourceRef: {kind: HelmRepository, name: podinfo}}
status:
  observedGeneration: 1
  conditions:
  - {type: Ready, status: "False", reason: SourceUnavailable, message: 'failed to get source: helmrepositories.source.toolkit.fluxcd.io "podinfo" not found'}
  - {type: FetchFailed, status: "True", reason: SourceUnavailable, message: 'failed to get source: helmrepositories.source.toolkit.fluxcd.io "podinfo" not found'}`
	// dependent waits for the Kustomization infra, which does not exist.
	dependent := strings.Replace(strings.Replace(ks("app", "GitRepository", "app", "", revA),
		"spec: {sourceRef:", "spec: {dependsOn: [{name: infra}], sourceRef:", 1),
		`  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revA+`", observedGeneration: 2}`,
		`  - {type: Ready, status: "False", reason: DependencyNotReady, message: 'unable to get ''flux-system/infra'' dependency: kustomizations.kustomize.toolkit.fluxcd.io "infra" not found', observedGeneration: 2}`, 1)
	wait := func(says ...string) expected {
		return expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"}, Says: says}
	}
	notFound := func(says ...string) expected {
		return expected{Outcome: outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"}, Says: says}
	}
	const graceOver = 2 * time.Minute
	runFixtureCases(t, []fixtureCase{
		{name: "a Kustomization's source does not exist: the grace, then NotFound",
			looks: []fixtureLook{
				{docs: []string{app, gitRepo()}, want: wait("GitRepository/flux-system/ap not found (the source of Kustomization/flux-system/app)", "not-found-grace"),
					get: &expected{Outcome: outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"}}},
				{docs: []string{app, gitRepo()}, at: fixtureNow.Add(graceOver),
					want: notFound("GitRepository/flux-system/ap not found (the source of Kustomization/flux-system/app); close names in flux-system: app; no Kustomization or ResourceSet is creating it")},
			}},
		{name: "a Kustomization's source does not exist while a parent applies: waits",
			looks: []fixtureLook{
				{docs: []string{app, gitRepo(), parentWith(parentReconciling)}, at: fixtureNow.Add(5 * graceOver),
					want: wait("GitRepository/flux-system/ap not found yet (the source of Kustomization/flux-system/app); Flux may still create it: Kustomization/flux-system/apps is applying")},
			}},
		{name: "a HelmRelease's chartRef does not exist: NotFound after the grace",
			resources: []flux.Ref{{Kind: flux.KindHelmRelease, Namespace: "shop", Name: "web"}},
			looks: []fixtureLook{
				{docs: []string{web}, want: wait("OCIRepository/shop/web not found (the source of HelmRelease/shop/web)"),
					get: &expected{Outcome: outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"}}},
				{docs: []string{web}, at: fixtureNow.Add(graceOver), want: notFound("OCIRepository/shop/web not found (the source of HelmRelease/shop/web)")},
			}},
		{name: "a HelmRelease's chart repository does not exist: NotFound after the grace",
			resources: []flux.Ref{{Kind: flux.KindHelmRelease, Namespace: "shop", Name: "podinfo"}},
			looks: []fixtureLook{
				{docs: []string{podinfo, chart}, want: wait("HelmRepository/shop/podinfo not found (the source of HelmRelease/shop/podinfo)"),
					get: &expected{Outcome: outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"}}},
				{docs: []string{podinfo, chart}, at: fixtureNow.Add(graceOver), want: notFound("HelmRepository/shop/podinfo not found (the source of HelmRelease/shop/podinfo)")},
			}},
		{name: "a dependsOn target does not exist: NotFound after the grace",
			looks: []fixtureLook{
				// (Within the grace, the wait is Flux's own.)
				{docs: []string{dependent, gitRepo()}, want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxDependencyNotReady, Reason: "DependencyNotReady"}},
					get: &expected{Outcome: outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"}}},
				{docs: []string{dependent, gitRepo()}, at: fixtureNow.Add(graceOver),
					want: notFound("Kustomization/flux-system/infra not found (a dependency, dependsOn, of Kustomization/flux-system/app)")},
			}},
	})
}
