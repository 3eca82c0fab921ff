package fakegithub

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestIssuer: over TLS with the issuer's own certificate, the discovery document names the
// issuer and its keys, the job's endpoint gives a token for the audience asked with the
// request token only, and that token verifies with the published key, as an API server checks
// it; a forged one does not.
func TestIssuer(t *testing.T) {
	t.Parallel()
	iss, err := NewIssuer(map[string]any{"repository": "org/app", "environment": "prod"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(iss.Close)
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(iss.CAPEM) {
		t.Fatal("CAPEM holds no certificate")
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	getJSON := func(url, bearer string, into any) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if bearer != "" {
			req.Header.Set("Authorization", "bearer "+bearer)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode
	}
	var discovery struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	getJSON(iss.URL+"/.well-known/openid-configuration", "", &discovery)
	if discovery.Issuer != iss.URL || !strings.HasPrefix(discovery.JWKSURI, iss.URL+"/") {
		t.Fatalf("discovery %+v; want issuer %s and its JWKS", discovery, iss.URL)
	}
	var jwks struct {
		Keys []struct{ Kid, N, E string } `json:"keys"`
	}
	getJSON(discovery.JWKSURI, "", &jwks)
	if len(jwks.Keys) != 1 {
		t.Fatalf("JWKS has %d keys; want 1", len(jwks.Keys))
	}
	n, _ := base64.RawURLEncoding.DecodeString(jwks.Keys[0].N)
	e, _ := base64.RawURLEncoding.DecodeString(jwks.Keys[0].E)
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}

	var answer struct{ Value string }
	if status := getJSON(iss.RequestURL+"&audience=k8s", "wrong", &answer); status != http.StatusUnauthorized {
		t.Errorf("a wrong request token: status %d; want 401", status)
	}
	getJSON(iss.RequestURL+"&audience=k8s", iss.RequestToken, &answer)
	claims := verify(t, pub, answer.Value)
	delete(claims, "iat")
	delete(claims, "nbf")
	exp := claims["exp"]
	delete(claims, "exp")
	want := map[string]any{"iss": iss.URL, "aud": "k8s", "repository": "org/app", "environment": "prod"}
	if diff := cmp.Diff(want, claims); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"k8s"}, iss.Asked()); diff != "" {
		t.Errorf("audiences asked (-want +got):\n%s", diff)
	}
	if issued := iss.Issued(); len(issued) != 1 || issued[0].Expiry.Unix() != int64(exp.(float64)) {
		t.Errorf("Issued() = %+v; want the one token, expiring at its exp %v", issued, exp)
	}
	forged, err := iss.Forged("k8s", nil, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(forged, ".")
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) == nil {
		t.Error("a forged token verifies with the issuer's key")
	}
}

// TestGitLabIssuer: a GitLab instance's issuer publishes its discovery document (with
// GitLab's claims) and its key, signs the tokens a job's id_tokens: would hold, and has no job
// endpoint: nothing there gives a token.
func TestGitLabIssuer(t *testing.T) {
	t.Parallel()
	iss, err := NewGitLabIssuer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(iss.Close)
	get := func(url string, into any) int {
		t.Helper()
		resp, err := iss.Client().Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if into != nil && resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode
	}
	var discovery struct {
		Issuer          string   `json:"issuer"`
		JWKSURI         string   `json:"jwks_uri"`
		ClaimsSupported []string `json:"claims_supported"`
	}
	get(iss.URL+"/.well-known/openid-configuration", &discovery)
	if discovery.Issuer != iss.URL || !slices.Contains(discovery.ClaimsSupported, "project_path") || slices.Contains(discovery.ClaimsSupported, "repository") {
		t.Errorf("discovery %+v; want issuer %s with GitLab's claims", discovery, iss.URL)
	}
	var jwks struct {
		Keys []struct{ N, E string } `json:"keys"`
	}
	get(discovery.JWKSURI, &jwks)
	if len(jwks.Keys) != 1 {
		t.Fatalf("JWKS has %d keys; want 1", len(jwks.Keys))
	}
	n, _ := base64.RawURLEncoding.DecodeString(jwks.Keys[0].N)
	e, _ := base64.RawURLEncoding.DecodeString(jwks.Keys[0].E)
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	claims := verify(t, pub, iss.Token("app-status", map[string]any{"project_path": "group/app", "ref_protected": "true"}, time.Now().Add(time.Hour)))
	if claims["iss"] != iss.URL || claims["project_path"] != "group/app" || claims["ref_protected"] != "true" {
		t.Errorf("claims %v; want iss %s, project_path and ref_protected", claims, iss.URL)
	}
	if iss.RequestURL != "" || iss.RequestToken != "" {
		t.Errorf("RequestURL %q, RequestToken %q; want none: GitLab has no job endpoint", iss.RequestURL, iss.RequestToken)
	}
	if status := get(iss.URL+jobEndpointPath+"?audience=app-status", nil); status != http.StatusUnauthorized {
		t.Errorf("the job endpoint's path: status %d; want 401", status)
	}
}

// verify checks an RS256 JWT's signature with pub and returns its claims.
func verify(t *testing.T, pub *rsa.PublicKey, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("signature: %v", err)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}
