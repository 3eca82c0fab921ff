package flux

import (
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/result"
)

// gitRepositoryStatus is GitRepository flux-system/repo at generation 2 with status.
func gitRepositoryStatus(status string) string {
	return `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: repo, namespace: flux-system, generation: 2}
spec: {url: "https://git.example.com/repo", interval: 1m}
status:
` + status
}

// fetchFailed is the status source-controller v1.9.3 writes when a fetch fails again at the
// current generation: Reconciling turns ProgressingWithRetry
// (internal/reconcile.ComputeReconcileResult), Ready False from FetchFailed; the artifact
// stays. The message is gitrepository_controller.go's for a failed clone.
const fetchFailed = `  observedGeneration: 2
  artifact: {revision: "main@sha1:` + shaA + `"}
  conditions:
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "building artifact: new upstream revision", observedGeneration: 2}
  - {type: Ready, status: "False", reason: GitOperationFailed, message: "failed to checkout and determine revision: unable to clone: i/o timeout", observedGeneration: 2}
  - {type: FetchFailed, status: "True", reason: GitOperationFailed, message: "failed to checkout and determine revision: unable to clone: i/o timeout", observedGeneration: 2}`

// stalledAt is a source source-controller stalled on (a serror.Stalling: Stalled True, the
// generation observed) with the given artifact lines.
func stalledAt(artifact string) string {
	return `  observedGeneration: 2
` + artifact + `  conditions:
  - {type: Stalled, status: "True", reason: URLInvalid, message: "failed to parse url 'https//x': invalid URI for request", observedGeneration: 2}
  - {type: Ready, status: "False", reason: URLInvalid, message: "failed to parse url 'https//x': invalid URI for request", observedGeneration: 2}`
}

func TestServing(t *testing.T) {
	t.Parallel()
	git := SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "repo"}
	tests := []struct {
		name   string
		ref    SourceRef
		doc    string
		status result.ObjectStatus
		code   result.Code
		says   string
	}{
		{"serving", git, gitRepositoryStatus(`  observedGeneration: 2
  artifact: {revision: "main@sha1:` + shaA + `"}
  conditions: [{type: Ready, status: "True", reason: Succeeded, observedGeneration: 2}]`), result.ObjectCurrent, "", "serves main@sha1:" + shaA[:7]},
		{"fetch failing again, the artifact kept", git, gitRepositoryStatus(fetchFailed), result.ObjectCurrent, "", "its last fetch failed"},
		{"stalled", git, gitRepositoryStatus(stalledAt(`  artifact: {revision: "main@sha1:` + shaA + `"}` + "\n")), result.ObjectFailed, result.CodeFluxArtifactFailed, "stalled: failed to parse url"},
		{"a new generation not reconciled", git, strings.Replace(gitRepositoryStatus(fetchFailed), "  observedGeneration: 2\n  artifact", "  observedGeneration: 1\n  artifact", 1),
			result.ObjectInProgress, "", "reconcile its current spec"},
		{"no artifact yet, failing", git, gitRepositoryStatus(`  conditions:
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "building artifact", observedGeneration: 2}
  - {type: Ready, status: "False", reason: AuthenticationFailed, message: "secrets \"git-auth\" not found", observedGeneration: 2}`),
			result.ObjectInProgress, "", "secrets \"git-auth\" not found"},
		{"a Helm OCI repository, which has no artifact", SourceRef{Kind: "HelmRepository", Namespace: "flux-system", Name: "charts"}, `
metadata: {name: charts, namespace: flux-system, generation: 1}
spec: {type: oci, url: "oci://registry.example.com/charts"}`, result.ObjectCurrent, "", "type oci"},
		{"a HelmChart that cannot be built", SourceRef{Kind: "HelmChart", Namespace: "flux-system", Name: "web"}, `
metadata: {name: web, namespace: flux-system, generation: 2}
spec: {chart: web, sourceRef: {kind: HelmRepository, name: charts}}
status:
` + stalledAt(""), result.ObjectFailed, result.CodeFluxChartFailed, "stalled"},
	}
	for _, tt := range tests {
		status, code, msg, _ := Serving(ReadSource(tt.ref, fromYAML(t, tt.doc)), nil, time.Time{})
		if status != tt.status || code != tt.code || !strings.Contains(msg, tt.says) {
			t.Errorf("%s: Serving = %s, %q, %q; want %s, %q, saying %q", tt.name, status, code, msg, tt.status, tt.code, tt.says)
		}
	}
}

func TestSourceStalled(t *testing.T) {
	t.Parallel()
	git := SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "repo"}
	tests := []struct {
		name    string
		doc     string
		want    string // the expected revision; "" for any
		stalled bool
		says    string
	}{
		{"stalled, serving another commit", stalledAt(`  artifact: {revision: "main@sha1:` + shaA + `"}` + "\n"), shaB, true, "serves main@sha1:" + shaA[:7]},
		{"stalled, serving the expected commit", stalledAt(`  artifact: {revision: "main@sha1:` + shaB + `"}` + "\n"), shaB, false, ""},
		{"stalled with no artifact", stalledAt(""), shaB, true, "no artifact"},
		{"stalled with no artifact, any revision", stalledAt(""), "", true, "GitRepository/flux-system/repo stalled"},
		{"stalled, serving one, any revision", stalledAt(`  artifact: {revision: "main@sha1:` + shaA + `"}` + "\n"), "", false, ""},
		{"failing to fetch, not stalled", fetchFailed, shaB, false, ""},
	}
	for _, tt := range tests {
		var want Revision
		if tt.want != "" {
			want = mustRevision(t, tt.want)
		}
		code, msg, stalled, _ := SourceStalled(ReadSource(git, fromYAML(t, gitRepositoryStatus(tt.doc))), nil, want, time.Time{})
		if stalled != tt.stalled || (stalled && code != result.CodeFluxArtifactFailed) || !strings.Contains(msg, tt.says) {
			t.Errorf("%s: SourceStalled = %q, %q, %t; want stalled %t, saying %q", tt.name, code, msg, stalled, tt.stalled, tt.says)
		}
	}
}
