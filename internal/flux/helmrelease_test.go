package flux

import (
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/result"
)

// The chart versions and digests helm-controller recorded in the fixtures: OCI charts get the
// first 12 hex digits of the artifact digest as build metadata.
const (
	chart650  = "6.5.0+501967ad514d"
	chart640  = "6.4.0+b9cb8b0c1a46"
	digest650 = "sha256:501967ad514d8a77666ffcdcbfd3c483f4aab25fa312108b4ac4e8678da6176a"
)

// The messages helm-controller wrote in the fixtures.
const (
	hrUpgradedMsg = "Helm upgrade succeeded for release apps/podinfo.v4 with chart podinfo@" + chart650
	hrUpgradeMsg  = "Helm upgrade failed for release apps/podinfo with chart podinfo@" + chart650 + ": context deadline exceeded"
	hrInstallMsg  = "Helm install failed for release apps/podinfo with chart podinfo@" + chart650 + `: Unable to continue with install: Service "podinfo" in namespace "apps" exists and cannot be imported into the current release: invalid ownership metadata; label validation error: missing key "app.kubernetes.io/managed-by": must be set to "Helm"`
	hrTemplateMsg = "Helm upgrade failed for release apps/podinfo with chart podinfo@" + chart650 + `: template: podinfo/templates/deployment.yaml:32:28: executing "podinfo/templates/deployment.yaml" at <.Values.service.port>: nil pointer evaluating interface {}.port`
	hrTestMsg     = "Helm test failed for release apps/podinfo.v5 with chart podinfo@" + chart650 + ": 1 error occurred: * pod podinfo-grpc-test-w6ltb failed"
	hrRollbackMsg = "Helm rollback to previous release apps/podinfo.v4 with chart podinfo@" + chart640 + " succeeded"
	hrSourceMsg   = "OCIRepository 'apps/podinfo' is not ready: failed to determine artifact digest: GET https://ghcr.io/v2/stefanprodan/charts/podinfo/manifests/6.5.0: MANIFEST_UNKNOWN: manifest unknown; unknown tag=6.5.0"
	hrCELMsg      = `Reconciliation failed terminally due to configuration error: failed to evaluate dependency redis: failed to parse expression 'dep.status.conditions.exists(c, c.type == "Ready"': ERROR: <input>:1:49: Syntax error: missing ')' at '<EOF>'`
)

var hrRef = Ref{Kind: KindHelmRelease, Namespace: "apps", Name: "podinfo"}

// hrObjects is what each HelmRelease fixture's status says, whatever revision is expected.
// LastAppliedRevision is the chart version of the newest deployed release.
var hrObjects = func() map[string]result.FluxObject {
	fo := func(ready, applied, attempted, chart string, gen, observed int64) result.FluxObject {
		return result.FluxObject{Ready: ready, LastAppliedRevision: applied, LastAttemptedRevision: attempted, ChartVersion: chart, Generation: gen, ObservedGeneration: observed}
	}
	suspended := fo("True", chart640, chart640, chart640, 4, 4)
	suspended.Suspended = true
	return map[string]result.FluxObject{
		"hr-ready.yaml":                      fo("True", chart650, chart650, chart650, 4, 4),
		"hr-reconciling.yaml":                fo("Unknown", chart640, chart650, chart640, 5, 4),
		"hr-upgrade-failed.yaml":             fo("False", chart640, chart650, chart650, 4, 4),
		"hr-upgrade-failed-stamped.yaml":     fo("False", chart640, chart650, chart650, 5, 4),
		"hr-template-error.yaml":             fo("False", chart640, chart650, chart640, 4, 3),
		"hr-template-error-no-strategy.yaml": fo("False", chart640, chart650, chart640, 4, 3),
		"hr-install-refused.yaml":            fo("False", "", chart650, "", 1, 0),
		"hr-upgrade-refused-same-chart.yaml": fo("False", chart640, chart640, chart640, 4, 3),
		"hr-upgrade-retrying.yaml":           fo("False", chart640, chart650, chart640, 4, 3),
		"hr-upgrade-retry-strategy.yaml":     fo("False", chart640, chart650, chart650, 4, 3),
		"hr-upgrade-remediating.yaml":        fo("False", chart640, chart650, chart650, 4, 3),
		"hr-install-failed.yaml":             fo("False", "", chart650, chart650, 1, 1),
		"hr-test-failed.yaml":                fo("False", chart650, chart650, chart650, 4, 4),
		"hr-test-ignored.yaml":               fo("True", chart650, chart650, chart650, 4, 4),
		"hr-rolled-back.yaml":                fo("False", chart640, chart650, chart640, 4, 4),
		"hr-stalled.yaml":                    fo("False", chart640, chart640, chart640, 4, 4),
		"hr-dependency.yaml":                 fo("False", chart640, chart640, chart640, 4, 3),
		"hr-suspended.yaml":                  suspended,
		"hr-source-not-ready.yaml":           fo("False", chart640, chart640, chart640, 5, 4),
		"hr-chart-refused.yaml":              fo("False", chart650, chart650, chart650, 4, 4),
		"hr-values-error.yaml":               fo("False", chart650, chart650, chart650, 4, 4),
	}
}()

