package verify

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// watchKey names one list+watch: a resource type in a namespace ("" for cluster-scoped).
type watchKey struct {
	gvr       schema.GroupVersionResource
	namespace string
}

// watchSet holds the informers of one cluster: one list and one watch per resource type and
// namespace, however many objects of that type the app has. Every change calls notify.
type watchSet struct {
	ctx      context.Context
	dynamic  dynamic.Interface
	metadata metadata.Interface
	notify   func()

	mu      sync.Mutex
	watches map[watchKey]*watch
}

// watch is one informer and the last error its list or watch met.
type watch struct {
	informer cache.SharedIndexInformer
	mu       sync.Mutex
	lastErr  error
}

func newWatchSet(ctx context.Context, dyn dynamic.Interface, md metadata.Interface, notify func()) *watchSet {
	return &watchSet{ctx: ctx, dynamic: dyn, metadata: md, notify: notify, watches: map[watchKey]*watch{}}
}

// metadataOnly lists the kinds whose status is their existence: they are watched as metadata,
// so a Secret's data or a large ConfigMap never crosses the wire or sits in memory.
var metadataOnly = map[schema.GroupResource]bool{
	{Group: "", Resource: "secrets"}:    true,
	{Group: "", Resource: "configmaps"}: true,
}

// get returns the watch for key, starting it on first use.
func (s *watchSet) get(key watchKey) *watch {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.watches[key]; ok {
		return w
	}
	var informer cache.SharedIndexInformer
	if metadataOnly[key.gvr.GroupResource()] {
		informer = metadatainformer.NewFilteredMetadataInformer(s.metadata, key.gvr, key.namespace, 0, cache.Indexers{}, nil).Informer()
	} else {
		informer = dynamicinformer.NewFilteredDynamicInformer(s.dynamic, key.gvr, key.namespace, 0, cache.Indexers{}, nil).Informer()
	}
	w := &watch{informer: informer}
	transform := typedKinds[key.gvr]
	if transform == nil {
		transform = stripManagedFields
	}
	_ = informer.SetTransform(transform)
	_ = informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		w.mu.Lock()
		w.lastErr = err
		w.mu.Unlock()
		s.notify()
	})
	notify := func(any) { s.notify() }
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, obj any) { s.notify() },
		DeleteFunc: notify,
	})
	go informer.RunWithContext(s.ctx)
	go func() {
		if cache.WaitForCacheSync(s.ctx.Done(), informer.HasSynced) {
			s.notify()
		}
	}()
	s.watches[key] = w
	return w
}

// synced reports whether the first list has arrived.
func (w *watch) synced() bool { return w.informer.HasSynced() }

// err returns the last list or watch error, if any.
func (w *watch) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastErr
}

// object returns the object namespace/name from the cache.
func (w *watch) object(namespace, name string) (any, bool) {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, ok, err := w.informer.GetStore().GetByKey(key)
	return obj, ok && err == nil
}

// list returns every cached object.
func (w *watch) list() []any { return w.informer.GetStore().List() }

// stripManagedFields drops what no verdict reads, to keep memory flat with many objects.
func stripManagedFields(obj any) (any, error) {
	if acc, err := meta.Accessor(obj); err == nil {
		acc.SetManagedFields(nil)
	}
	return obj, nil
}

// asUnstructured returns a cached object as unstructured; metadata-only objects become an
// unstructured holding their metadata, which kstatus reads as an object without status.
func asUnstructured(obj any, gvk schema.GroupVersionKind) (*unstructured.Unstructured, bool) {
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
