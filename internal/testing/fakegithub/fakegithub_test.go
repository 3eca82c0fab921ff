package fakegithub

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const token = "ghs_test"

type reply struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, s *Server, method, path string, body any, edit ...func(*http.Request)) reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(s.URL, "/")+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-GitHub-Api-Version", APIVersion)
	for _, e := range edit {
		e(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: string(data)}
}

const sha = "0123456789abcdef0123456789abcdef01234567"

func deployment(env string) map[string]any {
	return map[string]any{"ref": sha, "environment": env, "auto_merge": false, "required_contexts": []string{}}
}

func TestChecks(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 141)
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		edit   func(*http.Request)
		status int
		want   string // in the body
	}{
		{"bad token", "GET", "/repos/o/r/deployments", nil, func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, 401, "Bad credentials"},
		{"token scheme", "GET", "/repos/o/r/deployments", nil, func(r *http.Request) { r.Header.Set("Authorization", "token "+token) }, 200, "status-target"},
		{"no API version", "GET", "/repos/o/r/deployments", nil, func(r *http.Request) { r.Header.Del("X-GitHub-Api-Version") }, 400, "Invalid API version"},
		{"other repository", "GET", "/repos/o/other/deployments", nil, nil, 404, "Not Found"},
		{"no ref", "POST", "/repos/o/r/deployments", map[string]any{"auto_merge": false, "required_contexts": []string{}}, nil, 422, "ref"},
		{"auto_merge by default", "POST", "/repos/o/r/deployments", map[string]any{"ref": sha, "required_contexts": []string{}}, nil, 409, "Conflict merging"},
		{"required contexts by default", "POST", "/repos/o/r/deployments", map[string]any{"ref": sha, "auto_merge": false}, nil, 409, "status checks failed"},
		{"created", "POST", "/repos/o/r/deployments", deployment("eu"), nil, 201, `"sha":"` + sha},
		{"unknown deployment", "POST", "/repos/o/r/deployments/1/statuses", map[string]any{"state": "success"}, nil, 404, "Not Found"},
		{"unknown route", "GET", "/repos/o/r/hooks", nil, nil, 404, "/repos/o/r/hooks"},
		{"GET /user as an installation token", "GET", "/user", nil, nil, 403, "not accessible by integration"},
		{"long description", "POST", "/repos/o/r/deployments/STATUS/statuses", map[string]any{"state": "success", "description": long}, nil, 422, "too long"},
		{"140 characters", "POST", "/repos/o/r/deployments/STATUS/statuses", map[string]any{"state": "success", "description": long[:140*2]}, nil, 201, "success"},
		{"bad state", "POST", "/repos/o/r/deployments/STATUS/statuses", map[string]any{"state": "done"}, nil, 422, "state"},
		{"comment too long", "POST", "/repos/o/r/issues/1/comments", map[string]any{"body": strings.Repeat("x", 65537)}, nil, 422, "too long"},
	}
	s := Start(t, Options{Token: token, Owner: "o", Repo: "r"})
	created := do(t, s, "POST", "/repos/o/r/deployments", deployment("status-target"))
	var d struct{ ID int64 }
	if err := json.Unmarshal([]byte(created.body), &d); err != nil || created.status != 201 {
		t.Fatalf("create: %d %s", created.status, created.body)
	}
	for _, tt := range tests {
		path := strings.Replace(tt.path, "STATUS", jsonNumber(d.ID), 1)
		var edits []func(*http.Request)
		if tt.edit != nil {
			edits = append(edits, tt.edit)
		}
		got := do(t, s, tt.method, path, tt.body, edits...)
		if got.status != tt.status || !strings.Contains(got.body, tt.want) {
			t.Errorf("%s: %d %s, want %d with %q", tt.name, got.status, got.body, tt.status, tt.want)
		}
		if got.header.Get("X-Ratelimit-Limit") != "1000" || got.header.Get("X-Ratelimit-Resource") != "core" {
			t.Errorf("%s: rate-limit headers %v", tt.name, got.header)
		}
	}
}

func jsonNumber(n int64) string { data, _ := json.Marshal(n); return string(data) }

