package fakegithub

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Issuer is GitHub's OIDC issuer for Actions and a job's ID-token endpoint, served over HTTPS
// on 127.0.0.1 with a certificate of its own (CAPEM): the discovery document
// (/.well-known/openid-configuration), the signing keys (/.well-known/jwks) and the endpoint
// a job with `id-token: write` asks (RequestURL, bearer RequestToken, &audience=AUD), which
// answers {"value": TOKEN}: an RS256 JWT whose iss is URL, signed with the issuer's key, as an
// API server's AuthenticationConfiguration can trust. NewGitLabIssuer makes a GitLab
// instance's issuer instead: the same discovery, keys and tokens, with GitLab's claims and no
// job endpoint (a GitLab job finds its token in an id_tokens: variable).
type Issuer struct {
	// URL is the issuer, https://127.0.0.1:PORT: the iss claim of its tokens.
	URL string
	// CAPEM is the certificate its server presents, for certificateAuthority.
	CAPEM []byte
	// RequestURL and RequestToken are ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN; empty for
	// GitLab.
	RequestURL, RequestToken string

	server    *httptest.Server
	key       *rsa.PrivateKey
	now       func() time.Time
	supported []string // the discovery document's claims_supported

	mu       sync.Mutex
	claims   map[string]any // the job's claims, besides iss, aud, iat, nbf and exp
	lifetime time.Duration
	issued   []Issued // the endpoint's tokens, in order
}

// Issued is a token the job's endpoint gave.
type Issued struct {
	Audience string
	// At is when it was asked; Expiry is its exp claim.
	At, Expiry time.Time
}

// keyID names the issuer's signing key in its JWKS and in its tokens' headers.
const keyID = "fakegithub-1"

// jobEndpointPath is the path of the job's ID-token endpoint.
const jobEndpointPath = "/_apis/distributedtask/hubs/build/plans/1/jobs/2/idtoken"

// NewIssuer starts the issuer; its tokens carry claims (repository, environment...) and live
// for 5 minutes. Close it when done.
func NewIssuer(claims map[string]any) (*Issuer, error) {
	i, err := start([]string{"ref", "ref_protected", "repository", "repository_owner", "environment", "event_name"})
	if err != nil {
		return nil, err
	}
	i.claims = claims
	i.RequestToken = "ghs_" + rand.Text()
	i.RequestURL = i.URL + jobEndpointPath + "?api-version=2.0"
	return i, nil
}

// NewGitLabIssuer starts a GitLab instance's issuer, whose URL stands for the instance's (as
// https://gitlab.com): its discovery document and keys, and Token for the tokens a job's
// id_tokens: declare (project_path, namespace_path, ref, ref_type, ref_protected,
// environment...). Close it when done.
func NewGitLabIssuer() (*Issuer, error) {
	return start([]string{"project_path", "namespace_path", "ref", "ref_type", "ref_protected", "environment",
		"environment_protected", "pipeline_source", "user_login"})
}

func start(claims []string) (*Issuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("fakegithub: issuer key: %w", err)
	}
	i := &Issuer{key: key, now: time.Now, lifetime: 5 * time.Minute,
		supported: append([]string{"sub", "aud", "exp", "iat", "iss", "jti", "nbf"}, claims...)}
	i.server = httptest.NewTLSServer(http.HandlerFunc(i.serve))
	i.URL = i.server.URL
	i.CAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: i.server.Certificate().Raw})
	return i, nil
}

// Client is an HTTP client that trusts the issuer's certificate, for the job's requests.
func (i *Issuer) Client() *http.Client { return i.server.Client() }

// Close stops the issuer.
func (i *Issuer) Close() { i.server.Close() }

// SetClaims replaces the claims of the tokens the endpoint issues from now on.
func (i *Issuer) SetClaims(claims map[string]any) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.claims = claims
}

// SetLifetime sets how long the tokens issued from now on live.
func (i *Issuer) SetLifetime(d time.Duration) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.lifetime = d
}

// Asked returns the audiences the endpoint was asked for, in order.
func (i *Issuer) Asked() []string {
	var out []string
	for _, t := range i.Issued() {
		out = append(out, t.Audience)
	}
	return out
}

// Issued returns the tokens the endpoint gave, in order.
func (i *Issuer) Issued() []Issued {
	i.mu.Lock()
	defer i.mu.Unlock()
	return append([]Issued(nil), i.issued...)
}

// Token is a token of the issuer for audience with claims (over the standard ones), expiring
// at exp, signed with the issuer's key.
func (i *Issuer) Token(audience string, claims map[string]any, exp time.Time) string {
	return sign(i.key, i.payload(audience, claims, exp))
}

// Forged is the same token, signed with a key the issuer never published.
func (i *Issuer) Forged(audience string, claims map[string]any, exp time.Time) (string, error) {
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", fmt.Errorf("fakegithub: forger's key: %w", err)
	}
	return sign(other, i.payload(audience, claims, exp)), nil
}

func (i *Issuer) payload(audience string, claims map[string]any, exp time.Time) map[string]any {
	now := i.now()
	p := map[string]any{"iss": i.URL, "aud": audience, "iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": exp.Unix()}
	for k, v := range claims {
		p[k] = v
	}
	return p
}

// sign is an RS256 JWS of claims, in compact form.
func sign(key *rsa.PrivateKey, claims map[string]any) string {
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": keyID})
	payload, _ := json.Marshal(claims)
	input := b64(header) + "." + b64(payload)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		panic(fmt.Sprintf("fakegithub: sign: %v", err)) // cannot fail with a valid key
	}
	return input + "." + b64(sig)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (i *Issuer) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": i.URL, "jwks_uri": i.URL + "/.well-known/jwks",
			"response_types_supported": []string{"id_token"}, "subject_types_supported": []string{"public", "pairwise"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
			"claims_supported":                      i.supported,
		})
	case "/.well-known/jwks":
		pub := i.key.PublicKey
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "alg": "RS256", "use": "sig", "kid": keyID,
			"n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes()),
		}}})
	case jobEndpointPath:
		if i.RequestToken == "" || (r.Header.Get("Authorization") != "bearer "+i.RequestToken && r.Header.Get("Authorization") != "Bearer "+i.RequestToken) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"message":"Bad credentials"}`))
			return
		}
		audience := r.URL.Query().Get("audience")
		now := i.now()
		i.mu.Lock()
		claims, exp := i.claims, now.Add(i.lifetime)
		i.issued = append(i.issued, Issued{Audience: audience, At: now, Expiry: time.Unix(exp.Unix(), 0)})
		i.mu.Unlock()
		tok := i.Token(audience, claims, exp)
		_ = json.NewEncoder(w).Encode(map[string]any{"count": len(tok), "value": tok})
	default:
		http.NotFound(w, r)
	}
}
