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
