package verify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// Objects judged by Flux's own readers, with the real kustomize-controller and
// helm-controller.

// TestHelmReleaseTTLJobs: a chart with a Job of its manifest and a post-install hook Job, each
// deleted by its TTL once complete. Helm's wait (fluxcd/pkg/ssa in helm-controller) counted
// both done; the HelmRelease's inventory still lists the Job of the manifest. The run,
// started after both are gone, is Current within seconds, rather than waiting for the Job
// "not found" to its timeout.
func TestHelmReleaseTTLJobs(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	if _, err := c.DeployChart(ctx, testbed.HelmRelease{Name: "web", Namespace: ns}, chartDir(t, "web-ttl-jobs"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHelmReleased(ctx, ns, "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, name := range []string{"web-migrate", "web-seed"} {
			if _, err := c.Kube.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatalf("the TTL controller did not delete the completed Jobs: %v", err)
	}
	start := time.Now()
	got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{hr(ns, "web")}, Revision: mustRevision(t, "1.0.0"),
		Timeout: 30 * time.Second, Workloads: true}).Results[0]
	took := time.Since(start)
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("Jobs gone after Helm's wait: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	found := false
	for _, o := range got.Objects {
		if o.Kind != "Job" {
			continue
		}
		found = true
		if o.Name != "web-migrate" || o.Status != result.ObjectCurrent || !strings.Contains(o.Message, "Helm's wait") {
			t.Errorf("Job %s: %s (%s), want web-migrate Current, saying Helm's wait counted it (the hook Job is no object of the release)", o.ID, o.Status, o.Message)
		}
	}
	if !found {
		t.Error("the Job of the inventory is not in the result")
	}
	if took > 10*time.Second {
		t.Errorf("Current %s after the start, with helm-controller Ready before it, want within seconds", took)
	}
	t.Logf("Current in %s with both Jobs gone", took.Round(time.Millisecond))
}
