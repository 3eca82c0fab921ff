package cloudauthtest

import (
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Entra is a fake of Microsoft Entra ID's token endpoint for one tenant and one application,
// over TLS with its own CA (azidentity only talks to an https authority): the tenant's
// OpenID configuration, and client credentials grants with a federated client assertion (a
// GitHub OIDC token for api://AzureADTokenExchange, or a token written to a federated token
// file) or a client secret. Only the tokens it issued for ServerID, unexpired, are Valid; those
// for Azure Resource Manager (scope https://management.azure.com/.default) are ValidARM.
type Entra struct {
	// URL is the authority host, for AZURE_AUTHORITY_HOST.
	URL string
	// TenantID and ClientID are the tenant and the application (AZURE_TENANT_ID,
	// AZURE_CLIENT_ID); ClientSecret the secret of --login spn.
	TenantID, ClientID, ClientSecret string
	// ServerID is the AKS server application, the audience of the tokens.
	ServerID string
	// Lifetime of the tokens it issues.
	Lifetime time.Duration

	oidc   *GitHubOIDC
	server *httptest.Server

	mu        sync.Mutex
	federated map[string]bool // assertions accepted besides GitHub's
	issued    issuedTokens    // access tokens for ServerID -> expiry
	arm       issuedTokens    // access tokens for Azure Resource Manager -> expiry
}

// ResourceManagerScope is the scope of Azure Resource Manager's tokens.
const ResourceManagerScope = "https://management.azure.com/.default"

// NewEntra starts the fake; the GitHub tokens it accepts as assertions are oidc's.
func NewEntra(oidc *GitHubOIDC) *Entra {
	e := &Entra{
		TenantID: "72f988bf-86f1-41af-91ab-2d7cd011db47", ClientID: "0f5f6a8e-5b1e-4c5e-9d3a-2e0b1c7d9f11",
		ClientSecret: "entra-secret-" + randomHex(12), ServerID: "6dae42f8-4368-4678-94ff-3960e28e3630",
		Lifetime: time.Hour, oidc: oidc, federated: map[string]bool{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{tenant}/v2.0/.well-known/openid-configuration", e.openIDConfiguration)
	mux.HandleFunc("POST /{tenant}/oauth2/v2.0/token", e.token)
	e.server = httptest.NewUnstartedServer(mux)
	e.server.Config.ErrorLog = log.New(io.Discard, "", 0) // clients that hang up are part of the tests
	e.server.StartTLS()
	e.URL = e.server.URL + "/"
	return e
}

// Close stops the fake.
func (e *Entra) Close() { e.server.Close() }

// Client is an HTTP client that trusts the fake's CA.
func (e *Entra) Client() *http.Client { return e.server.Client() }

// WriteCA writes the fake's CA certificate as PEM into dir, for SSL_CERT_FILE, and returns
// its path.
func (e *Entra) WriteCA(dir string) (string, error) {
	path := filepath.Join(dir, "entra-ca.pem")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.server.Certificate().Raw})
	return path, os.WriteFile(path, data, 0o600)
}

// WriteFederatedToken writes a federated token the fake accepts, as the workload identity
// webhook does, into dir, and returns its path.
func (e *Entra) WriteFederatedToken(dir string) (string, error) {
	tok := "eyJhbGciOiJSUzI1NiJ9.federated." + randomHex(24)
	e.mu.Lock()
	e.federated[tok] = true
	e.mu.Unlock()
	path := filepath.Join(dir, "azure-identity-token")
	return path, os.WriteFile(path, []byte(tok), 0o600)
}

// ValidARM reports whether token is one the fake issued for Azure Resource Manager and has not
// expired.
func (e *Entra) ValidARM(token string) bool { return e.arm.valid(token) }

// Valid reports whether token is one the fake issued for ServerID and has not expired.
func (e *Entra) Valid(token string) (string, bool) {
	if !e.issued.valid(token) {
		return "", false
	}
	return e.ClientID, true
}

func (e *Entra) openIDConfiguration(w http.ResponseWriter, r *http.Request) {
	base := e.URL + r.PathValue("tenant")
	writeJSON(w, map[string]any{
		"token_endpoint":         base + "/oauth2/v2.0/token",
		"authorization_endpoint": base + "/oauth2/v2.0/authorize",
		"issuer":                 base + "/v2.0",
	})
}

func (e *Entra) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		entraError(w, "invalid_request", "AADSTS900144: malformed request")
		return
	}
	f := r.PostForm
	e.mu.Lock()
	federated := e.federated[f.Get("client_assertion")]
	e.mu.Unlock()
	arm := strings.Contains(" "+f.Get("scope")+" ", " "+ResourceManagerScope+" ")
	switch {
	case r.PathValue("tenant") != e.TenantID:
		entraError(w, "invalid_request", "AADSTS90002: Tenant not found.")
		return
	case f.Get("grant_type") != "client_credentials":
		entraError(w, "unsupported_grant_type", "AADSTS70003: unsupported grant type")
		return
	case f.Get("client_id") != e.ClientID:
		entraError(w, "unauthorized_client", "AADSTS700016: Application not found in the directory.")
		return
	case !strings.Contains(" "+f.Get("scope")+" ", " "+e.ServerID+"/.default ") && !arm:
		entraError(w, "invalid_scope", "AADSTS70011: The provided value for scope is not valid.")
		return
	case f.Has("client_assertion"):
		if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" ||
			(!federated && !e.oidc.Issued(f.Get("client_assertion"), "api://AzureADTokenExchange")) {
			entraError(w, "invalid_client", "AADSTS700213: No matching federated identity record found for presented assertion.")
			return
		}
	case f.Get("client_secret") != e.ClientSecret:
		entraError(w, "invalid_client", "AADSTS7000215: Invalid client secret provided.")
		return
	}
	tok := "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.aks-" + randomHex(32)
	if arm {
		tok = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.arm-" + randomHex(32)
		e.arm.add(tok, time.Now().Add(e.Lifetime))
	} else {
		e.issued.add(tok, time.Now().Add(e.Lifetime))
	}
	seconds := int(e.Lifetime / time.Second)
	writeJSON(w, map[string]any{"token_type": "Bearer", "expires_in": seconds, "ext_expires_in": seconds, "access_token": tok})
}

func entraError(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = fmt.Fprintf(w, `{"error":%q,"error_description":%q,"error_codes":[700016],"trace_id":%q}`, code, msg, randomHex(8))
}
