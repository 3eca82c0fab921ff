package verify_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/verify"
)

// TestStatsCountPasses: Request.Stats says how many times each cluster was judged, in the
// order of the targets: a cluster that was read at least once, one that was never contacted
// none.
func TestStatsCountPasses(t *testing.T) {
	t.Parallel()
	targets := []verify.Target{
		{Name: "invalid", Invalid: "no server in the kubeconfig"},
		fakeTarget("healthy", fakeCluster(t, fakeapi.Healthy)),
	}
	req := fakeRequest(targets, time.Minute)
	req.Stats = &verify.Stats{}
	run := verify.Run(context.Background(), req)
	if got := resultOf(run, "healthy"); got.Verdict != result.VerdictCurrent {
		t.Fatalf("healthy cluster: %s (%s), want Current", got.Verdict, got.Message)
	}
	type passes struct {
		Clusters int
		Judged   []bool
	}
	got := passes{Clusters: len(req.Stats.Passes)}
	for _, n := range req.Stats.Passes {
		got.Judged = append(got.Judged, n > 0)
	}
	if diff := cmp.Diff(passes{Clusters: 2, Judged: []bool{false, true}}, got); diff != "" {
		t.Errorf("Stats.Passes %v (-want +got):\n%s", req.Stats.Passes, diff)
	}
}
