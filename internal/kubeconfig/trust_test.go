package kubeconfig

import (
	"encoding/pem"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/org/app-status-action/internal/safefile"
)

// readLog is a ReadFile over the real file system that records every path it is asked for.
type readLog struct {
	mu    sync.Mutex
	paths []string
}

func (r *readLog) read(name string) ([]byte, error) {
	r.mu.Lock()
	r.paths = append(r.paths, name)
	r.mu.Unlock()
	return safefile.Read(name)
}

func (r *readLog) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.paths...)
}

// writeFile writes a file, and its folder, for a test.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRepositoryFilesStayInFolder (attacker): a kubeconfig of a file: source names files
// outside its folder (with "..", an absolute path, a ~/ path, a link out of it, a pipe) as its
// token, key or certificates: the cluster is refused with the field and the fix, and the file
// is never read; a file in the folder, also through a link that stays in it, is read. The
// same kubeconfig from an env: source (the workflow's own) keeps kubectl's rules.
func TestRepositoryFilesStayInFolder(t *testing.T) {
	t.Parallel()
	// Each case lays out its own folders (the links must point into them): root holds the
	// runner's files, ws the workspace.
	layout := func(t *testing.T) (root, ws string) {
		t.Helper()
		root = t.TempDir()
		ws = filepath.Join(root, "ws")
		writeFile(t, filepath.Join(root, "gha-creds-1234.json"), "outside-"+marker+"-credential")
		if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o600); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(ws, "kc", "token"), tokenFor("a")+"\n")
		writeFile(t, filepath.Join(ws, "kc", "certs", "ca.crt"), fakeCA)
		for link, target := range map[string]string{
			"out": filepath.Join(root, "gha-creds-1234.json"), "in": filepath.Join(ws, "kc", "token"),
			"pipe": filepath.Join(root, "pipe"), "up": root,
		} {
			if err := os.Symlink(target, filepath.Join(ws, "kc", link)); err != nil {
				t.Fatal(err)
			}
		}
		return root, ws
	}
	// The absolute paths are the runner's: "ROOT" stands for root in the cases.
	token := func(path string) func(*clientcmdapi.Config) {
		return func(c *clientcmdapi.Config) { c.AuthInfos["a"] = &clientcmdapi.AuthInfo{TokenFile: path} }
	}
	refused := func(owner, field, path, why, fix string) string {
		return "the kubeconfig's " + owner + " refers to the file " + field + ": " + path + ", which is not read: " + why +
			", and a kubeconfig from the repository (file:kc/config.yaml) may refer only to files in its own folder, so that a pull request " +
			"cannot send another file as a credential: move the file next to the kubeconfig, or " + fix
	}
	const tokenFix = "put the token itself in the kubeconfig instead (token:)"
	tests := []struct {
		name        string
		change      func(*clientcmdapi.Config)
		env         bool // an env: source
		wantInvalid string
	}{{
		name:        "tokenFile with ..",
		change:      token("../../gha-creds-1234.json"),
		wantInvalid: refused(`user "a"`, "tokenFile", "../../gha-creds-1234.json", `it goes up with ".."`, tokenFix),
	}, {
		name:        "tokenFile with .. that comes back in",
		change:      token("../kc/token"),
		wantInvalid: refused(`user "a"`, "tokenFile", "../kc/token", `it goes up with ".."`, tokenFix),
	}, {
		name:        "absolute tokenFile",
		change:      token("ROOT/gha-creds-1234.json"),
		wantInvalid: refused(`user "a"`, "tokenFile", "ROOT/gha-creds-1234.json", "it is outside the kubeconfig's folder", tokenFix),
	}, {
		name:        "tokenFile in the home folder",
		change:      token("~/gha-creds-1234.json"),
		wantInvalid: refused(`user "a"`, "tokenFile", "~/gha-creds-1234.json", "it is outside the kubeconfig's folder", tokenFix),
	}, {
		name:        "tokenFile linked out of the folder",
		change:      token("out"),
		wantInvalid: refused(`user "a"`, "tokenFile", "out", "it links to a file outside the kubeconfig's folder", tokenFix),
	}, {
		name:        "tokenFile through a linked folder",
		change:      token("up/gha-creds-1234.json"),
		wantInvalid: refused(`user "a"`, "tokenFile", "up/gha-creds-1234.json", "it links to a file outside the kubeconfig's folder", tokenFix),
	}, {
		name: "client-key linked to a pipe outside",
		change: func(c *clientcmdapi.Config) {
			c.AuthInfos["a"] = &clientcmdapi.AuthInfo{ClientCertificate: "certs/ca.crt", ClientKey: "pipe"}
		},
		wantInvalid: refused(`user "a"`, "client-key", "pipe", "it links to a file outside the kubeconfig's folder",
			"embed the data instead (client-key-data), e.g. with kubectl config view --minify --flatten --raw, or --embed-certs when setting it"),
	}, {
		name: "certificate-authority outside",
		change: func(c *clientcmdapi.Config) {
			c.Clusters["a"].CertificateAuthorityData = nil
			c.Clusters["a"].CertificateAuthority = "ROOT/gha-creds-1234.json"
		},
		wantInvalid: refused(`cluster "a"`, "certificate-authority", "ROOT/gha-creds-1234.json", "it is outside the kubeconfig's folder",
			"embed the data instead (certificate-authority-data), e.g. with kubectl config view --minify --flatten --raw, or --embed-certs when setting it"),
	}, {
		name:   "tokenFile in the folder",
		change: token("token"),
	}, {
		name:   "tokenFile linked within the folder",
		change: token("in"),
	}, {
		name: "CA in a subfolder, by its absolute path",
		change: func(c *clientcmdapi.Config) {
			c.Clusters["a"].CertificateAuthorityData = nil
			c.Clusters["a"].CertificateAuthority = "ROOT/ws/kc/certs/ca.crt"
		},
	}, {
		name:   "the workflow's own kubeconfig (env:) may name any file",
		change: token("ROOT/gha-creds-1234.json"),
		env:    true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, ws := layout(t)
			cfg := newConfig("a")
			tt.change(cfg)
			kubeconfig := strings.ReplaceAll(yamlOf(t, cfg), "ROOT", root)
			writeFile(t, filepath.Join(ws, "kc", "config.yaml"), kubeconfig)
			in := Input{Clusters: "c=file:kc/config.yaml"}
			vars := map[string]string{}
			if tt.env {
				in.Clusters, vars["KC"] = "c=env:KC", kubeconfig
			}
			reads := &readLog{}
			env := Env{Getenv: func(k string) string { return vars[k] }, ReadFile: reads.read, Workspace: ws, Home: root}
			clusters, _, err := Load(in, env)
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			got := clusters[0]
			wantInvalid := strings.ReplaceAll(tt.wantInvalid, "ROOT", root)
			if hasCredentialRun(root) { // a temporary folder's digits: never quoted
				wantInvalid = strings.ReplaceAll(wantInvalid, root+"/gha-creds-1234.json", "(not shown)")
			}
			if diff := cmp.Diff(wantInvalid, got.Invalid); diff != "" {
				t.Errorf("Invalid (-want +got):\n%s", diff)
			}
			noSecret(t, "Invalid", got.Invalid)
			folder, err := filepath.EvalSymlinks(filepath.Join(ws, "kc"))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range reads.list() {
				if resolved, err := filepath.EvalSymlinks(p); err == nil {
					p = resolved // where a read through a link lands
				}
				inFolder := strings.HasPrefix(p, folder+string(filepath.Separator))
				if !tt.env && !inFolder {
					t.Errorf("read %s, outside the kubeconfig's folder", p)
				}
			}
			if tt.wantInvalid != "" {
				return
			}
			if got.Config == nil {
				t.Fatal("Config = nil")
			}
			if tt.env {
				if got.Config.BearerToken != "outside-"+marker+"-credential" {
					t.Errorf("BearerToken = %q, want the file's", got.Config.BearerToken)
				}
				return
			}
			if got.Config.BearerTokenFile != "" {
				t.Errorf("BearerTokenFile = %q, want none: client-go would read it again, unchecked", got.Config.BearerTokenFile)
			}
		})
	}
}

