package verify_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"

	"github.com/org/app-status-action/internal/verify"
)

// TestBuiltinMappingsAsServed: each built-in kind the engine maps without discovery is served
// by the real API servers at the resource and scope the engine uses.
func TestBuiltinMappingsAsServed(t *testing.T) {
	b := bed.Get(t)
	for _, c := range b.Clusters {
		disco, err := discovery.NewDiscoveryClientForConfig(c.Config)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range verify.BuiltinMappings() {
			gv := m.GroupVersionKind.GroupVersion().String()
			list, err := disco.ServerResourcesForGroupVersion(gv)
			if err != nil {
				t.Errorf("%s: discovery of %s: %v", c.Name, gv, err)
				continue
			}
			found := false
			for _, r := range list.APIResources {
				if r.Kind != m.GroupVersionKind.Kind || r.Name != m.Resource.Resource {
					continue
				}
				found = true
				if namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace; r.Namespaced != namespaced {
					t.Errorf("%s: %s is served namespaced=%t, the engine maps it namespaced=%t", c.Name, m.GroupVersionKind, r.Namespaced, namespaced)
				}
			}
			if !found {
				t.Errorf("%s: %s is not served as %s", c.Name, m.GroupVersionKind, m.Resource)
			}
		}
	}
}
