package cloudauth_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/org/app-status-action/internal/cloudauth"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/cloudauthtest"
)

// aksExec is the exec of a user as az aks get-credentials writes it for a cluster with
// Microsoft Entra ID (login devicecode), or as kubelogin convert-kubeconfig -l LOGIN does.
func aksExec(login, tenant string) *clientcmdapi.ExecConfig {
	args := []string{"get-token", "--environment", "AzurePublicCloud", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"}
	if login == "devicecode" {
		args = append(args, "--client-id", "80faf920-1908-4b52-b5ef-a8e7bedfc67a", "--tenant-id", tenant)
	}
	return &clientcmdapi.ExecConfig{
		APIVersion:      "client.authentication.k8s.io/v1beta1",
		Command:         "kubelogin",
		Args:            append(args, "--login", login),
		InstallHint:     "kubelogin is not installed which is required to connect to AAD enabled cluster.",
		InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode,
	}
}

// entraFakes starts GitHub's OIDC fake and the Entra ID fake.
func entraFakes(t *testing.T) (*cloudauthtest.GitHubOIDC, *cloudauthtest.Entra) {
	t.Helper()
	oidc := cloudauthtest.NewGitHubOIDC()
	t.Cleanup(oidc.Close)
	entra := cloudauthtest.NewEntra(oidc)
	t.Cleanup(entra.Close)
	return oidc, entra
}

// TestAKSWorkloadIdentity: kubelogin's workload identity login, from GitHub's OIDC token (a
// job with id-token: write) or from a federated token file, and a service principal's secret,
// get a token for the AKS server application from Entra ID (the TLS fake at
// AZURE_AUTHORITY_HOST); AAD_LOGIN_METHOD turns the devicecode kubeconfig az aks
// get-credentials writes into a workload identity one, as it does for kubelogin.
func TestAKSWorkloadIdentity(t *testing.T) {
	t.Parallel()
	oidc, entra := entraFakes(t)
	file, err := entra.WriteFederatedToken(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	common := map[string]string{"AZURE_AUTHORITY_HOST": entra.URL, "AZURE_CLIENT_ID": entra.ClientID, "AZURE_TENANT_ID": entra.TenantID}
	with := func(more map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range []map[string]string{common, more} {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	tests := []struct {
		name string
		exec *clientcmdapi.ExecConfig
		vars map[string]string
		// secret must reach OnSecret.
		secret string
	}{{
		name:   "GitHub OIDC",
		exec:   aksExec("workloadidentity", ""),
		vars:   with(map[string]string{"ACTIONS_ID_TOKEN_REQUEST_URL": oidc.RequestURL, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": oidc.RequestToken}),
		secret: oidc.RequestToken,
	}, {
		name: "federated token file",
		exec: aksExec("workloadidentity", ""),
		vars: with(map[string]string{"AZURE_FEDERATED_TOKEN_FILE": file}),
	}, {
		name: "devicecode kubeconfig with AAD_LOGIN_METHOD",
		exec: aksExec("devicecode", entra.TenantID),
		vars: with(map[string]string{"AAD_LOGIN_METHOD": "workloadidentity", "ACTIONS_ID_TOKEN_REQUEST_URL": oidc.RequestURL, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": oidc.RequestToken}),
	}, {
		name:   "service principal secret",
		exec:   aksExec("spn", ""),
		vars:   with(map[string]string{"AZURE_CLIENT_SECRET": entra.ClientSecret}),
		secret: entra.ClientSecret,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			secrets := &recorder{}
			src := source(t, tt.exec, tt.vars, cloudauth.Options{OnSecret: secrets.add, HTTPClient: entra.Client()})
			tok := token(t, src)
			if _, ok := entra.Valid(tok); !ok {
				t.Fatalf("the token is not one Entra ID issued")
			}
			for _, s := range []string{tt.secret, tok} {
				if s != "" && !secrets.has(s) {
					t.Errorf("OnSecret never got %.12s…", s)
				}
			}
		})
	}
}

// TestAKSRefused: an application without a federated credential for the workflow is the
// cluster's Unauthorized verdict, quoting Entra ID's error.
func TestAKSRefused(t *testing.T) {
	t.Parallel()
	_, entra := entraFakes(t)
	otherOIDC := cloudauthtest.NewGitHubOIDC() // tokens Entra ID does not trust
	defer otherOIDC.Close()
	src := source(t, aksExec("workloadidentity", ""), map[string]string{
		"AZURE_AUTHORITY_HOST": entra.URL, "AZURE_CLIENT_ID": entra.ClientID, "AZURE_TENANT_ID": entra.TenantID,
		"ACTIONS_ID_TOKEN_REQUEST_URL": otherOIDC.RequestURL, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": otherOIDC.RequestToken,
	}, cloudauth.Options{HTTPClient: entra.Client()})
	_, err := src.Token(context.Background())
	var e *cloudauth.Error
	if !errors.As(err, &e) || e.Verdict != result.VerdictUnauthorized || !strings.Contains(e.Message, "AKS credentials (kubelogin get-token, built in): could not get a token:") || !strings.Contains(e.Message, "AADSTS700213") {
		t.Errorf("Token() error = %v, want Unauthorized naming the provider and quoting Entra ID", err)
	}
}

// TestAKSServerIDFromRepository (attacker): kubelogin's --server-id is the audience of the
// job's token. A repository kubeconfig may ask only for a server application's (a GUID), never
// for a URL (https://management.azure.com would get an Azure Resource Manager token) nor for
// Microsoft's own services; the workflow's own kubeconfig keeps kubelogin's rules.
func TestAKSServerIDFromRepository(t *testing.T) {
	t.Parallel()
	const refused = "AKS credentials (kubelogin get-token, built in): kubelogin --server-id is not an AKS server application ID"
	tests := []struct {
		serverID   string
		repository bool
		wantErr    bool
	}{
		{"6dae42f8-4368-4678-94ff-3960e28e3630", true, false},
		{"0F1E2D3C-AAAA-BBBB-CCCC-0123456789AB", true, false}, // a legacy integration's own server application
		{"https://management.azure.com", true, true},
		{"https://management.azure.com/", true, true},
		{"797f4846-ba00-4fd7-ba43-dac1f8f63013", true, true}, // Azure Resource Manager
		{"00000003-0000-0000-c000-000000000000", true, true}, // Microsoft Graph
		{"https://vault.azure.net", true, true},
		{"api://6dae42f8-4368-4678-94ff-3960e28e3630", true, true},
		{"6dae42f8-4368-4678-94ff-3960e28e3630/", true, true},
		{"6dae42f8x4368-4678-94ff-3960e28e3630", true, true},
		{"6dae42f8-4368-4678-94ff-3960e28e363g", true, true},
		{"https://management.azure.com", false, false},
	}
	for _, tt := range tests {
		exec := aksExec("spn", "")
		for i, a := range exec.Args {
			if a == "--server-id" {
				exec.Args[i+1] = tt.serverID
			}
		}
		vars := map[string]string{"AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "AZURE_CLIENT_SECRET": "s"}
		_, err := cloudauth.Recognise(exec).NewSource(cloudauth.Options{Getenv: func(k string) string { return vars[k] }, Repository: tt.repository})
		if got := err != nil && strings.Contains(err.Error(), refused); got != tt.wantErr || (err != nil && !got) {
			t.Errorf("NewSource(--server-id %s, Repository: %t) error = %v, want refused: %t", tt.serverID, tt.repository, err, tt.wantErr)
		}
	}
}

// TestAKSLocatable: Azure Resource Manager is asked where a repository kubeconfig's AKS
// cluster is with the subscription of AZURE_SUBSCRIPTION_ID and the resource group and name
// of the entries az aks get-credentials writes (user clusterUser_RESOURCEGROUP_NAME, cluster
// NAME); when one is missing, RequireEndpoint says which, before anything is contacted, and
// CannotLocate is true of its error, so that the workflow's pinned CA may stand in. Nothing
// stands in for the audience: a kubeconfig whose --server-id is not AKS-managed Entra ID's is
// then refused for good (CannotLocate false), as it would choose what the token is for.
func TestAKSLocatable(t *testing.T) {
	t.Parallel()
	const sub = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"
	tests := []struct {
		name        string
		vars        map[string]string
		environment string // kubelogin's --environment, when not AzurePublicCloud
		serverID    string // kubelogin's --server-id, when not AKS-managed Entra ID's
		entry       cloudauth.Entry
		wantSays    string // "" when the cloud can be asked
		wantFinal   bool   // refused for good: no allowed server or pinned CA stands in
	}{{
		name:  "as az aks get-credentials writes it",
		vars:  map[string]string{"AZURE_SUBSCRIPTION_ID": sub},
		entry: cloudauth.Entry{Cluster: "prod", User: "clusterUser_my-rg_prod"},
	}, {
		name:  "a resource group with underscores, an admin user",
		vars:  map[string]string{"AZURE_SUBSCRIPTION_ID": sub},
		entry: cloudauth.Entry{Cluster: "prod_1", User: "clusterAdmin_my_rg.eu_prod_1"},
	}, {
		name:        "the China cloud",
		vars:        map[string]string{"AZURE_SUBSCRIPTION_ID": sub},
		environment: "AzureChinaCloud",
		entry:       cloudauth.Entry{Cluster: "prod", User: "clusterUser_my-rg_prod"},
	}, {
		name:     "no subscription",
		entry:    cloudauth.Entry{Cluster: "prod", User: "clusterUser_my-rg_prod"},
		wantSays: "AZURE_SUBSCRIPTION_ID is not set: set it in the step's env: to the cluster's subscription",
	}, {
		name:     "a subscription that is no GUID",
		vars:     map[string]string{"AZURE_SUBSCRIPTION_ID": "my-subscription"},
		entry:    cloudauth.Entry{Cluster: "prod", User: "clusterUser_my-rg_prod"},
		wantSays: "AZURE_SUBSCRIPTION_ID is not a subscription ID (a GUID)",
	}, {
		name:     "a user named otherwise",
		vars:     map[string]string{"AZURE_SUBSCRIPTION_ID": sub},
		entry:    cloudauth.Entry{Cluster: "prod", User: "deployer"},
		wantSays: `the kubeconfig's user is named "deployer" and its cluster "prod", not clusterUser_RESOURCEGROUP_NAME and NAME as az aks get-credentials names them`,
	}, {
		name:     "a cluster entry renamed",
		vars:     map[string]string{"AZURE_SUBSCRIPTION_ID": sub},
		entry:    cloudauth.Entry{Cluster: "production", User: "clusterUser_my-rg_prod"},
		wantSays: `the kubeconfig's user is named "clusterUser_my-rg_prod" and its cluster "production", not clusterUser_RESOURCEGROUP_NAME and NAME`,
	}, {
		name:     "a name that is no AKS cluster's",
		vars:     map[string]string{"AZURE_SUBSCRIPTION_ID": sub},
		entry:    cloudauth.Entry{Cluster: "prod/../x", User: "clusterUser_my-rg_prod/../x"},
		wantSays: `not clusterUser_RESOURCEGROUP_NAME and NAME`,
	}, {
		name:        "a cloud whose Azure Resource Manager is not known",
		vars:        map[string]string{"AZURE_SUBSCRIPTION_ID": sub, "AZURE_AUTHORITY_HOST": "https://login.example.org/"},
		environment: "AzureStackCloud",
		entry:       cloudauth.Entry{Cluster: "prod", User: "clusterUser_my-rg_prod"},
		wantSays:    "kubelogin --environment names a cloud whose Azure Resource Manager it does not know",
	}, {
		// The file would choose the audience of a token sent to an allowed server.
		name:     "no subscription, another server application",
		serverID: "3f9c1d52-7a4e-4b8f-9d21-6e0c5a7b8f14",
		entry:    cloudauth.Entry{Cluster: "prod", User: "clusterUser_my-rg_prod"},
		wantSays: "AZURE_SUBSCRIPTION_ID is not set: set it in the step's env: to the cluster's subscription; until it is asked, the token of a repository kubeconfig is made only for " +
			"AKS-managed Microsoft Entra ID's server application (--server-id 6dae42f8-4368-4678-94ff-3960e28e3630), the audience every AKS cluster accepts, and the kubeconfig's --server-id is another",
		wantFinal: true,
	}, {
		name:      "a user named otherwise, another server application",
		serverID:  "3f9c1d52-7a4e-4b8f-9d21-6e0c5a7b8f14",
		vars:      map[string]string{"AZURE_SUBSCRIPTION_ID": sub},
		entry:     cloudauth.Entry{Cluster: "prod", User: "deployer"},
		wantSays:  "even for a server the workflow allows or a CA it pins (or put the kubeconfig in the workflow: the kubeconfig input, an env: source)",
		wantFinal: true,
	}, {
		name:     "the subscription, another server application",
		serverID: "3f9c1d52-7a4e-4b8f-9d21-6e0c5a7b8f14",
		vars:     map[string]string{"AZURE_SUBSCRIPTION_ID": sub},
		entry:    cloudauth.Entry{Cluster: "prod", User: "clusterUser_my-rg_prod"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			exec := aksExec("spn", "")
			if tt.environment != "" {
				exec.Args[2] = tt.environment
			}
			if tt.serverID != "" {
				exec.Args[4] = tt.serverID
			}
			vars := map[string]string{"AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "AZURE_CLIENT_SECRET": "azs-Q8x7Yv-secret"}
			for k, v := range tt.vars {
				vars[k] = v
			}
			src := source(t, exec, vars, cloudauth.Options{Repository: true})
			required, err := src.RequireEndpoint(tt.entry, "https://prod-dns-1a2b3c4d.hcp.westeurope.azmk8s.io:443", nil)
			type outcome struct {
				Required, CannotLocate bool
				Verdict                result.Verdict
			}
			got, want := outcome{Required: required, CannotLocate: cloudauth.CannotLocate(err)}, outcome{Required: true}
			if tt.wantSays != "" {
				want = outcome{CannotLocate: !tt.wantFinal, Verdict: result.VerdictInvalidConfig}
				if err == nil || !strings.Contains(err.Error(), tt.wantSays) {
					t.Errorf("RequireEndpoint() error = %v\nwant it to say %s", err, tt.wantSays)
				}
			}
			var e *cloudauth.Error
			if errors.As(err, &e) {
				got.Verdict = e.Verdict
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("RequireEndpoint() (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}
