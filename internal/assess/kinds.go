package assess

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The objects the classifier reads besides the workload itself. The view holds them typed
// (*corev1.Pod, *appsv1.ReplicaSet, *appsv1.ControllerRevision, *batchv1.Job).
var (
	PodsGVR      = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	RSGVR        = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	RevisionsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}
	JobsGVR      = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
)

// MetadataOnly lists the kinds whose status is their existence: they are watched as metadata,
// so a Secret's data or a large ConfigMap never crosses the wire or sits in memory.
var MetadataOnly = map[schema.GroupResource]bool{
	{Group: "", Resource: "secrets"}:    true,
	{Group: "", Resource: "configmaps"}: true,
}

// NoReadiness are kinds an inventory often holds that have no rollout of their own to wait
// for: configuration, RBAC, CRDs, quotas, an app's own Flux sources. Credentials that may not
// list one leave its objects "not verified", never the cluster Forbidden; when they may, the
// objects are verified as any other.
var NoReadiness = map[schema.GroupResource]bool{
	{Group: "", Resource: "namespaces"}: true, {Group: "", Resource: "serviceaccounts"}: true,
	{Group: "", Resource: "limitranges"}: true, {Group: "", Resource: "resourcequotas"}: true,
	{Group: "rbac.authorization.k8s.io", Resource: "roles"}: true, {Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}: true,
	{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}: true, {Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}: true,
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: true,
	{Group: "networking.k8s.io", Resource: "networkpolicies"}:              true,
	{Group: "source.toolkit.fluxcd.io", Resource: "gitrepositories"}:       true, {Group: "source.toolkit.fluxcd.io", Resource: "ocirepositories"}: true,
	{Group: "source.toolkit.fluxcd.io", Resource: "helmrepositories"}: true, {Group: "source.toolkit.fluxcd.io", Resource: "helmcharts"}: true,
	{Group: "source.toolkit.fluxcd.io", Resource: "buckets"}: true, {Group: "source.toolkit.fluxcd.io", Resource: "externalartifacts"}: true,
}

// AsUnstructured returns a cached object as unstructured; metadata-only objects become an
// unstructured holding their metadata, which kstatus reads as an object without status.
func AsUnstructured(obj any, gvk schema.GroupVersionKind) (*unstructured.Unstructured, bool) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o, true
	case *metav1.PartialObjectMetadata:
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetGroupVersionKind(gvk)
		u.SetName(o.Name)
		u.SetNamespace(o.Namespace)
		u.SetGeneration(o.Generation)
		u.SetUID(o.UID)
		if o.DeletionTimestamp != nil {
			u.SetDeletionTimestamp(o.DeletionTimestamp)
		}
		return u, true
	case runtime.Object:
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, false
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(gvk)
		return u, true
	}
	return nil, false
}