func TestEvaluateHelmRelease(t *testing.T) {
	t.Parallel()
	const upgraded = "UpgradeSucceeded"
	rolledBack := "chart version " + chart650 + " is not running, helm-controller remediated the release (RollbackSucceeded: " + hrRollbackMsg +
		") after UpgradeFailed: " + hrUpgradeMsg + " (Failed to upgrade after 2 attempt(s))"
	runGateCases(t, hrRef, hrObjects, []gateCase{
		// Done: the newest release is deployed with the expected chart, however it is named.
		{"ready on version", "hr-ready.yaml", "6.5.0", current, "", upgraded, hrUpgradedMsg},
		{"ready on OCI chart version", "hr-ready.yaml", chart650, current, "", upgraded, hrUpgradedMsg},
		{"ready on full digest", "hr-ready.yaml", digest650, current, "", upgraded, hrUpgradedMsg},
		{"ready on short digest", "hr-ready.yaml", "sha256:501967ad514d", current, "", upgraded, hrUpgradedMsg},
		{"ready on digest hex", "hr-ready.yaml", "501967a", current, "", upgraded, hrUpgradedMsg},
		{"ready on OCI tag revision", "hr-ready.yaml", "6.5.0@" + digest650, current, "", upgraded, hrUpgradedMsg},
		{"ready with no revision asked", "hr-ready.yaml", "", current, "", upgraded, hrUpgradedMsg},
		{"test failures ignored", "hr-test-ignored.yaml", "6.5.0", current, "", upgraded, "Helm upgrade succeeded for release apps/podinfo.v5 with chart podinfo@" + chart650},
		// The stale-success trap, and versions that only look alike.
		{"ready on older version", "hr-ready.yaml", "6.6.0", inProgress, "", upgraded, "applied " + chart650 + ", waiting for 6.6.0"},
		{"not a prefix of the version", "hr-ready.yaml", "6.5.01", inProgress, "", upgraded, "applied " + chart650 + ", waiting for 6.5.01"},
		{"not a pre-release", "hr-ready.yaml", "6.5.0-rc1", inProgress, "", upgraded, "applied " + chart650 + ", waiting for 6.5.0-rc1"},
		{"other digest", "hr-ready.yaml", "sha256:b9cb8b0c1a46", inProgress, "", upgraded, "applied " + chart650 + ", waiting for sha256:b9cb8b0c1a46"},
		// Not done yet; an old failure does not count while a new release runs.
		{"reconciling", "hr-reconciling.yaml", "6.5.0", inProgress, "", "Progressing", "Running 'upgrade' action with timeout of 5m0s"},
		{"source not ready", "hr-source-not-ready.yaml", "6.5.0", inProgress, "", "SourceNotReady", hrSourceMsg},
		{"dependency not ready", "hr-dependency.yaml", "6.5.0", inProgress, result.CodeFluxDependencyNotReady, "DependencyNotReady",
			"waiting for dependency apps/redis to be ready (dependsOn: apps/redis, cert-manager/cert-manager): dependency 'apps/redis' is not ready"},
		// A failed release helm-controller tries again under upgrade.strategy RetryOnFailure
		// instead of remediating it: a failure with a retry window (Retried). With remediation
		// retries left it rolls back first, then tries again: waits for it to pass or stall.
		{"upgrade failed, rolled back, remediation retries left", "hr-upgrade-retrying.yaml", "6.5.0", inProgress, result.CodeFluxRolledBack, "RollbackSucceeded",
			"helm-controller remediated the failed release and tries it again (remediation retries: 3), until it passes or stalls with its retries exhausted: " + strings.TrimSuffix(rolledBack, " (Failed to upgrade after 2 attempt(s))")},
		{"upgrade failed, RetryOnFailure", "hr-upgrade-retry-strategy.yaml", "6.5.0", failed, result.CodeFluxUpgradeFailed, "UpgradeFailed", "helm-controller retries the failed release: " + hrUpgradeMsg},
		{"upgrade failed, rollback to come", "hr-upgrade-remediating.yaml", "6.5.0", inProgress, result.CodeFluxUpgradeFailed, "UpgradeFailed",
			"helm-controller is still reconciling the release after: " + hrUpgradeMsg},
		// An attempt that stored no release (its templates do not render) is retried for ever:
		// a failure with a retry window (Retried), whatever upgrade.strategy says.
		{"upgrade does not render, retried", "hr-template-error.yaml", "6.5.0", failed, result.CodeFluxUpgradeFailed, "UpgradeFailed",
			"helm-controller retries, and the attempt released nothing: " + hrTemplateMsg},
		// Without a strategy helm-controller returns the error and leaves Reconciling as it
		// marked it before the action: the same retried failure, not an action still running.
		{"upgrade does not render, no strategy, retried", "hr-template-error-no-strategy.yaml", "6.5.0", failed, result.CodeFluxUpgradeFailed, "UpgradeFailed",
			"helm-controller retries, and the attempt released nothing: " + hrTemplateMsg},
		{"install refused before a release, no strategy, retried", "hr-install-refused.yaml", "6.5.0", failed, result.CodeFluxInstallFailed, "InstallFailed",
			"helm-controller retries, and the attempt released nothing: " + hrInstallMsg},
		// The same chart and values again (a changed post-renderer): the deployed release is
		// still the newest, and the refused upgrade released nothing.
		{"upgrade of the same chart refused, no strategy, retried", "hr-upgrade-refused-same-chart.yaml", "6.4.0", failed, result.CodeFluxUpgradeFailed, "UpgradeFailed",
			"helm-controller retries, and the attempt released nothing: Helm upgrade failed for release apps/podinfo with chart podinfo@" + chart640 + ": error while running post render on files: yaml: unmarshal errors"},
		// Failures of the expected chart, and of an older one.
		{"install failed", "hr-install-failed.yaml", "6.5.0", failed, result.CodeFluxInstallFailed, "InstallFailed", hrInstallMsg + " (Failed to install after 1 attempt(s))"},
		{"install failed, by digest", "hr-install-failed.yaml", "sha256:501967ad514d8a77", failed, result.CodeFluxInstallFailed, "InstallFailed", hrInstallMsg + " (Failed to install after 1 attempt(s))"},
		{"install failed on older", "hr-install-failed.yaml", "6.6.0", inProgress, result.CodeFluxInstallFailed, "InstallFailed",
			"waiting for 6.6.0 to be attempted; the last attempt was " + chart650 + " and failed: " + hrInstallMsg + " (Failed to install after 1 attempt(s))"},
		{"upgrade failed, retries exceeded", "hr-upgrade-failed.yaml", "6.5.0", failed, result.CodeFluxUpgradeFailed, "UpgradeFailed", hrUpgradeMsg + " (Failed to upgrade after 1 attempt(s))"},
		{"upgrade failed, none asked", "hr-upgrade-failed.yaml", "", failed, result.CodeFluxUpgradeFailed, "UpgradeFailed", hrUpgradeMsg + " (Failed to upgrade after 1 attempt(s))"},
		{"upgrade failed on older", "hr-upgrade-failed.yaml", "6.6.0", inProgress, result.CodeFluxUpgradeFailed, "UpgradeFailed",
			"waiting for 6.6.0 to be attempted; the last attempt was " + chart650 + " and failed: " + hrUpgradeMsg + " (Failed to upgrade after 1 attempt(s))"},
		// A failure of generation 4 that the patch helper stamped with generation 5, the values
		// fix: helm-controller attempts generation 5 next (status.lastAttemptedGeneration).
		{"upgrade failed, stamped with a newer generation", "hr-upgrade-failed-stamped.yaml", "6.5.0", inProgress, result.CodeFluxUpgradeFailed, "UpgradeFailed",
			"waiting for helm-controller to reconcile generation 5; generation 4 failed: " + hrUpgradeMsg + " (Failed to upgrade after 1 attempt(s))"},
		{"test failed", "hr-test-failed.yaml", "6.5.0", failed, result.CodeFluxTestFailed, "TestFailed", hrTestMsg + " (Failed to upgrade after 1 attempt(s))"},
		{"rolled back", "hr-rolled-back.yaml", "6.5.0", failed, result.CodeFluxRolledBack, "RollbackSucceeded", rolledBack},
		{"rolled back, asked the running version", "hr-rolled-back.yaml", "6.4.0", inProgress, result.CodeFluxRolledBack, "RollbackSucceeded",
			"waiting for 6.4.0 to be attempted; the last attempt was " + chart650 + " and failed: " + rolledBack},
		// Charts helm-controller cannot even attempt: Ready=False is the current word, never a
		// failed release of before.
		{"chart refused, the source not read", "hr-chart-refused.yaml", "6.6.0", inProgress, result.CodeFluxChartFailed, "ChartMutateError",
			"waiting for 6.6.0; helm-controller cannot apply the source's chart, and the source was not read to tell which: artifact revision 6.6.0 does not match chart version 6.5.9"},
		{"chart refused, no revision asked", "hr-chart-refused.yaml", "", failed, result.CodeFluxChartFailed, "ChartMutateError",
			"the chart cannot be applied: artifact revision 6.6.0 does not match chart version 6.5.9"},
		{"chart refused, another version expected", "hr-chart-refused.yaml", "6.7.0", inProgress, result.CodeFluxChartFailed, "ChartMutateError",
			"waiting for 6.7.0; helm-controller cannot apply the source's chart, and the source was not read to tell which: artifact revision 6.6.0 does not match chart version 6.5.9"},
		{"values error, whatever the revision", "hr-values-error.yaml", "6.7.0", failed, result.CodeFluxValuesFailed, "ValuesError",
			"the values cannot be composed: could not resolve ConfigMap chart values reference 'apps/podinfo-values' with key 'values.yaml': key not found"},
		// Flux will not go on by itself, whatever revision is expected.
		{"stalled on configuration", "hr-stalled.yaml", "6.5.0", failed, result.CodeFluxStalled, "InvalidCELExpression", "stalled: " + hrCELMsg},
		{"suspended", "hr-suspended.yaml", "6.5.0", suspended, result.CodeFluxSuspended, "Suspended",
			"suspended (spec.suspend: true); resume it with: flux resume helmrelease podinfo -n apps"},
	})
}

