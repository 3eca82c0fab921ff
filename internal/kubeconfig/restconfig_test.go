package kubeconfig

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestRestConfig loads "c=file:kc/config.yaml" whose only context is "a", changed by each
// case, and checks the cluster's Invalid message or its rest.Config.
func TestRestConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		change      func(*clientcmdapi.Config)
		files       map[string]string
		path        []string // commands LookPath finds; nil: no LookPath (the action)
		wantInvalid string
		// want, when set, checks the rest.Config fields that matter; Host and BearerToken
		// default to the fixture's.
		want *rest.Config
		// wantSecret must be among Secrets.Values().
		wantSecret string
	}{{
		name:   "token and embedded CA",
		change: func(*clientcmdapi.Config) {},
		want:   &rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: []byte(fakeCA)}},
	}, {
		name:        "exec plugin",
		change:      func(c *clientcmdapi.Config) { c.AuthInfos["a"] = execUser() },
		wantInvalid: `the kubeconfig's user "a" needs the exec credential plugin "aws" (aws eks get-token), which this container does not have: pass a kubeconfig with a token instead, e.g. a ServiceAccount token (kubectl create token ...) or a short-lived token your workflow fetched in an earlier step (aws eks get-token --cluster-name NAME | jq -r .status.token)`,
		wantSecret:  "aws-" + marker + "-wJalrXUtnFEMI",
	}, {
		name: "gke plugin, absolute path",
		change: func(c *clientcmdapi.Config) {
			c.AuthInfos["a"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "/usr/lib/google-cloud-sdk/bin/gke-gcloud-auth-plugin"}}
		},
		wantInvalid: `the kubeconfig's user "a" needs the exec credential plugin "gke-gcloud-auth-plugin", which this container does not have: pass a kubeconfig with a token instead, e.g. a ServiceAccount token (kubectl create token ...) or a short-lived token your workflow fetched in an earlier step (gcloud auth print-access-token)`,
	}, {
		name: "kubelogin on a workstation without it",
		change: func(c *clientcmdapi.Config) {
			c.AuthInfos["a"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "kubelogin", Args: []string{"get-token", "--login", "azurecli", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"}}}
		},
		path:        []string{"aws"},
		wantInvalid: `the kubeconfig's user "a" needs the exec credential plugin "kubelogin" (kubelogin get-token), which is not installed here (not found in PATH): pass a kubeconfig with a token instead, e.g. a ServiceAccount token (kubectl create token ...) or a short-lived token your workflow fetched in an earlier step (az account get-access-token --resource 6dae42f8-4368-4678-94ff-3960e28e3630 --query accessToken -o tsv)`,
	}, {
		name:   "exec plugin found by LookPath",
		change: func(c *clientcmdapi.Config) { c.AuthInfos["a"] = execUser() },
		path:   []string{"aws"},
		want: &rest.Config{
			BearerToken:     "-",
			TLSClientConfig: rest.TLSClientConfig{CAData: []byte(fakeCA)},
			ExecProvider:    execUser().Exec,
		},
	}, {
		name: "exec plugin without a command",
		change: func(c *clientcmdapi.Config) {
			c.AuthInfos["a"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{}}
		},
		path:        []string{"aws"},
		wantInvalid: `the kubeconfig's user "a" has an exec credential plugin without a command: pass a kubeconfig with a token instead, e.g. a ServiceAccount token (kubectl create token ...) or a short-lived token your workflow fetched in an earlier step`,
	}, {
		name: "auth-provider",
		change: func(c *clientcmdapi.Config) {
			c.AuthInfos["a"] = &clientcmdapi.AuthInfo{AuthProvider: &clientcmdapi.AuthProviderConfig{
				Name:   "oidc",
				Config: map[string]string{"client-id": "kubernetes", "id-token": "idt-" + marker + "-eyJhbGciOi"},
			}}
		},
		wantInvalid: `the kubeconfig's user "a" needs the auth-provider "oidc", which this tool does not support: pass a kubeconfig with a token instead, e.g. a ServiceAccount token (kubectl create token ...) or a short-lived token your workflow fetched in an earlier step (the id-token your identity provider issued)`,
		wantSecret:  "idt-" + marker + "-eyJhbGciOi",
	}, {
		name: "missing CA file",
		change: func(c *clientcmdapi.Config) {
			c.Clusters["a"].CertificateAuthorityData = nil
			c.Clusters["a"].CertificateAuthority = "/home/me/.minikube/ca.crt"
		},
		wantInvalid: `the kubeconfig's cluster "a" refers to the file certificate-authority: /home/me/.minikube/ca.crt, which does not exist here: embed the data instead (certificate-authority-data), e.g. with kubectl config view --minify --flatten --raw, or --embed-certs when setting it`,
	}, {
		name: "CA, client certificate and key files next to the kubeconfig",
		change: func(c *clientcmdapi.Config) {
			c.Clusters["a"].CertificateAuthorityData = nil
			c.Clusters["a"].CertificateAuthority = "ca.crt"
			c.AuthInfos["a"] = &clientcmdapi.AuthInfo{ClientCertificate: "certs/client.crt", ClientKey: "/keys/client.key"}
		},
		files: map[string]string{"/ws/kc/ca.crt": fakeCA, "/ws/kc/certs/client.crt": fakeCert, "/keys/client.key": fakeKey},
		want: &rest.Config{
			BearerToken:     "-",
			TLSClientConfig: rest.TLSClientConfig{CAData: []byte(fakeCA), CertData: []byte(fakeCert), KeyData: []byte(fakeKey)},
		},
		wantSecret: "AwEHoUQD" + marker + "keyLineTwo0123456789QrStUv",
	}, {
		name:       "tokenFile",
		change:     func(c *clientcmdapi.Config) { c.AuthInfos["a"] = &clientcmdapi.AuthInfo{TokenFile: "token"} },
		files:      map[string]string{"/ws/kc/token": tokenFor("a") + "\n"},
		want:       &rest.Config{BearerTokenFile: "/ws/kc/token", TLSClientConfig: rest.TLSClientConfig{CAData: []byte(fakeCA)}},
		wantSecret: tokenFor("a"),
	}, {
		name:        "missing tokenFile",
		change:      func(c *clientcmdapi.Config) { c.AuthInfos["a"] = &clientcmdapi.AuthInfo{TokenFile: "/var/run/token"} },
		wantInvalid: `the kubeconfig's user "a" refers to the file tokenFile: /var/run/token, which does not exist here: put the token itself in the kubeconfig instead (token:)`,
	}, {
		name:        "no server, which client-go would default to localhost or KUBERNETES_MASTER",
		change:      func(c *clientcmdapi.Config) { c.Clusters["a"].Server = "" },
		wantInvalid: `the kubeconfig's cluster "a" has no server: set server: https://HOST:PORT`,
	}, {
		name:        "user not defined",
		change:      func(c *clientcmdapi.Config) { delete(c.AuthInfos, "a") },
		wantInvalid: `context "a" refers to user "a", which file:kc/config.yaml does not define`,
	}, {
		name:        "cluster not defined",
		change:      func(c *clientcmdapi.Config) { delete(c.Clusters, "a") },
		wantInvalid: `context "a" refers to cluster "a", which file:kc/config.yaml does not define`,
	}, {
		name: "validation by clientcmd, secrets redacted",
		change: func(c *clientcmdapi.Config) {
			c.Clusters["a"].ProxyURL = "ftp://proxy:px-" + marker + "-pass@proxy.example.com"
		},
		wantInvalid: `the kubeconfig cannot be used: invalid configuration: invalid 'proxy-url' "ftp://***@proxy.example.com" for cluster "a": unsupported scheme "ftp", must be http, https, or socks5`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := newConfig("a")
			tt.change(cfg)
			files := map[string]string{"/ws/kc/config.yaml": yamlOf(t, cfg)}
			for k, v := range tt.files {
				files[k] = v
			}
			env := fakeEnv{files: files, path: tt.path}
			clusters, secrets, err := Load(Input{Clusters: "c=file:kc/config.yaml"}, env.env())
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			got := clusters[0]
			if diff := cmp.Diff(tt.wantInvalid, got.Invalid); diff != "" {
				t.Errorf("Invalid (-want +got):\n%s", diff)
			}
			noSecret(t, "Invalid", got.Invalid)
			if tt.wantSecret != "" && !slices.Contains(secrets.Values(), tt.wantSecret) {
				t.Errorf("Secrets.Values() lacks %q", tt.wantSecret)
			}
			if tt.wantInvalid != "" {
				if got.Config != nil {
					t.Errorf("Config = %+v, want nil with Invalid", got.Config)
				}
				return
			}
			if got.Config == nil {
				t.Fatal("Config = nil")
			}
			want := *tt.want
			want.Host = hostFor("a")
			switch want.BearerToken {
			case "":
				want.BearerToken = tokenFor("a")
			case "-":
				want.BearerToken = ""
			}
			if diff := cmp.Diff(want, *got.Config, cmp.Comparer(func(a, b func()) bool { return true })); diff != "" {
				t.Errorf("Config (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExecSummary: the summary of an exec plugin names the command and its own subcommands,
// never an argument that may be an account or a secret, lower-case or not.
func TestExecSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"aws", []string{"--region", "eu-west-1", "eks", "get-token", "--cluster-name", "prod"}, "aws eks get-token"},
		{"kubelogin", []string{"get-token", "--client-secret", "lowercasesecret", "--login", "spn"}, "kubelogin get-token"},
		{"kubelogin", []string{"lowercasesecret", "get-token"}, "kubelogin"},
		{"my-plugin", []string{"hunter2"}, "my-plugin"},
		{"aws-iam-authenticator", []string{"token", "-i", "prod"}, "aws-iam-authenticator token"},
	}
	for _, tt := range tests {
		if got := execSummary(tt.name, tt.args); got != tt.want {
			t.Errorf("execSummary(%s, %q) = %q, want %q", tt.name, tt.args, got, tt.want)
		}
	}
}
