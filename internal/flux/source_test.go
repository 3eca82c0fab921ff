package flux

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/result"
)

// fromYAML reads an object written inline (numbers as float64, as encoding/json decodes them:
// the rules read both).
func fromYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("%v in:\n%s", err, doc)
	}
	return &unstructured.Unstructured{Object: m}
}

const (
	shaA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	shaB = "b2c3d4e5f60718293a4b5c6d7e8f9012345678a1"
	shaC = "c3d4e5f60718293a4b5c6d7e8f9012345678a1b2"
	// digestX is an OCI manifest digest.
	digestX = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	digestY = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	digestZ = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
)

func TestSourceOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kind Kind
		doc  string
		want string
	}{
		{"kustomization, source in its namespace", KindKustomization, `
metadata: {name: app, namespace: apps}
spec: {sourceRef: {kind: GitRepository, name: repo}}`, "GitRepository/apps/repo"},
		{"kustomization, source in another namespace", KindKustomization, `
metadata: {name: app, namespace: apps}
spec: {sourceRef: {kind: OCIRepository, name: repo, namespace: flux-system}}`, "OCIRepository/flux-system/repo"},
		{"helmrelease chartRef", KindHelmRelease, `
metadata: {name: web, namespace: apps}
spec: {chartRef: {kind: OCIRepository, name: web-chart}}`, "OCIRepository/apps/web-chart"},
		{"helmrelease chartRef to a HelmChart elsewhere", KindHelmRelease, `
metadata: {name: web, namespace: apps}
spec: {chartRef: {kind: HelmChart, name: web, namespace: flux-system}}`, "HelmChart/flux-system/web"},
		{"helmrelease spec.chart: the chart helm-controller makes, in the source's namespace", KindHelmRelease, `
metadata: {name: web, namespace: apps}
spec: {chart: {spec: {chart: web, sourceRef: {kind: HelmRepository, name: charts, namespace: flux-system}}}}`, "HelmChart/flux-system/apps-web"},
		{"helmrelease spec.chart with status.helmChart", KindHelmRelease, `
metadata: {name: web, namespace: apps}
spec: {chart: {spec: {chart: web, sourceRef: {kind: GitRepository, name: repo}}}}
status: {helmChart: apps/apps-web}`, "HelmChart/apps/apps-web"},
		{"no source", KindKustomization, `
metadata: {name: app, namespace: apps}
spec: {}`, ""},
	}
	for _, tt := range tests {
		if got := SourceOf(tt.kind, fromYAML(t, tt.doc)).ID(); got != tt.want {
			t.Errorf("%s: SourceOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestSourceWaitIndexRefresh: a HelmChart stalled on a version its HTTP HelmRepository's
// index does not list yet heals when source-controller fetches the index again; it is final
// once the repository has fetched since, or at once for an OCI repository or a Git chart.
func TestSourceWaitIndexRefresh(t *testing.T) {
	t.Parallel()
	stalledAt := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	const msg = "invalid chart reference: failed to get chart version for remote reference: no 'web' chart with version matching '1.1.0' found"
	chart := Source{Ref: SourceRef{Kind: "HelmChart", Namespace: "apps", Name: "apps-web"}, Stalled: true, Message: msg,
		StalledReason: "InvalidChartReference", StalledSince: stalledAt, Upstream: SourceRef{Kind: "HelmRepository", Namespace: "apps", Name: "charts"}}
	http := &Source{Ref: chart.Upstream, Revision: "sha256:" + shaA + shaA[:24], Done: true, Interval: 5 * time.Minute}
	oci := &Source{Ref: chart.Upstream, Remote: true, Done: true, Interval: 5 * time.Minute}
	git := &Source{Ref: SourceRef{Kind: "GitRepository", Namespace: "apps", Name: "charts"}, Revision: "main@sha1:" + shaA, Done: true, Interval: 5 * time.Minute}
	other := chart
	other.StalledReason = "ValuesFilesError"
	refresh := stalledAt.Add(5*time.Minute + 30*time.Second + 30*time.Second)
	// The repository stored a new index after the stall: built from it, the chart still
	// stalls (the new index lacks the version too); not built from it yet, it waits an
	// interval from the new index.
	newIndex := *http
	newIndex.Revision, newIndex.ArtifactUpdated = "sha256:"+shaB+shaB[:24], stalledAt.Add(2*time.Minute)
	builtFromNew, builtFromOld := chart, chart
	builtFromNew.BuiltFrom, builtFromOld.BuiltFrom = newIndex.Revision, http.Revision
	tests := []struct {
		name     string
		src      Source
		upstream *Source
		now      time.Time
		verdict  result.Verdict
		until    time.Time
	}{
		{"HTTP index not refreshed yet", chart, http, stalledAt.Add(time.Minute), inProgress, refresh},
		{"HTTP index fetched since", chart, http, refresh.Add(time.Second), failed, time.Time{}},
		{"a new index, the chart built from it", builtFromNew, &newIndex, stalledAt.Add(2*time.Minute + time.Second), failed, time.Time{}},
		// source-controller queues the chart on the new index: it says nothing of it yet.
		{"a new index, the chart not built from it yet", builtFromOld, &newIndex, stalledAt.Add(2*time.Minute + time.Second), inProgress, time.Time{}},
		{"a new index, the chart not built from it yet, past the fetch", builtFromOld, &newIndex, stalledAt.Add(time.Hour), inProgress, time.Time{}},
		{"an index stored before the stall, the chart built from it", builtFromOld, http, stalledAt.Add(time.Minute), inProgress, refresh},
		{"OCI repository", chart, oci, stalledAt.Add(time.Minute), failed, time.Time{}},
		{"Git chart at its revision", chart, git, stalledAt.Add(time.Minute), failed, time.Time{}},
		{"upstream unknown", chart, nil, stalledAt.Add(time.Minute), inProgress, stalledAt.Add(11*time.Minute + 30*time.Second)},
		{"upstream unknown, past the assumed fetch", chart, nil, stalledAt.Add(11*time.Minute + 31*time.Second), failed, time.Time{}},
		{"another build error", other, http, stalledAt.Add(time.Minute), failed, time.Time{}},
	}
	for _, tt := range tests {
		v, code, message, until := SourceWait(tt.src, tt.upstream, "", Revision{}, tt.now)
		if v != tt.verdict || code != result.CodeFluxChartFailed || !until.Equal(tt.until) || !strings.Contains(message, msg) {
			t.Errorf("%s: SourceWait = %s, %s, %q, until %v; want %s, %s, until %v", tt.name, v, code, message, until, tt.verdict, result.CodeFluxChartFailed, tt.until)
		}
	}
}

func TestReadSource(t *testing.T) {
	t.Parallel()
	git := SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "repo"}
	tests := []struct {
		name string
		ref  SourceRef
		doc  string
		want Source
	}{
		{"fetched", git, `
metadata: {generation: 2}
status:
  observedGeneration: 2
  artifact: {revision: main@sha1:` + shaA + `}
  conditions: [{type: Ready, status: "True", reason: Succeeded}]`,
			Source{Ref: git, Revision: "main@sha1:" + shaA, Done: true}},
		{"fetching a new spec", git, `
metadata: {generation: 3}
status:
  observedGeneration: 2
  artifact: {revision: main@sha1:` + shaA + `}
  conditions: [{type: Ready, status: "True", reason: Succeeded}]`,
			Source{Ref: git, Revision: "main@sha1:" + shaA}},
		{"fetching again at the same generation: its artifact is of the current spec", git, `
metadata: {generation: 2}
status:
  observedGeneration: 2
  artifact: {revision: main@sha1:` + shaA + `}
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: building artifact}
  - {type: Ready, status: Unknown, reason: Progressing}`,
			Source{Ref: git, Revision: "main@sha1:" + shaA, Done: true}},
		{"external artifact written by its generator", SourceRef{Kind: KindExternalArtifact, Namespace: "apps", Name: "web"}, `
metadata: {namespace: apps, generation: 1}
spec: {sourceRef: {apiVersion: source.extensions.fluxcd.io/v1beta1, kind: ArtifactGenerator, name: web}}
status:
  artifact: {revision: latest@sha256:` + shaA + `, digest: sha256:` + shaA + `, url: http://source-watcher/web.tar.gz}
  conditions: [{type: Ready, status: "True", reason: Succeeded}]`,
			Source{Ref: SourceRef{Kind: KindExternalArtifact, Namespace: "apps", Name: "web"}, Revision: "latest@sha256:" + shaA, Done: true,
				Digest: "sha256:" + shaA, URL: "http://source-watcher/web.tar.gz", Producer: SourceRef{Kind: KindArtifactGenerator, Namespace: "apps", Name: "web"}}},
		{"external artifact of another producer", SourceRef{Kind: KindExternalArtifact, Namespace: "apps", Name: "web"}, `
metadata: {namespace: apps, generation: 1}
spec: {sourceRef: {apiVersion: example.com/v1, kind: ArtifactGenerator, name: web}}
status:
  artifact: {revision: latest@sha256:` + shaA + `}`,
			Source{Ref: SourceRef{Kind: KindExternalArtifact, Namespace: "apps", Name: "web"}, Revision: "latest@sha256:" + shaA, Done: true}},
		{"external artifact its generator failed to refresh", SourceRef{Kind: KindExternalArtifact, Namespace: "apps", Name: "web"}, `
metadata: {generation: 1}
status:
  artifact: {revision: latest@sha256:` + shaA + `}
  conditions: [{type: Ready, status: "False", reason: BuildFailed, message: no such path}]`,
			Source{Ref: SourceRef{Kind: KindExternalArtifact, Namespace: "apps", Name: "web"}, Revision: "latest@sha256:" + shaA, Done: true, Message: "no such path"}},
		{"external artifact not written yet", SourceRef{Kind: KindExternalArtifact, Namespace: "apps", Name: "web"}, `
metadata: {generation: 1}`,
			Source{Ref: SourceRef{Kind: KindExternalArtifact, Namespace: "apps", Name: "web"}}},
		{"chart still building", SourceRef{Kind: "HelmChart", Namespace: "flux-system", Name: "web"}, `
metadata: {generation: 1}
spec: {sourceRef: {kind: GitRepository, name: repo}}
status:
  observedGeneration: 1
  observedSourceArtifactRevision: main@sha1:` + shaB + `
  artifact: {revision: 1.0.0+a1b2c3d4e5f6}
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: building chart}
  - {type: Ready, status: Unknown, reason: Progressing}`,
			Source{Ref: SourceRef{Kind: "HelmChart", Namespace: "flux-system", Name: "web"}, Revision: "1.0.0+a1b2c3d4e5f6",
				BuiltFrom: "main@sha1:" + shaB, Upstream: git}},
		{"failing", git, `
metadata: {generation: 2}
status:
  observedGeneration: 1
  conditions: [{type: Ready, status: "False", reason: GitOperationFailed, message: authentication required}]`,
			Source{Ref: git, Message: "authentication required"}},
		{"OCI artifact with its origin", SourceRef{Kind: "OCIRepository", Namespace: "flux-system", Name: "app"}, `
metadata: {generation: 1}
status:
  observedGeneration: 1
  artifact: {revision: "latest@` + digestX + `", metadata: {org.opencontainers.image.revision: "main@sha1:` + shaA + `"}}
  conditions: [{type: Ready, status: "True", reason: Succeeded}]`,
			Source{Ref: SourceRef{Kind: "OCIRepository", Namespace: "flux-system", Name: "app"}, Revision: "latest@" + digestX, OriginRevision: "main@sha1:" + shaA, Done: true}},
		{"chart built from Git", SourceRef{Kind: "HelmChart", Namespace: "flux-system", Name: "web"}, `
metadata: {generation: 1}
spec: {sourceRef: {kind: GitRepository, name: repo}}
status:
  observedGeneration: 1
  observedSourceArtifactRevision: main@sha1:` + shaA + `
  artifact: {revision: 1.0.0+a1b2c3d4e5f6}
  conditions: [{type: Ready, status: "True", reason: Succeeded}]`,
			Source{Ref: SourceRef{Kind: "HelmChart", Namespace: "flux-system", Name: "web"}, Revision: "1.0.0+a1b2c3d4e5f6",
				BuiltFrom: "main@sha1:" + shaA, Done: true, Upstream: git}},
		{"chart build stalled", SourceRef{Kind: "HelmChart", Namespace: "flux-system", Name: "web"}, `
metadata: {generation: 1}
spec: {sourceRef: {kind: GitRepository, name: repo}, interval: 1m}
status:
  observedGeneration: 1
  conditions:
  - {type: Stalled, status: "True", reason: InvalidChartReference, message: "chart not found: ./web", lastTransitionTime: "2026-11-01T12:00:00Z"}
  - {type: Ready, status: "False", reason: InvalidChartReference, message: "chart not found: ./web"}`,
			Source{Ref: SourceRef{Kind: "HelmChart", Namespace: "flux-system", Name: "web"}, Stalled: true, Message: "chart not found: ./web", Upstream: git,
				StalledReason: "InvalidChartReference", StalledSince: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC), Interval: time.Minute}},
		{"OCI Helm repository", SourceRef{Kind: "HelmRepository", Namespace: "flux-system", Name: "charts"}, `
metadata: {generation: 1}
spec: {type: oci}`,
			Source{Ref: SourceRef{Kind: "HelmRepository", Namespace: "flux-system", Name: "charts"}, Remote: true}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ReadSource(tt.ref, fromYAML(t, tt.doc))); diff != "" {
			t.Errorf("%s: ReadSource (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestSuperseded(t *testing.T) {
	t.Parallel()
	git := func(sha string) Source {
		return Source{Ref: SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "repo"}, Revision: "main@sha1:" + sha, Done: true}
	}
	oci := Source{Revision: "latest@" + digestY, OriginRevision: "main@sha1:" + shaB}
	onA, onB, onC := []string{"main@sha1:" + shaA}, []string{"main@sha1:" + shaB}, []string{"main@sha1:" + shaC}
	tests := []struct {
		name, want, first string
		now               Source
		attempting        []string
		superseded        bool
	}{
		{"not moved", shaB, "main@sha1:" + shaA, git(shaA), onA, false},
		{"moved to the expected revision", shaB, "main@sha1:" + shaA, git(shaB), onA, false},
		{"moved past it, the object on the new one", shaB, "main@sha1:" + shaA, git(shaC), onC, true},
		{"moved past it, the object not on the new one yet", shaB, "main@sha1:" + shaA, git(shaC), onA, false},
		{"moved past it, the object still health-checking the expected one", shaB, "main@sha1:" + shaA, git(shaC), append(onB, onC...), false},
		{"first seen on another: may be older or newer", shaB, "", git(shaC), onC, false},
		{"nothing expected", "", "main@sha1:" + shaA, git(shaC), onC, false},
		{"legacy format of the same commit", shaB, "main/" + shaA, git(shaA), onA, false},
		{"OCI artifact whose origin is the expected commit", shaB, "latest@" + digestX, oci, []string{"latest@" + digestY}, false},
		{"OCI artifact of another commit", shaC, "latest@" + digestX, oci, []string{"latest@" + digestY}, true},
		{"chart built from the expected commit", shaB, "1.0.0", Source{Revision: "1.1.0", BuiltFrom: "main@sha1:" + shaB}, []string{"1.1.0"}, false},
	}
	for _, tt := range tests {
		var want Revision
		if tt.want != "" {
			want = mustRevision(t, tt.want)
		}
		if got := Superseded(want, tt.first, tt.now, tt.attempting); got != tt.superseded {
			t.Errorf("%s: Superseded = %t, want %t", tt.name, got, tt.superseded)
		}
	}
	msg := SupersededMessage(mustRevision(t, shaB), git(shaC))
	if !strings.Contains(msg, shaB[:7]) || !strings.Contains(msg, "main@sha1:"+shaC[:7]) || !strings.Contains(msg, "GitRepository/flux-system/repo") {
		t.Errorf("SupersededMessage = %q, want it to name the source, the expected revision and the new one", msg)
	}
}

// TestMovedPast: a source will not offer the expected revision any more once its artifact is
// another, and the object applied the expected one before, or the artifact moved.
func TestMovedPast(t *testing.T) {
	t.Parallel()
	git := func(sha string) Source {
		return Source{Ref: SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "repo"}, Revision: "main@sha1:" + sha, Done: true}
	}
	chart := func(version, sha string) Source {
		return Source{Revision: version, BuiltFrom: "main@sha1:" + sha, Done: true}
	}
	tagChart := func(version, tag, sha string) Source {
		return Source{Revision: version, BuiltFrom: tag + "@sha1:" + sha, Upstream: SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "repo"}, Done: true}
	}
	repoChart := func(version, index string) Source {
		return Source{Revision: version, BuiltFrom: index, Upstream: SourceRef{Kind: "HelmRepository", Namespace: "flux-system", Name: "charts"}, Done: true}
	}
	tests := []struct {
		name       string
		want       string
		first, now Source
		applied    bool
		movedPast  bool
	}{
		{"not moved, the expected one not fetched yet", shaB, git(shaA), git(shaA), false, false},
		{"moved to the expected revision", shaB, git(shaA), git(shaB), false, false},
		{"at the expected revision, applied", shaB, git(shaB), git(shaB), true, false},
		{"moved past it", shaB, git(shaA), git(shaC), false, true},
		{"applied, then the source moved on before the run", shaB, git(shaC), git(shaC), true, true},
		{"first seen on another, not applied: may be older", shaB, git(shaC), git(shaC), false, false},
		{"no artifact yet", shaB, Source{}, Source{}, true, false},
		{"legacy format of the same commit", shaB, Source{Revision: "main/" + shaA}, git(shaA), false, false},
		{"a chart built again from a newer commit, same version", shaB, chart("1.0.0", shaA), chart("1.0.0", shaC), false, true},
		{"a chart built from the expected commit", shaB, chart("1.0.0", shaA), chart("1.0.0", shaB), false, false},
		{"a chart of a HelmRepository whose index moved", "1.1.0", repoChart("1.0.0", "sha256:"+shaA), repoChart("1.0.0", "sha256:"+shaC), false, false},
		{"a chart of a HelmRepository moved to another version", "1.1.0", repoChart("1.0.0", "sha256:"+shaA), repoChart("1.2.0", "sha256:"+shaC), false, true},
		{"a chart built again, a version expected", "1.1.0", chart("1.0.0", shaA), chart("1.0.0", shaC), false, false},
		{"a chart built again from a later tag, a tag expected", "v1.2.0", tagChart("1.0.0", "v1.1.0", shaA), tagChart("1.0.0", "v1.3.0", shaC), false, true},
		{"a chart built from the expected tag", "v1.2.0", tagChart("1.0.0", "v1.1.0", shaA), tagChart("1.0.0", "v1.2.0", shaB), false, false},
		{"nothing expected", "", git(shaA), git(shaC), true, false},
	}
	for _, tt := range tests {
		var want Revision
		if tt.want != "" {
			want = mustRevision(t, tt.want)
		}
		if got := MovedPast(want, tt.first, tt.now, tt.applied); got != tt.movedPast {
			t.Errorf("%s: MovedPast = %t, want %t", tt.name, got, tt.movedPast)
		}
	}
}

func TestNestedWant(t *testing.T) {
	t.Parallel()
	owner := mustRevision(t, shaB)
	repo := SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "repo"}
	other := SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "infra"}
	chart := SourceRef{Kind: "HelmChart", Namespace: "flux-system", Name: "web"}
	tests := []struct {
		name       string
		source     SourceRef
		src        *Source
		matches    []string
		notMatches []string
	}{
		{"same source: the owner's revision", repo, nil, []string{"main@sha1:" + shaB}, []string{"main@sha1:" + shaA}},
		{"another source: exactly its artifact", other, &Source{Ref: other, Revision: "main@sha1:" + shaA},
			[]string{"main@sha1:" + shaA}, []string{"main@sha1:" + shaB, "main@sha1:" + shaC}},
		{"a chart: exactly its version and build", chart, &Source{Ref: chart, Revision: "1.0.0+b2c3d4e5f607"},
			[]string{"1.0.0+b2c3d4e5f607"}, []string{"1.0.0", "1.0.0+a1b2c3d4e5f6"}},
		{"an OCI chart: its digest", SourceRef{Kind: "OCIRepository", Name: "web"}, &Source{Revision: "1.0.0@" + digestX},
			[]string{"1.0.0+111111111111", digestX}, []string{"1.0.0+222222222222", digestY}},
	}
	for _, tt := range tests {
		got := NestedWant(repo.ID(), owner, tt.source, tt.src)
		for _, m := range tt.matches {
			if !got.Matches(m) {
				t.Errorf("%s: NestedWant = %q does not match %q", tt.name, got, m)
			}
		}
		for _, m := range tt.notMatches {
			if got.Matches(m) {
				t.Errorf("%s: NestedWant = %q matches %q", tt.name, got, m)
			}
		}
	}
	if got := NestedWant(repo.ID(), owner, other, nil); !got.IsZero() {
		t.Errorf("another source that cannot be read: NestedWant = %q, want none (Ready at whatever it last attempted)", got)
	}
}