// editConditions replaces the condition of the given type, or removes it when c is nil.
func editConditions(t *testing.T, obj *unstructured.Unstructured, typ string, c map[string]any) {
	t.Helper()
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var kept []any
	for _, old := range conds {
		if old.(map[string]any)["type"] != typ {
			kept = append(kept, old)
		}
	}
	if c != nil {
		c = maps.Clone(c)
		c["type"] = typ
		kept = append(kept, c)
	}
	if err := unstructured.SetNestedSlice(obj.Object, kept, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
}

// TestEvaluateHelmReleaseStalls covers which failure explains a stall: a stall on retries
// with no failed release left is flux-stalled for the attempted chart only; a stall on the
// configuration wins over an earlier failed release.
func TestEvaluateHelmReleaseStalls(t *testing.T) {
	t.Parallel()
	type verdict struct {
		Verdict result.Verdict
		Code    result.Code
		Message string
	}
	upgradeFailed := map[string]any{"status": "False", "reason": "UpgradeFailed", "message": hrUpgradeMsg, "observedGeneration": int64(4)}
	tests := []struct {
		name, fixture, condition string
		edit                     map[string]any
		want                     string
		out                      verdict
	}{
		{"retries without a failed release", "hr-upgrade-failed.yaml", releasedCondition, nil, "6.5.0",
			verdict{failed, result.CodeFluxStalled, "stalled: Failed to upgrade after 1 attempt(s)"}},
		{"retries on another chart", "hr-upgrade-failed.yaml", releasedCondition, nil, "6.6.0",
			verdict{inProgress, result.CodeFluxStalled, "waiting for 6.6.0 to be attempted; the last attempt was " + chart650 + " and failed: stalled: Failed to upgrade after 1 attempt(s)"}},
		{"configuration over an old failed release", "hr-stalled.yaml", releasedCondition, upgradeFailed, "6.5.0",
			verdict{failed, result.CodeFluxStalled, "stalled: " + hrCELMsg}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := loadFixture(t, tt.fixture)
			editConditions(t, obj, tt.condition, tt.edit)
			g := Evaluate(hrRef, obj, mustRevision(t, tt.want), nil)
			if diff := cmp.Diff(tt.out, verdict{g.Verdict, g.Code, g.Message}); diff != "" {
				t.Errorf("Evaluate(%s edited, %q) mismatch (-want +got):\n%s", tt.fixture, tt.want, diff)
			}
		})
	}
}

