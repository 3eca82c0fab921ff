package verify

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/wait"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/flux"
)

// objectCache is where a cluster's objects are read, one kind in one namespace at a time: the
// informers' caches while the engine waits (watchSet), one list per kind for a snapshot
// (listSet), or fixtures in unit tests.
type objectCache interface {
	// get returns the objects of key, starting to read them on first use (the fetching side).
	get(key assess.ListKey) assess.List
	// peek returns the objects of key when they were asked for, and starts nothing (the
	// view an assessment reads).
	peek(key assess.ListKey) (assess.List, bool)
}

// Read bounds: a list that takes longer is abandoned and retried by the informer; watches are
// long-lived and bounded by the run alone.
const listTimeout = 30 * time.Second

// watchSet holds the reflectors of one cluster: one list and one watch per resource type and
// namespace, however many objects of that type the app has. Every change calls notify. close
// stops them and waits until every goroutine they started has returned.
type watchSet struct {
	ctx      context.Context
	cancel   context.CancelFunc
	readers  readers
	notify   func()
	notifyCh chan struct{} // what notify signals, for the cluster's loop
	clock    func() time.Time

	wg      sync.WaitGroup
	mu      sync.Mutex
	watches map[assess.ListKey]*watch
}

// watch is one reflector (a list, then a watch, listing again when the watch ends), the store
// it fills and the last error its list or watch met.
type watch struct {
	store *notifyingStore
	since time.Time
	// confirmed is the revision a quorum list of the kind found the cache equal to
	// (confirmWatches), valid while the store made no change since (confirmedAt).
	confirmedMu sync.Mutex
	confirmed   string
	confirmedAt uint64
	// objects are the single objects quorum reads proved (confirmObjects), by store key:
	// valid while the store holds each at the resourceVersion its read found.
	objects map[string]objectProof
	// onErr is called when a list or watch fails: the cluster re-assesses (a failed first
	// list gives its connect slot back).
	onErr func()
	mu    sync.Mutex
	last  error
	// failure is last classified when it was recorded (readFailure).
	failure assess.ReadFailure
}

// notifyingStore is a reflector's store: it converts objects as they arrive (transformFor),
// keeps them, and calls onChange after every change. It is synced once the first list is in.
type notifyingStore struct {
	itemStore
	// changes counts the changes the store received (a cache confirmed at one count is the
	// same at that count).
	changes atomic.Uint64
	// position is the resourceVersion the watch stream has delivered up to (streamPosition).
	positionMu sync.Mutex
	position   string
	transform  transformFunc
	onChange   func()
	isSynced   atomic.Bool
	// keepGone keeps the last state of deleted objects in deleted: a Job deleted after it
	// finished (ttlSecondsAfterFinished) is still listed by its Flux inventory.
	keepGone bool
	// carry, when set, brings what an object's new state forgot from its previous one
	// (keepPullErrors).
	carry func(old, cur any) any
	// note, when set, reads a moment from each state of an object the store receives; the
	// latest per object is kept in notes.
	note    func(obj any) (time.Time, bool)
	notesMu sync.Mutex
	notes   map[string]time.Time
	clock   func() time.Time
	goneMu  sync.Mutex
	deleted map[string]tombstone
}

// tombstone is the last state of a deleted object and when the store saw it deleted.
type tombstone struct {
	last any
	at   time.Time
}

// remember keeps the last state of an object that was deleted, as a watch event gives it
// (transformed first, as the store's objects are).
func (n *notifyingStore) remember(obj any) {
	if !n.keepGone {
		return
	}
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	o, _, err := n.transform(obj)
	if err != nil {
		return
	}
	n.keepLast(key, o)
}

// keepLast keeps o, already transformed (the store's own state), as the last state of the
// deleted object key. It is never transformed again: a transform changes its input (a typed
// object's kind, its managedFields), and an assessment may be reading the store's state.
func (n *notifyingStore) keepLast(key string, o any) {
	n.goneMu.Lock()
	defer n.goneMu.Unlock()
	if n.deleted == nil {
		n.deleted = map[string]tombstone{}
	}
	n.deleted[key] = tombstone{last: o, at: n.clock()}
}

// revive forgets that an object was deleted: it exists again.
func (n *notifyingStore) revive(obj any) {
	if !n.keepGone {
		return
	}
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		n.goneMu.Lock()
		delete(n.deleted, key)
		n.goneMu.Unlock()
	}
}

