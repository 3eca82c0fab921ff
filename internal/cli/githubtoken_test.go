package cli

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/filecommand"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/testing/fakegithub"
)

// TestGitHubTokenNeverPrinted: the GitHub token the publishing features use (deployments,
// commit statuses, the pull-request comment) is in nothing the step writes, in no form (as it
// is, base64, in a basic-auth pair): not the log on stdout and stderr, the job summary, the
// outputs, the report file or the JUnit report, whether GitHub takes the writes, refuses them
// (403) or refuses the token itself (401). Its one appearance is the step's own ::add-mask::
// command, which the runner takes and never shows.
func TestGitHubTokenNeverPrinted(t *testing.T) {
	t.Parallel()
	const (
		rev    = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
		commit = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
		token  = "ghs_tokenNeverPrinted0123456789abcdef"
	)
	resources, objects := fakeapi.App("app", rev, 3)
	api := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(api.Close)
	kubeconfig := strings.Replace(tokenKubeconfig, "https://127.0.0.1:1", api.URL(), 1)
	forms := []string{token, base64.StdEncoding.EncodeToString([]byte(token)), base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token)),
		base64.StdEncoding.EncodeToString([]byte(":" + token)), token[4:20]}
	tests := []struct {
		name  string
		merge bool
		gh    fakegithub.Options
	}{
		{name: "verify, GitHub takes the writes", gh: fakegithub.Options{Token: token}},
		{name: "merge, GitHub takes the writes", merge: true, gh: fakegithub.Options{Token: token}},
		{name: "merge, GitHub refuses the writes (403)", merge: true, gh: fakegithub.Options{Token: token, DenyDeployments: true, DenyPullRequests: true, DenyStatuses: true}},
		{name: "merge, GitHub refuses the token (401)", merge: true, gh: fakegithub.Options{Token: "ghs_another_token_0123456789"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.gh.Owner, tt.gh.Repo, tt.gh.Pulls = "org", "app", map[string][]int{commit: {12}}
			gh := fakegithub.Start(t, tt.gh)
			dir, temp := t.TempDir(), t.TempDir()
			vars := map[string]string{
				"INPUT_RESOURCE": "ks/app", "INPUT_REVISION": rev, "INPUT_TIMEOUT": "20s", "INPUT_GITHUB-TOKEN": token,
				"INPUT_DEPLOYMENTS": "true", "INPUT_COMMIT-STATUS": "true", "INPUT_PR-COMMENT": "true",
				"GITHUB_REPOSITORY": "org/app", "GITHUB_RUN_ID": "7001", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_SHA": commit,
				"GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": gh.URL, "GITHUB_GRAPHQL_URL": gh.URL + "/graphql",
				"GITHUB_EVENT_NAME": "push", "RUNNER_TEMP": temp, "INPUT_JUNIT-FILE": filepath.Join(temp, "junit.xml"),
			}
			if tt.merge {
				leg := result.NewRun([]string{"Kustomization/flux-system/app"}, rev, []result.Cluster{{Name: "prod", Verdict: result.VerdictCurrent}}, time.Second)
				leg.Origin = &result.Origin{CI: "github", Repository: "org/app", RunID: "7001", Attempt: 1}
				writeReport(t, filepath.Join(dir, "leg.json"), leg)
				vars["INPUT_MERGE"] = filepath.Join(dir, "*.json")
			} else {
				vars["INPUT_CLUSTERS"], vars["KC"] = "prod=env:KC", kubeconfig
			}
			f := newFakeEnv(t, vars)
			if code := Run(context.Background(), []string{"action"}, f.env()); code != 0 {
				t.Errorf("Run() = %d, want 0 (publishing never changes the verdict):\n%s", code, f.stdout.String())
			}
			written := map[string]string{"stdout": f.stdout.String(), "stderr": f.stderr.String(), "the summary": f.file(t, f.summary), "the outputs": f.file(t, f.output)}
			outputs, err := filecommand.ParseOutputs(written["the outputs"])
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"report-file", "junit-file"} {
				data, err := os.ReadFile(outputs[name])
				if err != nil {
					t.Fatalf("output %s: %v", name, err)
				}
				written[name] = string(data)
			}
			if !strings.Contains(written["stdout"], "::add-mask::"+token+"\n") {
				t.Errorf("the token is not masked first:\n%s", written["stdout"])
			}
			written["stdout"] = strings.ReplaceAll(written["stdout"], "::add-mask::"+token+"\n", "")
			for where, text := range written {
				for _, form := range forms {
					if strings.Contains(text, form) {
						t.Errorf("%s holds the token (%q):\n%s", where, form, text)
					}
				}
			}
			// The features ran: GitHub got their requests, and took them when it could.
			takes := tt.gh.Token == token && !tt.gh.DenyDeployments
			if got := []any{len(gh.Calls()) > 0, len(gh.Deployments()) > 0, len(gh.Comments(12)) > 0}; fmt.Sprint(got) != fmt.Sprint([]any{true, takes, takes}) {
				t.Errorf("[requests, deployments, comments] = %v, want [true %t %t]: the test proves less", got, takes, takes)
			}
		})
	}
}
