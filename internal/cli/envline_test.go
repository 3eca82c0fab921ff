package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/testing/cloudauthtest"
)

// TestClustersFileEnvLineInCI (attacker): a clusters file comes from the repository, so from a
// pull request, and a CI variable may hold what the pull request wrote (GitLab's
// CI_COMMIT_TITLE, Azure's BUILD_SOURCEVERSIONMESSAGE, Jenkins' CHANGE_TITLE). A line
// NAME=env:CI_COMMIT_TITLE whose commit title is a base64 kubeconfig is then a repository
// kubeconfig: its shell plugin is InvalidConfig and never runs, and a built-in EKS user whose
// server is neither the cloud's nor allowed is InvalidConfig with no request to the server
// carrying a token. The runs pass --builtin-auth, so that the built-in provider serves the EKS
// user whether or not the aws CLI is installed here.
func TestClustersFileEnvLineInCI(t *testing.T) {
	aws := cloudauthtest.NewAWS()
	t.Cleanup(aws.Close)
	key := aws.NewKey("arn:aws:sts::111122223333:assumed-role/deployer/GitLab", true)
	var mu sync.Mutex
	authorized := 0
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			mu.Lock()
			authorized++
			mu.Unlock()
		}
		http.Error(w, "{}", http.StatusUnauthorized)
	}))
	t.Cleanup(server.Close)
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw}))

	clone, reports := t.TempDir(), t.TempDir()
	t.Chdir(clone)
	ran := filepath.Join(reports, "ran")
	kubeconfig := func(exec string) string {
		return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "apiVersion: v1\nkind: Config\n"+
			"clusters: [{name: c, cluster: {server: %q, certificate-authority-data: %s}}]\n"+
			"users: [{name: u, user: {exec: %s}}]\n"+
			"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", server.URL, ca, exec))
	}
	shell := kubeconfig(fmt.Sprintf(`{apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, interactiveMode: Never, args: [-c, %q]}`,
		fmt.Sprintf(`echo run >> %s; echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"exec-tok-0123456789"}}'`, ran)))
	eks := kubeconfig(`{apiVersion: client.authentication.k8s.io/v1beta1, command: aws, args: [--region, eu-west-1, eks, get-token, --cluster-name, prod]}`)

	modes := map[string]map[string]string{
		"GitLab":          {"GITLAB_CI": "true", "CI": "true"},
		"Azure Pipelines": {"TF_BUILD": "True"},
		"Jenkins":         {"JENKINS_URL": "https://jenkins.example.com/"},
	}
	pulls := map[string]string{"GitLab": "CI_COMMIT_TITLE", "Azure Pipelines": "BUILD_SOURCEVERSIONMESSAGE", "Jenkins": "CHANGE_TITLE"}
	type outcome struct {
		Verdict    string
		Ran        bool
		Authorized int
	}
	tests := []struct {
		mode, user, kubeconfig string
		says                   string
	}{
		{mode: "GitLab", user: "a shell plugin", kubeconfig: shell, says: "a shell or interpreter"},
		{mode: "Azure Pipelines", user: "a shell plugin", kubeconfig: shell, says: "a shell or interpreter"},
		{mode: "Jenkins", user: "a shell plugin", kubeconfig: shell, says: "a shell or interpreter"},
		{mode: "GitLab", user: "an EKS user", kubeconfig: eks, says: "never chooses where the job's EKS token goes"},
		{mode: "Azure Pipelines", user: "an EKS user", kubeconfig: eks, says: "never chooses where the job's EKS token goes"},
		{mode: "Jenkins", user: "an EKS user", kubeconfig: eks, says: "never chooses where the job's EKS token goes"},
	}
	for _, tt := range tests {
		t.Run(tt.mode+", "+tt.user, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(clone, "clusters.txt"), []byte("c=env:"+pulls[tt.mode]+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(ran); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			mu.Lock()
			authorized = 0
			mu.Unlock()
			f := newFakeEnv(t, nil)
			delete(f.vars, "GITHUB_ACTIONS")
			maps.Copy(f.vars, modes[tt.mode])
			maps.Copy(f.vars, map[string]string{pulls[tt.mode]: tt.kubeconfig,
				"AWS_ACCESS_KEY_ID": key.AccessKeyID, "AWS_SECRET_ACCESS_KEY": key.SecretAccessKey, "AWS_SESSION_TOKEN": key.SessionToken})
			out := filepath.Join(reports, "report.json")
			code := Run(context.Background(), []string{"verify", "--quiet", "--clusters-file", "clusters.txt", "--resource", "ks/app", "--revision", "a1b2c3d4",
				"--timeout", "20s", "--builtin-auth", "--json-file", out, "--dotenv-file", filepath.Join(reports, "a.env"),
				"--junit-file", filepath.Join(reports, "junit.xml"), "--summary-file", filepath.Join(reports, "summary.md")}, f.env())
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
			if len(doc.Results) != 1 {
				t.Fatalf("Run() = %d with %d results, want 1", code, len(doc.Results))
			}
			r := doc.Results[0]
			_, err = os.Stat(ran)
			mu.Lock()
			got := outcome{Verdict: r.Verdict, Ran: err == nil, Authorized: authorized}
			mu.Unlock()
			if diff := cmp.Diff(outcome{Verdict: "InvalidConfig"}, got); diff != "" {
				t.Errorf("the cluster (-want +got):\n%s\nmessage: %s", diff, r.Message)
			}
			if !strings.Contains(r.Message, tt.says) || !strings.Contains(r.Message, "env:"+pulls[tt.mode]) {
				t.Errorf("message = %s\nwant it to say %q and name env:%s", r.Message, tt.says, pulls[tt.mode])
			}
			if code != 1 {
				t.Errorf("Run() = %d, want 1", code)
			}
		})
	}
}
