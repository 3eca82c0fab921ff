package assess

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// A requested Flux object that does not exist is an answer, not a wait: once it has been
// missing for the not-found grace, and no Flux object of the cluster may still create it
// (flux.MayStillCreate), the cluster is NotFound, and the message names what exists nearby.

// DefaultNotFoundGrace is how long a requested Flux object may be missing before the cluster
// is NotFound, while nothing shows Flux creating it (Spec.NotFoundGrace unset).
const DefaultNotFoundGrace = 2 * time.Minute

// creatorKinds are the kinds whose objects create Flux objects from their sources: a parent
// Kustomization applies a child's manifest, a ResourceSet generates it.
var creatorKinds = []flux.Kind{flux.KindKustomization, flux.KindResourceSet}

// The bounds of the names a NotFound message shows (untrusted: the cluster's).
const (
	nearNamesMax = 3   // close names shown; FewOf counts the rest
	nameRunes    = 100 // a name shown is cut to this
	nearDistance = 3   // at most this many edits apart
	whyRunes     = 200 // what a Kustomization or ResourceSet is doing, as shown
)

// notFoundGrace is the run's not-found grace, its default when unset.
func (a *assessor) notFoundGrace() time.Duration {
	if a.spec.NotFoundGrace > 0 {
		return a.spec.NotFoundGrace
	}
	return DefaultNotFoundGrace
}

// missingRoot decides a requested Flux object that w, the list of its kind in its namespace
// (key), does not hold: it waits while the grace lasts or while a Flux object may still create
// it, and is NotFound otherwise. A snapshot (get) has no grace: it says what is so now.
func (a *assessor) missingRoot(e *Assessment, ref flux.Ref, key ListKey, w List) {
	a.missing(e, missingObject{id: ref.ID(), ref: ref, key: key, list: w, hints: a.nearby(ref, w), listedInAll: a.listedInAll(ref)})
}

// missingObject is an object the cluster lacks: a requested Flux object, or what a Flux
// object of the tree needs (its source, a dependency), which role names.
type missingObject struct {
	id, role string
	// ref is what is missing, as the spec that needs it names it.
	ref flux.Ref
	// needer is the Flux object that needs it ("" for a requested one): waiting for it, it
	// will not create it.
	needer string
	// key and list are the list of its kind in its namespace, which does not hold it.
	key  ListKey
	list List
	// hints names what exists nearby; listedInAll is set when the list of its kind in every
	// namespace holds it (the list of its namespace is behind).
	hints       string
	listedInAll bool
}

// missing decides m and records the finding: a wait, or NotFound (missingFinding).
func (a *assessor) missing(e *Assessment, m missingObject) {
	if f, final := a.missingFinding(e, m); final {
		e.fail(f)
	} else {
		e.wait(f)
	}
}

