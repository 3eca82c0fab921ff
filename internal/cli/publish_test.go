package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-githubactions"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakegithub"
)

func TestPublishInputs(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	for _, tt := range []struct {
		name    string
		inputs  map[string]string
		check   func(t *testing.T, got actionConfig)
		wantErr string
	}{
		{name: "unset", inputs: map[string]string{}, check: func(t *testing.T, got actionConfig) {
			t.Helper()
			if got.publish.PullRequest != 0 || got.publish.ProductionEnvironment != nil || got.publish.TransientEnvironment != nil || got.publish.CommentKey != "" {
				t.Errorf("unset inputs: %+v, want GitHub's defaults and no key", got.publish)
			}
		}},
		{name: "set", inputs: map[string]string{"pull-request": "12", "production-environment": "true", "transient-environment": "false", "comment-key": "staging"},
			check: func(t *testing.T, got actionConfig) {
				t.Helper()
				p := got.publish
				if p.PullRequest != 12 || !cmp.Equal(p.ProductionEnvironment, &yes) || !cmp.Equal(p.TransientEnvironment, &no) || p.CommentKey != "staging" {
					t.Errorf("inputs: %+v", p)
				}
			}},
		{name: "commit status", inputs: map[string]string{"commit-status": "true"}, check: func(t *testing.T, got actionConfig) {
			t.Helper()
			if !got.publish.CommitStatus || got.publish.Deployments || got.publish.PRComment {
				t.Errorf("commit-status true: %+v, want CommitStatus alone", got.publish)
			}
		}},
		{name: "commit status not a boolean", inputs: map[string]string{"commit-status": "maybe"}, wantErr: `input commit-status: "maybe" is not a boolean`},
		{name: "negative pull request", inputs: map[string]string{"pull-request": "-3"}, wantErr: "input pull-request: -3 is not a pull request's number"},
		{name: "pull request not a number", inputs: map[string]string{"pull-request": "#12"}, wantErr: `input pull-request: "#12" is not a whole number`},
		{name: "production not a boolean", inputs: map[string]string{"production-environment": "prod"}, wantErr: `input production-environment: "prod" is not a boolean`},
		{name: "transient not a boolean", inputs: map[string]string{"transient-environment": "maybe"}, wantErr: `input transient-environment: "maybe" is not a boolean`},
	} {
		getenv := func(k string) string {
			name, ok := strings.CutPrefix(k, "INPUT_")
			if !ok {
				return ""
			}
			if name == "RESOURCE" {
				return "ks/app"
			}
			return tt.inputs[strings.ToLower(name)]
		}
		got, err := actionSettings(githubactions.New(githubactions.WithGetenv(getenv)))
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		default:
			tt.check(t, got)
		}
	}
}

// TestCommentPerJob: the merge steps of two jobs of one workflow keep a comment each on the
// pull request, under an App installation token, and so do the two calls of a reusable
// workflow (one job id, GITHUB_JOB, for staging's clusters and production's); a re-run of a
// job edits its own.
func TestCommentPerJob(t *testing.T) {
	t.Parallel()
	const sha = "0123456789abcdef0123456789abcdef01234567"
	gh := fakegithub.Start(t, fakegithub.Options{Token: "ghs_app", Owner: "org", Repo: "app", App: "deployer", Pulls: map[string][]int{sha: {12}}})
	for _, job := range []struct{ id, cluster string }{
		{"staging", "eu"}, {"production", "eu"}, {"staging", "eu"},
		{"verify", "staging-eu"}, {"verify", "prod-eu"}, {"verify", "prod-eu"},
	} {
		run := result.NewRun([]string{"Kustomization/flux-system/app"}, sha, []result.Cluster{{Name: job.cluster, Verdict: result.VerdictCurrent}}, time.Second)
		vars := map[string]string{
			"INPUT_PR-COMMENT": "true", "INPUT_GITHUB-TOKEN": "ghs_app", "INPUT_RESOURCE": "ks/app",
			"GITHUB_API_URL": gh.URL, "GITHUB_REPOSITORY": "org/app", "GITHUB_SHA": sha, "GITHUB_EVENT_NAME": "push",
			"GITHUB_WORKFLOW": "deploy", "GITHUB_JOB": job.id, "GITHUB_ACTION": "verify",
		}
		getenv := func(k string) string { return vars[k] }
		var log strings.Builder
		gha := githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(&log))
		s, err := actionSettings(gha)
		if err != nil {
			t.Fatal(err)
		}
		if notes := publishMerged(context.Background(), gha, Env{Getenv: getenv, Clock: time.Now}, s, run.Resources, flux.Revision{}, run, func() bool { return false }); len(notes) != 0 {
			t.Fatalf("job %s: notes %q\n%s", job.id, notes, log.String())
		}
	}
	var got []string
	for _, c := range gh.Comments(12) {
		marker, _, _ := strings.Cut(c.Body, "\n")
		got = append(got, c.Author+" "+marker+" edited "+strings.Repeat("x", c.Updated))
	}
	want := []string{
		"deployer[bot] <!-- app-status: workflow=deploy key=staging/verify/4d028294 resources=Kustomization/flux-system/app --> edited x",
		"deployer[bot] <!-- app-status: workflow=deploy key=production/verify/4d028294 resources=Kustomization/flux-system/app --> edited ",
		"deployer[bot] <!-- app-status: workflow=deploy key=verify/verify/262182e6 resources=Kustomization/flux-system/app --> edited ",
		"deployer[bot] <!-- app-status: workflow=deploy key=verify/verify/3312b695 resources=Kustomization/flux-system/app --> edited x",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}
}

// TestDefaultCommentKey: the job's id, the step's and a hash of the sorted cluster names, in
// any order of the names.
func TestDefaultCommentKey(t *testing.T) {
	t.Parallel()
	env := Env{Getenv: func(k string) string { return map[string]string{"GITHUB_JOB": "deploy", "GITHUB_ACTION": "verify"}[k] }}
	for _, tt := range []struct {
		clusters []string
		want     string
	}{
		{[]string{"eu", "us"}, "deploy/verify/0a7ce5ff"},
		{[]string{"us", "eu"}, "deploy/verify/0a7ce5ff"},
		{[]string{"eu"}, "deploy/verify/4d028294"},
		{nil, "deploy/verify"},
	} {
		if got := defaultCommentKey(env, tt.clusters); got != tt.want {
			t.Errorf("defaultCommentKey(%q) = %q, want %q", tt.clusters, got, tt.want)
		}
	}
	if got := defaultCommentKey(Env{Getenv: func(string) string { return "" }}, []string{"eu"}); got != "" {
		t.Errorf("defaultCommentKey outside GitHub = %q, want empty", got)
	}
}
