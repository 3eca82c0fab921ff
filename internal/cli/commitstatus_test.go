package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/filecommand"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakegithub"
)

// TestCommitStatusNeverChangesTheVerdict: the merge step posts each cluster's commit status on
// its own commit; GitHub refusing the token (no statuses: write) is a warning and a line in
// the summary, and the outputs and the exit code are the run's either way.
func TestCommitStatusNeverChangesTheVerdict(t *testing.T) {
	t.Parallel()
	const (
		rev    = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
		commit = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
		token  = "ghs_status_token_0123456789"
	)
	current := result.Cluster{Name: "prod-eu", Verdict: result.VerdictCurrent}
	failed := result.Cluster{Name: "prod-us", Verdict: result.VerdictFailed, Code: "crash-loop", Objects: []result.Object{
		{Kind: "Deployment", Namespace: "apps", Name: "api", Failure: &result.Failure{Code: "crash-loop"}},
	}}
	for _, tt := range []struct {
		name     string
		clusters []result.Cluster
		deny     bool
		code     int
		status   string
		want     []string // context and state of each status GitHub shows
	}{
		{"all Current", []result.Cluster{current}, false, 0, "success", []string{"app-status/prod-eu success"}},
		{"one failed", []result.Cluster{current, failed}, false, 1, "failure", []string{"app-status/prod-eu success", "app-status/prod-us failure"}},
		{"refused, all Current", []result.Cluster{current}, true, 0, "success", nil},
		{"refused, one failed", []result.Cluster{current, failed}, true, 1, "failure", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gh := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app", DenyStatuses: tt.deny})
			dir := t.TempDir()
			leg := result.NewRun([]string{"Kustomization/flux-system/app"}, rev, tt.clusters, time.Second)
			leg.Origin = &result.Origin{CI: "github", Repository: "org/app", RunID: "7001", Attempt: 1}
			writeReport(t, filepath.Join(dir, "leg.json"), leg)
			f := newFakeEnv(t, map[string]string{
				"INPUT_MERGE": filepath.Join(dir, "*.json"), "INPUT_RESOURCE": "ks/app", "INPUT_REVISION": rev,
				"INPUT_COMMIT-STATUS": "true", "INPUT_GITHUB-TOKEN": token,
				"GITHUB_REPOSITORY": "org/app", "GITHUB_RUN_ID": "7001", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_SHA": "b2c3d4e5f60718293a4b5c6d7e8f901234567890",
				"GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": gh.URL, "GITHUB_EVENT_NAME": "push", "RUNNER_TEMP": t.TempDir(),
			})
			code := Run(context.Background(), []string{"action"}, f.env())
			log := f.stdout.String()
			if code != tt.code {
				t.Errorf("Run() = %d, want %d:\n%s", code, tt.code, log)
			}
			outputs, err := filecommand.ParseOutputs(f.file(t, f.output))
			if err != nil {
				t.Fatal(err)
			}
			if outputs["status"] != tt.status {
				t.Errorf("status output %q, want %q", outputs["status"], tt.status)
			}
			_, combined := gh.CombinedStatus(commit)
			var got []string
			for _, st := range combined {
				got = append(got, st.Context+" "+st.State)
				if st.TargetURL != "https://github.com/org/app/actions/runs/7001/attempts/1" {
					t.Errorf("%s: target_url %q, want the run's", st.Context, st.TargetURL)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("statuses on the revision's commit (-want +got):\n%s", diff)
			}
			const warning = "::warning title=app-status%3A not posted to GitHub::commit statuses not posted: GitHub refused the token (403 Resource not accessible by integration): grant the job `statuses: write`"
			if got := strings.Count(log, warning); got != map[bool]int{true: 1}[tt.deny] {
				t.Errorf("%d warnings %q, want %d:\n%s", got, warning, map[bool]int{true: 1}[tt.deny], log)
			}
			summary := f.file(t, f.summary)
			if tt.deny != strings.Contains(summary, "statuses: write") || tt.deny != strings.Contains(summary, "Not posted to GitHub") {
				t.Errorf("summary names the refusal: %v, want %v:\n%s", !tt.deny, tt.deny, summary)
			}
		})
	}
}

// TestCommitStatusOfAVerifyStep: the action's verify mode posts the cluster's commit status
// on the workflow's commit (the revision is a short SHA), pending once while it waits, then its
// verdict, linked to the run; the exit code is the run's.
func TestCommitStatusOfAVerifyStep(t *testing.T) {
	t.Parallel()
	const (
		sha   = "c3d4e5f60718293a4b5c6d7e8f90123456789012"
		token = "ghs_status_token_0123456789"
	)
	for _, tt := range []struct {
		name, revision, timeout string
		code                    int
		// want is each state posted; the fake cluster is Current as soon as it is connected,
		// so its pending status may not go out before the verdict: maybe is its pending.
		want  []string
		maybe string
	}{
		{"Current at once", "a1b2c3d4", "20s", 0, []string{"app-status/prod-eu success"}, "app-status/prod-eu pending"},
		{"waits for another revision, times out", "b2c3d4e5", "3s", 1, []string{"app-status/prod-eu pending", "app-status/prod-eu error"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gh := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
			f := newFakeEnv(t, map[string]string{
				"KC_PROD": healthyCluster(t), "INPUT_CLUSTERS": "prod-eu=env:KC_PROD", "INPUT_RESOURCE": "ks/app",
				"INPUT_REVISION": tt.revision, "INPUT_TIMEOUT": tt.timeout, "INPUT_COMMIT-STATUS": "true", "INPUT_GITHUB-TOKEN": token,
				"GITHUB_REPOSITORY": "org/app", "GITHUB_RUN_ID": "7001", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_SHA": sha,
				"GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": gh.URL, "GITHUB_EVENT_NAME": "push",
			})
			if code := Run(context.Background(), []string{"action"}, f.env()); code != tt.code {
				t.Errorf("Run() = %d, want %d:\n%s", code, tt.code, f.stdout.String())
			}
			if log := f.stdout.String(); strings.Contains(log, "::warning") {
				t.Errorf("a warning, want none:\n%s", log)
			}
			var states []string
			for _, st := range gh.CommitStatuses(sha) {
				states = append(states, st.Context+" "+st.State)
				if st.TargetURL != "https://github.com/org/app/actions/runs/7001/attempts/2" {
					t.Errorf("%s %s: target_url %q, want the run's", st.Context, st.State, st.TargetURL)
				}
			}
			if !cmp.Equal(tt.want, states) && (tt.maybe == "" || !cmp.Equal(append([]string{tt.maybe}, tt.want...), states)) {
				t.Errorf("statuses %q, want %q (after %q or not)", states, tt.want, tt.maybe)
			}
		})
	}
}
