package verify

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// clusterView is what was read of a cluster, as assess.Assess reads it: the watches (or a
// snapshot's lists), as one pass's frozen copies (passLists), discovery's answers and the Helm
// release records. It only reads.
type clusterView struct {
	s     *clusterState
	lists objectCache
}

func (v clusterView) List(key assess.ListKey) (assess.List, bool) { return v.lists.peek(key) }

func (v clusterView) Mapping(gvk schema.GroupVersionKind) assess.Mapping {
	return v.s.peekMapping(gvk)
}

func (v clusterView) Release(key string) (assess.StoredRelease, bool) {
	v.s.releasesMu.Lock()
	defer v.s.releasesMu.Unlock()
	r, ok := v.s.releases[key]
	return r, ok
}

func (v clusterView) Config(key string) (assess.StoredConfig, bool) { return v.s.config(key) }

// spec is what the cluster verifies, as the decision takes it.
func (s *clusterState) spec() assess.Spec {
	return assess.Spec{Resources: s.req.Resources, Revision: s.req.Revision, Workloads: s.req.Workloads,
		FailOnSuspended: s.req.FailOnSuspended, Classify: s.req.Classify, Snapshot: s.req.Snapshot,
		Health: fluxhealth.New(s.ctx), NotFoundGrace: s.req.NotFoundGrace}
}

// moment is the moment of an assessment pass at now, as its frozen lists are taken.
func (s *clusterState) moment(now time.Time) passMoment {
	return passMoment{now: now, wall: time.Now(), cpu: s.req.cpu}
}

// maxFetchRounds bounds the rounds of one assessment (assess, fetch what it needs, assess
// again): a tree is read a level a round.
const maxFetchRounds = 16

// assess decides the cluster's state from what its watches (or lists) hold at now, fetching
// what the decision lacks and deciding again while a fetch completed something: a list (for a
// snapshot, read at once; for watches, opened, so the next assessment knows it is on its
// way), a kind's mapping, a Helm release record.
func (s *clusterState) assess(now time.Time) *assess.Assessment {
	return s.assessFrom(s.watches, now)
}

func (s *clusterState) assessFrom(lists objectCache, now time.Time) *assess.Assessment {
	// What the last assessment waited for is taken in first: the end of such a read is what
	// wakes most passes, and a decision made before its answer is read would only be made
	// again at once, the tree walked twice.
	s.fetch(lists, s.awaited, now)
	s.awaited = assess.Needs{}
	_, watched := lists.(*watchSet)
	var e *assess.Assessment
	for range maxFetchRounds {
		// (One pass, one unchanging set of lists: see frozenList.)
		e = assess.Assess(clusterView{s: s, lists: freezeLists(lists, s.moment(now))}, s.mem, s.spec(), now)
		started, changed := s.fetch(lists, e.Needs, now)
		liveLists(e.InFlight, lists)
		if changed || started && !watched {
			continue
		}
		// A watch just started has no first list and holds nothing, which is how the decision
		// read it (assess.NotAsked): made again, it would be the same. Its first list, or its
		// failure, wakes the next pass. (None of the other reads brought anything new yet:
		// each is on its way.)
		s.awaited = assess.Needs{Mappings: e.Needs.Mappings, Releases: e.Needs.Releases, Configs: e.Needs.Configs}
		break
	}
	return e
}

// fetch starts (for a snapshot: makes) the reads of needs. It reports whether it started a
// list, and whether a read it took in changed what the view holds: either way the decision
// may be worth making again (assessFrom).
func (s *clusterState) fetch(lists objectCache, needs assess.Needs, now time.Time) (started, changed bool) {
	for _, key := range needs.Lists {
		if _, ok := lists.peek(key); !ok {
			lists.get(key)
			started = true
		}
	}
	for _, gvk := range needs.Mappings {
		before := s.peekMapping(gvk)
		// (Its answer is read back with peekMapping, as the decision reads it.)
		_, _, _ = s.mapping(gvk, now)
		if after := s.peekMapping(gvk); after.Done != before.Done || after.Mapping != before.Mapping || (after.Err == nil) != (before.Err == nil) {
			changed = true
		}
	}
	for _, r := range needs.Releases {
		fetchKey := "release " + r.Key
		v, done, _ := s.fetches.get(fetchKey, func(ctx context.Context) (any, error) {
			return s.readRelease(ctx, r.Owner, r.Namespace, r.Name, now), nil
		})
		if !done {
			continue
		}
		s.fetches.forget(fetchKey)
		stored, _ := v.(assess.StoredRelease)
		s.releasesMu.Lock()
		if s.releases == nil {
			s.releases = map[string]assess.StoredRelease{}
		}
		s.releases[r.Key] = stored
		s.releasesMu.Unlock()
		changed = true
	}
	for _, c := range needs.Configs {
		if s.fetchConfig(c, now) {
			changed = true
		}
	}
	return started, changed
}