func TestSourceWait(t *testing.T) {
	t.Parallel()
	git := SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "repo"}
	chart := SourceRef{Kind: "HelmChart", Namespace: "flux-system", Name: "web"}
	upstreamB := &Source{Ref: git, Revision: "main@sha1:" + shaB, Done: true}
	tests := []struct {
		name      string
		src       Source
		upstream  *Source
		ownerWant string // the owner applies from GitRepository/flux-system/repo
		verdict   result.Verdict
		code      result.Code
		says      string
	}{
		{"settled", Source{Ref: git, Revision: "main@sha1:" + shaA, Done: true}, nil, "", current, "", ""},
		{"no artifact yet", Source{Ref: git}, nil, "", inProgress, result.CodeFluxArtifactFailed, "to have an artifact"},
		{"fetching a new spec", Source{Ref: git, Revision: "main@sha1:" + shaA}, nil, "", inProgress, result.CodeFluxArtifactFailed, "source-controller to finish"},
		{"stalled", Source{Ref: git, Stalled: true, Message: "invalid URL"}, nil, "", failed, result.CodeFluxArtifactFailed, "invalid URL"},
		{"chart built from the previous commit", Source{Ref: chart, Revision: "1.0.0+a1b2c3d4e5f6", BuiltFrom: "main@sha1:" + shaA, Done: true, Upstream: git},
			upstreamB, "", inProgress, result.CodeFluxChartFailed, "to build from GitRepository/flux-system/repo main@sha1:" + shaB[:7]},
		{"chart built from the current commit", Source{Ref: chart, Revision: "1.0.0+b2c3d4e5f607", BuiltFrom: "main@sha1:" + shaB, Done: true, Upstream: git},
			upstreamB, "", current, "", ""},
		{"chart of the owner's source, its cache lagging the owner's", Source{Ref: chart, Revision: "1.0.0+a1b2c3d4e5f6", BuiltFrom: "main@sha1:" + shaA, Done: true, Upstream: git},
			&Source{Ref: git, Revision: "main@sha1:" + shaA, Done: true}, shaB, inProgress, result.CodeFluxChartFailed, "to build from GitRepository/flux-system/repo " + shaB[:7]},
		{"chart of the owner's source, built from the owner's revision", Source{Ref: chart, Revision: "1.0.0+b2c3d4e5f607", BuiltFrom: "main@sha1:" + shaB, Done: true, Upstream: git},
			&Source{Ref: git, Revision: "main@sha1:" + shaA, Done: true}, shaB, current, "", ""},
		{"chart that cannot be built", Source{Ref: chart, Stalled: true, Message: "chart not found"}, upstreamB, "", failed, result.CodeFluxChartFailed, "chart not found"},
		{"chart that cannot be built from its source's commit", Source{Ref: chart, Stalled: true, Message: "chart not found", BuiltFrom: "main@sha1:" + shaB, Upstream: git},
			upstreamB, "", failed, result.CodeFluxChartFailed, "chart not found"},
		{"chart stalled on a build from another commit than its source's", Source{Ref: chart, Stalled: true, Message: "chart not found", BuiltFrom: "main@sha1:" + shaA, Upstream: git},
			upstreamB, "", inProgress, result.CodeFluxChartFailed, "builds it again from main@sha1:" + shaB[:7]},
		{"chart of the owner's source stalled on a build from another commit than the owner's", Source{Ref: chart, Stalled: true, Message: "chart not found", BuiltFrom: "main@sha1:" + shaA, Upstream: git},
			&Source{Ref: git, Revision: "main@sha1:" + shaA, Done: true}, shaB, inProgress, result.CodeFluxChartFailed, "builds it again from " + shaB[:7]},
		{"OCI Helm repository", Source{Remote: true}, nil, "", current, "", ""},
	}
	for _, tt := range tests {
		var ownerWant Revision
		if tt.ownerWant != "" {
			ownerWant = mustRevision(t, tt.ownerWant)
		}
		v, code, msg, _ := SourceWait(tt.src, tt.upstream, git.ID(), ownerWant, time.Time{})
		if v != tt.verdict || (v != current && code != tt.code) || !strings.Contains(msg, tt.says) {
			t.Errorf("%s: SourceWait = %s, %s, %q; want %s, %s, saying %q", tt.name, v, code, msg, tt.verdict, tt.code, tt.says)
		}
	}
}