func (n *notifyingStore) gone(key string) (any, time.Time, bool) {
	n.goneMu.Lock()
	defer n.goneMu.Unlock()
	t, ok := n.deleted[key]
	return t.last, t.at, ok
}

func (n *notifyingStore) Add(obj any) error {
	n.changes.Add(1)
	o, facts, err := n.transform(obj)
	if err != nil {
		n.lose()
		return err
	}
	n.noteOf(o)
	n.revive(o)
	err = n.put(o, facts)
	n.advance(objectRevision(o))
	n.onChange()
	return err
}

func (n *notifyingStore) Update(obj any) error {
	n.changes.Add(1)
	o, facts, err := n.transform(obj)
	if err != nil {
		n.lose()
		return err
	}
	o = n.carried(o)
	n.noteOf(o)
	n.revive(o)
	err = n.put(o, facts)
	n.advance(objectRevision(o))
	n.onChange()
	return err
}

func (n *notifyingStore) Delete(obj any) error {
	n.changes.Add(1)
	n.remember(obj)
	err := n.itemStore.Delete(obj)
	n.advance(objectRevision(obj))
	n.onChange()
	return err
}

func (n *notifyingStore) Replace(items []any, resourceVersion string) error {
	n.changes.Add(1)
	converted := make([]any, 0, len(items))
	var facts map[string]assess.ObjectFacts
	for _, it := range items {
		o, f, err := n.transform(it)
		if err != nil {
			return err
		}
		o = n.carried(o)
		n.noteOf(o)
		converted = append(converted, o)
		if !f.IsZero() {
			if key, err := cache.MetaNamespaceKeyFunc(o); err == nil {
				if facts == nil {
					facts = map[string]assess.ObjectFacts{}
				}
				facts[key] = f
			}
		}
	}
	if n.keepGone {
		// Objects deleted while the watch was down vanish from a new list.
		listed := map[string]bool{}
		for _, o := range converted {
			if key, err := cache.MetaNamespaceKeyFunc(o); err == nil {
				listed[key] = true
			}
		}
		for _, o := range n.List() {
			if key, err := cache.MetaNamespaceKeyFunc(o); err == nil && !listed[key] {
				n.keepLast(key, o)
			}
		}
		for _, o := range converted {
			n.revive(o)
		}
	}
	err := n.replace(converted, facts, resourceVersion)
	n.setPosition(resourceVersion)
	n.isSynced.Store(true)
	n.onChange()
	return err
}

func (n *notifyingStore) Resync() error { return nil }

// The watch stream's position. A reflector lists, then watches from the list's
// resourceVersion: the API server sends that watch's events in the order of their
// resourceVersions, each event's object carrying the revision of its change (a deletion's,
// the revision that deleted it), and bookmarks carry the revision the stream has reached. So a
// store that has taken in the list and every event up to revision R holds the kind in that
// namespace exactly as of R: Revision can say so without asking the cluster
// (assess.Snapshot), and a confirmation needs no list for a watch whose stream has passed
// the owner's status.

// advance moves the position to rv when the store has taken in a change of the stream at rv:
// forward only, where revisions compare; a store whose server's revisions are no numbers
// keeps none (streamPosition).
func (n *notifyingStore) advance(rv string) {
	if rv == "" {
		return
	}
	n.positionMu.Lock()
	defer n.positionMu.Unlock()
	if n.position == "" {
		return // no list taken in yet: the stream has no known start
	}
	if c, err := resourceversion.CompareResourceVersion(rv, n.position); err == nil && c > 0 {
		n.position = rv
	}
}

// lose forgets the position when the store could not take in a change of the stream (an
// object that does not convert): the reflector goes on past it, so the store no longer holds
// the kind as of any revision the stream reaches, until a list is taken in whole again.
func (n *notifyingStore) lose() {
	n.positionMu.Lock()
	defer n.positionMu.Unlock()
	n.position = ""
}

// setPosition is the position after a list at rv was taken in whole (Replace).
func (n *notifyingStore) setPosition(rv string) {
	n.positionMu.Lock()
	defer n.positionMu.Unlock()
	if !numbered(rv) {
		n.position = ""
		return
	}
	n.position = rv
}

// UpdateResourceVersion is the reflector's word that its watch reached rv, after an event or
// with a bookmark (cache.ResourceVersionUpdater): a bookmark past the owner's status confirms
// a kind that did not change, so the cluster assesses again when the position moves.
func (n *notifyingStore) UpdateResourceVersion(rv string) {
	n.positionMu.Lock()
	before := n.position
	n.positionMu.Unlock()
	n.advance(rv)
	n.positionMu.Lock()
	moved := n.position != before
	n.positionMu.Unlock()
	if moved {
		n.onChange()
	}
}

