package flux

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/result"
)

// The ArtifactGenerator of source-watcher (Flux 2.7, source-watcher v2.2.4) writes the
// ExternalArtifacts it builds from Flux sources. It builds only when it reconciles: until
// then, and while its build fails, each ExternalArtifact keeps the artifact of its last
// build, Ready. Whether that build is of its sources' current artifacts, its status says:
// status.observedSourcesDigest, written only by a build that succeeded
// (internal/controller/artifactgenerator_controller.go, reconcile, before it marks Ready).

// KindArtifactGenerator is source-watcher's kind that writes ExternalArtifacts.
const KindArtifactGenerator = "ArtifactGenerator"

// ArtifactGeneratorGVR is the resource an ArtifactGenerator is read from.
var ArtifactGeneratorGVR = schema.GroupVersionResource{Group: "source.extensions.fluxcd.io", Version: "v1beta1", Resource: "artifactgenerators"}

// buildFailedReason is the reason an ArtifactGenerator's Ready=False takes when it could not
// build an artifact from its sources (fluxcd/pkg/apis/meta BuildFailedReason); it retries,
// and builds again from the same sources until they or its spec change.
const buildFailedReason = "BuildFailed"

// producerOf is the ArtifactGenerator an ExternalArtifact names as its spec.sourceRef (of
// source.extensions.fluxcd.io, in the ExternalArtifact's namespace unless it names one); the
// zero SourceRef when it names another producer.
func producerOf(obj *unstructured.Unstructured) SourceRef {
	m, ok, _ := unstructured.NestedMap(obj.Object, "spec", "sourceRef")
	group, _, _ := strings.Cut(str(m, "apiVersion"), "/")
	if !ok || str(m, "kind") != KindArtifactGenerator || group != ArtifactGeneratorGVR.Group || str(m, "name") == "" {
		return SourceRef{}
	}
	return SourceRef{Kind: KindArtifactGenerator, Namespace: cmp.Or(str(m, "namespace"), obj.GetNamespace()), Name: str(m, "name")}
}

// Generator is an ArtifactGenerator as its status records its last build.
type Generator struct {
	Ref SourceRef
	// Sources are spec.sources: each source's alias and reference (in the generator's
	// namespace unless it names one).
	Sources []GeneratorSource
	// Artifacts are spec.artifacts: the ExternalArtifacts it writes, each with the aliases
	// of the sources it takes its revision from.
	Artifacts []GeneratorArtifact
	// patterned is spec.pathPattern set: artifact names may be templates of its captures.
	patterned bool
	// Digest is status.observedSourcesDigest: ObservedSourcesDigest of the sources its last
	// successful build was made from.
	Digest               string
	generation           int64
	ready                condition
	reconciling, stalled condition
	// disabled is the annotation source.extensions.fluxcd.io/reconcile: disabled: it builds
	// nothing more.
	disabled bool
}

// GeneratorArtifact is one artifact of an ArtifactGenerator: its name (a template of
// spec.pathPattern's captures, "{app}", when that is set), and the aliases of the sources it
// takes its revision or origin revision from (revision, originRevision: "@alias"); none when
// its revision is the digest of its content.
type GeneratorArtifact struct {
	Name            string
	RevisionAliases []string
}

// RevisionAliases are the aliases of the sources the ExternalArtifact named artifact takes
// its revision from; none when it is the digest of its content, which any source may change.
// Where the artifact it is written by is not known (a name spec.pathPattern makes, or one no
// longer in the spec), those of every artifact, and none when one of them has none.
func (g Generator) RevisionAliases(artifact string) []string {
	if !g.patterned {
		for _, a := range g.Artifacts {
			if a.Name == artifact {
				return a.RevisionAliases
			}
		}
	}
	var union []string
	for _, a := range g.Artifacts {
		if len(a.RevisionAliases) == 0 {
			return nil
		}
		for _, alias := range a.RevisionAliases {
			if !slices.Contains(union, alias) {
				union = append(union, alias)
			}
		}
	}
	return union
}