// TestRepositoryKubeconfigRoutesNoCloudToken (attacker): a repository kubeconfig whose context
// has the job's EKS credentials (the built-in provider) and points at a server of its own,
// without TLS verification, through a proxy of its own, or over a CA of its own: the cluster
// is refused naming the field, and no EKS token reaches the server or the proxy. The same
// kubeconfig from an env: source sends it (the servers would see one). A server the workflow
// allows still has the cloud asked which cluster it is: TestRepositoryKubeconfigServerFromTheCloud.
func TestRepositoryKubeconfigRoutesNoCloudToken(t *testing.T) {
	t.Parallel()
	// In the cases, SERVER stands for the test server's URL, PROXY for the proxy's, HOSTPORT
	// for the server's host and port, and PORT for its port.
	const why = `, and a kubeconfig from the repository (file:kc/config.yaml) never chooses where the job's EKS token goes, so that a pull request cannot take it`
	tests := []struct {
		name        string
		server      string
		insecure    bool   // insecure-skip-tls-verify
		ca          bool   // the test server's CA as certificate-authority-data
		proxy       bool   // proxy-url: PROXY
		tlsName     string // tls-server-name: a name the test server's certificate holds
		env         bool
		allowed     []string
		wantInvalid string
		wantSeen    string // who sees the token when the cluster is used
	}{{
		name:        "insecure-skip-tls-verify",
		server:      "SERVER",
		insecure:    true,
		allowed:     []string{"SERVER"},
		wantInvalid: `the kubeconfig's cluster "a" sets insecure-skip-tls-verify` + why + `: remove it and give the cluster's certificate-authority-data`,
	}, {
		name:        "proxy-url",
		server:      eksServer,
		proxy:       true,
		wantInvalid: `the kubeconfig's cluster "a" sets proxy-url` + why + `: remove it (a proxy the runner needs goes in the step's env: HTTPS_PROXY)`,
	}, {
		name:   "a server of its own, with its CA",
		server: "SERVER",
		ca:     true,
		wantInvalid: `the kubeconfig's cluster "a" has the server SERVER, which is not an EKS API endpoint (*.eks.amazonaws.com, *.eks.amazonaws.com.cn)` +
			why + `: if the server is yours, list it in the allowed-servers input`,
	}, {
		name:        "an EKS name over http",
		server:      "http://0123.gr7.eu-west-1.eks.amazonaws.com",
		wantInvalid: `the kubeconfig's cluster "a" has the server http://0123.gr7.eu-west-1.eks.amazonaws.com, not https` + why + `: use its https:// URL`,
	}, {
		// An IPv6 address with a zone: the zone is the EKS name, and Go dials the address.
		name:    "an IPv4-mapped address whose zone is an EKS name",
		server:  "https://[::ffff:127.0.0.1%25.eks.amazonaws.com]:PORT",
		ca:      true,
		tlsName: "example.com",
		wantInvalid: `the kubeconfig's cluster "a" has the server https://[::ffff:127.0.0.1%.eks.amazonaws.com]:PORT, which is not an EKS API endpoint (*.eks.amazonaws.com, *.eks.amazonaws.com.cn)` +
			why + `: if the server is yours, list it in the allowed-servers input`,
	}, {
		name:    "the same address written out, with a zone that is an EKS name",
		server:  "https://[0:0:0:0:0:ffff:127.0.0.1%25x.gr7.eu-west-1.eks.amazonaws.com]:PORT",
		ca:      true,
		tlsName: "example.com",
		wantInvalid: `the kubeconfig's cluster "a" has the server https://[0:0:0:0:0:ffff:127.0.0.1%x.gr7.eu-west-1.eks.amazonaws.com]:PORT, which is not an EKS API endpoint (*.eks.amazonaws.com, *.eks.amazonaws.com.cn)` +
			why + `: if the server is yours, list it in the allowed-servers input`,
	}, {
		name:     "insecure-skip-tls-verify in the workflow's own kubeconfig",
		server:   "SERVER",
		insecure: true,
		env:      true,
		wantSeen: "server",
	}, {
		name:     "proxy-url in the workflow's own kubeconfig",
		server:   "SERVER",
		ca:       true,
		proxy:    true,
		env:      true,
		wantSeen: "proxy",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			seen := map[string]int{} // who saw an EKS token
			record := func(who string) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.HasPrefix(r.Header.Get("Authorization"), "Bearer k8s-aws-v1.") || r.Method == http.MethodConnect {
						mu.Lock()
						seen[who]++
						mu.Unlock()
					}
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(`{"major":"1","minor":"33"}`))
				})
			}
			server := httptest.NewTLSServer(record("server"))
			t.Cleanup(server.Close)
			proxy := httptest.NewServer(record("proxy"))
			t.Cleanup(proxy.Close)
			_, port, err := net.SplitHostPort(strings.TrimPrefix(server.URL, "https://"))
			if err != nil {
				t.Fatal(err)
			}
			placeholders := strings.NewReplacer("SERVER", server.URL, "HOSTPORT", strings.TrimPrefix(server.URL, "https://"), "PORT", port)

			cfg := newConfig("a")
			cfg.AuthInfos["a"] = execUser()
			cluster := &clientcmdapi.Cluster{Server: placeholders.Replace(tt.server), InsecureSkipTLSVerify: tt.insecure, TLSServerName: tt.tlsName}
			if tt.ca {
				cluster.CertificateAuthorityData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
			}
			if tt.proxy {
				cluster.ProxyURL = proxy.URL
			}
			cfg.Clusters["a"] = cluster
			allowed := make([]string, len(tt.allowed))
			for i, a := range tt.allowed {
				allowed[i] = placeholders.Replace(a)
			}
			vars := map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "KC": yamlOf(t, cfg)}
			in := Input{Clusters: "c=file:kc/config.yaml", AllowedServers: allowed}
			if tt.env {
				in.Clusters = "c=env:KC"
			}
			env := fakeEnv{files: map[string]string{"/ws/kc/config.yaml": vars["KC"]}, vars: vars}.env()
			clusters, _, err := Load(in, env)
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			got := clusters[0]
			if diff := cmp.Diff(placeholders.Replace(tt.wantInvalid), got.Invalid); diff != "" {
				t.Errorf("Invalid (-want +got):\n%s", diff)
			}
			if got.Config != nil {
				client, err := rest.HTTPClientFor(got.Config)
				if err != nil {
					t.Fatal(err)
				}
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, got.Config.Host+"/version", nil)
				if resp, err := client.Do(req); err == nil {
					_ = resp.Body.Close()
				}
			}
			mu.Lock()
			defer mu.Unlock()
			want := map[string]int{}
			if tt.wantSeen != "" {
				want[tt.wantSeen] = 1
			}
			if diff := cmp.Diff(want, seen); diff != "" {
				t.Errorf("who saw an EKS token (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAllowedServersInput: an entry that is not an https API server is bad input, named.
func TestAllowedServersInput(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"http://10.0.0.1", "https://user:pw@10.0.0.1", "ftp://x"} {
		_, _, err := Load(Input{Clusters: "c=file:kc/config.yaml", AllowedServers: []string{"https://ok.example.com", bad}}, fakeEnv{}.env())
		want := "input allowed-servers entry 2 is not an API server: give its https:// URL (https://HOST or https://HOST:PORT), as the kubeconfig's server says"
		if got := errString(err); got != want {
			t.Errorf("Load(%q) error = %q, want %q", bad, got, want)
		}
	}
}

// TestRepositoryKubeconfigChoosesNoAzureAudience (attacker): a repository kubeconfig whose
// kubelogin asks for a token for Azure Resource Manager (--server-id is a URL) is refused; the
// same kubeconfig from an env: source keeps kubelogin's rules.
func TestRepositoryKubeconfigChoosesNoAzureAudience(t *testing.T) {
	t.Parallel()
	cfg := newConfig("a")
	cfg.Clusters["a"].Server = "https://prod-dns-1a2b3c4d.hcp.westeurope.azmk8s.io"
	cfg.AuthInfos["a"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1beta1", Command: "kubelogin",
		Args: []string{"get-token", "--login", "spn", "--server-id", "https://management.azure.com"},
	}}
	kubeconfig := yamlOf(t, cfg)
	vars := map[string]string{"KC": kubeconfig, "AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "AZURE_CLIENT_SECRET": "s"}
	env := fakeEnv{files: map[string]string{"/ws/kc/config.yaml": kubeconfig}, vars: vars}.env()
	for _, tt := range []struct {
		clusters string
		refused  bool
	}{{"c=file:kc/config.yaml", true}, {"c=env:KC", false}} {
		clusters, _, err := Load(Input{Clusters: tt.clusters}, env)
		if err != nil {
			t.Fatalf("Load(%s) error = %v", tt.clusters, err)
		}
		got := strings.Contains(clusters[0].Invalid, "kubelogin --server-id is not an AKS server application ID")
		if got != tt.refused || (!tt.refused && clusters[0].Config == nil) {
			t.Errorf("Load(%s): Invalid = %q, want refused: %t", tt.clusters, clusters[0].Invalid, tt.refused)
		}
	}
}

// TestRepositoryKubeconfigCloudEndpointPortAndTLSName (attacker): a repository kubeconfig
// whose built-in EKS, GKE or AKS provider names the cloud's endpoint on another port than 443,
// or sets tls-server-name (either would let a server that is not the cloud's, at the address a
// private endpoint's name points to, take the job's token), is refused with the field and the
// fix; the endpoint on 443, written out or not, is used, and so is a port the workflow lists
// in allowed-servers, or the same kubeconfig from an env: source (the workflow's own).
func TestRepositoryKubeconfigCloudEndpointPortAndTLSName(t *testing.T) {
	t.Parallel()
	providers := []struct {
		cloud    string
		host     string
		user     *clientcmdapi.AuthInfo
		userName string // the user entry's name, when not the context's
		vars     map[string]string
		files    map[string]string
	}{{
		cloud: "EKS",
		host:  "0123456789abcdef0123456789abcdef.gr7.eu-west-1.eks.amazonaws.com",
		user:  execUser(),
		vars:  map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"},
	}, {
		cloud: "GKE",
		host:  "gke-0123456789abcdef0123456789abcdef-my-project.europe-west1.gke.goog",
		user: &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1beta1", Command: "gke-gcloud-auth-plugin", ProvideClusterInfo: true,
		}},
		vars:  map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": "/runner/gha-creds.json"},
		files: map[string]string{"/runner/gha-creds.json": `{"type": "service_account"}`},
	}, {
		cloud: "AKS",
		host:  "prod-dns-1a2b3c4d.hcp.westeurope.azmk8s.io",
		user: &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1beta1", Command: "kubelogin",
			Args: []string{"get-token", "--login", "spn", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"},
		}},
		// As az aks get-credentials names the user, with the subscription set: Azure Resource
		// Manager is asked where the cluster is at the first request (TestRepositoryClusterLocatedByTheCloud).
		userName: "clusterUser_my-rg_a",
		vars: map[string]string{"AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "AZURE_CLIENT_SECRET": "azs-" + marker + "-Q8x7Yv",
			"AZURE_SUBSCRIPTION_ID": "0b1f6471-1bf0-4dda-aec3-cb9272f09590"},
	}}
	// In the cases, HOST stands for the provider's endpoint and CLOUD for its name.
	const why = `, and a kubeconfig from the repository (file:kc/config.yaml) never chooses where the job's CLOUD token goes, so that a pull request cannot take it`
	tests := []struct {
		name        string
		server      string
		tlsName     string
		allowed     []string
		env         bool
		wantInvalid string
	}{{
		name:   "the endpoint",
		server: "https://HOST",
	}, {
		name:   "the endpoint with port 443 written out",
		server: "https://HOST:443",
	}, {
		name:   "the endpoint's name on another port",
		server: "https://HOST:8443",
		wantInvalid: `the kubeconfig's cluster "a" has the server https://HOST:8443, the name of one of CLOUD's API endpoints on port 8443` + why +
			`: the cloud serves its API endpoints on port 443 only: remove the port, or, if the server is yours, list https://HOST:8443 in the allowed-servers input`,
	}, {
		name:    "tls-server-name",
		server:  "https://HOST",
		tlsName: "kubernetes.default.svc",
		wantInvalid: `the kubeconfig's cluster "a" sets tls-server-name` + why +
			`: remove it (the certificate of CLOUD's API endpoint holds its own name), or, if the server is yours, list it in the allowed-servers input`,
	}, {
		name:    "another port the workflow allows",
		server:  "https://HOST:8443",
		allowed: []string{"https://HOST:8443"},
	}, {
		name:    "tls-server-name of a server the workflow allows",
		server:  "https://HOST",
		tlsName: "kubernetes.default.svc",
		allowed: []string{"HOST"},
	}, {
		name:    "another port and tls-server-name in the workflow's own kubeconfig",
		server:  "https://HOST:8443",
		tlsName: "kubernetes.default.svc",
		env:     true,
	}}
	for _, p := range providers {
		for _, tt := range tests {
			t.Run(p.cloud+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				placeholders := strings.NewReplacer("HOST", p.host, "CLOUD", p.cloud)
				cfg := newConfig("a")
				cfg.Clusters["a"].Server = placeholders.Replace(tt.server)
				cfg.Clusters["a"].TLSServerName = tt.tlsName
				cfg.AuthInfos["a"] = p.user.DeepCopy()
				if p.userName != "" {
					delete(cfg.AuthInfos, "a")
					cfg.AuthInfos[p.userName], cfg.Contexts["a"].AuthInfo = p.user.DeepCopy(), p.userName
				}
				kubeconfig := yamlOf(t, cfg)
				files := map[string]string{"/ws/kc/config.yaml": kubeconfig}
				maps.Copy(files, p.files)
				vars := map[string]string{"KC": kubeconfig}
				maps.Copy(vars, p.vars)
				in := Input{Clusters: "c=file:kc/config.yaml"}
				if tt.env {
					in.Clusters = "c=env:KC"
				}
				for _, a := range tt.allowed {
					in.AllowedServers = append(in.AllowedServers, placeholders.Replace(a))
				}
				clusters, _, err := Load(in, fakeEnv{files: files, vars: vars}.env())
				if err != nil {
					t.Fatalf("Load() error = %v", err)
				}
				got := clusters[0]
				if diff := cmp.Diff(placeholders.Replace(tt.wantInvalid), got.Invalid); diff != "" {
					t.Errorf("Invalid (-want +got):\n%s", diff)
				}
				if tt.wantInvalid == "" && (got.Config == nil || got.Config.WrapTransport == nil) {
					t.Errorf("Config = %+v, want the cluster served by the built-in provider", got.Config)
				}
			})
		}
	}
}