// TestOriginRevisions: what an artifact was built from counts as applied: the gitless flow
// (flux push artifact --revision), an OCI chart pushed with its commit, a chart a HelmChart
// built from Git (once it is done building).
func TestOriginRevisions(t *testing.T) {
	t.Parallel()
	ociApp := SourceRef{Kind: "OCIRepository", Namespace: "flux-system", Name: "app"}
	ks := func(status string) *unstructured.Unstructured {
		return fromYAML(t, `
metadata: {name: app, namespace: flux-system, generation: 1}
spec: {sourceRef: {kind: OCIRepository, name: app}}
status:
  observedGeneration: 1
`+status)
	}
	ready := `
  conditions: [{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: latest@` + digestX + `", observedGeneration: 1}]`
	hrOCI := fromYAML(t, `
metadata: {name: web, namespace: apps, generation: 1}
spec: {chartRef: {kind: OCIRepository, name: web}}
status:
  observedGeneration: 1
  lastAttemptedRevision: 1.0.0+111111111111
  lastAttemptedRevisionDigest: `+digestX+`
  history: [{chartVersion: 1.0.0+111111111111, status: deployed, ociDigest: "`+digestX+`"}]
  conditions:
  - {type: Ready, status: "True", reason: UpgradeSucceeded, observedGeneration: 1}
  - {type: Released, status: "True", reason: UpgradeSucceeded, observedGeneration: 1}`)
	// helm-controller v1.6.4 (mutateChartWithSourceRevision) records the whole artifact
	// revision as the OCI digest when the tag is not semver: latest@sha256:….
	hrLatest := fromYAML(t, `
metadata: {name: web, namespace: apps, generation: 1}
spec: {chartRef: {kind: OCIRepository, name: web}}
status:
  observedGeneration: 1
  lastAttemptedRevision: 1.0.0+111111111111
  lastAttemptedRevisionDigest: latest@`+digestX+`
  history: [{chartVersion: 1.0.0+111111111111, status: deployed, ociDigest: "latest@`+digestX+`"}]
  conditions:
  - {type: Ready, status: "True", reason: UpgradeSucceeded, observedGeneration: 1}
  - {type: Released, status: "True", reason: UpgradeSucceeded, observedGeneration: 1}`)
	hrChart := fromYAML(t, `
metadata: {name: web, namespace: apps, generation: 1}
spec: {chartRef: {kind: HelmChart, name: web}}
status:
  observedGeneration: 1
  lastAttemptedRevision: 1.0.0
  history: [{chartVersion: 1.0.0, status: deployed}]
  conditions:
  - {type: Ready, status: "True", reason: UpgradeSucceeded, observedGeneration: 1}
  - {type: Released, status: "True", reason: UpgradeSucceeded, observedGeneration: 1}`)
	chart := SourceRef{Kind: "HelmChart", Namespace: "apps", Name: "web"}
	tests := []struct {
		name    string
		ref     Ref
		obj     *unstructured.Unstructured
		src     *Source
		want    string
		verdict result.Verdict
	}{
		{"lastAppliedOriginRevision", Ref{KindKustomization, "flux-system", "app"},
			ks(`  lastAppliedRevision: latest@` + digestX + `
  lastAttemptedRevision: latest@` + digestX + `
  lastAppliedOriginRevision: main@sha1:` + shaA + ready), nil, shaA, current},
		{"the source's origin, for the artifact applied", Ref{KindKustomization, "flux-system", "app"},
			ks(`  lastAppliedRevision: latest@` + digestX + `
  lastAttemptedRevision: latest@` + digestX + ready),
			&Source{Ref: ociApp, Revision: "latest@" + digestX, OriginRevision: "main@sha1:" + shaA, Done: true}, shaA, current},
		{"the source's origin, for another artifact", Ref{KindKustomization, "flux-system", "app"},
			ks(`  lastAppliedRevision: latest@` + digestX + `
  lastAttemptedRevision: latest@` + digestX + ready),
			&Source{Ref: ociApp, Revision: "latest@" + digestY, OriginRevision: "main@sha1:" + shaA, Done: true}, shaA, inProgress},
		{"an OCI chart pushed with its commit", Ref{KindHelmRelease, "apps", "web"}, hrOCI,
			&Source{Ref: SourceRef{Kind: "OCIRepository", Namespace: "apps", Name: "web"}, Revision: "1.0.0@" + digestX, OriginRevision: "main@sha1:" + shaA, Done: true}, shaA, current},
		{"an OCI chart of another commit", Ref{KindHelmRelease, "apps", "web"}, hrOCI,
			&Source{Ref: SourceRef{Kind: "OCIRepository", Namespace: "apps", Name: "web"}, Revision: "1.0.0@" + digestX, OriginRevision: "main@sha1:" + shaA, Done: true}, shaB, inProgress},
		{"an OCI chart at a tag that is not semver", Ref{KindHelmRelease, "apps", "web"}, hrLatest,
			&Source{Ref: SourceRef{Kind: "OCIRepository", Namespace: "apps", Name: "web"}, Revision: "latest@" + digestX, OriginRevision: "main@sha1:" + shaA, Done: true}, shaA, current},
		{"an OCI chart at a tag that is not semver, of another commit", Ref{KindHelmRelease, "apps", "web"}, hrLatest,
			&Source{Ref: SourceRef{Kind: "OCIRepository", Namespace: "apps", Name: "web"}, Revision: "latest@" + digestX, OriginRevision: "main@sha1:" + shaA, Done: true}, shaB, inProgress},
		{"an OCI chart at a tag that is not semver, another artifact now", Ref{KindHelmRelease, "apps", "web"}, hrLatest,
			&Source{Ref: SourceRef{Kind: "OCIRepository", Namespace: "apps", Name: "web"}, Revision: "latest@" + digestY, OriginRevision: "main@sha1:" + shaA, Done: true}, shaA, inProgress},
		// reconcileStrategy ChartVersion: source-controller records every new commit while it
		// keeps serving the chart it built before when the version did not change; a commit
		// that changed the templates alone is not running.
		{"a chart that a HelmChart says it built from the commit", Ref{KindHelmRelease, "apps", "web"}, hrChart,
			&Source{Ref: chart, Revision: "1.0.0", BuiltFrom: "main@sha1:" + shaA, Done: true}, shaA, inProgress},
		{"without the source", Ref{KindHelmRelease, "apps", "web"}, hrChart, nil, shaA, inProgress},
		// kustomize-controller records the origin of every attempt that built in
		// status.history: an attempt of B whose health check failed is B's, though the source
		// moved on to C's artifact since.
		{"an attempt's origin in the history, the source moved on", Ref{KindKustomization, "flux-system", "app"},
			ks(`  lastAppliedRevision: latest@` + digestX + `
  lastAppliedOriginRevision: main@sha1:` + shaA + `
  lastAttemptedRevision: latest@` + digestY + `
  history:
  - {digest: "sha256:aaaa", lastReconciledStatus: HealthCheckFailed, metadata: {revision: "latest@` + digestY + `", originRevision: "main@sha1:` + shaB + `"}}
  conditions:
  - {type: Ready, status: "False", reason: HealthCheckFailed, message: "health check failed after 5m0s", observedGeneration: 1}`),
			&Source{Ref: ociApp, Revision: "latest@" + digestZ, OriginRevision: "main@sha1:" + shaC, Done: true}, shaB, failed},
		{"the history's origin of another artifact", Ref{KindKustomization, "flux-system", "app"},
			ks(`  lastAppliedRevision: latest@` + digestX + `
  lastAppliedOriginRevision: main@sha1:` + shaA + `
  lastAttemptedRevision: latest@` + digestY + `
  history:
  - {digest: "sha256:aaaa", lastReconciledStatus: HealthCheckFailed, metadata: {revision: "latest@` + digestZ + `", originRevision: "main@sha1:` + shaB + `"}}
  conditions:
  - {type: Ready, status: "False", reason: HealthCheckFailed, message: "health check failed after 5m0s", observedGeneration: 1}`),
			&Source{Ref: ociApp, Revision: "latest@" + digestZ, OriginRevision: "main@sha1:" + shaC, Done: true}, shaB, inProgress},
	}
	for _, tt := range tests {
		g := Evaluate(tt.ref, tt.obj, mustRevision(t, tt.want), tt.src)
		if g.Verdict != tt.verdict {
			t.Errorf("%s: verdict %s (%s), want %s", tt.name, g.Verdict, g.Message, tt.verdict)
		}
	}
}