// RevisionMovedOn reports whether a source the ExternalArtifact artifact takes its revision
// from (RevisionAliases) serves another revision than want now: the generator's next build
// writes artifact under another revision. False when want is zero, or when its revision is
// the digest of its content.
func (g Generator) RevisionMovedOn(artifact string, inputs map[string]*Source, want Revision) bool {
	if want.IsZero() {
		return false
	}
	for _, alias := range g.RevisionAliases(artifact) {
		if in := inputs[alias]; in != nil && in.Revision != "" && !want.Matches(in.Revisions()...) {
			return true
		}
	}
	return false
}

// GeneratorSource is one source of an ArtifactGenerator.
type GeneratorSource struct {
	Alias string
	Ref   SourceRef
}

// ReadGenerator reads an ArtifactGenerator.
func ReadGenerator(ref SourceRef, obj *unstructured.Unstructured) Generator {
	g := Generator{Ref: ref}
	u := obj.Object
	for _, m := range nestedMaps(u, "spec", "sources") {
		g.Sources = append(g.Sources, GeneratorSource{Alias: str(m, "alias"),
			Ref: SourceRef{Kind: str(m, "kind"), Namespace: cmp.Or(str(m, "namespace"), obj.GetNamespace()), Name: str(m, "name")}})
	}
	for _, m := range nestedMaps(u, "spec", "artifacts") {
		a := GeneratorArtifact{Name: str(m, "name")}
		for _, field := range []string{"revision", "originRevision"} {
			if alias, ok := strings.CutPrefix(str(m, field), "@"); ok && alias != "" && !slices.Contains(a.RevisionAliases, alias) {
				a.RevisionAliases = append(a.RevisionAliases, alias)
			}
		}
		g.Artifacts = append(g.Artifacts, a)
	}
	pattern, _, _ := unstructured.NestedString(u, "spec", "pathPattern")
	g.patterned = pattern != ""
	g.Digest, _, _ = unstructured.NestedString(u, "status", "observedSourcesDigest")
	g.generation = obj.GetGeneration()
	g.disabled = strings.EqualFold(obj.GetAnnotations()["source.extensions.fluxcd.io/reconcile"], "disabled")
	for _, m := range nestedMaps(u, "status", "conditions") {
		since, _ := time.Parse(time.RFC3339, str(m, "lastTransitionTime"))
		c := condition{status: str(m, "status"), reason: str(m, "reason"), message: str(m, "message"),
			observedGeneration: int64Field(m, "observedGeneration"), since: since}
		switch str(m, "type") {
		case meta.ReadyCondition:
			g.ready = c
		case meta.ReconcilingCondition:
			g.reconciling = c
		case meta.StalledCondition:
			g.stalled = c
		}
	}
	return g
}

// ObservedSource is what an ArtifactGenerator records of one source's artifact.
type ObservedSource struct {
	Digest, Revision, URL string
}

// ObservedSourcesDigest is the digest an ArtifactGenerator records of the artifacts it built
// from, by alias: source-watcher's HashObservedSources (api/v1beta1/observed_source.go,
// v2.2.4), "sha256:" and the hex SHA-256 of the sorted "ALIAS=[digest=D,revision=R,url=U]"
// joined by "|". (Its package imports controller-runtime, which this package never does;
// TestObservedSourcesDigestIsSourceWatchers, internal/fluxhealth, holds the two equal.)
func ObservedSourcesDigest(sources map[string]ObservedSource) string {
	parts := make([]string, 0, len(sources))
	for alias, s := range sources {
		parts = append(parts, fmt.Sprintf("%s=[digest=%s,revision=%s,url=%s]", alias, s.Digest, s.Revision, s.URL))
	}
	slices.Sort(parts)
	return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(strings.Join(parts, "|"))))
}

