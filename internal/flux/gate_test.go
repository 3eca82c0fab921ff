package flux

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/result"
)

// loadFixture reads testdata/name as the dynamic client would return it (integers as int64).
func loadFixture(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	return parseObject(t, string(readFixture(t, name)))
}

// readFixture reads testdata/name.
func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// parseObject reads a YAML object as the dynamic client would return it.
func parseObject(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	return u
}

func mustRevision(t *testing.T, s string) Revision {
	t.Helper()
	r, err := ParseRevision(s)
	if err != nil {
		t.Fatalf("ParseRevision(%q): %v", s, err)
	}
	return r
}

// Short names for the gate's verdicts, for the case tables.
const (
	inProgress = result.VerdictInProgress
	current    = result.VerdictCurrent
	failed     = result.VerdictFailed
	suspended  = result.VerdictSuspended
)

// gateCase is one expected gate: the fixture's status fields come from a per-kind table, the
// rest from the case.
type gateCase struct {
	name    string
	fixture string
	want    string // the expected revision
	verdict result.Verdict
	code    result.Code
	reason  string
	message string
}

// runGateCases evaluates each case's fixture and compares the whole Gate.
func runGateCases(t *testing.T, ref Ref, objects map[string]result.FluxObject, tests []gateCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fo, ok := objects[tt.fixture]
			if !ok {
				t.Fatalf("no expected object for fixture %s", tt.fixture)
			}
			fo.ID, fo.Kind, fo.Namespace, fo.Name = ref.ID(), string(ref.Kind), ref.Namespace, ref.Name
			fo.Verdict, fo.Code, fo.Reason, fo.Message = tt.verdict, tt.code, tt.reason, tt.message
			want := Gate{Verdict: tt.verdict, Object: fo, Code: tt.code, Message: tt.message}
			got := Evaluate(ref, loadFixture(t, tt.fixture), mustRevision(t, tt.want), nil)
			// Applied has a table of its own (TestApplied); what the engine walks (Source,
			// DependsOn, WaitsForAll, Remote) tests of their own (TestGateSource, TestGateWalk), and
			// Retried too (TestRetriedKustomization, TestHelmReleaseValuesErrorRetried).
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Gate{}, "Applied", "HasApplied", "Source", "DependsOn", "WaitsForAll", "Remote", "Attempting", "Upgrading", "UpgradeAttempt", "Retried", "MaybeOlderGeneration", "FailedAt", "RetryEvery", "Installing", "ReleaseName", "ReleaseNamespace", "GeneratedWant")); diff != "" {
				t.Errorf("Evaluate(%s, %s, %q) mismatch (-want +got):\n%s", ref.ID(), tt.fixture, tt.want, diff)
			}
		})
	}
}

// TestApplied: the objects a Flux object lists are the expected revision's only once Flux has
// applied it; before, they are the previous revision's and must not fail the rollout.
func TestApplied(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		ref     Ref
		fixture string
		want    string
		applied bool
	}{
		// Kustomization: Ready on it, health-checking it, or its health checks or pruning failed.
		{"ready on it", ksRef, "ks-ready.yaml", newSHA, true},
		{"ready on it, no revision asked", ksRef, "ks-ready.yaml", "", true},
		{"ready on another", ksRef, "ks-ready.yaml", newerSHA, false},
		{"ready on it, new generation not observed", ksRef, "ks-generation.yaml", newSHA, false},
		{"health-checking it", ksRef, "ks-reconciling.yaml", newSHA, true},
		{"health-checking it, no revision asked", ksRef, "ks-reconciling.yaml", "", true},
		{"health-checking another", ksRef, "ks-reconciling.yaml", oldSHA, false},
		{"building it", ksRef, "ks-building.yaml", newSHA, false},
		{"building it, no revision asked", ksRef, "ks-building.yaml", "", false},
		{"health check of it failed", ksRef, "ks-health-check-failed.yaml", newSHA, true},
		{"pruning for it failed", ksRef, "ks-prune-failed.yaml", newSHA, true},
		{"build of it failed", ksRef, "ks-build-failed.yaml", newSHA, false},
		{"apply of it failed", ksRef, "ks-reconciliation-failed.yaml", newSHA, false},
		{"never reconciled", ksRef, "ks-new.yaml", newSHA, true},
		// HelmRelease: the newest release is of it, finished, no Helm action running, and the
		// current generation attempted.
		{"released", hrRef, "hr-ready.yaml", "6.5.0", true},
		{"released, by digest", hrRef, "hr-ready.yaml", digest650, true},
		{"released, no revision asked", hrRef, "hr-ready.yaml", "", true},
		{"another released", hrRef, "hr-ready.yaml", "6.6.0", false},
		{"upgrade running", hrRef, "hr-reconciling.yaml", "6.5.0", false},
		{"upgrade running, no revision asked", hrRef, "hr-reconciling.yaml", "", false},
		{"upgrade of it failed", hrRef, "hr-upgrade-failed.yaml", "6.5.0", true},
		{"install of it failed", hrRef, "hr-install-failed.yaml", "6.5.0", true},
		{"chart refused before any attempt", hrRef, "hr-chart-refused.yaml", "6.6.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Evaluate(tt.ref, loadFixture(t, tt.fixture), mustRevision(t, tt.want), nil)
			if got.Applied != tt.applied {
				t.Errorf("Evaluate(%s, %q).Applied = %t, want %t (%s)", tt.fixture, tt.want, got.Applied, tt.applied, got.Message)
			}
		})
	}
}

