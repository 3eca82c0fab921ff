package assess

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// source is a source.toolkit.fluxcd.io/v1 object of flux-system at generation 2 with the
// given status (indented by two spaces).
func source(kind, name, status string) string {
	return `apiVersion: source.toolkit.fluxcd.io/v1
kind: ` + kind + `
metadata: {name: ` + name + `, namespace: flux-system, generation: 2}
spec: {url: "https://git.example.com/` + name + `", interval: 1m}
status:
` + status
}

// fetchFailing is the status source-controller v1.9.3 writes when a fetch fails again at the
// current generation (internal/reconcile.ComputeReconcileResult: Reconciling turns
// ProgressingWithRetry; the summary marks Ready False from FetchFailed): the artifact of the
// last fetch that worked stays.
func fetchFailing(rev, reason, message string) string {
	return `  observedGeneration: 2
  artifact: {revision: "` + rev + `"}
  conditions:
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "building artifact: new upstream revision", observedGeneration: 2}
  - {type: Ready, status: "False", reason: ` + reason + `, message: "` + message + `", observedGeneration: 2}
  - {type: FetchFailed, status: "True", reason: ` + reason + `, message: "` + message + `", observedGeneration: 2}`
}

// stalledSource is a source source-controller stalled on at the current generation (a
// serror.Stalling: Stalled True, observedGeneration set), serving rev ("" for none).
func stalledSource(rev string) string {
	artifact := ""
	if rev != "" {
		artifact = `  artifact: {revision: "` + rev + `"}` + "\n"
	}
	const msg = `failed to parse url 'https//git.example.com/app': parse \"https//git.example.com/app\": invalid URI for request`
	return `  observedGeneration: 2
` + artifact + `  conditions:
  - {type: Stalled, status: "True", reason: URLInvalid, message: "` + msg + `", observedGeneration: 2}
  - {type: Ready, status: "False", reason: URLInvalid, message: "` + msg + `", observedGeneration: 2}
  - {type: FetchFailed, status: "True", reason: URLInvalid, message: "` + msg + `", observedGeneration: 2}`
}

const servingB = `  observedGeneration: 2
  artifact: {revision: "` + revB + `"}
  conditions: [{type: Ready, status: "True", reason: Succeeded, message: "stored artifact for revision '` + revB + `'", observedGeneration: 2}]`

// waitingKs is Kustomization flux-system/name of GitRepository app, applied on revA, that
// kustomize-controller holds back on its dependency dep (v1.9.5 checkDependencies).
func waitingKs(name, dep string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ` + name + `, namespace: flux-system, generation: 2}
spec: {sourceRef: {kind: GitRepository, name: app}, dependsOn: [{name: ` + dep + `}]}
status:
  observedGeneration: 2
  lastAppliedRevision: "` + revA + `"
  lastAttemptedRevision: "` + revA + `"
  conditions:
  - {type: Ready, status: "False", reason: DependencyNotReady, message: "dependency 'flux-system/` + dep + `' is not ready", observedGeneration: 2}
  inventory: {entries: []}`
}

// stalledKs is Kustomization flux-system/name that kustomize-controller stalled on: a CEL
// health check that does not parse (v1.9.5; the message of internal/flux/testdata/ks-stalled.yaml).
func stalledKs(name string) string {
	const msg = `Reconciliation failed terminally due to configuration error: failed to parse the CEL expression 'status.conditions.filter(e, e.type == \"Ready\").all(e, e.status == \"True\"': ERROR: <input>:1:70: Syntax error: missing ')' at '<EOF>'`
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ` + name + `, namespace: flux-system, generation: 2}
spec: {sourceRef: {kind: GitRepository, name: app}}
status:
  observedGeneration: 2
  lastAppliedRevision: "` + revA + `"
  lastAttemptedRevision: "` + revA + `"
  conditions:
  - {type: Ready, status: "False", reason: InvalidCELExpression, message: "` + msg + `", observedGeneration: 2}
  - {type: Stalled, status: "True", reason: InvalidCELExpression, message: "` + msg + `", observedGeneration: 2}
  inventory: {entries: []}`
}

