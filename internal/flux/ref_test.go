package flux

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParseResource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   Ref
		wantID string
	}{
		{"kustomization/apps", Ref{KindKustomization, "flux-system", "apps"}, "Kustomization/flux-system/apps"},
		{"Kustomization/apps", Ref{KindKustomization, "flux-system", "apps"}, "Kustomization/flux-system/apps"},
		{"ks/apps", Ref{KindKustomization, "flux-system", "apps"}, "Kustomization/flux-system/apps"},
		{"KS/apps", Ref{KindKustomization, "flux-system", "apps"}, "Kustomization/flux-system/apps"},
		{"kustomizations/apps", Ref{KindKustomization, "flux-system", "apps"}, "Kustomization/flux-system/apps"},
		{"ks/team-a/apps.v2", Ref{KindKustomization, "team-a", "apps.v2"}, "Kustomization/team-a/apps.v2"},
		{"helmrelease/podinfo", Ref{KindHelmRelease, "flux-system", "podinfo"}, "HelmRelease/flux-system/podinfo"},
		{"HelmRelease/apps/podinfo", Ref{KindHelmRelease, "apps", "podinfo"}, "HelmRelease/apps/podinfo"},
		{"hr/apps/podinfo", Ref{KindHelmRelease, "apps", "podinfo"}, "HelmRelease/apps/podinfo"},
		{"  hr/podinfo\n", Ref{KindHelmRelease, "flux-system", "podinfo"}, "HelmRelease/flux-system/podinfo"},
		{"resourceset/tenants", Ref{KindResourceSet, "flux-system", "tenants"}, "ResourceSet/flux-system/tenants"},
		{"rset/teams/tenants", Ref{KindResourceSet, "teams", "tenants"}, "ResourceSet/teams/tenants"},
		{"ResourceSets/tenants", Ref{KindResourceSet, "flux-system", "tenants"}, "ResourceSet/flux-system/tenants"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseResource(tt.in, "flux-system")
			if err != nil {
				t.Fatalf("ParseResource(%q) error: %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseResource(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if id := got.ID(); id != tt.wantID {
				t.Errorf("ParseResource(%q).ID() = %q, want %q", tt.in, id, tt.wantID)
			}
		})
	}
}

func TestParseResourceErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, defaultNamespace, want string
	}{
		// The error starts with want; our own errors are given whole.
		{"deployment/x", "flux-system", `resource "deployment/x": unknown kind "deployment"; ` + resourceUsage},
		{"apps", "flux-system", `resource "apps": not KIND/NAME or KIND/NAMESPACE/NAME; ` + resourceUsage},
		{"ks/a/b/c", "flux-system", `resource "ks/a/b/c": not KIND/NAME or KIND/NAMESPACE/NAME; ` + resourceUsage},
		{"/apps", "flux-system", `resource "/apps": missing kind; ` + resourceUsage},
		{"ks/", "flux-system", `resource "ks/": missing name; ` + resourceUsage},
		{"ks/apps", "", `resource "ks/apps": no namespace; write ks/NAMESPACE/apps or set a default namespace`},
		{"ks//apps", "flux-system", `resource "ks//apps": no namespace; write ks/NAMESPACE/apps or set a default namespace`},
		// The rest of these errors comes from k8s.io/apimachinery's validation.
		{"ks/Apps", "flux-system", `resource "ks/Apps": invalid name "Apps": a lowercase RFC 1123 subdomain must consist of`},
		{"ks/" + strings.Repeat("a", 254), "flux-system", `resource "ks/` + strings.Repeat("a", 254) + `": invalid name "` + strings.Repeat("a", 254) + `": must be no more than 253 characters`},
		{"hr/my_ns/podinfo", "flux-system", `resource "hr/my_ns/podinfo": invalid namespace "my_ns": a lowercase RFC 1123 label must consist of`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseResource(tt.in, tt.defaultNamespace)
			if err == nil {
				t.Fatalf("ParseResource(%q, %q) = %v, want error %q", tt.in, tt.defaultNamespace, got, tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("ParseResource(%q, %q) error = %q, want %q", tt.in, tt.defaultNamespace, err, tt.want)
			}
		})
	}
}

func TestKindResources(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind Kind
		gvr  schema.GroupVersionResource
		gvk  schema.GroupVersionKind
	}{
		{KindKustomization,
			schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"},
			schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"}},
		{KindHelmRelease,
			schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"},
			schema.GroupVersionKind{Group: "helm.toolkit.fluxcd.io", Version: "v2", Kind: "HelmRelease"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.gvr, tt.kind.GroupVersionResource()); diff != "" {
				t.Errorf("%s.GroupVersionResource() mismatch (-want +got):\n%s", tt.kind, diff)
			}
			if diff := cmp.Diff(tt.gvk, tt.kind.GroupVersionKind()); diff != "" {
				t.Errorf("%s.GroupVersionKind() mismatch (-want +got):\n%s", tt.kind, diff)
			}
		})
	}
}

func TestIsFluxKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		group, kind string
		want        Kind
		ok          bool
	}{
		{"kustomize.toolkit.fluxcd.io", "Kustomization", KindKustomization, true},
		{"helm.toolkit.fluxcd.io", "HelmRelease", KindHelmRelease, true},
		{"source.toolkit.fluxcd.io", "GitRepository", "", false},
		{"helm.toolkit.fluxcd.io", "Kustomization", "", false},
		{"kustomize.config.k8s.io", "Kustomization", "", false},
		{"kustomize.toolkit.fluxcd.io", "kustomization", "", false},
		{"apps", "Deployment", "", false},
		{"", "ConfigMap", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.group+"/"+tt.kind, func(t *testing.T) {
			t.Parallel()
			got, ok := IsFluxKind(tt.group, tt.kind)
			if got != tt.want || ok != tt.ok {
				t.Errorf("IsFluxKind(%q, %q) = %q, %t, want %q, %t", tt.group, tt.kind, got, ok, tt.want, tt.ok)
			}
		})
	}
}
