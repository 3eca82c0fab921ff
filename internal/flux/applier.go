package flux

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/result"
)

// The Flux object that applies an object from its own source, and whether it has applied
// all that source serves now: what decides whether a change merged to that source may still
// reach the object.

// helmOwnerGroup is the group of helm-controller's owner labels.
const helmOwnerGroup = "helm.toolkit.fluxcd.io"

// ApplierOf is the Flux object whose owner labels an object carries: a Kustomization's or a
// ResourceSet's (AppliedBy), or a HelmRelease's: helm-controller v1.6.4 labels every object of
// a release helm.toolkit.fluxcd.io/name and helm.toolkit.fluxcd.io/namespace with the
// HelmRelease's own (internal/postrender/build.go, NewOriginLabels). false when it carries
// none of them: nothing Flux applies it.
func ApplierOf(labels map[string]string) (Ref, bool) {
	if ref, ok := AppliedBy(labels); ok {
		return ref, true
	}
	name, namespace := labels[helmOwnerGroup+"/name"], labels[helmOwnerGroup+"/namespace"]
	if name == "" || namespace == "" {
		return Ref{}, false
	}
	return Ref{Kind: KindHelmRelease, Namespace: namespace, Name: name}, true
}

// ApplyPending says what the Flux object ref, obj (nil when not found), may still apply from
// its source src (ReadSource of its SourceOf; nil when not read): "" once it is Ready at its
// current generation on exactly the artifact src serves now (Evaluate's Current for
// src.Offers()), or once a Kustomization applied that artifact at its current generation and
// only its health checks failed (healthCheckFailedAfterApply), so that nothing it is about
// to apply changes what it applied. A ResourceSet
// generates its objects from inputs, not from one source, and whether they are about to
// change is not known: it is never done here. Else it is at work, behind its source, failed,
// suspended or not found, and the answer says which, for a person.
func ApplyPending(ref Ref, obj *unstructured.Unstructured, src *Source) string {
	switch {
	case ref.Kind != KindKustomization && ref.Kind != KindHelmRelease:
		return "generates it from inputs that may change"
	case obj == nil:
		return "is not found"
	case src == nil:
		return fmt.Sprintf("has a source the run has not read (%s)", SourceOf(ref.Kind, obj).ID())
	case src.Revision == "":
		return fmt.Sprintf("has not applied an artifact of %s yet: it has none", src.Ref.ID())
	}
	g := Evaluate(ref, obj, src.Offers(), src)
	if g.Verdict == result.VerdictCurrent || healthCheckFailedAfterApply(ref, g) {
		return ""
	}
	pending := fmt.Sprintf("has not applied its source's %s yet", ShortRevision(src.Revision))
	if g.Message != "" {
		pending += " (" + g.Message + ")"
	}
	return pending
}

// healthCheckFailedAfterApply reports whether a Kustomization's gate g, evaluated on its
// source's current artifact, says it applied that artifact at its current generation and then
// failed its health checks (Ready=False HealthCheckFailed: kustomizationApplied). With
// spec.wait or healthChecks naming a stalled generator it applies, kustomize-controller v1.9.5
// applies the generator, then its check fails on that very generator, and it sets Ready=False
// HealthCheckFailed without recording lastAppliedRevision (kustomization_controller.go:
// reconcile, 512-534; checkHealth, 1070): the apply is done, nothing more it does changes the
// generator, and its stall is the answer, not something to wait on until the timeout. Not
// when the failure may be of an older generation (Gate.MaybeOlderGeneration: Flux's patch
// helper stamps a reconcile that started before the spec changed with the new generation):
// the current spec, which may bring the fix, is then still to be applied.
func healthCheckFailedAfterApply(ref Ref, g Gate) bool {
	return ref.Kind == KindKustomization && g.Applied && g.Code == result.CodeFluxHealthCheckFailed && !g.MaybeOlderGeneration
}

// MayStillApply says whether the Kustomization or HelmRelease ref, obj, is still at work on,
// or behind, what its source src serves now: Evaluate's InProgress for src.Offers(). Not once
// it applied it (Current, or only its health checks failed after the apply), nor when it is
// suspended, failed on it (the controller applies nothing of that artifact until a new one
// comes), or cannot be verified from this cluster. A failure its controller retries and that
// may pass with no new commit (Gate.Retried: a dry-run against a CRD not served yet), or that
// may be of the generation before the current one (Gate.MaybeOlderGeneration), is still at
// work, as it is for the applier itself (ApplyPending).
func MayStillApply(ref Ref, obj *unstructured.Unstructured, src *Source) bool {
	if obj == nil || src == nil || src.Revision == "" {
		return false
	}
	g := Evaluate(ref, obj, src.Offers(), src)
	if healthCheckFailedAfterApply(ref, g) {
		return false
	}
	return g.Verdict == result.VerdictInProgress || g.Verdict == result.VerdictFailed && (g.Retried || g.MaybeOlderGeneration)
}

// MayFetch reports whether src, a Flux source with an artifact, may still serve want (set):
// it serves another revision now, is neither suspended nor stalled, and has not moved past
// want (MovedPast from first, src as the run first saw it with an artifact: Flux fetches the
// newest revision only).
func MayFetch(want Revision, first, src Source) bool {
	// (A stalled HelmChart is built again when its own source serves a new artifact: only a
	// stalled repository, bucket or OCI repository fetches nothing more.)
	stalled := src.Stalled && src.Ref.Kind != "HelmChart"
	return !want.IsZero() && src.Revision != "" && !src.Suspended && !stalled && !want.Matches(src.Revisions()...) && !MovedPast(want, first, src, false)
}

// FetchPending says that src, the source a generator's applier applies from (ApplyPending
// done with it), is also one of gen's own sources and does not serve want yet, the revision
// the object of gen's artifact waits for: want is then a revision of that very repository,
// and its fetch brings the applier a new artifact, which may change gen. "" otherwise: an
// applier of another repository (a fleet's) is done once it applied what that one serves,
// and a source that moved past want (MovedPast from first, src as the run first saw it with
// an artifact: Flux fetches the newest revision only) will not serve it, nor will one
// suspended or stalled. Where the ExternalArtifact the object applies (artifact, by name)
// takes its revision from named sources of gen (Generator.RevisionAliases), want is a
// revision of one of those: another source of gen (a fleet repository it copies a file
// from, or that another of its artifacts takes its revision from) is not waited for.
func FetchPending(gen Generator, artifact string, first, src Source, want Revision) string {
	if !MayFetch(want, first, src) {
		return ""
	}
	aliases := gen.RevisionAliases(artifact)
	for _, s := range gen.Sources {
		if s.Ref == src.Ref && (len(aliases) == 0 || slices.Contains(aliases, s.Alias)) {
			return fmt.Sprintf("applied %s of %s, a source of %s too, which has not fetched %s yet",
				ShortRevision(src.Revision), src.Ref.ID(), gen.Ref.ID(), ShortRevision(want.String()))
		}
	}
	return ""
}