// TestAssessSources: Flux sources as objects of an inventory (judged by source-controller's
// rule, not kstatus), as the source of a requested object, and dependsOn chains.
func TestAssessSources(t *testing.T) {
	t.Parallel()
	bootstrap := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "flux-system"}
	app := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	apps := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "apps"}
	// The flux bootstrap layout: the root lists its own GitRepository and itself.
	root := ks("flux-system", "GitRepository", "flux-system", "", revB,
		"flux-system_flux-system_source.toolkit.fluxcd.io_GitRepository", "flux-system_flux-system_kustomize.toolkit.fluxcd.io_Kustomization",
		"shop_web_apps_Deployment", "shop_web__Service")
	withRepo := ks("app", "GitRepository", "app", "", revB, "flux-system_charts_source.toolkit.fluxcd.io_HelmRepository", "shop_web_apps_Deployment")
	order := []string{"kustomizations", "gitrepositories", "helmrepositories", "deployments", "services"}
	rolledOut := deployment("Deployment", 3, 3)
	const gitDown = `failed to checkout and determine revision: unable to clone 'https://git.example.com/flux-system': dial tcp: lookup git.example.com: i/o timeout`
	failed := func(code result.Code, reason string) outcome {
		return outcome{Verdict: result.VerdictFailed, Code: code, Reason: reason}
	}
	tests := []struct {
		name      string
		resources []flux.Ref
		docs      []string
		want      outcome
		mentions  []string // in the verdict's message
	}{
		// Sources listed in an inventory.
		{name: "bootstrap layout, its GitRepository failing to fetch again while it serves the applied commit",
			resources: []flux.Ref{bootstrap},
			docs:      []string{root, source("GitRepository", "flux-system", fetchFailing(revB, "GitOperationFailed", gitDown)), rolledOut, service},
			want:      current},
		{name: "an app's HelmRepository failing to fetch its index again",
			resources: []flux.Ref{app},
			docs: []string{withRepo, gitRepo(), rolledOut,
				source("HelmRepository", "charts", fetchFailing("sha256:"+dig1, "IndexationFailed", "failed to fetch Helm repository index: 503 Service Unavailable"))},
			want: current},
		{name: "bootstrap layout, its GitRepository stalled on the spec the root applied",
			resources: []flux.Ref{bootstrap},
			docs:      []string{root, source("GitRepository", "flux-system", stalledSource(revB)), rolledOut, service},
			want:      failed(result.CodeFluxArtifactFailed, "Stalled"), mentions: []string{"GitRepository/flux-system/flux-system", "invalid URI"}},
		{name: "bootstrap layout, its GitRepository not reconciled at its new generation",
			resources: []flux.Ref{bootstrap},
			docs: []string{root, strings.Replace(source("GitRepository", "flux-system", servingB), "observedGeneration: 2\n", "observedGeneration: 1\n", 1),
				rolledOut, service},
			want: outcome{Verdict: result.VerdictInProgress, Reason: string(result.ObjectInProgress)}, mentions: []string{"reconcile its current spec"}},

		// dependsOn, followed to any depth.
		{name: "apps, infra-configs, infra-controllers: the last stalled",
			resources: []flux.Ref{apps},
			docs:      []string{waitingKs("apps", "infra-configs"), waitingKs("infra-configs", "infra-controllers"), stalledKs("infra-controllers"), gitRepo()},
			want:      failed(result.CodeFluxDependencyFailed, "InvalidCELExpression"),
			mentions:  []string{"Kustomization/flux-system/infra-configs (dependsOn), which waits for Kustomization/flux-system/infra-controllers", "failed to parse the CEL expression"}},
		{name: "four levels, the last stalled",
			resources: []flux.Ref{apps},
			docs: []string{waitingKs("apps", "infra-configs"), waitingKs("infra-configs", "infra-controllers"), waitingKs("infra-controllers", "crds"),
				stalledKs("crds"), gitRepo()},
			want: failed(result.CodeFluxDependencyFailed, "InvalidCELExpression"), mentions: []string{"Kustomization/flux-system/crds"}},
		{name: "a chain whose last is merely applying: Flux's own wait",
			resources: []flux.Ref{apps},
			docs: []string{waitingKs("apps", "infra-configs"), waitingKs("infra-configs", "infra-controllers"),
				strings.Replace(ks("infra-controllers", "GitRepository", "app", "", revA), `status: "True", reason: ReconciliationSucceeded`, `status: "Unknown", reason: Progressing`, 1), gitRepo()},
			want: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxDependencyNotReady, Reason: "DependencyNotReady"}},
		{name: "a cycle of dependsOn",
			resources: []flux.Ref{apps},
			docs:      []string{waitingKs("apps", "infra-configs"), waitingKs("infra-configs", "infra-controllers"), waitingKs("infra-controllers", "infra-configs"), gitRepo()},
			want:      outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxDependencyNotReady, Reason: "DependencyNotReady"}},

		// The requested object's own source.
		{name: "the root's GitRepository stalled, serving the previous commit",
			resources: []flux.Ref{app},
			docs:      []string{ks("app", "GitRepository", "app", "", revA), source("GitRepository", "app", stalledSource(revA))},
			want:      failed(result.CodeFluxArtifactFailed, "SourceStalled"), mentions: []string{"GitRepository/flux-system/app stalled", "invalid URI", "aaaaaaa"}},
		{name: "the root's GitRepository stalled with no artifact",
			resources: []flux.Ref{app},
			docs: []string{strings.Replace(ks("app", "GitRepository", "app", "", ""), `status: "True", reason: ReconciliationSucceeded, message: "Applied revision: "`,
				`status: "False", reason: ArtifactFailed, message: "Source artifact not found, retrying in 30s"`, 1),
				source("GitRepository", "app", stalledSource(""))},
			want: failed(result.CodeFluxArtifactFailed, "SourceStalled"), mentions: []string{"GitRepository/flux-system/app stalled", "no artifact"}},
		{name: "a dependency whose own GitRepository is stalled with no artifact",
			resources: []flux.Ref{apps},
			docs: []string{waitingKs("apps", "infra"), source("GitRepository", "infra", stalledSource("")),
				strings.Replace(ks("infra", "GitRepository", "infra", "", ""), `status: "True", reason: ReconciliationSucceeded, message: "Applied revision: "`,
					`status: "False", reason: ArtifactFailed, message: "Source artifact not found, retrying in 30s"`, 1), gitRepo()},
			want: failed(result.CodeFluxDependencyFailed, "SourceStalled"), mentions: []string{"Kustomization/flux-system/infra (dependsOn), which failed: GitRepository/flux-system/infra stalled"}},
		{name: "the root's GitRepository stalled, serving the expected commit: it may still be applied",
			resources: []flux.Ref{app},
			docs:      []string{ks("app", "GitRepository", "app", "", revA), source("GitRepository", "app", stalledSource(revB))},
			want:      outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}},
		{name: "the root's GitRepository failing to fetch, not stalled: source-controller retries",
			resources: []flux.Ref{app},
			docs:      []string{ks("app", "GitRepository", "app", "", revA), source("GitRepository", "app", fetchFailing(revA, "GitOperationFailed", gitDown))},
			want:      outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rev, err := flux.ParseRevision(revB)
			if err != nil {
				t.Fatal(err)
			}
			docs := strings.Join(tt.docs, "\n---\n")
			for _, snapshot := range []bool{true, false} {
				spec := Spec{Resources: tt.resources, Revision: rev, Workloads: true, Snapshot: snapshot}
				e := Assess(newFixtureView(t, docs, order...), NewMemory(), spec, fixtureNow)
				if diff := cmp.Diff(tt.want, outcomeOf(e)); diff != "" {
					t.Errorf("snapshot %t (-want +got):\n%s\npending %+v fatal %+v", snapshot, diff, e.Pending, e.Fatal)
				}
				finding := e.Fatal
				if finding == nil {
					finding = e.Pending
				}
				for _, m := range tt.mentions {
					if finding == nil || !strings.Contains(finding.Message, m) {
						t.Errorf("snapshot %t: the verdict's message does not mention %q: %+v", snapshot, m, finding)
					}
				}
			}
		})
	}
}

