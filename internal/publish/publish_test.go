package publish

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakegithub"
)

const (
	token  = "ghs_testtoken"
	commit = "0123456789abcdef0123456789abcdef01234567"
)

func config(s *fakegithub.Server) Config {
	return Config{
		Deployments: true, Token: token, APIURL: s.URL, Repository: "org/app", SHA: commit,
		EventName: "push", Workflow: "deploy", RunURL: "https://github.com/org/app/actions/runs/7/attempts/1",
		Resources: []string{"Kustomization/flux-system/app"}, LiveEvery: time.Millisecond,
	}
}

func run(clusters ...result.Cluster) result.Run {
	return result.NewRun([]string{"Kustomization/flux-system/app"}, commit, clusters, time.Second)
}

var (
	eu = result.Cluster{Name: "eu", Verdict: result.VerdictCurrent}
	us = result.Cluster{Name: "us", Verdict: result.VerdictFailed, Code: "crash-loop", Objects: []result.Object{
		{Kind: "Deployment", Namespace: "apps", Name: "api", Failure: &result.Failure{Code: "crash-loop"}},
	}}
	ap = result.Cluster{Name: "ap", Verdict: result.VerdictUnreachable, Message: "dial tcp 10.0.0.1:443: i/o timeout"}
)

// publishRun runs a publisher over the clusters as the action does: Start, progress, Finish.
func publishRun(t *testing.T, cfg Config, r result.Run) []string {
	t.Helper()
	var names []string
	for _, c := range r.Results {
		names = append(names, c.Name)
	}
	p, err := New(cfg, names)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p.Start(ctx)
	for _, c := range r.Results {
		p.Observe(c.Name, result.VerdictInProgress, "waiting for "+c.Name)
	}
	<-p.started
	return p.Finish(ctx, r)
}

type deployment struct {
	Environment, Ref string
	States           []string
	Last             string
}

func deployments(s *fakegithub.Server) []deployment {
	var out []deployment
	for _, d := range s.Deployments() {
		got := deployment{Environment: d.Environment, Ref: d.SHA}
		for _, st := range d.Statuses {
			got.States = append(got.States, st.State)
			got.Last = st.Description
		}
		out = append(out, got)
	}
	return out
}

func TestDeploymentPerCluster(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
	cfg := config(s)
	cfg.Environment, cfg.EnvironmentURL = "prod-{cluster}", "https://{cluster}.example.com"
	notes := publishRun(t, cfg, run(eu, us, ap))
	if len(notes) != 0 {
		t.Errorf("notes %q, want none", notes)
	}
	want := []deployment{
		{Environment: "prod-ap", Ref: commit, States: []string{"in_progress", "error"}, Last: "Unreachable: dial tcp 10.0.0.1:443: i/o timeout"},
		{Environment: "prod-eu", Ref: commit, States: []string{"in_progress", "success"}, Last: "Current"},
		{Environment: "prod-us", Ref: commit, States: []string{"in_progress", "failure"}, Last: "crash-loop: Deployment/api"},
	}
	got := deployments(s)
	sortDeployments(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deployments (-want +got):\n%s", diff)
	}
	for _, d := range s.Deployments() {
		if d.AutoMerge || d.RequiredContexts == nil || len(d.RequiredContexts) != 0 {
			t.Errorf("%s: auto_merge %v, required_contexts %v; want false and []", d.Environment, d.AutoMerge, d.RequiredContexts)
		}
		last := d.Statuses[len(d.Statuses)-1]
		if last.LogURL != cfg.RunURL || last.EnvironmentURL != "https://"+strings.TrimPrefix(d.Environment, "prod-")+".example.com" {
			t.Errorf("%s: log_url %q environment_url %q", d.Environment, last.LogURL, last.EnvironmentURL)
		}
	}

	// A re-run of the same commit finds each deployment and adds statuses, never a duplicate.
	if notes := publishRun(t, cfg, run(eu, us, ap)); len(notes) != 0 {
		t.Errorf("re-run notes %q, want none", notes)
	}
	if n := len(s.Deployments()); n != 3 {
		t.Errorf("%d deployments after a re-run, want the same 3", n)
	}
	for _, d := range deployments(s) {
		if len(d.States) != 4 {
			t.Errorf("%s after a re-run: states %q, want in_progress and a final state twice", d.Environment, d.States)
		}
	}
}

func sortDeployments(ds []deployment) {
	for i := range ds {
		for j := i + 1; j < len(ds); j++ {
			if ds[j].Environment < ds[i].Environment {
				ds[i], ds[j] = ds[j], ds[i]
			}
		}
	}
}

func TestDeploymentsGroupedAboveTheThreshold(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
	cfg := config(s)
	cfg.GroupAbove, cfg.GroupEnvironment = 2, "production"
	notes := publishRun(t, cfg, run(eu, us, ap))
	if len(notes) != 0 {
		t.Errorf("notes %q, want none", notes)
	}
	want := []deployment{{Environment: "production", Ref: commit, States: []string{"in_progress", "failure"}, Last: "1/3 Current; not Current: ap, us"}}
	if diff := cmp.Diff(want, deployments(s)); diff != "" {
		t.Errorf("grouped deployments (-want +got):\n%s", diff)
	}
}

