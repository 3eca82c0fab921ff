package fakegithub

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCommitStatusChecks(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 141)
	for _, tt := range []struct {
		name   string
		opts   Options
		path   string
		body   map[string]any
		status int
		want   string // in the body
	}{
		{"created", Options{}, "/repos/o/r/statuses/" + sha, map[string]any{"state": "pending", "context": "app-status/eu"}, 201, `"context":"app-status/eu"`},
		{"default context", Options{}, "/repos/o/r/statuses/" + sha, map[string]any{"state": "success"}, 201, `"context":"default"`},
		{"140 characters", Options{}, "/repos/o/r/statuses/" + sha, map[string]any{"state": "success", "description": long[:140*2]}, 201, "success"},
		{"long description", Options{}, "/repos/o/r/statuses/" + sha, map[string]any{"state": "success", "description": long}, 422, "too long"},
		{"a deployment's state", Options{}, "/repos/o/r/statuses/" + sha, map[string]any{"state": "in_progress"}, 422, "state"},
		{"no state", Options{}, "/repos/o/r/statuses/" + sha, map[string]any{"context": "x"}, 422, "state"},
		{"short SHA", Options{}, "/repos/o/r/statuses/0123456", map[string]any{"state": "success"}, 422, "No commit found"},
		{"other repository", Options{}, "/repos/o/other/statuses/" + sha, map[string]any{"state": "success"}, 404, "Not Found"},
		{"no statuses permission", Options{DenyStatuses: true}, "/repos/o/r/statuses/" + sha, map[string]any{"state": "success"}, 403, "not accessible"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.opts.Token, tt.opts.Owner, tt.opts.Repo = token, "o", "r"
			s := Start(t, tt.opts)
			got := do(t, s, "POST", tt.path, tt.body)
			if got.status != tt.status || !strings.Contains(got.body, tt.want) {
				t.Errorf("POST %s: %d %s, want %d with %q", tt.path, got.status, got.body, tt.status, tt.want)
			}
			if n := len(s.CommitStatuses(sha)); (tt.status == 201) != (n == 1) {
				t.Errorf("%d statuses recorded after a %d", n, got.status)
			}
		})
	}
}

// TestCombinedStatus: a later status of a context replaces the earlier one in what GitHub
// shows, every status posted stays recorded, and the combined state is the worst.
func TestCombinedStatus(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{Token: token, Owner: "o", Repo: "r"})
	if state, got := s.CombinedStatus(sha); state != "pending" || len(got) != 0 {
		t.Errorf("no status: %s %v, want pending and none", state, got)
	}
	post := func(context, state string) {
		t.Helper()
		if r := do(t, s, "POST", "/repos/o/r/statuses/"+sha, map[string]any{"state": state, "context": context, "target_url": "https://run"}); r.status != 201 {
			t.Fatalf("post %s %s: %d %s", context, state, r.status, r.body)
		}
	}
	post("app-status/us", "pending")
	post("app-status/eu", "pending")
	post("app-status/eu", "success")
	if state, _ := s.CombinedStatus(sha); state != "pending" {
		t.Errorf("with us pending: %s, want pending", state)
	}
	post("app-status/us", "failure")
	state, got := s.CombinedStatus(sha)
	want := []CommitStatus{
		{SHA: sha, Context: "app-status/eu", State: "success", TargetURL: "https://run", Creator: "github-actions[bot]"},
		{SHA: sha, Context: "app-status/us", State: "failure", TargetURL: "https://run", Creator: "github-actions[bot]"},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(CommitStatus{}, "ID")); state != "failure" || diff != "" {
		t.Errorf("combined: %s, want failure; statuses (-want +got):\n%s", state, diff)
	}
	if n := len(s.CommitStatuses(sha)); n != 4 {
		t.Errorf("%d statuses recorded, want all 4", n)
	}
	r := do(t, s, "GET", "/repos/o/r/commits/"+sha+"/status", nil)
	var combined struct {
		State      string
		TotalCount int `json:"total_count"`
		Statuses   []struct{ Context, State string }
	}
	if err := json.Unmarshal([]byte(r.body), &combined); err != nil || r.status != 200 {
		t.Fatalf("GET combined status: %d %s", r.status, r.body)
	}
	wantJSON := []struct{ Context, State string }{{"app-status/eu", "success"}, {"app-status/us", "failure"}}
	if diff := cmp.Diff(wantJSON, combined.Statuses); combined.State != "failure" || combined.TotalCount != 2 || diff != "" {
		t.Errorf("GET combined status: %s %d, want failure 2; statuses (-want +got):\n%s", combined.State, combined.TotalCount, diff)
	}
}

func TestCommitStatusLimitPerContext(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{Token: token, Owner: "o", Repo: "r", RateLimit: 2000})
	for range maxStatusesPerContext {
		if r := do(t, s, "POST", "/repos/o/r/statuses/"+sha, map[string]any{"state": "pending", "context": "c"}); r.status != 201 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	if r := do(t, s, "POST", "/repos/o/r/statuses/"+sha, map[string]any{"state": "success", "context": "c"}); r.status != 422 || !strings.Contains(r.body, "maximum number of statuses") {
		t.Errorf("status 1001 of a context: %d %s, want 422", r.status, r.body)
	}
	if r := do(t, s, "POST", "/repos/o/r/statuses/"+sha, map[string]any{"state": "success", "context": "d"}); r.status != 201 {
		t.Errorf("another context: %d %s, want 201", r.status, r.body)
	}
}
