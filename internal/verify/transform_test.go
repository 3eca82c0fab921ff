package verify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
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
			got, _, err := transformFor(tt.key)(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.(metav1.Object).GetAnnotations()); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTransformsVetAnnotationsBeforeStripping: every transform that drops managedFields reads
// them first, to tell an app-status.io annotation Flux applied from Git (kept) from one added
// in the cluster (dropped, its key in the object's facts). Stripped first, every annotation
// would look added in the cluster.
func TestTransformsVetAnnotationsBeforeStripping(t *testing.T) {
	t.Parallel()
	owning := func(manager string, op metav1.ManagedFieldsOperationType) []metav1.ManagedFieldsEntry {
		return []metav1.ManagedFieldsEntry{{
			Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:app-status.io/ignore-readiness":{}}}}`),
		}}
	}
	owners := []struct {
		name       string
		fields     []metav1.ManagedFieldsEntry
		want       map[string]string
		notFromGit []string
	}{
		{
			name:       "kubectl annotate",
			fields:     owning("kubectl-annotate", metav1.ManagedFieldsOperationUpdate),
			want:       map[string]string{"team": "payments"},
			notFromGit: []string{classify.AnnotationIgnoreReadiness},
		},
		{
			name:   "kustomize-controller apply",
			fields: owning("kustomize-controller", metav1.ManagedFieldsOperationApply),
			want:   map[string]string{"team": "payments", classify.AnnotationIgnoreReadiness: "true"},
		},
	}
	// Every transform that strips managedFields: the unstructured kinds', and each typed kind's.
	transforms := []struct {
		name             string
		key              assess.ListKey
		apiVersion, kind string
	}{
		{name: "unstructured", key: assess.ListKey{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "app"}, apiVersion: "apps/v1", kind: "Deployment"},
		{name: "typed pod", key: assess.ListKey{GVR: assess.PodsGVR, Namespace: "app"}, apiVersion: "v1", kind: "Pod"},
		{name: "typed replicaset", key: assess.ListKey{GVR: assess.RSGVR, Namespace: "app"}, apiVersion: "apps/v1", kind: "ReplicaSet"},
		{name: "typed controllerrevision", key: assess.ListKey{GVR: assess.RevisionsGVR, Namespace: "app"}, apiVersion: "apps/v1", kind: "ControllerRevision"},
		{name: "typed job", key: assess.ListKey{GVR: assess.JobsGVR, Namespace: "app"}, apiVersion: "batch/v1", kind: "Job"},
	}
	covered := map[schema.GroupVersionResource]bool{}
	for _, tr := range transforms {
		covered[tr.key.GVR] = true
	}
	for gvr := range builtinKinds {
		if !covered[gvr] {
			t.Errorf("typed kind %s has no case here", gvr)
		}
	}
	for _, tr := range transforms {
		for _, o := range owners {
			t.Run(tr.name+"/"+o.name, func(t *testing.T) {
				t.Parallel()
				u := &unstructured.Unstructured{}
				u.SetAPIVersion(tr.apiVersion)
				u.SetKind(tr.kind)
				u.SetNamespace("app")
				u.SetName("web")
				u.SetAnnotations(map[string]string{classify.AnnotationIgnoreReadiness: "true", "team": "payments"})
				u.SetManagedFields(o.fields)
				got, facts, err := transformFor(tr.key)(u)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(o.notFromGit, facts.NotFromGit); diff != "" {
					t.Errorf("facts' not from Git (-want +got):\n%s", diff)
				}
				acc := got.(metav1.Object)
				if diff := cmp.Diff(o.want, acc.GetAnnotations()); diff != "" {
					t.Errorf("annotations (-want +got):\n%s", diff)
				}
				if mf := acc.GetManagedFields(); mf != nil {
					t.Errorf("managedFields = %v, want none", mf)
				}
			})
		}
	}
}

// TestTransformsReadKustomizeSkip: every transform that drops managedFields first reads
// whether kustomize-controller skips the object (its facts' KustomizeSkip), as its apply reads
// the object in the cluster (fluxcd/pkg/ssa v0.76.2 shouldSkipApply, utils.AnyInMetadata): a
// label or an annotation, its value in any case; reconcile: disabled and ssa: Ignore wherever
// they come from, ssa: IfNotPresent only as kustomize-controller's apply wrote it (from Git).
func TestTransformsReadKustomizeSkip(t *testing.T) {
	t.Parallel()
	owning := func(manager string, op metav1.ManagedFieldsOperationType, field string) []metav1.ManagedFieldsEntry {
		return []metav1.ManagedFieldsEntry{{Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"` + field + `":{"f:kustomize.toolkit.fluxcd.io/ssa":{}}}}`)}}
	}
	cases := []struct {
		name                string
		labels, annotations map[string]string
		fields              []metav1.ManagedFieldsEntry
		want                flux.ApplySkip
	}{
		{name: "reconcile: Disabled annotated in the cluster", annotations: map[string]string{"kustomize.toolkit.fluxcd.io/reconcile": "Disabled"},
			fields: owning("kubectl-annotate", metav1.ManagedFieldsOperationUpdate, "f:annotations"), want: flux.SkipReconcileDisabled},
		{name: "ssa: ignore as a label", labels: map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "ignore"}, want: flux.SkipSSAIgnore},
		{name: "ssa: IfNotPresent applied by kustomize-controller", annotations: map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "IfNotPresent"},
			fields: owning("kustomize-controller", metav1.ManagedFieldsOperationApply, "f:annotations"), want: flux.SkipSSAIfNotPresent},
		{name: "ssa: IfNotPresent label applied by kustomize-controller", labels: map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "ifnotpresent"},
			fields: owning("kustomize-controller", metav1.ManagedFieldsOperationApply, "f:labels"), want: flux.SkipSSAIfNotPresent},
		{name: "ssa: IfNotPresent annotated in the cluster: applied", annotations: map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "IfNotPresent"},
			fields: owning("kubectl-annotate", metav1.ManagedFieldsOperationUpdate, "f:annotations")},
		{name: "ssa: IfNotPresent label, kustomize-controller owning the annotation: applied", labels: map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "IfNotPresent"},
			fields: owning("kustomize-controller", metav1.ManagedFieldsOperationApply, "f:annotations")},
		{name: "ssa: IfNotPresent without managedFields: applied", annotations: map[string]string{"kustomize.toolkit.fluxcd.io/ssa": "IfNotPresent"}},
		{name: "reconcile: enabled, ssa: Merge", annotations: map[string]string{"kustomize.toolkit.fluxcd.io/reconcile": "enabled", "kustomize.toolkit.fluxcd.io/ssa": "Merge"}},
	}
	transforms := map[string]assess.ListKey{
		"unstructured": {GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "app"},
	}
	for gvr := range builtinKinds {
		transforms["typed "+gvr.Resource] = assess.ListKey{GVR: gvr, Namespace: "app"}
	}
	for name, key := range transforms {
		for _, tc := range cases {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}
				u.SetNamespace("app")
				u.SetName("web")
				u.SetLabels(tc.labels)
				u.SetAnnotations(tc.annotations)
				u.SetManagedFields(tc.fields)
				got, facts, err := transformFor(key)(u)
				if err != nil {
					t.Fatal(err)
				}
				if facts.KustomizeSkip != tc.want {
					t.Errorf("facts.KustomizeSkip = %q, want %q", facts.KustomizeSkip, tc.want)
				}
				if mf := got.(metav1.Object).GetManagedFields(); mf != nil {
					t.Errorf("managedFields = %v, want none", mf)
				}
			})
		}
	}
}
