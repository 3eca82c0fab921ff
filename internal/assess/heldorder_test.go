package assess

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
)

// TestHeldFailureHidesNoOther: under the run's forced reconcile of a HelmRelease, its failed
// upgrade is the state before the request, held until Flux handles it; another root's failure
// that stands (an image that cannot be pulled) fails the cluster at once, whatever the order
// the two were met in. With every failure held, the cluster waits.
func TestHeldFailureHidesNoOther(t *testing.T) {
	t.Parallel()
	upgrade := Finding{Verdict: result.VerdictFailed, Code: result.CodeFluxUpgradeFailed, Reason: "UpgradeFailed", Message: "HelmRelease/shop/web: upgrade failed"}
	pull := Finding{Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "ErrImagePull", Message: "Deployment/shop/api: cannot pull"}
	forced := &ReconcileWait{ID: "HelmRelease/shop/web", Token: "t", Field: "lastHandledForceAt", Forced: true}
	type got struct {
		Done bool
		Code result.Code
	}
	for _, tt := range []struct {
		name  string
		order []Finding
		want  got
	}{
		{name: "the held failure first", order: []Finding{upgrade, pull}, want: got{Done: true, Code: result.CodeImagePull}},
		{name: "the standing failure first", order: []Finding{pull, upgrade}, want: got{Done: true, Code: result.CodeImagePull}},
		{name: "only the held failure", order: []Finding{upgrade}, want: got{Code: result.CodeFluxUpgradeFailed}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := &Assessment{}
			for _, f := range tt.order {
				e.fail(f)
			}
			c := Conclude(e, Facts{Reconcile: forced})
			g := got{Done: c.Done, Code: c.Verdict.Code}
			if !c.Done && c.Pending != nil {
				g.Code = c.Pending.Code
			}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s\nverdict %+v pending %+v", diff, c.Verdict, c.Pending)
			}
		})
	}
}
