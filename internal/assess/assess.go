// Package assess decides, purely, whether a Flux app is rolled out on one cluster: Assess takes
// a view of what was read (the Flux objects, their sources, the inventories' objects, Helm's
// release records), the run's own memory and what is verified, and returns the cluster's state
// at that moment, with what it could not judge for want of a read (lists to open, kinds to map,
// Helm releases to read) as data. It imports no Kubernetes client, reads no clock, starts no
// goroutine and no watch: internal/verify fetches what an assessment needs and assesses again.
// `verify` and `get` run this same decision, so they agree on the same view.
package assess

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// Spec is what is verified on a cluster.
type Spec struct {
	Resources []flux.Ref
	// Revision is the revision every resource must have applied; zero accepts any.
	Revision flux.Revision
	// Workloads also judges every object of the inventories, not only the Flux objects.
	Workloads bool
	// FailOnSuspended fails a suspended nested Flux object.
	FailOnSuspended bool
	// Classify holds the rollout-failure classifier's thresholds.
	Classify classify.Options
	// Snapshot is set when every list is read once (app-status get): a list that failed is
	// not waited for.
	Snapshot bool
	// Health judges Jobs and the kinds of spec.healthCheckExprs as Flux does (required).
	Health Health
	// NotFoundGrace is how long a requested Flux object may be missing before the cluster is
	// NotFound, unless Flux may still create it; zero means DefaultNotFoundGrace.
	NotFoundGrace time.Duration
}

// ListKey names one list: a resource type in a namespace ("" for cluster-scoped).
type ListKey struct {
	GVR       schema.GroupVersionResource
	Namespace string
	// Names is set for a list read only for its objects' names (a NotFound message's
	// namespaces of a name): it holds their metadata.
	Names bool
}

// Metadata reports whether the list holds only its objects' metadata (MetadataOnly, Names).
func (k ListKey) Metadata() bool { return k.Names || MetadataOnly[k.GVR.GroupResource()] }

// List is what the view holds of one kind in one namespace.
type List interface {
	// Synced reports whether the first list has arrived.
	Synced() bool
	// Err is the last error of a list or a watch, if any.
	Err() error
	// Read is what the fetching side found out about the list's reads: why Err failed,
	// whether it was itself short of CPU while the first list was awaited.
	Read() ReadFacts
	// WaitingSince is when the first list was asked for.
	WaitingSince() time.Time
	// Object returns the object namespace/name.
	Object(namespace, name string) (any, bool)
	// Items returns every object.
	Items() []any
	// Gone returns the last state of an object the view saw deleted (Jobs only), and when;
	// an object created again since is not gone.
	Gone(namespace, name string) (last any, at time.Time, ok bool)
	// Noted is the latest moment read from any state of the object the view saw (a
	// HelmRelease's start of a reconcile, flux.ReconcileStarted); zero when none.
	Noted(namespace, name string) time.Time
	// Facts is what the view learned of the object's state it holds, from what it dropped
	// before it kept it; zero when nothing, or no such object.
	Facts(namespace, name string) ObjectFacts
}

// ObjectFacts is what the fetching side learned of a cached object's state from what it drops
// before keeping it (its metadata.managedFields): data of the view kept beside the object,
// never on it, so nothing written on the object in the cluster can pass for it.
type ObjectFacts struct {
	// NotFromGit are the object's app-status.io annotations that Flux did not apply (set in
	// the cluster: kubectl annotate, a mutating policy, an operator), sorted; the view
	// dropped them from the object, and its message names them.
	NotFromGit []string
	// KustomizeSkip is why kustomize-controller skips applying the object, by its labels and
	// annotations in the cluster (flux.KustomizeSkip, read with its managedFields).
	KustomizeSkip flux.ApplySkip
	// TemplateWritten is, for a Deployment or DaemonSet, the latest time a field manager
	// wrote its pod template (the time of the managedFields entries that own spec.template,
	// in the API server's clock); zero when none says. A Flagger Canary's state is of this
	// template only when Flagger wrote it later.
	TemplateWritten time.Time
}

