package kubeconfig

import (
	"context"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/org/app-status-action/internal/cloudauth"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/cloudauthtest"
)

// TestRepositoryKubeconfigServerFromTheCloud: a repository kubeconfig naming another server
// under the cloud's domain (attacker0123.gr7.eu-west-1.eks.amazonaws.com) with a CA that
// server's certificate verifies against gets no token signed for the cluster it names: EKS's
// DescribeCluster (a fake) says where the cluster is, the request is refused before it is
// sent, and the message names both servers. The cluster's own endpoint gets the token. A
// server the workflow lists in allowed-servers is asked about all the same: the list says
// where a token may go, not which cluster the file may have it signed for, so the workflow's
// server of another name gets no token signed for the cluster the file names, and the
// message says what to do.
func TestRepositoryKubeconfigServerFromTheCloud(t *testing.T) {
	t.Parallel()
	aws := cloudauthtest.NewAWS()
	t.Cleanup(aws.Close)
	key := aws.NewKey("arn:aws:sts::111122223333:assumed-role/deployer/GitHubActions", true)
	api := cloudauthtest.NewEKSAPI(aws)
	t.Cleanup(api.Close)
	const (
		victim   = "https://0123456789abcdef0123456789abcdef.gr7.eu-west-1.eks.amazonaws.com"
		attacker = "https://attacker0123.gr7.eu-west-1.eks.amazonaws.com"
	)
	tests := []struct {
		name        string
		server      string
		allowed     []string
		wantVerdict result.Verdict // of the request; "" when it is sent
		wantSays    []string
		wantTokens  int // requests with a token the server behind both names received
	}{{
		name: "the cluster's endpoint", server: victim, wantTokens: 1,
	}, {
		name: "another server under the cloud's domain", server: attacker, wantVerdict: result.VerdictInvalidConfig,
		wantSays: []string{`the kubeconfig's cluster "a" has the server ` + attacker + `, but EKS says the cluster's API server is ` + victim},
	}, {
		name: "another server the workflow allows", server: attacker, allowed: []string{attacker}, wantVerdict: result.VerdictInvalidConfig,
		wantSays: []string{`the kubeconfig's cluster "a" has the server ` + attacker + `, but EKS says the cluster's API server is ` + victim,
			`the server is listed in the allowed-servers input, which says where a token may go, not which cluster a kubeconfig from the repository may have it made for: ` +
				`a server that is not the cluster's own endpoint (a proxy) takes the token only from a kubeconfig of the workflow (the kubeconfig input, an env: source)`},
	}, {
		name: "the cluster's endpoint the workflow allows", server: victim, allowed: []string{victim}, wantTokens: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			tokens := 0
			server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "" {
					mu.Lock()
					tokens++
					mu.Unlock()
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"major":"1","minor":"33"}`))
			}))
			t.Cleanup(server.Close)
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
			name := "prod-" + strings.ReplaceAll(strings.ToLower(t.Name()[strings.LastIndex(t.Name(), "/")+1:]), "'", "")
			api.Add(name, cloudauthtest.APICluster{Endpoint: victim, CAData: ca})

			cfg := newConfig("a")
			cfg.Clusters["a"] = &clientcmdapi.Cluster{Server: tt.server, CertificateAuthorityData: ca}
			cfg.AuthInfos["a"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
				APIVersion: "client.authentication.k8s.io/v1beta1", Command: "aws",
				Args: []string{"--region", "eu-west-1", "eks", "get-token", "--cluster-name", name},
			}}
			kc := yamlOf(t, cfg)
			vars := map[string]string{"AWS_ACCESS_KEY_ID": key.AccessKeyID, "AWS_SECRET_ACCESS_KEY": key.SecretAccessKey, "AWS_SESSION_TOKEN": key.SessionToken}
			env := fakeEnv{files: map[string]string{"/ws/kc/config.yaml": kc}, vars: vars}.env()
			env.CloudAuth = cloudauth.Options{EKSAPI: api.URL, HTTPClient: api.Client()}
			clusters, _, err := Load(Input{Clusters: "c=file:kc/config.yaml", AllowedServers: tt.allowed}, env)
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			got := clusters[0]
			if got.Invalid != "" || got.Config == nil {
				t.Fatalf("Invalid = %q, want the cluster loaded (the cloud is asked at the first request)", got.Invalid)
			}
			// Both names lead to the test server, whose certificate holds example.com.
			got.Config.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, server.Listener.Addr().String())
			}
			got.Config.ServerName = "example.com"
			client, err := rest.HTTPClientFor(got.Config)
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, got.Config.Host+"/version", nil)
			var verdict result.Verdict
			resp, err := client.Do(req)
			if err == nil {
				_ = resp.Body.Close()
			} else {
				var e *cloudauth.Error
				if !errors.As(err, &e) {
					t.Fatalf("request error = %v, want a cloudauth.Error", err)
				}
				verdict = e.Verdict
				for _, s := range tt.wantSays {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error = %v\nwant it to say %s", err, s)
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff([]any{tt.wantVerdict, tt.wantTokens}, []any{verdict, tokens}); diff != "" {
				t.Errorf("verdict and tokens received (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRepositoryAKSKubeconfigServerFromTheCloud: the same for AKS, whose token every AKS
// cluster with Entra ID accepts: a repository kubeconfig naming another *.azmk8s.io server, as
// az aks get-credentials names its entries (user clusterUser_RESOURCEGROUP_NAME, cluster
// NAME), gets no token; Azure Resource Manager (a fake: the managed cluster's fqdn, the CA of
// listClusterUserCredential's kubeconfig), asked with an ARM token of the job's workload
// identity for the subscription AZURE_SUBSCRIPTION_ID, says where the cluster is.
func TestRepositoryAKSKubeconfigServerFromTheCloud(t *testing.T) {
	t.Parallel()
	oidc := cloudauthtest.NewGitHubOIDC()
	t.Cleanup(oidc.Close)
	entra := cloudauthtest.NewEntra(oidc)
	t.Cleanup(entra.Close)
	api := cloudauthtest.NewAKSAPI(entra.ValidARM)
	t.Cleanup(api.Close)
	const (
		subscription = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"
		victim       = "https://prod-dns-1a2b3c4d.hcp.westeurope.azmk8s.io"
		attacker     = "https://attacker0123.hcp.westeurope.azmk8s.io"
	)
	tests := []struct {
		name        string
		server      string
		allowed     []string
		wantVerdict result.Verdict // of the request; "" when it is sent
		wantSays    []string
		wantTokens  int // requests with a token the server behind both names received
	}{{
		name: "the cluster's endpoint", server: victim, wantTokens: 1,
	}, {
		name: "the cluster's endpoint with port 443 written out", server: victim + ":443", wantTokens: 1,
	}, {
		name: "another server under the cloud's domain", server: attacker, wantVerdict: result.VerdictInvalidConfig,
		wantSays: []string{`has the server ` + attacker + `, but AKS says the cluster's API server is ` + victim},
	}, {
		name: "another server the workflow allows", server: attacker, allowed: []string{attacker}, wantVerdict: result.VerdictInvalidConfig,
		wantSays: []string{`has the server ` + attacker + `, but AKS says the cluster's API server is ` + victim,
			`the server is listed in the allowed-servers input, which says where a token may go, not which cluster`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			tokens := 0
			server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "" {
					mu.Lock()
					tokens++
					mu.Unlock()
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"major":"1","minor":"33"}`))
			}))
			t.Cleanup(server.Close)
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
			name := "prod-" + strings.ReplaceAll(strings.ToLower(t.Name()[strings.LastIndex(t.Name(), "/")+1:]), "'", "")
			api.Add(subscription+"/resourceGroups/my-rg/providers/Microsoft.ContainerService/managedClusters/"+name,
				cloudauthtest.APICluster{Endpoint: strings.TrimPrefix(victim, "https://"), CAData: ca})

			user := "clusterUser_my-rg_" + name
			cfg := clientcmdapi.NewConfig()
			cfg.Clusters[name] = &clientcmdapi.Cluster{Server: tt.server, CertificateAuthorityData: ca}
			cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
				APIVersion: "client.authentication.k8s.io/v1beta1", Command: "kubelogin",
				Args: []string{"get-token", "--login", "workloadidentity", "--server-id", entra.ServerID},
			}}
			cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
			cfg.CurrentContext = name
			kc := yamlOf(t, cfg)
			vars := map[string]string{"AZURE_AUTHORITY_HOST": entra.URL, "AZURE_CLIENT_ID": entra.ClientID, "AZURE_TENANT_ID": entra.TenantID,
				"ACTIONS_ID_TOKEN_REQUEST_URL": oidc.RequestURL, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": oidc.RequestToken, "AZURE_SUBSCRIPTION_ID": subscription}
			env := fakeEnv{files: map[string]string{"/ws/kc/config.yaml": kc}, vars: vars}.env()
			env.CloudAuth = cloudauth.Options{AKSAPI: api.URL, HTTPClient: api.Client()}
			clusters, _, err := Load(Input{Clusters: "c=file:kc/config.yaml", AllowedServers: tt.allowed}, env)
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			got := clusters[0]
			if got.Invalid != "" || got.Config == nil {
				t.Fatalf("Invalid = %q, want the cluster loaded (the cloud is asked at the first request)", got.Invalid)
			}
			// Both names lead to the test server, whose certificate holds example.com.
			got.Config.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, server.Listener.Addr().String())
			}
			got.Config.ServerName = "example.com"
			client, err := rest.HTTPClientFor(got.Config)
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, got.Config.Host+"/version", nil)
			var verdict result.Verdict
			resp, err := client.Do(req)
			if err == nil {
				_ = resp.Body.Close()
			} else {
				var e *cloudauth.Error
				if !errors.As(err, &e) {
					t.Fatalf("request error = %v, want a cloudauth.Error", err)
				}
				verdict = e.Verdict
				for _, s := range tt.wantSays {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error = %v\nwant it to say %s", err, s)
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff([]any{tt.wantVerdict, tt.wantTokens}, []any{verdict, tokens}); diff != "" {
				t.Errorf("verdict and tokens received (-want +got):\n%s", diff)
			}
		})
	}
}
