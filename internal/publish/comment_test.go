package publish

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/testing/fakegithub"
)

// commentConfig comments on pull request 12, merged as the workflow's commit.
func commentConfig(s *fakegithub.Server, key string) Config {
	cfg := config(s)
	cfg.Deployments, cfg.PRComment, cfg.CommentKey = false, true, key
	cfg.GraphQLURL = s.URL + "graphql"
	return cfg
}

// TestCommentIdentity: under the job's token, an App installation token and a personal
// token, two runs leave one comment, by the token's identity, edited by the second; the
// comments of other authors with the same marker (a forged one, and the job token's of an
// earlier setup) are never touched.
func TestCommentIdentity(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		opts   fakegithub.Options
		author string
	}{
		{"job token", fakegithub.Options{}, "github-actions[bot]"},
		{"App installation token", fakegithub.Options{App: "deployer"}, "deployer[bot]"},
		{"personal token", fakegithub.Options{Login: "octocat"}, "octocat"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.opts.Token, tt.opts.Owner, tt.opts.Repo, tt.opts.Pulls = token, "org", "app", map[string][]int{commit: {12}}
			s := fakegithub.Start(t, tt.opts)
			cfg := commentConfig(s, "verify/status")
			marker := "<!-- app-status: workflow=deploy key=verify/status resources=Kustomization/flux-system/app -->"
			others := map[int64]string{}
			for _, author := range []string{"mallory", "github-actions[bot]", "deployer[bot]", "octocat"} {
				if author != tt.author {
					others[s.SeedComment(12, author, marker+"\nforged: all green")] = author
				}
			}
			for i := range 2 {
				if notes := publishRun(t, cfg, run(eu, us)); len(notes) != 0 {
					t.Fatalf("run %d: notes %q", i+1, notes)
				}
			}
			var ours []fakegithub.Comment
			for _, c := range s.Comments(12) {
				if author, ok := others[c.ID]; ok {
					if c.Updated != 0 || c.Author != author {
						t.Errorf("%s's comment with the marker was changed: %+v", author, c)
					}
					continue
				}
				ours = append(ours, c)
			}
			if len(ours) != 1 || ours[0].Author != tt.author || ours[0].Updated != 1 || !strings.HasPrefix(ours[0].Body, marker+"\n") {
				t.Errorf("our comments %+v: want one by %s, edited once by the second run", ours, tt.author)
			}
			for _, c := range s.Calls() {
				if c.Method == "PATCH" && c.Status != 200 {
					t.Errorf("PATCH %s answered %d: an edit of another author's comment was tried", c.Path, c.Status)
				}
			}
		})
	}
}

// TestCommentIdentityFallback: without the GraphQL API, a personal token is found by
// GET /user; a token whose identity nothing tells writes a new comment with a note, and
// edits none.
func TestCommentIdentityFallback(t *testing.T) {
	t.Parallel()
	marker := "<!-- app-status: workflow=deploy key=verify/status resources=Kustomization/flux-system/app -->"
	t.Run("personal token, GET /user", func(t *testing.T) {
		t.Parallel()
		s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app", Login: "octocat", Pulls: map[string][]int{commit: {12}}})
		own := s.SeedComment(12, "octocat", marker+"\nearlier")
		s.Fail("POST", "/graphql", 3, fakegithub.Fault{Status: 502, Message: "Server Error"})
		if notes := publishRun(t, commentConfig(s, "verify/status"), run(eu)); len(notes) != 0 {
			t.Fatalf("notes %q", notes)
		}
		if c := s.Comments(12); len(c) != 1 || c[0].ID != own || c[0].Updated != 1 {
			t.Errorf("comments %+v, want octocat's edited", c)
		}
	})
	t.Run("App token, no identity", func(t *testing.T) {
		t.Parallel()
		s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app", App: "deployer", Pulls: map[string][]int{commit: {12}}})
		s.SeedComment(12, "deployer[bot]", marker+"\nearlier")
		s.Fail("POST", "/graphql", 3, fakegithub.Fault{Status: 502, Message: "Server Error"})
		notes := publishRun(t, commentConfig(s, "verify/status"), run(eu))
		if len(notes) != 1 || !strings.Contains(notes[0], "identity is unknown") || !strings.Contains(notes[0], "502") {
			t.Errorf("notes %q, want one saying the identity is unknown", notes)
		}
		c := s.Comments(12)
		if len(c) != 2 || c[0].Updated != 0 || c[1].Author != "deployer[bot]" {
			t.Errorf("comments %+v, want the earlier one untouched and a new one", c)
		}
	})
}

