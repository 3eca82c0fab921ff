package publish

import (
	"strings"
	"testing"

	"github.com/org/app-status-action/internal/fakegithub"
)

// commentConfig comments on pull request 12, merged as the workflow's commit.
func commentConfig(s *fakegithub.Server) Config {
	cfg := config(s)
	cfg.Deployments, cfg.PRComment = false, true
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
			cfg := commentConfig(s)
			marker := "<!-- app-status: workflow=deploy resources=Kustomization/flux-system/app -->"
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
	marker := "<!-- app-status: workflow=deploy resources=Kustomization/flux-system/app -->"
	t.Run("personal token, GET /user", func(t *testing.T) {
		t.Parallel()
		s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app", Login: "octocat", Pulls: map[string][]int{commit: {12}}})
		own := s.SeedComment(12, "octocat", marker+"\nearlier")
		s.Fail("POST", "/graphql", 3, fakegithub.Fault{Status: 502, Message: "Server Error"})
		if notes := publishRun(t, commentConfig(s), run(eu)); len(notes) != 0 {
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
		notes := publishRun(t, commentConfig(s), run(eu))
		if len(notes) != 1 || !strings.Contains(notes[0], "identity is unknown") || !strings.Contains(notes[0], "502") {
			t.Errorf("notes %q, want one saying the identity is unknown", notes)
		}
		c := s.Comments(12)
		if len(c) != 2 || c[0].Updated != 0 || c[1].Author != "deployer[bot]" {
			t.Errorf("comments %+v, want the earlier one untouched and a new one", c)
		}
	})
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
