package assess

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// rset is ResourceSet flux-system/tenants at generation 2 with the given inline inputs and
// conditions (YAML list items), its inventory the given entries, as flux-operator v0.59.0
// writes its status (no status.observedGeneration).
func rset(inputs, conditions string, entries ...string) string {
	var inv strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&inv, "    - {id: %s, v: v1}\n", e)
	}
	return `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: tenants, namespace: flux-system, generation: 2}
spec:
  inputs: ` + inputs + `
  resourcesTemplate: "---"
status:
  lastAppliedRevision: sha256:43ad78c94b2655429d84f21488f29d7cca9cd45b7f54d2b27e16bbec8eff9228
  conditions:
` + conditions + `
  inventory:
    entries:` + entryList(inv.String())
}

const (
	rsetReady      = `  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Reconciliation finished in 2s", observedGeneration: 2}`
	rsetWaitFailed = `  - {type: Ready, status: "False", reason: ReconciliationFailed, message: "reconciliation failed: failed early due to stalled resources: [Kustomization/flux-system/team2 status: 'Failed']", observedGeneration: 2}`
)

// rsetTimedOut is the Ready condition flux-operator writes when its wait (spec.wait) for the
// HelmRelease it generated timed out, at the given time.
func rsetTimedOut(at string) string {
	return `  - {type: Ready, status: "False", reason: ReconciliationFailed, message: "reconciliation failed: timeout waiting for: [HelmRelease/shop/web status: 'InProgress']", observedGeneration: 2, lastTransitionTime: "` + at + `"}`
}

// fromProviders is doc, an rset without inline inputs, taking its inputs from a
// ResourceSetInputProvider (spec.inputsFrom); inputs, when set, is the count of inputs its
// newest status.history entry records, as flux-operator v0.59.0 writes it.
func fromProviders(doc, inputs string) string {
	doc = strings.Replace(doc, "  inputs: []\n", "  inputsFrom: [{kind: ResourceSetInputProvider, name: app}]\n", 1)
	if inputs != "" {
		doc = strings.Replace(doc, "status:\n", "status:\n  history:\n  - {digest: sha256:43ad78c94b2655429d84f21488f29d7cca9cd45b7f54d2b27e16bbec8eff9228, lastReconciledStatus: ReconciliationSucceeded, metadata: {inputs: \""+inputs+"\", resources: \""+inputs+"\"}}\n", 1)
	}
	return doc
}

// helmV2 is doc, an rset, listing its HelmReleases at helm.toolkit.fluxcd.io/v2.
func helmV2(doc string) string {
	return strings.ReplaceAll(doc, "HelmRelease, v: v1", "HelmRelease, v: v2")
}

// valuesBy is the HelmRelease's values ConfigMap as the field manager manager applied it at.
func valuesBy(manager, at string) string {
	return strings.Replace(valuesConfigMap(at), "manager: kustomize-controller", "manager: "+manager, 1)
}

