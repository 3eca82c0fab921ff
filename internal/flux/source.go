package flux

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/result"
)

// The source kinds of source.toolkit.fluxcd.io/v1 a Kustomization or a HelmRelease applies
// from, with the resource the engine reads them as.
var sourceResources = map[string]string{
	"GitRepository":  "gitrepositories",
	"OCIRepository":  "ocirepositories",
	"Bucket":         "buckets",
	"HelmChart":      "helmcharts",
	"HelmRepository": "helmrepositories",
	// An ExternalArtifact (Flux 2.7) is written by another controller (source-watcher's
	// ArtifactGenerator); kustomize-controller and helm-controller accept it as a sourceRef
	// and a chartRef.
	KindExternalArtifact: "externalartifacts",
}

// KindExternalArtifact is the source kind another controller writes an artifact to.
const KindExternalArtifact = "ExternalArtifact"

const sourceGroup = "source.toolkit.fluxcd.io"

// originRevisionKey is the artifact metadata key that holds the revision an OCI artifact was
// built from (`flux push artifact --revision main@sha1:<sha>`); kustomize-controller records it
// as lastAppliedOriginRevision.
const originRevisionKey = "org.opencontainers.image.revision"

// SourceRef names the source a Flux object applies from.
type SourceRef struct {
	Kind, Namespace, Name string
}

// ID is Kind/namespace/name, or "" for the zero SourceRef.
func (r SourceRef) ID() string {
	if r.Name == "" {
		return ""
	}
	return result.ObjectID(r.Kind, r.Namespace, r.Name)
}

// GroupVersionResource is the resource the source is read from; false for a kind that is not
// a Flux source.
func (r SourceRef) GroupVersionResource() (schema.GroupVersionResource, bool) {
	res, ok := sourceResources[r.Kind]
	return schema.GroupVersionResource{Group: sourceGroup, Version: "v1", Resource: res}, ok
}

// SourceOf returns the source a Flux object applies from: a Kustomization's spec.sourceRef; a
// HelmRelease's spec.chartRef (an OCIRepository or a HelmChart), or the HelmChart
// helm-controller makes for its spec.chart, named NAMESPACE-NAME in the namespace of the chart's
// own source. The zero SourceRef when the object names none.
func SourceOf(kind Kind, obj *unstructured.Unstructured) SourceRef {
	if obj == nil {
		return SourceRef{}
	}
	ref := func(fields ...string) SourceRef {
		m, ok, _ := unstructured.NestedMap(obj.Object, fields...)
		if !ok || str(m, "name") == "" {
			return SourceRef{}
		}
		return SourceRef{Kind: str(m, "kind"), Namespace: cmp.Or(str(m, "namespace"), obj.GetNamespace()), Name: str(m, "name")}
	}
	switch kind {
	case KindKustomization:
		return ref("spec", "sourceRef")
	case KindHelmRelease:
		if r := ref("spec", "chartRef"); r.Name != "" {
			return r
		}
		if chartSource := ref("spec", "chart", "spec", "sourceRef"); chartSource.Name != "" {
			// helm-controller records the chart it made as status.helmChart, NAMESPACE/NAME.
			if made, _, _ := unstructured.NestedString(obj.Object, "status", "helmChart"); made != "" {
				if ns, name, ok := strings.Cut(made, "/"); ok && ns != "" && name != "" {
					return SourceRef{Kind: "HelmChart", Namespace: ns, Name: name}
				}
			}
			return SourceRef{Kind: "HelmChart", Namespace: chartSource.Namespace, Name: obj.GetNamespace() + "-" + obj.GetName()}
		}
	}
	return SourceRef{}
}

// InventorySource returns the source an inventory entry is, when it is one
// (source.toolkit.fluxcd.io).
func InventorySource(o ObjectRef) (SourceRef, bool) {
	if _, ok := sourceResources[o.Kind]; !ok || o.Group != sourceGroup {
		return SourceRef{}, false
	}
	return SourceRef{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}, true
}