// TestHelmReleaseValuesErrorRetried: a valuesFrom object or key that does not exist yet is a
// failure helm-controller retries (an operator may create the Secret in a moment); values
// that do not parse are not; words that are not fluxcd/pkg/chartutil's wait.
func TestHelmReleaseValuesErrorRetried(t *testing.T) {
	t.Parallel()
	type want struct {
		verdict result.Verdict
		retried bool
	}
	for msg, w := range map[string]want{
		"could not resolve Secret chart values reference 'apps/db' with key 'values.yaml': secrets \"db\" not found":                                                                {failed, true},
		"could not resolve ConfigMap chart values reference 'apps/podinfo-values' with key 'values.yaml': key not found":                                                            {failed, true},
		"could not resolve optional ConfigMap chart values reference 'apps/podinfo-values' with key 'values.yaml': resource not found":                                              {failed, true},
		"could not resolve ConfigMap chart values reference 'apps/podinfo-values' with key 'values.yaml': failed to read values data":                                               {failed, false},
		"could not resolve ConfigMap chart values reference 'apps/podinfo-values' with key 'values.yaml': error converting YAML to JSON: yaml: line 3: could not find expected ':'": {failed, false},
		"could not resolve Deployment chart values reference 'apps/x' with key 'values.yaml': unsupported values reference kind":                                                    {failed, false},
		"could not find key 'replicaCount' in ConfigMap 'apps/podinfo-values'":                                                                                                      {inProgress, false},
	} {
		obj := loadFixture(t, "hr-values-error.yaml")
		editConditions(t, obj, "Ready", map[string]any{"status": "False", "reason": "ValuesError", "message": msg, "observedGeneration": int64(4)})
		g := Evaluate(hrRef, obj, mustRevision(t, "6.7.0"), nil)
		if g.Verdict != w.verdict || g.Code != result.CodeFluxValuesFailed || g.Retried != w.retried {
			t.Errorf("%q: %s %s retried=%v, want %s %s retried=%v", msg, g.Verdict, g.Code, g.Retried, w.verdict, result.CodeFluxValuesFailed, w.retried)
		}
	}
}

