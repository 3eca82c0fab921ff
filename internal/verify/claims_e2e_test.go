package verify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// TestClaimBoundOnFirstUse: an app's PersistentVolumeClaim whose StorageClass binds it only
// once a pod that uses it is scheduled, with no such pod (a claim for a CronJob), stays
// Pending on the real API servers. The run is Current at once on every cluster, naming the
// claim not verified, where it used to wait for it to the timeout.
func TestClaimBoundOnFirstUse(t *testing.T) {
	b := realBed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const name, class = "claimwffc", "app-status-wffc"
	storageClass := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": map[string]any{"name": class},
		"provisioner": "example.com/none", "volumeBindingMode": "WaitForFirstConsumer"}}
	claim := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "data"},
		"spec": map[string]any{"storageClassName": class, "accessModes": []any{"ReadWriteOnce"},
			"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}}}
	commit, err := b.Git.Commit(ctx, name, map[string]string{"apps/claim": manifestDir(t, claim)}, "a claim for a CronJob")
	if err != nil {
		t.Fatal(err)
	}
	var targets []verify.Target
	for _, c := range b.Clusters {
		ns := c.Namespace(t)
		if err := c.EnsureNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		for _, obj := range []*unstructured.Unstructured{storageClass.DeepCopy(), b.Git.GitRepository(name, name, "10m"),
			testbed.Kustomization{Name: name, Path: "./apps/claim", TargetNamespace: ns}.Manifest()} {
			if err := c.ApplyObject(ctx, "flux-system", obj); err != nil {
				t.Fatal(err)
			}
		}
		targets = append(targets, verify.Target{Name: c.Name, Config: c.Config})
	}
	req := verify.Request{Targets: targets, Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, commit), Timeout: time.Minute, Workloads: true}
	start := time.Now()
	run := verify.Run(ctx, req)
	if run.Status != result.RunSuccess {
		t.Fatalf("a claim bound on first use: %s, want success: %+v", run.Status, run.Results)
	}
	for _, c := range run.Results {
		found := false
		for _, o := range c.Objects {
			if o.Kind == "PersistentVolumeClaim" {
				found = true
				if o.Status != result.ObjectInProgress || !strings.Contains(o.Message, "not verified: its StorageClass "+class+" binds it when a pod that uses it is scheduled") {
					t.Errorf("%s: claim %s %q, want InProgress and not verified for its class", c.Name, o.Status, o.Message)
				}
			}
		}
		if !found {
			t.Errorf("%s: the claim is not among the objects %+v", c.Name, c.Objects)
		}
		if !strings.Contains(c.Message, "1 not verified (claims bound when a pod that uses them is scheduled)") {
			t.Errorf("%s: message %q does not count the claim", c.Name, c.Message)
		}
	}
	t.Logf("a claim bound on first use: Current on %d clusters in %s", len(run.Results), time.Since(start).Round(time.Millisecond))
}
