package report

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
)

func TestDeploymentStateAndDescription(t *testing.T) {
	t.Parallel()
	crash := result.Cluster{Name: "eu", Verdict: result.VerdictFailed, Code: "crash-loop", Message: "Deployment/apps/api: back-off restarting",
		Objects: []result.Object{
			{Kind: "Service", Name: "api"},
			{Kind: "Deployment", Namespace: "apps", Name: "api", Failure: &result.Failure{Code: "crash-loop"}},
		}}
	long := result.Cluster{Name: "us", Verdict: result.VerdictTimeout, Message: strings.Repeat("waiting for a very slow rollout ", 20)}
	tests := []struct {
		name        string
		cluster     result.Cluster
		state, desc string
	}{
		{"current", result.Cluster{Verdict: result.VerdictCurrent}, "success", "Current"},
		{"failed names the code and the object", crash, "failure", "crash-loop: Deployment/api"},
		{"not found is a failure", result.Cluster{Verdict: result.VerdictNotFound, Message: "Kustomization/flux-system/app not found"}, "failure", "NotFound: Kustomization/flux-system/app not found"},
		{"unreachable is an error", result.Cluster{Verdict: result.VerdictUnreachable, Message: "dial tcp: i/o timeout"}, "error", "Unreachable: dial tcp: i/o timeout"},
		{"cancelled is inactive", result.Cluster{Verdict: result.VerdictCancelled}, "inactive", "Cancelled"},
		{"a forged command or newline stays one line", result.Cluster{Verdict: result.VerdictUnauthorized, Message: "no\n::error::x"}, "error", "Unauthorized: no ::error::x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := DeploymentState(tt.cluster.Verdict); got != tt.state {
				t.Errorf("state %q, want %q", got, tt.state)
			}
			if got := DeploymentDescription(tt.cluster); got != tt.desc {
				t.Errorf("description %q, want %q", got, tt.desc)
			}
		})
	}
	if got := DeploymentDescription(long); utf8.RuneCountInString(got) != MaxDeploymentDescription || !strings.HasSuffix(got, "…") {
		t.Errorf("a long description: %d characters %q, want %d ending in …", utf8.RuneCountInString(got), got, MaxDeploymentDescription)
	}
}

func TestFleetDescription(t *testing.T) {
	t.Parallel()
	verdicts := map[string]result.Verdict{}
	for i := range 998 {
		verdicts["cluster-"+strconv.Itoa(i)] = result.VerdictCurrent
	}
	verdicts["eu-3"], verdicts["us-7"] = result.VerdictFailed, result.VerdictUnreachable
	got := FleetDescription(verdicts, true)
	if want := "998/1000 Current; not Current: eu-3, us-7"; got != want {
		t.Errorf("FleetDescription = %q, want %q", got, want)
	}
	many := map[string]result.Verdict{}
	for i := range 200 {
		many["failing-cluster-"+strconv.Itoa(i)] = result.VerdictFailed
	}
	many["slow"] = result.VerdictInProgress
	got = FleetDescription(many, false)
	if n := utf8.RuneCountInString(got); n > MaxDeploymentDescription || !strings.HasPrefix(got, "0/201 Current, 1 waiting; not Current: failing-cluster-0, failing-cluster-1, ") || !strings.Contains(got, " more") {
		t.Errorf("FleetDescription of 200 failures = %q (%d characters), want the count, the first names and how many more, within 140", got, n)
	}
}

func TestCommentMarkerCannotCloseEarly(t *testing.T) {
	t.Parallel()
	ks := []string{"Kustomization/flux-system/app"}
	for _, tt := range []struct{ workflow, key, want string }{
		{"deploy --> <b>", "", "<!-- app-status: workflow=deploy - -&gt; &lt;b&gt; resources=Kustomization/flux-system/app -->"},
		{"deploy", "verify/status", "<!-- app-status: workflow=deploy key=verify/status resources=Kustomization/flux-system/app -->"},
		{"deploy", "x -->\n<b>", "<!-- app-status: workflow=deploy key=x - -&gt; &lt;b&gt; resources=Kustomization/flux-system/app -->"},
	} {
		if diff := cmp.Diff(tt.want, CommentMarker(tt.workflow, tt.key, ks)); diff != "" {
			t.Errorf("CommentMarker(%q, %q) (-want +got):\n%s", tt.workflow, tt.key, diff)
		}
	}
}

func TestCommentStaysUnderItsLimitFailuresFirst(t *testing.T) {
	t.Parallel()
	var clusters []result.Cluster
	for i := range 3000 {
		c := result.Cluster{Name: "cluster-" + strconv.Itoa(i), Verdict: result.VerdictCurrent}
		if i == 2999 {
			c.Verdict, c.Code, c.Message = result.VerdictFailed, "image-pull", "@someone #12 <script> | ::error::x"
		}
		clusters = append(clusters, c)
	}
	run := result.NewRun([]string{"Kustomization/flux-system/app"}, "", clusters, 0)
	got := Comment(run, CommentOptions{Marker: "<!-- m -->", MaxBytes: 8 << 10})
	if len(got) > 8<<10 {
		t.Errorf("comment of %d bytes, want at most %d", len(got), 8<<10)
	}
	rows := strings.Split(got, "\n")
	if !strings.HasPrefix(got, "<!-- m -->\n") || !strings.Contains(got, "more in the workflow run's summary") {
		t.Errorf("comment starts %q and does not say what was left out", rows[0])
	}
	first := ""
	for _, r := range rows {
		if strings.HasPrefix(r, "| cluster-") {
			first = r
			break
		}
	}
	if !strings.Contains(first, "Failed") || strings.Contains(got, "<script>") || strings.Contains(got, "@someone") {
		t.Errorf("first row %q: want the failing cluster first, its text escaped", first)
	}
}
