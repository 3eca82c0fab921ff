package verify_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// nodeWaitingApp is a folder holding Deployment ingress, whose pod may run only on the node
// named node (kubernetes.io/hostname): the scheduler leaves it Pending until that node joins.
func nodeWaitingApp(t *testing.T, node string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- deployment.yaml\n",
		"deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ingress
spec:
  replicas: 1
  selector:
    matchLabels:
      app: ingress
  template:
    metadata:
      labels:
        app: ingress
    spec:
      nodeSelector:
        kubernetes.io/hostname: ` + node + `
      containers:
      - name: ingress
        image: ghcr.io/example/web:1.0.0
        ports:
        - containerPort: 8080
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// deployInfraWaitingForNode deploys Kustomization infra (spec.wait, a 10s timeout, a 20s
// retry) of nodeWaitingApp at commitA, and returns the node its Deployment waits for, deleted
// when the test ends.
func deployInfraWaitingForNode(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, infra string) string {
	t.Helper()
	node := ns + "-late-node"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.Kube.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{})
	})
	k := testbed.Kustomization{Name: infra, TargetNamespace: ns, Wait: true, Timeout: "10s", RetryInterval: "20s"}
	deployAppAt(ctx, t, c, k, nodeWaitingApp(t, node), commitA)
	return node
}

// awaitHealthCheckFailed waits until kustomize-controller fails the health checks of name, and
// checks that the run (done) has not ended on it.
func awaitHealthCheckFailed(ctx context.Context, t *testing.T, c *testbed.Cluster, name string, done <-chan result.Cluster) {
	t.Helper()
	kustomizations := c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system")
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := kustomizations.Get(ctx, name, metav1.GetOptions{})
		return err == nil && readyFalse("HealthCheckFailed")(u), nil
	}); err != nil {
		t.Fatalf("kustomize-controller never failed the health checks of %s: %v", name, err)
	}
	select {
	case got := <-done:
		t.Fatalf("the run ended on the failed health checks of %s: %s %s (%s), want it to wait for the retry", name, got.Verdict, got.Code, got.Message)
	case <-time.After(2 * time.Second):
	}
}

// TestDependencyHealthPassesAtRetry: apps depends on infra (dependsOn), outside the verified
// tree; infra's health checks fail (its Deployment cannot be scheduled until a node appears),
// then kustomize-controller's retry finds it Ready and lets apps go on. A run on apps is
// never Failed (before, flux-dependency-failed at infra's first failure) and ends Current.
func TestDependencyHealthPassesAtRetry(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[2]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	infra, apps := ns+"-infra", ns+"-apps"
	cleanUpFlux(t, c, infra, apps)
	node := deployInfraWaitingForNode(ctx, t, c, ns, infra)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: apps, TargetNamespace: ns, DependsOn: []string{infra}}, appDir(t, "web"), commitB)
	done := make(chan result.Cluster, 1)
	go func() {
		req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(apps)}, Revision: mustRevision(t, commitB), Timeout: 4 * time.Minute, Workloads: true}
		done <- verify.Run(ctx, req).Results[0]
	}()
	awaitHealthCheckFailed(ctx, t, c, infra, done)
	if err := c.AddNode(ctx, node, nil); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict %s %s (%s), want Current once kustomize-controller's retry found infra Ready", got.Verdict, got.Code, got.Message)
	}
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", infra, "main@sha1:"+commitA); err != nil {
		t.Fatalf("the run is Current, infra is not Ready: %v", err)
	}
}

// TestHealthRetryWithoutWorkloads: infra alone, verified with workloads: false; its health
// checks fail until a node appears, then kustomize-controller's retry finds it Ready. The run
// is never Failed (before, flux-health-check-failed at the first failure) and is Current
// after Flux's retry.
func TestHealthRetryWithoutWorkloads(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[2]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	infra := ns + "-infra"
	cleanUpFlux(t, c, infra)
	node := deployInfraWaitingForNode(ctx, t, c, ns, infra)
	done := make(chan result.Cluster, 1)
	go func() {
		req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(infra)}, Revision: mustRevision(t, commitA), Timeout: 4 * time.Minute}
		done <- verify.Run(ctx, req).Results[0]
	}()
	awaitHealthCheckFailed(ctx, t, c, infra, done)
	if err := c.AddNode(ctx, node, nil); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict %s %s (%s), want Current after kustomize-controller's retry", got.Verdict, got.Code, got.Message)
	}
	kustomizations := c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system")
	u, err := kustomizations.Get(ctx, infra, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := readySince(u); !ok {
		t.Fatalf("the run is Current, Flux is not Ready: %v", u.Object["status"])
	}
}