func TestRevisionCommitIsTheRef(t *testing.T) {
	t.Parallel()
	other := "fedcba9876543210fedcba9876543210fedcba98"
	for _, tt := range []struct{ revision, want string }{
		{"main@sha1:" + other, other},
		{other, other},
		{other[:7], commit}, // a short SHA names no commit GitHub is sure of: the workflow's
		{"v1.2.3", commit},
		{"", commit},
	} {
		rev, err := flux.ParseRevision(tt.revision)
		if err != nil {
			t.Fatal(err)
		}
		if got := commitOf(rev, commit); got != tt.want {
			t.Errorf("commitOf(%q) = %q, want %q", tt.revision, got, tt.want)
		}
	}
}

// TestGitHubRefusalsAreNotes: a missing permission, a rate limit and an outage never fail
// anything: each is a note, and the rest is posted.
func TestGitHubRefusalsAreNotes(t *testing.T) {
	t.Parallel()
	t.Run("no deployments permission", func(t *testing.T) {
		t.Parallel()
		s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app", DenyDeployments: true})
		notes := publishRun(t, config(s), run(eu, us))
		if len(notes) != 1 || !strings.Contains(notes[0], "deployments: write") || !strings.Contains(notes[0], "403") {
			t.Errorf("notes %q, want one that names the permission", notes)
		}
	})
	t.Run("secondary rate limit waited out", func(t *testing.T) {
		t.Parallel()
		s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
		s.Fail("POST", "/repos/org/app/deployments", 1, fakegithub.Fault{Status: 403, RetryAfter: "1", Message: "You have exceeded a secondary rate limit"})
		start := time.Now()
		notes := publishRun(t, config(s), run(eu))
		if len(notes) != 0 || len(s.Deployments()) != 1 || time.Since(start) < time.Second {
			t.Errorf("notes %q, %d deployments after %s: want the limit waited out (1 s) and the deployment created", notes, len(s.Deployments()), time.Since(start))
		}
	})
	t.Run("a wait longer than allowed is a note", func(t *testing.T) {
		t.Parallel()
		s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
		s.Fail("POST", "/repos/org/app/deployments", 5, fakegithub.Fault{Status: 429, RetryAfter: "3600", Message: "too many"})
		notes := publishRun(t, config(s), run(eu))
		if len(notes) != 1 || !strings.Contains(notes[0], "eu") || !strings.Contains(notes[0], "longer than") {
			t.Errorf("notes %q, want the deployment of eu not posted, GitHub asking to wait too long", notes)
		}
	})
	t.Run("server errors retried", func(t *testing.T) {
		t.Parallel()
		s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
		s.Fail("POST", "/repos/org/app/deployments/", 2, fakegithub.Fault{Status: 502, Message: "Server Error"})
		if notes := publishRun(t, config(s), run(eu)); len(notes) != 0 {
			t.Errorf("notes %q, want the statuses posted after two 502s", notes)
		}
		if got := deployments(s); len(got) != 1 || len(got[0].States) != 2 {
			t.Errorf("deployments %+v, want one with in_progress and success", got)
		}
	})
	t.Run("no token", func(t *testing.T) {
		t.Parallel()
		cfg := Config{Deployments: true, Repository: "org/app"}
		if _, err := New(cfg, []string{"eu"}); err == nil || !strings.Contains(err.Error(), "github-token") {
			t.Errorf("New without a token: %v, want an error naming the github-token input", err)
		}
	})
}