// streamPosition is the revision the store holds the kind as of, from its watch stream; ""
// before the first list or where revisions are no numbers.
func (n *notifyingStore) streamPosition() string {
	n.positionMu.Lock()
	defer n.positionMu.Unlock()
	return n.position
}

// objectRevision is the resourceVersion of a watch event's object.
func objectRevision(obj any) string {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return acc.GetResourceVersion()
}

// noteOf keeps the moment note reads from a state of an object, when it is the latest.
func (n *notifyingStore) noteOf(obj any) {
	if n.note == nil {
		return
	}
	t, ok := n.note(obj)
	if !ok {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	n.notesMu.Lock()
	defer n.notesMu.Unlock()
	if n.notes == nil {
		n.notes = map[string]time.Time{}
	}
	if t.After(n.notes[key]) {
		n.notes[key] = t
	}
}

func (n *notifyingStore) notedAt(key string) time.Time {
	n.notesMu.Lock()
	defer n.notesMu.Unlock()
	return n.notes[key]
}

// carried applies carry to an object's new state and the state the store holds.
func (n *notifyingStore) carried(cur any) any {
	if n.carry == nil {
		return cur
	}
	if old, ok, err := n.Get(cur); err == nil && ok {
		return n.carry(old, cur)
	}
	return cur
}

// reconnectBackoff is how a reflector waits before it lists or watches again after a
// failure: from half a second, doubling, never more than 5s, so that watches come back within
// seconds of an API server's restart. (client-go's informers wait up to 30s, and do not let
// that be changed.)
var reconnectBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: 5 * time.Second}

func newWatchSet(ctx context.Context, r readers, clock func() time.Time, notify func()) *watchSet {
	ctx, cancel := context.WithCancel(ctx)
	return &watchSet{ctx: ctx, cancel: cancel, readers: r, notify: notify, clock: clock, watches: map[assess.ListKey]*watch{}}
}

// close stops every informer and waits for their goroutines.
func (s *watchSet) close() {
	s.cancel()
	s.wg.Wait()
}

// plainListWatch is a list+watch with a deadline on every list, which tells the reflector to
// list and then watch rather than stream its first list through a watch (client-go's
// WatchListClient): a server whose watches hang then still answers the list, and a list that
// hangs is abandoned and retried.
type plainListWatch struct {
	cache.ListWatch
}

// IsWatchListSemanticsUnSupported makes the reflector list, then watch.
func (plainListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// listWatch returns the list and watch functions of key and an example object. Each call
// records its outcome on w: an error while the reflector retries, nil once a list or a watch
// succeeds again.
func (s *watchSet) listWatch(key assess.ListKey, w *watch) (*plainListWatch, runtime.Object) {
	ri, example := s.readers.lister(key)
	return &plainListWatch{cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			lctx, cancel := context.WithTimeout(ctx, listTimeout)
			defer cancel()
			obj, err := ri.List(lctx, opts)
			if err == nil || ctx.Err() == nil {
				// (A list the cluster's own end stopped, its deadline or a cancel, failed by
				// no fault of the server's: it is not the cluster's state, nor a reason to
				// judge it once more.)
				w.setErr(err)
			}
			return obj, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (apiwatch.Interface, error) {
			wi, err := ri.Watch(ctx, opts)
			if err != nil && ctx.Err() == nil {
				w.setErr(err)
			}
			return wi, err
		},
	}}, example
}

// get returns the watch for key, starting it on first use.
func (s *watchSet) get(key assess.ListKey) assess.List {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.watches[key]; ok {
		return w
	}
	w := &watch{since: s.clock(), onErr: s.notify}
	w.store = &notifyingStore{transform: transformFor(key), onChange: s.notify,
		keepGone: key.GVR == assess.JobsGVR, clock: s.clock}
	switch key.GVR {
	case assess.PodsGVR:
		w.store.carry = keepPullErrors
	case flux.KindHelmRelease.GroupVersionResource():
		w.store.note = reconcileStarted
	}
	lw, example := s.listWatch(key, w)
	backoff := reconnectBackoff
	r := cache.NewReflectorWithOptions(lw, example, w.store, cache.ReflectorOptions{
		Name: key.GVR.String() + " in " + key.Namespace, TypeDescription: key.GVR.String(), Backoff: &backoff,
	})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		r.RunWithContext(s.ctx)
	}()
	s.watches[key] = w
	return w
}

