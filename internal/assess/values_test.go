package assess

import (
	"strings"
	"testing"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// appliedValues is valuesConfigMap as kustomize-controller applies it for the Kustomization
// flux-system/app: with its owner labels.
func appliedValues(at string) string {
	return strings.Replace(valuesConfigMap(at), "  namespace: shop\n",
		"  namespace: shop\n  labels: {kustomize.toolkit.fluxcd.io/name: app, kustomize.toolkit.fluxcd.io/namespace: flux-system}\n", 1)
}

// TestRequestedHelmReleaseValues: a HelmRelease whose values a Kustomization applied after
// its last deploy waits for helm-controller to compose them, whichever of the two are
// requested, in any order: requested, the HelmRelease is judged as a root, and its values
// are still compared with the release (found by the Kustomization's inventory, or, when
// that is not requested, by the owner labels kustomize-controller put on them).
func TestRequestedHelmReleaseValues(t *testing.T) {
	t.Parallel()
	app := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	web := flux.Ref{Kind: flux.KindHelmRelease, Namespace: "shop", Name: "web"}
	// The chart is pushed with the revision of its origin, so the HelmRelease requested alone
	// is judged on the run's revision too.
	oci := strings.Replace(ociRepo(), `artifact: {revision: "1.0.0@sha256:`+dig1+`"}`,
		`artifact: {revision: "1.0.0@sha256:`+dig1+`", metadata: {org.opencontainers.image.revision: "`+revB+`"}}`, 1)
	docs := func(valuesAt string) []string {
		return []string{ks("app", "GitRepository", "app", "", revB, "shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "shop_web-values__ConfigMap"),
			gitRepo(), helmRelease("OCIRepository", 2, 2, "1.0.0+"+dig1[:12], dig1), oci, appliedValues(valuesAt)}
	}
	notApplied := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ValuesNotApplied"},
		Says: []string{"values from ConfigMap/web-values changed at 2026-11-01T11:45:00Z, after the release was last deployed"}}
	var cases []fixtureCase
	for _, order := range []struct {
		name      string
		resources []flux.Ref
	}{
		{"the Kustomization", []flux.Ref{app}},
		{"the Kustomization, then the HelmRelease", []flux.Ref{app, web}},
		{"the HelmRelease, then the Kustomization", []flux.Ref{web, app}},
		{"the HelmRelease alone", []flux.Ref{web}},
	} {
		for _, workloads := range []bool{true, false} {
			suffix := ""
			if !workloads {
				suffix = ", Flux objects only"
			}
			cases = append(cases,
				fixtureCase{name: order.name + suffix + ": values applied after the last deploy", resources: order.resources, noWorkloads: !workloads,
					looks: []fixtureLook{{docs: docs("2026-11-01T11:45:00Z"), want: notApplied}}},
				fixtureCase{name: order.name + suffix + ": values applied before the last deploy", resources: order.resources, noWorkloads: !workloads,
					looks: []fixtureLook{{docs: docs("2026-11-01T11:00:00Z"), want: expected{Outcome: current}}}})
		}
	}
	runFixtureCases(t, cases)
}
