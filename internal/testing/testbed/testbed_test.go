package testbed_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/org/app-status-action/internal/testing/testbed"
)

var bed = testbed.NewShared(testbed.Options{Clusters: 3, Flux: true, Prefix: "smoke"})

func TestMain(m *testing.M) {
	code := m.Run()
	bed.Close()
	os.Exit(code)
}

// TestKustomizationOnThreeClusters proves the bed: on three clusters at once, the real
// kustomize-controller applies a published revision, the Deployment becomes available through
// the real controller-manager, scheduler and kwok, and the inventory lists what was applied.
// Publishing a second revision makes Flux apply it.
func TestKustomizationOnThreeClusters(t *testing.T) {
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range b.Clusters {
		g.Go(func() error {
			ns := c.Namespace(t)
			k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
			art, err := c.DeployApp(gctx, k, testbed.Testdata(t, "apps", "web"), "")
			if err != nil {
				return err
			}
			if err := c.WaitFluxApplied(gctx, testbed.KustomizationGVR, "flux-system", ns, art.Revision); err != nil {
				return fmt.Errorf("%w\nkustomize-controller log:\n%s", err, c.ControllerLog("kustomize-controller"))
			}
			ks, err := c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system").Get(gctx, ns, metav1.GetOptions{})
			if err != nil {
				return err
			}
			entries, _, _ := unstructured.NestedSlice(ks.Object, "status", "inventory", "entries")
			want := map[string]bool{
				ns + "_web-config__ConfigMap": true,
				ns + "_web__Service":          true,
				ns + "_web_apps_Deployment":   true,
			}
			for _, e := range entries {
				id, _ := e.(map[string]any)["id"].(string)
				delete(want, id)
			}
			if len(want) > 0 {
				return fmt.Errorf("cluster %s: inventory %v lacks %v", c.Name, entries, want)
			}
			if err := waitDeploymentAvailable(gctx, c, ns, "web", 2); err != nil {
				return err
			}

			art2, err := c.DeployApp(gctx, k, testbed.Testdata(t, "apps", "web-v2"), "")
			if err != nil {
				return err
			}
			if art2.Revision == art.Revision {
				return fmt.Errorf("second revision equals the first: %s", art.Revision)
			}
			if err := c.WaitFluxApplied(gctx, testbed.KustomizationGVR, "flux-system", ns, art2.Revision); err != nil {
				return err
			}
			d, err := c.Kube.AppsV1().Deployments(ns).Get(gctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got := d.Spec.Template.Spec.Containers[0].Image; got != "ghcr.io/example/web:1.1.0" {
				return fmt.Errorf("cluster %s: image after second revision = %s, want ghcr.io/example/web:1.1.0", c.Name, got)
			}
			return waitDeploymentAvailable(gctx, c, ns, "web", 2)
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

func waitDeploymentAvailable(ctx context.Context, c *testbed.Cluster, ns, name string, replicas int32) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == replicas &&
			d.Status.AvailableReplicas == replicas, nil
	})
	if err != nil {
		return fmt.Errorf("cluster %s: Deployment %s/%s not available with %d replicas: %w", c.Name, ns, name, replicas, err)
	}
	return nil
}

// TestControllerStartsAgainOnFreshPorts proves that a controller whose port is taken between
// the bed's choice of it and the controller's bind (any process on the machine may take it) is
// started again on fresh ports, as CI once saw kustomize-controller exit with "address already
// in use". Its first start is given a health address that a listener holds; the second, not.
func TestControllerStartsAgainOnFreshPorts(t *testing.T) {
	b := bed.Get(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var starts int
	// helm-controller, with nothing to reconcile in the smoke bed, runs beside the bed's own
	// until the bed closes; the flag given last wins.
	err = b.Clusters[0].StartControllerWith(ctx, "helm-controller", func() ([]string, error) {
		starts++
		if starts == 1 {
			return []string{"--health-addr=" + taken.Addr().String()}, nil
		}
		return nil, nil
	})
	if err != nil {
		t.Fatalf("controller not started again on fresh ports: %v", err)
	}
	if starts != 2 {
		t.Errorf("controller started %d times, want 2 (once on the taken port, once on fresh ones)", starts)
	}
}