func TestDuplicateAndList(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{Token: token, Owner: "o", Repo: "r"})
	for _, env := range []string{"a", "b", "c"} {
		if r := do(t, s, "POST", "/repos/o/r/deployments", deployment(env)); r.status != 201 {
			t.Fatalf("create %s: %d %s", env, r.status, r.body)
		}
	}
	// GitHub creates a deployment of the same commit, environment and task again (a re-run
	// of a job with environment: does).
	if r := do(t, s, "POST", "/repos/o/r/deployments", deployment("b")); r.status != 201 {
		t.Errorf("second deployment of b: %d %s, want 201", r.status, r.body)
	}
	first := do(t, s, "GET", "/repos/o/r/deployments?sha="+sha+"&per_page=2", nil)
	var page []struct{ Environment string }
	if err := json.Unmarshal([]byte(first.body), &page); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]struct{ Environment string }{{"b"}, {"c"}}, page); diff != "" {
		t.Errorf("first page, newest first (-want +got):\n%s", diff)
	}
	if link := first.header.Get("Link"); !strings.Contains(link, "page=2") || !strings.Contains(link, `rel="next"`) {
		t.Errorf("Link %q, want the next page", link)
	}
	one := do(t, s, "GET", "/repos/o/r/deployments?environment=a", nil)
	if !strings.Contains(one.body, `"environment":"a"`) || strings.Contains(one.body, `"environment":"b"`) {
		t.Errorf("filtered by environment: %s", one.body)
	}
}

func TestFaultsRateLimitAndPermissions(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{Token: token, Owner: "o", Repo: "r", RateLimit: 3, DenyDeployments: true})
	s.Fail("GET", "/repos/o/r/deployments", 1, Fault{Status: 403, RetryAfter: "7", Message: "You have exceeded a secondary rate limit"})
	r := do(t, s, "GET", "/repos/o/r/deployments", nil)
	if r.status != 403 || r.header.Get("Retry-After") != "7" || !strings.Contains(r.body, "secondary-rate-limits") {
		t.Errorf("fault: %d %v %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if r := do(t, s, "POST", "/repos/o/r/deployments", deployment("x")); r.status != 403 || !strings.Contains(r.body, "not accessible") {
		t.Errorf("denied: %d %s", r.status, r.body)
	}
	do(t, s, "GET", "/repos/o/r/deployments", nil)
	do(t, s, "GET", "/repos/o/r/deployments", nil)
	if r := do(t, s, "GET", "/repos/o/r/deployments", nil); r.status != 403 || r.header.Get("X-Ratelimit-Remaining") != "0" {
		t.Errorf("past the rate limit: %d remaining %q", r.status, r.header.Get("X-Ratelimit-Remaining"))
	}
	var statuses []int
	for _, c := range s.Calls() {
		statuses = append(statuses, c.Status)
	}
	if diff := cmp.Diff([]int{403, 403, 200, 200, 403}, statuses); diff != "" {
		t.Errorf("recorded calls (-want +got):\n%s", diff)
	}
}

func TestCommentsAndPulls(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{Token: token, Owner: "o", Repo: "r", Pulls: map[string][]int{sha: {9}}, PullHeads: map[int]string{10: sha}})
	if r := do(t, s, "GET", "/repos/o/r/commits/"+sha+"/pulls", nil); !strings.Contains(r.body, `"number":9`) || !strings.Contains(r.body, `"merge_commit_sha":"`+sha) {
		t.Errorf("pulls: %s", r.body)
	}
	if r := do(t, s, "GET", "/repos/o/r/pulls/10", nil); r.status != 200 || !strings.Contains(r.body, `"head":{"sha":"`+sha+`"}`) {
		t.Errorf("pull request 10: %d %s", r.status, r.body)
	}
	if r := do(t, s, "GET", "/repos/o/r/pulls/11", nil); r.status != 404 {
		t.Errorf("pull request 11: %d %s, want 404", r.status, r.body)
	}
	other := s.SeedComment(9, "mallory", "<!-- marker -->")
	r := do(t, s, "POST", "/repos/o/r/issues/9/comments", map[string]any{"body": "hello"})
	var c struct {
		ID   int64
		User struct{ Login, Type string }
	}
	if err := json.Unmarshal([]byte(r.body), &c); err != nil || r.status != 201 || c.User.Login != "github-actions[bot]" || c.User.Type != "Bot" {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	if r := do(t, s, "PATCH", "/repos/o/r/issues/comments/"+jsonNumber(other), map[string]any{"body": "mine now"}); r.status != 403 {
		t.Errorf("editing another author's comment: %d, want 403", r.status)
	}
	if r := do(t, s, "PATCH", "/repos/o/r/issues/comments/"+jsonNumber(c.ID), map[string]any{"body": "edited"}); r.status != 200 {
		t.Errorf("edit: %d %s", r.status, r.body)
	}
	want := []Comment{{ID: other, Issue: 9, Author: "mallory", Body: "<!-- marker -->"}, {ID: c.ID, Issue: 9, Author: "github-actions[bot]", App: "github-actions", Body: "edited", Updated: 1}}
	if diff := cmp.Diff(want, s.Comments(9)); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}
}

