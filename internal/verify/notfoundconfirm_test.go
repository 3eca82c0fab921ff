package verify

import (
	"testing"
	"time"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// TestNotFoundReadAgain: a NotFound rests on the list that lacks the object read after the
// statuses of the objects that may create it. get lists the HelmReleases before a parent
// creates one and says it applied; the list read too early is read again, and the HelmRelease
// is found, never NotFound.
func TestNotFoundReadAgain(t *testing.T) {
	t.Parallel()
	resources, objects := consistentApp()
	helmReleases := fakeapi.Resource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Kind: "HelmRelease", Plural: "helmreleases", Namespaced: true}
	s := fakeapi.Start(fakeapi.Options{Resources: append(resources, helmReleases), Objects: objects})
	t.Cleanup(s.Close)
	req := fakeClusterRequest(t)
	ref := flux.Ref{Kind: flux.KindHelmRelease, Namespace: "flux-system", Name: "web"}
	req.Resources, req.Snapshot = []flux.Ref{ref}, true
	state, err := newClusterState(t.Context(), req.withDefaults(), insecureConfig(s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(state.close)
	if v, failed := state.probe(t.Context()); failed {
		t.Fatalf("probe: %s: %s", v.Verdict, v.Message)
	}
	// Listed before the parent applied it: in its namespace, and by name in all of them.
	state.watches.get(assess.ListKey{GVR: ref.Kind.GroupVersionResource(), Namespace: ref.Namespace})
	state.watches.get(assess.ListKey{GVR: ref.Kind.GroupVersionResource(), Names: true})
	s.Set(map[string]any{
		"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
		"metadata": map[string]any{"name": "web", "namespace": "flux-system", "generation": int64(1), "uid": "uid-hr-web"},
		"spec":     map[string]any{"interval": "10m"},
	})
	s.Set(appObject(t, objects, "app")) // the parent says applied after it
	now := time.Now()
	e := state.assess(now)
	if e.Fatal == nil || e.Fatal.Verdict != result.VerdictNotFound || len(e.Unconfirmed) == 0 {
		t.Fatalf("the first read is not a NotFound on a list read before the parent (fatal %+v, pending %+v, unconfirmed %v): the test proves nothing",
			e.Fatal, e.Pending, e.Unconfirmed)
	}
	got := state.consistently(t.Context(), e, now, &confirmations{})
	if got.Fatal != nil && got.Fatal.Verdict == result.VerdictNotFound {
		t.Errorf("consistently() = %s (%s), want the HelmRelease found on the list read again", got.Fatal.Verdict, got.Fatal.Message)
	}
	if len(got.Flux) == 0 || got.Flux[0].Verdict == result.VerdictNotFound {
		t.Errorf("consistently() Flux objects %+v, want %s found", got.Flux, ref.ID())
	}
}