// TestReconcilingRevisionAttributesFailure: kustomize-controller fails "kustomization path not
// found" before it records lastAttemptedRevision; its Reconciling message names the revision.
func TestReconcilingRevisionAttributesFailure(t *testing.T) {
	t.Parallel()
	obj := fromYAML(t, `
metadata: {name: app, namespace: flux-system, generation: 1}
spec: {sourceRef: {kind: GitRepository, name: app}}
status:
  observedGeneration: 1
  lastAppliedRevision: main@sha1:`+shaA+`
  lastAttemptedRevision: main@sha1:`+shaA+`
  conditions:
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, observedGeneration: 1,
     message: "Fetching manifests for revision main@sha1:`+shaB+` with a timeout of 4m30s"}
  - {type: Ready, status: "False", reason: ArtifactFailed, observedGeneration: 1,
     message: "kustomization path not found: stat /tmp/kustomization-1/deploy: no such file or directory"}`)
	ref := Ref{KindKustomization, "flux-system", "app"}
	if g := Evaluate(ref, obj, mustRevision(t, shaB), nil); g.Verdict != failed || g.Code != result.CodeFluxArtifactFailed || !strings.Contains(g.Message, "revision main@sha1:"+shaB[:7]+" failed") {
		t.Errorf("failure of the revision the Reconciling message names: %s %s (%s), want Failed flux-artifact-failed naming B", g.Verdict, g.Code, g.Message)
	}
	if g := Evaluate(ref, obj, mustRevision(t, shaC), nil); g.Verdict != inProgress {
		t.Errorf("failure of another revision: %s (%s), want InProgress", g.Verdict, g.Message)
	}
	// An artifact of B that cannot be downloaded, or whose checksum does not match, fails
	// before lastAttemptedRevision is written: a failure of B that kustomize-controller
	// retries (the run gives it its retry window), never one of A.
	for _, msg := range []string{
		"Source is not ready, artifact not found, retrying in 30s",
		"failed to verify archive: computed digest doesn't match provided 'sha256:" + shaC + shaC[:24] + "' (check whether file size exceeds max download size)",
	} {
		download := obj.DeepCopy()
		conds, _, _ := unstructured.NestedSlice(download.Object, "status", "conditions")
		conds[1].(map[string]any)["message"] = msg
		if err := unstructured.SetNestedSlice(download.Object, conds, "status", "conditions"); err != nil {
			t.Fatal(err)
		}
		if g := Evaluate(ref, download, mustRevision(t, shaB), nil); g.Verdict != failed || !g.Retried || !strings.Contains(g.Message, "revision main@sha1:"+shaB[:7]+" failed") {
			t.Errorf("%q while fetching B, B expected: %s retried=%t (%s), want a retried failure of B", msg, g.Verdict, g.Retried, g.Message)
		}
		if g := Evaluate(ref, download, mustRevision(t, shaA), nil); g.Verdict != inProgress || strings.Contains(g.Message, "revision main@sha1:"+shaA[:7]+" failed") {
			t.Errorf("%q while fetching B, A expected: %s (%s), want InProgress, no failure of A", msg, g.Verdict, g.Message)
		}
	}
}

