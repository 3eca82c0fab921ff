package flux

import (
	"testing"

	"github.com/fluxcd/pkg/apis/meta"

	"github.com/org/app-status-action/internal/result"
)

// TestWorking: a controller at work on a reconcile is told apart from what a person acts on:
// a failure it retries, a dependency, a verdict.
func TestWorking(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		ref     Ref
		fixture string
		want    string
		working bool
	}{
		{"building", ksRef, "ks-building.yaml", newSHA, true},
		{"health-checking", ksRef, "ks-reconciling.yaml", newSHA, true},
		{"Helm upgrade running", hrRef, "hr-reconciling.yaml", "6.5.0", true},
		{"ready", ksRef, "ks-ready.yaml", newSHA, false},
		{"never reconciled", ksRef, "ks-new.yaml", newSHA, false},
		{"waiting for a dependency", ksRef, "ks-dependency.yaml", newSHA, false},
		{"build failed", ksRef, "ks-build-failed.yaml", newSHA, false},
		{"upgrade retried", hrRef, "hr-upgrade-retrying.yaml", "6.5.0", false},
		{"failed upgrade being remediated", hrRef, "hr-upgrade-remediating.yaml", "6.5.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := Evaluate(tt.ref, loadFixture(t, tt.fixture), mustRevision(t, tt.want), nil)
			if got := g.Working(); got != tt.working {
				t.Errorf("Evaluate(%s, %q).Working() = %t, want %t (%s, %s: %s)", tt.fixture, tt.want, got, tt.working, g.Verdict, g.Object.Reason, g.Message)
			}
		})
	}
	// A gate made to wait with a code (a source's failure retried, say) while its object
	// reports progress says more than a phase.
	g := Gate{Verdict: result.VerdictInProgress, Code: result.CodeFluxArtifactFailed, Object: result.FluxObject{Reason: meta.ProgressingReason}}
	if g.Working() {
		t.Errorf("%+v: Working() = true, want false: it carries a failure", g)
	}
}
