package assess

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/helmstorage"
	"github.com/org/app-status-action/internal/result"
)

// fixtureNow is the moment every fixture is assessed at.
var fixtureNow = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// fixtureKinds are the kinds the fixtures hold, with their resources and scope.
var fixtureKinds = kindsOf(map[schema.GroupVersionResource]string{
	{Group: "apps", Version: "v1", Resource: "deployments"}:  "Deployment",
	{Group: "apps", Version: "v1", Resource: "statefulsets"}: "StatefulSet",
	{Group: "apps", Version: "v1", Resource: "daemonsets"}:   "DaemonSet",
	canaryGVR:                               "Canary",
	{Version: "v1", Resource: "services"}:   "Service",
	{Version: "v1", Resource: "configmaps"}: "ConfigMap",
	{Version: "v1", Resource: "secrets"}:    "Secret",
	PodsGVR:                                 "Pod",
	RSGVR:                                   "ReplicaSet",
	JobsGVR:                                 "Job",
	RevisionsGVR:                            "ControllerRevision",
	{Group: "example.com", Version: "v1", Resource: "widgets"}:                        "Widget",
	{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}: "Kustomization",
	{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}:        "HelmRelease",
	{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "gitrepositories"}:   "GitRepository",
	{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "ocirepositories"}:   "OCIRepository",
	{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "externalartifacts"}: "ExternalArtifact",
	{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmcharts"}:        "HelmChart",
	{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmrepositories"}:  "HelmRepository",
	{Group: "fluxcd.controlplane.io", Version: "v1", Resource: "resourcesets"}:        "ResourceSet",
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}:            "Role",
	flux.ArtifactGeneratorGVR: "ArtifactGenerator",
	kueueWorkloadsGVR:         "Workload",
	{Group: "kueue.x-k8s.io", Version: "v1beta1", Resource: "workloads"}: "Workload",
	namespacesKey.GVR: "Namespace",
	crdsKey.GVR:       "CustomResourceDefinition",
	{Version: "v1", Resource: "persistentvolumeclaims"}: "PersistentVolumeClaim",
	storageClassesKey.GVR:                               "StorageClass",
})

// kueueWorkloadsGVR is Kueue's Workloads (v1beta2): a fixture serves them (runs Kueue) only
// in the version one of its documents is of.
var kueueWorkloadsGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}

func kindsOf(resources map[schema.GroupVersionResource]string) map[schema.GroupVersionKind]schema.GroupVersionResource {
	kinds := map[schema.GroupVersionKind]schema.GroupVersionResource{}
	for gvr, kind := range resources {
		kinds[gvr.GroupVersion().WithKind(kind)] = gvr
	}
	return kinds
}

// fixtureList is one kind in one namespace of a fixture view.
type fixtureList struct {
	objects map[string]any
	err     error
	// ordered lists were read at one moment (Snapshot): sent and done, and the list's
	// resourceVersion when the fixture gives one.
	ordered    bool
	sent, done uint64
	revision   string
	// asked, when set, is when a list still on its way was asked for.
	asked time.Time
	// facts are what the view learned of its objects (a document's facts).
	facts map[string]ObjectFacts
}

func (l *fixtureList) Synced() bool { return l.err == nil && l.asked.IsZero() }
func (l *fixtureList) Err() error   { return l.err }
func (l *fixtureList) WaitingSince() time.Time {
	if !l.asked.IsZero() {
		return l.asked
	}
	return fixtureNow.Add(-time.Hour)
}
func (l *fixtureList) Object(namespace, name string) (any, bool) {
	o, ok := l.objects[namespace+"/"+name]
	return o, ok
}

func (l *fixtureList) Items() []any {
	out := make([]any, 0, len(l.objects))
	for _, o := range l.objects {
		out = append(out, o)
	}
	return out
}
func (l *fixtureList) Gone(string, string) (any, time.Time, bool) { return nil, time.Time{}, false }
func (l *fixtureList) Noted(string, string) time.Time             { return time.Time{} }
func (l *fixtureList) Facts(namespace, name string) ObjectFacts {
	return l.facts[namespace+"/"+name]
}

// orderedList is a fixtureList read at one moment (Snapshot, Ordered).
type orderedList struct{ *fixtureList }

func (l orderedList) ReadOrder() (sent, done uint64) { return l.sent, l.done }
func (l orderedList) Revision() string               { return l.revision }

