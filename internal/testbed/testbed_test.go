package testbed_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/org/app-status-action/internal/testbed"
)

var bed = testbed.NewShared(testbed.Options{Clusters: 3, Flux: true, Prefix: "smoke"})

func TestMain(m *testing.M) {
	code := m.Run()
	bed.Close()
	os.Exit(code)
}

var kustomizationGVR = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}

// appDir returns a folder of testdata/apps.
func appDir(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "apps", name))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// kustomization returns a Kustomization that applies the GitRepository of the same name into
// targetNamespace.
func kustomization(ns, name, targetNamespace string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  interval: 10m
  path: ./
  prune: true
  targetNamespace: %[3]s
  sourceRef:
    kind: GitRepository
    name: %[2]s
`, ns, name, targetNamespace))
}

// waitApplied waits until the Kustomization is Ready on the given revision and returns it.
func waitApplied(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, name, revision string) *unstructured.Unstructured {
	t.Helper()
	var last *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		obj, err := c.Dynamic.Resource(kustomizationGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = obj
		applied, _, _ := unstructured.NestedString(obj.Object, "status", "lastAppliedRevision")
		return applied == revision && conditionTrue(obj, "Ready"), nil
	})
	if err != nil {
		t.Fatalf("cluster %s: Kustomization %s/%s did not apply %s: %v\nstatus: %v\nkustomize-controller log:\n%s",
			c.Name, ns, name, revision, err, last, c.ControllerLog("kustomize-controller"))
	}
	return last
}

func conditionTrue(obj *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
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
			art, err := c.PublishGit(gctx, "flux-system", ns, appDir(t, "web"), "")
			if err != nil {
				return err
			}
			if err := c.Apply(gctx, "flux-system", kustomization("flux-system", ns, ns)); err != nil {
				return err
			}
			ks := waitApplied(gctx, t, c, "flux-system", ns, art.Revision)
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

			art2, err := c.PublishGit(gctx, "flux-system", ns, appDir(t, "web-v2"), "")
			if err != nil {
				return err
			}
			if art2.Revision == art.Revision {
				return fmt.Errorf("second revision equals the first: %s", art.Revision)
			}
			waitApplied(gctx, t, c, "flux-system", ns, art2.Revision)
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
