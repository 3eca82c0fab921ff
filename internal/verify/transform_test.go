package verify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/assess"
)

// TestTransformsDropLastApplied: every kind's cache holds its objects without kubectl's
// last-applied-configuration (the whole manifest again, read by no verdict), and with every
// other annotation as the cluster has it.
func TestTransformsDropLastApplied(t *testing.T) {
	t.Parallel()
	unstructuredOf := func(apiVersion, kind string, annotations map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetNamespace("app")
		u.SetName("web")
		u.SetAnnotations(annotations)
		return u
	}
	metadataOf := func(annotations map[string]string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "web", Annotations: annotations}}
	}
	both := func() map[string]string {
		return map[string]string{corev1.LastAppliedConfigAnnotation: `{"apiVersion":"v1"}`, "team": "payments"}
	}
	only := func() map[string]string { return map[string]string{corev1.LastAppliedConfigAnnotation: `{}`} }
	deployments := assess.ListKey{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "app"}
	pods := assess.ListKey{GVR: assess.PodsGVR, Namespace: "app"}
	configMaps := assess.ListKey{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "app"}
	tests := []struct {
		name string
		key  assess.ListKey
		obj  any
		want map[string]string
	}{
		{name: "unstructured", key: deployments, obj: unstructuredOf("apps/v1", "Deployment", both()), want: map[string]string{"team": "payments"}},
		{name: "unstructured, no annotation left", key: deployments, obj: unstructuredOf("apps/v1", "Deployment", only())},
		{name: "unstructured without it", key: deployments, obj: unstructuredOf("apps/v1", "Deployment", map[string]string{"team": "payments"}), want: map[string]string{"team": "payments"}},
		{name: "typed", key: pods, obj: unstructuredOf("v1", "Pod", both()), want: map[string]string{"team": "payments"}},
		{name: "typed, no annotation left", key: pods, obj: unstructuredOf("v1", "Pod", only())},
		{name: "metadata", key: configMaps, obj: metadataOf(both()), want: map[string]string{"team": "payments"}},
		{name: "metadata, no annotation left", key: configMaps, obj: metadataOf(only())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := transformFor(tt.key)(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.(metav1.Object).GetAnnotations()); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}
