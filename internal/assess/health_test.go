package assess

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// widget is custom resource example.com/v1 Widget shop/w at generation 1, its controller at
// observed, with the given status fields (flow YAML, without braces).
func widget(observed, status string) string {
	return `apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: shop, generation: 1}
status: {observedGeneration: ` + observed + `, ` + status + `}`
}

// widgetExprs are healthCheckExprs for Widgets by status.phase, as a spec field of ks.
const widgetExprs = `, wait: true, healthCheckExprs: [{apiVersion: example.com/v1, kind: Widget, ` +
	`current: "status.phase == 'Ready'", inProgress: "status.phase == 'Pending'", failed: "status.phase == 'Failed'"}]`

// hrWith is the Ready HelmRelease of helmRelease (chart 1.0.0 of OCIRepository web) with extra
// spec fields (YAML lines under spec) and its inventory's entries.
func hrWith(spec string, entries ...string) string {
	var inv strings.Builder
	for _, e := range entries {
		inv.WriteString("\n    - {id: " + e + ", v: v1}")
	}
	hr := helmRelease("OCIRepository", 2, 2, "1.0.0+"+dig1[:12], dig1)
	hr = strings.Replace(hr, "  interval: 10m\n", "  interval: 10m\n"+spec, 1)
	if len(entries) > 0 {
		hr = strings.Replace(hr, "entries: []", "entries:"+inv.String(), 1)
	}
	return hr
}

