package verify_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// TestFailFast: with fail-fast, a cluster that fails stops the others: the one still waiting
// for a revision that never comes and the one whose pods will only fail after a two-minute
// grace are Cancelled, and the run returns as soon as the broken cluster has failed, long before
// its timeout. The broken app is deployed once the run is under way, so all three clusters are
// being watched when it fails.
func TestFailFast(t *testing.T) {
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := b.Namespace(t)
	broken, stale, slow := b.Clusters[0], b.Clusters[1], b.Clusters[2]
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	for _, c := range b.Clusters {
		cleanUpFlux(t, c, ns)
	}
	deployAppAt(ctx, t, stale, k, appDir(t, "web"), commitA)
	deployAppAt(ctx, t, slow, k, appDir(t, "fail-never-ready"), commitB)
	if err := stale.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}

	const timeout = 2 * time.Minute
	revision := mustRevision(t, commitB)
	var mu sync.Mutex
	var failedAt time.Time
	done := make(chan result.Run, 1)
	start := time.Now()
	go func() {
		done <- verify.Run(ctx, verify.Request{
			Targets:   targetsOf(broken, stale, slow),
			Resources: []flux.Ref{ks(ns)},
			Revision:  revision,
			Timeout:   timeout,
			Workloads: true,
			FailFast:  true,
			Progress: func(p verify.Progress) {
				if p.Final && p.Cluster == broken.Name {
					mu.Lock()
					failedAt = time.Now()
					mu.Unlock()
				}
			},
		})
	}()
	deployAppAt(ctx, t, broken, k, appDir(t, "fail-image-pull"), commitB)
	run := <-done
	returned := time.Now()

	want := map[string]result.Verdict{broken.Name: result.VerdictFailed, stale.Name: result.VerdictCancelled, slow.Name: result.VerdictCancelled}
	if diff := cmp.Diff(want, verdicts(run)); diff != "" {
		t.Fatalf("verdicts (-want +got):\n%s\nresults: %+v", diff, run.Results)
	}
	if got := byName(t, run, broken.Name); got.Code != result.CodeImagePull {
		t.Errorf("broken cluster code = %q (%s), want image-pull", got.Code, got.Message)
	}
	for _, c := range []*testbed.Cluster{stale, slow} {
		if got := byName(t, run, c.Name); !strings.Contains(got.Message, "fail-fast is set; was ") {
			t.Errorf("cluster %s message = %q, want it to name fail-fast and what it was waiting for", c.Name, got.Message)
		}
	}
	if got := byName(t, run, stale.Name); !strings.Contains(got.Message, "applied main@sha1:a1b2c3d, waiting for b2c3d4e") {
		t.Errorf("stale cluster message = %q, want the revision it has and the one it waited for", got.Message)
	}
	if run.Status != result.RunFailure {
		t.Errorf("status = %s, want failure", run.Status)
	}
	mu.Lock()
	failed := failedAt
	mu.Unlock()
	took := returned.Sub(start)
	t.Logf("fail-fast: run took %s; returned %s after the broken cluster's verdict", took.Round(time.Millisecond), returned.Sub(failed).Round(time.Millisecond))
	if took > timeout/2 {
		t.Errorf("Run took %s with fail-fast; it should stop once %s failed, long before the %s timeout", took, broken.Name, timeout)
	}
}
