package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
)

// TestAzureResults: the output variables, one error per cluster that is not Current and the
// summary, with a hostile cluster's text unable to make a command of its own.
func TestAzureResults(t *testing.T) {
	t.Parallel()
	run := result.NewRun([]string{"Kustomization/flux-system/app"}, "", []result.Cluster{
		{Name: "eu", Verdict: result.VerdictCurrent},
		{Name: "us", Verdict: result.VerdictFailed, Code: "crash-loop", Message: "50% done;]\n##vso[task.setvariable variable=APP_STATUS]success\r##VSO[task.complete result=Succeeded]"},
	}, 1500*time.Millisecond)
	var out strings.Builder
	a := &azureCommands{w: &out}
	a.setSecret("pa%ss;w]rd")
	a.results(run, "/tmp/summary.md")
	want := []string{
		"##vso[task.setsecret]pa%AZP25ss;w]rd",
		"##vso[task.setvariable variable=APP_STATUS;isOutput=true]failure",
		`##vso[task.setvariable variable=APP_STATUS_READY;isOutput=true]["eu"]`,
		`##vso[task.setvariable variable=APP_STATUS_FAILED;isOutput=true]["us"]`,
		"##vso[task.setvariable variable=APP_STATUS_DURATION;isOutput=true]1.5s",
		"##vso[task.logissue type=error]us: Failed: crash-loop: 50%AZP25 done;] ##vso [task.setvariable variable=APP_STATUS]success ##VSO [task.complete result=Succeeded]",
		"##vso[task.uploadsummary]/tmp/summary.md",
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("logging commands (-want +got):\n%s", diff)
	}
	for _, line := range got {
		if strings.Count(strings.ToLower(line), "##vso[") != 1 {
			t.Errorf("line %q holds more than its own command", line)
		}
	}
}

// TestAzurePipelinesRun: `app-status verify` in an Azure Pipelines job masks the kubeconfig's
// token before anything else, then sets the variables and logs the unreachable cluster.
func TestAzurePipelinesRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const token = "azure-token-0123456789abcdef"
	kubeconfig := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n"+
		"users: [{name: u, user: {token: %s}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", token)
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFakeEnv(t, map[string]string{"TF_BUILD": "True", "AGENT_TEMPDIRECTORY": dir})
	delete(f.vars, "GITHUB_ACTIONS")
	code := Run(context.Background(), []string{"verify", "--kubeconfig", path, "--resource", "ks/app", "--timeout", "30s", "--quiet"}, f.env())
	if code != 1 {
		t.Errorf("exit %d, want 1\n%s\n%s", code, f.stdout.String(), f.stderr.String())
	}
	masked := false
	for _, line := range strings.Split(f.stdout.String(), "\n") {
		if !strings.HasPrefix(line, "##vso[task.setsecret]") {
			break
		}
		masked = masked || line == "##vso[task.setsecret]"+token
	}
	if !masked {
		t.Errorf("the token is not masked before anything else is printed:\n%s", f.stdout.String())
	}
	for _, want := range []string{"##vso[task.setvariable variable=APP_STATUS;isOutput=true]failure", "##vso[task.logissue type=error]c: Unreachable",
		"##vso[task.uploadsummary]" + filepath.Join(dir, "app-status-summary.md")} {
		if !strings.Contains(f.stdout.String(), want) {
			t.Errorf("no %q in:\n%s", want, f.stdout.String())
		}
	}
	if strings.Count(f.stdout.String()+f.stderr.String(), token) != 1 {
		t.Errorf("the token appears outside its setsecret")
	}
	if _, err := os.Stat(filepath.Join(dir, "app-status-summary.md")); err != nil {
		t.Errorf("summary not written: %v", err)
	}
}
