package flux

import (
	"fmt"
	"time"

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
//
// A HelmChart stalled on a chart version its HTTP HelmRepository's index does not list yet
// waits for the repository's next fetch (IndexWait; now is the moment of the decision, until
// when to look again).
func SourceWait(src Source, upstream *Source, ownerSource string, ownerWant Revision, now time.Time) (verdict result.Verdict, code result.Code, message string, until time.Time) {
	id := src.Ref.ID()
	code = sourceCode(src.Ref)
	switch {
	case src.Stalled && rebuilding(src, upstream, ownerSource, ownerWant) != "":
		return result.VerdictInProgress, code, rebuildMessage(src, rebuilding(src, upstream, ownerSource, ownerWant)), time.Time{}
	case src.Stalled && indexMayList(src, upstream):
		verdict, message, until = IndexWait(src, upstream, now)
		return verdict, code, message, until
	case src.Stalled:
		return result.VerdictFailed, code, fmt.Sprintf("%s stalled: %s", id, src.Message), time.Time{}
	case src.Remote:
		return result.VerdictCurrent, "", "", time.Time{}
	case src.Revision == "":
		return result.VerdictInProgress, code, fmt.Sprintf("waiting for %s to have an artifact%s", id, because(src.Message)), time.Time{}
	case !src.Done:
		return result.VerdictInProgress, code, fmt.Sprintf("waiting for %s to finish %s (artifact %s)%s", sourceController(src.Ref), id, ShortRevision(src.Revision), because(src.Message)), time.Time{}
	}
	if id := src.Upstream.ID(); id != "" && id == ownerSource && !ownerWant.IsZero() {
		if !ownerWant.Matches(src.BuiltFrom) {
			return result.VerdictInProgress, code, fmt.Sprintf("waiting for %s to build from %s %s (it built from %s)",
				src.Ref.ID(), id, ShortRevision(ownerWant.String()), orUnknown(ShortRevision(src.BuiltFrom))), time.Time{}
		}
		return result.VerdictCurrent, "", "", time.Time{}
	}
	if upstream != nil && upstream.Revision != "" && !sameRecorded(src.BuiltFrom, upstream.Revision) {
		return result.VerdictInProgress, code, fmt.Sprintf("waiting for %s to build from %s %s (it built from %s)",
			id, upstream.Ref.ID(), ShortRevision(upstream.Revision), orUnknown(ShortRevision(src.BuiltFrom))), time.Time{}
	}
	return result.VerdictCurrent, "", "", time.Time{}
}

// rebuilding returns the revision of its own source a stalled HelmChart is about to be built
// from again, "" when none: it was built (status.observedSourceArtifactRevision) from another
// revision than its source's current artifact (upstream, when read), or than the owner's
// expected revision when the chart is of the owner's own source (ownerSource; its cache may
// lag the owner's). source-controller v1.9.3 (helmchart_controller.go
// requestsForGitRepositoryChange, requestsForBucketChange, requestsForHelmRepositoryChange)
// queues every chart of a source whose new artifact it was not built from, stalled or not: its
// stall says nothing of that revision yet. A HelmRepository of type oci has no artifact, and
// nothing to compare.
func rebuilding(src Source, upstream *Source, ownerSource string, ownerWant Revision) string {
	if src.Ref.Kind != "HelmChart" || src.BuiltFrom == "" {
		return ""
	}
	if id := src.Upstream.ID(); id != "" && id == ownerSource && !ownerWant.IsZero() && !ownerWant.Matches(src.BuiltFrom) {
		return ownerWant.String()
	}
	if upstream != nil && upstream.Revision != "" && !sameRecorded(src.BuiltFrom, upstream.Revision) {
		return upstream.Revision
	}
	return ""
}

// rebuildMessage says that a stalled chart is about to be built again from next.
func rebuildMessage(src Source, next string) string {
	return fmt.Sprintf("%s stalled building from %s %s, and source-controller builds it again from %s now: %s",
		src.Ref.ID(), src.Upstream.ID(), ShortRevision(src.BuiltFrom), ShortRevision(next), src.Message)
}

// indexMayList reports whether a HelmChart stalled on a chart its HelmRepository's index does
// not list (yet): an HTTP repository's index is fetched again every interval, and may list it
// then. A repository that cannot be read (upstream nil) may be one too.
func indexMayList(src Source, upstream *Source) bool {
	if src.Ref.Kind != "HelmChart" || src.StalledReason != invalidChartReferenceReason || src.StalledSince.IsZero() || src.Upstream.Kind != "HelmRepository" {
		return false
	}
	return upstream == nil || (upstream.Ref.Kind == "HelmRepository" && !upstream.Remote && upstream.Interval > 0)
}

// unreadIndexInterval is the interval IndexWait assumes for a HelmRepository it cannot read:
// longer than source-controller's default (1m) and the 5m of Flux's examples, so that a chart
// stalled on an index not refreshed yet is not failed before its repository's next fetch.
const unreadIndexInterval = 10 * time.Minute

// IndexWait judges a HelmChart stalled on a chart version its HTTP HelmRepository's index does
// not list (InvalidChartReference: "no 'web' chart with version matching '1.1.0' found",
// source-controller v1.9.3 internal/helm/repository/chart_repository.go), read with its
// repository (upstream). Every path that judges a HelmChart uses it: a requested HelmRelease's
// own chart, a HelmChart an inventory lists, a nested object's chart.
//
// It is final at once for an OCI HelmRepository (no index: the registry answered) and for a
// chart of a GitRepository or a Bucket (built from their current revision). With an HTTP
// repository it may heal: source-controller fetches the index every spec.interval, stores a
// new artifact when it changed (status.artifact.lastUpdateTime, revision the index's digest;
// helmrepository_controller.go reconcileArtifact), and builds every chart of the repository
// again on that change (helmchart_controller.go requestsForHelmRepositoryChange), recording
// the index it built from (status.observedSourceArtifactRevision) whether the build passes or
// not. So it is Failed when the chart was built from an index stored after the stall and
// still stalls (the refreshed index lacks the version too), or when the repository has surely
// fetched since the stall or since its last new index, whichever is later (an interval, a
// tenth of it for jitter and 30s); InProgress until then, until saying when. A repository
// that cannot be read (upstream nil) is assumed to fetch every unreadIndexInterval, from the
// stall.
func IndexWait(src Source, upstream *Source, now time.Time) (verdict result.Verdict, message string, until time.Time) {
	id, repo := src.Ref.ID(), src.Upstream.ID()
	interval, base := unreadIndexInterval, src.StalledSince
	every := fmt.Sprintf("%s could not be read: assumed to fetch it every %s", repo, interval)
	if upstream != nil {
		every = fmt.Sprintf("it fetches it every %s", upstream.Interval)
		interval = upstream.Interval
		refreshed := upstream.ArtifactUpdated.After(src.StalledSince)
		if refreshed && upstream.Revision != "" && sameRecorded(src.BuiltFrom, upstream.Revision) {
			return result.VerdictFailed, fmt.Sprintf("%s stalled, and still does after %s's index changed (at %s): %s",
				id, repo, upstream.ArtifactUpdated.UTC().Format(time.RFC3339), src.Message), time.Time{}
		}
		if refreshed {
			base = upstream.ArtifactUpdated
		}
	}
	next := base.Add(interval + interval/10 + 30*time.Second)
	if now.Before(next) {
		return result.VerdictInProgress, fmt.Sprintf("%s stalled, and source-controller builds it again when %s's index changes (%s); fails at %s if it is still stalled: %s",
			id, repo, every, next.UTC().Format(time.RFC3339), src.Message), next
	}
	return result.VerdictFailed, fmt.Sprintf("%s stalled, and %s fetched its index since (%s): %s", id, repo, every, src.Message), time.Time{}
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

// sourceCode is the code of a failure of a source: a HelmChart's is its chart's.
func sourceCode(ref SourceRef) result.Code {
	if ref.Kind == "HelmChart" {
		return result.CodeFluxChartFailed
	}
	return result.CodeFluxArtifactFailed
}

// Serving judges a Flux source met in an inventory as an object of its own (the flux
// bootstrap layout lists its own GitRepository; an app lists its HelmRepository or
// OCIRepository), by the rule of ReadSource: it is Current once source-controller has
// reconciled its current spec and it serves an artifact, whatever its next fetch does. A
// source whose fetch fails again (a Git host or chart repository down for a minute) keeps
// Reconciling=True (ProgressingWithRetry) and Ready=False, yet keeps serving its artifact,
// and what applies from it goes on: message then says what failed. It is Failed only when
// source-controller stalled on it (code and message say why), and InProgress while it has no
// artifact or has not reconciled its current spec.
//
// A HelmChart stalled on a version its HTTP HelmRepository's index does not list yet waits
// for the repository's next fetch (IndexWait): upstream is its repository, when read, and
// until when to look again.
func Serving(s Source, upstream *Source, now time.Time) (status result.ObjectStatus, code result.Code, message string, until time.Time) {
	switch {
	case s.Stalled && rebuilding(s, upstream, "", Revision{}) != "":
		return result.ObjectInProgress, "", rebuildMessage(s, rebuilding(s, upstream, "", Revision{})), time.Time{}
	case s.Stalled && indexMayList(s, upstream):
		verdict, msg, until := IndexWait(s, upstream, now)
		if verdict == result.VerdictInProgress {
			return result.ObjectInProgress, "", msg, until
		}
		return result.ObjectFailed, sourceCode(s.Ref), msg, time.Time{}
	case s.Stalled:
		return result.ObjectFailed, sourceCode(s.Ref), "stalled: " + s.Message, time.Time{}
	case s.Remote:
		return result.ObjectCurrent, "", "a HelmRepository of type oci: helm-controller pulls its charts, it has no artifact of its own", time.Time{}
	case s.Revision == "":
		return result.ObjectInProgress, "", "waiting for source-controller to fetch an artifact" + because(s.Message), time.Time{}
	case !s.Done:
		return result.ObjectInProgress, "", fmt.Sprintf("waiting for source-controller to reconcile its current spec (it serves %s)%s", ShortRevision(s.Revision), because(s.Message)), time.Time{}
	case s.Message != "":
		return result.ObjectCurrent, "", fmt.Sprintf("serves %s; its last fetch failed, and source-controller retries while it keeps serving it: %s", ShortRevision(s.Revision), s.Message), time.Time{}
	}
	return result.ObjectCurrent, "", "serves " + ShortRevision(s.Revision), time.Time{}
}

// SourceStalled reports whether an object's source holds it back from want for good:
// source-controller stalled on the source's current spec (a URL it cannot parse, a provider
// without its secret), and the source serves no artifact of want (none at all, or another
// revision; any artifact will do when want is zero). The object applies whatever artifact its
// source serves, and the source will not fetch again until its spec changes. code and message
// say so, naming the source. A HelmChart its HTTP HelmRepository's index may still list
// (IndexWait; upstream is its repository, when read) is not stalled before until.
func SourceStalled(src Source, upstream *Source, want Revision, now time.Time) (code result.Code, message string, stalled bool, until time.Time) {
	verdict, code, message, until := SourceWait(src, upstream, "", Revision{}, now)
	if verdict != result.VerdictFailed {
		return "", "", false, until
	}
	if src.Revision == "" {
		return code, message + "; it has no artifact, and source-controller will not fetch one until its spec changes", true, time.Time{}
	}
	if !ArtifactAwaited(src, want) {
		return "", "", false, time.Time{} // what it serves may still be applied
	}
	next := "its spec changes"
	if src.Ref.Kind == "HelmChart" {
		next = "its spec or its source changes" // a chart is built again from a new index or commit
	}
	return code, fmt.Sprintf("%s; it serves %s, and source-controller will not fetch %s until %s",
		message, ShortRevision(src.Revision), ShortRevision(want.String()), next), true, time.Time{}
}