// fixtureView is a cluster made of YAML documents: every kind of fixtureKinds is listed (empty
// when no document has it), discovery knows them all, and no Helm storage is read.
type fixtureView struct {
	lists     map[ListKey]*fixtureList
	forbidden map[schema.GroupResource]bool
	// forbiddenAll are the resources whose lists of every namespace are forbidden, the
	// lists of one namespace allowed (forbidAllNamespaces).
	forbiddenAll map[schema.GroupResource]bool
	// failing are the resources whose lists fail, with their error; onItsWay those whose
	// first list has not answered yet, since when (failList, delayList).
	failing  map[schema.GroupResource]error
	onItsWay map[schema.GroupResource]time.Time
	// flagger is set for a cluster that serves Flagger's Canaries (its CRDs are installed).
	flagger bool
	// unreadableConfigs, when set, is why no ConfigMap's or Secret's data can be read.
	unreadableConfigs string
	// reads are the resources read in order (newFixtureView's order), with their place.
	reads map[string]fixtureRead
	// composed is what the fetching side found composing each HelmRelease's values (by
	// namespace/name, a document's composedValues): the digest, or why it could not.
	composed map[string]StoredConfig
}

// fixtureRead is where a resource's lists stand among the reads: sent and done, and their
// resourceVersion ("" when the fixture gives none).
type fixtureRead struct {
	sent, done uint64
	revision   string
}

// newFixtureView reads docs (YAML documents separated by ---). order, when set, lists the
// resources in the order they were read: each list of such a resource was requested once
// the lists before it had returned (Snapshot), at the resourceVersion after "@" when given
// ("deployments@120"); the others are watches, which know no order.
func newFixtureView(t *testing.T, docs string, order ...string) *fixtureView {
	t.Helper()
	v := &fixtureView{lists: map[ListKey]*fixtureList{}, forbidden: map[schema.GroupResource]bool{}, reads: map[string]fixtureRead{}}
	for i, read := range order {
		resource, revision, _ := strings.Cut(read, "@")
		v.reads[resource] = fixtureRead{sent: uint64(i), done: uint64(i + 1), revision: revision}
	}
	for _, doc := range strings.Split(docs, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		data, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
		gvr, ok := fixtureKinds[u.GroupVersionKind()]
		if !ok {
			t.Fatalf("fixture kind %s unknown", u.GroupVersionKind())
		}
		facts := documentFacts(t, u)
		v.takeComposed(u)
		lists := []*fixtureList{v.list(ListKey{GVR: gvr, Namespace: u.GetNamespace()})}
		if u.GetNamespace() != "" {
			// (The list of every namespace holds it too.)
			lists = append(lists, v.list(ListKey{GVR: gvr}))
		}
		for _, l := range lists {
			id := u.GetNamespace() + "/" + u.GetName()
			l.objects[id] = typed(t, gvr, u)
			if !facts.IsZero() {
				if l.facts == nil {
					l.facts = map[string]ObjectFacts{}
				}
				l.facts[id] = facts
			}
		}
	}
	return v
}

// documentFacts takes a document's top-level facts field out of u: what the view learned of
// the object beside it (ObjectFacts), as notFromGit, skippedBy and flaggerWorkload write it.
// It is the one place the fixtures state facts of the view.
func documentFacts(t *testing.T, u *unstructured.Unstructured) ObjectFacts {
	t.Helper()
	raw, ok := u.Object["facts"].(map[string]any)
	if !ok {
		return ObjectFacts{}
	}
	delete(u.Object, "facts")
	var f ObjectFacts
	if keys, ok := raw["notFromGit"].([]any); ok {
		for _, k := range keys {
			f.NotFromGit = append(f.NotFromGit, k.(string))
		}
	}
	if name, _ := raw["kustomizeSkip"].(string); name != "" {
		skips := map[string]flux.ApplySkip{"reconcile-disabled": flux.SkipReconcileDisabled, "ssa-ignore": flux.SkipSSAIgnore, "ssa-if-not-present": flux.SkipSSAIfNotPresent}
		if f.KustomizeSkip = skips[name]; f.KustomizeSkip == flux.NotSkipped {
			t.Fatalf("facts.kustomizeSkip %q unknown", name)
		}
	}
	if at, _ := raw["templateWritten"].(string); at != "" {
		written, err := time.Parse(time.RFC3339, at)
		if err != nil {
			t.Fatalf("facts.templateWritten %q: %v", at, err)
		}
		f.TemplateWritten = written
	}
	return f
}