// TestChartIndexRefresh: a HelmChart stalled on a chart version its HTTP HelmRepository's index
// does not list yet (InvalidChartReference, source-controller v1.9.3's words) waits for the
// repository's next fetch on every path that judges it, the requested HelmRelease's own chart
// and a HelmChart an inventory lists as nested ones do, and fails once the repository has
// fetched since, or at once when the chart was built from a newer index that lacks it too.
func TestChartIndexRefresh(t *testing.T) {
	t.Parallel()
	const (
		idx1 = "sha256:" + dig1
		idx2 = "sha256:" + dig2
		// source-controller v1.9.3: BuildError{Reason: ErrChartReference} ("invalid chart
		// reference") wrapping internal/helm/chart/builder_remote.go's "failed to get chart
		// version for remote reference: %w" of chart_repository.go's "no '%s' chart with
		// version matching '%s' found".
		refused = "invalid chart reference: failed to get chart version for remote reference: no 'web' chart with version matching '1.1.0' found"
	)
	stalledAt := fixtureNow.Add(-time.Minute)
	stamp := func(t time.Time) string { return t.Format(time.RFC3339) }
	repo := func(index string, updated time.Time) string {
		return `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: shop, generation: 1}
spec: {url: "https://charts.example.com", interval: 5m}
status:
  observedGeneration: 1
  artifact: {revision: "` + index + `", lastUpdateTime: "` + stamp(updated) + `"}
  conditions: [{type: Ready, status: "True", reason: Succeeded, message: "stored artifact: revision '` + index + `'", observedGeneration: 1}]`
	}
	// A Git repository of charts at commit rev.
	gitCharts := func(rev string) string {
		return `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: charts, namespace: shop, generation: 1}
spec: {url: "https://git.example.com/charts", interval: 5m}
status:
  observedGeneration: 1
  artifact: {revision: "` + rev + `"}
  conditions: [{type: Ready, status: "True", reason: Succeeded, observedGeneration: 1}]`
	}
	chart := func(builtFrom string) string {
		kind := "HelmRepository"
		if strings.Contains(builtFrom, "@sha1:") {
			kind = "GitRepository"
		}
		return `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata: {name: shop-web, namespace: shop, generation: 2}
spec: {chart: web, version: 1.1.0, interval: 5m, sourceRef: {kind: ` + kind + `, name: charts}}
status:
  observedGeneration: 2
  observedSourceArtifactRevision: "` + builtFrom + `"
  artifact: {revision: "1.0.0"}
  conditions:
  - {type: Stalled, status: "True", reason: InvalidChartReference, message: "` + refused + `", observedGeneration: 2, lastTransitionTime: "` + stamp(stalledAt) + `"}
  - {type: Ready, status: "False", reason: InvalidChartReference, message: "` + refused + `", observedGeneration: 2, lastTransitionTime: "` + stamp(stalledAt) + `"}`
	}
	hrText := `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: shop, generation: 2}
spec:
  interval: 10m
  chart: {spec: {chart: web, version: 1.1.0, sourceRef: {kind: KIND, name: charts}}}
status:
  observedGeneration: 1
  helmChart: shop/shop-web
  lastAttemptedRevision: "1.0.0"
  lastAttemptedGeneration: 1
  conditions:
  - {type: Ready, status: "False", reason: SourceNotReady, message: "HelmChart 'shop/shop-web' is not ready: ` + refused + `", observedGeneration: 2}
  - {type: Released, status: "True", reason: UpgradeSucceeded, message: "Helm upgrade succeeded", observedGeneration: 1}
  history:
  - {name: web, namespace: shop, version: 1, status: deployed, chartName: web, chartVersion: "1.0.0"}`
	hrOf := func(kind string) string { return strings.Replace(hrText, "KIND", kind, 1) }
	hr, hrGit := hrOf("HelmRepository"), hrOf("GitRepository")
	app := ks("app", "GitRepository", "app", "", revB, "shop_shop-web_source.toolkit.fluxcd.io_HelmChart", "shop_web_apps_Deployment")
	hrRef := flux.Ref{Kind: flux.KindHelmRelease, Namespace: "shop", Name: "web"}
	appRef := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	fetched := stalledAt.Add(5*time.Minute + 30*time.Second + 30*time.Second)
	waiting := outcome{Verdict: result.VerdictInProgress}
	chartFailed := outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxChartFailed}
	// The index changed after the chart's build: source-controller builds it again, whenever
	// the bound of its fetch passed.
	changed := stalledAt.Add(30 * time.Second)
	// A HelmRepository that cannot be read is assumed to fetch its index every 10m.
	unreadFetched := stalledAt.Add(10*time.Minute + time.Minute + 30*time.Second)
	pastChanged := changed.Add(5*time.Minute + 30*time.Second + 30*time.Second + time.Second)
	tests := []struct {
		name string
		root flux.Ref
		want string
		docs []string
		at   time.Time
		out  outcome
		// recheck is when the run looks again by itself (zero: at the chart's next change).
		recheck time.Time
		// forbidRepo makes the HelmRepositories unreadable (403).
		forbidRepo bool
	}{
		{"the requested HelmRelease's chart, the index not fetched since", hrRef, "1.1.0", []string{hr, chart(idx1), repo(idx1, fixtureNow.Add(-time.Hour))}, fixtureNow, waiting, fetched, false},
		{"the requested HelmRelease's chart, the index fetched since", hrRef, "1.1.0", []string{hr, chart(idx1), repo(idx1, fixtureNow.Add(-time.Hour))}, fetched.Add(time.Second), chartFailed, time.Time{}, false},
		{"the requested HelmRelease's chart, built from a newer index", hrRef, "1.1.0", []string{hr, chart(idx2), repo(idx2, stalledAt.Add(30*time.Second))}, fixtureNow, chartFailed, time.Time{}, false},
		{"a HelmChart an inventory lists, the index not fetched since", appRef, revB, []string{app, gitRepo(), chart(idx1), repo(idx1, fixtureNow.Add(-time.Hour)), deployment("Deployment", 3, 3)}, fixtureNow, waiting, fetched, false},
		{"a HelmChart an inventory lists, the index fetched since", appRef, revB, []string{app, gitRepo(), chart(idx1), repo(idx1, fixtureNow.Add(-time.Hour)), deployment("Deployment", 3, 3)}, fetched.Add(time.Second), chartFailed, time.Time{}, false},
		{"a HelmChart an inventory lists, built from a newer index", appRef, revB, []string{app, gitRepo(), chart(idx2), repo(idx2, stalledAt.Add(30*time.Second)), deployment("Deployment", 3, 3)}, fixtureNow, chartFailed, time.Time{}, false},
		// Built from another revision than its source's artifact now: about to be built again.
		{"the requested HelmRelease's chart, the index changed since its build", hrRef, "1.1.0", []string{hr, chart(idx1), repo(idx2, changed)}, pastChanged, waiting, time.Time{}, false},
		{"a HelmChart an inventory lists, the index changed since its build", appRef, revB, []string{app, gitRepo(), chart(idx1), repo(idx2, changed), deployment("Deployment", 3, 3)}, pastChanged, waiting, time.Time{}, false},
		{"the requested HelmRelease's Git chart, its source moved since its build", hrRef, "1.1.0", []string{hrGit, chart("main@sha1:" + shaB), gitCharts("main@sha1:" + shaA)}, fixtureNow, waiting, time.Time{}, false},
		{"the requested HelmRelease's Git chart, built from its source's commit", hrRef, "1.1.0", []string{hrGit, chart("main@sha1:" + shaA), gitCharts("main@sha1:" + shaA)}, fixtureNow, chartFailed, time.Time{}, false},
		// Its HelmRepository cannot be read: its index may list the version at a fetch to come.
		{"the requested HelmRelease's chart, its HelmRepository forbidden", hrRef, "1.1.0", []string{hr, chart(idx1)}, fixtureNow, waiting, unreadFetched, true},
		{"the requested HelmRelease's chart, its HelmRepository forbidden, past the assumed fetch", hrRef, "1.1.0", []string{hr, chart(idx1)}, unreadFetched.Add(time.Second), chartFailed, time.Time{}, true},
		{"the requested HelmRelease's chart, its HelmRepository's interval unset (1m)", hrRef, "1.1.0", []string{hr, chart(idx1), strings.Replace(repo(idx1, fixtureNow.Add(-time.Hour)), ", interval: 5m", "", 1)}, fixtureNow, waiting, stalledAt.Add(time.Minute + 6*time.Second + 30*time.Second), false},
		{"a HelmChart an inventory lists, its HelmRepository forbidden", appRef, revB, []string{app, gitRepo(), chart(idx1), deployment("Deployment", 3, 3)}, fixtureNow, waiting, unreadFetched, true},
		{"a Git HelmChart an inventory lists, its source moved since its build", appRef, revB, []string{app, gitRepo(), chart("main@sha1:" + shaB), gitCharts("main@sha1:" + shaA), deployment("Deployment", 3, 3)}, fixtureNow, waiting, time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want, err := flux.ParseRevision(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			order := []string{"kustomizations", "helmreleases", "gitrepositories", "helmcharts", "helmrepositories", "deployments"}
			for _, snapshot := range []bool{true, false} {
				spec := Spec{Resources: []flux.Ref{tt.root}, Revision: want, Workloads: true, Snapshot: snapshot}
				view := newFixtureView(t, strings.Join(tt.docs, "\n---\n"), order...)
				if tt.forbidRepo {
					view.forbidden[schema.GroupResource{Group: "source.toolkit.fluxcd.io", Resource: "helmrepositories"}] = true
				}
				e := Assess(view, NewMemory(), spec, tt.at)
				got := outcomeOf(e)
				got.Reason = ""
				if tt.out.Verdict == result.VerdictInProgress {
					got.Code = ""
				}
				if diff := cmp.Diff(tt.out, got); diff != "" {
					t.Errorf("snapshot %t (-want +got):\n%s\npending %+v fatal %+v", snapshot, diff, e.Pending, e.Fatal)
				}
				if tt.out.Verdict == result.VerdictInProgress && !e.Recheck.Equal(tt.recheck) {
					t.Errorf("snapshot %t: recheck at %v, want %v", snapshot, e.Recheck, tt.recheck)
				}
			}
		})
	}
}
