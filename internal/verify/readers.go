package verify

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/org/app-status-action/internal/assess"
)

// readers are the clients a cluster's lists and watches read with (watchSet, listSet): the
// metadata client for the kinds read by their metadata alone (assess.ListKey.Metadata), the
// dynamic client for the rest.
type readers struct {
	dynamic  dynamic.Interface
	metadata metadata.Interface
}

// lister lists and watches the objects of one kind in one namespace.
type lister interface {
	List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (apiwatch.Interface, error)
}

// lister returns the lister of key and an example of the objects it gives (a reflector's).
func (r readers) lister(key assess.ListKey) (lister, runtime.Object) {
	if key.Metadata() {
		return metadataLister{r.metadata.Resource(key.GVR).Namespace(key.Namespace)}, &metav1.PartialObjectMetadata{}
	}
	return dynamicLister{r.dynamic.Resource(key.GVR).Namespace(key.Namespace)}, &unstructured.Unstructured{}
}

// metadataLister and dynamicLister give the metadata and dynamic clients one shape.
type metadataLister struct{ ri metadata.ResourceInterface }

func (l metadataLister) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return l.ri.List(ctx, opts)
}

func (l metadataLister) Watch(ctx context.Context, opts metav1.ListOptions) (apiwatch.Interface, error) {
	return l.ri.Watch(ctx, opts)
}

type dynamicLister struct{ ri dynamic.ResourceInterface }

func (l dynamicLister) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return l.ri.List(ctx, opts)
}

func (l dynamicLister) Watch(ctx context.Context, opts metav1.ListOptions) (apiwatch.Interface, error) {
	return l.ri.Watch(ctx, opts)
}