// TestGitlessApplied: a Kustomization of an OCI artifact that applied the expected commit
// (lastAppliedOriginRevision) has applied it: its workloads may fail the rollout.
func TestGitlessApplied(t *testing.T) {
	t.Parallel()
	obj := fromYAML(t, `
metadata: {name: app, namespace: flux-system, generation: 1}
spec: {sourceRef: {kind: OCIRepository, name: app}}
status:
  observedGeneration: 1
  lastAppliedRevision: latest@`+digestX+`
  lastAttemptedRevision: latest@`+digestX+`
  lastAppliedOriginRevision: main@sha1:`+shaA+`
  conditions: [{type: Ready, status: "True", reason: ReconciliationSucceeded, observedGeneration: 1}]`)
	g := Evaluate(Ref{KindKustomization, "flux-system", "app"}, obj, mustRevision(t, shaA), nil)
	if g.Verdict != current || !g.Applied {
		t.Errorf("verdict %s, applied %t (%s); want Current and applied", g.Verdict, g.Applied, g.Message)
	}
}

// TestReadyDependency: Flux lets a dependent go on when its dependency is Ready at its
// generation, suspended or not, on the dependent's revision when they share a source.
func TestReadyDependency(t *testing.T) {
	t.Parallel()
	dep := func(status string) *unstructured.Unstructured {
		return fromYAML(t, `
metadata: {name: infra, namespace: flux-system, generation: 2}
spec: {sourceRef: {kind: GitRepository, name: repo}, suspend: true}
status:
`+status)
	}
	ref := Ref{KindKustomization, "flux-system", "infra"}
	readyOnA := `  observedGeneration: 2
  lastAppliedRevision: main@sha1:` + shaA + `
  lastAttemptedRevision: main@sha1:` + shaA + `
  conditions: [{type: Ready, status: "True", reason: ReconciliationSucceeded, observedGeneration: 2}]`
	if !ReadyDependency(ref, dep(readyOnA), Revision{}, nil) {
		t.Error("suspended, Ready at its generation: want ready")
	}
	if ReadyDependency(ref, dep(readyOnA), mustRevision(t, shaB), nil) {
		t.Error("suspended, Ready on A, the dependent of the same source on B: want not ready")
	}
	if ReadyDependency(ref, dep(strings.Replace(readyOnA, "observedGeneration: 2\n", "observedGeneration: 1\n", 1)), Revision{}, nil) {
		t.Error("suspended at a generation it did not reconcile: want not ready")
	}
}