// TestAssessHealth: objects are judged by Flux's own readers, as its controllers judge them:
// the kinds a Kustomization's or HelmRelease's spec.healthCheckExprs name by those expressions
// (fluxcd/pkg/runtime/cel), Jobs by fluxcd/pkg/runtime/statusreaders, the rest by kstatus; a
// Job that is gone counts as finished when its HelmRelease is Ready after Helm's wait for Jobs,
// as helm-controller's wait (fluxcd/pkg/ssa) counts a Job deleted by its TTL.
func TestAssessHealth(t *testing.T) {
	t.Parallel()
	root := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	const widgetID = "shop_w_example.com_Widget"
	withExprs := func(exprs string) string { return ks("app", "GitRepository", "app", exprs, revB, widgetID) }
	byExprs := []string{"kustomizations", "gitrepositories", "widgets"}
	inProgress := outcome{Verdict: result.VerdictInProgress, Reason: string(result.ObjectInProgress)}
	unknown := outcome{Verdict: result.VerdictInProgress, Reason: string(result.ObjectUnknown)}
	nestedHR := func(hr string, more ...string) []string {
		return append([]string{ks("app", "GitRepository", "app", "", revB, "shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "shop_web-values__ConfigMap"),
			gitRepo(), hr, ociRepo(), valuesConfigMap("2026-11-01T11:00:00Z")}, more...)
	}
	byHR := []string{"kustomizations", "gitrepositories", "helmreleases", "ocirepositories", "configmaps", "jobs", "widgets"}
	// Another Job of the namespace: the list of Jobs is read, and holds no migrate.
	const otherJob = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: report, namespace: shop, generation: 1}\nspec: {template: {spec: {containers: []}}}\n" +
		"status: {startTime: '2026-11-01T11:00:00Z', succeeded: 1, conditions: [{type: Complete, status: 'True'}]}"
	tests := []struct {
		name  string
		docs  []string
		order []string
		want  outcome
	}{
		// spec.healthCheckExprs: the team's expressions, not kstatus, judge the kinds they name.
		{name: "current by the expressions, though a Reconciling condition keeps kstatus InProgress",
			docs:  []string{withExprs(widgetExprs), gitRepo(), widget("1", "phase: Ready, conditions: [{type: Reconciling, status: 'True', reason: Polling}]")},
			order: byExprs, want: current},
		{name: "in progress by the expressions, though kstatus calls a Widget without conditions Current",
			docs: []string{withExprs(widgetExprs), gitRepo(), widget("1", "phase: Pending")}, order: byExprs, want: inProgress},
		{name: "failed by the expressions, though kstatus calls it Current",
			docs:  []string{withExprs(widgetExprs), gitRepo(), widget("1", "phase: Failed")},
			order: byExprs, want: outcome{Verdict: result.VerdictFailed, Reason: "Failed"}},
		{name: "no expression true yet is in progress",
			docs: []string{withExprs(widgetExprs), gitRepo(), widget("1", "phase: Creating")}, order: byExprs, want: inProgress},
		{name: "Flux's own observedGeneration check comes before the expressions",
			docs:  []string{withExprs(widgetExprs), gitRepo(), widget("0", "phase: Ready")},
			order: byExprs, want: inProgress},
		{name: "an expression naming the group, not the kind",
			docs: []string{withExprs(`, healthCheckExprs: [{apiVersion: example.com/v1, current: "status.phase == 'Ready'", failed: "status.phase == 'Failed'"}]`),
				gitRepo(), widget("1", "phase: Failed")},
			order: byExprs, want: outcome{Verdict: result.VerdictFailed, Reason: "Failed"}},
		{name: "an expression that fails to evaluate (a field the object lacks) waits, as Flux's health check does",
			docs:  []string{withExprs(`, healthCheckExprs: [{apiVersion: example.com/v1, kind: Widget, current: "status.ready == true"}]`), gitRepo(), widget("1", "phase: Failed")},
			order: byExprs, want: unknown},
		{name: "an expression that does not compile waits (kustomize-controller stalls on it)",
			docs:  []string{withExprs(`, healthCheckExprs: [{apiVersion: example.com/v1, kind: Widget, current: "status."}]`), gitRepo(), widget("1", "phase: Failed")},
			order: byExprs, want: unknown},
		{name: "no expression for its kind: kstatus",
			docs: []string{withExprs(`, healthCheckExprs: [{apiVersion: example.com/v1, kind: Gadget, current: "status.phase == 'Ready'"}]`),
				gitRepo(), widget("1", "phase: Failed")},
			order: byExprs, want: current},
		{name: "a HelmRelease's own healthCheckExprs",
			docs: nestedHR(hrWith("  healthCheckExprs: [{apiVersion: example.com/v1, kind: Widget, current: \"status.phase == 'Ready'\", failed: \"status.phase == 'Failed'\"}]\n", widgetID),
				widget("1", "phase: Failed")),
			order: byHR, want: outcome{Verdict: result.VerdictFailed, Reason: "Failed"}},
		// helm-controller evaluates them in Helm's wait only; the run judges the release's
		// objects itself, and by them whatever helm-controller's wait did: kstatus knows
		// nothing of a Widget.
		{name: "a HelmRelease's healthCheckExprs with the upgrade's wait disabled: still the expressions",
			docs: nestedHR(hrWith("  upgrade: {disableWait: true}\n  healthCheckExprs: [{apiVersion: example.com/v1, kind: Widget, current: \"status.phase == 'Ready'\", failed: \"status.phase == 'Failed'\"}]\n", widgetID),
				widget("1", "phase: Failed")),
			order: byHR, want: outcome{Verdict: result.VerdictFailed, Reason: "Failed"}},
		{name: "a HelmRelease's healthCheckExprs with the upgrade's wait disabled, the Widget pending: waits",
			docs: nestedHR(hrWith("  upgrade: {disableWait: true}\n  healthCheckExprs: [{apiVersion: example.com/v1, kind: Widget, current: \"status.phase == 'Ready'\", failed: \"status.phase == 'Failed'\"}]\n", widgetID),
				widget("1", "phase: Pending")),
			order: byHR, want: inProgress},
		{name: "a HelmRelease's healthCheckExprs with the legacy wait strategy: still the expressions",
			docs: nestedHR(hrWith("  waitStrategy: {name: legacy}\n  healthCheckExprs: [{apiVersion: example.com/v1, kind: Widget, current: \"status.phase == 'Ready'\", failed: \"status.phase == 'Failed'\"}]\n", widgetID),
				widget("1", "phase: Failed")),
			order: byHR, want: outcome{Verdict: result.VerdictFailed, Reason: "Failed"}},
		{name: "a HelmRelease's healthCheckExprs with the poller strategy, its install's wait disabled, released by an upgrade",
			docs: nestedHR(hrWith("  waitStrategy: {name: poller}\n  install: {disableWait: true}\n  healthCheckExprs: [{apiVersion: example.com/v1, kind: Widget, current: \"status.phase == 'Ready'\", failed: \"status.phase == 'Failed'\"}]\n", widgetID),
				widget("1", "phase: Failed")),
			order: byHR, want: outcome{Verdict: result.VerdictFailed, Reason: "Failed"}},

		// Jobs, by Flux's Job reader.
		{name: "a Job suspended before it started is Current to Flux's Job reader",
			docs: []string{ks("app", "GitRepository", "app", "", revB, "shop_migrate_batch_Job"), gitRepo(),
				"apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, namespace: shop, generation: 1}\nspec: {suspend: true, template: {spec: {containers: []}}}\nstatus: {}"},
			order: []string{"kustomizations", "gitrepositories", "jobs"}, want: current},

		// A HelmRelease's Job deleted by its TTL after Helm's wait counted it done.
		{name: "a HelmRelease Ready after Helm's wait for Jobs, its Job gone",
			docs: nestedHR(hrWith("", "shop_migrate_batch_Job"), otherJob), order: byHR, want: current},
		{name: "a HelmRelease that did not wait for Jobs, its Job gone",
			docs:  nestedHR(hrWith("  upgrade: {disableWaitForJobs: true}\n", "shop_migrate_batch_Job"), otherJob),
			order: byHR, want: outcome{Verdict: result.VerdictUnverified, Code: result.CodeJobGoneUnverified, Reason: "NotFound"}},
		{name: "a HelmRelease whose install did not wait, upgraded since with a wait for Jobs, its Job gone",
			docs: nestedHR(hrWith("  install: {disableWait: true}\n", "shop_migrate_batch_Job"), otherJob), order: byHR, want: current},
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
				spec := Spec{Resources: []flux.Ref{root}, Revision: rev, Workloads: true, Snapshot: snapshot, Health: fluxhealth.New(t.Context())}
				e := Assess(newFixtureView(t, docs, tt.order...), NewMemory(), spec, fixtureNow)
				if diff := cmp.Diff(tt.want, outcomeOf(e)); diff != "" {
					t.Errorf("snapshot %t (-want +got):\n%s\npending %+v fatal %+v\nobjects %+v", snapshot, diff, e.Pending, e.Fatal, e.Objects)
				}
			}
		})
	}
}

