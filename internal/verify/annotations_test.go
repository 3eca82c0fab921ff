package verify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestVetAnnotations(t *testing.T) {
	t.Parallel()
	fluxApplied := metav1.ManagedFieldsEntry{Manager: "kustomize-controller", Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:app-status.io/retry-grace":{},"f:team":{}}},"f:spec":{}}`)}
	helmApplied := metav1.ManagedFieldsEntry{Manager: "helm-controller", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:app-status.io/crash-restarts":{}}}}`)}
	kubectl := metav1.ManagedFieldsEntry{Manager: "kubectl-annotate", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:app-status.io/ignore-readiness":{}}}}`)}
	statusByFlux := metav1.ManagedFieldsEntry{Manager: "kustomize-controller", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:app-status.io/failure-grace":{}}}}`)}
	tests := []struct {
		name        string
		annotations map[string]string
		fields      []metav1.ManagedFieldsEntry
		want        map[string]string
		// notFromGit are the keys the object's facts name.
		notFromGit []string
	}{
		{
			name:        "applied by Flux: kept",
			annotations: map[string]string{"app-status.io/retry-grace": "5m", "app-status.io/crash-restarts": "9", "team": "a"},
			fields:      []metav1.ManagedFieldsEntry{fluxApplied, helmApplied},
			want:        map[string]string{"app-status.io/retry-grace": "5m", "app-status.io/crash-restarts": "9", "team": "a"},
		},
		{
			name:        "added in the cluster: dropped and listed",
			annotations: map[string]string{"app-status.io/retry-grace": "5m", "app-status.io/ignore-readiness": "true", "app-status.io/failure-grace": "1h"},
			fields:      []metav1.ManagedFieldsEntry{fluxApplied, kubectl, statusByFlux},
			want:        map[string]string{"app-status.io/retry-grace": "5m"},
			notFromGit:  []string{"app-status.io/failure-grace", "app-status.io/ignore-readiness"},
		},
		{
			name:        "an annotation named as the facts were once is another annotation",
			annotations: map[string]string{"app-status.internal/not-from-git": "x", "team": "a"},
			fields:      []metav1.ManagedFieldsEntry{kubectl},
			want:        map[string]string{"app-status.internal/not-from-git": "x", "team": "a"},
		},
		{
			name:        "no managedFields (stripped): not from Git",
			annotations: map[string]string{"app-status.io/ignore-readiness": "true"},
			want:        map[string]string{},
			notFromGit:  []string{"app-status.io/ignore-readiness"},
		},
		{
			name:        "kustomize-controller's name on an update (kubectl --field-manager): not its apply",
			annotations: map[string]string{"app-status.io/retry-grace": "5m"},
			fields: []metav1.ManagedFieldsEntry{{Manager: "kustomize-controller", Operation: metav1.ManagedFieldsOperationUpdate,
				FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:app-status.io/retry-grace":{}}}}`)}},
			want:       map[string]string{},
			notFromGit: []string{"app-status.io/retry-grace"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
			u.SetAnnotations(tt.annotations)
			u.SetManagedFields(tt.fields)
			dropped := vetAnnotations(u)
			if diff := cmp.Diff(tt.want, u.GetAnnotations()); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.notFromGit, dropped); diff != "" {
				t.Errorf("not from Git (-want +got):\n%s", diff)
			}
		})
	}
}
