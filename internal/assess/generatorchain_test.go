package assess

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// TestStalledGeneratorChainRetriesAndSources: up a stalled generator's applier chain, a
// failure its controller retries, or one that may be of the generation before the current
// one, may still bring the fix, as it does at the first applier; a source suspended, or one
// the generator does not take its artifacts' revision from, will not bring the expected
// revision.
func TestStalledGeneratorChainRetriesAndSources(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	const kustomizeGroup = "kustomize.toolkit.fluxcd.io"
	stalled := []string{`{type: Ready, status: "False", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`,
		`{type: Stalled, status: "True", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`}
	generator := artifactGenerator("gen", "flux-system", digestOf(revOfA), stalled...)
	on := func(gen string, more ...string) []string {
		return append([]string{ks("app", "ExternalArtifact", "gen", "", revOfA), gitRepoStored(revB), externalArtifact("gen", "flux-system", revOfA), gen}, more...)
	}
	byApps := ownedBy(generator, kustomizeGroup, "flux-system", "apps")
	apps := func(rev, parent string) string {
		return ownedBy(ks("apps", "GitRepository", "app", "", rev), kustomizeGroup, "flux-system", parent)
	}
	fluxSystem := func(rev string) string { return ks("flux-system", "GitRepository", "app", "", rev) }
	waits := outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}
	sourceStalled := outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxArtifactFailed, Reason: "SourceStalled"}
	failsAsItDid := expected{Outcome: sourceStalled, Says: []string{"stalled: invalid path pattern"}}

	// The top failed on B with a failure kustomize-controller retries (a dry-run against a
	// CRD another Kustomization of B installs): its next attempt applies B, and the fix with it.
	retriedOnB := strings.NewReplacer(
		`lastAppliedRevision: "`+revB+`"`, `lastAppliedRevision: "`+revOfA+`"`,
		`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revB+`", observedGeneration: 2}`,
		`{type: Ready, status: "False", reason: ReconciliationFailed, message: "Widget/shop/w dry-run failed: no matches for kind \"Widget\" in version \"example.com/v1\"\nensure CRDs are installed first", observedGeneration: 2, lastTransitionTime: "2026-11-01T11:59:00Z"}`,
	).Replace(fluxSystem(revB))

	// A generator of two sources, the app's and the fleet's; the fleet repository is also
	// flux-system's source; B is a commit of the app's repository, which the fleet's never serves.
	twoSources := strings.Replace(byApps,
		`sources: [{alias: app, kind: GitRepository, name: app, namespace: flux-system}]`,
		`sources: [{alias: app, kind: GitRepository, name: app, namespace: flux-system}, {alias: fleet, kind: GitRepository, name: fleet, namespace: flux-system}]`, 1)
	const fleetRev = "main@sha1:fffffffffffffffffffffffffffffffffffffff1"
	fleetRepo := strings.Replace(gitRepoStored(fleetRev), "name: app,", "name: fleet,", 1)

	// The top at generation 3 (its spec just changed: the fix may be in it), its health
	// check failure stamped 3 by Flux's patch helper though it may be of generation 2.
	stampedCurrent := strings.NewReplacer(
		`lastAppliedRevision: "`+revB+`"`, `lastAppliedRevision: "`+revOfA+`"`,
		`namespace: flux-system, generation: 2}`, `namespace: flux-system, generation: 3}`,
		`{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: `+revB+`", observedGeneration: 2}`,
		`{type: Ready, status: "False", reason: HealthCheckFailed, message: "Kustomization/flux-system/app status: 'Failed'", observedGeneration: 3}`,
	).Replace(ks("flux-system", "GitRepository", "app", ", wait: true", revB))

	runFixtureCases(t, []fixtureCase{
		{name: "the top's health check failure may be of its older generation: it waits", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), stampedCurrent),
			want: expected{Outcome: waits}}}},
		{name: "the same at the first level: it waits", looks: []fixtureLook{{
			docs: on(byApps, strings.Replace(stampedCurrent, "name: flux-system,", "name: apps,", 1)),
			want: expected{Outcome: waits}}}},
		{name: "the retried failure at the first level: it waits", looks: []fixtureLook{{
			docs: on(byApps, strings.Replace(retriedOnB, "name: flux-system,", "name: apps,", 1)),
			want: expected{Outcome: waits}}}},
		// The generator's own GitRepository, the top's source, suspended on A: it fetches
		// nothing, B never comes.
		{name: "a monorepo, the shared source suspended on A: it fails", looks: []fixtureLook{{
			docs: []string{ks("app", "ExternalArtifact", "gen", "", revOfA), strings.Replace(gitRepoStored(revOfA), "generation: 1}", "generation: 1}\nspec: {suspend: true}", 1), externalArtifact("gen", "flux-system", revOfA),
				ownedBy(generator, "helm.toolkit.fluxcd.io", "shop", "web"), ownedBy(helmRelease("OCIRepository", 2, 2, "1.0.0", dig1), kustomizeGroup, "flux-system", "apps"), ociRepo(),
				ks("apps", "GitRepository", "app", "", revOfA)},
			want: failsAsItDid}}},
		{name: "the same, suspended, at the first level: it fails", looks: []fixtureLook{{
			docs: []string{ks("app", "ExternalArtifact", "gen", "", revOfA), strings.Replace(gitRepoStored(revOfA), "generation: 1}", "generation: 1}\nspec: {suspend: true}", 1), externalArtifact("gen", "flux-system", revOfA),
				byApps, ks("apps", "GitRepository", "app", "", revOfA)},
			want: failsAsItDid}}},
		{name: "the top failed on B, a failure it retries: it waits", looks: []fixtureLook{{
			docs: on(byApps, apps(revB, "flux-system"), retriedOnB),
			want: expected{Outcome: waits}}}},
		{name: "a two-source generator, flux-system on the fleet repo done: it fails", looks: []fixtureLook{{
			docs: on(twoSources, apps(revB, "flux-system"), ks("flux-system", "GitRepository", "fleet", "", fleetRev), fleetRepo),
			want: failsAsItDid}}},
		{name: "a two-source generator, its first applier on the fleet repo done: it fails", looks: []fixtureLook{{
			docs: on(twoSources, ks("apps", "GitRepository", "fleet", "", fleetRev), fleetRepo),
			want: failsAsItDid}}},
	})
}