// peekMapping is what discovery answered for gvk so far; it starts nothing (mapping does).
func (s *clusterState) peekMapping(gvk schema.GroupVersionKind) assess.Mapping {
	if m, ok := builtinMapping(gvk); ok {
		return assess.Mapping{Mapping: m, Done: true}
	}
	s.mappingsMu.Lock()
	defer s.mappingsMu.Unlock()
	if m, ok := s.mappings[gvk]; ok {
		return assess.Mapping{Mapping: m, Done: true}
	}
	if err, ok := s.mappingErrs[gvk]; ok {
		return assess.Mapping{Err: err, Done: true}
	}
	return assess.Mapping{}
}

// confirm makes the reads an assessment lacked to be Current but for the order of its reads
// (assess's consistency rule: every object judged read after the Flux status above it said
// applied), and returns the decision after them. Lists are quorum reads (no resourceVersion:
// the API server answers from etcd, or from a watch cache it first brought up to date), so a
// list holds objects no older than its own resourceVersion. With watches, whose streams are
// delivered in any order, each watch not confirmed is compared with a list of its objects'
// metadata (confirmWatches); a snapshot (get) reads the lists it read too early again, after
// the Flux lists (readAgain). With watches it costs one metadata list per kind and namespace
// of the app, once per verdict.
func (s *clusterState) confirm(ctx context.Context, e *assess.Assessment, now time.Time) *assess.Assessment {
	read, _ := s.confirmRead(ctx, e, now)
	return read
}

// confirmRead is confirm, and what stood in the way of the watches' confirmation (lists whose
// cache differs from the cluster, lists that failed), said for a person; "" when nothing did.
// Where the server's resourceVersions are no numbers, a watch's confirmation cannot be
// compared with its owner's: the decision is made on fresh lists at once (readFresh).
func (s *clusterState) confirmRead(ctx context.Context, e *assess.Assessment, now time.Time) (*assess.Assessment, string) {
	if s.req.Snapshot {
		return s.readAgain(ctx, s.watches, e, now), ""
	}
	behind, comparable := s.confirmWatches(ctx, e.Unconfirmed, e.ObjectsToConfirm)
	if !comparable {
		return s.readFresh(ctx, e, now)
	}
	return s.assessFrom(s.watches, now), behind
}

// confirmWatches asks, for each watch of keys that the decision could not confirm, one quorum
// list of its objects' metadata (a name and a resourceVersion each, a few hundred bytes), and
// records the list's revision on the watch when its cache holds exactly those objects at those
// resourceVersions and did not change meanwhile: the cache is then the cluster as of that
// revision, read after the owner's status, and stays so until it changes (watch.Revision). A
// cache that differs is behind the cluster: its watch catches up, and the cluster assesses
// again when it does. The cache is compared with the list once the list is in, so only the
// comparison (in memory) needs the cache unchanged: a namespace whose objects change all the
// time still confirms.
//
// Where the decision rests on a few named objects of a watch (objects, the assessment's
// ObjectsToConfirm), each is read alone instead (confirmObjects): a quorum read of one object
// is answered from etcd, where a quorum list waits, from Kubernetes 1.31, for the API
// server's watch cache to reach etcd's revision, which it asks for at most every 100 ms.
//
// It returns what it could not confirm, said for a person, and whether the list's revisions
// are numbers (comparable with the owners' resourceVersions).
func (s *clusterState) confirmWatches(ctx context.Context, keys []assess.ListKey, objects func(assess.ListKey) []assess.ObjectProof) (behind string, comparable bool) {
	comparable = true
	var notes []string
	watches, reads := s.readMetadata(ctx, keys, objects)
	for i, key := range keys {
		w, read := watches[i], reads[i]
		switch {
		case w == nil:
			continue
		case read.objects != nil:
			if slices.ContainsFunc(read.objects, func(r objectRead) bool { return r.err == nil && !numbered(r.got.ResourceVersion) }) {
				comparable = false // (as a list whose revision is no number)
			}
			if note := confirmObjects(w, key, read.objects); note != "" {
				notes = append(notes, note)
			}
			continue
		case read.err != nil:
			notes = append(notes, fmt.Sprintf("listing %s: %s", keyName(key), apiMessage(read.err)))
			continue
		case read.list.ResourceVersion == "":
			notes = append(notes, fmt.Sprintf("the list of %s has no resourceVersion", keyName(key)))
			continue
		}
		list := read.list
		if !numbered(list.ResourceVersion) {
			comparable = false
		}
		at := w.store.changes.Load()
		if !sameObjects(w.store, list.Items) || w.store.changes.Load() != at {
			notes = append(notes, "the watch of "+keyName(key)+" is behind the cluster")
			continue
		}
		w.confirm(list.ResourceVersion, at)
	}
	return few(notes, "; "), comparable
}

