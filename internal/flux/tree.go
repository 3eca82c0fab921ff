package flux

import (
	"fmt"

	"github.com/org/app-status-action/internal/result"
)

// The rules of a Flux tree: what a Flux object met in another's inventory, or named in its
// dependsOn, must have applied for the run to be done. They decide from the objects alone;
// the engine reads the objects and the sources they name.

// NestedWant is the revision a nested object (or a dependency) must have applied:
//   - its owner's, when both apply from the same source (a Kustomization of the same
//     GitRepository applies the same commit);
//   - else exactly what its own source offers now (the artifact revision of its GitRepository,
//     OCIRepository or Bucket, the chart of its HelmChart or OCIRepository), once
//     source-controller is done with that source (SourceWait says when it is not);
//   - none when its source cannot be read: it then has to be Ready at whatever it last
//     attempted, at the generation its owner applied.
func NestedWant(ownerSource string, ownerWant Revision, source SourceRef, src *Source) Revision {
	if id := source.ID(); id != "" && id == ownerSource {
		return ownerWant
	}
	if src == nil {
		return Revision{}
	}
	return src.Offers()
}

// SourceWait says whether a nested object's source is not settled yet, and so what the object
// applied says nothing of what it will run: the source has no artifact yet, source-controller
// has not fetched its current spec (a new branch or tag the owner's revision set), or a
// HelmChart has not built the chart from its own source's current artifact (a chart built
// from the same Git repository as its owner lags the owner's commit). verdict is InProgress
// while it may get there, Failed when source-controller stalled on it; Current when settled.
// upstream is a HelmChart's own source, when known. A HelmChart built from the owner's own
// source (ownerSource) must have built from the owner's expected revision (ownerWant, when
// set), whatever the cache of the upstream says: it may lag the owner's.
func SourceWait(src Source, upstream *Source, ownerSource string, ownerWant Revision) (verdict result.Verdict, code result.Code, message string) {
	id := src.Ref.ID()
	code = result.CodeFluxArtifactFailed
	if src.Ref.Kind == "HelmChart" {
		code = result.CodeFluxChartFailed
	}
	switch {
	case src.Stalled:
		return result.VerdictFailed, code, fmt.Sprintf("%s stalled: %s", id, src.Message)
	case src.Remote:
		return result.VerdictCurrent, "", ""
	case src.Revision == "":
		return result.VerdictInProgress, code, fmt.Sprintf("waiting for %s to have an artifact%s", id, because(src.Message))
	case !src.Done:
		return result.VerdictInProgress, code, fmt.Sprintf("waiting for %s to finish %s (artifact %s)%s", sourceController(src.Ref), id, ShortRevision(src.Revision), because(src.Message))
	}
	if id := src.Upstream.ID(); id != "" && id == ownerSource && !ownerWant.IsZero() {
		if !ownerWant.Matches(src.BuiltFrom) {
			return result.VerdictInProgress, code, fmt.Sprintf("waiting for %s to build from %s %s (it built from %s)",
				src.Ref.ID(), id, ShortRevision(ownerWant.String()), orUnknown(ShortRevision(src.BuiltFrom)))
		}
		return result.VerdictCurrent, "", ""
	}
	if upstream != nil && upstream.Revision != "" && !sameRecorded(src.BuiltFrom, upstream.Revision) {
		return result.VerdictInProgress, code, fmt.Sprintf("waiting for %s to build from %s %s (it built from %s)",
			id, upstream.Ref.ID(), ShortRevision(upstream.Revision), orUnknown(ShortRevision(src.BuiltFrom)))
	}
	return result.VerdictCurrent, "", ""
}

// sourceController names what writes a source's artifact.
func sourceController(ref SourceRef) string {
	if ref.Kind == KindExternalArtifact {
		return "its producer"
	}
	return "source-controller"
}

func because(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}
