package verify_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/cloudauth"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/kubeconfig"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakegithub"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// oidcAudience is the audience the bed's API server accepts.
const oidcAudience = "app-status-bed"

// oidcAuthenticationConfig trusts iss as docs/oidc.md shows for GitHub: only org/app's
// tokens, its user named after the repository and the environment.
func oidcAuthenticationConfig(iss *fakegithub.Issuer) []byte {
	ca := strings.ReplaceAll(strings.TrimSpace(string(iss.CAPEM)), "\n", "\n      ")
	return fmt.Appendf(nil, `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: %s
    audiences: [%s]
    certificateAuthority: |
      %s
  claimValidationRules:
  - expression: "claims.repository == 'org/app'"
    message: the token is not org/app's
  claimMappings:
    username:
      expression: "'github:' + claims.repository + ':' + claims.?environment.orValue('')"
    groups:
      expression: "['github:' + claims.repository_owner]"
  userValidationRules:
  - expression: "!user.username.startsWith('system:')"
    message: no system identity
`, iss.URL, oidcAudience, ca)
}

// TestOIDCWithoutSecrets: a real kube-apiserver started with --authentication-config trusts
// a local GitHub issuer (fakegithub.Issuer: discovery, JWKS and the job's token endpoint over
// HTTPS with its own CA, RS256 tokens), and the shipped read-only role is bound to the user
// org/app's production job maps to. With nothing but the oidc: line (no kubeconfig, no
// secret), the run asks the job's endpoint for a token of the line's audience and the app is
// Current; a token of another repository, of another audience, an expired one and one signed
// by another key are each Unauthorized, naming what the token carried, and a token the API
// server accepts for an identity nothing binds is Forbidden.
func TestOIDCWithoutSecrets(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real cluster: run without -short")
	}
	iss, err := fakegithub.NewIssuer(map[string]any{"repository": "org/app", "repository_owner": "org", "environment": "production", "sub": "repo:org/app:environment:production"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(iss.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b, err := testbed.Start(ctx, testbed.Options{Clusters: 1, Nodes: 1, Flux: true, Prefix: "oidc",
		AuthenticationConfig: oidcAuthenticationConfig(iss),
		Log:                  func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }})
	if err != nil {
		t.Fatalf("start the bed: %v", err)
	}
	t.Cleanup(b.Close)
	c := b.Clusters[0]

	manifests, _ := leastPrivilegeRole(t)
	binding := []byte(`---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: app-status-reader-github
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: app-status-reader}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "github:org/app:production"}
`)
	if err := c.Apply(ctx, "", append(manifests, binding...)); err != nil {
		t.Fatal(err)
	}
	app := c.Namespace(t)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: app, TargetNamespace: app}, appDir(t, "web"), commitA)

	ca := c.Config.CAData
	if len(ca) == 0 {
		if ca, err = os.ReadFile(c.Config.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	// run verifies the app with the oidc: line alone, the token from the job's endpoint or,
	// given one, from a variable.
	run := func(t *testing.T, token string) result.Cluster {
		t.Helper()
		line := "oidc-1=oidc:" + c.Config.Host + " audience=" + oidcAudience + " ca=env:CLUSTER_CA"
		vars := map[string]string{"GITHUB_ACTIONS": "true", "CLUSTER_CA": string(ca),
			"ACTIONS_ID_TOKEN_REQUEST_URL": iss.RequestURL, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": iss.RequestToken}
		if token != "" {
			line += " token=env:ID_TOKEN"
			vars["ID_TOKEN"] = token
		}
		clusters, secrets, err := kubeconfig.Load(kubeconfig.Input{Clusters: line}, kubeconfig.Env{
			Getenv:    func(k string) string { return vars[k] },
			ReadFile:  os.ReadFile,
			CloudAuth: cloudauth.Options{HTTPClient: iss.Client()},
		})
		if err != nil {
			t.Fatal(err)
		}
		if clusters[0].Invalid != "" {
			t.Fatalf("the oidc: cluster is Invalid: %s", clusters[0].Invalid)
		}
		got := verify.Run(ctx, verify.Request{Targets: []verify.Target{{Name: clusters[0].Name, Config: clusters[0].Config}},
			Resources: []flux.Ref{ks(app)}, Revision: mustRevision(t, commitA), Timeout: 90 * time.Second, Workloads: true}).Results[0]
		for _, v := range secrets.Values() {
			if strings.Contains(got.Message, v) {
				t.Errorf("the verdict's message holds a secret")
			}
		}
		return got
	}

	start := time.Now()
	got := run(t, "")
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("with the job's own token: verdict %s (%s): %s; want Current", got.Verdict, got.Code, got.Message)
	}
	if asked := iss.Asked(); len(asked) == 0 || asked[0] != oidcAudience {
		t.Errorf("audiences asked of the job's endpoint: %v; want %s", asked, oidcAudience)
	}
	t.Logf("oidc: Current in %s, no kubeconfig: %s", time.Since(start).Round(time.Millisecond), got.Message)

	job := map[string]any{"repository": "org/app", "repository_owner": "org", "environment": "production"}
	with := func(k string, v any) map[string]any {
		out := map[string]any{}
		for key, val := range job {
			out[key] = val
		}
		out[k] = v
		return out
	}
	inAnHour := time.Now().Add(time.Hour)
	forged, err := iss.Forged(oidcAudience, job, inAnHour)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		token   string
		verdict result.Verdict
		want    []string // in the message
	}{{
		name:    "another repository",
		token:   iss.Token(oidcAudience, with("repository", "fork/app"), inAnHour),
		verdict: result.VerdictUnauthorized,
		want:    []string{"the API server refused the token (401)", `repository "fork/app"`},
	}, {
		name:    "another audience",
		token:   iss.Token("another-audience", job, inAnHour),
		verdict: result.VerdictUnauthorized,
		want:    []string{"the API server refused the token (401)", `audience "another-audience"`},
	}, {
		name:    "expired",
		token:   iss.Token(oidcAudience, job, time.Now().Add(-time.Minute)),
		verdict: result.VerdictUnauthorized,
		want:    []string{"the API server refused the token (401)", "it EXPIRED at"},
	}, {
		name:    "signed by another key",
		token:   forged,
		verdict: result.VerdictUnauthorized,
		want:    []string{"the API server refused the token (401)", "signed by the issuer's key"},
	}, {
		name:    "an identity nothing binds",
		token:   iss.Token(oidcAudience, with("environment", "staging"), inAnHour),
		verdict: result.VerdictForbidden,
		want:    []string{"github:org/app:staging"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, tt.token)
			if got.Verdict != tt.verdict {
				t.Fatalf("verdict %s (%s): %s; want %s", got.Verdict, got.Code, got.Message, tt.verdict)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q\nlacks %q", got.Message, w)
				}
			}
			t.Logf("%s: %s", tt.name, got.Message)
		})
	}
}