// TestChartRefusedBySource: the chart helm-controller cannot load or mutate is the source's
// current artifact (it fails before it records lastAttemptedRevision): the expected chart
// fails when the source offers it, whatever the message says.
func TestChartRefusedBySource(t *testing.T) {
	t.Parallel()
	oci := SourceRef{Kind: "OCIRepository", Namespace: "apps", Name: "podinfo"}
	tests := []struct {
		name, want string
		src        *Source
		verdict    result.Verdict
	}{
		{"the source offers the expected chart", "6.6.0", &Source{Ref: oci, Revision: "6.6.0@" + digest650, Done: true}, failed},
		{"the source offers another chart", "6.7.0", &Source{Ref: oci, Revision: "6.6.0@" + digest650, Done: true}, inProgress},
		{"the source is fetching a new spec", "6.6.0", &Source{Ref: oci, Revision: "6.6.0@" + digest650}, inProgress},
		{"the source not read", "6.6.0", nil, inProgress},
	}
	for _, tt := range tests {
		g := Evaluate(hrRef, loadFixture(t, "hr-chart-refused.yaml"), mustRevision(t, tt.want), tt.src)
		if g.Verdict != tt.verdict || g.Code != result.CodeFluxChartFailed {
			t.Errorf("%s: %s %s (%s), want %s %s", tt.name, g.Verdict, g.Code, g.Message, tt.verdict, result.CodeFluxChartFailed)
		}
	}
}