// GeneratorWait says whether the ExternalArtifact src holds what its ArtifactGenerator gen
// builds from its sources now (inputs, by alias; nil for one not found). Current when gen is
// Ready at its generation, not Reconciling, and its last build was of its sources' current
// artifacts (its observedSourcesDigest is theirs). Failed when source-watcher stalled on it
// for its spec (a stall on its sources' content, reason BuildFailed, which source-watcher
// clears when it reconciles a source's new artifact, is a failed build),
// or its build of those very artifacts at its generation failed (BuildFailed no earlier than
// the newest of them: a failure of older ones is followed by a build of the new ones; a stall
// on their content older than the newest one, once stallRebuildGrace has passed since that
// one was stored: until, meanwhile). InProgress otherwise: it is about to build, or building,
// or retrying what failed. want, when set, is the revision the object applying from src waits
// for: a failed build of sources none of which src takes its revision from serves it waits
// too, since a source that fetches it makes the generator build again (servedByNone).
func GeneratorWait(src Source, gen Generator, inputs map[string]*Source, want Revision, now time.Time) (verdict result.Verdict, code result.Code, message string, until time.Time) {
	id, code := gen.Ref.ID(), sourceCode(src.Ref)
	what := fmt.Sprintf("%s (which writes %s, artifact %s)", id, src.Ref.ID(), ShortRevision(src.Revision))
	if src.Revision == "" {
		what = fmt.Sprintf("%s (which writes %s, no artifact yet)", id, src.Ref.ID())
	}
	atGeneration := func(c condition) bool { return c.observedGeneration == gen.generation }
	observed := map[string]ObservedSource{}
	var missing string
	var newest time.Time
	for _, s := range gen.Sources {
		in := inputs[s.Alias]
		if in == nil || in.Revision == "" {
			missing = cmp.Or(missing, s.Ref.ID())
			continue
		}
		observed[s.Alias] = ObservedSource{Digest: in.Digest, Revision: in.Revision, URL: in.URL}
		if in.ArtifactUpdated.After(newest) {
			newest = in.ArtifactUpdated
		}
	}
	// A stall on content older than the newest artifact: source-watcher reconciles at once on
	// a source's new revision only (sourceChangePredicate, HasRevision), and that reconcile
	// marks Ready Unknown before it builds (a failure again is a new transition). An artifact
	// stored again under the same revision (an ExternalArtifact rebuilt to the same content,
	// whose lastUpdateTime is the time of its build) requeues nothing: past the grace, the
	// stall stands.
	failedSince := !gen.ready.since.IsZero() && !gen.ready.since.Before(newest)
	if gen.stalledOnContent() && !gen.ready.since.IsZero() && !failedSince {
		if end := newest.Add(stallRebuildGrace); now.Before(end) {
			until = end
		} else {
			failedSince = true
		}
	}
	switch {
	case gen.stalledForSpec():
		// (A stall on its sources' content, BuildFailed, is a failed build: the next
		// artifact of a source makes it build again, as below.)
		return result.VerdictFailed, code, fmt.Sprintf("%s stalled: %s", what, gen.stalled.message), time.Time{}
	case gen.ready.status == string(metav1.ConditionFalse) && gen.ready.reason == buildFailedReason && atGeneration(gen.ready) &&
		missing == "" && failedSince && !servedByNone(gen, src.Ref.Name, inputs, want):
		return result.VerdictFailed, code, fmt.Sprintf("%s failed to build from its sources' current artifacts: %s", what, gen.ready.message), time.Time{}
	case gen.disabled && (missing != "" || gen.ready.status != string(metav1.ConditionTrue) || !atGeneration(gen.ready) || gen.Digest != ObservedSourcesDigest(observed)):
		// source-watcher returns at once for it (Reconcile, IsDisabled), before it looks at
		// its sources: nothing will build, whether or not each has an artifact.
		return result.VerdictFailed, code, fmt.Sprintf("%s has not built from its sources' current artifacts (%s), and its reconciliation is disabled "+
			"(source.extensions.fluxcd.io/reconcile: disabled): it will not; enable it", what, inputsOf(gen, inputs)), time.Time{}
	case missing != "":
		return result.VerdictInProgress, code, fmt.Sprintf("waiting for %s, a source of %s, to have an artifact", missing, what), until
	case gen.ready.status != string(metav1.ConditionTrue) || !atGeneration(gen.ready) || gen.reconciling.status == string(metav1.ConditionTrue):
		return result.VerdictInProgress, code, fmt.Sprintf("waiting for %s to build at generation %d%s",
			what, gen.generation, because(cmp.Or(gen.ready.message, gen.reconciling.message))), until
	case gen.Digest != ObservedSourcesDigest(observed):
		return result.VerdictInProgress, code, fmt.Sprintf("waiting for %s to build from its sources' current artifacts (%s): its last build was of other artifacts",
			what, inputsOf(gen, inputs)), until
	}
	return result.VerdictCurrent, "", "", time.Time{}
}