// TestGateWalk: what the engine walks besides the gate's verdict.
func TestGateWalk(t *testing.T) {
	t.Parallel()
	obj := fromYAML(t, `
metadata: {name: app, namespace: flux-system, generation: 1}
spec:
  sourceRef: {kind: GitRepository, name: app}
  wait: true
  kubeConfig: {secretRef: {name: prod-kubeconfig}}
  dependsOn: [{name: infra}, {name: crds, namespace: platform}]
status:
  observedGeneration: 1
  lastAppliedRevision: main@sha1:`+shaA+`
  lastAttemptedRevision: main@sha1:`+shaA+`
  inventory: {entries: [{id: apps_web_apps_Deployment, v: v1}, {id: apps_web__Service, v: v1}]}
  conditions: [{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: main@sha1:`+shaA+`", observedGeneration: 1}]`)
	g := Evaluate(Ref{KindKustomization, "flux-system", "app"}, obj, mustRevision(t, shaA), nil)
	want := []Ref{{KindKustomization, "flux-system", "infra"}, {KindKustomization, "platform", "crds"}}
	if diff := cmp.Diff(want, g.DependsOn); diff != "" {
		t.Errorf("DependsOn (-want +got):\n%s", diff)
	}
	// The one a DependencyNotReady message names; an entry with a readyExpr is Flux's own
	// expression to judge, not its readiness check.
	waiting := fromYAML(t, `
metadata: {name: app, namespace: flux-system, generation: 1}
spec:
  sourceRef: {kind: GitRepository, name: app}
  dependsOn: [{name: infra}, {name: crds, namespace: platform}, {name: db, readyExpr: "dep.status.ready"}]
status:
  conditions: [{type: Ready, status: "False", reason: DependencyNotReady, message: "dependency 'platform/crds' is not ready"}]`)
	named := Evaluate(Ref{KindKustomization, "flux-system", "app"}, waiting, mustRevision(t, shaA), nil)
	if diff := cmp.Diff([]Ref{{KindKustomization, "platform", "crds"}}, named.DependsOn); diff != "" {
		t.Errorf("DependsOn of one waiting for platform/crds (-want +got):\n%s", diff)
	}
	waiting.Object["status"] = map[string]any{}
	all := Evaluate(Ref{KindKustomization, "flux-system", "app"}, waiting, mustRevision(t, shaA), nil)
	if len(all.DependsOn) != 2 {
		t.Errorf("DependsOn %v: want infra and crds, not db (readyExpr)", all.DependsOn)
	}
	if !g.WaitsForAll || !g.Remote || !g.Object.Remote || g.Source != "GitRepository/flux-system/app" {
		t.Errorf("WaitsForAll %t, Remote %t (object %t), Source %q; want true, true, GitRepository/flux-system/app", g.WaitsForAll, g.Remote, g.Object.Remote, g.Source)
	}
	if g.Verdict != current || !strings.Contains(g.Message, "2 objects are applied to a remote cluster") {
		t.Errorf("remote Kustomization: %s (%s), want Current, saying its 2 objects are not verified here", g.Verdict, g.Message)
	}
}

