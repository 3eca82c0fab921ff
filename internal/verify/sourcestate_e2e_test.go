package verify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// Sources as source-controller leaves them when a fetch fails or it stalls (the bed writes
// their status), with the real kustomize-controller: the verdict comes within seconds of
// Flux's own answer.

// verdictWithin is how soon after Flux's answer the run must give its verdict.
const verdictWithin = 15 * time.Second

// TestBootstrapSourceFetchFails: the flux bootstrap layout, a root Kustomization that lists
// its own GitRepository (and itself). The root applied commit B; then the Git host goes down
// and source-controller's next fetch fails: the GitRepository keeps serving B with
// Reconciling=True (ProgressingWithRetry) and Ready=False. The run is Current at once, the
// GitRepository noting that its last fetch failed (it waited to its timeout, kstatus reading
// the source as in progress).
// With the current and the previous minor of kustomize-controller.
func TestBootstrapSourceFetchFails(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "kustomize-controller", testBootstrapSourceFetchFails)
}

func testBootstrapSourceFetchFails(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	name := c.Namespace(t) + "-fs"
	cleanUpFlux(t, c, name)
	k := testbed.Kustomization{Name: name, TargetNamespace: "flux-system"}
	// The GitRepository as PublishGit makes it, so that applying it changes nothing.
	repo := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"url": "https://git.test/" + name, "interval": "60m", "ref": map[string]any{"branch": "main"}},
	}}
	settings := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name + "-settings"},
		"data": map[string]any{"cluster": c.Name},
	}}
	deployAppAt(ctx, t, c, k, manifestDir(t, repo, k.Manifest(), settings), commitB)
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", name, "main@sha1:"+commitB); err != nil {
		t.Fatal(err)
	}
	const down = "failed to checkout and determine revision: unable to clone 'https://git.test/': dial tcp: lookup git.test: i/o timeout"
	if err := c.FailFetch(ctx, testbed.GitRepositoryGVR, "flux-system", name, "GitOperationFailed", down); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, commitB),
		Timeout: time.Minute, Workloads: true}).Results[0]
	took := time.Since(start)
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("bootstrap layout, its GitRepository failing to fetch again: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	found := false
	for _, o := range got.Objects {
		if o.Kind == "GitRepository" && o.Name == name {
			found = true
			if o.Status != result.ObjectCurrent || !strings.Contains(o.Message, "last fetch failed") || !strings.Contains(o.Message, "i/o timeout") {
				t.Errorf("GitRepository %s: %s (%s), want Current, noting its failed fetch", o.ID, o.Status, o.Message)
			}
		}
	}
	if !found {
		t.Errorf("the GitRepository the root lists is not among its objects: %+v", got.Objects)
	}
	if took > verdictWithin {
		t.Errorf("Current after %s, want within %s", took, verdictWithin)
	}
	t.Logf("Current %s after the start, the GitRepository failing to fetch", took.Round(time.Millisecond))
}

// TestDependencyChainStalled: apps waits (dependsOn) for infra-configs, which waits for
// infra-controllers, which kustomize-controller stalled on (a CEL health check that does not
// parse). Flux says DependencyNotReady on both dependents for ever; the run fails once
// infra-controllers is stalled, with flux-dependency-failed naming the chain down to it (it
// followed one level and waited to its timeout).
// With the current and the previous minor of kustomize-controller.
func TestDependencyChainStalled(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "kustomize-controller", testDependencyChainStalled)
}

