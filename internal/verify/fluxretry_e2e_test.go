package verify_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// TestHealthCheckPassesAtRetry: a Kustomization with spec.wait whose Deployment turns ready
// after spec.timeout. The real kustomize-controller fails its health checks
// (HealthCheckFailed), retries at spec.retryInterval and turns Ready. The run waits through
// the failure and is Current within seconds of Flux's Ready (before, flux-health-check-failed
// at once).
// With the current and the previous minor of kustomize-controller.
func TestHealthCheckPassesAtRetry(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "kustomize-controller", testHealthCheckPassesAtRetry)
}

func testHealthCheckPassesAtRetry(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	name := ns + "-retry"
	cleanUpFlux(t, c, name)
	k := testbed.Kustomization{Name: name, TargetNamespace: ns, Wait: true, Timeout: "10s", RetryInterval: "20s"}
	if _, err := c.DeployApp(ctx, k, appDir(t, "fail-never-ready"), commitA); err != nil {
		t.Fatal(err)
	}
	done := make(chan result.Cluster, 1)
	go func() {
		req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, commitA), Timeout: 3 * time.Minute, Workloads: true}
		done <- verify.Run(ctx, req).Results[0]
	}()

	kustomizations := c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system")
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := kustomizations.Get(ctx, name, metav1.GetOptions{})
		return err == nil && readyFalse("HealthCheckFailed")(u), nil
	}); err != nil {
		t.Fatalf("kustomize-controller never failed the health checks: %v", err)
	}
	select {
	case got := <-done:
		t.Fatalf("the run ended on the failed health checks: %s %s (%s), want it to wait for the retry", got.Verdict, got.Code, got.Message)
	case <-time.After(2 * time.Second):
	}
	pods, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("pods: %v (%d)", err, len(pods.Items))
	}
	markPodsReady(ctx, t, c, ns, pods.Items)

	got := <-done
	answered := time.Now()
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict %s %s (%s), want Current at kustomize-controller's retry", got.Verdict, got.Code, got.Message)
	}
	u, err := kustomizations.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready, ok := readySince(u)
	if !ok {
		t.Fatalf("the run is Current, Flux is not Ready: %v", u.Object["status"])
	}
	// lastTransitionTime has a resolution of a second.
	if lag := answered.Sub(ready); lag > 5*time.Second {
		t.Errorf("Current %s after Flux said Ready, want within seconds", lag.Round(time.Millisecond))
	}
	t.Logf("Current %s after Flux said Ready", answered.Sub(ready).Round(time.Millisecond))
}

// markPodsReady sets the pods Ready, as a readiness probe that passes at last.
func markPodsReady(ctx context.Context, t *testing.T, c *testbed.Cluster, ns string, pods []corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := c.Kube.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			now := metav1.Now()
			for i := range cur.Status.Conditions {
				if cur.Status.Conditions[i].Type == corev1.PodReady || cur.Status.Conditions[i].Type == corev1.ContainersReady {
					cur.Status.Conditions[i].Status, cur.Status.Conditions[i].LastTransitionTime = corev1.ConditionTrue, now
				}
			}
			for i := range cur.Status.ContainerStatuses {
				cur.Status.ContainerStatuses[i].Ready = true
			}
			_, err = c.Kube.CoreV1().Pods(ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// readySince is when a Flux object's Ready condition turned True.
func readySince(u *unstructured.Unstructured) (time.Time, bool) {
	return conditionSince(u, "Ready", "True", "")
}

// conditionSince is when a Flux object's condition of that type turned to status, with that
// reason when one is given.
func conditionSince(u *unstructured.Unstructured, condType, status, reason string) (time.Time, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == condType && m["status"] == status && (reason == "" || m["reason"] == reason) {
			s, _ := m["lastTransitionTime"].(string)
			at, err := time.Parse(time.RFC3339, s)
			return at, err == nil
		}
	}
	return time.Time{}, false
}

// TestValuesFixDuringFailingUpgrade: values whose pods never get ready start an upgrade
// (generation 2); while Helm waits for them, the fix is pushed (generation 3). The real
// helm-controller fails the upgrade of generation 2, and its patch helper stamps the failure
// (Released=False UpgradeFailed, Stalled RetriesExceeded) with generation 3; it then upgrades
// generation 3, which turns Ready. The run, started with the fix, waits through the stamped
// failure and is Current within seconds of Flux's Ready; never flux-upgrade-failed.
//
// With the current and the previous minor of helm-controller. helm-controller v1.4.3 upgrades
// with Helm 3's client-side three-way merge from the last deployed release to the fix: the
// failure annotation the failed release added is named by neither, so it stays, and the
// upgrade of generation 3 fails too (helm-controller v1.5.0 on applies server-side and
// removes it). There the run still waits through the stamped failure of generation 2, and
// fails with flux-upgrade-failed within seconds of helm-controller's failure of generation 3.
func TestValuesFixDuringFailingUpgrade(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "helm-controller", testValuesFixDuringFailingUpgrade)
}

