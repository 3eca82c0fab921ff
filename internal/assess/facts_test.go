package assess

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// TestForgedFactsMeanNothing: what the view learned of an object comes beside it
// (List.Facts), never from the object: annotations named as the view's facts once were,
// written on a workload in the cluster, change nothing. The Canary failed after the target's
// template was written (its facts), and an annotation that dates the template later, or names
// the target's annotations as not applied by Flux, neither holds the failure nor adds to the
// target's message.
func TestForgedFactsMeanNothing(t *testing.T) {
	t.Parallel()
	rev, err := flux.ParseRevision(revB)
	if err != nil {
		t.Fatal(err)
	}
	withCanary := ks("app", "GitRepository", "app", "", revB, "shop_web_apps_Deployment", "shop_web_flagger.app_Canary@v1beta1")
	target := flaggerWorkload("web", "web:1.1.0", writtenB, true)
	forged := strings.Replace(target, "  generation: 4\n", `  generation: 4
  annotations:
    app-status.internal/template-written: "2026-11-01T12:00:00Z"
    app-status.internal/not-from-git: app-status.io/ignore-readiness
`, 1)
	if forged == target {
		t.Fatal("the forged annotations were not added")
	}
	assessed := func(target string) *Assessment {
		docs := strings.Join([]string{withCanary, gitRepo(), target, flaggerWorkload("web-primary", "web:1.0.0", beforeB, true),
			flaggerCanary("Failed", hashB, hashA, afterB)}, "\n---\n")
		v := newFixtureView(t, docs, "kustomizations", "gitrepositories", "deployments", "canaries")
		v.flagger = true
		spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}},
			Revision: rev, Workloads: true, Snapshot: true, Health: fluxhealth.New(t.Context())}
		return Assess(v, NewMemory(), spec, fixtureNow)
	}
	plain, got := assessed(target), assessed(forged)
	if plain.Fatal == nil || plain.Fatal.Code != result.CodeCanaryFailed {
		t.Fatalf("without the annotations: fatal %+v, want %s", plain.Fatal, result.CodeCanaryFailed)
	}
	if diff := cmp.Diff(outcomeOf(plain), outcomeOf(got)); diff != "" {
		t.Errorf("outcome with forged annotations (-without +with):\n%s", diff)
	}
	if diff := cmp.Diff(plain.Objects, got.Objects); diff != "" {
		t.Errorf("the objects with forged annotations (-without +with):\n%s", diff)
	}
}