// confirmObjects records the proof of each object read alone that the watch w of key holds at
// the resourceVersion its read found (watch.confirmObject); it returns what it could not
// confirm, said for a person.
func confirmObjects(w *watch, key assess.ListKey, reads []objectRead) string {
	behind := false
	for _, r := range reads {
		sk := storeKey(r.proof.Namespace, r.proof.Name)
		cached, ok, _ := w.store.GetByKey(sk)
		if r.err != nil || !ok || !numbered(r.got.ResourceVersion) || objectRevision(cached) != r.got.ResourceVersion {
			// (The object is gone, or the watch holds another state of it; a resourceVersion
			// that is no number proves nothing of a state.)
			behind = true
			continue
		}
		w.confirmObject(sk, r.got.ResourceVersion, r.proof.AtLeast)
	}
	if behind {
		return "the watch of " + keyName(key) + " is behind the cluster"
	}
	return ""
}

// metadataRead is one key's read of confirmWatches: its list, or its objects read alone, or
// its error.
type metadataRead struct {
	list    *metav1.PartialObjectMetadataList
	err     error
	objects []objectRead
}

// objectRead is the quorum read of one object that proof asks for, or its error.
type objectRead struct {
	proof assess.ObjectProof
	got   *metav1.PartialObjectMetadata
	err   error
}

// objectReadLimit is how many objects confirmWatches reads alone at most, of all its watches;
// a watch whose decision rests on more of its objects, or that would take the reads past it,
// is listed, in one request.
const objectReadLimit = 8

// readMetadata reads, concurrently (one round trip for them all), for each key whose watch is
// synced, the metadata of its objects: the few that objects names, each alone, where the watch
// holds every one of them (an object it does not hold is read with its list) and the reads of
// the confirmation stay within objectReadLimit, else the list; watches[i] is nil for the
// others, which are not read. A kind whose reads alone failed (not found aside: the object is
// gone) is listed as soon as its last read answered; one whose reads the server refuses
// (credentials that may list and watch a kind, not get it) is listed from then on.
func (s *clusterState) readMetadata(ctx context.Context, keys []assess.ListKey, objects func(assess.ListKey) []assess.ObjectProof) ([]*watch, []metadataRead) {
	watches, reads := make([]*watch, len(keys)), make([]metadataRead, len(keys))
	var lists, alone errgroup.Group
	lists.SetLimit(prefetchLimit)
	list := func(i int, key assess.ListKey) {
		lists.Go(func() error {
			lctx, cancel := context.WithTimeout(ctx, listTimeout)
			defer cancel()
			reads[i].list, reads[i].err = s.metadataClient.Resource(key.GVR).Namespace(key.Namespace).List(lctx, metav1.ListOptions{})
			return nil
		})
	}
	budget := objectReadLimit
	for i, key := range keys {
		l, ok := s.watches.peek(key)
		w, isWatch := l.(*watch)
		if !ok || !isWatch || !w.Synced() {
			continue
		}
		watches[i] = w
		proofs := s.heldProofs(w, key, objects)
		if proofs == nil || len(proofs) > budget {
			list(i, key)
			continue
		}
		budget -= len(proofs)
		client := s.metadataClient.Resource(key.GVR).Namespace(key.Namespace)
		reads[i].objects = make([]objectRead, len(proofs))
		var left atomic.Int64
		left.Store(int64(len(proofs)))
		for j, p := range proofs {
			reads[i].objects[j].proof = p
			alone.Go(func() error {
				octx, cancel := context.WithTimeout(ctx, listTimeout)
				defer cancel()
				r := &reads[i].objects[j]
				r.got, r.err = client.Get(octx, p.Name, metav1.GetOptions{})
				if left.Add(-1) == 0 {
					s.afterReadsAlone(i, key, reads, list)
				}
				return nil
			})
		}
	}
	_ = alone.Wait() // (each read keeps its own error)
	_ = lists.Wait()
	return watches, reads
}