// TestTokenKinds: GET /user, the GraphQL viewer and the author of a new comment, for the
// job's token, an App's installation token and a personal token.
func TestTokenKinds(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name                 string
		opts                 Options
		userStatus           int
		viewer, author, slug string
	}{
		{"job token", Options{}, 403, "github-actions[bot]", "github-actions[bot]", `"slug":"github-actions"`},
		{"App installation token", Options{App: "deployer"}, 403, "deployer[bot]", "deployer[bot]", `"slug":"deployer"`},
		{"personal token", Options{Login: "octocat"}, 200, "octocat", "octocat", `"performed_via_github_app":null`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.opts.Token, tt.opts.Owner, tt.opts.Repo = token, "o", "r"
			s := Start(t, tt.opts)
			if r := do(t, s, "GET", "/user", nil); r.status != tt.userStatus {
				t.Errorf("GET /user: %d %s, want %d", r.status, r.body, tt.userStatus)
			}
			r := do(t, s, "POST", "/graphql", map[string]any{"query": "query { viewer { login } }"})
			if want := `{"data":{"viewer":{"login":"` + tt.viewer + `"}}}`; r.status != 200 || strings.TrimSpace(r.body) != want {
				t.Errorf("viewer: %d %s, want %s", r.status, r.body, want)
			}
			if r := do(t, s, "POST", "/graphql", map[string]any{"query": "query { repository(owner: \"o\", name: \"r\") { id } }"}); r.status != 200 || !strings.Contains(r.body, `"errors"`) {
				t.Errorf("another query: %d %s, want 200 with errors", r.status, r.body)
			}
			c := do(t, s, "POST", "/repos/o/r/issues/1/comments", map[string]any{"body": "hello"})
			if !strings.Contains(c.body, `"login":"`+tt.author+`"`) || !strings.Contains(c.body, tt.slug) {
				t.Errorf("comment: %s, want by %s with %s", c.body, tt.author, tt.slug)
			}
		})
	}
}

// TestDeploymentFlags: production_environment and transient_environment as GitHub defaults
// and takes them, and a deployment seeded as another tool's.
func TestDeploymentFlags(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{Token: token, Owner: "o", Repo: "r"})
	seeded := s.SeedDeployment(Deployment{SHA: sha, Environment: "eu", Task: "deploy", Creator: "github-actions[bot]"})
	for _, body := range []map[string]any{
		deployment("production"),
		deployment("eu"),
		func() map[string]any {
			d := deployment("preview-7")
			d["production_environment"], d["transient_environment"] = false, true
			return d
		}(),
	} {
		if r := do(t, s, "POST", "/repos/o/r/deployments", body); r.status != 201 {
			t.Fatalf("create %v: %d %s", body["environment"], r.status, r.body)
		}
	}
	bad := deployment("eu")
	bad["transient_environment"] = "yes"
	if r := do(t, s, "POST", "/repos/o/r/deployments", bad); r.status != 422 || !strings.Contains(r.body, "transient_environment") {
		t.Errorf("a string flag: %d %s, want 422", r.status, r.body)
	}
	type flags struct {
		ID                       int64
		Environment, Task, Login string
		Production, Transient    bool
	}
	var got []flags
	for _, d := range s.Deployments() {
		got = append(got, flags{d.ID, d.Environment, d.Task, d.Creator, d.ProductionEnvironment, d.TransientEnvironment})
	}
	want := []flags{
		{seeded, "eu", "deploy", "github-actions[bot]", false, false},
		{seeded + 1, "production", "deploy", "github-actions[bot]", true, false},
		{seeded + 2, "eu", "deploy", "github-actions[bot]", false, false},
		{seeded + 3, "preview-7", "deploy", "github-actions[bot]", false, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deployments (-want +got):\n%s", diff)
	}
	if r := do(t, s, "GET", "/repos/o/r/deployments?environment=eu&task=deploy", nil); !strings.Contains(r.body, `"payload":{}`) || !strings.Contains(r.body, `"production_environment":false`) {
		t.Errorf("list: %s, want the seeded deployment with an empty payload", r.body)
	}
}
