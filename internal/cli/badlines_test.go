package cli

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/testing/runnertest"
)

// TestEachBadLineOnItsOwnLine: the errors of several bad lines of a clusters file (or input)
// are printed a line each, in the CLI's stderr and in the action's annotation, never run on.
func TestEachBadLineOnItsOwnLine(t *testing.T) {
	t.Parallel()
	const clusters = "staging\nprod=bogus:x\n"
	const help = "expected name=source, where source is env:VAR, file:PATH, context:NAME or oidc:https://SERVER audience=AUDIENCE"
	tests := []struct {
		name   string
		action bool
	}{
		{name: "cli"},
		{name: "action", action: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeEnv(t, nil)
			var got, want []string
			if tt.action {
				f.vars["INPUT_CLUSTERS"], f.vars["INPUT_RESOURCE"] = clusters, "ks/app"
				if code := Run(context.Background(), []string{"action"}, f.env()); code != 1 {
					t.Fatalf("Run() = %d, want 1\n%s", code, f.stdout.String())
				}
				for _, c := range runnertest.Commands(f.stdout.String()) {
					if c.Name != "error" || !strings.Contains(c.Line, "title=app-status bad input::") {
						continue
					}
					_, message, _ := strings.Cut(c.Line, "bad input::")
					// The runner unescapes a command's data: %0A is a line break.
					message, err := url.PathUnescape(message)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, strings.Split(message, "\n")...)
				}
				want = []string{
					`input clusters line 1: "staging": ` + help,
					`input clusters line 2: "prod=bogus:x": unknown source "bogus:"; ` + help,
				}
				// The job summary lists them, a list item each.
				summary := f.file(t, f.summary)
				for _, l := range want {
					item := "- " + strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(l) + "\n"
					if !strings.Contains(summary, item) {
						t.Errorf("the job summary lacks the item %q:\n%s", item, summary)
					}
				}
			} else {
				delete(f.vars, "GITHUB_ACTIONS")
				file := clustersFile(t, t.TempDir(), clusters, nil)
				if code := Run(context.Background(), []string{"verify", "--clusters-file", file, "--resource", "ks/app"}, f.env()); code != 2 {
					t.Fatalf("Run() = %d, want 2\n%s", code, f.stderr.String())
				}
				for _, l := range strings.Split(f.stderr.String(), "\n") {
					if strings.HasPrefix(l, "app-status verify: ") {
						got = append(got, l)
					}
				}
				file = filepath.Clean(file)
				want = []string{
					`app-status verify: ` + file + ` line 1: "staging": ` + help,
					`app-status verify: ` + file + ` line 2: "prod=bogus:x": unknown source "bogus:"; ` + help,
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the bad lines' errors (-want +got):\n%s\nstdout:\n%s\nstderr:\n%s", diff, f.stdout.String(), f.stderr.String())
			}
		})
	}
}
