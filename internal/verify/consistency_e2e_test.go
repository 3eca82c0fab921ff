package verify_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// The consistency of a verdict on real clusters with the real controllers: a Current verdict
// rests on objects read after the Flux status that says applied, and on the whole tree.

// roundCommit is a distinct 40-hex commit for round i of a test, good or bad.
func roundCommit(i int, bad bool) string {
	kind := 0xa
	if bad {
		kind = 0xb
	}
	return fmt.Sprintf("%x%07x%032x", kind, i, i)
}

// TestNoWaitRolloutNeverCurrentOnThePreviousGeneration: a Kustomization without wait (the
// flux bootstrap default) is Ready a few milliseconds after its apply, and each kind has its
// own watch stream: its event may come before the Deployment's, whose cache still holds the
// previous generation, rolled out. Rolling a good image to one that cannot be pulled, 20
// times in a row while the other cluster tests run beside it, the run is never Current: it
// fails with image-pull every time.
func TestNoWaitRolloutNeverCurrentOnThePreviousGeneration(t *testing.T) {
	t.Parallel() // with the other tests of the bed: a loaded machine
	b := bed.Get(t)
	c := b.Clusters[2]
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	cleanUpFlux(t, c, ns)
	const rounds = 20
	var took []time.Duration
	for i := range rounds {
		good, bad := roundCommit(i, false), roundCommit(i, true)
		deployAppAt(ctx, t, c, k, appDir(t, "web"), good)
		req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(ns)}, Revision: mustRevision(t, good), Workloads: true, Timeout: 2 * time.Minute}
		if got := verify.Run(ctx, req).Results[0]; got.Verdict != result.VerdictCurrent {
			t.Fatalf("round %d: the good image: verdict %s (%s), want Current", i, got.Verdict, got.Message)
		}
		// The run watches from before the bad commit, as a workflow step started at the
		// merge does.
		req.Revision = mustRevision(t, bad)
		done := make(chan result.Cluster, 1)
		started := make(chan struct{})
		req.Progress = func(p verify.Progress) {
			if strings.Contains(p.Message, "waiting") || strings.Contains(p.Message, "applied") {
				select {
				case <-started:
				default:
					close(started)
				}
			}
		}
		begin := time.Now()
		go func() { done <- verify.Run(ctx, req).Results[0] }()
		select {
		case <-started:
		case <-time.After(30 * time.Second):
		}
		deployAppAt(ctx, t, c, k, appDir(t, "fail-image-pull"), bad)
		got := <-done
		if got.Verdict != result.VerdictFailed || got.Code != result.CodeImagePull {
			t.Fatalf("round %d: rolled to an image that cannot be pulled: verdict %s %s (%s), want Failed image-pull, never Current", i, got.Verdict, got.Code, got.Message)
		}
		took = append(took, time.Since(begin))
	}
	t.Logf("%d rounds, never Current; verdicts after %v", rounds, took)
}