// missingFinding decides m: it waits while the not-found grace lasts (from the first time the
// run saw it missing) or while a Flux object may still create it, and is NotFound (final)
// otherwise.
func (a *assessor) missingFinding(e *Assessment, m missingObject) (f Finding, final bool) {
	id, key, w := m.id, m.key, m.list
	if a.mem.missingSince == nil {
		a.mem.missingSince = map[string]time.Time{}
	}
	since, seen := a.mem.missingSince[id]
	if !seen {
		since = a.now
		a.mem.missingSince[id] = since
	}
	grace := a.notFoundGrace()
	c := a.creators(m.needer)
	if why := a.revisionArriving(c, since); why != "" {
		c.busy = append(c.busy, why)
	}
	c.busy = append(c.busy, a.providersMayExport(m.ref, since)...)
	wait := func(message string, p Progress) Finding {
		return Finding{Verdict: result.VerdictNotFound, Reason: "NotFound", Message: message, Progress: p}
	}
	notFound := id + " not found" + m.role
	switch {
	case m.listedInAll:
		// A list of every namespace holds it, its own namespace's not yet: that watch is
		// behind.
		return wait(id+" not found in its namespace's list yet, though listed in all namespaces", ProgressStep), false
	case len(c.busy) > 0:
		slices.Sort(c.busy)
		return wait(fmt.Sprintf("%s not found yet%s; Flux may still create it: %s", id, m.role, FewOf(c.busy)), ProgressState), false
	case c.blind != "":
		return wait(fmt.Sprintf("%s; cannot tell whether Flux is creating it: %s", notFound, c.blind), ProgressState), false
	case c.loading:
		return wait(notFound+"; reading the Kustomizations and ResourceSets of the cluster, to tell whether Flux is creating it", ProgressStep), false
	case !a.spec.Snapshot && a.now.Before(since.Add(grace)):
		e.recheckAt(since.Add(grace))
		return wait(joinMessage(notFound, m.hints)+fmt.Sprintf("; NotFound once it has been missing for %s (not-found-grace), unless Flux creates it", grace), ProgressState), false
	default:
		// The verdict rests on its namespace's list read no earlier than the statuses that
		// say nothing will create it (consistency). When it was not, those statuses are read
		// again too (a watch of them may be behind as well), and first.
		var before []ListKey
		for i, l := range c.lists {
			if rv := newestRevision(l); rv != "" && !readAfter(w, a.revisionAt(key, w), l, rv) {
				before = append(before, c.keys[i])
			}
		}
		if len(before) > 0 {
			for _, k := range before {
				a.unconfirmed(k)
			}
			a.unconfirmed(key)
		}
		msg := joinMessage(notFound, m.hints) + "; no Kustomization or ResourceSet is creating it"
		if !a.spec.Snapshot {
			msg += fmt.Sprintf(" (missing for %s or more)", grace)
		}
		return Finding{Verdict: result.VerdictNotFound, Reason: "NotFound", Message: msg}, true
	}
}

// providersMayExport names the ResourceSets of the cluster that may still generate ref from
// inputs their providers have not exported yet (flux.ProvidersMayGenerate), until the
// providers' interval and a margin have passed since the run first saw ref missing. (The
// providers themselves are not read: their interval is flux-operator's default, which their
// fluxcd.controlplane.io/reconcileEvery may change; not-found-grace covers a longer one.)
func (a *assessor) providersMayExport(ref flux.Ref, since time.Time) []string {
	l := a.list(allKey(flux.KindResourceSet))
	until := since.Add(flux.InputProviderInterval + sourceFetchMargin)
	if !l.Synced() || ref.Kind == "" || !a.now.Before(until) {
		return nil
	}
	var busy []string
	for _, item := range l.Items() {
		u, isU := item.(*unstructured.Unstructured)
		if !isU || !flux.ProvidersMayGenerate(u, ref) {
			continue
		}
		busy = append(busy, fmt.Sprintf("%s/%s/%s takes inputs from providers (spec.inputsFrom), which export new ones within %s",
			flux.KindResourceSet, shownName(u.GetNamespace()), shownName(u.GetName()), flux.InputProviderInterval))
	}
	if len(busy) > 0 {
		a.e.recheckAt(until)
	}
	return busy
}

// sourceFetchMargin is how long past its interval a source may take to fetch.
const sourceFetchMargin = 30 * time.Second

// revisionArriving says why the expected revision (a commit, a Flux revision, a digest: what a
// merge makes) may still reach the cluster, "" when it cannot: the run often starts right
// after the merge, before source-controller fetched it, and no Kustomization is at work yet.
// While no Kustomization's source offers it, and none applied or attempted it, each source
// fetches within its spec.interval: the object may appear until the longest interval (and a
// margin) since the run first saw it missing has passed.
func (a *assessor) revisionArriving(c creatorsSeen, since time.Time) string {
	want := a.spec.Revision
	if !want.NamesArtifact() || len(c.sources) == 0 || want.Matches(c.revisions...) {
		return ""
	}
	var longest time.Duration
	for _, s := range c.sources {
		if want.Matches(s.Revisions()...) {
			return ""
		}
		longest = max(longest, s.Interval)
	}
	until := since.Add(longest + sourceFetchMargin)
	if !a.now.Before(until) {
		return ""
	}
	a.e.recheckAt(until)
	return fmt.Sprintf("%s is in none of the %d sources the cluster's Kustomizations apply from yet (each fetches within its interval, the longest %s)",
		flux.ShortRevision(want.String()), len(c.sources), longest)
}