// TestCommentKeys: two jobs (two keys) keep two comments on one pull request; a re-run of
// one job edits its own.
func TestCommentKeys(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app", App: "deployer", Pulls: map[string][]int{commit: {12}}})
	for _, key := range []string{"staging/verify", "production/verify", "staging/verify"} {
		if notes := publishRun(t, commentConfig(s, key), run(eu)); len(notes) != 0 {
			t.Fatalf("job %s: notes %q", key, notes)
		}
	}
	type comment struct {
		Marker  string
		Updated int
	}
	var got []comment
	for _, c := range s.Comments(12) {
		marker, _, _ := strings.Cut(c.Body, "\n")
		got = append(got, comment{marker, c.Updated})
	}
	want := []comment{
		{"<!-- app-status: workflow=deploy key=staging/verify resources=Kustomization/flux-system/app -->", 1},
		{"<!-- app-status: workflow=deploy key=production/verify resources=Kustomization/flux-system/app -->", 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}
}

// TestWorkflowRun: a workflow_run event (GITHUB_SHA is the default branch's head) comments
// on the pull request a pull request's run names, of this repository and of the run's commit,
// or, after a push, on the pull request merged as the run's commit (never on an open pull
// request a push's run lists), and puts the deployments on the commit
// of the run it follows, or on the revision's commit when the revision is a full SHA.
func TestWorkflowRun(t *testing.T) {
	t.Parallel()
	const (
		mainHead = "aaaa0000aaaa0000aaaa0000aaaa0000aaaa0000"
		head     = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"
		pushHead = "3e4d3e4d3e4d3e4d3e4d3e4d3e4d3e4d3e4d3e4d"
		other    = "fedcba9876543210fedcba9876543210fedcba98"
	)
	for _, tt := range []struct {
		name, event, revision string
		pullRequest           int
		wantPR                int
		wantRef               string
		wantNote              string
	}{
		{name: "pull request", event: "workflow_run.json", wantPR: 21, wantRef: head},
		{name: "revision's commit", event: "workflow_run.json", revision: "main@sha1:" + other, wantPR: 21, wantRef: other},
		{name: "short revision", event: "workflow_run.json", revision: head[:7], wantPR: 21, wantRef: head},
		{name: "push, merged pull request", event: "workflow_run_push.json", wantPR: 5, wantRef: pushHead},
		{name: "push listing an open pull request", event: "workflow_run_push_open_pr.json", wantPR: 5, wantRef: pushHead},
		{name: "fork", event: "workflow_run_fork.json", wantRef: "f04cf04cf04cf04cf04cf04cf04cf04cf04cf04c",
			wantNote: "pull request from a fork, which GitHub does not list in its event: give its number in the pull-request input"},
		{name: "fork, pull-request input", event: "workflow_run_fork.json", pullRequest: 33, wantPR: 33, wantRef: "f04cf04cf04cf04cf04cf04cf04cf04cf04cf04c"},
		{name: "pull-request input of another head", event: "workflow_run_fork.json", pullRequest: 34, wantRef: "f04cf04cf04cf04cf04cf04cf04cf04cf04cf04c",
			wantNote: "the head of pull request #34 (the pull-request input) is not f04cf04cf04c, the commit of the run"},
		{name: "pull-request input that is no pull request", event: "workflow_run_fork.json", pullRequest: 35, wantRef: "f04cf04cf04cf04cf04cf04cf04cf04cf04cf04c",
			wantNote: "pull request #35 (the pull-request input) was not found in this repository"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app",
				Pulls:     map[string][]int{mainHead: {99}, pushHead: {5}},
				PullHeads: map[int]string{33: "f04cf04cf04cf04cf04cf04cf04cf04cf04cf04c", 34: other}})
			cfg := commentConfig(s, "deploy/verify")
			cfg.Deployments, cfg.SHA, cfg.PullRequest = true, mainHead, tt.pullRequest
			cfg.EventName, cfg.EventPath = "workflow_run", filepath.Join("testdata", tt.event)
			rev, err := flux.ParseRevision(tt.revision)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Revision = rev
			notes := publishRun(t, cfg, run(eu))
			if tt.wantNote == "" && len(notes) != 0 || tt.wantNote != "" && (len(notes) != 1 || !strings.Contains(notes[0], tt.wantNote)) {
				t.Errorf("notes %q, want %q", notes, tt.wantNote)
			}
			for _, pr := range []int{3, 5, 21, 33, 34, 35, 99} {
				if n := len(s.Comments(pr)); (pr == tt.wantPR) != (n == 1) || n > 1 {
					t.Errorf("%d comments on #%d, want one on #%d only", n, pr, tt.wantPR)
				}
			}
			if d := s.Deployments(); len(d) != 1 || d[0].SHA != tt.wantRef || d[0].Ref != tt.wantRef {
				t.Errorf("deployments %+v, want one of %s", d, tt.wantRef)
			}
		})
	}
}

