package verify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// Objects judged by Flux's own readers, with the real kustomize-controller and
// helm-controller: the team's spec.healthCheckExprs, and Jobs Helm's wait counted done.

// TestHealthCheckExprs: a Kustomization with spec.wait names a custom resource's health with
// spec.healthCheckExprs (status.phase). Its controller keeps a Reconciling condition True
// while it polls, which kstatus reads as InProgress for ever: judged by kstatus, the run
// waited out its timeout while Flux said Ready. The run waits while the phase is Pending, as
// kustomize-controller does, and is Current within seconds of the Kustomization's Ready.
// With the current and the previous minor of kustomize-controller.
func TestHealthCheckExprs(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "kustomize-controller", testHealthCheckExprs)
}

func testHealthCheckExprs(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[len(b.Clusters)-1]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	cleanUpFlux(t, c, ns)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns, Wait: true, Timeout: "2m",
		HealthCheckExprs: phaseExprs("Dial")}
	deployAppAt(ctx, t, c, k, appDir(t, "dial-exprs"), commitA)
	dials := c.Dynamic.Resource(schema.GroupVersionResource{Group: "test.app-status.dev", Version: "v1", Resource: "dials"}).Namespace(ns)
	setPhase(ctx, t, dials, "volume", "Pending")

	start := time.Now()
	done := make(chan result.Cluster, 1)
	go func() {
		done <- verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(ns)}, Revision: mustRevision(t, commitA),
			Timeout: 45 * time.Second, Workloads: true}).Results[0]
	}()
	select {
	case got := <-done:
		t.Fatalf("the Dial Pending: verdict %s (%s) after %s, want the run to wait", got.Verdict, got.Message, time.Since(start))
	case <-time.After(5 * time.Second):
	}
	setPhase(ctx, t, dials, "volume", "Ready")
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}
	fluxReady := time.Now()
	got := <-done
	answered := time.Now()
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("the Dial Ready by its healthCheckExprs: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	for _, o := range got.Objects {
		if o.Kind == "Dial" && (o.Status != result.ObjectCurrent || !strings.Contains(o.Message, "healthCheckExprs")) {
			t.Errorf("Dial %s: %s (%s), want Current, judged by spec.healthCheckExprs", o.ID, o.Status, o.Message)
		}
	}
	if lag := answered.Sub(fluxReady); lag > 10*time.Second {
		t.Errorf("Current %s after kustomize-controller's Ready, want within seconds", lag)
	}
	t.Logf("Current %s after the Kustomization's Ready was seen (%s after the start)", answered.Sub(fluxReady).Round(time.Millisecond), answered.Sub(start).Round(time.Millisecond))
}

// TestHelmReleaseTTLJobs: a chart with a Job of its manifest and a post-install hook Job, each
// deleted by its TTL once complete. Helm's wait (fluxcd/pkg/ssa in helm-controller) counted
// both done; the HelmRelease's inventory still lists the Job of the manifest. The run,
// started after both are gone, is Current within seconds, rather than waiting for the Job
// "not found" to its timeout.
//
// With the current and the previous minor of helm-controller. helm-controller v1.4.3 waits
// with Helm 3's own checker, which reads each Job every 2 s and fails the release when one is
// gone (a 404 is no error it retries): when the TTL controller deletes the Job between two
// reads, the install fails with `jobs.batch "web-migrate" not found` and, with no retries,
// stalls. Whichever answer helm-controller gives, the run gives it within seconds: Current,
// or Failed (flux-install-failed) with Helm's words.
func TestHelmReleaseTTLJobs(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "helm-controller", testHelmReleaseTTLJobs)
}

