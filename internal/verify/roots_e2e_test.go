package verify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// TestEveryRequestedResourceIsARoot (issue 18), with the real kustomize-controller: a root
// Kustomization applies a nested one of another source (its own GitRepository). Both are
// requested, with the root's new commit as the revision. While the nested one still applies
// the previous commit the run is never Current, whichever of the two is named first (as a
// nested object alone, "Ready at whatever it last applied" would have passed it); once the
// nested source has the commit too, the run is Current within seconds.
func TestEveryRequestedResourceIsARoot(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	root, nested := ns+"-root", ns+"-infra"
	// The nested Kustomization applies the web app from its own GitRepository, at commit A.
	infra := testbed.Kustomization{Name: nested, TargetNamespace: ns}
	if _, err := c.PublishGit(ctx, "flux-system", nested, testbed.Testdata(t, "apps", "web"), commitA); err != nil {
		t.Fatal(err)
	}
	// The root's manifests hold the nested Kustomization; the root is at commit B.
	dir := manifestDir(t, infra.Manifest())
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: root, TargetNamespace: "flux-system"}, dir, commitB); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", root, "main@sha1:"+commitB); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", nested, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}
	for name, order := range map[string][]flux.Ref{"root first": {ks(root), ks(nested)}, "nested first": {ks(nested), ks(root)}} {
		got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: order, Revision: mustRevision(t, commitB),
			Timeout: 5 * time.Second, Workloads: true}).Results[0]
		if got.Verdict != result.VerdictTimeout || !strings.Contains(got.Message, nested) {
			t.Errorf("%s, the nested source still at commit A: verdict %s (%s), want Timeout waiting for %s", name, got.Verdict, got.Message, nested)
		}
		for _, f := range got.Flux {
			if f.Name == nested && f.Owner != "" {
				t.Errorf("%s: %s judged as nested in %s, want it a root", name, nested, f.Owner)
			}
		}
	}
	// The nested source gets the commit: both apply it, and the run is Current.
	published := time.Now()
	if _, err := c.PublishGit(ctx, "flux-system", nested, testbed.Testdata(t, "apps", "web"), commitB); err != nil {
		t.Fatal(err)
	}
	got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(root), ks(nested)}, Revision: mustRevision(t, commitB),
		Timeout: time.Minute, Workloads: true}).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("after the nested source got commit B: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	t.Logf("Current %s after the nested source was published", time.Since(published).Round(time.Millisecond))
}
