package verify_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// applyNamespaced applies deploy/rbac/app-status-namespaced.yaml for the app namespace appNS,
// as its comment says (my-app replaced), with every name of its own (suffix) so that no
// other test's binding of app-status grants the account more. It returns the
// ServiceAccount's name.
func applyNamespaced(ctx context.Context, t *testing.T, c *testbed.Cluster, appNS, suffix string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(testbed.Testdata(t)), "deploy", "rbac", "app-status-namespaced.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testbed.DecodeManifests(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		o.SetName(o.GetName() + suffix)
		if o.GetNamespace() == "my-app" {
			o.SetNamespace(appNS)
		}
		if ref, ok := o.Object["roleRef"].(map[string]any); ok {
			ref["name"] = ref["name"].(string) + suffix
		}
		if subjects, ok := o.Object["subjects"].([]any); ok {
			for _, s := range subjects {
				s.(map[string]any)["name"] = s.(map[string]any)["name"].(string) + suffix
			}
		}
		if err := c.ApplyObject(ctx, o.GetNamespace(), o); err != nil {
			t.Fatal(err)
		}
	}
	return "app-status" + suffix
}

// TestNamespacedRole: with only the Roles of deploy/rbac/app-status-namespaced.yaml (one in
// flux-system, one in the app's namespace) a run verifies an app in that namespace, Current;
// the same account's run of an app in another namespace is not Current (Forbidden): the
// file grants that one namespace only.
func TestNamespacedRole(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	name := ns + "-ns"
	other := ns + "-other"
	cleanUpFlux(t, c, name, other)
	for _, app := range []struct{ name, ns string }{{name, ns}, {other, other}} {
		if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: app.name, TargetNamespace: app.ns}, appDir(t, "web"), commitA); err != nil {
			t.Fatal(err)
		}
	}
	for _, app := range []string{name, other} {
		if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", app, "main@sha1:"+commitA); err != nil {
			t.Fatal(err)
		}
	}
	account := applyNamespaced(ctx, t, c, ns, "-"+ns)
	target, _ := saTarget(ctx, t, c, account)
	req := verify.Request{Targets: []verify.Target{target}, Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, commitA),
		Timeout: time.Minute, Workloads: true}
	got := verify.Run(ctx, req).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Errorf("the app in %s with the namespaced Roles: verdict %s (%s: %s), want Current", ns, got.Verdict, got.Reason, got.Message)
	}
	if len(got.Objects) == 0 {
		t.Errorf("the app in %s: no objects verified, want its inventory", ns)
	}
	req.Resources, req.Timeout = []flux.Ref{ks(other)}, 20*time.Second
	got = verify.Run(ctx, req).Results[0]
	if got.Verdict == result.VerdictCurrent {
		t.Errorf("the app in %s, outside the Roles: Current, want it refused (the Roles grant %s only)", other, ns)
	}
	t.Logf("the app in another namespace: %s (%s)", got.Verdict, got.Message)
}
