package flux

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestInventory(t *testing.T) {
	t.Parallel()
	podinfo := []ObjectRef{
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "apps", Name: "podinfo"},
		{Group: "", Version: "v1", Kind: "Service", Namespace: "apps", Name: "podinfo"},
	}
	tests := []struct {
		fixture string
		want    []ObjectRef
	}{
		{"ks-ready.yaml", podinfo},
		{"hr-ready.yaml", podinfo},
		{"ks-new.yaml", []ObjectRef{}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			t.Parallel()
			got, err := Inventory(loadFixture(t, tt.fixture))
			if err != nil {
				t.Fatalf("Inventory(%s) error: %v", tt.fixture, err)
			}
			if diff := gocmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Inventory(%s) mismatch (-want +got):\n%s", tt.fixture, diff)
			}
		})
	}
}

// inventoryOf is a Kustomization whose inventory holds the given entries.
func inventoryOf(entries ...any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "apps", "namespace": "flux-system"},
		"status":   map[string]any{"inventory": map[string]any{"entries": entries}},
	}}
}

func entry(id, v string) map[string]any { return map[string]any{"id": id, "v": v} }

func TestInventoryEntries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		want    []ObjectRef
		wantErr string
	}{
		{
			name: "sorted by ID, cluster-scoped and core kinds",
			obj: inventoryOf(
				entry("monitoring_prometheus_monitoring.coreos.com_Prometheus", "v1"),
				entry("_monitoring__Namespace", "v1"),
				entry("_system__monitoring_rbac.authorization.k8s.io_ClusterRole", "v1"),
				entry("monitoring_grafana__ConfigMap", "v1"),
				entry("flux-system_monitoring_kustomize.toolkit.fluxcd.io_Kustomization", "v1"),
			),
			want: []ObjectRef{
				{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "system:monitoring"},
				{Group: "", Version: "v1", Kind: "ConfigMap", Namespace: "monitoring", Name: "grafana"},
				{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization", Namespace: "flux-system", Name: "monitoring"},
				{Group: "", Version: "v1", Kind: "Namespace", Name: "monitoring"},
				{Group: "monitoring.coreos.com", Version: "v1", Kind: "Prometheus", Namespace: "monitoring", Name: "prometheus"},
			},
		},
		{
			name: "same ID in two groups",
			obj: inventoryOf(
				entry("apps_web_networking.k8s.io_Ingress", "v1"),
				entry("apps_web_extensions_Ingress", "v1beta1"),
			),
			want: []ObjectRef{
				{Group: "extensions", Version: "v1beta1", Kind: "Ingress", Namespace: "apps", Name: "web"},
				{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress", Namespace: "apps", Name: "web"},
			},
		},
		{
			name: "one object listed twice keeps Flux's order",
			obj: inventoryOf(
				entry("apps_web_apps_Deployment", "v1beta2"),
				entry("apps_api_apps_Deployment", "v1"),
				entry("apps_web_apps_Deployment", "v1"),
			),
			want: []ObjectRef{
				{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "apps", Name: "api"},
				{Group: "apps", Version: "v1beta2", Kind: "Deployment", Namespace: "apps", Name: "web"},
				{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "apps", Name: "web"},
			},
		},
		{name: "no entries", obj: inventoryOf(), want: []ObjectRef{}},
		{name: "nil object", obj: nil, want: []ObjectRef{}},
		{
			name:    "entries not a list",
			obj:     &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"inventory": map[string]any{"entries": "x"}}}},
			wantErr: "read the inventory of /: .status.inventory.entries accessor error: x is of the type string, expected []interface{}",
		},
		{name: "entry not an object", obj: inventoryOf("apps_web__Service"), wantErr: "inventory of flux-system/apps: entry 0 is a string, not an object with id and v"},
		{
			name:    "malformed id",
			obj:     inventoryOf(entry("apps_web__Service", "v1"), entry("apps_web_Service", "v1")),
			wantErr: `inventory of flux-system/apps: entry 1: inventory id "apps_web_Service" has too few fields; want <namespace>_<name>_<group>_<kind>, as kustomize-controller and helm-controller write it`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Inventory(tt.obj)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Inventory() = %v, %v, want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Inventory() error: %v", err)
			}
			if diff := gocmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Inventory() mismatch (-want +got):\n%s", diff)
			}
			refs, ids, err := InventoryIDs(tt.obj)
			if err != nil {
				t.Fatalf("InventoryIDs() error: %v", err)
			}
			wantIDs := make([]string, len(tt.want))
			for i, r := range tt.want {
				wantIDs[i] = r.ID()
			}
			if diff := gocmp.Diff(tt.want, refs); diff != "" {
				t.Errorf("InventoryIDs() refs mismatch (-want +got):\n%s", diff)
			}
			if diff := gocmp.Diff(wantIDs, ids); diff != "" {
				t.Errorf("InventoryIDs() ids mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInventoryOrderOfEqualEntries: entries with the same ID and group (one object listed
// twice, under two versions) keep the order Flux listed them in, as a stable sort keeps it,
// in an inventory long enough (more than 12 entries) for the sort not to be an insertion sort.
func TestInventoryOrderOfEqualEntries(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(24, 26))
	var entries []any
	var want []ObjectRef
	for i := range 200 {
		name, group := fmt.Sprintf("web-%d", r.IntN(6)), []string{"apps", "example.com"}[r.IntN(2)]
		version := fmt.Sprintf("v%d", i)
		entries = append(entries, entry("apps_"+name+"_"+group+"_Deployment", version))
		want = append(want, ObjectRef{Group: group, Version: version, Kind: "Deployment", Namespace: "apps", Name: name})
	}
	slices.SortStableFunc(want, func(a, b ObjectRef) int {
		return cmp.Or(strings.Compare(a.ID(), b.ID()), strings.Compare(a.Group, b.Group))
	})
	refs, ids, err := InventoryIDs(inventoryOf(entries...))
	if err != nil {
		t.Fatalf("InventoryIDs() error: %v", err)
	}
	if diff := gocmp.Diff(want, refs); diff != "" {
		t.Errorf("InventoryIDs() refs mismatch (-want +got):\n%s", diff)
	}
	for i, r := range refs {
		if ids[i] != r.ID() {
			t.Errorf("InventoryIDs() ids[%d] = %q, want %q", i, ids[i], r.ID())
		}
	}
}

func TestParseInventoryID(t *testing.T) {
	t.Parallel()
	const usage = "; want <namespace>_<name>_<group>_<kind>, as kustomize-controller and helm-controller write it"
	tests := []struct {
		id      string
		want    ObjectRef
		wantErr string
	}{
		{id: "apps_podinfo_apps_Deployment", want: ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "apps", Name: "podinfo"}},
		{id: "apps_podinfo__Service", want: ObjectRef{Kind: "Service", Namespace: "apps", Name: "podinfo"}},
		{id: "_apps__Namespace", want: ObjectRef{Kind: "Namespace", Name: "apps"}},
		{id: "_podinfos.example.com_apiextensions.k8s.io_CustomResourceDefinition", want: ObjectRef{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "podinfos.example.com"}},
		{id: "_system__auth-delegator_rbac.authorization.k8s.io_ClusterRoleBinding", want: ObjectRef{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding", Name: "system:auth-delegator"}},
		{id: "kube-system_system__controller__bootstrap-signer_rbac.authorization.k8s.io_Role", want: ObjectRef{Group: "rbac.authorization.k8s.io", Kind: "Role", Namespace: "kube-system", Name: "system:controller:bootstrap-signer"}},
		{id: "apps_my_role_rbac.authorization.k8s.io_Role", want: ObjectRef{Group: "rbac.authorization.k8s.io", Kind: "Role", Namespace: "apps", Name: "my_role"}},
		{id: "apps_a_b_c__ConfigMap", want: ObjectRef{Kind: "ConfigMap", Namespace: "apps", Name: "a_b_c"}},
		{id: "apps_a___b__ConfigMap", want: ObjectRef{Kind: "ConfigMap", Namespace: "apps", Name: "a:_b"}},
		{id: "", wantErr: `inventory id "" has no field separator` + usage},
		{id: "podinfo", wantErr: `inventory id "podinfo" has no field separator` + usage},
		{id: "apps_podinfo", wantErr: `inventory id "apps_podinfo" has too few fields` + usage},
		{id: "apps_podinfo_Service", wantErr: `inventory id "apps_podinfo_Service" has too few fields` + usage},
		{id: "apps__apps_Deployment", wantErr: `inventory id "apps__apps_Deployment" has an empty name` + usage},
		{id: "apps_podinfo_apps_", wantErr: `inventory id "apps_podinfo_apps_" has an empty kind` + usage},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			got, err := parseInventoryID(tt.id)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("parseInventoryID(%q) = %v, %v, want error %q", tt.id, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseInventoryID(%q) error: %v", tt.id, err)
			}
			if diff := gocmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseInventoryID(%q) mismatch (-want +got):\n%s", tt.id, diff)
			}
		})
	}
}
