package verify_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// TestPreflightFluxControllers: on a bed whose Flux controllers are Deployments of flux-system
// as Flux installs them (downBed), the preflight before a run waits says nothing on a healthy
// installation; warns, verdict unchanged, when a controller the app does not need
// (helm-controller, for a Kustomization) is scaled to zero; and fails the run at once with
// flux-unhealthy, naming kustomize-controller, when that one is: with the Kustomization there
// and never reconciled, and before it even exists. The cases stop controllers, so they run
// one after the other, each starting again what it stopped.
func TestPreflightFluxControllers(t *testing.T) {
	t.Parallel()
	b := downBed.Get(t)
	c := b.Clusters[0]
	for _, name := range []string{"kustomize-controller", "helm-controller", "source-controller"} {
		d, err := c.Kube.AppsV1().Deployments("flux-system").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Spec.Selector.MatchLabels["app"] != name || d.Labels["app.kubernetes.io/part-of"] != "flux" || d.Status.AvailableReplicas != 1 {
			t.Fatalf("Deployment flux-system/%s: selector %v, labels %v, %d available; want app=%s, part of flux, 1 available",
				name, d.Spec.Selector.MatchLabels, d.Labels, d.Status.AvailableReplicas, name)
		}
	}
	// run verifies a Kustomization of the web app that exists, the run started, before its
	// source is published: the run waits, so the preflight runs, with the tree known.
	run := func(t *testing.T) result.Cluster {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		ns := c.Namespace(t)
		k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
		cleanUpFlux(t, c, ns)
		if err := c.ApplyObject(ctx, "flux-system", k.Manifest()); err != nil {
			t.Fatal(err)
		}
		done := startRun(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(ns)}, Revision: mustRevision(t, commitA),
			Timeout: 90 * time.Second, Workloads: true})
		time.Sleep(time.Second)
		if _, err := c.PublishGit(ctx, "flux-system", ns, appDir(t, "web"), commitA); err != nil {
			t.Fatal(err)
		}
		return (<-done).Results[0]
	}
	// stop stops the controller and returns what starts it again.
	stop := func(t *testing.T, name string) (startAgain func()) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.StopController(ctx, name); err != nil {
			t.Fatal(err)
		}
		if c.ControllerRunning(name) {
			t.Fatalf("%s still runs after StopController", name)
		}
		return func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := c.StartController(ctx, name); err != nil {
				t.Errorf("start %s again: %v", name, err)
			}
		}
	}
	// The cases share the bed's controllers, so they run in turn (not as subtests, which
	// would run in parallel with the other tests' or not at all).
	step := func(name string, test func()) {
		t.Logf("case: %s", name)
		test()
	}

	step("healthy", func() {
		got := run(t)
		if got.Verdict != result.VerdictCurrent || got.Preflight != nil {
			t.Errorf("verdict %s (%s), preflight %+v; want Current and nothing from the preflight", got.Verdict, got.Message, got.Preflight)
		}
	})
	step("a controller the app does not need stopped", func() {
		defer stop(t, "helm-controller")()
		got := run(t)
		if got.Verdict != result.VerdictCurrent {
			t.Errorf("verdict %s (%s): %s; want Current, helm-controller being no part of it", got.Verdict, got.Code, got.Message)
		}
		if p := got.Preflight; p == nil || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "helm-controller") || !strings.Contains(p.Warnings[0], "scaled to zero") {
			t.Errorf("preflight %+v; want one warning naming helm-controller, scaled to zero", got.Preflight)
		}
	})
	step("kustomize-controller stopped", func() {
		defer stop(t, "kustomize-controller")()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		ns := c.Namespace(t)
		cleanUpFlux(t, c, ns)
		absent := ns + "-absent"
		if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, appDir(t, "web"), commitA); err != nil {
			t.Fatal(err)
		}
		const timeout = time.Minute
		for _, name := range []string{ns, absent} {
			start := time.Now()
			got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, commitA),
				Timeout: timeout, Workloads: true}).Results[0]
			took := time.Since(start)
			if got.Verdict != result.VerdictFailed || got.Code != result.CodeFluxUnhealthy || !strings.Contains(got.Message, "kustomize-controller") {
				t.Errorf("Kustomization %s: verdict %s (%s): %s; want Failed (flux-unhealthy) naming kustomize-controller", name, got.Verdict, got.Code, got.Message)
			}
			t.Logf("Kustomization %s: %s (%s) in %s: %s", name, got.Verdict, got.Code, took.Round(time.Millisecond), got.Message)
			if took > 10*time.Second {
				t.Errorf("Kustomization %s: the verdict took %s with a %s timeout: want it at once", name, took, timeout)
			}
		}
		// Nothing reconciled it: the verdict is the installation's, not the app's.
		obj, err := c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system").Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(conditionTypes(obj.Object), "Ready") {
			t.Errorf("Kustomization %s has a Ready condition: kustomize-controller was not stopped", ns)
		}
	})
}

// conditionTypes returns the types of an object's status.conditions.
func conditionTypes(obj map[string]any) []string {
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	var types []string
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			if s, ok := m["type"].(string); ok {
				types = append(types, s)
			}
		}
	}
	return types
}