// IsZero reports whether f says nothing.
func (f ObjectFacts) IsZero() bool {
	return len(f.NotFromGit) == 0 && f.KustomizeSkip == flux.NotSkipped && f.TemplateWritten.IsZero()
}

// Snapshot is a List that holds every object as of one etcd revision, its Revision: a list
// request with no resourceVersion (a quorum read: the API server answers from etcd, or from a
// watch cache it first brought up to date) gives the list's resourceVersion; a watch whose
// cache was found equal to such a list, and has not changed since, has its revision. ""
// when it has none.
type Snapshot interface {
	Revision() string
}

// ObjectSnapshot is a List that also knows single objects proven since its Revision:
// ObjectRevision is a revision that a quorum read of the object namespace/name followed
// (ObjectProof), while the list still holds the object at the resourceVersion that read
// found; "" when no such read did.
type ObjectSnapshot interface {
	ObjectRevision(namespace, name string) string
}

// ObjectProof is one object an Unconfirmed list's part of the verdict rests on: a quorum read
// of the object alone (linearizable: it answers at the cluster's latest revision), requested
// once the assessment that asks for it was made, follows AtLeast, the resourceVersion of the
// Flux status that names the object, which that assessment had read. Finding the object at
// the resourceVersion the list holds it at then proves the list's copy as of AtLeast
// (ObjectSnapshot).
type ObjectProof struct {
	Namespace, Name, AtLeast string
}

// Ordered is a List that knows its place among the cluster's reads: it was requested once
// sent reads had returned, and its own answer was the done-th. It orders lists whose
// revisions do not compare (a server whose resourceVersions are no etcd revisions).
type Ordered interface {
	ReadOrder() (sent, done uint64)
}

// Mapping is what discovery answered for a kind: Done once it answered, Err when it could
// not map the kind.
type Mapping struct {
	Mapping *meta.RESTMapping
	Err     error
	Done    bool
}

// View is what was read of a cluster. Its methods only read. A View is one moment for one
// Assess: a list it returns does not change while Assess runs (the fetching side hands each
// pass frozen copies of its caches), and the revision a list says (Snapshot) was taken no
// later than its objects, which are therefore at least that new.
type View interface {
	// List returns the list of key; ok is false when it was never asked for (a need).
	List(key ListKey) (l List, ok bool)
	// Mapping returns what discovery answered for gvk so far.
	Mapping(gvk schema.GroupVersionKind) Mapping
	// Release returns the Helm release record read under key (a ReleaseNeed's Key).
	Release(key string) (StoredRelease, bool)
	// Config returns what was read of a ConfigMap's or Secret's data under key (a
	// ConfigNeed's Key).
	Config(key string) (StoredConfig, bool)
}

// StoredRelease is what the Helm storage secret of one release version lists, or why it could
// not be read (Finding set). It never holds the secret's content.
type StoredRelease struct {
	Objects []flux.ObjectRef
	Finding Finding
	// Undecodable is set when the secret holds nothing that decodes as a Helm release: it is
	// written once per release version, so reading it again cannot help (undecodableRelease).
	Undecodable bool
	// RetryAt is when to read again; zero when reading again cannot help.
	RetryAt time.Time
}

// ReleaseNeed names a Helm storage secret to read.
type ReleaseNeed struct {
	// Key is what View.Release finds its answer under.
	Key string
	// Owner is the HelmRelease's ID.
	Owner           string
	Namespace, Name string
}

// StoredConfig is what one read of a ConfigMap's or Secret's data found: their
// FlaggerChecksum, never the data; for a HelmRelease's need, the digest of the values
// composed from them (ConfigNeed.Release), never the values; or why they could not be read or
// composed (Unreadable, for a person, naming no value).
type StoredConfig struct {
	Checksum   string
	Unreadable string
	// RetryAt is when to read again; zero when reading again cannot help.
	RetryAt time.Time
}