// creatorsSeen is what the creator kinds' lists (every namespace) say of a missing object.
type creatorsSeen struct {
	// busy names the objects that may still create it, and what they are doing.
	busy []string
	// blind says why the rule cannot see them all (a list the credentials may not make, or
	// that fails); loading is set while a list is on its way.
	blind   string
	loading bool
	// lists are the creators' lists read, under keys.
	lists []List
	keys  []ListKey
	// sources are the Kustomizations' sources read, and revisions the revisions they applied
	// and attempted (revisionArriving).
	sources   map[string]flux.Source
	revisions []string
}

// allKey is the list of kind in every namespace: whole for a creator kind, whose status the
// rule reads; only the names of another.
func allKey(kind flux.Kind) ListKey {
	return ListKey{GVR: kind.GroupVersionResource(), Names: !slices.Contains(creatorKinds, kind)}
}

// listedInAll reports whether the list of ref's kind in every namespace holds it: the list of
// its namespace is behind that one.
func (a *assessor) listedInAll(ref flux.Ref) bool {
	l := a.list(allKey(ref.Kind))
	if !l.Synced() {
		return false
	}
	_, found := l.Object(ref.Namespace, ref.Name)
	return found
}

// creators reads the creator kinds in every namespace (and the sources of the
// Kustomizations) and says which may still create objects (flux.MayStillCreate), but the one
// whose ID is except.
func (a *assessor) creators(except string) creatorsSeen {
	c := creatorsSeen{sources: map[string]flux.Source{}}
	for _, kind := range creatorKinds {
		l, ok := a.allNamespaces(kind, &c)
		if !ok {
			continue
		}
		c.lists, c.keys = append(c.lists, l), append(c.keys, allKey(kind))
		for _, item := range l.Items() {
			u, isU := item.(*unstructured.Unstructured)
			if !isU {
				continue
			}
			src, known := a.creatorSource(kind, u)
			if !known {
				c.loading = true
			}
			if src != nil {
				c.sources[src.Ref.ID()] = *src
			}
			if kind == flux.KindKustomization {
				applied, _, _ := unstructured.NestedString(u.Object, "status", "lastAppliedRevision")
				attempted, _, _ := unstructured.NestedString(u.Object, "status", "lastAttemptedRevision")
				c.revisions = append(c.revisions, applied, attempted)
			}
			if except != "" && except == result.ObjectID(string(kind), u.GetNamespace(), u.GetName()) {
				continue
			}
			if why := flux.MayStillCreate(kind, u, src); why != "" && !a.creatorRetryOver(kind, u, &c) {
				// (What it is doing names revisions and sources its status and spec give.)
				c.busy = append(c.busy, fmt.Sprintf("%s/%s/%s %s", kind, shownName(u.GetNamespace()), shownName(u.GetName()),
					sanitize.Truncate(sanitize.Compact(why), whyRunes)))
			}
		}
	}
	return c
}

