package cloudauthtest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// APICluster is what a cloud's API says of a cluster: its API server's endpoint (EKS's
// https://HOST URL, GKE's address or DNS name, AKS's fqdn) and its CA, PEM.
type APICluster struct {
	Endpoint string
	CAData   []byte
	// DNSEndpoint is a GKE cluster's DNS endpoint (controlPlaneEndpointsConfig), if any.
	DNSEndpoint string
	// PrivateFQDN is an AKS cluster's private endpoint (properties.privateFQDN), if any.
	PrivateFQDN string
}

// ClusterAPI is a fake, over TLS, of the cloud API that says where a cluster is: EKS's
// DescribeCluster (GET /clusters/NAME, SigV4-signed with a key the AWS fake knows) or GKE's
// clusters.get (GET /v1/projects/P/locations/L/clusters/C, with a bearer token the check
// accepts) or Azure Resource Manager's managed cluster (GET
// /subscriptions/S/resourceGroups/G/providers/Microsoft.ContainerService/managedClusters/N and
// POST .../N/listClusterUserCredential, with ?api-version= and a bearer token the check
// accepts). A cluster it does not know is a 404, a denied one a 403, an unsigned or
// unauthenticated request a 401, another api-version a 400.
type ClusterAPI struct {
	// URL is the fake's base URL, for cloudauth.Options.EKSAPI, GKEAPI or AKSAPI.
	URL string

	server     *httptest.Server
	prefix     string
	apiVersion string // the ?api-version= every request must give; "" for none
	auth       func(r *http.Request) bool
	answer     func(APICluster) any
	actions    map[string]func(APICluster) any // POST PATH/ACTION, by ACTION

	mu       sync.Mutex
	clusters map[string]APICluster // by the path after prefix
	denied   map[string]bool
	asked    []string
}

// NewEKSAPI starts a fake of EKS's DescribeCluster that accepts requests signed with the keys
// aws knows.
func NewEKSAPI(aws *AWS) *ClusterAPI {
	return newClusterAPI("/clusters/", func(r *http.Request) bool {
		_, err := aws.verifySigned(r, nil)
		return err == nil
	}, func(c APICluster) any {
		return map[string]any{"cluster": map[string]any{
			"endpoint": c.Endpoint, "status": "ACTIVE",
			"certificateAuthority": map[string]any{"data": base64.StdEncoding.EncodeToString(c.CAData)},
		}}
	})
}

// NewGKEAPI starts a fake of GKE's clusters.get that accepts the bearer tokens valid
// accepts. Clusters are added by "projects/P/locations/L/clusters/C".
func NewGKEAPI(valid func(token string) bool) *ClusterAPI {
	return newClusterAPI("/v1/", func(r *http.Request) bool {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		return ok && valid(tok)
	}, func(c APICluster) any {
		out := map[string]any{"endpoint": c.Endpoint, "masterAuth": map[string]any{"clusterCaCertificate": base64.StdEncoding.EncodeToString(c.CAData)}}
		if c.DNSEndpoint != "" {
			out["controlPlaneEndpointsConfig"] = map[string]any{"dnsEndpointConfig": map[string]any{"endpoint": c.DNSEndpoint}}
		}
		return out
	})
}

// AKSAPIVersion is the api-version the fake of Azure Resource Manager serves.
const AKSAPIVersion = "2024-09-01"