// afterReadsAlone runs once every read alone of keys[i] answered: a kind whose reads failed
// (not found aside) is listed instead, and one the server refused to read alone is listed from
// then on.
func (s *clusterState) afterReadsAlone(i int, key assess.ListKey, reads []metadataRead, list func(int, assess.ListKey)) {
	failed, refused := false, false
	for _, r := range reads[i].objects {
		if r.err != nil && !apierrors.IsNotFound(r.err) {
			failed = true
			refused = refused || apierrors.IsForbidden(r.err) || apierrors.IsMethodNotSupported(r.err)
		}
	}
	if refused {
		s.listOnlyMu.Lock()
		if s.listOnly == nil {
			s.listOnly = map[assess.ListKey]bool{}
		}
		s.listOnly[key] = true
		s.listOnlyMu.Unlock()
	}
	if failed {
		reads[i].objects = nil
		list(i, key)
	}
}

// heldProofs are the objects of key that objects names, when they are at most objectReadLimit
// and the watch w holds each of them, and the server did not refuse to read them alone
// before; nil otherwise (the list is read).
func (s *clusterState) heldProofs(w *watch, key assess.ListKey, objects func(assess.ListKey) []assess.ObjectProof) []assess.ObjectProof {
	if objects == nil {
		return nil
	}
	s.listOnlyMu.Lock()
	listOnly := s.listOnly[key]
	s.listOnlyMu.Unlock()
	if listOnly {
		return nil
	}
	proofs := objects(key)
	if len(proofs) == 0 || len(proofs) > objectReadLimit {
		return nil
	}
	for _, p := range proofs {
		if _, held, _ := w.store.GetByKey(storeKey(p.Namespace, p.Name)); !held {
			return nil
		}
	}
	return proofs
}

// keyName names a list for a person: its resource and namespace.
func keyName(key assess.ListKey) string {
	if key.Namespace == "" {
		return key.GVR.Resource
	}
	return key.GVR.Resource + " in " + key.Namespace
}

// few joins up to three of notes with sep, and says how many more.
func few(notes []string, sep string) string {
	if len(notes) > 3 {
		return fmt.Sprintf("%s%sand %d more", strings.Join(notes[:3], sep), sep, len(notes)-3)
	}
	return strings.Join(notes, sep)
}

// freshAfter is how many reads that disagreed with the watches the loop waits out before it
// decides on fresh lists instead (readFresh): a namespace that never holds still, or watches
// that stay behind, do not hold the verdict until the timeout.
const freshAfter = 3

// readFresh decides on fresh lists over the watches: the lists of the Flux objects that own
// others (Kustomizations, HelmReleases) first, then every list e could not confirm, each
// requested once those returned (a list is after every status its owner's list holds: by its
// revision, or, where revisions are no numbers, by its place among the reads), and what that
// decision could not confirm read again (readAgain). The watches give what only they saw over
// time (withHistory). It returns the decision and the errors of the lists, said for a person.
func (s *clusterState) readFresh(ctx context.Context, e *assess.Assessment, now time.Time) (*assess.Assessment, string) {
	fresh := newListSet(ctx, s.readers(), s.req.Clock, s.readOrder, listTimeout)
	if ws, ok := s.watches.(*watchSet); ok {
		keys := ws.keys()
		// (Kustomizations before HelmReleases, which they apply.)
		for _, kind := range []flux.Kind{flux.KindKustomization, flux.KindHelmRelease} {
			for _, key := range keys {
				if key.GVR == kind.GroupVersionResource() {
					fresh.get(key)
				}
			}
		}
	}
	for _, key := range e.Unconfirmed {
		fresh.get(key) // (in turn: see readAgain)
	}
	base := &layeredLists{top: &withHistory{fresh: fresh, watches: s.watches}, base: s.watches}
	read := s.readAgain(ctx, base, s.assessFrom(base, now), now)
	var notes []string
	for _, key := range fresh.keys() {
		if l, _ := fresh.peek(key); l.Err() != nil {
			notes = append(notes, fmt.Sprintf("listing %s: %s", keyName(key), apiMessage(l.Err())))
		}
	}
	slices.Sort(notes)
	return read, few(notes, "; ")
}