// ksFailed is Kustomization name of GitRepository app whose build of rev failed.
func ksFailed(name, rev string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ` + name + `, namespace: flux-system, generation: 1}
spec: {sourceRef: {kind: GitRepository, name: app}}
status:
  observedGeneration: 1
  lastAttemptedRevision: "` + rev + `"
  conditions:
  - {type: Ready, status: "False", reason: BuildFailed, message: "kustomize build failed: accumulating resources", observedGeneration: 1}
  inventory:
    entries: []`
}

// TestAssessResourceSets: a ResourceSet is walked as a Kustomization: the Flux objects it
// generated are judged with their own sources, and the expected revision is theirs to apply
// unless the ResourceSet's inputs carry it. Each case by get and verify.
func TestAssessResourceSets(t *testing.T) {
	t.Parallel()
	root := flux.Ref{Kind: flux.KindResourceSet, Namespace: "flux-system", Name: "tenants"}
	teams := []string{"flux-system_team1_kustomize.toolkit.fluxcd.io_Kustomization", "flux-system_team2_kustomize.toolkit.fluxcd.io_Kustomization"}
	order := []string{"resourcesets", "kustomizations", "helmreleases", "gitrepositories", "ocirepositories", "deployments", "services", "configmaps"}
	const noInputs = "[]"
	dep := "shop_web_apps_Deployment"
	hr := "shop_web_helm.toolkit.fluxcd.io_HelmRelease"
	// The HelmRelease at generation 3, helm-controller running its upgrade.
	hrUpgrading := strings.Replace(strings.Replace(helmRelease("OCIRepository", 3, 2, "1.0.0", dig1),
		`{type: Ready, status: "True", reason: UpgradeSucceeded, message: "Helm upgrade succeeded", observedGeneration: 2}`,
		`{type: Ready, status: "Unknown", reason: Progressing, message: "Running 'upgrade' action with timeout of 5m0s", observedGeneration: 3}`, 1),
		"  observedGeneration: 2\n", "  observedGeneration: 3\n", 1)
	tests := []struct {
		name      string
		revision  string
		docs      []string
		workloads bool
		want      outcome
	}{
		{name: "Ready, both generated Kustomizations on the expected revision",
			docs: []string{rset(noInputs, rsetReady, teams...), ks("team1", "GitRepository", "app", "", revB), ks("team2", "GitRepository", "app", "", revB), gitRepo()},
			want: current},
		{name: "Ready, the generated Kustomizations on the previous revision, which their source still serves",
			docs: []string{rset(noInputs, rsetReady, teams...), ks("team1", "GitRepository", "app", "", revA), ks("team2", "GitRepository", "app", "", revA), gitRepoAt(revA)},
			want: outcome{Verdict: result.VerdictInProgress, Reason: "RevisionNotApplied"}},
		{name: "no revision expected: what their source offers",
			revision: "-",
			docs:     []string{rset(noInputs, rsetReady, teams...), ks("team1", "GitRepository", "app", "", revA), ks("team2", "GitRepository", "app", "", revA), gitRepoAt(revA)},
			want:     current},
		{name: "one generated Kustomization broken: its own failure, not the ResourceSet's wait",
			docs: []string{rset(noInputs, rsetWaitFailed, teams...), ks("team1", "GitRepository", "app", "", revB), ksFailed("team2", revB), gitRepo()},
			want: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxBuildFailed, Reason: "BuildFailed"}},
		{name: "one generated Kustomization broken, with the workloads",
			docs:      []string{rset(noInputs, rsetWaitFailed, teams...), ks("team1", "GitRepository", "app", "", revB), ksFailed("team2", revB), gitRepo()},
			workloads: true,
			want:      outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxBuildFailed, Reason: "BuildFailed"}},
		{name: "the revision in its inputs, its generated HelmRelease on the chart its source offers",
			revision: "1.0.0",
			docs: []string{rset(`[{tenant: shop, version: "1.0.0"}]`, rsetReady, "shop_web_helm.toolkit.fluxcd.io_HelmRelease"),
				helmRelease("OCIRepository", 2, 2, "1.0.0", dig1), ociRepo()},
			want: current},
		{name: "the revision in its inputs, its generated OCIRepository not fetched at the new tag yet",
			revision: "1.0.0",
			docs: []string{rset(`[{tenant: shop, version: "1.0.0"}]`, rsetReady, "shop_web_helm.toolkit.fluxcd.io_HelmRelease"),
				helmRelease("OCIRepository", 2, 2, "1.0.0", dig1), strings.Replace(ociRepo(), "generation: 1", "generation: 2", 1)},
			want: outcome{Verdict: result.VerdictInProgress, Reason: "SourceNotReady"}},
		{name: "inputs from providers, only a Deployment generated: nothing says the revision is applied",
			docs:      []string{fromProviders(rset(noInputs, rsetReady, dep), ""), deployment("Deployment", 1, 1)},
			workloads: true,
			want:      outcome{Verdict: result.VerdictInProgress, Reason: "RevisionNotApplied"}},
		{name: "inputs from providers, only a Deployment generated, without the workloads",
			docs: []string{fromProviders(rset(noInputs, rsetReady, dep), ""), deployment("Deployment", 1, 1)},
			want: outcome{Verdict: result.VerdictInProgress, Reason: "RevisionNotApplied"}},
		{name: "inputs from providers, empty inventory: the provider has not exported yet",
			docs: []string{fromProviders(rset(noInputs, rsetReady), "")},
			want: outcome{Verdict: result.VerdictInProgress, Reason: "RevisionNotApplied"}},
		{name: "inputs from providers, zero inputs at its last reconcile, an old Kustomization still listed",
			docs: []string{fromProviders(rset(noInputs, rsetReady, teams[0]), "0"), ks("team1", "GitRepository", "app", "", revB), gitRepo()},
			want: outcome{Verdict: result.VerdictInProgress, Reason: "RevisionNotApplied"}},
		{name: "inputs from providers, a generated Kustomization applied the revision",
			docs: []string{fromProviders(rset(noInputs, rsetReady, teams[0]), "1"), ks("team1", "GitRepository", "app", "", revB), gitRepo()},
			want: current},
		{name: "inline inputs without the revision, only a Deployment generated",
			revision:  "1.2.3",
			docs:      []string{rset(`[{image: "ghcr.io/org/app:1.2.2"}]`, rsetReady, dep), deployment("Deployment", 1, 1)},
			workloads: true,
			want:      outcome{Verdict: result.VerdictInProgress, Reason: "RevisionNotApplied"}},
		{name: "inline inputs carry the revision, only a Deployment generated",
			revision:  "1.2.3",
			docs:      []string{rset(`[{image: ghcr.io/org/app, tag: "1.2.3"}]`, rsetReady, dep), deployment("Deployment", 1, 1)},
			workloads: true,
			want:      current},
		{name: "its generated values ConfigMap changed after the release was deployed",
			revision: "1.0.0",
			docs: []string{helmV2(rset(`[{tenant: shop, version: "1.0.0"}]`, rsetReady, hr, "shop_web-values__ConfigMap")),
				helmRelease("OCIRepository", 2, 2, "1.0.0", dig1), ociRepo(), valuesBy("flux-operator", "2026-11-01T11:45:00Z")},
			want: outcome{Verdict: result.VerdictInProgress, Reason: "ValuesNotApplied"}},
		{name: "its generated values ConfigMap changed after the release was deployed, with the workloads",
			revision: "1.0.0",
			docs: []string{helmV2(rset(`[{tenant: shop, version: "1.0.0"}]`, rsetReady, hr, "shop_web-values__ConfigMap")),
				helmRelease("OCIRepository", 2, 2, "1.0.0", dig1), ociRepo(), valuesBy("flux-operator", "2026-11-01T11:45:00Z")},
			workloads: true,
			want:      outcome{Verdict: result.VerdictInProgress, Reason: "ValuesNotApplied"}},
		{name: "its generated values ConfigMap unchanged since the release was deployed",
			revision: "1.0.0",
			docs: []string{helmV2(rset(`[{tenant: shop, version: "1.0.0"}]`, rsetReady, hr, "shop_web-values__ConfigMap")),
				helmRelease("OCIRepository", 2, 2, "1.0.0", dig1), ociRepo(), valuesBy("flux-operator", "2026-11-01T11:15:00Z")},
			want: current},
		{name: "its wait timed out a minute ago, its generated HelmRelease still upgrading",
			revision: "1.0.0",
			docs:     []string{helmV2(rset(`[{version: "1.0.0"}]`, rsetTimedOut("2026-11-01T11:59:00Z"), hr)), hrUpgrading, ociRepo()},
			want:     outcome{Verdict: result.VerdictInProgress, Reason: "Progressing"}},
		{name: "its wait timed out a minute ago, with the workloads",
			revision:  "1.0.0",
			docs:      []string{helmV2(rset(`[{version: "1.0.0"}]`, rsetTimedOut("2026-11-01T11:59:00Z"), hr)), hrUpgrading, ociRepo()},
			workloads: true,
			want:      outcome{Verdict: result.VerdictInProgress, Reason: "Progressing"}},
		{name: "its wait timed out ten minutes ago: flux-operator's retry failed too",
			revision: "1.0.0",
			docs:     []string{helmV2(rset(`[{version: "1.0.0"}]`, rsetTimedOut("2026-11-01T11:50:00Z"), hr)), hrUpgrading, ociRepo()},
			want:     outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxHealthCheckFailed, Reason: "ReconciliationFailed"}},
		{name: "its wait timed out a minute ago, a generated Kustomization failed",
			docs: []string{rset(noInputs, rsetTimedOut("2026-11-01T11:59:00Z"), teams...), ks("team1", "GitRepository", "app", "", revB), ksFailed("team2", revB), gitRepo()},
			want: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxBuildFailed, Reason: "BuildFailed"}},
		{name: "inputs from providers: a Kustomization at the expected commit and a HelmRelease at the chart its source offers",
			docs: []string{helmV2(fromProviders(rset(noInputs, rsetReady, teams[0], hr), "")), ks("team1", "GitRepository", "app", "", revB), gitRepo(),
				strings.Replace(helmRelease("OCIRepository", 2, 2, "1.0.0", dig1), "  valuesFrom: [{kind: ConfigMap, name: web-values}]\n", "", 1), ociRepo()},
			want: current},
		{name: "not reconciled at its generation yet",
			docs: []string{rset(noInputs, strings.Replace(rsetReady, "observedGeneration: 2", "observedGeneration: 1", 1), teams...),
				ks("team1", "GitRepository", "app", "", revB), ks("team2", "GitRepository", "app", "", revB), gitRepo()},
			want: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var rev flux.Revision
			if tt.revision != "-" {
				var err error
				want := tt.revision
				if want == "" {
					want = revB
				}
				if rev, err = flux.ParseRevision(want); err != nil {
					t.Fatal(err)
				}
			}
			docs := strings.Join(tt.docs, "\n---\n")
			for _, snapshot := range []bool{true, false} {
				spec := Spec{Resources: []flux.Ref{root}, Revision: rev, Workloads: tt.workloads, Snapshot: snapshot, Health: fluxhealth.New(t.Context())}
				e := Assess(newFixtureView(t, docs, order...), NewMemory(), spec, fixtureNow)
				got := outcomeOf(e)
				if tt.want.Reason == "" && tt.want.Verdict == result.VerdictInProgress {
					got.Reason = ""
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("snapshot %t (-want +got):\n%s\npending %+v fatal %+v", snapshot, diff, e.Pending, e.Fatal)
				}
			}
		})
	}
}

// TestResourceSetRetriedFailure: a failure flux-operator retries (an apply the API server
// refused while a CRD is not served yet) waits out the retry grace in flux-operator's name.
func TestResourceSetRetriedFailure(t *testing.T) {
	t.Parallel()
	refused := `  - {type: Ready, status: "False", reason: ReconciliationFailed, message: "reconciliation failed: Widget/shop/web dry-run failed: no matches for kind \"Widget\" in version \"example.com/v1\"", observedGeneration: 2}`
	runFixtureCases(t, []fixtureCase{
		{name: "a CRD not served yet", resources: []flux.Ref{{Kind: flux.KindResourceSet, Namespace: "flux-system", Name: "tenants"}},
			revision: "1.0.0", noWorkloads: true, looks: []fixtureLook{
				{docs: []string{rset(`[{version: "1.0.0"}]`, refused)},
					want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxReconciliationFailed, Reason: "ReconciliationFailed"},
						Says: []string{"flux-operator retries since"}}},
			}},
	})
}

// TestResourceSetReadyBeforeSpec: flux-operator's patch stamps a ResourceSet's Ready with the
// generation of the object it writes, so a Ready=True at the current generation may be of the
// reconcile of the previous one, when the spec changed while it ran. The newest status.history
// entry dates that reconcile (lastReconciled less lastReconciledDuration), the managedFields
// entry that owns the spec dates its change: a reconcile that surely started before it waits
// for flux-operator's reconcile of the new generation, which the change queues at once, until
// a bound; one that started after it, or within the second, is Current.
func TestResourceSetReadyBeforeSpec(t *testing.T) {
	t.Parallel()
	root := []flux.Ref{{Kind: flux.KindResourceSet, Namespace: "flux-system", Name: "tenants"}}
	teams := []string{"flux-system_team1_kustomize.toolkit.fluxcd.io_Kustomization", "flux-system_team2_kustomize.toolkit.fluxcd.io_Kustomization"}
	// reconciled is the ResourceSet Ready at generation 2, its spec last written at specAt, by
	// a reconcile that ended at end and took took.
	reconciled := func(specAt, end, took string) []string {
		doc := strings.Replace(rset("[]", rsetReady, teams...), "metadata: {name: tenants, namespace: flux-system, generation: 2}", `metadata:
  name: tenants
  namespace: flux-system
  generation: 2
  managedFields:
  - {manager: kustomize-controller, operation: Apply, apiVersion: fluxcd.controlplane.io/v1, time: "`+specAt+`", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {}}, "f:spec": {"f:inputs": {}}}}
  - {manager: flux-operator, operation: Update, apiVersion: fluxcd.controlplane.io/v1, time: "2026-11-01T11:59:58Z", fieldsType: FieldsV1, fieldsV1: {"f:status": {}}, subresource: status}`, 1)
		doc = strings.Replace(doc, "status:\n", `status:
  history:
  - {digest: "sha256:43ad78c94b2655429d84f21488f29d7cca9cd45b7f54d2b27e16bbec8eff9228", firstReconciled: "2026-11-01T10:00:00Z", lastReconciled: "`+end+`", lastReconciledDuration: "`+took+`", lastReconciledStatus: ReconciliationSucceeded, totalReconciliations: 3}
