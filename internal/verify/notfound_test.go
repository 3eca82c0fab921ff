package verify_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/verify"
)

// TestNotFoundAfterGrace: a requested Kustomization that does not exist, on a cluster where
// no Flux object is creating it, is NotFound once the not-found grace has passed, long before
// the timeout; the message names the close name in its namespace and the namespace where its
// name exists.
func TestNotFoundAfterGrace(t *testing.T) {
	t.Parallel()
	resources, objects := fakeapi.App("app", fakeRevision, 3)
	elsewhere := map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
		"metadata": map[string]any{"name": "ap", "namespace": "team", "generation": int64(1), "uid": "uid-ks-team-ap", "resourceVersion": "1"},
		"spec":     map[string]any{"interval": "10m", "path": "./", "sourceRef": map[string]any{"kind": "GitRepository", "name": "ap"}},
		"status": map[string]any{"observedGeneration": int64(1), "lastAppliedRevision": fakeRevision, "lastAttemptedRevision": fakeRevision,
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded", "observedGeneration": int64(1)}}},
	}
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: append(objects, elsewhere)})
	t.Cleanup(s.Close)
	const grace, timeout = 2 * time.Second, time.Minute
	req := fakeRequest([]verify.Target{fakeTarget("c", s)}, timeout)
	req.Resources = []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "ap"}}
	req.NotFoundGrace = grace
	start := time.Now()
	c := resultOf(verify.Run(context.Background(), req), "c")
	took := time.Since(start)
	t.Logf("after %s: %s: %s", took, c.Verdict, c.Message)
	if c.Verdict != result.VerdictNotFound {
		t.Fatalf("verdict %s (%s), want NotFound", c.Verdict, c.Message)
	}
	for _, want := range []string{"Kustomization/flux-system/ap not found", "close names in flux-system: app", "Kustomization ap exists in namespace team"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("message %q, want it to contain %q", c.Message, want)
		}
	}
	if strings.Contains(c.Message, "timed out") {
		t.Errorf("message %q: want the grace's answer, not the timeout's", c.Message)
	}
	if took < grace || took > grace+20*time.Second {
		t.Errorf("NotFound after %s, want it after the grace (%s), long before the timeout (%s)", took, grace, timeout)
	}
}

// TestNotFoundLooksElsewhereByName: for a missing HelmRelease the namespaces where its name
// exists come from a list of every namespace's HelmReleases read as metadata only (names, not
// their values and history); the verdict names that namespace.
func TestNotFoundLooksElsewhereByName(t *testing.T) {
	t.Parallel()
	helmReleases := fakeapi.Resource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Kind: "HelmRelease", Plural: "helmreleases", Namespaced: true}
	elsewhere := map[string]any{
		"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "generation": int64(1), "uid": "uid-hr-shop-web", "resourceVersion": "1"},
		"spec":     map[string]any{"interval": "10m", "values": map[string]any{"big": "values never read"}},
	}
	s := fakeapi.Start(fakeapi.Options{Resources: []fakeapi.Resource{fakeapi.KustomizationResource, helmReleases}, Objects: []map[string]any{elsewhere}})
	t.Cleanup(s.Close)
	var mu sync.Mutex
	var accepts []string // of the lists of HelmReleases in every namespace
	target := fakeTarget("c", s)
	target.Config.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/apis/helm.toolkit.fluxcd.io/v2/helmreleases" {
				mu.Lock()
				accepts = append(accepts, r.Header.Get("Accept"))
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	}
	req := fakeRequest([]verify.Target{target}, time.Minute)
	req.Resources = []flux.Ref{{Kind: flux.KindHelmRelease, Namespace: "flux-system", Name: "web"}}
	req.NotFoundGrace = time.Second
	c := resultOf(verify.Run(context.Background(), req), "c")
	if c.Verdict != result.VerdictNotFound || !strings.Contains(c.Message, "HelmRelease web exists in namespace shop") {
		t.Errorf("verdict %s (%s), want NotFound naming namespace shop", c.Verdict, c.Message)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(accepts) == 0 {
		t.Fatal("HelmReleases of every namespace never listed")
	}
	for _, a := range accepts {
		if !strings.Contains(a, "as=PartialObjectMetadata") {
			t.Errorf("HelmReleases of every namespace read with Accept %q, want metadata only", a)
		}
	}
}