// sameObjects reports whether store holds exactly items, at their resourceVersions.
func sameObjects(store cache.Store, items []metav1.PartialObjectMetadata) bool {
	if len(store.ListKeys()) != len(items) {
		return false
	}
	for i := range items {
		obj, ok, err := store.GetByKey(storeKey(items[i].Namespace, items[i].Name))
		if err != nil || !ok {
			return false
		}
		acc, err := meta.Accessor(obj)
		if err != nil || acc.GetResourceVersion() != items[i].ResourceVersion {
			return false
		}
	}
	return true
}

// maxRereads bounds the reads of the lists an assessment could not confirm, each after the
// last: with resourceVersions that compare, one is enough.
const maxRereads = 4

// readAgain reads the lists a decision e could not confirm again, over base, and decides
// again, while it is Current or failed but for the order of its reads, until it can or
// maxRereads passed.
func (s *clusterState) readAgain(ctx context.Context, base objectCache, e *assess.Assessment, now time.Time) *assess.Assessment {
	for range maxRereads {
		if !awaitsRead(e) {
			return e
		}
		// (One after another, in the order of Unconfirmed: where revisions are no numbers, a
		// list proves what it holds by being sent after the one before returned.)
		again := newListSet(ctx, s.readers(), s.req.Clock, s.readOrder, listTimeout)
		for _, key := range e.Unconfirmed {
			again.get(key)
		}
		base = &layeredLists{top: &withHistory{fresh: again, watches: s.watches}, base: base}
		e = s.assessFrom(base, now)
	}
	return e
}

// awaitsRead reports whether e would be Current, or failed, but for lists it could not
// confirm (assess's consistency rule).
func awaitsRead(e *assess.Assessment) bool {
	return e.AwaitsConsistentRead || (failedOn(e) && len(e.Unconfirmed) > 0)
}

// failedOn reports whether e failed the cluster on what it read: a rollout failure, or a
// requested object found missing after the not-found grace (a watch behind its parents' may
// not hold it yet).
func failedOn(e *assess.Assessment) bool {
	return e.Fatal != nil && (e.Fatal.Verdict == result.VerdictFailed || e.Fatal.Verdict == result.VerdictNotFound ||
		e.Fatal.Verdict == result.VerdictUnverified)
}

// confirmFailure reads again, after the watches' view failed the cluster on lists it could
// not confirm, the lists it could not confirm: a failure of an object read before its owner
// said applied may be the previous revision's, which the expected one fixes. The decision
// over the watches with those lists read anew says whether it stands.
// Where the server's resourceVersions are no numbers, those lists cannot be compared with the
// owners the watches hold: the decision is made on fresh lists at once (readFresh).
func (s *clusterState) confirmFailure(ctx context.Context, e *assess.Assessment, now time.Time) (*assess.Assessment, string) {
	if len(e.Unconfirmed) == 0 {
		return e, ""
	}
	again := newListSet(ctx, s.readers(), s.req.Clock, s.readOrder, listTimeout)
	// Where the server's revisions are numbers, each list is compared by its own revision and
	// all may go out together: the watch of the first says so when its stream is at a numbered
	// revision, else the first list does, alone.
	rest := e.Unconfirmed
	if !s.numberedWatch(rest[0]) {
		if l := again.get(rest[0]); l.Err() == nil && !numbered(l.(*staticList).revision) {
			return s.readFresh(ctx, e, now)
		}
		rest = rest[1:]
	}
	again.prefetch(rest)
	for _, key := range e.Unconfirmed {
		if l := again.get(key); l.Err() == nil && !numbered(l.(*staticList).revision) {
			return s.readFresh(ctx, e, now)
		}
	}
	return s.assessFrom(&layeredLists{top: &withHistory{fresh: again, watches: s.watches}, base: s.watches}, now), ""
}