// creatorRetryOver reports whether u, a creator whose apply failed on what may still come (a
// CRD or a namespace not there yet: flux.RetriedFailure), has had its chance, so that the
// missing object's absence is Flux's answer. Every attempt of such an apply fails alike until
// what it lacks arrives, so the rule reads what it lacks where the failure names it:
//   - what it lacks is there now (its namespace, which the failure proves was not at the
//     attempt; a CRD of the kind's group created since the attempt began): its next attempt
//     may create the object, until the controller has surely tried again
//     (flux.RetriedApply.NextAttempt);
//   - still missing while a HelmRelease of the cluster is at work (it may create namespaces
//     and CRDs): it may still;
//   - a namespace still missing, and no HelmRelease at work: its chance is over, however
//     recent the failure, for a Kustomization or ResourceSet that would create the namespace
//     is at work and counts by itself. One left failing on a deleted namespace never holds
//     up the verdict;
//   - a CRD still missing, and no HelmRelease at work (an operator may install it): it may
//     last the retry grace from when the failure began (flux.RetriedApply.FailingSince), else
//     from when the run first saw it;
//   - words that name nothing the rule can read (a webhook, the API server not answering), or
//     lists it may not read: the retry grace from when the run first saw the failure, and
//     then until the controller has tried again (a webhook's fix may be what the run waits
//     for, however long it failed before).
func (a *assessor) creatorRetryOver(kind flux.Kind, u *unstructured.Unstructured, c *creatorsSeen) bool {
	key := fmt.Sprintf("%s/%s/%s", kind, u.GetNamespace(), u.GetName())
	r, ok := flux.RetriedFailure(kind, u)
	if !ok {
		delete(a.mem.creatorRetriedSince, key)
		return false
	}
	since := a.firstSeenRetrying(key)
	switch a.lackArrived(r, c) {
	case lackLoading:
		return false
	case lackArrived:
		return !a.beforeNextAttempt(r)
	case lackMissing:
		switch a.helmReleasesAtWork(c) {
		case lackLoading, lackArrived:
			return false
		case lackMissing:
			if len(r.Groups) == 0 {
				return true
			}
			if !r.FailingSince.IsZero() && r.FailingSince.Before(since) {
				since = r.FailingSince
			}
			return !a.within(since.Add(a.retryGrace()))
		}
	}
	end := since.Add(a.retryGrace())
	if a.within(end) {
		return false
	}
	return !r.FailedAt.Before(end) || !a.beforeNextAttempt(r)
}

// firstSeenRetrying is when the run first saw the creator key fail a retried apply.
func (a *assessor) firstSeenRetrying(key string) time.Time {
	if a.mem.creatorRetriedSince == nil {
		a.mem.creatorRetriedSince = map[string]time.Time{}
	}
	since, seen := a.mem.creatorRetriedSince[key]
	if !seen {
		since = a.now
		a.mem.creatorRetriedSince[key] = since
	}
	return since
}

// within reports whether the pass is before end, and rechecks then.
func (a *assessor) within(end time.Time) bool {
	if !a.now.Before(end) {
		return false
	}
	a.e.recheckAt(end)
	return true
}

// beforeNextAttempt reports whether the controller may not have tried again since r's failure
// (flux.RetriedApply.NextAttempt), and rechecks then.
func (a *assessor) beforeNextAttempt(r flux.RetriedApply) bool {
	next := r.NextAttempt()
	return !next.IsZero() && a.within(next)
}

// lackState is what the cluster says of what a retried apply lacks.
type lackState int

const (
	lackUnknown lackState = iota // its words name nothing readable, or a list failed
	lackLoading                  // a list is on its way
	lackMissing                  // still missing
	lackArrived                  // there now
)

// The lists the rule reads what a retried apply lacks from (names and creation times only),
// and the HelmReleases that may bring it.
var (
	namespacesKey   = ListKey{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Names: true}
	crdsKey         = ListKey{GVR: schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, Names: true}
	helmReleasesKey = ListKey{GVR: flux.KindHelmRelease.GroupVersionResource()}
)

// lackArrived reads whether what r lacks is there now: one of its namespaces (not being
// deleted), or a CRD of one of its kinds' groups created or written since the attempt began
// (its managedFields times: the metadata list keeps them; named
// plural.group; the plural is not in the words, so any CRD of the group counts: the wait it
// adds ends with the next attempt).
func (a *assessor) lackArrived(r flux.RetriedApply, c *creatorsSeen) lackState {
	if len(r.Namespaces) == 0 && len(r.Groups) == 0 {
		return lackUnknown
	}
	state := lackMissing
	for _, want := range []struct {
		key   ListKey
		names []string
		match func(obj metav1.Object, want string) bool
	}{
		{namespacesKey, r.Namespaces, func(obj metav1.Object, ns string) bool { return obj.GetName() == ns }},
		{crdsKey, r.Groups, func(obj metav1.Object, group string) bool {
			return strings.HasSuffix(obj.GetName(), "."+group) && writtenSince(obj, r.AttemptStarted)
		}},
	} {
		if len(want.names) == 0 {
			continue
		}
		items, s := a.lackList(want.key, c)
		if s != lackMissing {
			return s
		}
		for _, item := range items {
			obj, err := meta.Accessor(item)
			if err != nil || obj.GetDeletionTimestamp() != nil {
				continue
			}
			if slices.ContainsFunc(want.names, func(n string) bool { return want.match(obj, n) }) {
				state = lackArrived
			}
		}
	}
	return state
}

