package cloudauthtest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
)

// GitHubOIDC is a fake of the OIDC token endpoint GitHub gives a job with
// `permissions: id-token: write`: ACTIONS_ID_TOKEN_REQUEST_URL answers a GET with the
// request token as bearer with {"value": TOKEN} for the audience asked.
type GitHubOIDC struct {
	// RequestURL and RequestToken are ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN.
	RequestURL, RequestToken string

	server *httptest.Server
	mu     sync.Mutex
	issued map[string]string // token -> audience
}

// NewGitHubOIDC starts the fake.
func NewGitHubOIDC() *GitHubOIDC {
	o := &GitHubOIDC{RequestToken: "ghs_" + randomHex(20), issued: map[string]string{}}
	o.server = httptest.NewServer(http.HandlerFunc(o.serve))
	// GitHub's URL already carries a query; the audience is added to it.
	o.RequestURL = o.server.URL + "/_apis/distributedtask/hubs/build/plans/1/jobs/2/idtoken?api-version=2.0"
	return o
}

// Close stops the fake.
func (o *GitHubOIDC) Close() { o.server.Close() }

// Issued reports whether the fake issued token for audience.
func (o *GitHubOIDC) Issued(token, audience string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	a, ok := o.issued[token]
	return ok && a == audience
}

func (o *GitHubOIDC) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+o.RequestToken && r.Header.Get("Authorization") != "bearer "+o.RequestToken {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	audience := r.URL.Query().Get("audience")
	claims, _ := json.Marshal(map[string]any{"iss": "https://token.actions.githubusercontent.com", "aud": audience, "sub": "repo:org/app:ref:refs/heads/main", "jti": randomHex(8)})
	token := "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9." + base64.RawURLEncoding.EncodeToString(claims) + "." + randomHex(32)
	o.mu.Lock()
	o.issued[token] = audience
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]any{"count": len(token), "value": token})
}
