package cloudauth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/org/app-status-action/internal/cloudauth"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/cloudauthtest"
)

// apiServer is an API server that counts the requests that carried a bearer token.
type apiServer struct {
	*httptest.Server
	mu      sync.Mutex
	bearers int
}

func newAPIServer(t *testing.T) *apiServer {
	t.Helper()
	s := &apiServer{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			s.mu.Lock()
			s.bearers++
			s.mu.Unlock()
		}
		_, _ = w.Write([]byte(`{"major":"1","minor":"33"}`))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *apiServer) tokensSeen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bearers
}

// certPEM is the PEM of an httptest server's certificate, the CA a kubeconfig gives for it.
func certPEM(s *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

// otherCA is the PEM of a self-signed CA of the attacker's.
func otherCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "attacker-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// outcome is what a request through a source that requires the cluster's endpoint gives.
type outcome struct {
	Verdict        result.Verdict
	MessageHas     []string // what the error's message must say; nil when the request succeeds
	VictimTokens   int      // requests with a token the cluster's own server received
	AttackerTokens int      // requests with a token the kubeconfig's server of its own received
}

// TestRepositoryClusterLocatedByTheCloud: a repository kubeconfig's server and CA must be
// those the cloud's own API (a fake of EKS DescribeCluster, of GKE clusters.get) gives for
// the cluster the token is for; a server of its own or a CA of its own is refused before any
// request, so the token never reaches it; the API's refusals name the cluster and the
// permission to add.
func TestRepositoryClusterLocatedByTheCloud(t *testing.T) {
	t.Parallel()
	aws := cloudauthtest.NewAWS()
	t.Cleanup(aws.Close)
	key := aws.NewKey("arn:aws:sts::111122223333:assumed-role/deployer/GitHubActions", true)
	eksAPI := cloudauthtest.NewEKSAPI(aws)
	t.Cleanup(eksAPI.Close)
	oidc := cloudauthtest.NewGitHubOIDC()
	t.Cleanup(oidc.Close)
	google := cloudauthtest.NewGoogle(oidc)
	t.Cleanup(google.Close)
	gkeAPI := cloudauthtest.NewGKEAPI(func(tok string) bool { _, ok := google.Valid(tok); return ok })
	t.Cleanup(gkeAPI.Close)
	googleCreds, err := google.WriteCredentialsFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	entra := cloudauthtest.NewEntra(oidc)
	t.Cleanup(entra.Close)
	aksAPI := cloudauthtest.NewAKSAPI(entra.ValidARM)
	t.Cleanup(aksAPI.Close)
	const subscription = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"

	type cloud struct {
		name     string
		exec     *clientcmdapi.ExecConfig
		vars     map[string]string
		api      *cloudauthtest.ClusterAPI
		apiName  string // how errors name the API
		path     string // the cluster's path at the API
		entry    string // the kubeconfig's cluster entry
		user     string // the kubeconfig's user entry, when the API needs it
		endpoint func(victim *apiServer) cloudauthtest.APICluster
		what     string // how errors name the cluster
	}
	clouds := []cloud{{
		name: "EKS", exec: eksExec(), api: eksAPI, apiName: "EKS", path: "prod", entry: "arn:aws:eks:eu-west-1:111122223333:cluster/prod",
		vars: map[string]string{"AWS_ACCESS_KEY_ID": key.AccessKeyID, "AWS_SECRET_ACCESS_KEY": key.SecretAccessKey, "AWS_SESSION_TOKEN": key.SessionToken},
		endpoint: func(v *apiServer) cloudauthtest.APICluster {
			return cloudauthtest.APICluster{Endpoint: v.URL, CAData: certPEM(v.Server)}
		},
		what: `DescribeCluster of the cluster "prod" in eu-west-1`,
	}, {
		name: "GKE", exec: gkeExec(), api: gkeAPI, apiName: "GKE", path: "projects/my-project/locations/europe-west1/clusters/prod",
		entry: "gke_my-project_europe-west1_prod", vars: map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": googleCreds},
		endpoint: func(v *apiServer) cloudauthtest.APICluster {
			// The IP endpoint, as GKE gives it: an address, no scheme.
			return cloudauthtest.APICluster{Endpoint: strings.TrimPrefix(v.URL, "https://"), CAData: certPEM(v.Server)}
		},
		what: `clusters.get of the cluster "prod" in europe-west1 of the project my-project`,
	}, {
		name: "AKS", exec: aksExec("workloadidentity", ""), api: aksAPI, apiName: "Azure Resource Manager",
		path:  subscription + "/resourceGroups/my-rg/providers/Microsoft.ContainerService/managedClusters/prod",
		entry: "prod", user: "clusterUser_my-rg_prod",
		vars: map[string]string{"AZURE_AUTHORITY_HOST": entra.URL, "AZURE_CLIENT_ID": entra.ClientID, "AZURE_TENANT_ID": entra.TenantID,
			"ACTIONS_ID_TOKEN_REQUEST_URL": oidc.RequestURL, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": oidc.RequestToken, "AZURE_SUBSCRIPTION_ID": subscription},
		endpoint: func(v *apiServer) cloudauthtest.APICluster {
			// properties.fqdn, a name without a scheme (here with the fake's port).
			return cloudauthtest.APICluster{Endpoint: strings.TrimPrefix(v.URL, "https://"), CAData: certPEM(v.Server)}
		},
		what: `the managed cluster read of the cluster "prod" in the resource group "my-rg" of the subscription ` + subscription,
	}}
	permission := map[string]string{"EKS": "eks:DescribeCluster", "GKE": "container.clusters.get",
		"AKS": "Microsoft.ContainerService/managedClusters/read and Microsoft.ContainerService/managedClusters/listClusterUserCredential/action"}

	tests := []struct {
		name   string
		server string // VICTIM or ATTACKER
		ca     string // VICTIM, OTHER or NONE
		setup  func(api *cloudauthtest.ClusterAPI, path string, c cloudauthtest.APICluster)
		entry  string // the kubeconfig's cluster entry, when not the cloud's default
		want   func(c cloud) outcome
	}{{
		name: "the cluster's own server and CA", server: "VICTIM", ca: "VICTIM",
		want: func(cloud) outcome { return outcome{VictimTokens: 1} },
	}, {
		name: "a server of its own under the cluster's name, with its CA", server: "ATTACKER", ca: "VICTIM",
		want: func(c cloud) outcome {
			return outcome{Verdict: result.VerdictInvalidConfig, MessageHas: []string{"has the server ATTACKER", c.name + " says the cluster's API server is https://VICTIMHOST"}}
		},
	}, {
		name: "the cluster's server with a CA of its own", server: "VICTIM", ca: "OTHER",
		want: func(c cloud) outcome {
			return outcome{Verdict: result.VerdictInvalidConfig, MessageHas: []string{`certificate-authority-data ("CN=attacker-ca") that is not the cluster's CA`}}
		},
	}, {
		name: "the cluster's server with the system's roots", server: "VICTIM", ca: "NONE",
		want: func(cloud) outcome { return outcome{Verdict: result.VerdictUnreachable} }, // the TLS handshake fails: no root knows the cluster's CA
	}, {
		name: "the identity may not ask the cloud", server: "VICTIM", ca: "VICTIM",
		setup: func(api *cloudauthtest.ClusterAPI, path string, _ cloudauthtest.APICluster) { api.Deny(path) },
		want: func(c cloud) outcome {
			return outcome{Verdict: result.VerdictUnauthorized, MessageHas: []string{c.apiName + " refused " + c.what + " (403)", "permission " + permission[c.name]}}
		},
	}, {
		name: "no such cluster", server: "VICTIM", ca: "VICTIM",
		setup: func(*cloudauthtest.ClusterAPI, string, cloudauthtest.APICluster) {},
		want: func(c cloud) outcome {
			return outcome{Verdict: result.VerdictInvalidConfig, MessageHas: []string{c.apiName + " has no cluster for " + c.what + " (404)"}}
		},
	}}
	for _, c := range clouds {
		for _, tt := range tests {
			t.Run(c.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				victim, attacker := newAPIServer(t), newAPIServer(t)
				// Each case has its own cluster at the API, named by the victim's port.
				path := c.path + "-" + victim.URL[strings.LastIndex(victim.URL, ":")+1:]
				entry, exec := c.entry+"-"+path[strings.LastIndex(path, "-")+1:], c.exec.DeepCopy()
				for i, a := range exec.Args {
					if a == "prod" {
						exec.Args[i] = "prod-" + path[strings.LastIndex(path, "-")+1:]
					}
				}
				apiCluster := c.endpoint(victim)
				if tt.setup != nil {
					tt.setup(c.api, path, apiCluster)
				} else {
					c.api.Add(path, apiCluster)
				}
				user := ""
				if c.user != "" {
					user = c.user + "-" + path[strings.LastIndex(path, "-")+1:]
				}
				src := source(t, exec, c.vars, cloudauth.Options{EKSAPI: eksAPI.URL, GKEAPI: gkeAPI.URL, AKSAPI: aksAPI.URL, HTTPClient: c.api.Client()})
				server := map[string]string{"VICTIM": victim.URL, "ATTACKER": attacker.URL}[tt.server]
				ca := map[string][]byte{"VICTIM": certPEM(victim.Server), "OTHER": otherCA(t)}[tt.ca]
				required, err := src.RequireEndpoint(cloudauth.Entry{Cluster: entry, User: user}, server, ca)
				if err != nil || !required {
					t.Fatalf("RequireEndpoint() = %t, %v; want true, nil", required, err)
				}
				transport := victim.Client().Transport.(*http.Transport).Clone()
				if tt.ca == "NONE" {
					transport.TLSClientConfig.RootCAs = x509.NewCertPool()
				}
				client := &http.Client{Transport: src.WrapTransportFor(server)(transport), Timeout: 20 * time.Second}
				var got outcome
				resp, err := client.Get(server + "/version")
				if err == nil {
					_ = resp.Body.Close()
				} else {
					var e *cloudauth.Error
					got.Verdict = result.VerdictUnreachable
					if errors.As(err, &e) {
						got.Verdict = e.Verdict
					}
					want := tt.want(c)
					r := strings.NewReplacer("VICTIMHOST", strings.TrimPrefix(victim.URL, "https://"), "ATTACKER", attacker.URL,
						`"prod"`, `"`+path[strings.LastIndex(path, "/")+1:]+`"`)
					for _, has := range want.MessageHas {
						if has = r.Replace(has); !strings.Contains(err.Error(), has) {
							t.Errorf("error = %v\nwant it to say %s", err, has)
						}
					}
					got.MessageHas = want.MessageHas
				}
				got.VictimTokens, got.AttackerTokens = victim.tokensSeen(), attacker.tokensSeen()
				if diff := cmp.Diff(tt.want(c), got); diff != "" {
					t.Errorf("outcome (-want +got):\n%s\nerror: %v", diff, err)
				}
			})
		}
	}
}
