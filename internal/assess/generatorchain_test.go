package assess

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// TestStalledGeneratorChainListRetried: the list of an applier's kind up the chain that
// failed in a way a retry may mend (500, 503) before its first answer holds the root, as any
// list being retried does; the chain does not end on it.
func TestStalledGeneratorChainListRetried(t *testing.T) {
	t.Parallel()
	const commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	revOfA := "main@sha1:" + commitA
	stalled := []string{`{type: Ready, status: "False", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`,
		`{type: Stalled, status: "True", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`}
	generator := ownedBy(artifactGenerator("gen", "flux-system", digestOf(revOfA), stalled...), "kustomize.toolkit.fluxcd.io", "flux-system", "apps")
	apps := ownedBy(ks("apps", "GitRepository", "app", "", revB), "helm.toolkit.fluxcd.io", "flux-system", "platform")
	docs := []string{ks("app", "ExternalArtifact", "gen", "", revOfA), gitRepoStored(revB), externalArtifact("gen", "flux-system", revOfA), generator, apps}
	rev, err := flux.ParseRevision(revB)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"500", apierrors.NewInternalError(errors.New("etcd leader changed"))},
		{"503", apierrors.NewServiceUnavailable("apiserver restarting")},
	} {
		for _, mode := range []string{"verify"} {
			view := newFixtureView(t, strings.Join(docs, "\n---\n"), fixtureReads...)
			view.failList(flux.KindHelmRelease.GroupVersionResource().GroupResource(), tc.err)
			spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}}, Revision: rev, Workloads: true,
				Snapshot: mode == "get", Health: fluxhealth.New(t.Context())}
			e := Assess(view, NewMemory(), spec, fixtureNow)
			got := outcomeOf(e)
			if diff := cmp.Diff(result.VerdictInProgress, got.Verdict); diff != "" {
				t.Errorf("%s %s: verdict (-want +got):\n%s\npending %+v\nfatal %+v", tc.name, mode, diff, e.Pending, e.Fatal)
			}
		}
	}
}

// TestFluxListNotServed: the root Kustomization's own list answered 404 says the cluster does
// not serve it ("is Flux installed?"); a nested Flux kind's list answered 404 (a HelmRelease in
// the root's inventory) is waited on as a kind the cluster may start serving.
func TestFluxListNotServed(t *testing.T) {
	t.Parallel()
	rev, _ := flux.ParseRevision(revB)
	root := ks("app", "GitRepository", "app", "", revB, "shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2")
	for _, tc := range []struct {
		name   string
		kind   flux.Kind
		want   result.Verdict
		reason string
	}{
		{"root Kustomization list 404", flux.KindKustomization, result.VerdictNotFound, "NotFound"},
		{"nested HelmRelease list 404", flux.KindHelmRelease, result.VerdictInProgress, "UnknownKind"},
	} {
		for _, mode := range []string{"get", "verify"} {
			view := newFixtureView(t, strings.Join([]string{root, gitRepoStored(revB)}, "\n---\n"), fixtureReads...)
			gr := tc.kind.GroupVersionResource().GroupResource()
			view.failList(gr, apierrors.NewNotFound(gr, ""))
			spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}}, Revision: rev, Workloads: true,
				Snapshot: mode == "get", Health: fluxhealth.New(t.Context())}
			e := Assess(view, NewMemory(), spec, fixtureNow)
			got := outcomeOf(e)
			if got.Verdict != tc.want || got.Reason != tc.reason {
				t.Errorf("%s %s: got %+v\npending %+v\nfatal %+v", tc.name, mode, got, e.Pending, e.Fatal)
			}
		}
	}
}