func testValuesFixDuringFailingUpgrade(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[1]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	release := testbed.HelmRelease{Name: "web", Namespace: ns, Timeout: "15s", Upgrade: &testbed.Remediation{Retries: 0}}
	if _, err := c.DeployChart(ctx, release, chartDir(t, "web"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHelmReleased(ctx, ns, "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	releases := c.Dynamic.Resource(testbed.HelmReleaseGVR).Namespace(ns)
	setValues := func(mode string) {
		patch := fmt.Sprintf(`{"spec":{"values":{"failureMode":%q}}}`, mode)
		if _, err := releases.Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setValues(string(testbed.FailNeverReady))
	// Helm's upgrade of generation 2 runs (it waits 15s for pods that never get ready).
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := releases.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		attempted, _, _ := unstructured.NestedInt64(u.Object, "status", "lastAttemptedGeneration")
		return attempted == u.GetGeneration() && reconcilingReason(u) == "Progressing", nil
	}); err != nil {
		t.Fatalf("helm-controller never started the failing upgrade: %v", err)
	}
	setValues("") // the fix, while Helm waits
	req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{hr(ns, "web")}, Revision: mustRevision(t, "1.0.0"), Timeout: 3 * time.Minute, Workloads: true}
	run := startRun(ctx, req)

	// The stamped failure, seen for the record: the run must wait through it.
	stamped := false
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := releases.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		attempted, _, _ := unstructured.NestedInt64(u.Object, "status", "lastAttemptedGeneration")
		if attempted < u.GetGeneration() && readyFalse("UpgradeFailed")(u) {
			stamped = true
			t.Logf("generation %d failed, conditions %v", attempted, u.Object["status"].(map[string]any)["conditions"])
			return true, nil
		}
		return attempted == u.GetGeneration(), nil
	})
	got := (<-run).Results[0]
	answered := time.Now()
	if !controllerAtLeast(t, b, "helm-controller", "v1.5.0") {
		u, err := releases.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		attempted, _, _ := unstructured.NestedInt64(u.Object, "status", "lastAttemptedGeneration")
		failedAt, failed := conditionSince(u, "Ready", "False", "UpgradeFailed")
		if got.Verdict != result.VerdictFailed || got.Code != result.CodeFluxUpgradeFailed || !failed || attempted != u.GetGeneration() {
			t.Fatalf("verdict %s %s (%s) with generation %d last attempted, want flux-upgrade-failed once helm-controller failed generation %d: %v",
				got.Verdict, got.Code, got.Message, attempted, u.GetGeneration(), u.Object["status"])
		}
		// lastTransitionTime has a resolution of a second; the stamped failure came a Helm
		// timeout (15s) before.
		if lag := answered.Sub(failedAt); lag < -time.Second || lag > 5*time.Second {
			t.Errorf("flux-upgrade-failed %s after helm-controller failed generation %d, want within seconds, not before", lag.Round(time.Millisecond), attempted)
		}
		t.Logf("flux-upgrade-failed %s after helm-controller failed generation %d too (stamped failure seen: %t)", answered.Sub(failedAt).Round(time.Millisecond), attempted, stamped)
		return
	}
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict %s %s (%s), want Current once generation 3 is released (stamped failure seen: %t)", got.Verdict, got.Code, got.Message, stamped)
	}
	u, err := releases.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready, ok := readySince(u)
	if !ok {
		t.Fatalf("the run is Current, Flux is not Ready: %v", u.Object["status"])
	}
	if lag := answered.Sub(ready); lag > 5*time.Second {
		t.Errorf("Current %s after Flux said Ready, want within seconds", lag.Round(time.Millisecond))
	}
	t.Logf("Current %s after Flux said Ready (stamped failure seen: %t)", answered.Sub(ready).Round(time.Millisecond), stamped)
}

// reconcilingReason is a Flux object's Reconciling reason when it is True, else "".
func reconcilingReason(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Reconciling" && m["status"] == "True" {
			s, _ := m["reason"].(string)
			return s
		}
	}
	return ""
}
