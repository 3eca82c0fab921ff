package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/testing/testbed"
)

// watcher is the bench's own view of the truth: per cluster, one informer per kind the apps
// use, and the moment (as this process received the watch event) each expectation came true.
// Every tool is timed against these moments.
type watcher struct {
	clusters map[string]*clusterWatch
}

// expectation is what the bench waits for in one app on one cluster.
type expectation struct {
	namespace string
	revision  string // the Kustomization must have applied it
	failure   bool   // wait for a fatal pod state instead of Current
	// doneAt is when the Kustomization was Ready at the revision and every inventory object
	// was Current, for the first time; failAt when the first pod of the app's namespace showed
	// a fatal state (ErrImagePull, ImagePullBackOff).
	doneAt, failAt time.Time
}

type clusterWatch struct {
	name      string
	informers map[schema.GroupVersionResource]cache.SharedIndexInformer

	mu     sync.Mutex
	expect map[string]*expectation // by Kustomization name
}

var (
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	servicesGVR    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	configMapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	podsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

	kindResources = map[string]schema.GroupVersionResource{
		"apps/Deployment": deploymentsGVR,
		"/Service":        servicesGVR,
		"/ConfigMap":      configMapsGVR,
	}
)

// startWatcher starts the informers of every cluster and waits for their first lists.
func startWatcher(ctx context.Context, clusters []*testbed.Cluster) (*watcher, error) {
	w := &watcher{clusters: map[string]*clusterWatch{}}
	for _, c := range clusters {
		cw := &clusterWatch{name: c.Name, informers: map[schema.GroupVersionResource]cache.SharedIndexInformer{}, expect: map[string]*expectation{}}
		factory := dynamicinformer.NewDynamicSharedInformerFactory(c.Dynamic, 0)
		for _, gvr := range []schema.GroupVersionResource{testbed.KustomizationGVR, deploymentsGVR, servicesGVR, configMapsGVR, podsGVR} {
			inf := factory.ForResource(gvr).Informer()
			on := func(any) { cw.evaluate(time.Now()) }
			if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc: on, UpdateFunc: func(_, o any) { on(o) }, DeleteFunc: on,
			}); err != nil {
				return nil, fmt.Errorf("watch %s in %s: %w", gvr.Resource, c.Name, err)
			}
			cw.informers[gvr] = inf
		}
		factory.Start(ctx.Done())
		for gvr, ok := range factory.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return nil, fmt.Errorf("first list of %s in %s did not arrive", gvr.Resource, c.Name)
			}
		}
		w.clusters[c.Name] = cw
	}
	return w, nil
}

// expect starts waiting, on every cluster, for the Kustomization name to apply revision, with
// the app's objects in namespace (or, with failure, for a pod of the namespace to fail). It
// forgets earlier moments of the same app.
func (w *watcher) expect(name, namespace, revision string, failure bool) {
	for _, cw := range w.clusters {
		cw.mu.Lock()
		cw.expect[name] = &expectation{namespace: namespace, revision: revision, failure: failure}
		cw.mu.Unlock()
		cw.evaluate(time.Now())
	}
}

// moments returns, per cluster, when the app was done and when it first failed (zero: not yet).
func (w *watcher) moments(name string) (done, failed map[string]time.Time) {
	done, failed = map[string]time.Time{}, map[string]time.Time{}
	for cn, cw := range w.clusters {
		cw.mu.Lock()
		if e := cw.expect[name]; e != nil {
			done[cn], failed[cn] = e.doneAt, e.failAt
		}
		cw.mu.Unlock()
	}
	return done, failed
}

// waitDone waits until the app is done on every cluster.
func (w *watcher) waitDone(ctx context.Context, name string) error {
	for {
		done, _ := w.moments(name)
		missing := ""
		for cn, t := range done {
			if t.IsZero() {
				missing = cn
			}
		}
		if missing == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not rolled out on %s: %w", name, missing, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// evaluate records the moments that came true at now.
func (cw *clusterWatch) evaluate(now time.Time) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	for name, e := range cw.expect {
		switch {
		case e.failure && e.failAt.IsZero() && cw.fatalPod(e.namespace):
			e.failAt = now
		case !e.failure && e.doneAt.IsZero() && cw.done(name, e):
			e.doneAt = now
		}
	}
}

// done reports whether the Kustomization is Ready at the expected revision and every object
// of its inventory is Current (kstatus).
func (cw *clusterWatch) done(name string, e *expectation) bool {
	ks, ok := cw.get(testbed.KustomizationGVR, "flux-system", name)
	if !ok {
		return false
	}
	applied, _, _ := unstructured.NestedString(ks.Object, "status", "lastAppliedRevision")
	observed, _, _ := unstructured.NestedInt64(ks.Object, "status", "observedGeneration")
	if applied != e.revision || observed != ks.GetGeneration() || !readyTrue(ks) {
		return false
	}
	refs, err := flux.Inventory(ks)
	if err != nil || len(refs) == 0 {
		return false
	}
	for _, r := range refs {
		gvr, known := kindResources[r.Group+"/"+r.Kind]
		if !known {
			return false
		}
		obj, ok := cw.get(gvr, r.Namespace, r.Name)
		if !ok {
			return false
		}
		res, err := status.Compute(obj)
		if err != nil || res.Status != status.CurrentStatus {
			return false
		}
	}
	return true
}

// fatalPod reports whether a pod in namespace cannot pull its image.
func (cw *clusterWatch) fatalPod(namespace string) bool {
	for _, item := range cw.informers[podsGVR].GetStore().List() {
		u, ok := item.(*unstructured.Unstructured)
		if !ok || u.GetNamespace() != namespace {
			continue
		}
		statuses, _, _ := unstructured.NestedSlice(u.Object, "status", "containerStatuses")
		for _, cs := range statuses {
			m, _ := cs.(map[string]any)
			reason, _, _ := unstructured.NestedString(m, "state", "waiting", "reason")
			if reason == "ErrImagePull" || reason == "ImagePullBackOff" {
				return true
			}
		}
	}
	return false
}

func (cw *clusterWatch) get(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	inf := cw.informers[gvr]
	if inf == nil {
		return nil, false
	}
	item, ok, err := inf.GetStore().GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil, false
	}
	u, ok := item.(*unstructured.Unstructured)
	return u, ok
}

func readyTrue(obj *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == meta.ReadyCondition && m["status"] == "True" {
			return true
		}
	}
	return false
}
