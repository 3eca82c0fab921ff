package assess

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
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

// composedDigest is the digest of the values of HelmRelease shop/web in
// TestHelmReleaseValuesDigest's status, as helm-controller records it.
const composedDigest = "sha256:5e0c2ac3d1f0a36d16b2b0b3c1b7e8f4a2d9c6e1f0b3a5d7c9e2f4a6b8d0c1e3"

// recordedDigest gives the HelmRelease document hr helm-controller's digest of the values it
// composed last (status.lastAttemptedConfigDigest), and composed what the fetching side found
// composing them now (a composedValues fact; none: not composed yet).
func recordedDigest(hr, recorded, composed string) string {
	if recorded != "" {
		hr = strings.Replace(hr, "  storageNamespace: shop\n", "  storageNamespace: shop\n  lastAttemptedConfigDigest: \""+recorded+"\"\n", 1)
	}
	if composed != "" {
		hr += "\ncomposedValues: " + composed
	}
	return hr
}

// TestHelmReleaseValuesDigest: a ConfigMap of a HelmRelease's valuesFrom that Flux applied
// after helm-controller last composed the values holds the release back only when the values
// composed from it now differ from those helm-controller composed (their digest, its
// status.lastAttemptedConfigDigest): a commit that only relabels it moves the time of
// kustomize-controller's apply entry, and composes the same values, so the release is
// Current without waiting for helm-controller's next reconcile. A change of the values, no
// digest recorded (an older helm-controller), values that cannot be read or composed, or not
// composed yet: held, as before.
func TestHelmReleaseValuesDigest(t *testing.T) {
	t.Parallel()
	app := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	web := flux.Ref{Kind: flux.KindHelmRelease, Namespace: "shop", Name: "web"}
	oci := strings.Replace(ociRepo(), `artifact: {revision: "1.0.0@sha256:`+dig1+`"}`,
		`artifact: {revision: "1.0.0@sha256:`+dig1+`", metadata: {org.opencontainers.image.revision: "`+revB+`"}}`, 1)
	docs := func(recorded, composed string) []string {
		hr := recordedDigest(helmRelease("OCIRepository", 2, 2, "1.0.0+"+dig1[:12], dig1), recorded, composed)
		return []string{ks("app", "GitRepository", "app", "", revB, "shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "shop_web-values__ConfigMap"),
			gitRepo(), hr, oci, appliedValues("2026-11-01T11:45:00Z")}
	}
	held := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ValuesNotApplied"},
		Says: []string{"values from ConfigMap/web-values changed at 2026-11-01T11:45:00Z, after the release was last deployed"}}
	var cases []fixtureCase
	for _, requested := range []struct {
		name      string
		resources []flux.Ref
	}{{"the Kustomization", []flux.Ref{app}}, {"the HelmRelease", []flux.Ref{web}}} {
		for _, tc := range []struct {
			name               string
			recorded, composed string
			want               expected
		}{
			{name: "relabelled: the values compose to the digest recorded", recorded: composedDigest, composed: `{digest: "` + composedDigest + `"}`,
				want: expected{Outcome: current}},
			{name: "the values changed: another digest", recorded: composedDigest, composed: `{digest: "sha256:0123"}`, want: held},
			{name: "no digest recorded", composed: `{digest: "` + composedDigest + `"}`, want: held},
			{name: "the values not composed yet", recorded: composedDigest, want: held},
			{name: "the values could not be read", recorded: composedDigest, composed: `{unreadable: "the credentials may not get ConfigMap shop/web-values (403)"}`, want: held},
		} {
			cases = append(cases, fixtureCase{name: requested.name + ": " + tc.name, resources: requested.resources,
				looks: []fixtureLook{{docs: docs(tc.recorded, tc.composed), want: tc.want}}})
		}
	}
	runFixtureCases(t, cases)
}

// TestHelmReleaseValuesNeed: a HelmRelease held for values changed after helm-controller
// composed them asks the fetching side to compose them (a ConfigNeed with the release), keyed
// by the release's generation and the resourceVersion of each object of its valuesFrom: a
// later change of one asks again; while helm-controller reconciles, nothing is asked.
func TestHelmReleaseValuesNeed(t *testing.T) {
	t.Parallel()
	hr := recordedDigest(helmRelease("OCIRepository", 2, 2, "1.0.0+"+dig1[:12], dig1), composedDigest, "")
	reconciling := strings.Replace(hr, "  conditions:\n", "  conditions:\n  - {type: Reconciling, status: \"True\", reason: Progressing, lastTransitionTime: \"2026-11-01T11:50:00Z\"}\n", 1)
	values := func(rv string) string {
		return strings.Replace(appliedValues("2026-11-01T11:45:00Z"), "  name: web-values\n", "  name: web-values\n  resourceVersion: \""+rv+"\"\n", 1)
	}
	tests := []struct {
		name string
		hr   string
		rv   string
		want []string
	}{
		{name: "at resourceVersion 7", hr: hr, rv: "7", want: []string{"helmreleases/shop/web@2;ConfigMap/web-values@7"}},
		{name: "at resourceVersion 9", hr: hr, rv: "9", want: []string{"helmreleases/shop/web@2;ConfigMap/web-values@9"}},
		{name: "while helm-controller reconciles", hr: reconciling, rv: "9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			docs := []string{ks("app", "GitRepository", "app", "", revB, "shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "shop_web-values__ConfigMap"),
				gitRepo(), tt.hr, ociRepo(), values(tt.rv)}
			view := newFixtureView(t, strings.Join(docs, "\n---\n"), fixtureReads...)
			rev, err := flux.ParseRevision(revB)
			if err != nil {
				t.Fatal(err)
			}
			e := Assess(view, NewMemory(), Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}},
				Revision: rev, Workloads: true, Health: fluxhealth.New(t.Context())}, fixtureNow)
			var got []string
			for _, n := range e.Needs.Configs {
				if n.Release == nil || n.GVR != flux.KindHelmRelease.GroupVersionResource() || n.Namespace != "shop" || n.Name != "web" || n.Release.GetName() != "web" {
					t.Errorf("need %+v, want one of HelmRelease shop/web, with it", n)
				}
				got = append(got, n.Key)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Needs.Configs keys (-want +got):\n%s\npending %+v", diff, e.Pending)
			}
		})
	}
}
