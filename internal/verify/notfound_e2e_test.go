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

// A missing Flux object is an answer, not a wait: with the real kustomize-controller, a typo
// is NotFound once the not-found grace passed, naming the right name; an app's first
// deployment, whose Kustomization a parent creates after the merge, is Current, never
// NotFound, however long the parent takes.

// TestTypoNotFoundWithinGrace: the app is deployed; the run asks for a name one letter off.
// It is NotFound soon after the grace, long before the timeout, naming the app's name as a
// close name and the namespace where a (suspended) Kustomization of the typo's name exists.
func TestTypoNotFoundWithinGrace(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	typo := ns + "x"
	cleanUpFlux(t, c, ns)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: ns, TargetNamespace: ns}, appDir(t, "web"), commitA)
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}
	// A Kustomization of the typo's name in the app's namespace, suspended: it creates
	// nothing, and the message names its namespace.
	namesake := testbed.Kustomization{Name: typo, TargetNamespace: ns, Suspend: true}.Manifest()
	namesake.SetNamespace(ns)
	if err := c.ApplyObject(ctx, ns, namesake); err != nil {
		t.Fatal(err)
	}
	const grace, timeout = 5 * time.Second, 2 * time.Minute
	start := time.Now()
	got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(typo)}, Revision: mustRevision(t, commitA),
		Timeout: timeout, Workloads: true, NotFoundGrace: grace}).Results[0]
	took := time.Since(start)
	if got.Verdict != result.VerdictNotFound {
		t.Fatalf("typo %s: verdict %s (%s), want NotFound", typo, got.Verdict, got.Message)
	}
	for _, want := range []string{"Kustomization/flux-system/" + typo + " not found", "close names in flux-system: " + ns,
		"Kustomization " + typo + " exists in namespace " + ns} {
		if !strings.Contains(got.Message, want) {
			t.Errorf("message %q, want it to contain %q", got.Message, want)
		}
	}
	if took < grace || took > grace+30*time.Second {
		t.Errorf("NotFound after %s, want it after the grace (%s), long before the timeout (%s)", took, grace, timeout)
	}
	t.Logf("typo NotFound after %s (grace %s, timeout %s): %s", took.Round(time.Millisecond), grace, timeout, got.Message)
}

// TestMissingSourceNotFound: a Kustomization whose source does not exist, then one whose
// dependsOn target does not, with the real kustomize-controller, which retries both for ever
// in the API server's bare words: the run is NotFound soon after the grace, naming the missing
// object and what needs it, long before the timeout. (The app applied first offers the
// expected revision; a Kustomization waiting for its dependencies may still create anything,
// so the one of the second case is made after the first case's verdict.) A Kustomization of
// the cluster left failing on a namespace nobody creates, which kustomize-controller retries
// for ever too, holds up neither verdict: its next attempt would fail alike.
func TestMissingSourceNotFound(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	orphan, dependent, lost := ns+"-orphan", ns+"-dependent", ns+"-lost"
	cleanUpFlux(t, c, ns, orphan, dependent, lost)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: ns, TargetNamespace: ns}, appDir(t, "web"), commitA)
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}
	// lost applies the app into a namespace that does not exist.
	if err := c.ApplyObject(ctx, "flux-system", testbed.Kustomization{Name: lost, TargetNamespace: ns + "-gone", Source: ns}.Manifest()); err != nil {
		t.Fatal(err)
	}
	waitKustomization(ctx, t, c, lost, "Ready=False ReconciliationFailed", readyFalse("ReconciliationFailed"))
	const grace, timeout = 5 * time.Second, 2 * time.Minute
	check := func(name, want string) {
		t.Helper()
		start := time.Now()
		got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, commitA),
			Timeout: timeout, Workloads: true, NotFoundGrace: grace}).Results[0]
		took := time.Since(start)
		if got.Verdict != result.VerdictNotFound || !strings.Contains(got.Message, want) {
			t.Errorf("%s: verdict %s (%s), want NotFound saying %q", name, got.Verdict, got.Message, want)
		}
		if took < grace || took > grace+30*time.Second {
			t.Errorf("%s: verdict after %s, want it after the grace (%s), long before the timeout (%s)", name, took, grace, timeout)
		}
		t.Logf("%s: %s after %s (grace %s): %s", name, got.Verdict, took.Round(time.Millisecond), grace, got.Message)
	}
	// orphan's source, ns-orphan-src, was never created.
	if err := c.ApplyObject(ctx, "flux-system", testbed.Kustomization{Name: orphan, TargetNamespace: ns, Source: orphan + "-src"}.Manifest()); err != nil {
		t.Fatal(err)
	}
	waitKustomization(ctx, t, c, orphan, "Ready=False ArtifactFailed", readyFalse("ArtifactFailed"))
	check(orphan, "GitRepository/flux-system/"+orphan+"-src not found (the source of Kustomization/flux-system/"+orphan+")")
	// dependent applies from the app's source and waits for ns-infra, never created.
	if err := c.ApplyObject(ctx, "flux-system", testbed.Kustomization{Name: dependent, TargetNamespace: ns, Source: ns, DependsOn: []string{ns + "-infra"}}.Manifest()); err != nil {
		t.Fatal(err)
	}
	waitKustomization(ctx, t, c, dependent, "Ready=False DependencyNotReady", readyFalse("DependencyNotReady"))
	check(dependent, "Kustomization/flux-system/"+ns+"-infra not found (a dependency, dependsOn, of Kustomization/flux-system/"+dependent+")")
}