// numberedWatch reports whether the watch of key is at a numbered revision of its stream: the
// server gives that kind etcd's revisions.
func (s *clusterState) numberedWatch(key assess.ListKey) bool {
	l, ok := s.watches.peek(key)
	if !ok {
		return false
	}
	w, isWatch := l.(*watch)
	return isWatch && numbered(w.store.streamPosition())
}

// numbered reports whether a resourceVersion is a number, as etcd's revisions are: only those
// compare with another object's.
func numbered(resourceVersion string) bool {
	_, err := strconv.ParseUint(resourceVersion, 10, 64)
	return err == nil
}

// withHistory is a confirmation's lists, read anew, with what only the watches saw over
// time: the Jobs they saw deleted (a TTL Job counted done), the reconcile starts they noted,
// and since when they watch (assess.List's Gone, Noted and WaitingSince).
type withHistory struct {
	fresh   objectCache
	watches objectCache
}

func (w *withHistory) get(key assess.ListKey) assess.List { return w.wrap(key, w.fresh.get(key)) }

func (w *withHistory) peek(key assess.ListKey) (assess.List, bool) {
	l, ok := w.fresh.peek(key)
	if !ok {
		return nil, false
	}
	return w.wrap(key, l), true
}

func (w *withHistory) wrap(key assess.ListKey, l assess.List) assess.List {
	snap, ok := l.(*staticList)
	if !ok {
		return l
	}
	watched, ok := w.watches.peek(key)
	if !ok {
		return snap
	}
	return historyList{staticList: snap, watched: watched}
}

// historyList is a list read anew, with a watch's history of the same kind and namespace.
type historyList struct {
	*staticList
	watched assess.List
}

func (h historyList) Gone(namespace, name string) (any, time.Time, bool) {
	if _, there := h.Object(namespace, name); there {
		return nil, time.Time{}, false // created again since
	}
	return h.watched.Gone(namespace, name)
}

func (h historyList) Noted(namespace, name string) time.Time { return h.watched.Noted(namespace, name) }

func (h historyList) WaitingSince() time.Time { return h.watched.WaitingSince() }

// confirmations is when a cluster's loop may read consistently next: a read that disagreed
// with the watches waits a backoff (the watches usually catch up first), however many
// notifications come meanwhile.
type confirmations struct {
	misses int
	next   time.Time
	last   string // what the last read that disagreed waited for
	// changes are the counts of changes of the watches the read could not confirm, when it
	// disagreed: a watch that took in a change since has caught up with some of what the
	// read found, and is compared again at once rather than after the backoff; not once the
	// reads turn to fresh lists (freshAfter), which a busy namespace would repeat at every
	// change, at the moment its API server is slow.
	changes map[assess.ListKey]uint64
	// early are the watches confirmEarly read; quiet the counts of changes of the watches
	// unconfirmed at its last pass; earlyOff stops its reads.
	early    map[assess.ListKey]bool
	quiet    map[assess.ListKey]uint64
	earlyOff bool
}

// caughtUp reports whether a watch the last read could not confirm has changed since.
func (c *confirmations) caughtUp(watches objectCache) bool {
	for key, at := range c.changes {
		if l, ok := watches.peek(key); ok {
			if w, isWatch := l.(*watch); isWatch && w.store.changes.Load() != at {
				return true
			}
		}
	}
	return false
}

// noteChanges records the counts of changes of the watches of keys.
func (c *confirmations) noteChanges(watches objectCache, keys []assess.ListKey) {
	c.changes = map[assess.ListKey]uint64{}
	for _, key := range keys {
		if l, ok := watches.peek(key); ok {
			if w, isWatch := l.(*watch); isWatch {
				c.changes[key] = w.store.changes.Load()
			}
		}
	}
}