func testHelmReleaseTTLJobs(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[0]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	if _, err := c.DeployChart(ctx, testbed.HelmRelease{Name: "web", Namespace: ns}, chartDir(t, "web-ttl-jobs"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if !controllerAtLeast(t, b, "helm-controller", "v1.5.0") && helmInstallStalled(ctx, t, c, ns, "web") {
		start := time.Now()
		got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{hr(ns, "web")}, Revision: mustRevision(t, "1.0.0"),
			Timeout: 30 * time.Second, Workloads: true}).Results[0]
		took := time.Since(start)
		if got.Verdict != result.VerdictFailed || got.Code != result.CodeFluxInstallFailed || !strings.Contains(got.Message, `"web-migrate" not found`) {
			t.Fatalf("Helm 3's wait failed the install on the Job gone: verdict %s, code %s (%s), want Failed flux-install-failed with Helm's words",
				got.Verdict, got.Code, got.Message)
		}
		if took > verdictWithin {
			t.Errorf("flux-install-failed %s after the start, with helm-controller stalled before it, want within %s", took, verdictWithin)
		}
		t.Logf("helm-controller failed the install on the Job its TTL deleted; flux-install-failed in %s: %s", took.Round(time.Millisecond), got.Message)
		return
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

// setPhase writes a custom resource's status as its controller would: a phase, with a
// Reconciling condition True while it polls. It waits for the object to be applied.
func setPhase(ctx context.Context, t *testing.T, client dynamic.ResourceInterface, name, phase string) {
	t.Helper()
	var last error
	// Until the test's own deadline: on two loaded cores a controller may take over a minute
	// to apply the object.
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		d, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err
			return false, nil // not applied yet
		}
		status := map[string]any{"observedGeneration": d.GetGeneration(), "phase": phase, "conditions": []any{map[string]any{
			"type": "Reconciling", "status": "True", "reason": "Polling", "message": "polling the device",
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
		if err := unstructured.SetNestedField(d.Object, status, "status"); err != nil {
			return false, err
		}
		_, err = client.UpdateStatus(ctx, d, metav1.UpdateOptions{})
		last = err
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("write the status of %s: %v (last: %v)", name, err, last)
	}
}

// phaseExprs are spec.healthCheckExprs judging a kind of test.app-status.dev/v1 by its
// status.phase.
func phaseExprs(kind string) []map[string]any {
	return []map[string]any{{"apiVersion": "test.app-status.dev/v1", "kind": kind,
		"current": "status.phase == 'Ready'", "inProgress": "status.phase == 'Pending'", "failed": "status.phase == 'Failed'"}}
}

// TestHelmReleaseHealthCheckExprs: a HelmRelease names a custom resource's health with
// spec.healthCheckExprs (status.phase); the resource's controller keeps a Reconciling condition
// True while it polls. helm-controller evaluates the expressions in Helm's wait from v1.5.0
// on: the release turns Ready once the Gauge is Ready, and the run, waiting while it is
// Pending, is Current within seconds of that Ready. helm-controller v1.4.3 has no
// spec.healthCheckExprs and Helm 3's wait passes custom resources at once: the release is
// Ready with the Gauge Pending; the run still judges the Gauge by the team's expressions,
// waits, and is Current within seconds of the Gauge turning Ready (kstatus alone would wait
// for ever on the Reconciling condition).
func TestHelmReleaseHealthCheckExprs(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "helm-controller", testHelmReleaseHealthCheckExprs)
}

func testHelmReleaseHealthCheckExprs(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[0]
	helmLogOnFailure(t, c)
	fluxEvaluates := controllerAtLeast(t, b, "helm-controller", "v1.5.0")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	release := testbed.HelmRelease{Name: "gauge", Namespace: ns, Timeout: "2m", HealthCheckExprs: phaseExprs("Gauge")}
	if _, err := c.DeployChart(ctx, release, chartDir(t, "gauge-exprs"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	gauges := c.Dynamic.Resource(schema.GroupVersionResource{Group: "test.app-status.dev", Version: "v1", Resource: "gauges"}).Namespace(ns)
	setPhase(ctx, t, gauges, "gauge-pressure", "Pending")

	start := time.Now()
	done := make(chan result.Cluster, 1)
	go func() {
		done <- verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{hr(ns, "gauge")}, Revision: mustRevision(t, "1.0.0"),
			Timeout: 90 * time.Second, Workloads: true}).Results[0]
	}()
	releases := c.Dynamic.Resource(testbed.HelmReleaseGVR).Namespace(ns)
	if !fluxEvaluates {
		// helm-controller's own answer with the Gauge Pending: Ready.
		if err := c.WaitHelmReleased(ctx, ns, "gauge", "1.0.0"); err != nil {
			t.Fatalf("helm-controller without spec.healthCheckExprs, the Gauge Pending: %v", err)
		}
	}
	select {
	case got := <-done:
		t.Fatalf("the Gauge Pending: verdict %s (%s) after %s, want the run to wait", got.Verdict, got.Message, time.Since(start))
	case <-time.After(5 * time.Second):
	}
	if u, err := releases.Get(ctx, "gauge", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if _, ready := readySince(u); ready != !fluxEvaluates {
		t.Fatalf("the Gauge Pending, HelmRelease Ready %t, want %t (helm-controller evaluates spec.healthCheckExprs: %t): %v",
			ready, !fluxEvaluates, fluxEvaluates, u.Object["status"])
	}
	setPhase(ctx, t, gauges, "gauge-pressure", "Ready")
	answer := time.Now() // Flux's answer without the expressions: the Gauge's own
	if err := c.WaitHelmReleased(ctx, ns, "gauge", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if fluxEvaluates {
		answer = time.Now()
	}
	got := <-done
	answered := time.Now()
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("the Gauge Ready by its healthCheckExprs: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	found := false
	for _, o := range got.Objects {
		if o.Kind == "Gauge" {
			found = true
			if o.Status != result.ObjectCurrent || !strings.Contains(o.Message, "healthCheckExprs") {
				t.Errorf("Gauge %s: %s (%s), want Current, judged by spec.healthCheckExprs", o.ID, o.Status, o.Message)
			}
		}
	}
	if !found {
		t.Errorf("the Gauge is not among the release's objects: %+v", got.Objects)
	}
	if lag := answered.Sub(answer); lag > 10*time.Second {
		t.Errorf("Current %s after the answer (helm-controller's Ready: %t; else the Gauge's), want within seconds", lag, fluxEvaluates)
	}
	t.Logf("Current %s after the answer (helm-controller's Ready: %t; else the Gauge's), %s after the start",
		answered.Sub(answer).Round(time.Millisecond), fluxEvaluates, answered.Sub(start).Round(time.Millisecond))
}

// helmInstallStalled waits for helm-controller's answer to a HelmRelease's install: true when
// it stalled on a failed install, false once the release is deployed and Ready.
func helmInstallStalled(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, name string) bool {
	t.Helper()
	var stalled bool
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := c.Dynamic.Resource(testbed.HelmReleaseGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		if _, ready := readySince(u); ready {
			return true, nil
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, x := range conds {
			if m, _ := x.(map[string]any); m["type"] == "Stalled" && m["status"] == "True" && readyFalse("InstallFailed")(u) {
				stalled = true
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("helm-controller gave no answer to HelmRelease %s/%s's install: %v", ns, name, err)
	}
	return stalled
}