// TestStalledGeneratorChainListRetried: the list of an applier's kind up the chain that
// failed in a way a retry may mend (500, 503) before its first answer holds the root, as any
// list being retried does; the chain does not end on it.
func TestStalledGeneratorChainListRetried(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	stalled := []string{`{type: Ready, status: "False", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`,
		`{type: Stalled, status: "True", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`}
	generator := ownedBy(artifactGenerator("gen", "flux-system", digestOf(revOfA), stalled...), "kustomize.toolkit.fluxcd.io", "flux-system", "apps")
	apps := ownedBy(ks("apps", "GitRepository", "app", "", revB), "helm.toolkit.fluxcd.io", "flux-system", "platform")
	docs := []string{ks("app", "ExternalArtifact", "gen", "", revOfA), gitRepoStored(revB), externalArtifact("gen", "flux-system", revOfA), generator, apps}
	rev, err := flux.ParseRevision(revB)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"500", apierrors.NewInternalError(errors.New("etcd leader changed"))},
		{"503", apierrors.NewServiceUnavailable("apiserver restarting")},
	} {
		for _, mode := range []string{"verify"} {
			view := newFixtureView(t, strings.Join(docs, "\n---\n"), fixtureReads...)
			view.failList(flux.KindHelmRelease.GroupVersionResource().GroupResource(), tc.err)
			spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}}, Revision: rev, Workloads: true,
				Snapshot: mode == "get", Health: fluxhealth.New(t.Context())}
			e := Assess(view, NewMemory(), spec, fixtureNow)
			got := outcomeOf(e)
			if diff := cmp.Diff(result.VerdictInProgress, got.Verdict); diff != "" {
				t.Errorf("%s %s: verdict (-want +got):\n%s\npending %+v\nfatal %+v", tc.name, mode, diff, e.Pending, e.Fatal)
			}
		}
	}
}

// TestFluxListNotServed: the root Kustomization's own list answered 404 says the cluster does
// not serve it ("is Flux installed?"); a nested Flux kind's list answered 404 (a HelmRelease in
// the root's inventory) is waited on as a kind the cluster may start serving.
func TestFluxListNotServed(t *testing.T) {
	t.Parallel()
	rev, _ := flux.ParseRevision(revB)
	root := ks("app", "GitRepository", "app", "", revB, "shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2")
	for _, tc := range []struct {
		name   string
		kind   flux.Kind
		want   result.Verdict
		reason string
	}{
		{"root Kustomization list 404", flux.KindKustomization, result.VerdictNotFound, "NotFound"},
		{"nested HelmRelease list 404", flux.KindHelmRelease, result.VerdictInProgress, "UnknownKind"},
	} {
		for _, mode := range []string{"get", "verify"} {
			view := newFixtureView(t, strings.Join([]string{root, gitRepoStored(revB)}, "\n---\n"), fixtureReads...)
			gr := tc.kind.GroupVersionResource().GroupResource()
			view.failList(gr, apierrors.NewNotFound(gr, ""))
			spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}}, Revision: rev, Workloads: true,
				Snapshot: mode == "get", Health: fluxhealth.New(t.Context())}
			e := Assess(view, NewMemory(), spec, fixtureNow)
			got := outcomeOf(e)
			if got.Verdict != tc.want || got.Reason != tc.reason {
				t.Errorf("%s %s: got %+v\npending %+v\nfatal %+v", tc.name, mode, got, e.Pending, e.Fatal)
			}
		}
	}
}