// TestWorkflowRunWithoutItsCommit: a workflow_run event that cannot be read names no commit:
// no deployment on GITHUB_SHA (the default branch's head), and a note that says why.
func TestWorkflowRunWithoutItsCommit(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
	cfg := config(s)
	cfg.EventName, cfg.EventPath = "workflow_run", filepath.Join("testdata", "missing.json")
	notes := publishRun(t, cfg, run(eu))
	if len(notes) != 1 || !strings.Contains(notes[0], "no deployment was created") || !strings.Contains(notes[0], "GITHUB_EVENT_PATH") {
		t.Errorf("notes %q, want no deployment, for want of the event", notes)
	}
	if d := s.Deployments(); len(d) != 0 {
		t.Errorf("deployments %+v, want none", d)
	}
}

func TestParseEvent(t *testing.T) {
	t.Parallel()
	const sha = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"
	for _, tt := range []struct {
		name, event, payload string
		want                 event
		wantErr              string
	}{
		{name: "pull_request", event: "pull_request", payload: `{"number": 7, "pull_request": {"number": 7}}`, want: event{pullRequest: 7}},
		{name: "pull_request_target", event: "pull_request_target", payload: `{"pull_request": {"number": 8}}`, want: event{pullRequest: 8}},
		{name: "workflow_run", event: "workflow_run", payload: `{"workflow_run": {"head_sha": "C0FFEE00C0FFEE00C0FFEE00C0FFEE00C0FFEE00", "event": "pull_request",
			"pull_requests": [{"number": 4, "head": {"sha": "` + sha + `"}, "base": {"repo": {"url": "https://ghes.example.com/api/v3/repos/ORG/App"}}}]}}`, want: event{pullRequest: 4, headSHA: sha}},
		{name: "a pull request of another head", event: "workflow_run", payload: `{"workflow_run": {"head_sha": "` + sha + `", "event": "pull_request",
			"pull_requests": [{"number": 4, "head": {"sha": "fedcba9876543210fedcba9876543210fedcba98"}, "base": {"repo": {"url": "https://api.github.com/repos/org/app"}}}]}}`, want: event{headSHA: sha}},
		{name: "push listing an open pull request", event: "workflow_run", payload: `{"workflow_run": {"head_sha": "` + sha + `", "event": "push",
			"pull_requests": [{"number": 4, "head": {"sha": "` + sha + `"}, "base": {"repo": {"url": "https://api.github.com/repos/org/app"}}}]}}`, want: event{headSHA: sha}},
		{name: "another repository's pull request", event: "workflow_run", payload: `{"workflow_run": {"head_sha": "` + sha + `", "event": "pull_request",
			"pull_requests": [{"number": 4, "head": {"sha": "` + sha + `"}, "base": {"repo": {"url": "https://api.github.com/repos/org/app-fork"}}}]}}`, want: event{headSHA: sha}},
		{name: "fork", event: "workflow_run", payload: `{"workflow_run": {"head_sha": "` + sha + `", "event": "pull_request", "pull_requests": [],
			"repository": {"full_name": "org/app"}, "head_repository": {"full_name": "someone/app"}}}`, want: event{headSHA: sha, fork: true}},
		{name: "push", event: "workflow_run", payload: `{"workflow_run": {"head_sha": "` + sha + `", "event": "push", "pull_requests": [],
			"repository": {"full_name": "org/app"}, "head_repository": {"full_name": "org/app"}}}`, want: event{headSHA: sha}},
		{name: "short head_sha", event: "workflow_run", payload: `{"workflow_run": {"head_sha": "c0ffee0"}}`, wantErr: "not a commit SHA"},
		{name: "not JSON", event: "workflow_run", payload: `{`, wantErr: "unexpected end"},
	} {
		got, err := parseEvent(tt.event, []byte(tt.payload), "org/app")
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: parseEvent = %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

// TestGraphQLURL: the GraphQL endpoint beside the REST API, when GITHUB_GRAPHQL_URL is unset.
func TestGraphQLURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ api, want string }{
		{"", "https://api.github.com/graphql"},
		{"https://api.github.com", "https://api.github.com/graphql"},
		{"https://ghes.example.com/api/v3", "https://ghes.example.com/api/graphql"},
		{"https://ghes.example.com/api/v3/", "https://ghes.example.com/api/graphql"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/graphql"},
	} {
		a, err := newAPI(Config{APIURL: tt.api, Repository: "org/app"})
		if err != nil {
			t.Fatal(err)
		}
		if a.graphQL != tt.want {
			t.Errorf("GraphQL URL beside %q = %q, want %q", tt.api, a.graphQL, tt.want)
		}
	}
	if _, err := newAPI(Config{Repository: "org/app", GraphQLURL: "file:///etc/passwd"}); err == nil || !strings.Contains(err.Error(), "GITHUB_GRAPHQL_URL") {
		t.Errorf("a file URL for GraphQL: %v, want refused", err)
	}
}
