package verify_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// TestSurvivesAPIServerRestart: the API server (and etcd, the whole control plane) stops and
// starts again while a run waits for a revision. The watches come back by themselves (the
// informers list again), and the run is Current once the revision is applied after the
// restart, with no verdict before.
func TestSurvivesAPIServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("needs real clusters: run without -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// A bed of its own: stopping a cluster of the shared one would disturb other tests.
	b, err := testbed.Start(ctx, testbed.Options{Clusters: 1, Flux: true, Prefix: "restart"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	c := b.Clusters[0]
	ns := c.Namespace(t)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	if _, err := c.DeployApp(ctx, k, appDir(t, "web"), commitA); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}

	var progress progressLog
	waiting := make(chan struct{})
	var once bool
	req := verify.Request{
		Targets: targetsOf(c), Resources: []flux.Ref{ks(ns)}, Revision: mustRevision(t, commitB),
		Timeout: 3 * time.Minute, Workloads: true,
		Progress: func(p verify.Progress) {
			progress.record(p)
			if !once && strings.Contains(p.Message, "waiting for") {
				once = true
				close(waiting)
			}
		},
	}
	done := startRun(ctx, req)
	select {
	case <-waiting:
	case run := <-done:
		t.Fatalf("the run ended before the restart: %+v", run.Results)
	}
	stopped := time.Now()
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.StartFlux(ctx); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	// The new revision changes the app's configuration, not its pod template: what is under
	// test is the watches surviving the restart, and kwok, started again with the control
	// plane, now and then leaves new pods Pending for minutes.
	if _, err := c.DeployApp(ctx, k, appDir(t, "web-new-config"), commitB); err != nil {
		t.Fatal(err)
	}
	pushed := time.Now()
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitB); err != nil {
		t.Fatal(err)
	}
	applied := time.Now()
	got := (<-done).Results[0]
	if got.Verdict != result.VerdictCurrent {
		d, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		var pods []string
		if list, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
			for _, p := range list.Items {
				pods = append(pods, fmt.Sprintf("%s on %q: %s %+v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions))
			}
		}
		t.Fatalf("after the restart: verdict %s (%s): %s; want Current\nthe Deployment now (%v): %+v\npods: %q\nprogress: %q",
			got.Verdict, got.Code, got.Message, err, d.Status, pods, progress.messages())
	}
	t.Logf("control plane down and up in %s; Flux applied the revision %dms after it was pushed; Current %dms after that",
		restarted.Sub(stopped).Round(time.Millisecond), applied.Sub(pushed).Milliseconds(), time.Since(applied).Milliseconds())
}