// ConfigNeed names a ConfigMap or Secret whose data's checksum the decision needs, as of the
// resourceVersion its (metadata-only) list holds; or, with Release set, a HelmRelease whose
// values the decision needs composed from the data of its valuesFrom as they are now, as
// helm-controller composes them, and digested as it records them
// (flux.AttemptedConfigDigest), as of the resourceVersions those objects' lists hold.
type ConfigNeed struct {
	// Key is what View.Config finds the answer under.
	Key             string
	GVR             schema.GroupVersionResource
	Namespace, Name string
	// Release is the HelmRelease (GVR helmreleases, Namespace and Name its own) as the
	// decision judged it: its spec.values and spec.valuesFrom are composed. Nil for a
	// ConfigMap or Secret.
	Release *unstructured.Unstructured
}

// Needs is what an assessment could not judge for want of a read.
type Needs struct {
	Lists    []ListKey
	Mappings []schema.GroupVersionKind
	Releases []ReleaseNeed
	Configs  []ConfigNeed
}

// Empty reports whether nothing is needed.
func (n Needs) Empty() bool {
	return len(n.Lists) == 0 && len(n.Mappings) == 0 && len(n.Releases) == 0 && len(n.Configs) == 0
}

// Finding explains a verdict.
type Finding struct {
	Verdict result.Verdict
	Code    result.Code
	Reason  string
	Message string
	// Progress is what a reason to wait tells a person: the cluster's state (zero), an
	// internal step of the run (a list, discovery, a read) shown only on request, or a phase
	// of a Flux reconcile.
	Progress Progress
}

// Progress is what a reason to wait tells a person.
type Progress int

// The kinds of reasons to wait.
const (
	// ProgressState is what the cluster waits for now, as a person acts on it.
	ProgressState Progress = iota
	// ProgressStep is an internal step of the run: a list, discovery of a kind, a read.
	ProgressStep
	// ProgressPhase is a Flux controller at work on a reconcile (flux.Gate.Working).
	ProgressPhase
)

// Assessment is the state of one cluster at one moment.
type Assessment struct {
	Flux    []result.FluxObject
	Objects []result.Object

	// Fatal is set by what settles the cluster's verdict on its own: a failure, a
	// suspension, or credentials that may not read what is needed. Of several, the most
	// urgent (result.MoreUrgent) is kept, the first of those, so that a failure is never
	// hidden by what was met before it (an Unverified root, a suspended object).
	Fatal *Finding
	// Pending is the first reason the cluster is not done yet; nil when everything is Current.
	Pending *Finding
	// NotFound is set when a requested Flux object does not exist (yet).
	NotFound bool
	// Syncing is true while a list is still loading (or was never asked for).
	Syncing bool
	// Listing is true while a first list is on its way (not failed).
	Listing bool
	// InFlight are the lists of the inventories' kinds whose first list is on its way, each
	// once (not the classifier's, nor the Flux objects' own).
	InFlight []List
	// Recheck is the earliest moment a grace period ends.
	Recheck time.Time
	// ReadinessIgnored is how many of Objects are not Current and not verified because the
	// team's annotation says their readiness does not count (IgnoredReadiness).
	ReadinessIgnored int
	// SkippedByKustomize is how many of Objects are not Current and not verified because
	// kustomize-controller skips them (ObjectFacts.KustomizeSkip); PausedByKustomize how many
	// are Current but paused (reconcile: disabled, ssa: Ignore): not rolled out.
	SkippedByKustomize, PausedByKustomize int
	// AwaitingConsumer is how many of Objects are claims not bound and not verified because
	// their StorageClass binds them only once a pod that uses them is scheduled
	// (judgeClaimObject).
	AwaitingConsumer int
	// CRDsNotCreated is how many of Objects are CRDs not found and not verified because
	// helm-controller does not create the CRDs of its HelmRelease's chart (notCreatedCRD).
	CRDsNotCreated int
	// HeldRollouts is how many of Objects are Current but their rollout waits for a person
	// (classify.HeldRollout): not rolled out; HeldNotVerified how many are not Current and
	// not verified for the same reason.
	HeldRollouts, HeldNotVerified int
	// SkippedSuspended are the nested objects reported suspended and not judged.
	SkippedSuspended []string
	// RootsApplied is set when every requested object has applied the expected revision.
	RootsApplied bool
	// Needs is what the decision lacked.
	Needs Needs
	// Unconfirmed are the lists whose objects the verdict would rest on without their having
	// been read after the Flux status that says applied (see consistency); when only they
	// stand between the assessment and Current, Pending says so and AwaitsConsistentRead is
	// set: the fetching side reads them again, after the Flux objects, and assesses again.
	Unconfirmed          []ListKey
	AwaitsConsistentRead bool
	// unconfirmedObjects are, for a list of Unconfirmed, the objects the verdict rests on
	// that it could not confirm, each with the revision a read of it must be known to follow
	// (ObjectsToConfirm); wholeUnconfirmed are the lists some judge read whole.
	unconfirmedObjects map[ListKey][]ObjectProof
	wholeUnconfirmed   map[ListKey]bool

	appliedRoots int
	// fatals are all the findings that settle the verdict, in the order met: Fatal is the most
	// urgent of them; Conclude looks for another when Fatal is held (unheldFatal).
	fatals   []Finding
	mappings map[schema.GroupVersionKind]Mapping
	needed   map[any]bool
}

