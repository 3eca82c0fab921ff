package verify

import (
	"maps"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/org/app-status-action/internal/assess"
)

// One assessment reads one unchanging set of lists. A watch's store changes while its
// reflector runs; an assessment pass (assess.Assess once) reads a frozen copy of it instead:
// the watches' stores are copied at the start of the pass, all at the same moment, and every
// other list on its first read in the pass, and nothing the pass reads changes until it ends.
// A copy is cheap: a store's objects are never modified once stored (a change stores a new
// object), so it copies the key-to-object map, and a store that did not change since its last
// copy gives that copy again (its generation, counted under the lock of each change, is the
// same).

// itemStore is a store's objects by key: a cache.Store (as client-go's threadSafeStore, with
// MetaNamespaceKeyFunc) whose generation counts its changes under the lock that makes them,
// so a copy taken at one generation holds exactly that generation's objects.
type itemStore struct {
	mu     sync.RWMutex
	items  map[string]any
	facts  map[string]assess.ObjectFacts // of the objects that have any
	gen    uint64
	frozen *frozenItems // the last copy, of generation frozen.gen
	rv     string       // the last list's or bookmark's resourceVersion (cache.Store's)
}

// frozenItems is a store's objects at one generation. Nothing changes it once made.
type frozenItems struct {
	gen   uint64
	items map[string]any
	facts map[string]assess.ObjectFacts
	list  []any
}

// put stores obj under its key with what was learned of it (Add, Update).
func (s *itemStore) put(obj any, facts assess.ObjectFacts) error {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return cache.KeyError{Obj: obj, Err: err}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil {
		s.items = map[string]any{}
	}
	s.items[key] = obj
	if facts.IsZero() {
		delete(s.facts, key)
	} else {
		if s.facts == nil {
			s.facts = map[string]assess.ObjectFacts{}
		}
		s.facts[key] = facts
	}
	s.gen++
	return nil
}

func (s *itemStore) Add(obj any) error    { return s.put(obj, assess.ObjectFacts{}) }
func (s *itemStore) Update(obj any) error { return s.put(obj, assess.ObjectFacts{}) }

// factsOf is what was learned of the object stored under key.
func (s *itemStore) factsOf(key string) assess.ObjectFacts {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.facts[key]
}

func (s *itemStore) Delete(obj any) error {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return cache.KeyError{Obj: obj, Err: err}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, key)
	delete(s.facts, key)
	s.gen++
	return nil
}

func (s *itemStore) List() []any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	list := make([]any, 0, len(s.items))
	for _, obj := range s.items {
		list = append(list, obj)
	}
	return list
}

func (s *itemStore) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := make([]string, 0, len(s.items))
	for key := range s.items {
		keys = append(keys, key)
	}
	return keys
}

func (s *itemStore) Get(obj any) (item any, exists bool, err error) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return nil, false, cache.KeyError{Obj: obj, Err: err}
	}
	return s.GetByKey(key)
}

func (s *itemStore) GetByKey(key string) (item any, exists bool, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	item, exists = s.items[key]
	return item, exists, nil
}

// Replace stores exactly list (a reflector's list).
func (s *itemStore) Replace(list []any, resourceVersion string) error {
	return s.replace(list, nil, resourceVersion)
}

// replace stores exactly list, with what was learned of its objects by key.
func (s *itemStore) replace(list []any, facts map[string]assess.ObjectFacts, resourceVersion string) error {
	items := make(map[string]any, len(list))
	for _, obj := range list {
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			return cache.KeyError{Obj: obj, Err: err}
		}
		items[key] = obj
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items, s.facts, s.rv = items, facts, resourceVersion
	s.gen++
	return nil
}

func (s *itemStore) Resync() error { return nil }

func (s *itemStore) Bookmark(rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv = rv
}

func (s *itemStore) LastStoreSyncResourceVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rv
}

// freeze returns the store's objects as they are now: the last copy when nothing changed
// since it was made.
func (s *itemStore) freeze() *frozenItems {
	s.mu.RLock()
	if f := s.frozen; f != nil && f.gen == s.gen {
		s.mu.RUnlock()
		return f
	}
	f := &frozenItems{gen: s.gen, items: maps.Clone(s.items), facts: maps.Clone(s.facts), list: make([]any, 0, len(s.items))}
	s.mu.RUnlock()
	for _, obj := range f.items {
		f.list = append(f.list, obj)
	}
	s.mu.Lock()
	if s.frozen == nil || s.frozen.gen < f.gen {
		s.frozen = f
	}
	s.mu.Unlock()
	return f
}

// frozenList is a watch as one assessment pass reads it: its objects, what its history says
// of them, its error, whether it has its first list and its revision, all as of the moment
// the pass began. live is the watch itself, whose first list a wait may follow
// (Assessment.InFlight).
type frozenList struct {
	live     *watch
	read     assess.ReadFacts
	items    *frozenItems
	synced   bool
	err      error
	revision string
	objects  map[string]string // the revisions single objects are proven at (objectRevisions)
	gone     map[string]tombstone
	notes    map[string]time.Time
}