// consistently is the decision the cluster's loop acts on, from e, the watches' view at now.
// Current is said only on a consistent read (assess's consistency rule; confirm); a failure
// of an object the watches' view could not confirm is read again first (confirmFailure), so a
// previous revision's failure, which the expected one fixes, does not fail the cluster. A
// snapshot (get) decides on its own lists, read again after the Flux lists where the
// decision could not confirm them, a failure's as a Current's: a failure read before its
// owner said applied may be the previous revision's.
func (s *clusterState) consistently(ctx context.Context, e *assess.Assessment, now time.Time, c *confirmations) *assess.Assessment {
	failed := failedOn(e) && len(e.Unconfirmed) > 0
	if !failedOn(e) {
		s.aheadOf = nil // (a failure that comes back is read ahead again)
	}
	if !e.AwaitsConsistentRead && !failed {
		s.confirmEarly(ctx, e, now, c)
		return e
	}
	if s.req.Snapshot {
		if failed {
			s.readEvidenceAhead(ctx, e.Objects)
		}
		return s.readAgain(ctx, s.watches, e, now)
	}
	if now.Before(c.next) && (c.misses >= freshAfter || !c.caughtUp(s.watches)) {
		e.Fatal = nil
		e.Pending = &assess.Finding{Verdict: result.VerdictInProgress, Reason: "Confirming",
			Message: "waiting to read the cluster consistently again: " + cmp.Or(c.last, "the watches are behind it")}
		e.RecheckAt(c.next)
		return e
	}
	if failed {
		// (Its evidence, beside the lists: a failure confirmed needs no further round trip.)
		s.readEvidenceAhead(ctx, e.Objects)
	}
	var (
		read   *assess.Assessment
		behind string
	)
	switch {
	case c.misses >= freshAfter:
		read, behind = s.readFresh(ctx, e, now)
	case failed:
		read, behind = s.confirmFailure(ctx, e, now)
	default:
		read, behind = s.confirmRead(ctx, e, now)
	}
	if settled(read, failed) {
		c.misses = 0
		return read
	}
	c.misses++
	c.next = now.Add(confirmBackoff(c.misses))
	c.noteChanges(s.watches, e.Unconfirmed)
	c.last = pendingMessage(read)
	if awaitsRead(read) {
		// What the read waits for is the lists themselves: named, with what stood in the way.
		c.last = cmp.Or(behind, "lists not confirmed yet: "+few(keyNames(read.Unconfirmed), ", "))
		if failedOn(read) {
			c.last = read.Fatal.Message + "; " + c.last
		}
	}
	e.Fatal = nil
	e.Pending = &assess.Finding{Verdict: result.VerdictInProgress, Reason: "Confirming",
		Message: "the consistent read is not there yet: " + c.last}
	e.RecheckAt(c.next)
	return e
}

// confirmEarly confirms, while a cluster whose roots applied the revision still waits (on
// its workloads' rollout), the watches its verdict will rest on: those of kinds the rollout
// does not change (its ConfigMaps, its Services) take in no event after the owner's status,
// so their streams cannot prove them, and confirmed only once the last workload is Current
// they would cost the verdict a round trip after the last change. Confirmed now, at the
// owner's status, a watch that does not change stays confirmed (watch.Revision), and the
// watches of what rolls out pass the owner's revision by their own events: the verdict comes
// with the pass that sees the last change. It is the same proof, made sooner: a watch that
// changes meanwhile, or an owner whose status moves on, is confirmed again when the verdict
// waits on it, as before.
//
// Only quiet watches are read: unconfirmed at two passes in a row without a change between
// them, so a kind that rolls out, whose events confirm it soon, costs no read; and each once
// in the run: a watch still unconfirmed after its early read is a stream behind its owner,
// which its own events confirm, or one the confirmation at the end reads. The pass waits for
// the reads, at most earlyReadTimeout: on a server slow to answer them (earlyReadSlow), or
// whose resourceVersions are no numbers (which no early read can prove), they stop for the
// run, and the confirmation is made once the view is Current, as before. What the reads could
// not confirm is left to that confirmation, which says it; while one backs off
// (confirmations.next), or when the run's end is near, no early read is made either.
func (s *clusterState) confirmEarly(ctx context.Context, e *assess.Assessment, now time.Time, c *confirmations) {
	if c.earlyOff || s.req.Snapshot || !e.RootsApplied || e.Fatal != nil || e.Pending == nil || e.Syncing || !e.Needs.Empty() || now.Before(c.next) {
		return
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < 2*earlyReadTimeout {
		return // (the run's last moments are for judging changes, not for reads that may wait)
	}
	seen := make(map[assess.ListKey]uint64, len(e.Unconfirmed))
	var keys []assess.ListKey
	for _, key := range e.Unconfirmed {
		l, ok := s.watches.peek(key)
		w, isWatch := l.(*watch)
		if !ok || !isWatch || !numbered(w.store.streamPosition()) {
			continue
		}
		changes := w.store.changes.Load()
		seen[key] = changes
		if at, unconfirmed := c.quiet[key]; !unconfirmed || at != changes {
			continue // (not seen unconfirmed at the last pass, or changed since)
		}
		if c.early[key] {
			continue
		}
		if c.early == nil {
			c.early = map[assess.ListKey]bool{}
		}
		c.early[key] = true
		keys = append(keys, key)
	}
	c.quiet = seen
	if len(keys) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, earlyReadTimeout)
	defer cancel()
	start := time.Now()
	_, comparable := s.confirmWatches(rctx, keys, e.ObjectsToConfirm)
	if !comparable || (ctx.Err() == nil && (rctx.Err() != nil || time.Since(start) > earlyReadSlow)) {
		c.earlyOff = true
	}
}

