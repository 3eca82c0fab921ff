package kubeconfig

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// selfSignedCA is the PEM of a new self-signed CA named cn.
func selfSignedCA(t *testing.T, cn string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestRepositoryKubeconfigPinnedCA: where the cloud cannot be asked where the cluster is (AKS
// without AZURE_SUBSCRIPTION_ID, whether or not the server is in allowed-servers), the workflow's pinned-ca
// (--pinned-ca FILE) decides which CAs a repository kubeconfig may trust with the job's token:
// every certificate of its certificate-authority-data must be pinned, and it must give one.
// AKS with nothing pinned and no subscription is refused, saying what to set; with the
// subscription, Azure Resource Manager is asked (TestRepositoryClusterLocatedByTheCloud). The
// workflow's own kubeconfig keeps the file's CA as it is. Bad PEM is bad input.
func TestRepositoryKubeconfigPinnedCA(t *testing.T) {
	t.Parallel()
	clusterCA, otherCA := selfSignedCA(t, "cluster-ca"), selfSignedCA(t, "attacker-ca")
	aks := &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1beta1", Command: "kubelogin",
		Args: []string{"get-token", "--login", "spn", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"},
	}}
	otherApp := aks.DeepCopy()
	otherApp.Exec.Args[4] = "3f9c1d52-7a4e-4b8f-9d21-6e0c5a7b8f14"
	const anotherApp = `the kubeconfig's cluster "a": AKS credentials (kubelogin get-token, built in): the built-in provider asks Azure Resource Manager where a repository kubeconfig's AKS cluster is before it sends a token, ` +
		`and AZURE_SUBSCRIPTION_ID is not set: set it in the step's env: to the cluster's subscription; until it is asked, the token of a repository kubeconfig is made only for ` +
		`AKS-managed Microsoft Entra ID's server application (--server-id 6dae42f8-4368-4678-94ff-3960e28e3630), the audience every AKS cluster accepts, and the kubeconfig's --server-id is another: ` +
		`a kubeconfig from the repository does not choose the audience of a token for a cluster the cloud is not asked about, even for a server the workflow allows or a CA it pins ` +
		`(or put the kubeconfig in the workflow: the kubeconfig input, an env: source)`
	const (
		aksServer = "https://prod-dns-1a2b3c4d.hcp.westeurope.azmk8s.io"
		own       = "https://k8s.internal.example:6443"
		why       = `, and a kubeconfig from the repository (file:kc/config.yaml) never chooses which server may take the job's AKS token, and the pinned-ca input pins the CAs it may trust`
	)
	tests := []struct {
		name        string
		server      string
		user        *clientcmdapi.AuthInfo
		ca          string
		pinned      string
		pinnedFile  string // the CLI's --pinned-ca, a file holding pinned
		allowed     []string
		env         bool
		aksNames    bool // the subscription set; the user named as az aks get-credentials names it unless the case is refused
		wantInvalid string
		wantErr     string
	}{{
		name: "the pinned CA", server: aksServer, user: aks, ca: clusterCA, pinned: otherCA + clusterCA,
	}, {
		name: "a CA of its own", server: aksServer, user: aks, ca: otherCA, pinned: clusterCA,
		wantInvalid: `the kubeconfig's cluster "a" has a certificate-authority-data ("CN=attacker-ca") that is none of the pinned CAs` + why +
			`: give the cluster's own CA, or pin it in the pinned-ca input`,
	}, {
		name: "the pinned CA and one of its own", server: aksServer, user: aks, ca: clusterCA + otherCA, pinned: clusterCA,
		wantInvalid: `the kubeconfig's cluster "a" has a certificate-authority-data ("CN=attacker-ca") that is none of the pinned CAs` + why +
			`: give the cluster's own CA, or pin it in the pinned-ca input`,
	}, {
		name: "no CA", server: aksServer, user: aks, pinned: clusterCA,
		wantInvalid: `the kubeconfig's cluster "a" gives no certificate-authority-data` + why + `: give the cluster's CA (certificate-authority-data), one of those pinned`,
	}, {
		name: "a CA of its own, nothing pinned", server: aksServer, user: aks, ca: otherCA,
		wantInvalid: `the kubeconfig's cluster "a": AKS credentials (kubelogin get-token, built in): the built-in provider asks Azure Resource Manager where a repository kubeconfig's AKS cluster is before it sends a token, ` +
			`and AZURE_SUBSCRIPTION_ID is not set: set it in the step's env: to the cluster's subscription; or list its server in the allowed-servers input, or pin its CA with the pinned-ca input`,
	}, {
		name: "nothing pinned, the user not named as az aks get-credentials names it", server: aksServer, user: aks, ca: otherCA,
		aksNames: true, wantInvalid: `the kubeconfig's cluster "a": AKS credentials (kubelogin get-token, built in): the built-in provider asks Azure Resource Manager where a repository kubeconfig's AKS cluster is before it sends a token, ` +
			`and the kubeconfig's user is named "a" and its cluster "a", not clusterUser_RESOURCEGROUP_NAME and NAME as az aks get-credentials names them (the resource group and the name of the managed cluster): ` +
			`rename the entries (and the context's user: and cluster:); or list its server in the allowed-servers input, or pin its CA with the pinned-ca input`,
	}, {
		name: "nothing pinned, the subscription set: the cloud is asked", server: aksServer, user: aks, ca: otherCA, aksNames: true,
	}, {
		name: "a CA of its own pinned against, the subscription set: the cloud is asked, not the pins", server: aksServer, user: aks, ca: otherCA, pinned: clusterCA, aksNames: true,
	}, {
		name: "a CA of its own in the workflow's own kubeconfig", server: aksServer, user: aks, ca: otherCA, pinned: clusterCA, env: true,
	}, {
		// The list says where the token may go, not which cluster it is for: the cloud is
		// asked all the same (TestRepositoryKubeconfigServerFromTheCloud), and its CA decides.
		name: "an EKS server the workflow allows, with a CA of its own: the cloud is asked, not the pins", server: own, user: execUser(), ca: otherCA, pinned: clusterCA, allowed: []string{own},
	}, {
		name: "an AKS server the workflow allows, no subscription, with a CA of its own", server: own, user: aks, ca: otherCA, pinned: clusterCA, allowed: []string{own},
		wantInvalid: `the kubeconfig's cluster "a" has a certificate-authority-data ("CN=attacker-ca") that is none of the pinned CAs` + why +
			`: give the cluster's own CA, or pin it in the pinned-ca input`,
	}, {
		name: "an AKS server the workflow allows, no subscription, nothing pinned", server: own, user: aks, ca: otherCA, allowed: []string{own},
	}, {
		// The file would choose the audience of the token the allowed server gets.
		name: "an AKS server the workflow allows, no subscription, another server application", server: own, user: otherApp, ca: otherCA, allowed: []string{own},
		wantInvalid: anotherApp,
	}, {
		name: "the pinned CA, no subscription, another server application", server: aksServer, user: otherApp, ca: clusterCA, pinned: clusterCA,
		wantInvalid: anotherApp,
	}, {
		name: "the CLI's --pinned-ca file", server: aksServer, user: aks, ca: clusterCA, pinnedFile: clusterCA,
	}, {
		name: "pinned-ca is not PEM", server: aksServer, user: aks, ca: clusterCA, pinned: "MIIBhTCCASugAwIBAgIQ",
		wantErr: `input pinned-ca is not PEM CA certificates (20 byte(s) that are not a PEM block): give the clusters' CA certificates, each from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := newConfig("a")
			cfg.Clusters["a"] = &clientcmdapi.Cluster{Server: tt.server, CertificateAuthorityData: []byte(tt.ca)}
			cfg.AuthInfos["a"] = tt.user.DeepCopy()
			vars := map[string]string{"AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "t", "AZURE_CLIENT_SECRET": "azs-" + marker + "-Q8x7Yv", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"}
			if tt.aksNames {
				vars["AZURE_SUBSCRIPTION_ID"] = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"
				if tt.wantInvalid == "" {
					delete(cfg.AuthInfos, "a")
					cfg.AuthInfos["clusterUser_my-rg_a"], cfg.Contexts["a"].AuthInfo = tt.user.DeepCopy(), "clusterUser_my-rg_a"
				}
			}
			kc := yamlOf(t, cfg)
			vars["KC"] = kc
			files := map[string]string{"/ws/kc/config.yaml": kc, "/ws/pinned.pem": tt.pinnedFile}
			in := Input{Clusters: "c=file:kc/config.yaml", AllowedServers: tt.allowed, PinnedCA: tt.pinned}
			if tt.pinnedFile != "" {
				in.PinnedCAFile = "/ws/pinned.pem"
			}
			if tt.env {
				in.Clusters = "c=env:KC"
			}
			clusters, _, err := Load(in, fakeEnv{files: files, vars: vars}.env())
			if tt.wantErr != "" || err != nil {
				got := ""
				if err != nil {
					got = err.Error()
				}
				if diff := cmp.Diff(tt.wantErr, got); diff != "" {
					t.Errorf("Load() error (-want +got):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff(tt.wantInvalid, clusters[0].Invalid); diff != "" {
				t.Errorf("Invalid (-want +got):\n%s", diff)
			}
			if tt.wantInvalid == "" && (clusters[0].Config == nil || clusters[0].Config.WrapTransport == nil) {
				t.Errorf("Config = %+v, want the cluster served by the built-in provider", clusters[0].Config)
			}
		})
	}
}
