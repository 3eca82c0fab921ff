package publish

import (
	"cmp"
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
	"github.com/org/app-status-action/internal/testing/fakegithub"
)

func statusConfig(s *fakegithub.Server) Config {
	cfg := config(s)
	cfg.Deployments, cfg.CommitStatus = false, true
	return cfg
}

// publishStatuses runs a publisher as the action does: Start, each cluster waiting (several
// progress lines each), the pending statuses seen by GitHub, Finish.
func publishStatuses(t *testing.T, s *fakegithub.Server, cfg Config, r result.Run, pending int) []string {
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
	before := len(s.CommitStatuses(commitOf(cfg.Revision, cfg.SHA)))
	p.Start(ctx)
	for _, c := range r.Results {
		p.Observe(c.Name, result.VerdictInProgress, "waiting for "+cmp.Or(c.Message, c.Name))
	}
	waitFor(t, func() bool { return len(s.CommitStatuses(commitOf(cfg.Revision, cfg.SHA))) >= before+pending })
	// More progress while they wait: no more pending statuses.
	for i := range 5 {
		for _, c := range r.Results {
			p.Observe(c.Name, result.VerdictInProgress, "still waiting "+strings.Repeat(".", i))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p.Finish(ctx, r)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the publisher and the fake GitHub")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// byContext is each context's states in the order they were posted, and its last
// description.
func byContext(s *fakegithub.Server, sha string) map[string][]string {
	out := map[string][]string{}
	for _, st := range s.CommitStatuses(sha) {
		out[st.Context] = append(out[st.Context], st.State+" "+st.Description)
	}
	return out
}

func TestCommitState(t *testing.T) {
	t.Parallel()
	want := map[result.Verdict]string{
		result.VerdictCurrent: "success",
		result.VerdictFailed:  "failure", result.VerdictNotFound: "failure", result.VerdictInvalidConfig: "failure",
		result.VerdictUnauthorized: "failure", result.VerdictForbidden: "failure",
		result.VerdictUnreachable: "error", result.VerdictThrottled: "error", result.VerdictTimeout: "error",
		result.VerdictCancelled: "error", result.VerdictSuspended: "error", result.VerdictUnknown: "error",
		result.VerdictInProgress: "error", result.VerdictUnverified: "error",
	}
	got := map[result.Verdict]string{}
	for _, v := range result.Verdicts {
		got[v] = commitState(v)
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("commitState (-want +got):\n%s", diff)
	}
}

// TestCommitStatusPerCluster: app-status/<cluster> on the verified commit, pending once while
// it waits and its final state after, linked to the run; a second run of the same commit
// posts to the same contexts, which GitHub shows once each.
func TestCommitStatusPerCluster(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
	cfg := statusConfig(s)
	if notes := publishStatuses(t, s, cfg, run(eu, us, ap), 3); len(notes) != 0 {
		t.Errorf("notes %q, want none", notes)
	}
	want := map[string][]string{
		"app-status/ap": {"pending waiting: waiting for dial tcp 10.0.0.1:443: i/o timeout", "error Unreachable: dial tcp 10.0.0.1:443: i/o timeout"},
		"app-status/eu": {"pending waiting: waiting for eu", "success Current"},
		"app-status/us": {"pending waiting: waiting for us", "failure crash-loop: Deployment/api"},
	}
	if diff := gocmp.Diff(want, byContext(s, commit)); diff != "" {
		t.Errorf("statuses per context, in order (-want +got):\n%s", diff)
	}
	for _, st := range s.CommitStatuses(commit) {
		if st.TargetURL != cfg.RunURL {
			t.Errorf("%s %s: target_url %q, want the run's %q", st.Context, st.State, st.TargetURL, cfg.RunURL)
		}
	}

	// A second run of the same commit, now all Current: the same three contexts, updated.
	if notes := publishStatuses(t, s, cfg, run(eu, result.Cluster{Name: "us", Verdict: result.VerdictCurrent}, result.Cluster{Name: "ap", Verdict: result.VerdictCurrent}), 3); len(notes) != 0 {
		t.Errorf("second run: notes %q, want none", notes)
	}
	state, combined := s.CombinedStatus(commit)
	var got []string
	for _, st := range combined {
		got = append(got, st.Context+" "+st.State)
	}
	if diff := gocmp.Diff([]string{"app-status/ap success", "app-status/eu success", "app-status/us success"}, got); state != "success" || diff != "" {
		t.Errorf("combined status after the second run: %s, want success; one per context (-want +got):\n%s", state, diff)
	}
	for context, states := range byContext(s, commit) {
		if len(states) != 4 || !strings.HasPrefix(states[2], "pending ") {
			t.Errorf("%s: %q, want pending and final twice", context, states)
		}
	}
}

// TestCommitStatusOnTheRevision: the revision's commit when it is a full SHA, else the
// workflow's.
func TestCommitStatusOnTheRevision(t *testing.T) {
	t.Parallel()
	other := "fedcba9876543210fedcba9876543210fedcba98"
	for _, tt := range []struct{ revision, want string }{
		{"main@sha1:" + other, other},
		{"v1.2.3", commit},
	} {
		t.Run(tt.revision, func(t *testing.T) {
			t.Parallel()
			s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
			cfg := statusConfig(s)
			rev, err := flux.ParseRevision(tt.revision)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Revision = rev
			if notes := publishStatuses(t, s, cfg, run(eu), 1); len(notes) != 0 {
				t.Errorf("notes %q", notes)
			}
			if diff := gocmp.Diff(map[string][]string{"app-status/eu": {"pending waiting: waiting for eu", "success Current"}}, byContext(s, tt.want)); diff != "" {
				t.Errorf("statuses on %s (-want +got):\n%s", tt.want, diff)
			}
		})
	}
}

// TestCommitStatusAggregate: above the deployments' grouping threshold, one status app-status
// with the counts, none per cluster.
func TestCommitStatusAggregate(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
	cfg := statusConfig(s)
	cfg.GroupAbove = 2
	if notes := publishStatuses(t, s, cfg, run(eu, us, ap), 1); len(notes) != 0 {
		t.Errorf("notes %q, want none", notes)
	}
	want := map[string][]string{"app-status": {"pending 0/3 Current, 3 waiting", "failure 1/3 Current, 1 Failed, 1 Unreachable; not Current: ap, us"}}
	if diff := gocmp.Diff(want, byContext(s, commit)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

func TestFinalStatusOfAGroup(t *testing.T) {
	t.Parallel()
	many := map[string]result.Cluster{}
	var names []string
	for i := range 60 {
		name := "cluster-" + strings.Repeat("x", 10) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		v := result.VerdictCurrent
		if i%3 == 0 {
			v = result.VerdictTimeout
		}
		many[name] = result.Cluster{Name: name, Verdict: v}
		names = append(names, name)
	}
	for _, tt := range []struct {
		name     string
		byName   map[string]result.Cluster
		clusters []string
		state    string
		prefix   string
	}{
		{"all Current", map[string]result.Cluster{"a": {Verdict: result.VerdictCurrent}, "b": {Verdict: result.VerdictCurrent}}, []string{"a", "b"}, "success", "2/2 Current"},
		{"an error", map[string]result.Cluster{"a": {Verdict: result.VerdictCurrent}, "b": {Verdict: result.VerdictTimeout}}, []string{"a", "b"}, "error", "1/2 Current, 1 Timeout; not Current: b"},
		{"a failure over an error", map[string]result.Cluster{"a": {Verdict: result.VerdictForbidden}, "b": {Verdict: result.VerdictTimeout}}, []string{"a", "b"}, "failure", "0/2 Current, 1 Timeout, 1 Forbidden; not Current: a, b"},
		{"no verdict", map[string]result.Cluster{"a": {Verdict: result.VerdictCurrent}}, []string{"a", "b"}, "error", "1/2 Current, 1 Unknown; not Current: b"},
		{"many", many, names, "error", "40/60 Current, 20 Timeout; not Current: cluster-xxxxxxxxxxaa, "},
	} {
		state, description := finalStatus(&statusTarget{context: statusContext, clusters: tt.clusters}, tt.byName)
		if state != tt.state || !strings.HasPrefix(description, tt.prefix) || utf8.RuneCountInString(description) > 140 {
			t.Errorf("%s: finalStatus = %s %q, want %s %q… of at most 140 characters", tt.name, state, description, tt.state, tt.prefix)
		}
		if tt.name == "many" && !strings.HasSuffix(description, " more") {
			t.Errorf("many: %q, want the rest counted", description)
		}
	}
}

// TestCommitStatusRefused: GitHub refusing the token (403) is one note naming the permission,
// nothing more is tried; a server error is retried, and one that lasts is a note naming the
// context.
func TestCommitStatusRefused(t *testing.T) {
	t.Parallel()
	t.Run("403", func(t *testing.T) {
		t.Parallel()
		s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app", DenyStatuses: true})
		cfg := statusConfig(s)
		cfg.PRComment = false
		p, err := New(cfg, []string{"eu", "us"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p.Start(ctx)
		p.Observe("eu", result.VerdictInProgress, "waiting")
		p.Observe("us", result.VerdictInProgress, "waiting")
		waitFor(t, p.refused.Load)
		notes := p.Finish(ctx, run(eu, us))
		if len(notes) != 1 || !strings.Contains(notes[0], "statuses: write") || !strings.Contains(notes[0], "403") {
			t.Errorf("notes %q, want one that names the permission", notes)
		}
		if n := len(s.CommitStatuses(commit)); n != 0 {
			t.Errorf("%d statuses recorded, want none", n)
		}
		if n := len(s.Calls()); n > 2 {
			t.Errorf("%d requests, want at most the two pending statuses: none after GitHub refused the token", n)
		}
	})
	t.Run("server errors retried", func(t *testing.T) {
		t.Parallel()
		s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
		s.Fail("POST", "/repos/org/app/statuses/", 2, fakegithub.Fault{Status: 502, Message: "Server Error"})
		if notes := publishStatuses(t, s, statusConfig(s), run(eu), 1); len(notes) != 0 {
			t.Errorf("notes %q, want the statuses posted after two 502s", notes)
		}
		if got := byContext(s, commit)["app-status/eu"]; len(got) != 2 {
			t.Errorf("statuses %q, want pending and success", got)
		}
	})
	t.Run("a pending status that fails", func(t *testing.T) {
		t.Parallel()
		s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
		s.Fail("POST", "/repos/org/app/statuses/", 3, fakegithub.Fault{Status: 500, Message: "Server Error"})
		p, err := New(statusConfig(s), []string{"eu"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p.Start(ctx)
		p.Observe("eu", result.VerdictInProgress, "waiting")
		waitFor(t, p.pendingFailed.Load)
		notes := p.Finish(ctx, run(eu))
		if len(notes) != 1 || !strings.Contains(notes[0], "pending commit status not posted for app-status/eu") || !strings.Contains(notes[0], "500") {
			t.Errorf("notes %q, want the pending status's failure", notes)
		}
		if diff := gocmp.Diff(map[string][]string{"app-status/eu": {"success Current"}}, byContext(s, commit)); diff != "" {
			t.Errorf("statuses (-want +got):\n%s", diff)
		}
	})
	t.Run("a lasting outage", func(t *testing.T) {
		t.Parallel()
		s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
		p, err := New(statusConfig(s), []string{"eu"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p.StartFinal(ctx)
		s.Fail("POST", "/repos/org/app/statuses/", 10, fakegithub.Fault{Status: 503, Message: "Unavailable"})
		notes := p.Finish(ctx, run(eu))
		if len(notes) != 1 || !strings.Contains(notes[0], "app-status/eu") || !strings.Contains(notes[0], "503") {
			t.Errorf("notes %q, want the context and GitHub's answer", notes)
		}
	})
}

// TestCommitStatusHostile: a hostile cluster name and message reach GitHub one line,
// bounded, with no runner command.
func TestCommitStatusHostile(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
	name := "eu\n::error::pwned\x1b[31m##[add-mask]x" + strings.Repeat("é", 200)
	message := "boom\r\n::set-output name=x::1\u2028##[warning]y\x1b]0;title\x07" + strings.Repeat("z", 300)
	hostile := result.Cluster{Name: name, Verdict: result.VerdictUnreachable, Message: message}
	if notes := publishStatuses(t, s, statusConfig(s), run(hostile), 1); len(notes) != 0 {
		t.Errorf("notes %q", notes)
	}
	got := s.CommitStatuses(commit)
	if len(got) != 2 {
		t.Fatalf("statuses %+v, want pending and error", got)
	}
	for _, st := range got {
		for what, text := range map[string]string{"context": st.Context, "description": st.Description} {
			if text != sanitize.Line(text) || strings.ContainsAny(text, "\n\r\x1b\u2028") || strings.Contains(text, "##[") || sanitize.Commands(text) != text {
				t.Errorf("%s %q is not one clean line", what, text)
			}
		}
		if n := utf8.RuneCountInString(st.Context); n > len("app-status/")+maxContextName {
			t.Errorf("context of %d characters, want at most %d", n, len("app-status/")+maxContextName)
		}
		if !strings.HasPrefix(st.Context, "app-status/eu ") {
			t.Errorf("context %q, want the cleaned name", st.Context)
		}
	}
	if got[0].Context != got[1].Context || got[1].State != "error" || !strings.HasPrefix(got[1].Description, "Unreachable: boom") {
		t.Errorf("statuses %+v, want pending then error on one context", got)
	}
}