// TestValuesInASiblingKustomization: a HelmRelease takes its values from a ConfigMap that a
// sibling Kustomization applies. Commit B changes the values: both Kustomizations are Ready
// on B, helm-controller has not composed them yet, and get and verify wait, naming the
// ConfigMap, whatever the order the two are given in; once helm-controller reconciled, both
// say Current, the release on the new values.
func TestValuesInASiblingKustomization(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[1]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	app, config := ns+"-app", ns+"-config"
	cleanUpFlux(t, c, app, config)
	if err := c.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PublishChartVersion(ctx, ns, "web", chartDir(t, "web"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	values := func(replicas int) string {
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "web-values"},
			"data": map[string]any{"values.yaml": fmt.Sprintf("replicas: %d\n", replicas)},
		}}
		return manifestDir(t, cm)
	}
	release := manifestDir(t, testbed.HelmRelease{Name: "web", Interval: "1h", ValuesFrom: []string{"web-values"}}.Manifest())
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: config, TargetNamespace: ns}, values(1), commitA); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: app, TargetNamespace: ns}, release, commitA); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHelmReleased(ctx, ns, "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{config, app} {
		dir := release
		if name == config {
			dir = values(3)
		}
		if _, err := c.PublishGit(ctx, "flux-system", name, dir, commitB); err != nil {
			t.Fatal(err)
		}
		if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", name, "main@sha1:"+commitB); err != nil {
			t.Fatal(err)
		}
	}
	orders := [][]flux.Ref{{ks(app), ks(config)}, {ks(config), ks(app)}}
	for _, order := range orders {
		get := verify.Request{Targets: targetsOf(c), Resources: order, Revision: mustRevision(t, commitB), Workloads: true, Snapshot: true, Timeout: 20 * time.Second}
		if got := verify.Run(ctx, get).Results[0]; got.Verdict == result.VerdictCurrent || !strings.Contains(got.Message, "ConfigMap/web-values") {
			t.Fatalf("get, %v: verdict %s (%s), want waiting for helm-controller to compose ConfigMap/web-values", order, got.Verdict, got.Message)
		}
		wait := get
		wait.Snapshot, wait.Timeout = false, 6*time.Second
		if got := verify.Run(ctx, wait).Results[0]; got.Verdict != result.VerdictTimeout || !strings.Contains(got.Message, "ConfigMap/web-values") {
			t.Fatalf("verify, %v: verdict %s (%s), want Timeout naming ConfigMap/web-values", order, got.Verdict, got.Message)
		}
	}
	requested := time.Now()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":%q}}}`, requested.Format(time.RFC3339Nano))
	if _, err := c.Dynamic.Resource(testbed.HelmReleaseGVR).Namespace(ns).Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, order := range orders {
		req := verify.Request{Targets: targetsOf(c), Resources: order, Revision: mustRevision(t, commitB), Workloads: true, Timeout: 2 * time.Minute}
		if got := verify.Run(ctx, req).Results[0]; got.Verdict != result.VerdictCurrent {
			t.Fatalf("verify, %v, after helm-controller reconciled: verdict %s (%s), want Current", order, got.Verdict, got.Message)
		}
		req.Snapshot = true
		if got := verify.Run(ctx, req).Results[0]; got.Verdict != result.VerdictCurrent {
			t.Fatalf("get, %v, after helm-controller reconciled: verdict %s (%s), want Current", order, got.Verdict, got.Message)
		}
	}
	dep, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if replicasOf(dep) != 3 {
		t.Errorf("Current, but the Deployment runs %d replicas, want the 3 of commit B's values", replicasOf(dep))
	}
	t.Logf("Current %s after the reconcile request", time.Since(requested).Round(time.Millisecond))
}

// TestNestedKustomizationOfAnExternalArtifact: a root Kustomization applies a Kustomization
// whose source is an ExternalArtifact (Flux 2.7's ArtifactGenerator writes them; the bed
// writes it as the generator would, and runs kustomize-controller with the ExternalArtifact
// feature gate). The run is Current on the artifact; when the artifact moves on, it is
// Current only once the nested Kustomization applied the new one (before, it passed on
// whatever the nested object last applied).
func TestNestedKustomizationOfAnExternalArtifact(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	root, nested := ns+"-root", ns+"-gen"
	cleanUpFlux(t, c, root, nested)
	t.Cleanup(func() {
		_ = c.Dynamic.Resource(testbed.ExternalArtifactGVR).Namespace("flux-system").Delete(context.Background(), nested, metav1.DeleteOptions{})
	})
	if err := c.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	revOf := func(digit string) string { return "latest@sha256:" + strings.Repeat(digit, 64) }
	if _, err := c.PublishExternalArtifact(ctx, "flux-system", nested, appDir(t, "web"), revOf("1")); err != nil {
		t.Fatal(err)
	}
	gen := testbed.Kustomization{Name: nested, SourceKind: "ExternalArtifact", TargetNamespace: ns}
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: root, TargetNamespace: "flux-system"}, manifestDir(t, gen.Manifest()), commitA); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", nested, revOf("1")); err != nil {
		t.Fatal(err)
	}
	req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(root)}, Revision: mustRevision(t, commitA), Workloads: true, Timeout: 2 * time.Minute}
	if got := verify.Run(ctx, req).Results[0]; got.Verdict != result.VerdictCurrent {
		t.Fatalf("nested Kustomization on its artifact: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	// The generator writes a new artifact; the run starts at once, while kustomize-controller
	// applies it: Current only once the nested Kustomization applied the new artifact.
	published := time.Now()
	if _, err := c.PublishExternalArtifact(ctx, "flux-system", nested, appDir(t, "web-v2"), revOf("2")); err != nil {
		t.Fatal(err)
	}
	got := verify.Run(ctx, req).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("nested Kustomization with a new artifact: verdict %s (%s), want Current once applied", got.Verdict, got.Message)
	}
	for _, f := range got.Flux {
		if f.Name == nested && f.LastAppliedRevision != revOf("2") {
			t.Errorf("Current with %s at %q, want the artifact's %s", nested, f.LastAppliedRevision, revOf("2"))
		}
	}
	t.Logf("Current %s after the new artifact was written", time.Since(published).Round(time.Millisecond))
}
