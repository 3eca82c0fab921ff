package flux

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// The annotations Flux's controllers read a reconcile request from (fluxcd/pkg/apis/meta
// ReconcileRequestAnnotation, and helm-controller's ForceRequestAnnotation).
const (
	RequestedAtAnnotation = "reconcile.fluxcd.io/requestedAt"
	ForceAtAnnotation     = "reconcile.fluxcd.io/forceAt"
)

// ReconcileRequest is a request sent to a requested object: its token, whether it forced a Helm
// release, and the object as the request left it (its resourceVersion, and the handled values
// of its status then), against which Flux's handling of the request is proven.
type ReconcileRequest struct {
	Token  string
	Forced bool
	// ResourceVersion is the object's version that holds the request.
	ResourceVersion string
	// Before holds the handled values (status.lastHandledReconcileAt, lastHandledForceAt) of
	// the object at the request, "" for none.
	Before map[string]string
}

// The status fields that say which request a controller handled last (fluxcd/pkg/apis/meta
// ReconcileRequestStatus, helm-controller's lastHandledForceAt), and the annotation each
// handles.
var handledFields = []struct{ status, annotation string }{
	{"lastHandledReconcileAt", RequestedAtAnnotation},
	{ForceHandledField, ForceAtAnnotation},
}

// ForceHandledField is the status field in which helm-controller records the last forced
// request it handled: only once a reconcile gets to Helm's action (v1.6.4 atomic_release.go
// actionForState), never in one that fails before (a dependency, the chart, the values).
const ForceHandledField = "lastHandledForceAt"

// NewReconcileRequest is the request of token sent to a requested object, from the object as the
// request left it.
func NewReconcileRequest(patched *unstructured.Unstructured, token string, forced bool) ReconcileRequest {
	r := ReconcileRequest{Token: token, Forced: forced, ResourceVersion: patched.GetResourceVersion(), Before: map[string]string{}}
	for _, f := range handledFields {
		r.Before[f.status], _, _ = unstructured.NestedString(patched.Object, "status", f.status)
	}
	return r
}

// Handled reports whether Flux has handled the request r, or one sent after it, by the object
// obj as the run last saw it; field is what it waits for otherwise. A token is a value, not a
// time, and is never compared with a clock: a token "in the future" already on the object
// (a runner's clock behind the one that wrote it, or a `2099-…` set by hand) must not pass
// for a handled request. The proof is the handled value moving from what it was at the
// request to the request's own token; or, in a version of the object later than the
// request's, to the token now requested, which was then written after the run's (another
// run's request, that Flux handles in its place).
func (r ReconcileRequest) Handled(obj *unstructured.Unstructured) (ok bool, field string) {
	for _, f := range handledFields {
		if f.annotation == ForceAtAnnotation && !r.Forced {
			continue
		}
		v, _, _ := unstructured.NestedString(obj.Object, "status", f.status)
		if v == r.Token {
			continue
		}
		later, err := resourceversion.CompareResourceVersion(obj.GetResourceVersion(), r.ResourceVersion)
		if v != "" && v != r.Before[f.status] && err == nil && later > 0 && v == obj.GetAnnotations()[f.annotation] {
			continue
		}
		return false, f.status
	}
	return true, ""
}
