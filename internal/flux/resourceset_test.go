package flux

import (
	"testing"

	"github.com/org/app-status-action/internal/result"
)

var rsetRef = Ref{Kind: KindResourceSet, Namespace: "flux-system", Name: "tenants"}

// TestResourceSetGate: a ResourceSet is judged by its own status as flux-operator v0.59.0
// writes it, whatever revision is expected (its lastAppliedRevision is a digest of what it
// rendered, never a source's revision).
func TestResourceSetGate(t *testing.T) {
	t.Parallel()
	obj := func(gen, observed int64, ready string) result.FluxObject {
		return result.FluxObject{Ready: ready, Generation: gen, ObservedGeneration: observed,
			LastAppliedRevision: "sha256:43ad78c94b2655429d84f21488f29d7cca9cd45b7f54d2b27e16bbec8eff9228"}
	}
	objects := map[string]result.FluxObject{
		"rset-ready.yaml":            obj(2, 2, "True"),
		"rset-progressing.yaml":      obj(3, 3, "Unknown"),
		"rset-health-failed.yaml":    obj(2, 2, "False"),
		"rset-apply-failed.yaml":     obj(2, 2, "False"),
		"rset-build-failed.yaml":     obj(2, 2, "False"),
		"rset-dependency.yaml":       obj(2, 2, "False"),
		"rset-generation.yaml":       obj(3, 2, "True"),
		"rset-disabled.yaml":         obj(2, 2, "True"),
		"rset-unrecognised.yaml":     obj(2, 2, "False"),
		"rset-provider-missing.yaml": obj(2, 2, "False"),
		"rset-created-disabled.yaml": {Ready: "True", Generation: 2, ObservedGeneration: 2},
	}
	disabled := objects["rset-disabled.yaml"]
	disabled.Suspended = true
	objects["rset-disabled.yaml"] = disabled
	const healthMessage = "reconciliation failed: failed early due to stalled resources: [Kustomization/flux-system/team2 status: 'Failed'] Kustomization/flux-system/team2 status: kustomization path not found: stat /tmp/kustomization-1/apps/team2: no such file or directory"
	const buildMessage = `stalled: build failed: failed to render template: template: resourcesTemplate:4: function "inputs" not defined`
	runGateCases(t, rsetRef, objects, []gateCase{
		{name: "ready at its generation", fixture: "rset-ready.yaml", verdict: current, reason: "ReconciliationSucceeded", message: "Reconciliation finished in 2s"},
		{name: "ready at its generation, a revision expected", fixture: "rset-ready.yaml", want: newSHA, verdict: current, reason: "ReconciliationSucceeded", message: "Reconciliation finished in 2s"},
		{name: "reconciling", fixture: "rset-progressing.yaml", verdict: inProgress, reason: "Progressing", message: "Reconciliation in progress"},
		{name: "ready at an older generation", fixture: "rset-generation.yaml", verdict: inProgress, reason: "ReconciliationSucceeded",
			message: "waiting for flux-operator to reconcile generation 3 (Ready is of generation 2)"},
		{name: "its wait for what it generated failed", fixture: "rset-health-failed.yaml", verdict: failed, code: result.CodeFluxHealthCheckFailed,
			reason: "ReconciliationFailed", message: healthMessage},
		{name: "its apply refused", fixture: "rset-apply-failed.yaml", verdict: failed, code: result.CodeFluxReconciliationFailed, reason: "ReconciliationFailed",
			message: `reconciliation failed: Kustomization/flux-system/team1 dry-run failed (Invalid): Kustomization.kustomize.toolkit.fluxcd.io "team1" is invalid: spec.interval: Required value`},
		{name: "a template that does not render", fixture: "rset-build-failed.yaml", verdict: failed, code: result.CodeFluxBuildFailed, reason: "BuildFailed", message: buildMessage},
		{name: "a dependency not ready", fixture: "rset-dependency.yaml", verdict: inProgress, code: result.CodeFluxDependencyNotReady, reason: "DependencyNotReady",
			message: `waiting for its dependencies (spec.dependsOn): Retrying dependency check: dependency apiextensions.k8s.io/v1/CustomResourceDefinition/widgets.example.com not found: customresourcedefinitions.apiextensions.k8s.io "widgets.example.com" not found`},
		{name: "a failure in words not recognised", fixture: "rset-unrecognised.yaml", verdict: inProgress, code: result.CodeFluxReconciliationFailed, reason: "ReconciliationFailed",
			message: `reconciliation failed: failed to copy data from ConfigMap/shared/settings: configmaps "settings" not found; the verdict waits: flux-operator's words were not recognised (read from v0.59.0)`},
		{name: "an input provider not created yet", fixture: "rset-provider-missing.yaml", verdict: inProgress, code: result.CodeFluxBuildFailed, reason: "BuildFailed",
			message: `waiting for its input provider (spec.inputsFrom) to exist: failed to compute inputs: failed to get provider flux-system/app: resourcesetinputproviders.fluxcd.controlplane.io "app" not found`},
		{name: "created disabled, resumed, not reconciled since", fixture: "rset-created-disabled.yaml", verdict: inProgress, reason: "ReconciliationDisabled",
			message: "waiting for flux-operator to reconcile it: it was created with reconciliation disabled and has not been reconciled since (Ready: Initialized with reconciliation suspended)"},
		{name: "reconciliation disabled", fixture: "rset-disabled.yaml", verdict: suspended, code: result.CodeFluxSuspended, reason: "Suspended",
			message: "reconciliation disabled (annotation fluxcd.controlplane.io/reconcile: disabled); resume it with: flux-operator -n flux-system resume resourceset tenants"},
	})
}

// TestResourceSetApplied: what a ResourceSet's inventory lists is of its current generation
// once flux-operator is Ready at it, or the wait of its last step failed at it (the wait of
// an earlier step leaves the previous objects listed).
func TestResourceSetApplied(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fixture string
		applied bool
	}{
		{"rset-ready.yaml", true},
		{"rset-health-failed.yaml", true},
		{"rset-last-step-failed.yaml", true},
		{"rset-step-failed.yaml", false},
		{"rset-progressing.yaml", false},
		{"rset-generation.yaml", false},
		{"rset-apply-failed.yaml", false},
		{"rset-build-failed.yaml", false},
		{"rset-created-disabled.yaml", false},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			t.Parallel()
			if got := Evaluate(rsetRef, loadFixture(t, tt.fixture), mustRevision(t, newSHA), nil).Applied; got != tt.applied {
				t.Errorf("Evaluate(%s).Applied = %t, want %t", tt.fixture, got, tt.applied)
			}
		})
	}
}

// TestResourceSetInputsCarry: the expected revision is a ResourceSet's when one of its inputs
// holds it.
func TestResourceSetInputsCarry(t *testing.T) {
	t.Parallel()
	obj := loadFixture(t, "rset-ready.yaml")
	tests := []struct {
		want  string
		carry bool
	}{
		{"6.5.0", true},
		{"6.6.0", false},
		{newSHA, false},
		{"", false},
	}
	for _, tt := range tests {
		if got := ResourceSetInputsCarry(obj, mustRevision(t, tt.want)); got != tt.carry {
			t.Errorf("ResourceSetInputsCarry(rset-ready.yaml, %q) = %t, want %t", tt.want, got, tt.carry)
		}
		generated := tt.want != "" && !tt.carry
		if got := Evaluate(rsetRef, obj, mustRevision(t, tt.want), nil).GeneratedWant; got != generated {
			t.Errorf("Evaluate(rset-ready.yaml, %q).GeneratedWant = %t, want %t", tt.want, got, generated)
		}
	}
}
