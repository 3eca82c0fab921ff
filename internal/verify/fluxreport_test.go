package verify

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestOperatorReport: the preflight reads the FluxReport the Flux Operator writes (named flux,
// in the namespace it runs in), never another one that happens to be listed first.
func TestOperatorReport(t *testing.T) {
	t.Parallel()
	report := func(namespace, name string) unstructured.Unstructured {
		u := unstructured.Unstructured{}
		u.SetAPIVersion("fluxcd.controlplane.io/v1")
		u.SetKind("FluxReport")
		u.SetNamespace(namespace)
		u.SetName(name)
		return u
	}
	tests := []struct {
		name      string
		reports   []unstructured.Unstructured
		namespace string // of the report read, "" for none
		note      string // a part of the note, "" for none
	}{
		{name: "no FluxReport"},
		{name: "the operator's", reports: []unstructured.Unstructured{report("flux-system", "flux")}, namespace: "flux-system"},
		{name: "another listed first",
			reports:   []unstructured.Unstructured{report("aaa", "copy"), report("flux-operator", "flux")},
			namespace: "flux-operator"},
		{name: "only others", reports: []unstructured.Unstructured{report("flux-system", "old"), report("team", "report")}},
		{name: "one named flux in two namespaces",
			reports: []unstructured.Unstructured{report("flux-system", "flux"), report("team", "flux")},
			note:    "a FluxReport flux in several namespaces (flux-system, team)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, note := operatorReport(tt.reports)
			namespace := ""
			if r != nil {
				namespace = r.GetNamespace()
			}
			if diff := cmp.Diff(tt.namespace, namespace); diff != "" {
				t.Errorf("the report read's namespace (-want +got):\n%s", diff)
			}
			if (tt.note == "") != (note == "") || !strings.Contains(note, tt.note) {
				t.Errorf("note %q, want one holding %q", note, tt.note)
			}
		})
	}
}