// takeComposed takes a document's top-level composedValues field out of u: what the fetching
// side found composing a HelmRelease's values ({digest: ...} or {unreadable: ...}); a
// HelmRelease without it is being composed.
func (v *fixtureView) takeComposed(u *unstructured.Unstructured) {
	raw, ok := u.Object["composedValues"].(map[string]any)
	if !ok {
		return
	}
	delete(u.Object, "composedValues")
	if v.composed == nil {
		v.composed = map[string]StoredConfig{}
	}
	d, _ := raw["digest"].(string)
	unreadable, _ := raw["unreadable"].(string)
	v.composed[u.GetNamespace()+"/"+u.GetName()] = StoredConfig{Checksum: d, Unreadable: unreadable}
}

// typed converts the classifier's kinds as the view holds them.
func typed(t *testing.T, gvr schema.GroupVersionResource, u *unstructured.Unstructured) any {
	t.Helper()
	var out runtime.Object
	switch gvr {
	case PodsGVR:
		out = &corev1.Pod{}
	case RSGVR:
		out = &appsv1.ReplicaSet{}
	case JobsGVR:
		out = &batchv1.Job{}
	case RevisionsGVR:
		out = &appsv1.ControllerRevision{}
	default:
		return u
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (v *fixtureView) list(key ListKey) *fixtureList {
	l, ok := v.lists[key]
	if !ok {
		l = &fixtureList{objects: map[string]any{}}
		if v.forbidden[key.GVR.GroupResource()] || key.Namespace == "" && v.forbiddenAll[key.GVR.GroupResource()] {
			l.err = apierrors.NewForbidden(key.GVR.GroupResource(), "", errors.New("no RBAC"))
		}
		if err, ok := v.failing[key.GVR.GroupResource()]; ok {
			l.err = err
		}
		l.asked = v.onItsWay[key.GVR.GroupResource()]
		if r, ok := v.reads[key.GVR.Resource]; ok {
			// (A resource read in order is, in every namespace, even one with no document.)
			l.ordered, l.sent, l.done, l.revision = true, r.sent, r.done, r.revision
		}
		v.lists[key] = l
	}
	return l
}

// failList makes every list of gr fail with err.
func (v *fixtureView) failList(gr schema.GroupResource, err error) {
	if v.failing == nil {
		v.failing = map[schema.GroupResource]error{}
	}
	v.failing[gr] = err
	for key, l := range v.lists {
		if key.GVR.GroupResource() == gr {
			l.err = err
		}
	}
}

// forbidAllNamespaces makes the lists of gr in every namespace forbidden, as a Role in each
// namespace allows the lists of one.
func (v *fixtureView) forbidAllNamespaces(gr schema.GroupResource) {
	if v.forbiddenAll == nil {
		v.forbiddenAll = map[schema.GroupResource]bool{}
	}
	v.forbiddenAll[gr] = true
	for key, l := range v.lists {
		if key.GVR.GroupResource() == gr && key.Namespace == "" {
			l.err = apierrors.NewForbidden(gr, "", errors.New("no RBAC"))
		}
	}
}

// delayList makes every list of gr one asked for at since that has not answered yet.
func (v *fixtureView) delayList(gr schema.GroupResource, since time.Time) {
	if v.onItsWay == nil {
		v.onItsWay = map[schema.GroupResource]time.Time{}
	}
	v.onItsWay[gr] = since
	for key, l := range v.lists {
		if key.GVR.GroupResource() == gr {
			l.asked = since
		}
	}
}

func (v *fixtureView) List(key ListKey) (List, bool) {
	key.Names = false // (a list of names holds the same objects here)
	l := v.list(key)
	if l.ordered {
		return orderedList{l}, true
	}
	return l, true
}

func (v *fixtureView) Mapping(gvk schema.GroupVersionKind) Mapping {
	gvr, ok := fixtureKinds[gvk]
	if !ok || (gvk == CanaryGVK && !v.flagger) || (gvk.Group == kueueWorkloadsGVR.Group && v.lists[ListKey{GVR: gvr}] == nil) {
		return Mapping{Done: true, Err: NotServedError{GVK: gvk}}
	}
	return Mapping{Done: true, Mapping: &meta.RESTMapping{Resource: gvr, GroupVersionKind: gvk, Scope: meta.RESTScopeNamespace}}
}

// Release reads a Helm storage secret from the fixture's documents, its key
// "namespace/name@digest", and decodes it as the fetching side does (verify's readRelease):
// not there, it is still being read.
func (v *fixtureView) Release(key string) (StoredRelease, bool) {
	id, _, _ := strings.Cut(key, "@")
	ns, _, _ := strings.Cut(id, "/")
	l := v.lists[ListKey{GVR: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, Namespace: ns}]
	if l == nil {
		return StoredRelease{}, false
	}
	u, ok := l.objects[id].(*unstructured.Unstructured)
	if !ok {
		return StoredRelease{}, false
	}
	encoded, _, _ := unstructured.NestedString(u.Object, "data", helmstorage.DataKey)
	data, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return StoredRelease{Undecodable: true}, true
	}
	refs, err := helmstorage.Objects(data)
	if err != nil {
		return StoredRelease{Undecodable: true}, true
	}
	return StoredRelease{Objects: refs}, true
}

// Config reads the data of the ConfigMap or Secret a ConfigNeed's key names
// ("resource/namespace/name@resourceVersion") from the fixture's documents, as the fetching
// side reads them; unreadableConfigs makes every such read fail as one the credentials may
// not make. A HelmRelease's ("helmreleases/namespace/name@...") is its document's
// composedValues.
func (v *fixtureView) Config(key string) (StoredConfig, bool) {
	if v.unreadableConfigs != "" {
		return StoredConfig{Unreadable: v.unreadableConfigs}, true
	}
	resource, rest, _ := strings.Cut(key, "/")
	ns, rest, _ := strings.Cut(rest, "/")
	name, _, _ := strings.Cut(rest, "@")
	if resource == "helmreleases" {
		stored, ok := v.composed[ns+"/"+name]
		return stored, ok
	}
	l, ok := v.lists[ListKey{GVR: schema.GroupVersionResource{Version: "v1", Resource: resource}, Namespace: ns}]
	if !ok {
		return StoredConfig{}, false
	}
	u, ok := l.objects[ns+"/"+name].(*unstructured.Unstructured)
	if !ok {
		return StoredConfig{Unreadable: "not found"}, true
	}
	return StoredConfig{Checksum: FlaggerChecksum(u.Object["data"])}, true
}

// Read classifies the list's error as the fetching side does: what it knows settles a
// cluster's verdict when a read of what is judged meets it.
func (l *fixtureList) Read() ReadFacts {
	err := l.err
	if err == nil {
		return ReadFacts{}
	}
	f := ReadFailure{Detail: err.Error()}
	var status apierrors.APIStatus
	switch {
	case apierrors.IsForbidden(err):
		f.Cause = ReadForbidden
	case apierrors.IsUnauthorized(err):
		f.Cause = ReadUnauthorized
	case apierrors.IsTooManyRequests(err):
		f.Cause = ReadThrottled
	case apierrors.IsNotFound(err) && errors.As(err, &status) && (status.Status().Details == nil || status.Status().Details.Name == ""):
		f.Cause = ReadNotServed
	}
	return ReadFacts{Failure: f}
}

// fixtureCase is one run against a cluster given as YAML documents: each look is the
// documents at a moment and what is expected then, the looks sharing the run's memory.
// runFixtureCases runs every case as `get` (Spec.Snapshot: each list read once, no waiting)
// and as `verify` (the waiting mode), from the same documents.
type fixtureCase struct {
	name string
	// resources are the requested Flux objects: the Kustomization flux-system/app when none.
	resources []flux.Ref
	// revision is the revision expected: revB when "".
	revision string
	// noWorkloads verifies only the Flux objects; failOnSuspended fails a suspended one.
	noWorkloads, failOnSuspended bool
	// forbidden are the resources the credentials may not list.
	forbidden []schema.GroupResource
	// reads is the order the lists are read in: fixtureReads when nil.
	reads []string
	looks []fixtureLook
}

// fixtureLook is one assessment of a fixtureCase: the documents, the moment (fixtureNow when
// zero), and what `verify` decides then; get, when set, is what `get` decides where it differs.
type fixtureLook struct {
	docs []string
	at   time.Time
	want expected
	get  *expected
}

// expected is what a look asserts: the outcome always, the rest when set.
type expected struct {
	Outcome outcome
	// Says are parts of the verdict's message (the Fatal's, else the Pending's).
	Says []string
	// Objects are the statuses of every object judged: nil asserts nothing, empty that none is.
	Objects map[string]result.ObjectStatus
	// ObjectSays are parts of objects' messages, by ID.
	ObjectSays map[string]string
	// Flux are Flux objects of the assessment, by ID.
	Flux map[string]fluxExpected
	// Recheck is the moment the assessment asks to be made again.
	Recheck time.Time
}

// fluxExpected is what a Flux object of the assessment is: its verdict, the Flux object whose
// inventory lists it ("" for a requested one), whether it applies to a remote cluster, and a
// part of its message.
type fluxExpected struct {
	Verdict result.Verdict
	Owner   string
	Remote  bool
	Says    string
}

// fixtureReads is the order the fixtures' lists are read in: the Flux objects, then their
// sources (an ExternalArtifact after the ArtifactGenerator that writes it), then what the
// inventories hold, so that every object judged is read after the Flux status above it (the
// consistency rule).
var fixtureReads = []string{"kustomizations", "helmreleases", "resourcesets", "gitrepositories", "ocirepositories",
	"helmrepositories", "helmcharts", "artifactgenerators", "externalartifacts", "deployments", "statefulsets", "daemonsets",
	"replicasets", "pods", "jobs", "canaries", "services", "configmaps", "secrets", "roles", "widgets",
	"persistentvolumeclaims", "storageclasses"}

// runFixtureCases runs each case as `get` and as `verify`, each with a memory of its own.
func runFixtureCases(t *testing.T, cases []fixtureCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			revision := tc.revision
			if revision == "" {
				revision = revB
			}
			rev, err := flux.ParseRevision(revision)
			if err != nil {
				t.Fatal(err)
			}
			resources := tc.resources
			if resources == nil {
				resources = []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}}
			}
			for _, mode := range []string{"get", "verify"} {
				spec := Spec{Resources: resources, Revision: rev, Workloads: !tc.noWorkloads, FailOnSuspended: tc.failOnSuspended,
					Snapshot: mode == "get", Health: fluxhealth.New(t.Context())}
				mem := NewMemory()
				for i, l := range tc.looks {
					reads := tc.reads
					if reads == nil {
						reads = fixtureReads
					}
					view := newFixtureView(t, strings.Join(l.docs, "\n---\n"), reads...)
					for _, gr := range tc.forbidden {
						view.failList(gr, apierrors.NewForbidden(gr, "", errors.New("no RBAC")))
					}
					at := l.at
					if at.IsZero() {
						at = fixtureNow
					}
					want := l.want
					if mode == "get" && l.get != nil {
						want = *l.get
					}
					e := Assess(view, mem, spec, at)
					if diff := cmp.Diff(want, expectedOf(e, want)); diff != "" {
						t.Errorf("%s, look %d (-want +got):\n%s\npending %+v\nfatal %+v", mode, i, diff, e.Pending, e.Fatal)
					}
				}
			}
		})
	}
}