// TestStatusMemoExprs: an object's status is its owner's expressions' as they are now: the
// same state judged with other expressions is judged again, and a compiled set is kept
// while its owner's generation stays.
func TestStatusMemoExprs(t *testing.T) {
	t.Parallel()
	var u unstructured.Unstructured
	data, err := yaml.YAMLToJSON([]byte(widget("1", "phase: Pending")))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	health := fluxhealth.New(t.Context())
	compile := func(current string) *compiledExprs {
		return &compiledExprs{status: health.Exprs([]any{map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "current": current}})}
	}
	pending, ready := compile("status.phase == 'Pending'"), compile("status.phase == 'Ready'")
	var m statusMemo
	m.turn()
	got := []result.ObjectStatus{m.status(&u, gvk, health, nil).status, m.status(&u, gvk, health, pending).status, m.status(&u, gvk, health, ready).status}
	m.turn()
	got = append(got, m.status(&u, gvk, health, pending).status)
	want := []result.ObjectStatus{result.ObjectCurrent, result.ObjectCurrent, result.ObjectInProgress, result.ObjectCurrent}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kstatus, then by the expressions (-want +got):\n%s", diff)
	}

	a := &assessor{mem: NewMemory(), spec: Spec{Health: health}}
	owner := &unstructured.Unstructured{}
	owner.SetGeneration(2)
	_ = unstructured.SetNestedSlice(owner.Object, []any{map[string]any{"apiVersion": "example.com/v1", "current": "true"}}, "spec", "healthCheckExprs")
	first := a.healthExprs("Kustomization/flux-system/app", flux.KindKustomization, owner)
	if again := a.healthExprs("Kustomization/flux-system/app", flux.KindKustomization, owner); first == nil || again != first {
		t.Errorf("compiled again at the same generation")
	}
	owner.SetGeneration(3)
	if next := a.healthExprs("Kustomization/flux-system/app", flux.KindKustomization, owner); next == first {
		t.Errorf("a new generation kept the previous expressions")
	}
	unstructured.RemoveNestedField(owner.Object, "spec", "healthCheckExprs")
	if none := a.healthExprs("Kustomization/flux-system/app", flux.KindKustomization, owner); none != nil {
		t.Errorf("expressions removed from the spec are still used")
	}
}