// stalledForSpec reports whether source-watcher stalled on g at its generation for its spec
// (ValidationFailed, AccessDenied): no artifact of its sources heals that. A stall on its
// sources' content (BuildFailed, a path pattern) is cleared by its next reconcile.
func (g Generator) stalledForSpec() bool {
	return g.stalled.status == string(metav1.ConditionTrue) && g.stalled.observedGeneration == g.generation && g.stalled.reason != buildFailedReason
}

// stalledOnContent reports whether source-watcher stalled on g at its generation for its
// sources' content (BuildFailed: a terminal path pattern error): only a source's new revision,
// a change to its spec or a reconcile request makes it build again.
func (g Generator) stalledOnContent() bool {
	return g.stalled.status == string(metav1.ConditionTrue) && g.stalled.observedGeneration == g.generation && g.stalled.reason == buildFailedReason
}

// stallRebuildGrace is how long after a source's newest artifact was stored a generator
// stalled on its sources' content is given to reconcile it (at once, on a new revision).
const stallRebuildGrace = 2 * time.Minute

// Rebuilds reports whether g builds again when one of its sources serves a new artifact: its
// reconciliation is not disabled, and source-watcher has not stalled on it for its spec.
func (g Generator) Rebuilds() bool {
	return !g.disabled && !g.stalledForSpec()
}

// servedByNone reports whether want is set and none of gen's sources (inputs) that the
// ExternalArtifact artifact takes its revision from (RevisionAliases; any when that is the
// digest of its content) serves it: another source's artifact of want is not the one a
// build of want waits for, and the fetch of want by one of those makes gen build again.
func servedByNone(gen Generator, artifact string, inputs map[string]*Source, want Revision) bool {
	if want.IsZero() {
		return false
	}
	aliases := gen.RevisionAliases(artifact)
	for _, s := range gen.Sources {
		if len(aliases) > 0 && !slices.Contains(aliases, s.Alias) {
			continue
		}
		if in := inputs[s.Alias]; in != nil && want.Matches(in.Revisions()...) {
			return false
		}
	}
	return true
}

// ArtifactAwaited reports whether an object that waits on src for want still waits for an
// artifact src does not serve: it has none, or (want set) none of want.
func ArtifactAwaited(src Source, want Revision) bool {
	return src.Revision == "" || (!want.IsZero() && !want.Matches(src.Revisions()...))
}

// ProducerFailedMessage says that the ExternalArtifact src will not serve what an object
// waits for (want; any artifact when zero), its producer having failed (message,
// GeneratorWait's).
func ProducerFailedMessage(src Source, want Revision, message string) string {
	if src.Revision == "" {
		return fmt.Sprintf("%s; %s has no artifact, and gets none until it builds", message, src.Ref.ID())
	}
	return fmt.Sprintf("%s; %s serves %s, and will not serve %s until it builds", message, src.Ref.ID(), ShortRevision(src.Revision), ShortRevision(want.String()))
}

// inputsOf names a generator's sources and their current revisions.
func inputsOf(gen Generator, inputs map[string]*Source) string {
	names := make([]string, 0, len(gen.Sources))
	for _, s := range gen.Sources {
		switch in := inputs[s.Alias]; {
		case in == nil:
			names = append(names, s.Ref.ID()+" not found")
		case in.Revision == "":
			names = append(names, s.Ref.ID()+" no artifact")
		default:
			names = append(names, s.Ref.ID()+" "+ShortRevision(in.Revision))
		}
	}
	return strings.Join(names, ", ")
}
