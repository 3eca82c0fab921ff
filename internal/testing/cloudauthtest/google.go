package cloudauthtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Google is a fake of the Google endpoints workload identity federation goes through, as
// google-github-actions/auth sets it up: Security Token Service's token exchange (a GitHub
// OIDC token for a federated access token) and IAM Credentials' generateAccessToken (the
// federated token for a service account's access token). Only the service account's tokens
// it issued, unexpired, are Valid.
type Google struct {
	URL string
	// ServiceAccount is the account impersonated; Audience the workload identity provider.
	ServiceAccount, Audience string
	// Lifetime of the access tokens it issues (an hour, unless a test shortens it).
	Lifetime time.Duration

	oidc   *GitHubOIDC
	server *httptest.Server

	mu        sync.Mutex
	federated map[string]bool // tokens of the exchange
	issued    issuedTokens    // service account tokens -> expiry
}

// NewGoogle starts the fake; the OIDC tokens it exchanges are oidc's.
func NewGoogle(oidc *GitHubOIDC) *Google {
	g := &Google{
		ServiceAccount: "deployer@my-project.iam.gserviceaccount.com",
		Audience:       "//iam.googleapis.com/projects/123456789/locations/global/workloadIdentityPools/github/providers/org",
		Lifetime:       time.Hour, oidc: oidc, federated: map[string]bool{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/token", g.exchange)
	mux.HandleFunc("POST /v1/projects/-/serviceAccounts/{account}", g.generateAccessToken)
	g.server = httptest.NewServer(mux)
	g.URL = g.server.URL
	return g
}

// Close stops the fake.
func (g *Google) Close() { g.server.Close() }

// Valid reports whether token is a service account token the fake issued and that has not
// expired, and whose it is.
func (g *Google) Valid(token string) (string, bool) {
	if !g.issued.valid(token) {
		return "", false
	}
	return g.ServiceAccount, true
}

// WriteCredentialsFile writes the credentials file google-github-actions/auth writes for
// workload identity federation with service account impersonation, with the fake's URLs, into
// dir, and returns its path.
func (g *Google) WriteCredentialsFile(dir string) (string, error) {
	file := map[string]any{ //nolint:gosec // G101: the fake's own throwaway request token
		"type":                              "external_account",
		"audience":                          g.Audience,
		"subject_token_type":                "urn:ietf:params:oauth:token-type:jwt",
		"token_url":                         g.URL + "/v1/token",
		"service_account_impersonation_url": g.URL + "/v1/projects/-/serviceAccounts/" + g.ServiceAccount + ":generateAccessToken",
		"credential_source": map[string]any{
			"url":     g.oidc.RequestURL + "&audience=" + g.oidcAudience(),
			"headers": map[string]string{"Authorization": "Bearer " + g.oidc.RequestToken},
			"format":  map[string]string{"type": "json", "subject_token_field_name": "value"},
		},
	}
	data, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "gha-creds-"+randomHex(6)+".json")
	return path, os.WriteFile(path, data, 0o600)
}

// oidcAudience is the audience google-github-actions/auth asks GitHub for.
func (g *Google) oidcAudience() string {
	return "https://iam.googleapis.com/" + strings.TrimPrefix(g.Audience, "//iam.googleapis.com/")
}

// exchange is STS's token exchange: a GitHub OIDC token for the workload identity provider,
// for a federated access token.
func (g *Google) exchange(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		googleError(w, http.StatusBadRequest, "invalid_request", "malformed form")
		return
	}
	f := r.PostForm
	switch {
	case f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange":
		googleError(w, http.StatusBadRequest, "unsupported_grant_type", "not a token exchange")
	case f.Get("audience") != g.Audience:
		googleError(w, http.StatusBadRequest, "invalid_target", "unknown workload identity provider")
	case !g.oidc.Issued(f.Get("subject_token"), g.oidcAudience()):
		googleError(w, http.StatusBadRequest, "invalid_grant", "the subject token is not a valid OIDC token for this provider")
	default:
		tok := "gcp-federated-" + randomHex(24)
		g.mu.Lock()
		g.federated[tok] = true
		g.mu.Unlock()
		writeJSON(w, map[string]any{ //nolint:gosec // G101: a token the fake just made up
			"access_token": tok, "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
			"token_type": "Bearer", "expires_in": 3600,
		})
	}
}

// generateAccessToken is IAM Credentials' impersonation of the service account.
func (g *Google) generateAccessToken(w http.ResponseWriter, r *http.Request) {
	account := strings.TrimSuffix(r.PathValue("account"), ":generateAccessToken")
	g.mu.Lock()
	ok := g.federated[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	g.mu.Unlock()
	switch {
	case !ok:
		googleError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
		return
	case account != g.ServiceAccount:
		googleError(w, http.StatusForbidden, "PERMISSION_DENIED", "Permission 'iam.serviceAccounts.getAccessToken' denied")
		return
	}
	tok := "ya29.fake-" + randomHex(32)
	expiry := time.Now().Add(g.Lifetime)
	g.issued.add(tok, expiry)
	writeJSON(w, map[string]any{"accessToken": tok, "expireTime": expiry.UTC().Format(time.RFC3339)})
}

func googleError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": code, "error_description": msg})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}
