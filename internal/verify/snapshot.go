package verify

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
)

// snapshotListTimeout bounds each list of a snapshot: `get` answers within seconds whatever
// the servers do.
const snapshotListTimeout = 5 * time.Second

// listSet reads each kind once, with a list: the objectCache of a snapshot (app-status get),
// which starts no watch.
type listSet struct {
	ctx      context.Context
	dynamic  dynamic.Interface
	metadata metadata.Interface
	clock    func() time.Time
	lists    map[watchKey]*staticList
}

// staticList is one kind in one namespace as one list found it.
type staticList struct {
	store   cache.Store
	listErr error
	since   time.Time
}

func newListSet(ctx context.Context, dyn dynamic.Interface, md metadata.Interface, clock func() time.Time) *listSet {
	return &listSet{ctx: ctx, dynamic: dyn, metadata: md, clock: clock, lists: map[watchKey]*staticList{}}
}

// get lists key now, the first time it is asked for, within snapshotListTimeout.
func (s *listSet) get(key watchKey) cachedList {
	if l, ok := s.lists[key]; ok {
		return l
	}
	l := &staticList{store: cache.NewStore(cache.MetaNamespaceKeyFunc), since: s.clock()}
	s.lists[key] = l
	ctx, cancel := context.WithTimeout(s.ctx, snapshotListTimeout)
	defer cancel()
	var items []runtime.Object
	if metadataOnly[key.gvr.GroupResource()] {
		list, err := s.metadata.Resource(key.gvr).Namespace(key.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			l.listErr = err
			return l
		}
		for i := range list.Items {
			items = append(items, &list.Items[i])
		}
	} else {
		list, err := s.dynamic.Resource(key.gvr).Namespace(key.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			l.listErr = err
			return l
		}
		for i := range list.Items {
			items = append(items, &list.Items[i])
		}
	}
	transform := transformFor(key.gvr)
	for _, it := range items {
		obj, err := transform(it)
		if err != nil {
			continue
		}
		if _, err := meta.Accessor(obj); err == nil {
			_ = l.store.Add(obj)
		}
	}
	return l
}

func (l *staticList) synced() bool            { return l.listErr == nil }
func (l *staticList) err() error              { return l.listErr }
func (l *staticList) waitingSince() time.Time { return l.since }
func (l *staticList) list() []any             { return l.store.List() }

func (l *staticList) gone(string, string) (any, time.Time, bool) { return nil, time.Time{}, false }

// noted is zero: a list is one moment, not a history.
func (l *staticList) noted(string, string) time.Time { return time.Time{} }

func (l *staticList) object(namespace, name string) (any, bool) {
	obj, ok, err := l.store.GetByKey(storeKey(namespace, name))
	return obj, ok && err == nil
}