// writtenSince reports whether obj was created, or written (a managedFields entry's time: a
// CRD that gained a version, by an operator's upgrade or kubectl), at or after t.
func writtenSince(obj metav1.Object, t time.Time) bool {
	if !obj.GetCreationTimestamp().Time.Before(t) {
		return true
	}
	for _, f := range obj.GetManagedFields() {
		if f.Time != nil && !f.Time.Time.Before(t) {
			return true
		}
	}
	return false
}

// helmReleasesAtWork reads whether a HelmRelease of the cluster is at work
// (flux.HelmReleaseAtWork): lackArrived when one is, lackMissing when none.
func (a *assessor) helmReleasesAtWork(c *creatorsSeen) lackState {
	items, s := a.lackList(helmReleasesKey, c)
	if s != lackMissing {
		return s
	}
	for _, item := range items {
		if u, ok := item.(*unstructured.Unstructured); ok && flux.HelmReleaseAtWork(u) {
			return lackArrived
		}
	}
	return lackMissing
}

// lackList returns the items of the list under key once it has arrived (lackMissing), and adds
// it to c, so that a NotFound rests on it read after the missing object's list; lackLoading
// while it is on its way, lackUnknown when it fails (the credentials may not list it).
func (a *assessor) lackList(key ListKey, c *creatorsSeen) ([]any, lackState) {
	l := a.list(key)
	if !l.Synced() {
		if l.Err() != nil {
			return nil, lackUnknown
		}
		c.loading = true
		return nil, lackLoading
	}
	if !slices.Contains(c.keys, key) {
		c.lists, c.keys = append(c.lists, l), append(c.keys, key)
	}
	return l.Items(), lackMissing
}

// allNamespaces returns the list of kind in every namespace once it has arrived; a kind the
// cluster does not serve (no Flux Operator) has none, and a list that fails or is on its way
// is noted in c.
func (a *assessor) allNamespaces(kind flux.Kind, c *creatorsSeen) (List, bool) {
	l := a.list(allKey(kind))
	if l.Synced() {
		return l, true
	}
	err := l.Err()
	if err == nil {
		c.loading = true
		return nil, false
	}
	what := kind.GroupVersionResource().Resource + " in all namespaces"
	x := l.Read().Failure.Explain(what)
	if x.Known && x.Verdict == result.VerdictNotFound {
		return nil, false
	}
	c.blind = joinMessage(c.blind, fmt.Sprintf("listing %s: %s", what, sanitize.Truncate(sanitize.Compact(x.Detail), 200)))
	return nil, false
}

// creatorSource is a Kustomization's source as the view holds it; known is false while its
// list is on its way. A source that cannot be read is nil: the rule goes without it.
func (a *assessor) creatorSource(kind flux.Kind, u *unstructured.Unstructured) (src *flux.Source, known bool) {
	if kind != flux.KindKustomization {
		return nil, true
	}
	ref := flux.SourceOf(kind, u)
	gvr, ok := ref.GroupVersionResource()
	if !ok {
		return nil, true
	}
	l := a.list(ListKey{GVR: gvr, Namespace: ref.Namespace})
	if !l.Synced() {
		return nil, l.Err() != nil
	}
	cached, _ := l.Object(ref.Namespace, ref.Name)
	obj, isU := cached.(*unstructured.Unstructured)
	if !isU {
		return nil, true
	}
	s := flux.ReadSource(ref, obj)
	return &s, true
}

// newestRevision is the resourceVersion of the newest object l holds, or its own revision
// when it was read at one moment (Snapshot).
func newestRevision(l List) string {
	if s, ok := l.(Snapshot); ok && s.Revision() != "" {
		return s.Revision()
	}
	newest := ""
	for _, item := range l.Items() {
		m, err := meta.Accessor(item)
		if err != nil {
			continue
		}
		rv := m.GetResourceVersion()
		if c, err := resourceversion.CompareResourceVersion(rv, newest); newest == "" || err == nil && c > 0 {
			newest = rv
		}
	}
	return newest
}