func TestLiveProgress(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
	p, err := New(config(s), []string{"eu"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p.Start(ctx)
	<-p.started
	p.Observe("eu", result.VerdictInProgress, "waiting for Deployment/apps/api: 1 of 3 replicas ready")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if d := deployments(s); len(d) == 1 && strings.Contains(d[0].Last, "1 of 3") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.Finish(ctx, run(eu))
	got := deployments(s)
	if len(got) != 1 || got[0].Last != "Current" {
		t.Fatalf("deployments %+v, want one ending Current", got)
	}
	var descriptions []string
	for _, st := range s.Deployments()[0].Statuses {
		descriptions = append(descriptions, st.State+": "+st.Description)
	}
	want := []string{"in_progress: waiting: waiting for eu", "in_progress: waiting: waiting for Deployment/apps/api: 1 of 3 replicas ready", "success: Current"}
	if len(descriptions) != 3 || descriptions[1] != want[1] || descriptions[2] != want[2] {
		t.Errorf("statuses %q, want the live progress between in_progress and success: %q", descriptions, want)
	}
}

func TestPullRequestComment(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app", Pulls: map[string][]int{commit: {12}}})
	marker := "<!-- app-status: workflow=deploy resources=Kustomization/flux-system/app -->"
	forged := s.SeedComment(12, "mallory", marker+"\nforged: all green")
	cfg := config(s)
	cfg.Deployments, cfg.PRComment = false, true
	if notes := publishRun(t, cfg, run(eu, us)); len(notes) != 0 {
		t.Fatalf("notes %q", notes)
	}
	if notes := publishRun(t, cfg, run(eu, us)); len(notes) != 0 {
		t.Fatalf("second run notes %q", notes)
	}
	comments := s.Comments(12)
	if len(comments) != 2 {
		t.Fatalf("%d comments, want mallory's and one of ours, edited by the second run: %+v", len(comments), comments)
	}
	for _, c := range comments {
		switch {
		case c.ID == forged:
			if c.Updated != 0 || !strings.Contains(c.Body, "forged") {
				t.Errorf("another author's comment with the marker was changed: %+v", c)
			}
		case c.Author != "github-actions[bot]" || c.Updated != 1 || !strings.HasPrefix(c.Body, marker+"\n") || !strings.Contains(c.Body, "| us | ❌ Failed |"):
			t.Errorf("our comment %+v: want github-actions[bot]'s, edited once, with the marker and the table", c)
		}
	}
	if i, j := strings.Index(comments[1].Body, "| us |"), strings.Index(comments[1].Body, "| eu |"); i < 0 || j < i {
		t.Errorf("the failing cluster is not first:\n%s", comments[1].Body)
	}
}

func TestPullRequestOfTheEvent(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app", Login: "deploy-bot"})
	event := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(event, []byte(`{"number": 7, "pull_request": {"number": 7}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config(s)
	cfg.Deployments, cfg.PRComment, cfg.EventName, cfg.EventPath = false, true, "pull_request", event
	if notes := publishRun(t, cfg, run(eu)); len(notes) != 0 {
		t.Fatalf("notes %q", notes)
	}
	if c := s.Comments(7); len(c) != 1 || c[0].Author != "deploy-bot" {
		t.Errorf("comments on #7: %+v, want one by the token's identity", c)
	}
}

func TestNoPullRequestIsANote(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app", DenyPullRequests: true, Pulls: map[string][]int{commit: {3}}})
	cfg := config(s)
	cfg.Deployments, cfg.PRComment = false, true
	notes := publishRun(t, cfg, run(eu))
	if len(notes) != 1 || !strings.Contains(notes[0], "pull-requests: write") {
		t.Errorf("notes %q, want the missing permission named", notes)
	}
	cfg.SHA = "ffffffffffffffffffffffffffffffffffffffff"
	cfg.PRComment = true
	s2 := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
	cfg.APIURL = s2.URL
	notes = publishRun(t, cfg, run(eu))
	if len(notes) != 1 || !strings.Contains(notes[0], "not the merge commit of a pull request") {
		t.Errorf("notes %q, want: no pull request for a direct push", notes)
	}
}

// TestFinishBounded: GitHub that never answers holds the step no longer than its context.
func TestFinishBounded(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
	s.Fail("POST", "/repos/org/app/deployments", 100, fakegithub.Fault{Status: 403, RetryAfter: "30", Message: "secondary rate limit"})
	p, err := New(config(s), []string{"eu"})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	p.Start(runCtx)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	var notes []string
	go func() { defer wg.Done(); notes = p.Finish(ctx, run(eu)) }()
	wg.Wait()
	if took := time.Since(start); took > 5*time.Second || len(notes) == 0 {
		t.Errorf("Finish took %s with notes %q, want its 2 s and a note", took, notes)
	}
}

// TestRequestSequence: the exact requests of one cluster's deployment: list (a re-run finds
// its own), create, in_progress, final; on a re-run, list then statuses only.
func TestRequestSequence(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
	cfg := config(s)
	publishRun(t, cfg, run(us))
	publishRun(t, cfg, run(eu))
	var got []string
	for _, c := range s.Calls() {
		line := c.Method + " " + c.Path
		if state, ok := c.Body["state"].(string); ok {
			line += " " + state
		}
		if c.Method == "GET" {
			line += " sha=" + c.Query.Get("sha")[:7] + " environment=" + c.Query.Get("environment")
		}
		got = append(got, line)
	}
	id := s.Deployments()[0].ID
	statuses := "POST /repos/org/app/deployments/" + strconv.FormatInt(id, 10) + "/statuses"
	want := []string{
		"GET /repos/org/app/deployments sha=0123456 environment=us",
		"POST /repos/org/app/deployments",
		statuses + " in_progress",
		statuses + " failure",
		"GET /repos/org/app/deployments sha=0123456 environment=eu",
		"POST /repos/org/app/deployments",
		"POST /repos/org/app/deployments/" + strconv.FormatInt(s.Deployments()[1].ID, 10) + "/statuses in_progress",
		"POST /repos/org/app/deployments/" + strconv.FormatInt(s.Deployments()[1].ID, 10) + "/statuses success",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	for _, c := range s.Calls() {
		if c.Status >= 300 {
			t.Errorf("%s %s answered %d", c.Method, c.Path, c.Status)
		}
	}
}
