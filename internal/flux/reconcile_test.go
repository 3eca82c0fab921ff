package flux

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestNewReconcileRequest: the request remembers the object's version and handled values as the
// request left it.
func TestNewReconcileRequest(t *testing.T) {
	t.Parallel()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"resourceVersion": "42"},
		"status":   map[string]any{"lastHandledReconcileAt": "2099-01-01T00:00:00Z"},
	}}
	got := NewReconcileRequest(obj, "t", true)
	want := ReconcileRequest{Token: "t", Forced: true, ResourceVersion: "42",
		Before: map[string]string{"lastHandledReconcileAt": "2099-01-01T00:00:00Z", "lastHandledForceAt": ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NewReconcileRequest (-want +got):\n%s", diff)
	}
}