// earlyReadTimeout bounds the reads of confirmEarly, which the pass waits for; after reads
// that took longer than earlyReadSlow, none is made again in the run.
const (
	earlyReadTimeout = time.Second
	earlyReadSlow    = 250 * time.Millisecond
)

// settled reports whether read, the decision on a consistent read, is the cluster's: when it
// confirms a failure, a failure on confirmed lists (a failure on lists the read could not
// confirm either waits, as a Current does); when it confirms a Current, Current or a state of
// its own (a wait, a failure on confirmed lists). Only caches still behind the cluster make
// the loop wait for them.
func settled(read *assess.Assessment, failure bool) bool {
	if failure {
		return failedOn(read) && len(read.Unconfirmed) == 0
	}
	return read.Current() || (!read.AwaitsConsistentRead && (read.Fatal == nil || len(read.Unconfirmed) == 0))
}

// keyNames names each of keys for a person.
func keyNames(keys []assess.ListKey) []string {
	names := make([]string, 0, len(keys))
	for _, k := range keys {
		names = append(names, keyName(k))
	}
	return names
}

// confirmBackoff is how long a cluster whose watches said Current, but whose consistent read
// did not, waits before it reads again.
func confirmBackoff(misses int) time.Duration {
	return min(250*time.Millisecond<<min(misses-1, 4), 4*time.Second)
}

// pendingMessage is what an assessment waits for or failed on.
func pendingMessage(e *assess.Assessment) string {
	switch {
	case e.Fatal != nil:
		return e.Fatal.Message
	case e.Pending != nil:
		return e.Pending.Message
	}
	return ""
}

// layeredLists reads a key from top when top holds it, else from base: the lists read again
// after the tree over the tree's own.
type layeredLists struct {
	top, base objectCache
}

func (l *layeredLists) get(key assess.ListKey) assess.List {
	if w, ok := l.top.peek(key); ok {
		return w
	}
	if w, ok := l.base.peek(key); ok {
		return w
	}
	return l.top.get(key)
}

func (l *layeredLists) peek(key assess.ListKey) (assess.List, bool) {
	if w, ok := l.top.peek(key); ok {
		return w, true
	}
	return l.base.peek(key)
}

// typedTransform returns an informer transform that keeps objects of kind gvk as *T: a *T as
// it came (its kind set: a typed client's list leaves it out), an unstructured object
// converted once, when it arrives, so evaluations read typed objects without converting
// again.
func typedTransform[T any, PT interface {
	*T
	runtime.Object
}](gvk schema.GroupVersionKind) transformFunc {
	return func(obj any) (any, assess.ObjectFacts, error) {
		var out PT
		switch o := obj.(type) {
		case PT:
			out = o
		case *unstructured.Unstructured:
			out = new(T)
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, out); err != nil {
				return nil, assess.ObjectFacts{}, fmt.Errorf("convert %s %s: %w", o.GetKind(), o.GetName(), err)
			}
		default:
			return obj, assess.ObjectFacts{}, nil
		}
		out.GetObjectKind().SetGroupVersionKind(gvk)
		var facts assess.ObjectFacts
		if acc, err := meta.Accessor(out); err == nil {
			facts.NotFromGit = vetAnnotations(acc)
			facts.KustomizeSkip = kustomizeSkip(acc)
			acc.SetManagedFields(nil)
			dropLastApplied(out, acc)
		}
		return out, facts, nil
	}
}
