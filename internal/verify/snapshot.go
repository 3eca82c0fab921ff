package verify

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/org/app-status-action/internal/assess"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// snapshotListTimeout bounds each list of a snapshot: `get` answers within seconds whatever
// the servers do.
const snapshotListTimeout = 5 * time.Second

// listSet reads each kind once, with a list: the objectCache of a snapshot (app-status get),
// which starts no watch.
type listSet struct {
	ctx     context.Context
	readers readers
	clock   func() time.Time
	order   *readOrder
	timeout time.Duration
	lists   map[assess.ListKey]*staticList
}

// staticList is one kind in one namespace as one list found it.
type staticList struct {
	store   cache.Store
	listErr error
	since   time.Time
	// revision is the list's resourceVersion; sent and done place the read among the
	// cluster's others (assess.Snapshot).
	revision   string
	sent, done uint64
	// facts are what the transform learned of the objects that have any, by key.
	facts map[string]assess.ObjectFacts
}

// newListSet reads each list within timeout (snapshotListTimeout for get, the watches'
// listTimeout for a confirmation), numbering the reads with order.
func newListSet(ctx context.Context, r readers, clock func() time.Time, order *readOrder, timeout time.Duration) *listSet {
	return &listSet{ctx: ctx, readers: r, clock: clock, order: order, timeout: timeout, lists: map[assess.ListKey]*staticList{}}
}

// readOrder numbers the list reads of one cluster (assess.Snapshot): how many had returned when
// each was requested, and the rank of each answer.
type readOrder struct{ returned atomic.Uint64 }

// get lists key now, the first time it is asked for, within the set's timeout.
func (s *listSet) get(key assess.ListKey) assess.List {
	if l, ok := s.lists[key]; ok {
		return l
	}
	l := s.list(key)
	s.lists[key] = l
	return l
}

// prefetchLimit bounds the lists of one cluster that prefetch has on their way at once.
const prefetchLimit = 8

// prefetch lists at once, concurrently, each of keys not read yet: a confirmation's lists cost
// one round trip, not one each. Each read is numbered as get numbers it (its sent is how many
// had returned when it was sent), so reads that go out together prove nothing of each other's
// order: only where the server's revisions are numbers, and each list is compared by its own,
// may a caller prefetch (a classifier's failure reads the workload, then its ReplicaSets and
// Pods, and where revisions are no numbers that order is the proof).
func (s *listSet) prefetch(keys []assess.ListKey) {
	var missing []assess.ListKey
	for _, key := range keys {
		if _, ok := s.lists[key]; !ok && !slices.Contains(missing, key) {
			missing = append(missing, key)
		}
	}
	if len(missing) == 1 {
		s.get(missing[0])
		return
	}
	read := make([]*staticList, len(missing))
	var g errgroup.Group
	g.SetLimit(prefetchLimit)
	for i, key := range missing {
		g.Go(func() error {
			read[i] = s.list(key)
			return nil
		})
	}
	_ = g.Wait() // (each list keeps its own error)
	for i, key := range missing {
		s.lists[key] = read[i]
	}
}

// list reads key, within the set's timeout.
func (s *listSet) list(key assess.ListKey) *staticList {
	l := &staticList{store: cache.NewStore(cache.MetaNamespaceKeyFunc), since: s.clock()}
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	defer cancel()
	if s.order != nil {
		l.sent = s.order.returned.Load()
		defer func() { l.done = s.order.returned.Add(1) }()
	}
	ri, _ := s.readers.lister(key)
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		l.listErr = err
		return l
	}
	if acc, err := meta.ListAccessor(list); err == nil {
		l.revision = acc.GetResourceVersion()
	}
	transform := transformFor(key)
	_ = meta.EachListItem(list, func(it runtime.Object) error {
		obj, facts, err := transform(it)
		if err != nil {
			return nil
		}
		if acc, err := meta.Accessor(obj); err == nil {
			_ = l.store.Add(obj)
			if !facts.IsZero() {
				if l.facts == nil {
					l.facts = map[string]assess.ObjectFacts{}
				}
				l.facts[storeKey(acc.GetNamespace(), acc.GetName())] = facts
			}
		}
		return nil
	})
	return l
}

func (l *staticList) Synced() bool            { return l.listErr == nil }
func (l *staticList) Err() error              { return l.listErr }
func (l *staticList) WaitingSince() time.Time { return l.since }
func (l *staticList) Items() []any            { return l.store.List() }

// Read classifies the list's error, which never changes once read.
func (l *staticList) Read() assess.ReadFacts {
	if l.listErr == nil {
		return assess.ReadFacts{}
	}
	return assess.ReadFacts{Failure: readFailure(l.listErr)}
}

func (l *staticList) Gone(string, string) (any, time.Time, bool) { return nil, time.Time{}, false }

// noted is zero: a list is one moment, not a history.
func (l *staticList) Noted(string, string) time.Time { return time.Time{} }

func (l *staticList) Facts(namespace, name string) assess.ObjectFacts {
	return l.facts[storeKey(namespace, name)]
}

func (l *staticList) Object(namespace, name string) (any, bool) {
	obj, ok, err := l.store.GetByKey(storeKey(namespace, name))
	return obj, ok && err == nil
}

// peek returns the list of key when it was read; it reads nothing.
func (s *listSet) peek(key assess.ListKey) (assess.List, bool) {
	l, ok := s.lists[key]
	if !ok {
		return nil, false
	}
	return l, true
}

// keys are the lists read, in no particular order.
func (s *listSet) keys() []assess.ListKey {
	keys := make([]assess.ListKey, 0, len(s.lists))
	for key := range s.lists {
		keys = append(keys, key)
	}
	return keys
}

// ReadOrder places the list among the cluster's reads (assess.Snapshot).
func (l *staticList) ReadOrder() (sent, done uint64) { return l.sent, l.done }

// Revision is the list's resourceVersion (assess.Snapshot).
func (l *staticList) Revision() string { return l.revision }