func testDependencyChainStalled(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[1]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	apps, configs, controllers := ns+"-apps", ns+"-infra-configs", ns+"-infra-controllers"
	cleanUpFlux(t, c, apps, configs, controllers)
	broken := []map[string]any{{"apiVersion": "apps/v1", "kind": "Deployment", "current": "status.conditions.filter(e, e.type == 'Available'"}}
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: controllers, TargetNamespace: ns, HealthCheckExprs: broken}, appDir(t, "web"), commitA)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: configs, TargetNamespace: ns, DependsOn: []string{controllers}}, appDir(t, "web"), commitA)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: apps, TargetNamespace: ns, DependsOn: []string{configs}}, appDir(t, "web-v2"), commitB)
	// Flux's own answer: infra-controllers stalled.
	var stalledAt time.Time
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		obj, err := c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system").Get(ctx, controllers, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, x := range conds {
			if m, _ := x.(map[string]any); m["type"] == "Stalled" && m["status"] == "True" {
				stalledAt = time.Now()
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("kustomize-controller did not stall %s: %v", controllers, err)
	}
	got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(apps)}, Revision: mustRevision(t, commitB),
		Timeout: 2 * time.Minute, Workloads: true}).Results[0]
	took := time.Since(stalledAt)
	if got.Verdict != result.VerdictFailed || got.Code != result.CodeFluxDependencyFailed ||
		!strings.Contains(got.Message, "Kustomization/flux-system/"+configs+" (dependsOn), which waits for Kustomization/flux-system/"+controllers) {
		t.Fatalf("three-level dependsOn, the last stalled: verdict %s, code %s (%s), want Failed flux-dependency-failed naming %s through %s",
			got.Verdict, got.Code, got.Message, controllers, configs)
	}
	if took > verdictWithin {
		t.Errorf("flux-dependency-failed %s after kustomize-controller stalled %s, want within %s", took, controllers, verdictWithin)
	}
	t.Logf("flux-dependency-failed %s after the stall: %s", took.Round(time.Millisecond), got.Message)
}

// TestRootSourceStalled: the requested Kustomization applied commit A; then its GitRepository
// is switched to the github provider without the secret it needs, and source-controller
// stalls on it, still serving A. Commit B will not be fetched: the run fails at once with flux-artifact-failed
// naming the GitRepository and why (it waited to its timeout, "applied A, waiting for B").
// With the current and the previous minor of kustomize-controller.
func TestRootSourceStalled(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "kustomize-controller", testRootSourceStalled)
}

func testRootSourceStalled(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[len(b.Clusters)-1]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	cleanUpFlux(t, c, ns)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: ns, TargetNamespace: ns}, appDir(t, "web"), commitA)
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}
	repos := c.Dynamic.Resource(testbed.GitRepositoryGVR).Namespace("flux-system")
	repo, err := repos.Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The team switches it to GitHub App authentication and forgets its secret.
	if err := unstructured.SetNestedField(repo.Object, "github", "spec", "provider"); err != nil {
		t.Fatal(err)
	}
	if _, err := repos.Update(ctx, repo, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// As source-controller v1.9.3 says it (gitrepository_controller.go, a serror.Stalling).
	const message = "secretRef with github app data must be specified when provider is set to github"
	if err := c.StallSource(ctx, testbed.GitRepositoryGVR, "flux-system", ns, "InvalidProviderConfiguration", message); err != nil {
		t.Fatal(err)
	}
	stalledAt := time.Now()
	got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(ns)}, Revision: mustRevision(t, commitB),
		Timeout: 2 * time.Minute, Workloads: true}).Results[0]
	took := time.Since(stalledAt)
	if got.Verdict != result.VerdictFailed || got.Code != result.CodeFluxArtifactFailed ||
		!strings.Contains(got.Message, "GitRepository/flux-system/"+ns+" stalled") || !strings.Contains(got.Message, "secretRef with github app data") {
		t.Fatalf("root source stalled: verdict %s, code %s (%s), want Failed flux-artifact-failed naming GitRepository/flux-system/%s and why",
			got.Verdict, got.Code, got.Message, ns)
	}
	if took > verdictWithin {
		t.Errorf("flux-artifact-failed %s after the source stalled, want within %s", took, verdictWithin)
	}
	t.Logf("flux-artifact-failed %s after the stall: %s", took.Round(time.Millisecond), got.Message)
}