func TestGateSource(t *testing.T) {
	t.Parallel()
	if got := Evaluate(ksRef, loadFixture(t, "ks-ready.yaml"), Revision{}, nil).Source; got != "GitRepository/flux-system/flux-system" {
		t.Errorf("Kustomization Source = %q, want GitRepository/flux-system/flux-system", got)
	}
	if got := Evaluate(hrRef, loadFixture(t, "hr-ready.yaml"), Revision{}, nil).Source; got != "OCIRepository/apps/podinfo" {
		t.Errorf("HelmRelease Source = %q, want its chartRef OCIRepository/apps/podinfo", got)
	}
}

func TestEvaluateWithoutObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ref  Ref
		want Gate
	}{
		{
			name: "not created yet",
			ref:  Ref{Kind: KindHelmRelease, Namespace: "apps", Name: "podinfo"},
			want: Gate{
				Verdict: inProgress,
				Message: "the object does not exist yet",
				Object: result.FluxObject{
					ID: "HelmRelease/apps/podinfo", Kind: "HelmRelease", Namespace: "apps", Name: "podinfo",
					Verdict: result.VerdictInProgress, Ready: "Unknown", Message: "the object does not exist yet",
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Evaluate(tt.ref, nil, Revision{}, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate(%s, nil) mismatch (-want +got):\n%s", tt.ref.ID(), diff)
			}
		})
	}
}

func TestEvaluateIntegersFromJSON(t *testing.T) {
	t.Parallel()
	// encoding/json decodes integers as float64; the gate must read them the same.
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1",
		"kind":       "Kustomization",
		"metadata":   map[string]any{"name": "apps", "namespace": "flux-system", "generation": float64(2)},
		"status": map[string]any{
			"observedGeneration":  float64(2),
			"lastAppliedRevision": "main@sha1:c2a6b03f190dfb2b4aa91f8af8d477a9bc3401dc",
			"conditions": []any{map[string]any{
				"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
				"message": "Applied revision: main@sha1:c2a6b03f190dfb2b4aa91f8af8d477a9bc3401dc",
			}},
		},
	}}
	ref := Ref{Kind: KindKustomization, Namespace: "flux-system", Name: "apps"}
	got := Evaluate(ref, obj, mustRevision(t, "c2a6b03"), nil)
	if got.Verdict != current || got.Object.Generation != 2 || got.Object.ObservedGeneration != 2 {
		t.Errorf("Evaluate(float64 generations) = %v (generation %d, observed %d), want Current (2, 2)",
			got.Verdict, got.Object.Generation, got.Object.ObservedGeneration)
	}
}

// TestEvaluateNewGeneration covers failures recorded for an older generation of the spec: a
// fix to the spec is not reconciled yet, so the failure does not count.
func TestEvaluateNewGeneration(t *testing.T) {
	t.Parallel()
	type verdict struct {
		Verdict result.Verdict
		Code    result.Code
		Message string
	}
	tests := []struct {
		ref     Ref
		fixture string
		want    string
		out     verdict
	}{
		{ksRef, "ks-stalled.yaml", "", verdict{inProgress, result.CodeFluxStalled,
			"waiting for kustomize-controller to reconcile generation 9; generation 2 failed: stalled: " + ksCELMsg}},
		{ksRef, "ks-build-failed.yaml", newSHA, verdict{inProgress, result.CodeFluxBuildFailed,
			"waiting for kustomize-controller to reconcile generation 9; generation 3 failed: revision main@sha1:c2a6b03 failed: " + ksBuildMsg}},
		{hrRef, "hr-upgrade-failed.yaml", "6.5.0", verdict{inProgress, result.CodeFluxUpgradeFailed,
			"waiting for helm-controller to reconcile generation 9; generation 4 failed: " + hrUpgradeMsg + " (Failed to upgrade after 1 attempt(s))"}},
		{hrRef, "hr-test-failed.yaml", "6.5.0", verdict{inProgress, result.CodeFluxTestFailed,
			"waiting for helm-controller to reconcile generation 9; generation 4 failed: " + hrTestMsg + " (Failed to upgrade after 1 attempt(s))"}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			t.Parallel()
			obj := loadFixture(t, tt.fixture)
			obj.SetGeneration(9)
			g := Evaluate(tt.ref, obj, mustRevision(t, tt.want), nil)
			if diff := cmp.Diff(tt.out, verdict{g.Verdict, g.Code, g.Message}); diff != "" {
				t.Errorf("Evaluate(%s at generation 9, %q) mismatch (-want +got):\n%s", tt.fixture, tt.want, diff)
			}
		})
	}
}