// transformFunc converts an object as it arrives, and says what it learned of it from what it
// dropped (assess.ObjectFacts), which the store keeps beside it.
type transformFunc func(obj any) (any, assess.ObjectFacts, error)

// transformFor converts the objects of a kind as they arrive: the classifier's kinds to typed
// objects, every other kind stripped of what no verdict reads.
func transformFor(key assess.ListKey) transformFunc {
	if kind, ok := builtinKinds[key.GVR]; ok {
		return kind.transform
	}
	if key.Metadata() {
		return keepFieldManagers
	}
	if key.GVR == flux.KindResourceSet.GroupVersionResource() {
		return keepSpecWriters
	}
	return stripManagedFields
}

func (w *watch) setErr(err error) {
	var failure assess.ReadFailure
	if err != nil {
		failure = readFailure(err)
	}
	w.mu.Lock()
	w.last, w.failure = err, failure
	w.mu.Unlock()
	if err != nil && w.onErr != nil {
		w.onErr()
	}
}

func (w *watch) Synced() bool { return w.store.isSynced.Load() }

func (w *watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

func (w *watch) WaitingSince() time.Time { return w.since }

// Read is why the watch's last read failed. Whether this process was short of CPU meanwhile
// is said by its frozen copies (watch.freeze), which know the moment of the pass.
func (w *watch) Read() assess.ReadFacts {
	w.mu.Lock()
	defer w.mu.Unlock()
	return assess.ReadFacts{Failure: w.failure}
}

func (w *watch) Object(namespace, name string) (any, bool) {
	obj, ok, err := w.store.GetByKey(storeKey(namespace, name))
	return obj, ok && err == nil
}

func (w *watch) Items() []any { return w.store.List() }

func (w *watch) Noted(namespace, name string) time.Time {
	return w.store.notedAt(storeKey(namespace, name))
}

func (w *watch) Gone(namespace, name string) (any, time.Time, bool) {
	return w.store.gone(storeKey(namespace, name))
}

func (w *watch) Facts(namespace, name string) assess.ObjectFacts {
	return w.store.factsOf(storeKey(namespace, name))
}

func storeKey(namespace, name string) string {
	if namespace != "" {
		return namespace + "/" + name
	}
	return name
}

// stripManagedFields drops what no verdict reads, to keep memory flat with many objects:
// managedFields, once read (vetAnnotations, kustomizeSkip, templateWrittenOf: the object's
// facts), and kubectl's last-applied-configuration (dropLastApplied).
func stripManagedFields(obj any) (any, assess.ObjectFacts, error) {
	var facts assess.ObjectFacts
	if acc, err := meta.Accessor(obj); err == nil {
		facts.NotFromGit = vetAnnotations(acc)
		facts.KustomizeSkip = kustomizeSkip(acc)
		facts.TemplateWritten = templateWrittenOf(obj)
		acc.SetManagedFields(nil)
		dropLastApplied(obj, acc)
	}
	return obj, facts, nil
}

// dropLastApplied drops kubectl's copy of the object as it was last applied client-side
// (kubectl apply without --server-side): the whole manifest again as JSON, as large as the
// rest of the object. No verdict reads it. An unstructured object's annotations are edited in
// place (its GetAnnotations copies them).
func dropLastApplied(obj any, acc metav1.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		md, _ := u.Object["metadata"].(map[string]any)
		annotations, _ := md["annotations"].(map[string]any)
		if _, ok := annotations[corev1.LastAppliedConfigAnnotation]; !ok {
			return
		}
		delete(annotations, corev1.LastAppliedConfigAnnotation)
		if len(annotations) == 0 {
			delete(md, "annotations")
		}
		return
	}
	annotations := acc.GetAnnotations()
	if _, ok := annotations[corev1.LastAppliedConfigAnnotation]; !ok {
		return
	}
	delete(annotations, corev1.LastAppliedConfigAnnotation)
	if len(annotations) == 0 {
		acc.SetAnnotations(nil)
	}
}

// reconcileStarted reads when helm-controller started its reconcile of a HelmRelease
// (flux.ReconcileStarted).
func reconcileStarted(obj any) (time.Time, bool) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return time.Time{}, false
	}
	return flux.ReconcileStarted(u)
}