`, 1)
		return []string{doc, ks("team1", "GitRepository", "app", "", revB), ks("team2", "GitRepository", "app", "", revB), gitRepo()}
	}
	notReconciled := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "SpecNotReconciled"},
		Says:    []string{"started by 2026-11-01T11:59:48Z, before its spec was last written (2026-11-01T11:59:50Z"},
		Recheck: time.Date(2026, 11, 1, 12, 0, 23, 0, time.UTC)}
	// (What it generated is read after its status, as the walk needs.)
	reads := append([]string{"resourcesets"}, slices.DeleteFunc(slices.Clone(fixtureReads), func(r string) bool { return r == "resourcesets" })...)
	runFixtureCases(t, []fixtureCase{
		{name: "the spec written while the reconcile that wrote Ready ran: waits, until the bound", resources: root, reads: reads, looks: []fixtureLook{
			{docs: reconciled("2026-11-01T11:59:50Z", "2026-11-01T11:59:52Z", "5s"), want: notReconciled},
			{docs: reconciled("2026-11-01T11:59:50Z", "2026-11-01T11:59:52Z", "5s"), at: time.Date(2026, 11, 1, 12, 0, 23, 0, time.UTC), want: expected{Outcome: current}}}},
		{name: "the spec written before that reconcile started", resources: root, reads: reads, looks: []fixtureLook{
			{docs: reconciled("2026-11-01T11:59:45Z", "2026-11-01T11:59:52Z", "5s"), want: expected{Outcome: current}}}},
		{name: "the spec written within the second the reconcile started", resources: root, reads: reads, looks: []fixtureLook{
			{docs: reconciled("2026-11-01T11:59:47Z", "2026-11-01T11:59:52Z", "5.4s"), want: expected{Outcome: current}}}},
		{name: "the spec written, no history", resources: root, reads: reads, looks: []fixtureLook{
			{docs: []string{rset("[]", rsetReady, teams...), ks("team1", "GitRepository", "app", "", revB), ks("team2", "GitRepository", "app", "", revB), gitRepo()},
				want: expected{Outcome: current}}}},
	})
}