// TestFirstDeploymentNeverNotFound: the app's Kustomization does not exist when the run
// starts; the merge adds its manifest to the folder a parent Kustomization applies, and the
// parent waits for a dependency (infra, whose build fails until it is fixed) for several
// times the not-found grace before it applies it. The run waits, naming the parent, and is
// Current once the app is applied: never NotFound.
func TestFirstDeploymentNeverNotFound(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[1]
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	app, root, infra := ns, ns+"-root", ns+"-infra"
	cleanUpFlux(t, c, app, root, infra)
	// The app's own source holds the revision to verify; its Kustomization comes later.
	if _, err := c.PublishGit(ctx, "flux-system", app, appDir(t, "web"), commitB); err != nil {
		t.Fatal(err)
	}
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: infra, TargetNamespace: ns}, appDir(t, "web"), commitA)
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", infra, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}
	placeholder := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": root + "-placeholder"}, "data": map[string]any{"k": "v"}}}
	parent := testbed.Kustomization{Name: root, TargetNamespace: "flux-system", DependsOn: []string{infra}}
	deployAppAt(ctx, t, c, parent, manifestDir(t, placeholder), commitA)
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", root, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}
	// infra breaks: the parent's next reconcile waits for it (DependencyNotReady).
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: infra, TargetNamespace: ns}, appDir(t, "fail-build"), commitB)
	waitKustomization(ctx, t, c, infra, "Ready=False BuildFailed", readyFalse("BuildFailed"))

	const grace = 2 * time.Second
	var progress progressLog
	done := startRun(ctx, verify.Request{
		Targets: targetsOf(c), Resources: []flux.Ref{ks(app)}, Revision: mustRevision(t, commitB),
		Timeout: 3 * time.Minute, Workloads: true, NotFoundGrace: grace, Progress: progress.record,
	})
	// The merge: the parent's source now holds the app's Kustomization.
	merged := time.Now()
	if _, err := c.PublishGit(ctx, "flux-system", root, manifestDir(t, placeholder, testbed.Kustomization{Name: app, TargetNamespace: ns}.Manifest()), commitB); err != nil {
		t.Fatal(err)
	}
	waitKustomization(ctx, t, c, root, "Ready=False DependencyNotReady", readyFalse("DependencyNotReady"))
	// Five times the grace with the parent waiting: the run must wait too.
	select {
	case run := <-done:
		got := run.Results[0]
		t.Fatalf("verdict %s (%s) while the parent waited for its dependency; want the run to wait\nprogress: %q", got.Verdict, got.Message, progress.messages())
	case <-time.After(5 * grace):
	}
	// infra is fixed: the parent applies the app's Kustomization, which applies the app.
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: infra, TargetNamespace: ns}, appDir(t, "web"), commitC)
	got := (<-done).Results[0]
	took := time.Since(merged)
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("first deployment: verdict %s (%s), want Current\nprogress: %q", got.Verdict, got.Message, progress.messages())
	}
	waited := false
	for _, m := range progress.messages() {
		if strings.Contains(m, "Flux may still create it: ") && strings.Contains(m, "Kustomization/flux-system/"+root+" ") {
			waited = true
		}
	}
	if !waited {
		t.Errorf("progress never named the parent %s as creating the app: %q", root, progress.messages())
	}
	t.Logf("first deployment Current %s after the merge (grace %s)", took.Round(time.Millisecond), grace)
}

// waitKustomization waits until the Kustomization flux-system/name satisfies match.
func waitKustomization(ctx context.Context, t *testing.T, c *testbed.Cluster, name, what string, match func(u *unstructured.Unstructured) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		obj, err := c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return match(obj), nil
	})
	if err != nil {
		t.Fatalf("cluster %s: Kustomization flux-system/%s never %s: %v", c.Name, name, what, err)
	}
}