// passMoment is when a pass assesses: now, by the run's clock, and wall, by the machine's,
// when the process's CPU (cpu, by the wall clock) says whether a slow first list may be this
// process's doing.
type passMoment struct {
	now, wall time.Time
	cpu       *cpuWatch
}

// freeze copies w as it is at m. Its revision is read before its objects: the objects are
// then no older than the revision the copy says, which is what a revision is for (a
// confirmation that they were read after an owner's status).
func (w *watch) freeze(m passMoment) *frozenList {
	f := &frozenList{live: w, revision: w.Revision(), synced: w.Synced()}
	w.mu.Lock()
	f.err, f.read = w.last, assess.ReadFacts{Failure: w.failure}
	w.mu.Unlock()
	if waited := m.now.Sub(w.since); !f.synced && f.err == nil && waited >= assess.SlowListAfter {
		// The scheduler's latencies are by the wall clock: the wait began that long ago.
		if worst, starved := m.cpu.starvedSince(m.wall.Add(-waited)); starved {
			short := worst.facts()
			f.read.CPUShort = &short
		}
	}
	f.items = w.store.freeze()
	f.objects = w.objectRevisions(f.items)
	if w.store.keepGone {
		w.store.goneMu.Lock()
		f.gone = maps.Clone(w.store.deleted)
		w.store.goneMu.Unlock()
	}
	if w.store.note != nil {
		w.store.notesMu.Lock()
		f.notes = maps.Clone(w.store.notes)
		w.store.notesMu.Unlock()
	}
	return f
}

func (f *frozenList) Synced() bool            { return f.synced }
func (f *frozenList) Err() error              { return f.err }
func (f *frozenList) Read() assess.ReadFacts  { return f.read }
func (f *frozenList) WaitingSince() time.Time { return f.live.since }
func (f *frozenList) Revision() string        { return f.revision }

func (f *frozenList) ObjectRevision(namespace, name string) string {
	return f.objects[storeKey(namespace, name)]
}

// Items are the objects; the slice is shared by the passes that read this copy, and only
// read.
func (f *frozenList) Items() []any { return f.items.list[:len(f.items.list):len(f.items.list)] }

func (f *frozenList) Object(namespace, name string) (any, bool) {
	obj, ok := f.items.items[storeKey(namespace, name)]
	return obj, ok
}

func (f *frozenList) Facts(namespace, name string) assess.ObjectFacts {
	return f.items.facts[storeKey(namespace, name)]
}

func (f *frozenList) Noted(namespace, name string) time.Time {
	return f.notes[storeKey(namespace, name)]
}

func (f *frozenList) Gone(namespace, name string) (any, time.Time, bool) {
	t, ok := f.gone[storeKey(namespace, name)]
	return t.last, t.at, ok
}

// passLists is the lists of one assessment pass: every watch of a watchSet frozen when it is
// made, any other list frozen on its first read (a list read once, staticList, never
// changes). It only reads; the fetching side keeps using the lists it was made of.
type passLists struct {
	lists  objectCache
	moment passMoment
	frozen map[assess.ListKey]assess.List
}

// freezeLists starts a pass over lists at m.
func freezeLists(lists objectCache, m passMoment) *passLists {
	p := &passLists{lists: lists, moment: m, frozen: map[assess.ListKey]assess.List{}}
	if ws, ok := lists.(*watchSet); ok {
		ws.mu.Lock()
		watches := make([]*watch, 0, len(ws.watches))
		keys := make([]assess.ListKey, 0, len(ws.watches))
		for key, w := range ws.watches {
			keys, watches = append(keys, key), append(watches, w)
		}
		ws.mu.Unlock()
		for i, w := range watches {
			p.frozen[keys[i]] = w.freeze(m)
		}
	}
	return p
}

// peek returns the pass's copy of key's list, freezing it on its first read in the pass.
func (p *passLists) peek(key assess.ListKey) (assess.List, bool) {
	if l, ok := p.frozen[key]; ok {
		return l, true
	}
	l, ok := p.lists.peek(key)
	if !ok {
		return nil, false
	}
	l = frozen(l, p.moment)
	p.frozen[key] = l
	return l, true
}

// get is the fetching side's: a pass never starts a read.
func (p *passLists) get(key assess.ListKey) assess.List { return p.lists.get(key) }

// frozen is l as it is now: a watch's copy, a list read anew over a watch's history with that
// history copied; any other list as it is (a list read once does not change).
func frozen(l assess.List, m passMoment) assess.List {
	switch l := l.(type) {
	case *watch:
		return l.freeze(m)
	case historyList:
		if w, ok := l.watched.(*watch); ok {
			return historyList{staticList: l.staticList, watched: w.freeze(m)}
		}
	}
	return l
}

// liveLists gives back, for each list of an assessment's InFlight, the list it was frozen
// from, or, for a list the view had not asked for, the one lists holds since (the fetch after
// the decision started it): a wait follows the live list's first list.
func liveLists(ls []assess.List, lists objectCache) {
	for i, l := range ls {
		if f, ok := l.(*frozenList); ok {
			ls[i] = f.live
		} else if key, notAsked := assess.NotAsked(l); notAsked {
			if live, ok := lists.peek(key); ok {
				ls[i] = live
			}
		}
	}
}