// Current reports whether the assessment is a Current verdict: nothing failed, nothing
// pending, nothing missing.
func (e *Assessment) Current() bool {
	return e.Fatal == nil && e.Pending == nil && !e.Syncing && e.Needs.Empty()
}

func (e *Assessment) fail(v Finding) {
	e.fatals = append(e.fatals, v)
	if e.Fatal == nil || result.MoreUrgent(v.Verdict, e.Fatal.Verdict) {
		e.Fatal = &v
	}
}

// unheldFatal is the most urgent finding that settles the verdict and that w does not hold
// (the first of equals), nil when w holds them all: a failure of the state before the run's
// own reconcile request never hides another root's failure that stands.
func (e *Assessment) unheldFatal(w *ReconcileWait) *Finding {
	var found *Finding
	for i := range e.fatals {
		f := &e.fatals[i]
		if w.heldBefore(f) {
			continue
		}
		if found == nil || result.MoreUrgent(f.Verdict, found.Verdict) {
			found = f
		}
	}
	return found
}

// failed reports whether a failure already settles the verdict: nothing met later can change
// it but another failure's words.
func (e *Assessment) failed() bool {
	return e.Fatal != nil && !result.MoreUrgent(result.VerdictFailed, e.Fatal.Verdict)
}

func (e *Assessment) wait(v Finding) {
	if e.Pending == nil {
		e.Pending = &v
	}
}

// RecheckAt asks for another assessment at t at the latest.
func (e *Assessment) RecheckAt(t time.Time) { e.recheckAt(t) }

func (e *Assessment) recheckAt(t time.Time) {
	if !t.IsZero() && (e.Recheck.IsZero() || t.Before(e.Recheck)) {
		e.Recheck = t
	}
}

// retryReadAt asks for another assessment when a failed read's answer, used meanwhile, may be
// read again (retryAt); none once that time is past, since the read again is then on its way
// (a need), and its end wakes the loop: a recheck in the past would make pass after pass
// until it ends.
func (e *Assessment) retryReadAt(retryAt, now time.Time) {
	if now.Before(retryAt) {
		e.recheckAt(retryAt)
	}
}

// need records a read the decision lacks, once.
func (e *Assessment) need(what any) {
	if e.needed == nil {
		e.needed = map[any]bool{}
	}
	if e.needed[what] {
		return
	}
	e.needed[what] = true
	switch n := what.(type) {
	case ListKey:
		e.Needs.Lists = append(e.Needs.Lists, n)
	case schema.GroupVersionKind:
		e.Needs.Mappings = append(e.Needs.Mappings, n)
	case ReleaseNeed:
		e.Needs.Releases = append(e.Needs.Releases, n)
	case ConfigNeed:
		e.Needs.Configs = append(e.Needs.Configs, n)
	}
}

