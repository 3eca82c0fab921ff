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
	delete(claims, "exp")
	want := map[string]any{"iss": iss.URL, "aud": "k8s", "repository": "org/app", "environment": "prod"}
	if diff := cmp.Diff(want, claims); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"k8s"}, iss.Asked()); diff != "" {
		t.Errorf("audiences asked (-want +got):\n%s", diff)
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