// NewAKSAPI starts a fake of Azure Resource Manager's managed clusters (the cluster, and its
// user kubeconfig from listClusterUserCredential, whose CA is the cluster's) that accepts the
// bearer tokens valid accepts. Clusters are added by
// "S/resourceGroups/G/providers/Microsoft.ContainerService/managedClusters/N".
func NewAKSAPI(valid func(token string) bool) *ClusterAPI {
	c := newClusterAPI("/subscriptions/", func(r *http.Request) bool {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		return ok && valid(tok)
	}, func(c APICluster) any {
		props := map[string]any{"provisioningState": "Succeeded", "fqdn": c.Endpoint}
		if c.PrivateFQDN != "" {
			props["privateFQDN"] = c.PrivateFQDN
		}
		return map[string]any{"type": "Microsoft.ContainerService/ManagedClusters", "properties": props}
	})
	c.apiVersion = AKSAPIVersion
	c.actions = map[string]func(APICluster) any{"listClusterUserCredential": func(c APICluster) any {
		kubeconfig := "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster:\n    server: https://" + c.Endpoint + ":443\n" +
			"    certificate-authority-data: " + base64.StdEncoding.EncodeToString(c.CAData) + "\n" +
			"users:\n- name: clusterUser_rg_prod\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: kubelogin\n" +
			"      args: [get-token, --login, devicecode, --server-id, 6dae42f8-4368-4678-94ff-3960e28e3630]\n" +
			"contexts:\n- name: prod\n  context: {cluster: prod, user: clusterUser_rg_prod}\ncurrent-context: prod\n"
		return map[string]any{"kubeconfigs": []any{map[string]any{"name": "clusterUser", "value": base64.StdEncoding.EncodeToString([]byte(kubeconfig))}}}
	}}
	return c
}

func newClusterAPI(prefix string, auth func(*http.Request) bool, answer func(APICluster) any) *ClusterAPI {
	c := &ClusterAPI{prefix: prefix, auth: auth, answer: answer, clusters: map[string]APICluster{}, denied: map[string]bool{}}
	c.server = httptest.NewTLSServer(http.HandlerFunc(c.serve))
	c.URL = c.server.URL
	return c
}

// Close stops the fake.
func (c *ClusterAPI) Close() { c.server.Close() }

// Client is an HTTP client that trusts the fake's certificate (every httptest TLS server's)
// and reaches any other server as the default client does.
func (c *ClusterAPI) Client() *http.Client {
	roots := x509.NewCertPool()
	roots.AddCert(c.server.Certificate())
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
}

// Add makes the fake know a cluster by its path: EKS's name, GKE's
// projects/P/locations/L/clusters/C, AKS's
// S/resourceGroups/G/providers/Microsoft.ContainerService/managedClusters/N.
func (c *ClusterAPI) Add(path string, cluster APICluster) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clusters[path] = cluster
}

// Deny makes the fake answer 403 for the cluster, as the cloud does to an identity without
// the permission.
func (c *ClusterAPI) Deny(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.denied[path] = true
}

// Asked returns the clusters' paths the fake was asked for, in order; a POST's is
// "PATH/ACTION".
func (c *ClusterAPI) Asked() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.asked...)
}

func (c *ClusterAPI) serve(w http.ResponseWriter, r *http.Request) {
	path, ok := strings.CutPrefix(r.URL.Path, c.prefix)
	answer, asked := c.answer, path
	if ok && r.Method == http.MethodPost {
		ok = false
		for name, a := range c.actions {
			if p, found := strings.CutSuffix(path, "/"+name); found {
				path, answer, ok = p, a, true
			}
		}
	}
	if !ok || (r.Method != http.MethodGet && r.Method != http.MethodPost) {
		http.Error(w, `{"message":"not found"}`, http.StatusNotFound)
		return
	}
	if c.apiVersion != "" && r.URL.Query().Get("api-version") != c.apiVersion {
		http.Error(w, `{"error":{"code":"InvalidApiVersionParameter"}}`, http.StatusBadRequest)
		return
	}
	if !c.auth(r) {
		http.Error(w, `{"message":"the request is not authenticated"}`, http.StatusUnauthorized)
		return
	}
	c.mu.Lock()
	c.asked = append(c.asked, asked)
	cluster, known := c.clusters[path]
	denied := c.denied[path]
	c.mu.Unlock()
	switch {
	case denied:
		http.Error(w, `{"message":"access denied"}`, http.StatusForbidden)
	case !known:
		http.Error(w, `{"message":"No cluster found"}`, http.StatusNotFound)
	default:
		writeJSON(w, answer(cluster))
	}
}