// TestUpgrading: helm-controller runs Helm's upgrade to the expected chart at the current
// generation; not for another chart, nor for an older generation's attempt.
func TestUpgrading(t *testing.T) {
	t.Parallel()
	obj := loadFixture(t, "hr-reconciling.yaml")
	ref := Ref{KindHelmRelease, "apps", "podinfo"}
	if g := Evaluate(ref, obj, mustRevision(t, "6.5.0+501967ad514d"), nil); g.Upgrading != "" {
		t.Errorf("attempt of generation 4 at generation 5: Upgrading %q, want none", g.Upgrading)
	}
	current := obj.DeepCopy()
	if err := unstructured.SetNestedField(current.Object, int64(5), "status", "lastAttemptedGeneration"); err != nil {
		t.Fatal(err)
	}
	if g := Evaluate(ref, current, mustRevision(t, "6.5.0+501967ad514d"), nil); g.Upgrading != "6.5.0+501967ad514d" || g.Applied {
		t.Errorf("upgrade to the expected chart: Upgrading %q, Applied %t; want 6.5.0+501967ad514d, not applied", g.Upgrading, g.Applied)
	}
	if g := Evaluate(ref, current, mustRevision(t, "6.6.0"), nil); g.Upgrading != "" {
		t.Errorf("upgrade to another chart: Upgrading %q, want none", g.Upgrading)
	}
}
