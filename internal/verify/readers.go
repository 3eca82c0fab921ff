package verify

import (
	"context"
	"net/http"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	batchv1client "k8s.io/client-go/kubernetes/typed/batch/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/assess"
)

// readers are the clients a cluster's lists and watches read with (watchSet, listSet): the
// metadata client for the kinds read by their metadata alone (assess.ListKey.Metadata),
// client-go's typed clients for the built-in kinds the classifier reads (builtinClients), the
// dynamic client for the rest.
type readers struct {
	dynamic  dynamic.Interface
	metadata metadata.Interface
	// builtin is nil where none is made (unit tests): the dynamic client reads every kind.
	builtin *builtinClients
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
	if r.builtin != nil {
		if l, example, ok := r.builtin.lister(key); ok {
			return l, example
		}
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

// builtinClients list and watch Pods, ReplicaSets, ControllerRevisions and Jobs with
// client-go's typed clients, which ask for protobuf, as kube-apiserver serves its built-in
// kinds: no JSON to decode into maps, and no conversion of the maps to the typed objects the
// classifier reads (typedTransform). A server that answers in JSON is read as well. The apps
// and batch clients are made on first use (most clusters of a fleet never list a Pod or a
// Job), over the cluster's one HTTP client.
type builtinClients struct {
	core   corev1client.CoreV1Interface
	config *rest.Config
	http   *http.Client

	appsOnce  sync.Once
	apps      appsv1client.AppsV1Interface
	batchOnce sync.Once
	batch     batchv1client.BatchV1Interface
}

// lister returns the typed lister of key; false for a kind it does not read, or whose client
// could not be made (the dynamic client reads it then).
func (c *builtinClients) lister(key assess.ListKey) (lister, runtime.Object, bool) {
	kind, ok := builtinKinds[key.GVR]
	if !ok {
		return nil, nil, false
	}
	return kind.list(c, key.Namespace)
}

// appsClient and batchClient are the apps and batch clients, made on first use; nil when they
// could not be made.
func (c *builtinClients) appsClient() appsv1client.AppsV1Interface {
	c.appsOnce.Do(func() { c.apps, _ = appsv1client.NewForConfigAndClient(c.config, c.http) })
	return c.apps
}

func (c *builtinClients) batchClient() batchv1client.BatchV1Interface {
	c.batchOnce.Do(func() { c.batch, _ = batchv1client.NewForConfigAndClient(c.config, c.http) })
	return c.batch
}

// builtinKind is one of the classifier's kinds: its caches hold typed objects, as the typed
// client decodes them (list) or converted once when they arrive as unstructured (transform).
type builtinKind struct {
	transform transformFunc
	// list is the kind's typed lister in a namespace, and an example of its objects; false
	// when its client could not be made.
	list func(c *builtinClients, namespace string) (lister, runtime.Object, bool)
}

// builtinKinds are the classifier's kinds, each read by its typed client.
var builtinKinds = map[schema.GroupVersionResource]builtinKind{
	assess.PodsGVR: {
		transform: typedTransform[corev1.Pod](corev1.SchemeGroupVersion.WithKind("Pod")),
		list: func(c *builtinClients, ns string) (lister, runtime.Object, bool) {
			return typedLister[*corev1.PodList]{c.core.Pods(ns)}, &corev1.Pod{}, true
		},
	},
	assess.RSGVR: {
		transform: typedTransform[appsv1.ReplicaSet](appsv1.SchemeGroupVersion.WithKind("ReplicaSet")),
		list: func(c *builtinClients, ns string) (lister, runtime.Object, bool) {
			if apps := c.appsClient(); apps != nil {
				return typedLister[*appsv1.ReplicaSetList]{apps.ReplicaSets(ns)}, &appsv1.ReplicaSet{}, true
			}
			return nil, nil, false
		},
	},
	assess.RevisionsGVR: {
		transform: typedTransform[appsv1.ControllerRevision](appsv1.SchemeGroupVersion.WithKind("ControllerRevision")),
		list: func(c *builtinClients, ns string) (lister, runtime.Object, bool) {
			if apps := c.appsClient(); apps != nil {
				return typedLister[*appsv1.ControllerRevisionList]{apps.ControllerRevisions(ns)}, &appsv1.ControllerRevision{}, true
			}
			return nil, nil, false
		},
	},
	assess.JobsGVR: {
		transform: typedTransform[batchv1.Job](batchv1.SchemeGroupVersion.WithKind("Job")),
		list: func(c *builtinClients, ns string) (lister, runtime.Object, bool) {
			if batch := c.batchClient(); batch != nil {
				return typedLister[*batchv1.JobList]{batch.Jobs(ns)}, &batchv1.Job{}, true
			}
			return nil, nil, false
		},
	},
}

// typedListWatcher is the list and watch of a typed client's kind.
type typedListWatcher[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (apiwatch.Interface, error)
}

// typedLister gives a typed client the lister's shape.
type typedLister[L runtime.Object] struct{ ri typedListWatcher[L] }

func (l typedLister[L]) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	list, err := l.ri.List(ctx, opts)
	if err != nil {
		// (Not the typed nil list, which is no nil runtime.Object.)
		return nil, err
	}
	return list, nil
}

func (l typedLister[L]) Watch(ctx context.Context, opts metav1.ListOptions) (apiwatch.Interface, error) {
	return l.ri.Watch(ctx, opts)
}