// Memory is the run's own state between assessments of one cluster: what the run saw first
// (artifacts, attempts, installs, failures) and caches of what it parsed. Only Assess changes
// it.
type Memory struct {
	// inventories caches each Flux object's parsed inventory by resourceVersion.
	inventories map[string]parsedInventory
	// statuses memoizes the status of each cached object state.
	statuses statusMemo
	// healthExprs caches each Flux object's compiled spec.healthCheckExprs.
	healthExprs map[string]*compiledExprs
	// lastObjects is how many objects the last assessment listed.
	lastObjects int
	// firstArtifacts is the source the run first saw with an artifact, for each source a
	// requested object, or a stalled generator's applier, applies from: a move away from it
	// supersedes the expected revision.
	firstArtifacts map[string]flux.Source
	// firstWorkedOn is when the run first saw each Flux object working on the expected
	// revision: a Job deleted before that was of a previous revision.
	firstWorkedOn map[string]time.Time
	// upgradeBaselines and lastRevisions are the rollout revisions of a HelmRelease's
	// workloads when an upgrade attempt started, and the last seen outside one.
	upgradeBaselines map[string]string
	lastRevisions    map[string]string
	// installSeen is when the run first saw each HelmRelease installing a chart.
	installSeen map[string]time.Time
	// retriedSince is when the run first saw each Flux object fail in a way its controller
	// retries, by object and code; forgotten once the object is Current.
	retriedSince map[string]time.Time
	// generationFailedAt is the first end of a failed attempt the run saw of a Kustomization
	// whose failure may be of an older generation (flux.Gate.MaybeOlderGeneration), by
	// object and generation: a later one is of that generation.
	generationFailedAt map[string]time.Time
	// healthFailedAt is the first failure of a Kustomization's health checks the run saw, by
	// object and revision: kustomize-controller's retry after it bounds the wait.
	healthFailedAt map[string]time.Time
	// canaryStale is when the run first saw each Canary state older than its target's
	// template, by Canary, template and state (judgeCanaryObject).
	canaryStale map[string]time.Time
	// controllerUnavailable is when the run first saw each Flux controller's Deployment with
	// replicas but none available, by namespace and name (Preflight); forgotten once one is.
	controllerUnavailable map[string]time.Time
	// passes is how many assessments were made with this memory (Passes).
	passes int
	// missingSince is when the run first saw each requested Flux object missing (missingRoot).
	missingSince map[string]time.Time
	// creatorRetriedSince is when the run first saw each Kustomization or ResourceSet retry an
	// apply that failed on what may still come (creatorRetryOver).
	creatorRetriedSince map[string]time.Time
}

// Passes is how many times Assess has judged the cluster with this memory: the engine's work
// per cluster, which the fleet benchmark reports.
func (m *Memory) Passes() int { return m.passes }

// NewMemory is the memory of a run that has seen nothing yet.
func NewMemory() *Memory {
	return &Memory{inventories: map[string]parsedInventory{}}
}

// assessor is one assessment under way.
type assessor struct {
	view View
	mem  *Memory
	spec Spec
	now  time.Time
	e    *Assessment
	// fluxLists is the list each Flux object was read from, and fluxRevisions the
	// resourceVersion of the object read, by its ID (consistency).
	fluxLists     map[string]List
	fluxRevisions map[string]string
	// tree is every inventory of the tree, by its Flux object's ID (treeInventories).
	tree map[string][]flux.ObjectRef
	// exprs are the compiled spec.healthCheckExprs of the Flux objects walked, by ID.
	exprs map[string]*compiledExprs
	// revisions are the Snapshots' revisions as the assessment first took each (revisionAt).
	revisions map[ListKey]string
	// judgingFix holds the ArtifactGenerators whose fix generatorFixPending is judging, by
	// ID: one met again on the way is not followed again.
	judgingFix map[string]bool
}

// MappingRetry is how long a kind that could not be mapped waits before it is asked again.
const MappingRetry = 2 * time.Second

// Assess decides the cluster's state from view at now. Its only effect is on mem, the run's
// memory (what it saw first, parse caches); it reads nothing but view and starts nothing: what
// it lacked is in the assessment's Needs.
func Assess(view View, mem *Memory, spec Spec, now time.Time) *Assessment {
	if mem.inventories == nil {
		mem.inventories = map[string]parsedInventory{}
	}
	mem.passes++
	a := &assessor{view: view, mem: mem, spec: spec, now: now}
	return a.assess()
}
