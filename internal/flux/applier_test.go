package flux

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestApplierOf: the Flux object an object's owner labels name, kustomize-controller's,
// flux-operator's or helm-controller's; none without a whole pair.
func TestApplierOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		labels map[string]string
		want   Ref
		ok     bool
	}{
		{name: "kustomize-controller's", labels: map[string]string{"kustomize.toolkit.fluxcd.io/name": "flux-system", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"},
			want: Ref{Kind: KindKustomization, Namespace: "flux-system", Name: "flux-system"}, ok: true},
		{name: "helm-controller's", labels: map[string]string{"helm.toolkit.fluxcd.io/name": "generators", "helm.toolkit.fluxcd.io/namespace": "infra"},
			want: Ref{Kind: KindHelmRelease, Namespace: "infra", Name: "generators"}, ok: true},
		{name: "flux-operator's", labels: map[string]string{"resourceset.fluxcd.controlplane.io/name": "apps", "resourceset.fluxcd.controlplane.io/namespace": "flux-system"},
			want: Ref{Kind: KindResourceSet, Namespace: "flux-system", Name: "apps"}, ok: true},
		{name: "a name without its namespace", labels: map[string]string{"helm.toolkit.fluxcd.io/name": "generators"}},
		{name: "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := ApplierOf(tt.labels)
			if diff := cmp.Diff(tt.want, got); diff != "" || ok != tt.ok {
				t.Errorf("ApplierOf(%v) = %v, %t, want %v, %t", tt.labels, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestFetchPendingStalledSources: a stalled repository fetches nothing more, and is not
// waited for; a stalled HelmChart is built again when its own source serves a new artifact,
// and is.
func TestFetchPendingStalledSources(t *testing.T) {
	t.Parallel()
	want, err := ParseRevision("main@sha1:bbbbbbb2222222222222222222222222222222bb")
	if err != nil {
		t.Fatal(err)
	}
	git := SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "app"}
	chart := SourceRef{Kind: "HelmChart", Namespace: "flux-system", Name: "flux-system-web"}
	tests := []struct {
		name        string
		src         Source
		wantPending bool
	}{
		{name: "a repository behind", src: Source{Ref: git, Revision: "main@sha1:aaaaaaa1111111111111111111111111111111aa"}, wantPending: true},
		{name: "a repository stalled", src: Source{Ref: git, Revision: "main@sha1:aaaaaaa1111111111111111111111111111111aa", Stalled: true}},
		{name: "a repository suspended", src: Source{Ref: git, Revision: "main@sha1:aaaaaaa1111111111111111111111111111111aa", Suspended: true}},
		{name: "a HelmChart stalled, rebuilt on its source's next artifact", src: Source{Ref: chart, Revision: "1.0.0", Stalled: true}, wantPending: true},
		{name: "a HelmChart suspended", src: Source{Ref: chart, Revision: "1.0.0", Stalled: true, Suspended: true}},
	}
	for _, tt := range tests {
		gen := Generator{Ref: SourceRef{Kind: "ArtifactGenerator", Namespace: "flux-system", Name: "gen"},
			Sources: []GeneratorSource{{Alias: "app", Ref: tt.src.Ref}}}
		got := FetchPending(gen, "gen", tt.src, tt.src, want)
		if (got != "") != tt.wantPending {
			t.Errorf("%s: FetchPending = %q, want pending %t", tt.name, got, tt.wantPending)
		}
	}
}