// TestServerWithAFinalDot: "host." and "host" may resolve to different servers (the runner's
// DNS search domains apply to the second alone), so the name checked must be the name
// dialled. A repository kubeconfig's server with a final dot is refused with the fix, whether
// or not the list allows the name without it; an allowed-servers entry with one is bad input;
// the workflow's own kubeconfig keeps it.
func TestServerWithAFinalDot(t *testing.T) {
	t.Parallel()
	const (
		eks = "0123456789abcdef0123456789abcdef.gr7.eu-west-1.eks.amazonaws.com"
		why = `, and a kubeconfig from the repository (file:kc/config.yaml) never chooses where the job's EKS token goes, so that a pull request cannot take it`
	)
	tests := []struct {
		name        string
		server      string
		allowed     []string
		env         bool
		wantInvalid string
		wantErr     string
	}{{
		name: "the cloud's endpoint", server: "https://" + eks,
	}, {
		name: "the cloud's endpoint with a final dot", server: "https://" + eks + ".",
		wantInvalid: `the kubeconfig's cluster "a" has the server https://` + eks + `., whose host ends with a dot` + why +
			`: write it without the final dot, as the cloud and the allowed-servers input name it (a name with and without it may resolve to different servers under the runner's DNS search domains)`,
	}, {
		name: "a server the workflow allows, written with a final dot", server: "https://k8s.internal.example.:6443", allowed: []string{"https://k8s.internal.example:6443"},
		wantInvalid: `the kubeconfig's cluster "a" has the server https://k8s.internal.example.:6443, whose host ends with a dot` + why +
			`: write it without the final dot, as the cloud and the allowed-servers input name it (a name with and without it may resolve to different servers under the runner's DNS search domains)`,
	}, {
		name: "a server the workflow allows", server: "https://k8s.internal.example:6443", allowed: []string{"https://k8s.internal.example:6443"},
	}, {
		name: "an allowed-servers entry with a final dot", server: "https://k8s.internal.example:6443", allowed: []string{"k8s.internal.example.:6443"},
		wantErr: `input allowed-servers entry 1 has a host that ends with a dot: write it without the final dot, as a repository kubeconfig's server must be written ` +
			`(a name with and without it may resolve to different servers under the runner's DNS search domains)`,
	}, {
		name: "the workflow's own kubeconfig", server: "https://" + eks + ".", env: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := newConfig("a")
			cfg.Clusters["a"].Server = tt.server
			cfg.AuthInfos["a"] = execUser()
			kubeconfig := yamlOf(t, cfg)
			in := Input{Clusters: "c=file:kc/config.yaml", AllowedServers: tt.allowed}
			if tt.env {
				in.Clusters = "c=env:KC"
			}
			vars := map[string]string{"KC": kubeconfig, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"}
			clusters, _, err := Load(in, fakeEnv{files: map[string]string{"/ws/kc/config.yaml": kubeconfig}, vars: vars}.env())
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Fatalf("Load() error (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			got := clusters[0]
			if diff := cmp.Diff(tt.wantInvalid, got.Invalid); diff != "" {
				t.Errorf("Invalid (-want +got):\n%s", diff)
			}
			if (got.Config == nil) != (tt.wantInvalid != "") {
				t.Errorf("Config = %v with Invalid %q; want a config exactly when the cluster is not refused", got.Config, got.Invalid)
			}
		})
	}
}