// NeededSource is the source a Flux object cannot go on without, as its spec names it:
// SourceOf's, but for a HelmRelease's spec.chart the chart's own source
// (spec.chart.spec.sourceRef, in the HelmRelease's namespace unless it names one), since
// helm-controller makes the HelmChart itself. The zero SourceRef when it names none.
func NeededSource(kind Kind, obj *unstructured.Unstructured) SourceRef {
	ref := SourceOf(kind, obj)
	if kind != KindHelmRelease || ref.Kind != "HelmChart" {
		return ref
	}
	if chartRef, ok, _ := unstructured.NestedMap(obj.Object, "spec", "chartRef"); ok && str(chartRef, "name") != "" {
		return ref
	}
	m, _, _ := unstructured.NestedMap(obj.Object, "spec", "chart", "spec", "sourceRef")
	return SourceRef{Kind: str(m, "kind"), Namespace: cmp.Or(str(m, "namespace"), obj.GetNamespace()), Name: str(m, "name")}
}

// WaitsForSource reports whether a Kustomization or HelmRelease says it cannot go on for its
// source: Ready=False with reason ArtifactFailed (kustomize-controller v1.9.5 getSource,
// helm-controller v1.6.4 "could not get Source object: …") or SourceNotReady (helm-controller,
// a source or HelmChart without an artifact, as a chart whose repository is missing is).
func WaitsForSource(kind Kind, obj *unstructured.Unstructured) bool {
	ready := readView(kind, obj).cond(meta.ReadyCondition)
	return ready.status == string(metav1.ConditionFalse) && (ready.reason == meta.ArtifactFailedReason || ready.reason == "SourceNotReady")
}

// chartSourceOf returns the source a HelmChart is built from (a GitRepository, a Bucket or a
// HelmRepository, in the chart's namespace).
func chartSourceOf(chart *unstructured.Unstructured, namespace string) SourceRef {
	m, ok, _ := unstructured.NestedMap(chart.Object, "spec", "sourceRef")
	if !ok || str(m, "name") == "" {
		return SourceRef{}
	}
	return SourceRef{Kind: str(m, "kind"), Namespace: namespace, Name: str(m, "name")}
}

// Source is what a Flux source offers now, as source-controller records it.
type Source struct {
	Ref SourceRef
	// Revision is status.artifact.revision: main@sha1:<sha>, latest@sha256:<digest>, a chart
	// version. Empty until the source has an artifact.
	Revision string
	// OriginRevision is the revision the artifact was built from, when its metadata says
	// (an OCI artifact pushed with `flux push artifact --revision`).
	OriginRevision string
	// BuiltFrom is a HelmChart's status.observedSourceArtifactRevision: the revision of its
	// own source that it last built from (or is building from).
	BuiltFrom string
	// Done reports whether the artifact is of the current spec: source-controller has
	// reconciled the current generation (a new branch, tag or semver range the owner's revision
	// set). A HelmChart is done once it has built: Ready, not reconciling, at the current
	// generation (it records the revision it builds from before it has built). A source that
	// fails to fetch again (an expired key) keeps serving its artifact, and is done.
	Done bool
	// Stalled is source-controller's word that it cannot get further without a change (a
	// chart that cannot be built from this revision, an invalid spec); Message says why.
	Stalled bool
	Message string
	// Remote is set for a HelmRepository of type oci, which has no artifact.
	Remote bool
	// Upstream is a HelmChart's own source (spec.sourceRef).
	Upstream SourceRef
	// StalledReason is the Stalled condition's reason, and StalledSince its
	// lastTransitionTime (zero when missing).
	StalledReason string
	StalledSince  time.Time
	// Interval is spec.interval: how often source-controller fetches the source again.
	Interval time.Duration
	// ArtifactUpdated is status.artifact.lastUpdateTime: when source-controller last stored a
	// new artifact (a HelmRepository's index that changed); zero when missing.
	ArtifactUpdated time.Time
	// Digest and URL are status.artifact.digest and url, which an ArtifactGenerator records
	// of the sources it builds from (ObservedSourcesDigest).
	Digest, URL string
	// Producer is the ArtifactGenerator an ExternalArtifact names as its spec.sourceRef: it
	// holds what that generator last built, which GeneratorWait compares with its sources.
	Producer SourceRef
	// Suspended is spec.suspend: source-controller fetches nothing more.
	Suspended bool
}

// invalidChartReferenceReason is source-controller's reason for a chart that its source does
// not hold (internal/helm/chart ErrChartReference, v1.9.5): "no 'web' chart with version
// matching '1.1.0' found". It stalls on it, and builds the chart again whenever the
// HelmRepository's index changes (requestsForHelmRepositoryChange).
const invalidChartReferenceReason = "InvalidChartReference"

