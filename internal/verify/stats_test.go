package verify_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
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

// TestNoPassOnlyToCount: while a list has not answered, a run that shows no steps makes no
// pass each second to refresh the step "has not answered for Ns" that nobody sees: a fleet's
// hung and throttled clusters would each make one a second until the timeout. A run that shows
// its steps still does. Both end on the same verdict, for the same reason.
func TestNoPassOnlyToCount(t *testing.T) {
	t.Parallel()
	type outcome struct {
		Verdict   result.Verdict
		Reason    string
		FewPasses bool
	}
	run := func(steps bool) (outcome, int) {
		resources, objects := fakeapi.App("app", fakeRevision, 30)
		s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects,
			Refusals: []fakeapi.Refusal{{Plural: "deployments", Namespace: "app", Code: 0}}})
		t.Cleanup(s.Close)
		req := fakeRequest([]verify.Target{fakeTarget("hung-list", s)}, 6*time.Second)
		req.ProgressSteps = steps
		req.Progress = func(verify.Progress) {}
		req.Stats = &verify.Stats{}
		c := resultOf(verify.Run(context.Background(), req), "hung-list")
		passes := req.Stats.Passes[0]
		return outcome{Verdict: c.Verdict, Reason: c.Reason, FewPasses: passes <= 5}, passes
	}
	var (
		shown       outcome
		shownPasses int
		wg          sync.WaitGroup
	)
	wg.Go(func() { shown, shownPasses = run(true) })
	quiet, quietPasses := run(false)
	wg.Wait()
	if quiet.Verdict != result.VerdictTimeout {
		t.Fatalf("verdict %s (%s), want Timeout", quiet.Verdict, quiet.Reason)
	}
	if !quiet.FewPasses {
		t.Errorf("without steps: %d passes in 6s, want at most 5 (the first look, the lists' arrival, the last look at the stop)", quietPasses)
	}
	if shownPasses < quietPasses+3 {
		t.Errorf("with steps: %d passes in 6s, want the refresh each second (at least %d)", shownPasses, quietPasses+3)
	}
	t.Logf("passes: %d without steps, %d with", quietPasses, shownPasses)
	shown.FewPasses = quiet.FewPasses
	if diff := cmp.Diff(quiet, shown); diff != "" {
		t.Errorf("the steps changed the verdict (-without +with):\n%s", diff)
	}
}

// TestTimeoutSaysHowLong: a cluster whose list never answers ends Timeout saying how long the
// API server has not answered it, the run's whole timeout, with or without steps: without
// them its last pass was long before the deadline, and the verdict looks once more.
func TestTimeoutSaysHowLong(t *testing.T) {
	t.Parallel()
	for _, steps := range []bool{false, true} {
		t.Run(fmt.Sprintf("steps %t", steps), func(t *testing.T) {
			t.Parallel()
			resources, objects := fakeapi.App("app", fakeRevision, 30)
			s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects,
				Refusals: []fakeapi.Refusal{{Plural: "deployments", Namespace: "app", Code: 0}}})
			t.Cleanup(s.Close)
			req := fakeRequest([]verify.Target{fakeTarget("hung-list", s)}, 8*time.Second)
			req.ProgressSteps = steps
			req.Progress = func(verify.Progress) {}
			c := resultOf(verify.Run(context.Background(), req), "hung-list")
			if c.Verdict != result.VerdictTimeout || !strings.Contains(c.Message, "has not answered the list of deployments") ||
				!strings.HasSuffix(c.Message, "for 7s") && !strings.HasSuffix(c.Message, "for 8s") {
				t.Errorf("%s (%s): %q; want Timeout, the API server not answering the list for the run's timeout (7s or 8s)", c.Verdict, c.Reason, c.Message)
			}
		})
	}
}