// TestHelmReleaseRetried: a failed attempt helm-controller tries again, whether it stored no
// release or a failed one, is retried with a window, timed by the strategy's retryInterval
// under RetryOnFailure (its spec, else its "retrying after" words), at once otherwise.
func TestHelmReleaseRetried(t *testing.T) {
	t.Parallel()
	// helm-controller's DefaultToRetryOnFailure feature gate: RetryOnFailure with no spec field.
	byDefault := strings.Replace(string(readFixture(t, "hr-upgrade-retry-strategy.yaml")),
		"    strategy:\n      name: RetryOnFailure\n      retryInterval: 2m\n", "", 1)
	strategyByWords := strings.Replace(byDefault, "retrying after 2m0s", "retrying after 3m0s", 1)
	// The remediated release of hr-upgrade-retrying.yaml, tried again without end.
	unlimited := strings.Replace(string(readFixture(t, "hr-upgrade-retrying.yaml")), "retries: 3", "retries: -1", 1)
	tests := []struct {
		name  string
		obj   *unstructured.Unstructured
		every time.Duration
	}{
		{"templates that do not render, upgrade.strategy RetryOnFailure", loadFixture(t, "hr-template-error.yaml"), 5 * time.Minute},
		{"a rolled back release, unlimited remediation retries: the upgrade's timeout", parseObject(t, unlimited), 5 * time.Minute},
		{"a rolled back release, unlimited remediation retries, spec.timeout 3m", parseObject(t, strings.Replace(unlimited, "  interval: 10m0s\n", "  interval: 10m0s\n  timeout: 3m\n", 1)), 3 * time.Minute},
		{"a failed release, upgrade.strategy RetryOnFailure", loadFixture(t, "hr-upgrade-retry-strategy.yaml"), 2 * time.Minute},
		{"a failed release, RetryOnFailure by helm-controller's default", parseObject(t, strategyByWords), 3 * time.Minute},
		// Words not recognised: RetryOnFailure's documented default, and a note.
		{"a failed release, RetryOnFailure by default, its words unrecognised", parseObject(t, strings.Replace(byDefault, "retrying after 2m0s", "will retry in 2m0s", 1)), 5 * time.Minute},
	}
	for _, tt := range tests {
		g := Evaluate(hrRef, tt.obj, mustRevision(t, "6.5.0"), nil)
		if !g.Retried || g.Verdict != result.VerdictFailed || g.RetryEvery != tt.every || g.FailedAt.IsZero() {
			t.Errorf("%s: %s retried=%t every %s failed at %v, want a retried failure every %s", tt.name, g.Verdict, g.Retried, g.RetryEvery, g.FailedAt, tt.every)
		}
		if unrecognised := strings.Contains(tt.name, "unrecognised"); unrecognised != strings.Contains(g.Message, "words of its retry were not recognised") {
			t.Errorf("%s: message %q; want a note of unrecognised words: %t", tt.name, g.Message, unrecognised)
		}
	}
}

func TestReleaseName(t *testing.T) {
	t.Parallel()
	long := "a-very-long-target-namespace-name-for-the-fleet"
	tests := []struct {
		doc, name, namespace string
	}{
		{"metadata: {name: web, namespace: apps}\nspec: {}", "web", "apps"},
		{"metadata: {name: web, namespace: apps}\nspec: {targetNamespace: prod}", "prod-web", "prod"},
		{"metadata: {name: web, namespace: apps}\nspec: {targetNamespace: prod, releaseName: shop}", "shop", "prod"},
		// helm-controller's release.ShortenName: 40 characters, a dash, 12 of a sha256.
		{"metadata: {name: web-frontend, namespace: apps}\nspec: {targetNamespace: " + long + "}", "a-very-long-target-namespace-name-for-th-0395eaca8611", long},
	}
	for _, tt := range tests {
		name, ns := releaseName(fromYAML(t, tt.doc))
		if name != tt.name || ns != tt.namespace {
			t.Errorf("releaseName(%s) = %q, %q; want %q, %q", tt.doc, name, ns, tt.name, tt.namespace)
		}
		if len(name) > 53 {
			t.Errorf("releaseName(%s) = %q: longer than Helm's 53", tt.doc, name)
		}
	}
}

// TestGateInstalling: while helm-controller runs Helm's install of the expected chart at the
// current generation, the gate names it and the release.
func TestGateInstalling(t *testing.T) {
	t.Parallel()
	doc := func(chart string, attemptedGen int) string {
		return `metadata: {name: web, namespace: apps, generation: 2}
spec: {targetNamespace: prod, chartRef: {kind: OCIRepository, name: web}}
status:
  lastAttemptedRevision: ` + chart + `
  lastAttemptedGeneration: ` + strconv.Itoa(attemptedGen) + `
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: "Running 'install' action with timeout of 5m0s", observedGeneration: 2}
  - {type: Ready, status: Unknown, reason: Progressing, message: "Running 'install' action with timeout of 5m0s", observedGeneration: 2}`
	}
	g := Evaluate(hrRef, fromYAML(t, doc("1.0.0+abcdef012345", 2)), mustRevision(t, "1.0.0"), nil)
	if g.Installing != "1.0.0+abcdef012345" || g.ReleaseName != "prod-web" || g.ReleaseNamespace != "prod" || g.Verdict != inProgress {
		t.Errorf("installing the expected chart: %s installing %q release %s/%s", g.Verdict, g.Installing, g.ReleaseNamespace, g.ReleaseName)
	}
	if g := Evaluate(hrRef, fromYAML(t, doc("0.9.0+abcdef012345", 2)), mustRevision(t, "1.0.0"), nil); g.Installing != "" {
		t.Errorf("installing another chart: Installing %q, want none", g.Installing)
	}
	if g := Evaluate(hrRef, fromYAML(t, doc("1.0.0+abcdef012345", 1)), mustRevision(t, "1.0.0"), nil); g.Installing != "" {
		t.Errorf("installing an older generation: Installing %q, want none", g.Installing)
	}
	// Read from the conditions' reasons and the status, not the words: reworded, the same.
	reworded := strings.ReplaceAll(doc("1.0.0+abcdef012345", 2), "Running 'install' action with timeout of 5m0s", "Installing the release (5m0s)")
	if g := Evaluate(hrRef, fromYAML(t, reworded), mustRevision(t, "1.0.0"), nil); g.Installing != "1.0.0+abcdef012345" {
		t.Errorf("installing, reworded: installing %q, want the chart", g.Installing)
	}
	// A deployed release and no release of the attempt yet: an upgrade.
	upgrade := doc("1.1.0+abcdef012345", 2) + `
  history: [{chartVersion: 1.0.0+abcdef012345, status: deployed, version: 1}]`
	if g := Evaluate(hrRef, fromYAML(t, upgrade), mustRevision(t, "1.1.0"), nil); g.Upgrading != "1.1.0+abcdef012345" || g.Installing != "" {
		t.Errorf("upgrading: upgrading %q installing %q, want upgrading the chart", g.Upgrading, g.Installing)
	}
}

