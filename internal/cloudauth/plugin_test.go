package cloudauth_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/org/app-status-action/internal/cloudauth"
	"github.com/org/app-status-action/internal/result"
)

// TestRecognise: the exec plugins as the clouds' CLIs write them are recognised, others are
// not.
func TestRecognise(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		exec *clientcmdapi.ExecConfig
		want string // "Cloud: Command", or "" for none
	}{
		{"aws eks update-kubeconfig", eksExec(), "EKS: aws eks get-token"},
		{"aws with --role-arn and a profile in env", &clientcmdapi.ExecConfig{Command: "aws", Args: []string{"--region", "us-east-1", "eks", "get-token", "--cluster-name", "prod", "--output", "json", "--role-arn", "arn:aws:iam::1:role/r"}, Env: []clientcmdapi.ExecEnvVar{{Name: "AWS_PROFILE", Value: "ci"}}}, "EKS: aws eks get-token"},
		{"aws from a path", &clientcmdapi.ExecConfig{Command: "/usr/local/bin/aws", Args: []string{"eks", "get-token", "--cluster-id", "0f2e"}}, "EKS: aws eks get-token"},
		{"aws-iam-authenticator", &clientcmdapi.ExecConfig{Command: "aws-iam-authenticator", Args: []string{"token", "-i", "prod"}}, "EKS: aws-iam-authenticator token"},
		{"gke-gcloud-auth-plugin", gkeExec(), "GKE: gke-gcloud-auth-plugin"},
		{"kubelogin devicecode", aksExec("devicecode", "t"), "AKS: kubelogin get-token"},
		{"kubelogin workloadidentity", aksExec("workloadidentity", ""), "AKS: kubelogin get-token"},
		{"aws, another command", &clientcmdapi.ExecConfig{Command: "aws", Args: []string{"sts", "get-caller-identity"}}, ""},
		{"kubelogin, another command", &clientcmdapi.ExecConfig{Command: "kubelogin", Args: []string{"convert-kubeconfig"}}, ""},
		{"doctl", &clientcmdapi.ExecConfig{Command: "doctl", Args: []string{"kubernetes", "cluster", "kubeconfig", "exec-credential"}}, ""},
		{"kubectl oidc-login", &clientcmdapi.ExecConfig{Command: "kubectl", Args: []string{"oidc-login", "get-token"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ""
			if p := cloudauth.Recognise(tt.exec); p != nil {
				got = p.Cloud + ": " + p.Command
			}
			if got != tt.want {
				t.Errorf("Recognise() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestNewSourceInvalid: what the environment lacks, or an argument the provider does not
// support, is an InvalidConfig message that names the provider and the variable, and links the
// credentials page; nothing is contacted, and no secret is quoted.
func TestNewSourceInvalid(t *testing.T) {
	t.Parallel()
	const see = "; see " + cloudauth.DocsURL
	tests := []struct {
		name string
		exec *clientcmdapi.ExecConfig
		vars map[string]string
		want string
	}{{
		name: "EKS without credentials",
		exec: eksExec(),
		want: "EKS credentials (aws eks get-token, built in): no AWS credentials in the environment: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (aws-actions/configure-aws-credentials exports them), AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE, or AWS_PROFILE with a shared config file" + see,
	}, {
		name: "EKS with half a key",
		exec: eksExec(),
		vars: map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"},
		want: "EKS credentials (aws eks get-token, built in): AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not: set both (aws-actions/configure-aws-credentials does)" + see,
	}, {
		name: "EKS with a role but no web identity token",
		exec: eksExec(),
		vars: map[string]string{"AWS_ROLE_ARN": "arn:aws:iam::1:role/r"},
		want: "EKS credentials (aws eks get-token, built in): AWS_ROLE_ARN is set but AWS_WEB_IDENTITY_TOKEN_FILE is not: set both for web identity, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (aws-actions/configure-aws-credentials exports them), AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE, or AWS_PROFILE with a shared config file" + see,
	}, {
		name: "EKS with an option the provider does not know; its value is not quoted",
		exec: &clientcmdapi.ExecConfig{Command: "aws", Args: []string{"eks", "get-token", "--cluster-name", "prod", "--endpoint-url", "https://secret.example.com"}},
		vars: map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG"},
		want: "EKS credentials (aws eks get-token, built in): the option --endpoint-url is not supported by the built-in provider (remove it from the kubeconfig's args)" + see,
	}, {
		name: "aws-iam-authenticator without a cluster",
		exec: &clientcmdapi.ExecConfig{Command: "aws-iam-authenticator", Args: []string{"token"}},
		want: "EKS credentials (aws-iam-authenticator token, built in): aws-iam-authenticator token has no -i CLUSTER_ID" + see,
	}, {
		name: "GKE without credentials",
		exec: gkeExec(),
		want: "GKE credentials (gke-gcloud-auth-plugin, built in): no Google credentials in the environment: set GOOGLE_APPLICATION_CREDENTIALS to a credentials file (google-github-actions/auth writes one, for workload identity federation or a service account key)" + see,
	}, {
		name: "GKE with a credentials file that is not there",
		exec: gkeExec(),
		vars: map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": "/home/runner/work/app/app/gha-creds-1.json", "GITHUB_WORKSPACE": "/github/workspace"},
		want: "GKE credentials (gke-gcloud-auth-plugin, built in): GOOGLE_APPLICATION_CREDENTIALS names /home/runner/work/app/app/gha-creds-1.json, which does not exist here: run google-github-actions/auth before this step (it writes the file into the workspace)" + see,
	}, {
		name: "AKS devicecode",
		exec: aksExec("devicecode", "t"),
		want: "AKS credentials (kubelogin get-token, built in): kubelogin --login devicecode needs a person or the Azure CLI's login, which a workflow step in a container does not have: set AZURE_CLIENT_ID and AZURE_TENANT_ID to the app registration or managed identity with a federated credential for the workflow, and give the job `permissions: id-token: write` (the app azure/login signs in with; the kubeconfig then needs no change), or convert the kubeconfig with kubelogin convert-kubeconfig -l workloadidentity; or use a service principal (AAD_LOGIN_METHOD=spn with AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_CLIENT_SECRET)" + see,
	}, {
		name: "AKS workload identity without a client ID",
		exec: aksExec("workloadidentity", ""),
		vars: map[string]string{"AZURE_TENANT_ID": "t"},
		want: "AKS credentials (kubelogin get-token, built in): AZURE_CLIENT_ID is not set: set AZURE_CLIENT_ID and AZURE_TENANT_ID to the app registration or managed identity with a federated credential for the workflow, and give the job `permissions: id-token: write`" + see,
	}, {
		name: "AKS workload identity without a federated token",
		exec: aksExec("workloadidentity", ""),
		vars: map[string]string{"AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c"},
		want: "AKS credentials (kubelogin get-token, built in): no federated token: give the job `permissions: id-token: write` (GitHub's OIDC token), or set AZURE_FEDERATED_TOKEN_FILE" + see,
	}, {
		name: "a kubeconfig's exec env may not set an STS endpoint",
		exec: withEnv(eksExec(), "AWS_ENDPOINT_URL_STS", "http://127.0.0.1:9/collect"),
		vars: map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG", "AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.githubusercontent.com/x", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "secret-oidc"},
		want: "EKS" + " credentials (aws eks get-token, built in): " + "the kubeconfig's exec env sets AWS_ENDPOINT_URL_STS, which a kubeconfig may not: it can come from the repository, so from a pull request, and the built-in providers let it choose only an account, a role and a region, never where credentials are read from or sent to (files, endpoints, proxies); set AWS_ENDPOINT_URL_STS in the step's env: instead, or remove it" + see,
	}, {
		name: "a kubeconfig's exec env may not set a web identity token file",
		exec: withEnv(eksExec(), "AWS_WEB_IDENTITY_TOKEN_FILE", "/proc/self/environ"),
		vars: map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG", "AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.githubusercontent.com/x", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "secret-oidc"},
		want: "EKS" + " credentials (aws eks get-token, built in): " + "the kubeconfig's exec env sets AWS_WEB_IDENTITY_TOKEN_FILE, which a kubeconfig may not: it can come from the repository, so from a pull request, and the built-in providers let it choose only an account, a role and a region, never where credentials are read from or sent to (files, endpoints, proxies); set AWS_WEB_IDENTITY_TOKEN_FILE in the step's env: instead, or remove it" + see,
	}, {
		name: "a kubeconfig's exec env may not set a Google credentials file",
		exec: withEnv(gkeExec(), "GOOGLE_APPLICATION_CREDENTIALS", "/tmp/evil.json"),
		vars: map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG", "AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.githubusercontent.com/x", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "secret-oidc"},
		want: "GKE" + " credentials (gke-gcloud-auth-plugin, built in): " + "the kubeconfig's exec env sets GOOGLE_APPLICATION_CREDENTIALS, which a kubeconfig may not: it can come from the repository, so from a pull request, and the built-in providers let it choose only an account, a role and a region, never where credentials are read from or sent to (files, endpoints, proxies); set GOOGLE_APPLICATION_CREDENTIALS in the step's env: instead, or remove it" + see,
	}, {
		name: "a kubeconfig's exec env may not set the OIDC token request URL",
		exec: withEnv(aksExec("workloadidentity", ""), "ACTIONS_ID_TOKEN_REQUEST_URL", "http://127.0.0.1:9/"),
		vars: map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG", "AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.githubusercontent.com/x", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "secret-oidc"},
		want: "AKS" + " credentials (kubelogin get-token, built in): " + "the kubeconfig's exec env sets ACTIONS_ID_TOKEN_REQUEST_URL, which a kubeconfig may not: it can come from the repository, so from a pull request, and the built-in providers let it choose only an account, a role and a region, never where credentials are read from or sent to (files, endpoints, proxies); set ACTIONS_ID_TOKEN_REQUEST_URL in the step's env: instead, or remove it" + see,
	}, {
		name: "a kubeconfig's exec env may not set a proxy",
		exec: withEnv(aksExec("workloadidentity", ""), "HTTPS_PROXY", "http://127.0.0.1:9"),
		vars: map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG", "AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.githubusercontent.com/x", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "secret-oidc"},
		want: "AKS" + " credentials (kubelogin get-token, built in): " + "the kubeconfig's exec env sets HTTPS_PROXY, which a kubeconfig may not: it can come from the repository, so from a pull request, and the built-in providers let it choose only an account, a role and a region, never where credentials are read from or sent to (files, endpoints, proxies); set HTTPS_PROXY in the step's env: instead, or remove it" + see,
	}, {
		name: "a kubeconfig's exec env may not set an Entra authority",
		exec: withEnv(aksExec("workloadidentity", ""), "AZURE_AUTHORITY_HOST", "https://127.0.0.1:9/"),
		vars: map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG", "AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.githubusercontent.com/x", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "secret-oidc"},
		want: "AKS" + " credentials (kubelogin get-token, built in): " + "the kubeconfig's exec env sets AZURE_AUTHORITY_HOST, which a kubeconfig may not: it can come from the repository, so from a pull request, and the built-in providers let it choose only an account, a role and a region, never where credentials are read from or sent to (files, endpoints, proxies); set AZURE_AUTHORITY_HOST in the step's env: instead, or remove it" + see,
	}, {
		name: "kubelogin may not send credentials to another authority",
		exec: &clientcmdapi.ExecConfig{Command: "kubelogin", Args: []string{"get-token", "--login", "workloadidentity", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630", "--authority-host", "https://127.0.0.1:9/"}},
		vars: map[string]string{"AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.githubusercontent.com/x", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "secret-oidc"},
		want: "AKS credentials (kubelogin get-token, built in): kubelogin --authority-host is not a Microsoft Entra ID authority (https://login.microsoftonline.com, https://login.chinacloudapi.cn, https://login.microsoftonline.us): the kubeconfig may not choose where credentials are sent; set AZURE_AUTHORITY_HOST in the step's env: for another one" + see,
	}, {
		name: "an EKS region that is more than a region",
		exec: &clientcmdapi.ExecConfig{Command: "aws", Args: []string{"--region", "x.127.0.0.1.nip.io/", "eks", "get-token", "--cluster-name", "prod"}},
		vars: map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG"},
		want: "EKS credentials (aws eks get-token, built in): the AWS region is not a region name (such as eu-west-1): it names the STS endpoint credentials are sent to" + see,
	}, {
		name: "AKS proof-of-possession",
		exec: &clientcmdapi.ExecConfig{Command: "kubelogin", Args: []string{"get-token", "--login", "spn", "--server-id", "x", "--pop-enabled", "--pop-claims", "u=/ARM/ID"}},
		want: "AKS credentials (kubelogin get-token, built in): the option --pop-enabled (proof-of-possession tokens) is not supported by the built-in provider" + see,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := cloudauth.Recognise(tt.exec)
			if p == nil {
				t.Fatal("Recognise() = nil")
			}
			_, err := p.NewSource(cloudauth.Options{
				Getenv:   func(k string) string { return tt.vars[k] },
				ReadFile: func(name string) ([]byte, error) { return nil, errNotExist },
			})
			var e *cloudauth.Error
			if !errors.As(err, &e) {
				t.Fatalf("NewSource() error = %v, want a *cloudauth.Error", err)
			}
			if e.Verdict != result.VerdictInvalidConfig {
				t.Errorf("verdict = %s, want InvalidConfig", e.Verdict)
			}
			if diff := cmp.Diff(tt.want, e.Message); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			for _, v := range tt.vars {
				if strings.Contains(v, "secret") || strings.Contains(v, "wJalr") {
					if strings.Contains(e.Message, v) {
						t.Errorf("the message quotes a secret: %s", e.Message)
					}
				}
			}
		})
	}
}

var errNotExist = fs.ErrNotExist

// withEnv is exec with one more env entry, as a kubeconfig may carry it.
func withEnv(exec *clientcmdapi.ExecConfig, name, value string) *clientcmdapi.ExecConfig {
	exec.Env = append(exec.Env, clientcmdapi.ExecEnvVar{Name: name, Value: value})
	return exec
}