// keepFieldManagers keeps who applied an object and when (a HelmRelease's values source, see
// flux.StaleValues), dropping the field sets, which are most of managedFields' size, and
// kubectl's last-applied-configuration (dropLastApplied).
func keepFieldManagers(obj any) (any, assess.ObjectFacts, error) {
	if acc, err := meta.Accessor(obj); err == nil {
		fields := acc.GetManagedFields()
		for i := range fields {
			fields[i].FieldsV1 = nil
		}
		acc.SetManagedFields(fields)
		dropLastApplied(obj, acc)
	}
	return obj, assess.ObjectFacts{}, nil
}

// keepSpecWriters is stripManagedFields that keeps, of the managedFields, when the spec was
// written: the entries that own fields of it, with their time, their field sets cut to
// {"f:spec": {}} (flux.ResourceSetReadyBeforeSpec dates a ResourceSet's Ready by it).
func keepSpecWriters(obj any) (any, assess.ObjectFacts, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return obj, assess.ObjectFacts{}, nil
	}
	var writers []metav1.ManagedFieldsEntry
	for _, f := range acc.GetManagedFields() {
		if f.FieldsV1 == nil || f.Time == nil {
			continue
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(f.FieldsV1.GetRawBytes(), &top) != nil {
			continue
		}
		if _, owns := top["f:spec"]; owns {
			f.FieldsV1 = metav1.NewFieldsV1(`{"f:spec":{}}`)
			writers = append(writers, f)
		}
	}
	obj, facts, err := stripManagedFields(obj)
	if err != nil {
		return nil, facts, err
	}
	acc.SetManagedFields(writers)
	return obj, facts, nil
}

// keys are the lists watched, in no particular order.
func (s *watchSet) keys() []assess.ListKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]assess.ListKey, 0, len(s.watches))
	for key := range s.watches {
		keys = append(keys, key)
	}
	return keys
}

// peek returns the watch of key when one was started; it starts none.
func (s *watchSet) peek(key assess.ListKey) (assess.List, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.watches[key]
	if !ok {
		return nil, false
	}
	return w, true
}

// Revision is the latest revision the cache is known to hold the cluster as of
// (assess.Snapshot): its watch stream's position, or the revision a quorum list found the
// cache equal to while the cache has not changed since, whichever is later; "" when neither.
func (w *watch) Revision() string {
	position := w.store.streamPosition()
	w.confirmedMu.Lock()
	defer w.confirmedMu.Unlock()
	if w.confirmed == "" || w.store.changes.Load() != w.confirmedAt {
		return position
	}
	if c, err := resourceversion.CompareResourceVersion(position, w.confirmed); err == nil && c > 0 {
		return position
	}
	return w.confirmed
}

// objectProof is what a quorum read of one object proved: the object at resourceVersion rv
// is the cluster's as of atLeast (assess.ObjectProof).
type objectProof struct {
	rv, atLeast string
}

// confirmObject records that a quorum read following revision atLeast found the object the
// store holds under key at resourceVersion rv.
func (w *watch) confirmObject(key, rv, atLeast string) {
	w.confirmedMu.Lock()
	defer w.confirmedMu.Unlock()
	if w.objects == nil {
		w.objects = map[string]objectProof{}
	}
	if p, ok := w.objects[key]; ok && p.rv == rv {
		if c, err := resourceversion.CompareResourceVersion(p.atLeast, atLeast); err == nil && c > 0 {
			return // (a read for a later owner's status proved more already)
		}
	}
	w.objects[key] = objectProof{rv: rv, atLeast: atLeast}
}

// objectRevisions are the revisions the objects of items are proven at (assess.ObjectSnapshot),
// by store key: of the objects still at the resourceVersion their read found. A proof of an
// object that changed since is dropped: an object's resourceVersion never comes back.
func (w *watch) objectRevisions(items *frozenItems) map[string]string {
	w.confirmedMu.Lock()
	defer w.confirmedMu.Unlock()
	if len(w.objects) == 0 {
		return nil
	}
	out := make(map[string]string, len(w.objects))
	for key, p := range w.objects {
		if obj, ok := items.items[key]; !ok || objectRevision(obj) != p.rv {
			delete(w.objects, key)
			continue
		}
		out[key] = p.atLeast
	}
	return out
}

// confirm records that the cache, at the store's count of changes at, holds exactly what a
// quorum list found at revision.
func (w *watch) confirm(revision string, at uint64) {
	w.confirmedMu.Lock()
	defer w.confirmedMu.Unlock()
	w.confirmed, w.confirmedAt = revision, at
}