// TestHelmReleaseTestRemediation: helm-controller v1.6.4 runs a HelmRelease's tests, and the
// rollback of a failed one, under the Ready of the release before them (only a release action
// marks Ready Unknown), and a failed test is the release's failure when the remediation of
// the action says so (upgrade.remediation.ignoreTestFailures: false), whatever
// test.ignoreFailures, which only leaves it out of Ready. The fixture: tests enabled with
// ignoreFailures, Ready True on the expected chart, TestSuccess False.
func TestHelmReleaseTestRemediation(t *testing.T) {
	t.Parallel()
	type verdict struct {
		Verdict result.Verdict
		Code    result.Code
		Reason  string
		Message string
		Retried bool
	}
	running := func(action string) map[string]any {
		return map[string]any{"status": "True", "reason": "Progressing", "message": "Running '" + action + "' action with timeout of 5m0s", "observedGeneration": int64(4)}
	}
	awaiting := map[string]any{"status": "Unknown", "reason": "AwaitingTests", "message": "Release apps/podinfo.v5 with chart podinfo@" + chart650 + " awaiting tests", "observedGeneration": int64(4)}
	stalled := map[string]any{"status": "True", "reason": "RetriesExceeded", "message": "Failed to upgrade after 1 attempt(s)", "observedGeneration": int64(4)}
	succeeded := "Helm upgrade succeeded for release apps/podinfo.v5 with chart podinfo@" + chart650
	tests := []struct {
		name string
		// remediation is spec.upgrade.remediation.ignoreTestFailures; nil leaves it unset.
		remediation *bool
		testEnabled bool
		conditions  map[string]map[string]any // by type; a nil value removes it
		out         verdict
	}{
		{name: "tests running, a failure would be rolled back", remediation: new(false), testEnabled: true,
			conditions: map[string]map[string]any{"Reconciling": running("test"), testSuccessCondition: awaiting},
			out:        verdict{inProgress, "", "Progressing", "waiting for helm-controller's 'test' action to finish: Running 'test' action with timeout of 5m0s", false}},
		{name: "test failed, rollback running", remediation: new(false), testEnabled: true,
			conditions: map[string]map[string]any{"Reconciling": running("rollback")},
			out:        verdict{inProgress, "", "Progressing", "waiting for helm-controller's 'rollback' action to finish: Running 'rollback' action with timeout of 5m0s", false}},
		{name: "tests running, failures ignored", testEnabled: true,
			conditions: map[string]map[string]any{"Reconciling": running("test"), testSuccessCondition: awaiting},
			out:        verdict{inProgress, "", "Progressing", "waiting for helm-controller's 'test' action to finish: Running 'test' action with timeout of 5m0s", false}},
		{name: "test failed, remediation retries exhausted: the test's failure", remediation: new(false), testEnabled: true,
			conditions: map[string]map[string]any{meta.StalledCondition: stalled},
			out:        verdict{failed, result.CodeFluxTestFailed, "TestFailed", hrTestMsg + " (Failed to upgrade after 1 attempt(s))", false}},
		{name: "test failed, counted, and retried (RetryOnFailure): the retried test's failure", remediation: new(false), testEnabled: true,
			conditions: map[string]map[string]any{"Reconciling": {"status": "True", "reason": "ProgressingWithRetry", "message": "retrying after 5m0s", "observedGeneration": int64(4)}},
			out:        verdict{failed, result.CodeFluxTestFailed, "TestFailed", "helm-controller retries the failed release: " + hrTestMsg, true}},
		// Unchanged: the release is done (no Reconciling, or a reconcile that runs no action),
		// its failed tests ignored by both settings.
		{name: "test failed, ignored by both", remediation: new(true), testEnabled: true,
			out: verdict{current, "", "UpgradeSucceeded", succeeded, false}},
		{name: "test failed, ignored, remediation unset", testEnabled: true,
			out: verdict{current, "", "UpgradeSucceeded", succeeded, false}},
		{name: "a reconcile that starts: no action yet", remediation: new(false), testEnabled: true,
			conditions: map[string]map[string]any{"Reconciling": {"status": "True", "reason": "Progressing", "message": "Fulfilling prerequisites", "observedGeneration": int64(4)}, testSuccessCondition: nil},
			out:        verdict{current, "", "UpgradeSucceeded", succeeded, false}},
		{name: "tests disabled", remediation: new(false),
			conditions: map[string]map[string]any{testSuccessCondition: nil},
			out:        verdict{current, "", "UpgradeSucceeded", succeeded, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := loadFixture(t, "hr-test-ignored.yaml")
			if err := unstructured.SetNestedField(obj.Object, tt.testEnabled, "spec", "test", "enable"); err != nil {
				t.Fatal(err)
			}
			if tt.remediation != nil {
				if err := unstructured.SetNestedField(obj.Object, *tt.remediation, "spec", "upgrade", "remediation", "ignoreTestFailures"); err != nil {
					t.Fatal(err)
				}
			}
			for typ, c := range tt.conditions {
				editConditions(t, obj, typ, c)
			}
			g := Evaluate(hrRef, obj, mustRevision(t, "6.5.0"), nil)
			if diff := cmp.Diff(tt.out, verdict{g.Verdict, g.Code, g.Object.Reason, g.Message, g.Retried}); diff != "" {
				t.Errorf("Evaluate(%s) mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestCRDsSkippedBy: helm-controller v1.6.4 creates the CRDs of a chart's crds/ directory
// unless the policy of the action that made the release (status.lastAttemptedReleaseAction)
// is Skip; an unset policy is Create for the upgrade too, and the deprecated skipCRDs is not
// read. Unrecorded, only both policies Skip tell.
func TestCRDsSkippedBy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, spec, action, want string
	}{
		{name: "an upgrade, its policy Skip", spec: "{upgrade: {crds: Skip}}", action: "upgrade", want: "spec.upgrade.crds: Skip"},
		{name: "an install, its policy Skip", spec: "{install: {crds: Skip}}", action: "install", want: "spec.install.crds: Skip"},
		{name: "an upgrade, no policy: Create", spec: "{}", action: "upgrade"},
		{name: "an upgrade, Create", spec: "{upgrade: {crds: Create}}", action: "upgrade"},
		{name: "an upgrade, CreateReplace", spec: "{upgrade: {crds: CreateReplace}}", action: "upgrade"},
		{name: "an upgrade, only the install's policy Skip", spec: "{install: {crds: Skip}}", action: "upgrade"},
		{name: "an install, only the upgrade's policy Skip", spec: "{upgrade: {crds: Skip}}", action: "install"},
		{name: "the deprecated skipCRDs: not read", spec: "{install: {skipCRDs: true}}", action: "install"},
		{name: "the action not recorded, both Skip", spec: "{install: {crds: Skip}, upgrade: {crds: Skip}}",
			want: "spec.install.crds and spec.upgrade.crds: Skip"},
		{name: "the action not recorded, only the upgrade's Skip", spec: "{upgrade: {crds: Skip}}"},
	}
	for _, tt := range tests {
		doc := "metadata: {name: web, namespace: apps}\nspec: " + tt.spec + "\nstatus: {lastAttemptedReleaseAction: '" + tt.action + "'}"
		if got := crdsSkippedBy(fromYAML(t, doc)); got != tt.want {
			t.Errorf("%s: crdsSkippedBy = %q, want %q", tt.name, got, tt.want)
		}
	}
	doc := "metadata: {name: web, namespace: apps}\nspec: {upgrade: {crds: Skip}}\nstatus: {lastAttemptedReleaseAction: upgrade}"
	if g := Evaluate(hrRef, fromYAML(t, doc), Revision{}, nil); g.CRDsSkippedBy != "spec.upgrade.crds: Skip" {
		t.Errorf("Evaluate: CRDsSkippedBy = %q, want the upgrade's policy", g.CRDsSkippedBy)
	}
}