// ReadSource reads a source object; nil reads as a source with no artifact yet.
func ReadSource(ref SourceRef, obj *unstructured.Unstructured) Source {
	s := Source{Ref: ref}
	if obj == nil {
		return s
	}
	u := obj.Object
	s.Revision, _, _ = unstructured.NestedString(u, "status", "artifact", "revision")
	s.OriginRevision, _, _ = unstructured.NestedString(u, "status", "artifact", "metadata", originRevisionKey)
	s.BuiltFrom, _, _ = unstructured.NestedString(u, "status", "observedSourceArtifactRevision")
	s.Digest, _, _ = unstructured.NestedString(u, "status", "artifact", "digest")
	s.URL, _, _ = unstructured.NestedString(u, "status", "artifact", "url")
	if at, _, _ := unstructured.NestedString(u, "status", "artifact", "lastUpdateTime"); at != "" {
		s.ArtifactUpdated, _ = time.Parse(time.RFC3339, at)
	}
	s.Suspended, _, _ = unstructured.NestedBool(u, "spec", "suspend")
	if ref.Kind == "HelmChart" {
		s.Upstream = chartSourceOf(obj, ref.Namespace)
	}
	if t, _, _ := unstructured.NestedString(u, "spec", "type"); ref.Kind == "HelmRepository" && t == "oci" {
		s.Remote = true
	}
	generation, observed := int64Field(u, "metadata", "generation"), int64Field(u, "status", "observedGeneration")
	if iv, _, _ := unstructured.NestedString(u, "spec", "interval"); iv != "" {
		if d, err := time.ParseDuration(iv); err == nil && d > 0 {
			s.Interval = d
		}
	}
	if s.Interval == 0 && ref.Kind == "HelmRepository" && !s.Remote {
		// An HTTP one's spec.interval is optional: source-controller v1.9.3 fetches every minute then
		// (api/v1 HelmRepository GetRequeueAfter).
		s.Interval = time.Minute
	}
	var ready, reconciling, stalled condition
	for _, m := range nestedMaps(u, "status", "conditions") {
		since, _ := time.Parse(time.RFC3339, str(m, "lastTransitionTime"))
		c := condition{status: str(m, "status"), reason: str(m, "reason"), message: str(m, "message"), since: since}
		switch str(m, "type") {
		case meta.ReadyCondition:
			ready = c
		case meta.ReconcilingCondition:
			reconciling = c
		case meta.StalledCondition:
			stalled = c
		}
	}
	s.Done = observed == generation
	if ref.Kind == KindExternalArtifact {
		// Its producer writes its status whole (no observedGeneration, no Reconciling), and
		// kustomize-controller and helm-controller apply the artifact it holds whatever its
		// Ready says (v1.9.5 getSource, v1.6.4 isSourceReady check only that there is one):
		// that artifact is what it offers; a producer that fails says so in the message.
		// Whether it is of the producer's current sources, an ArtifactGenerator says
		// (GeneratorWait).
		s.Done = s.Revision != ""
		s.Producer = producerOf(obj)
	}
	if ref.Kind == "HelmChart" {
		s.Done = s.Done && ready.status == string(metav1.ConditionTrue) && reconciling.status != string(metav1.ConditionTrue)
	}
	if stalled.status == string(metav1.ConditionTrue) && (observed == generation || ref.Kind == KindExternalArtifact) {
		s.Stalled, s.Message = true, stalled.message
		s.StalledReason, s.StalledSince = stalled.reason, stalled.since
	} else if ready.status == string(metav1.ConditionFalse) {
		s.Message = ready.message
	}
	return s
}

// Revisions are the revisions the source's artifact stands for: its own, the revision it
// was built from (an OCI artifact's origin), and, for a HelmChart, the revision of its own
// source it was built from.
func (s Source) Revisions() []string {
	return nonEmpty(s.Revision, s.OriginRevision, s.BuiltFrom)
}

// Offers is the revision an object applying from the source must have applied: exactly the
// source's artifact. The zero Revision when the source has no artifact.
func (s Source) Offers() Revision {
	return RecordedRevision(s.Revision)
}

// RecordedRevision is the expected revision matching a revision as Flux records it, exactly
// (with its digest, when it has one); the zero Revision for "".
func RecordedRevision(s string) Revision {
	if s == "" {
		return Revision{}
	}
	if r, err := ParseRevision(s); err == nil {
		return r
	}
	return Revision{raw: s, form: formRef, ref: s}
}