// expectedOf is what e shows of what want asserts.
func expectedOf(e *Assessment, want expected) expected {
	got := expected{Outcome: outcomeOf(e)}
	finding := e.Fatal
	if finding == nil {
		finding = e.Pending
	}
	for _, part := range want.Says {
		switch {
		case finding == nil:
			got.Says = append(got.Says, "(no message)")
		case strings.Contains(finding.Message, part):
			got.Says = append(got.Says, part)
		default:
			got.Says = append(got.Says, finding.Message)
		}
	}
	if want.Objects != nil {
		got.Objects = map[string]result.ObjectStatus{}
		for _, o := range e.Objects {
			got.Objects[o.ID] = o.Status
		}
	}
	if want.ObjectSays != nil {
		got.ObjectSays = map[string]string{}
		for id, part := range want.ObjectSays {
			got.ObjectSays[id] = "(not judged)"
			for _, o := range e.Objects {
				if o.ID == id {
					got.ObjectSays[id] = containing(o.Message, part)
				}
			}
		}
	}
	if want.Flux != nil {
		got.Flux = map[string]fluxExpected{}
		for _, f := range e.Flux {
			if w, ok := want.Flux[f.ID]; ok {
				got.Flux[f.ID] = fluxExpected{Verdict: f.Verdict, Owner: f.Owner, Remote: f.Remote, Says: containing(f.Message, w.Says)}
			}
		}
	}
	if !want.Recheck.IsZero() {
		got.Recheck = e.Recheck
	}
	return got
}

// containing is part when message contains it, else the message, for a diff to show.
func containing(message, part string) string {
	if strings.Contains(message, part) {
		return part
	}
	return message
}

// notFromGit is docs as the view holds them when the annotations keys of the workloads among
// them were set in the cluster, not by Flux: the fetching side drops them and names them in
// the object's facts (documentFacts).
func notFromGit(t *testing.T, docs string, keys ...string) string {
	t.Helper()
	out := strings.Split(docs, "\n---\n")
	for i, doc := range out {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		annotations := u.GetAnnotations()
		var dropped []string
		for _, k := range keys {
			if _, ok := annotations[k]; ok {
				delete(annotations, k)
				dropped = append(dropped, k)
			}
		}
		if len(dropped) == 0 {
			continue
		}
		u.SetAnnotations(annotations)
		u.Object["facts"] = map[string]any{"notFromGit": dropped}
		data, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(data)
	}
	return strings.Join(out, "\n---\n")
}