// nearby names what exists near a missing object: objects of its kind in its namespace with
// close names (w), and the namespaces where one of its name exists (the kind's list of every
// namespace, when it may be read).
func (a *assessor) nearby(ref flux.Ref, w List) string {
	msg := closeNames(ref.Namespace, ref.Name, w)
	all := a.list(allKey(ref.Kind))
	switch {
	case all.Synced():
		var namespaces []string
		for _, item := range all.Items() {
			m, err := meta.Accessor(item)
			if err == nil && m.GetName() == ref.Name && m.GetNamespace() != ref.Namespace {
				namespaces = append(namespaces, shownName(m.GetNamespace()))
			}
		}
		slices.Sort(namespaces)
		if len(namespaces) > 0 {
			msg = joinMessage(msg, fmt.Sprintf("%s %s exists in namespace %s", ref.Kind, ref.Name, fewNames(namespaces)))
		}
	case all.Err() != nil:
		what := ref.Kind.GroupVersionResource().Resource + " in all namespaces"
		if x := all.Read().Failure.Explain(what); !x.Known || x.Verdict != result.VerdictNotFound {
			msg = joinMessage(msg, fmt.Sprintf("other namespaces not searched (listing %s: %s)", what,
				sanitize.Truncate(sanitize.Compact(x.Detail), 200)))
		}
	}
	return msg
}

// closeNames names the objects of w in namespace whose names are close to name.
func closeNames(namespace, name string, w List) string {
	var near []nearName
	for _, item := range w.Items() {
		m, err := meta.Accessor(item)
		if err != nil || m.GetNamespace() != namespace {
			continue
		}
		if d, ok := closeName(name, m.GetName()); ok {
			near = append(near, nearName{name: shownName(m.GetName()), distance: d})
		}
	}
	slices.SortFunc(near, func(x, y nearName) int {
		return cmp.Or(cmp.Compare(x.distance, y.distance), strings.Compare(x.name, y.name))
	})
	if len(near) == 0 {
		return ""
	}
	names := make([]string, 0, len(near))
	for _, n := range near {
		names = append(names, n.name)
	}
	return fmt.Sprintf("close names in %s: %s", namespace, fewNames(names))
}

// nearName is a close name and how many edits it is from the one asked for.
type nearName struct {
	name     string
	distance int
}

// fewNames names the first nearNamesMax of names, and counts the rest.
func fewNames(names []string) string {
	if len(names) <= nearNamesMax {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:nearNamesMax], ", "), len(names)-nearNamesMax)
}

// shownName is a name from the cluster made safe to show: one line, bounded.
func shownName(s string) string {
	return sanitize.Truncate(sanitize.Compact(s), nameRunes)
}

// closeName reports whether have is close to want, a name asked for: at most nearDistance
// edits apart (a third of want's length for short names, one at least), or one a prefix of
// the other sharing at least four characters ("podinfo", "podinfo-staging"). distance orders
// them; a prefix counts as the edits it takes, past nearDistance.
func closeName(want, have string) (distance int, ok bool) {
	if want == have {
		return 0, false
	}
	limit := min(nearDistance, max(1, len(want)/3))
	if d, ok := editDistance(want, have, limit); ok {
		return d, true
	}
	if len(want) >= 4 && len(have) >= 4 && (strings.HasPrefix(have, want) || strings.HasPrefix(want, have)) {
		return nearDistance + 1 + abs(len(have)-len(want)), true
	}
	return 0, false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// editDistance is the Levenshtein distance between a and b (bytes: Kubernetes names are
// ASCII) when it is at most limit; ok is false beyond it. It stops as soon as no path can stay
// within limit, so a long name costs little.
func editDistance(a, b string, limit int) (int, bool) {
	if abs(len(a)-len(b)) > limit {
		return 0, false
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return 0, false
		}
		prev, cur = cur, prev
	}
	return prev[len(b)], prev[len(b)] <= limit
}
