package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/filecommand"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// TestRepositoryExecPluginInCI (attacker): a file: kubeconfig in the clone, which a pull request
// can change, has an exec credential plugin. In a CI job (GitLab, Azure Pipelines, Jenkins, the
// Tekton Task, GitHub Actions, the action) it does not run: the cluster is InvalidConfig saying why and how
// to opt in. With --allow-exec (the allow-exec input), an installed program (by its absolute path, outside the clone)
// runs and the cluster is verified; a shell or a relative path is refused all the same, and
// none of them ran. At a terminal the plugin runs as kubectl would run it.
func TestRepositoryExecPluginInCI(t *testing.T) {
	const rev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	resources, objects := fakeapi.App("app", rev, 3)
	// Over TLS: client-go sends no credentials, nor runs a plugin, over plain HTTP.
	healthy := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, TLS: &tls.Config{MinVersion: tls.VersionTLS12}})
	t.Cleanup(healthy.Close)

	// The clone, the job's working folder, holds the kubeconfig (and a copy of the plugin, for
	// the relative command); the plugin is installed outside it. Each run of the plugin leaves
	// a line in ran.
	clone, tools, reports := t.TempDir(), t.TempDir(), t.TempDir()
	t.Chdir(clone)
	ran := filepath.Join(tools, "ran")
	plugin := fmt.Sprintf("#!/bin/sh\necho run >> %q\n"+
		`echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"exec-tok-0123456789"}}'`+"\n", ran)
	for _, p := range []string{filepath.Join(tools, "get-token"), filepath.Join(clone, "kc", "get-token")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(plugin), 0o755); err != nil { //nolint:gosec // a test's plugin
			t.Fatal(err)
		}
	}
	kubeconfig := func(command string, args ...string) string {
		a, _ := json.Marshal(args)
		return fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]\n"+
			"users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: %q, args: %s, interactiveMode: Never}}}]\n"+
			"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", healthy.URL(), command, a)
	}
	// The kubeconfigs, each with an argument of its own (client-go keeps a plugin's
	// credentials for the process, by its exec configuration).
	const (
		installed = "an installed plugin"
		shell     = "a shell"
		relative  = "a relative command"
	)
	kubeconfigs := map[string]func(run string) string{
		installed: func(run string) string { return kubeconfig(filepath.Join(tools, "get-token"), run) },
		shell:     func(run string) string { return kubeconfig("/bin/sh", "-c", filepath.Join(tools, "get-token"), run) },
		relative:  func(run string) string { return kubeconfig("./get-token", run) },
	}

	modes := map[string]struct {
		vars map[string]string
		args []string
	}{
		"GitLab":          {vars: map[string]string{"GITLAB_CI": "true", "CI": "true"}},
		"Azure Pipelines": {vars: map[string]string{"TF_BUILD": "True"}},
		"Jenkins":         {vars: map[string]string{"JENKINS_URL": "https://jenkins.example.com/"}},
		"AWS CodeBuild":   {vars: map[string]string{"CODEBUILD_BUILD_ID": "app:0b1c"}},
		"TeamCity":        {vars: map[string]string{"TEAMCITY_VERSION": "2025.11"}},
		"Bamboo":          {vars: map[string]string{"bamboo_buildKey": "APP-STATUS-JOB1"}},
		"Woodpecker":      {vars: map[string]string{"CI": "woodpecker"}},
		"CI=false":        {vars: map[string]string{"CI": "false"}},
		"Tekton":          {args: []string{"--tekton-results", reports}},
		"GitHub Actions":  {vars: map[string]string{"GITHUB_ACTIONS": "true"}},
		"a terminal":      {},
		"the action":      {},
	}
	// outcome is what a run says of the cluster: its verdict, which refusal its message is
	// (ci, shell, relative or none), and whether the plugin ran.
	type outcome struct {
		Verdict, Refusal string
		Ran              bool
	}
	var (
		refusedInCI = outcome{Verdict: "InvalidConfig", Refusal: "ci"}
		verified    = outcome{Verdict: "Current", Ran: true}
		shellFound  = outcome{Verdict: "InvalidConfig", Refusal: "shell"}
		relFound    = outcome{Verdict: "InvalidConfig", Refusal: "relative"}
	)
	tests := []struct {
		mode       string
		kubeconfig string
		allow      bool
		want       outcome
	}{
		{mode: "GitLab", kubeconfig: installed, want: refusedInCI},
		{mode: "Azure Pipelines", kubeconfig: installed, want: refusedInCI},
		{mode: "Jenkins", kubeconfig: installed, want: refusedInCI},
		{mode: "AWS CodeBuild", kubeconfig: installed, want: refusedInCI},
		{mode: "TeamCity", kubeconfig: installed, want: refusedInCI},
		{mode: "Bamboo", kubeconfig: installed, want: refusedInCI},
		{mode: "Woodpecker", kubeconfig: installed, want: refusedInCI},
		{mode: "CI=false", kubeconfig: installed, want: verified},
		{mode: "Tekton", kubeconfig: installed, want: refusedInCI},
		{mode: "GitHub Actions", kubeconfig: installed, want: refusedInCI},
		{mode: "GitLab", kubeconfig: installed, allow: true, want: verified},
		{mode: "Azure Pipelines", kubeconfig: installed, allow: true, want: verified},
		{mode: "Jenkins", kubeconfig: installed, allow: true, want: verified},
		{mode: "Tekton", kubeconfig: installed, allow: true, want: verified},
		{mode: "GitLab", kubeconfig: shell, allow: true, want: shellFound},
		{mode: "Azure Pipelines", kubeconfig: shell, allow: true, want: shellFound},
		{mode: "Jenkins", kubeconfig: shell, allow: true, want: shellFound},
		{mode: "Tekton", kubeconfig: shell, allow: true, want: shellFound},
		{mode: "GitLab", kubeconfig: relative, allow: true, want: relFound},
		{mode: "Azure Pipelines", kubeconfig: relative, allow: true, want: relFound},
		{mode: "Jenkins", kubeconfig: relative, allow: true, want: relFound},
		{mode: "Tekton", kubeconfig: relative, allow: true, want: relFound},
		{mode: "the action", kubeconfig: installed, want: refusedInCI},
		{mode: "the action", kubeconfig: installed, allow: true, want: verified},
		{mode: "the action", kubeconfig: shell, allow: true, want: shellFound},
		{mode: "the action", kubeconfig: relative, allow: true, want: relFound},
		{mode: "a terminal", kubeconfig: installed, want: verified},
		{mode: "a terminal", kubeconfig: shell, want: shellFound},
		{mode: "a terminal", kubeconfig: relative, want: relFound},
	}
	for i, tt := range tests {
		name := tt.mode + ", " + tt.kubeconfig
		if tt.allow {
			name += ", --allow-exec"
		}
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(clone, "kc", "config.yaml"), []byte(kubeconfigs[tt.kubeconfig](fmt.Sprint(i))), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(clone, "clusters.txt"), []byte("c=file:kc/config.yaml\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(ran); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			mode := modes[tt.mode]
			f := newFakeEnv(t, nil)
			delete(f.vars, "GITHUB_ACTIONS")
			maps.Copy(f.vars, mode.vars)
			var code int
			var results []struct{ Cluster, Verdict, Message string }
			if tt.mode == "the action" {
				maps.Copy(f.vars, map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": clone, "INPUT_CLUSTERS": "c=file:kc/config.yaml",
					"INPUT_RESOURCE": "ks/app", "INPUT_REVISION": "a1b2c3d4", "INPUT_TIMEOUT": "20s", "INPUT_ALLOW-EXEC": fmt.Sprint(tt.allow)})
				code = Run(context.Background(), []string{"action"}, f.env())
				outputs, err := filecommand.ParseOutputs(f.file(t, f.output))
				if err != nil {
					t.Fatalf("Run() = %d, and the outputs: %v\n%s", code, err, f.stdout.String())
				}
				if err := json.Unmarshal([]byte(outputs["results"]), &results); err != nil {
					t.Fatalf("Run() = %d, and the results output: %v\n%s", code, err, f.stdout.String())
				}
			} else {
				out := filepath.Join(reports, "report.json")
				args := []string{"verify", "--quiet", "--clusters-file", "clusters.txt", "--resource", "ks/app", "--revision", "a1b2c3d4",
					"--timeout", "20s", "--json-file", out, "--dotenv-file", filepath.Join(reports, "a.env"),
					"--junit-file", filepath.Join(reports, "junit.xml"), "--summary-file", filepath.Join(reports, "summary.md")}
				args = append(args, mode.args...)
				if tt.allow {
					args = append(args, "--allow-exec")
				}
				code = Run(context.Background(), args, f.env())
				var doc struct {
					Results []struct{ Cluster, Verdict, Message string }
				}
				data, err := os.ReadFile(out)
				if err != nil {
					t.Fatalf("Run() = %d, and --json-file: %v\n%s", code, err, f.stderr.String())
				}
				if err := json.Unmarshal(data, &doc); err != nil {
					t.Fatalf("--json-file: %v", err)
				}
				results = doc.Results
			}
			if len(results) != 1 {
				t.Fatalf("Run() = %d with %d results, want 1", code, len(results))
			}
			r := results[0]
			got := outcome{Verdict: r.Verdict}
			for phrase, refusal := range map[string]string{"which is not run in a CI job": "ci", "a shell or interpreter": "shell", "by a relative path": "relative"} {
				if strings.Contains(r.Message, phrase) {
					got.Refusal = refusal
				}
			}
			_, err := os.Stat(ran)
			got.Ran = err == nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("the cluster (-want +got):\n%s\nmessage: %s", diff, r.Message)
			}
			if wantCode := map[bool]int{true: 0, false: 1}[tt.want.Verdict == "Current"]; code != wantCode {
				t.Errorf("Run() = %d, want %d", code, wantCode)
			}
			if got.Refusal != "" && !strings.Contains(r.Message, `the kubeconfig's user "u" of file:kc/config.yaml`) {
				t.Errorf("the message names no kubeconfig and user: %s", r.Message)
			}
			optIn := "pass --allow-exec"
			if tt.mode == "the action" {
				optIn = "set the allow-exec input to true"
			}
			if got.Refusal == "ci" && !strings.Contains(r.Message, optIn) {
				t.Errorf("the message does not say how to opt in: %s", r.Message)
			}
		})
	}
}