// Superseded reports whether a source has moved past the expected revision while the run
// watched it, and the object has moved on with it: the source's artifact changed from first,
// the one the run saw first, to one that is not the expected revision, and the object works on
// that artifact, not on the expected revision (attempting, Gate.Attempting). Flux applies the
// newest artifact only: the expected revision will not be applied. While the object still
// works on the expected revision (a health check Flux does not cancel for a new revision), it
// may yet be applied. A source first seen on another revision may be older or newer than the
// expected one; only a move tells.
func Superseded(want Revision, first string, now Source, attempting []string) bool {
	if first == "" || sameRecorded(first, now.Revision) {
		return false
	}
	return MovedOn(want, now, attempting)
}

// MovedOn reports whether the object works on its source's current artifact, which is not
// the expected revision (attempting, Gate.Attempting). Whether the expected revision came
// before it is Superseded's to tell, unless the object applied it (Gate.HasApplied): then
// Flux finished it before it started the artifact it works on now.
func MovedOn(want Revision, now Source, attempting []string) bool {
	if want.IsZero() || now.Revision == "" {
		return false
	}
	if want.Matches(now.Revisions()...) || want.Matches(attempting...) {
		return false
	}
	return now.Offers().Matches(attempting...)
}

// MovedPast reports whether a source will not offer the expected revision any more, so that
// waiting for its artifact to carry it is in vain: its artifact is another revision, and
// either the object applied the expected one before (applied, Gate.HasApplied: Flux finished
// it, then the source moved on), or the artifact changed from first, the one the run saw
// first, to that other one (Flux fetches the newest; a source first seen on another revision
// may be older or newer than the expected one, and only a move tells, as for Superseded).
// A HelmChart built again from a newer revision of its own source moved past an expected
// commit or digest too, and past an expected tag when it was built from another tag; not past
// a version on the same branch (a later commit may set it), nor when its source is a
// HelmRepository, whose index revision moves whenever any chart is published.
func MovedPast(want Revision, first, now Source, applied bool) bool {
	if want.IsZero() || now.Revision == "" || want.Matches(now.Revisions()...) {
		return false
	}
	if applied {
		return true
	}
	if first.Revision == "" {
		return false
	}
	rebuilt := first.BuiltFrom != now.BuiltFrom && now.Upstream.Kind != "HelmRepository" &&
		(want.NamesArtifact() || splitRevision(first.BuiltFrom).ref != splitRevision(now.BuiltFrom).ref)
	return !sameRecorded(first.Revision, now.Revision) || rebuilt
}

// SupersededMessage says which revision the source moved to instead of the expected one.
func SupersededMessage(want Revision, src Source) string {
	return fmt.Sprintf("%s moved on to %s: %s will not be applied (Flux applies the newest revision only); verify %s instead, or push again",
		src.Ref.ID(), ShortRevision(src.Revision), ShortRevision(want.String()), ShortRevision(src.Revision))
}

// SupersededAfterApplyMessage says that the expected revision was applied before the source
// moved on: Flux finished it, and now applies the newer one.
func SupersededAfterApplyMessage(want Revision, src Source) string {
	return fmt.Sprintf("applied %s, then %s moved on to %s, which Flux applies now: what it runs is being replaced and is not verified here",
		ShortRevision(want.String()), src.Ref.ID(), ShortRevision(src.Revision))
}

// SupersededUnverifiedMessage says that the expected revision was applied before the source
// moved on, and that neither Flux (how: what it did not wait for) nor the run verified its
// workloads: what runs now is the newer revision's.
func SupersededUnverifiedMessage(want Revision, src Source, how string) string {
	return fmt.Sprintf("applied %s, then superseded before its workloads were verified: %s moved on to %s, which Flux applies now, "+
		"and Flux did not wait for %s's workloads before it said so (%s), so whether they rolled out cannot be told; "+
		"verify %s, or set spec.wait: true (a HelmRelease: keep Helm's wait) to make such a run verifiable",
		ShortRevision(want.String()), src.Ref.ID(), ShortRevision(src.Revision), ShortRevision(want.String()), how, ShortRevision(src.Revision))
}

// sameRecorded reports whether two recorded revisions name the same artifact, across the
// legacy and current formats.
func sameRecorded(a, b string) bool {
	if a == b {
		return true
	}
	pa, pb := splitRevision(a), splitRevision(b)
	return pa.digest != "" && pa.digest == pb.digest && pa.algo == pb.algo
}

func nonEmpty(ss ...string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
