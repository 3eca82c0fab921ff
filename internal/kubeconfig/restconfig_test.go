package kubeconfig

import (
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
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
		vars        map[string]string
		builtinAuth bool
		// env loads the kubeconfig from an env: source, the workflow's own; the others from
		// file:kc/config.yaml, which may come from the repository.
		env bool
		// allowed is Input.AllowedServers.
		allowed     []string
		wantInvalid string
		// wantBuiltin: a built-in provider sets the token (WrapTransport), not the plugin.
		wantBuiltin bool
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
		name:        "EKS plugin in the action without AWS credentials",
		change:      func(c *clientcmdapi.Config) { c.AuthInfos["a"] = execUser() },
		wantInvalid: `the kubeconfig's user "a": EKS credentials (aws eks get-token, built in): AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not: set both (aws-actions/configure-aws-credentials does); see https://github.com/org/app-status-action/blob/main/docs/credentials.md#credentials-for-managed-clusters`,
		wantSecret:  "aws-" + marker + "-wJalrXUtnFEMI",
	}, {
		name:        "EKS plugin in the action with the keys the login action exported",
		change:      func(c *clientcmdapi.Config) { c.AuthInfos["a"] = execUser() },
		vars:        map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"},
		allowed:     []string{hostFor("a")},
		wantBuiltin: true,
		want:        &rest.Config{BearerToken: "-", TLSClientConfig: rest.TLSClientConfig{CAData: []byte(fakeCA)}},
	}, {
		name: "GKE plugin, absolute path, no Google credentials",
		change: func(c *clientcmdapi.Config) {
			c.AuthInfos["a"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "/usr/lib/google-cloud-sdk/bin/gke-gcloud-auth-plugin"}}
		},
		wantInvalid: `the kubeconfig's user "a": GKE credentials (gke-gcloud-auth-plugin, built in): no Google credentials in the environment: set GOOGLE_APPLICATION_CREDENTIALS to a credentials file (google-github-actions/auth writes one, for workload identity federation or a service account key); see https://github.com/org/app-status-action/blob/main/docs/credentials.md#credentials-for-managed-clusters`,
	}, {
		name: "kubelogin on a workstation without it, interactive login",
		change: func(c *clientcmdapi.Config) {
			c.AuthInfos["a"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "kubelogin", Args: []string{"get-token", "--login", "azurecli", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"}}}
		},
		path:        []string{"aws"},
		wantInvalid: `the kubeconfig's user "a": AKS credentials (kubelogin get-token, built in): kubelogin --login azurecli needs a person or the Azure CLI's login, which a workflow step in a container does not have: set AZURE_CLIENT_ID and AZURE_TENANT_ID to the app registration or managed identity with a federated credential for the workflow, and give the job ` + "`permissions: id-token: write`" + ` (the app azure/login signs in with; the kubeconfig then needs no change), or convert the kubeconfig with kubelogin convert-kubeconfig -l workloadidentity; or use a service principal (AAD_LOGIN_METHOD=spn with AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_CLIENT_SECRET); see https://github.com/org/app-status-action/blob/main/docs/credentials.md#credentials-for-managed-clusters`,
	}, {
		name: "unknown plugin in the action",
		change: func(c *clientcmdapi.Config) {
			c.AuthInfos["a"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "kubectl", Args: []string{"oidc-login", "get-token", "--oidc-issuer-url=https://issuer.example.com"}}}
		},
		wantInvalid: `the kubeconfig's user "a" needs the exec credential plugin "kubectl", which this container does not have and no built-in provider replaces (see https://github.com/org/app-status-action/blob/main/docs/credentials.md#credentials-for-managed-clusters): pass a kubeconfig with a token instead, e.g. a ServiceAccount token (kubectl create token ...) or a short-lived token your workflow fetched in an earlier step (kubectl ... | jq -r .status.token)`,
	}, {
		name: "unknown plugin on a workstation without it",
		change: func(c *clientcmdapi.Config) {
			c.AuthInfos["a"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "doctl", Args: []string{"kubernetes", "cluster", "kubeconfig", "exec-credential", "--version=v1beta1", "0f3ab26c-2a19-4e43-8a1f-2bd1e3fa4b58"}}}
		},
		path:        []string{"aws"},
		wantInvalid: `the kubeconfig's user "a" needs the exec credential plugin "doctl" (doctl kubernetes cluster), which is not installed here (not found in PATH) and no built-in provider replaces (see https://github.com/org/app-status-action/blob/main/docs/credentials.md#credentials-for-managed-clusters): pass a kubeconfig with a token instead, e.g. a ServiceAccount token (kubectl create token ...) or a short-lived token your workflow fetched in an earlier step (doctl kubernetes cluster kubeconfig exec-credential --version=v1beta1 CLUSTER_ID | jq -r .status.token)`,
	}, {
		name:        "EKS plugin on a workstation without aws",
		change:      func(c *clientcmdapi.Config) { c.AuthInfos["a"] = execUser() },
		path:        []string{"kubelogin"},
		vars:        map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"},
		allowed:     []string{hostFor("a")},
		wantBuiltin: true,
		want:        &rest.Config{BearerToken: "-", TLSClientConfig: rest.TLSClientConfig{CAData: []byte(fakeCA)}},
	}, {
		name:        "EKS plugin installed, --builtin-auth",
		change:      func(c *clientcmdapi.Config) { c.AuthInfos["a"] = execUser() },
		path:        []string{"aws"},
		builtinAuth: true,
		vars:        map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"},
		allowed:     []string{hostFor("a")},
		wantBuiltin: true,
		want:        &rest.Config{BearerToken: "-", TLSClientConfig: rest.TLSClientConfig{CAData: []byte(fakeCA)}},
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
		env:         true,
		wantInvalid: `the kubeconfig's cluster "a" refers to the file certificate-authority: /home/me/.minikube/ca.crt, which does not exist here: embed the data instead (certificate-authority-data), e.g. with kubectl config view --minify --flatten --raw, or --embed-certs when setting it`,
	}, {
		name: "CA, client certificate and key files next to the kubeconfig",
		change: func(c *clientcmdapi.Config) {
			c.Clusters["a"].CertificateAuthorityData = nil
			c.Clusters["a"].CertificateAuthority = "ca.crt"
			c.AuthInfos["a"] = &clientcmdapi.AuthInfo{ClientCertificate: "certs/client.crt", ClientKey: "keys/client.key"}
		},
		files: map[string]string{"/ws/kc/ca.crt": fakeCA, "/ws/kc/certs/client.crt": fakeCert, "/ws/kc/keys/client.key": fakeKey},
		want: &rest.Config{
			BearerToken:     "-",
			TLSClientConfig: rest.TLSClientConfig{CAData: []byte(fakeCA), CertData: []byte(fakeCert), KeyData: []byte(fakeKey)},
		},
		wantSecret: "AwEHoUQD" + marker + "keyLineTwo0123456789QrStUv",
	}, {
		name:       "tokenFile",
		change:     func(c *clientcmdapi.Config) { c.AuthInfos["a"] = &clientcmdapi.AuthInfo{TokenFile: "token"} },
		files:      map[string]string{"/ws/kc/token": tokenFor("a") + "\n"},
		want:       &rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: []byte(fakeCA)}},
		wantSecret: tokenFor("a"),
	}, {
		name:        "missing tokenFile",
		change:      func(c *clientcmdapi.Config) { c.AuthInfos["a"] = &clientcmdapi.AuthInfo{TokenFile: "/var/run/token"} },
		env:         true,
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
			in := Input{Clusters: "c=file:kc/config.yaml", AllowedServers: tt.allowed}
			vars := maps.Clone(tt.vars)
			if tt.env {
				in.Clusters = "c=env:KC"
				if vars == nil {
					vars = map[string]string{}
				}
				vars["KC"] = files["/ws/kc/config.yaml"]
			}
			env := fakeEnv{files: files, path: tt.path, vars: vars}.env()
			env.BuiltinAuth = tt.builtinAuth
			clusters, secrets, err := Load(in, env)
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
			if gotBuiltin := got.Config.WrapTransport != nil; gotBuiltin != tt.wantBuiltin {
				t.Errorf("built-in provider = %t, want %t", gotBuiltin, tt.wantBuiltin)
			}
			got.Config.WrapTransport = nil
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

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestBuiltinTokensAreSecrets: the token a built-in provider obtains while verifying is
// recorded in the Secrets Load returned, and handed to OnAdd, before any request carries it.
func TestBuiltinTokensAreSecrets(t *testing.T) {
	t.Parallel()
	cfg := newConfig("a")
	cfg.AuthInfos["a"] = execUser()
	cfg.Clusters["a"].Server = eksServer
	// The workflow's own kubeconfig: a repository one's cluster is first located at the
	// cloud's API (TestRepositoryKubeconfigServerFromTheCloud).
	env := fakeEnv{vars: map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "KC": yamlOf(t, cfg)}}.env()
	clusters, secrets, err := Load(Input{Clusters: "c=env:KC"}, env)
	if err != nil || clusters[0].Config == nil {
		t.Fatalf("Load() = %+v, %v; want a cluster with a built-in provider", clusters, err)
	}
	var mu sync.Mutex
	var added []string
	secrets.OnAdd(func(v string) {
		mu.Lock()
		defer mu.Unlock()
		added = append(added, v)
	})
	var sent string
	rt := clusters[0].Config.WrapTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		mu.Lock()
		defer mu.Unlock()
		if !slices.Contains(added, sent) {
			t.Error("a request carried a token OnAdd was not given first")
		}
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	}))
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, eksServer+"/version", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip() error = %v", err)
	}
	_ = resp.Body.Close()
	if !strings.HasPrefix(sent, "k8s-aws-v1.") {
		t.Fatalf("Authorization = Bearer %.20q…, want an EKS token", sent)
	}
	if got := secrets.Redact("token " + sent); got != "token ***" {
		t.Errorf("Redact() = %.40q…, want the token redacted", got)
	}
}

// TestRelativeExecCommandRunsWhatWasFound: a relative exec command of the workflow's own
// kubeconfig is looked for from the kubeconfig's folder, as kubectl does, and that very
// program is what client-go runs, whatever the working folder.
func TestRelativeExecCommandRunsWhatWasFound(t *testing.T) {
	t.Parallel()
	cfg := newConfig("a")
	cfg.AuthInfos["a"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "./bin/get-token", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}
	env := fakeEnv{files: map[string]string{"/home/me/kc/config.yaml": yamlOf(t, cfg)}}.env()
	env.LookPath = func(c string) (string, error) {
		if c == "/home/me/kc/bin/get-token" {
			return c, nil
		}
		return "", errors.New("not found")
	}
	clusters, _, err := Load(Input{CLI: true, KubeconfigPath: "/home/me/kc/config.yaml", AllContexts: true}, env)
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	if clusters[0].Config == nil {
		t.Fatalf("Load() = %q, want the cluster", clusters[0].Invalid)
	}
	if got, want := clusters[0].Config.ExecProvider.Command, "/home/me/kc/bin/get-token"; got != want {
		t.Errorf("the plugin client-go runs = %q, want %q", got, want)
	}
}
