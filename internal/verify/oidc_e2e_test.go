package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/cli"
	"github.com/org/app-status-action/internal/cloudauth"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/kubeconfig"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakegithub"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// The issuers docs/oidc.md's AuthenticationConfigurations trust, and the audience they accept.
const (
	docGitHubIssuer = "https://token.actions.githubusercontent.com"
	docGitLabIssuer = "https://gitlab.com"
	oidcAudience    = "app-status"
)

// oidcDoc is what docs/oidc.md shows an API server's admin: the AuthenticationConfiguration
// of each issuer and the RBAC bindings, as written in its fenced YAML blocks.
type oidcDoc struct {
	// jwt holds the jwt: entries of the configurations, GitHub's and GitLab's, by issuer URL.
	jwt map[string]map[string]any
	// bindings are the ClusterRoleBindings, as YAML.
	bindings [][]byte
}

var fencedYAML = regexp.MustCompile("(?ms)^```yaml\n(.*?)^```")

// readOIDCDoc reads docs/oidc.md's YAML blocks.
func readOIDCDoc(t *testing.T) oidcDoc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(testbed.Testdata(t)), "docs", "oidc.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := oidcDoc{jwt: map[string]map[string]any{}}
	for _, m := range fencedYAML.FindAllSubmatch(data, -1) {
		var obj map[string]any
		if err := yaml.Unmarshal(m[1], &obj); err != nil {
			t.Fatalf("docs/oidc.md: a YAML block does not parse: %v\n%s", err, m[1])
		}
		switch obj["kind"] {
		case "AuthenticationConfiguration":
			entries, _ := obj["jwt"].([]any)
			for _, e := range entries {
				entry, _ := e.(map[string]any)
				issuer, _ := entry["issuer"].(map[string]any)
				url, _ := issuer["url"].(string)
				doc.jwt[url] = entry
			}
		case "ClusterRoleBinding":
			doc.bindings = append(doc.bindings, m[1])
		}
	}
	if doc.jwt[docGitHubIssuer] == nil || doc.jwt[docGitLabIssuer] == nil {
		t.Fatalf("docs/oidc.md shows the issuers %v; want %s's and %s's", keys(doc.jwt), docGitHubIssuer, docGitLabIssuer)
	}
	return doc
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// config is one AuthenticationConfiguration with the doc's GitHub and GitLab entries, their
// issuer URLs replaced by the fakes' and each given its fake's certificate: nothing else
// changed, so the bed's API server checks what the doc tells an admin to write.
func (d oidcDoc) config(t *testing.T, github, gitlab *fakegithub.Issuer) []byte {
	t.Helper()
	var jwt []any
	for _, e := range []struct {
		url string
		iss *fakegithub.Issuer
	}{{docGitHubIssuer, github}, {docGitLabIssuer, gitlab}} {
		entry, err := deepCopy(d.jwt[e.url])
		if err != nil {
			t.Fatal(err)
		}
		issuer := entry["issuer"].(map[string]any)
		issuer["url"], issuer["certificateAuthority"] = e.iss.URL, string(e.iss.CAPEM)
		jwt = append(jwt, entry)
	}
	out, err := yaml.Marshal(map[string]any{"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthenticationConfiguration", "jwt": jwt})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func deepCopy(m map[string]any) (map[string]any, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(data, &out)
}

// rule is the message the doc's claim validation rule of issuer gives, the rule whose
// expression mentions claim.
func (d oidcDoc) rule(t *testing.T, issuer, claim string) string {
	t.Helper()
	rules, _ := d.jwt[issuer]["claimValidationRules"].([]any)
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		if expr, _ := rule["expression"].(string); strings.Contains(expr, "claims."+claim) {
			msg, _ := rule["message"].(string)
			return msg
		}
	}
	t.Fatalf("docs/oidc.md: %s's configuration has no rule on %s", issuer, claim)
	return ""
}

// oidcBed is a cluster whose API server trusts docs/oidc.md's two issuers, played by a fake
// GitHub and a fake GitLab, with the doc's bindings applied and an app deployed.
type oidcBed struct {
	doc            oidcDoc
	github, gitlab *fakegithub.Issuer
	cluster        *testbed.Cluster
	ca             string // the API server's CA, PEM
	app            string // the app's Kustomization and namespace
}

// apiServerLog returns what the API server logged after offset, and the new offset.
func (o *oidcBed) apiServerLog(t *testing.T, offset int) (string, int) {
	t.Helper()
	log, err := o.cluster.APIServerLog()
	if err != nil {
		t.Fatal(err)
	}
	return log[min(offset, len(log)):], len(log)
}

// githubJob are the claims of docs/oidc.md's GitHub job: my-org/my-app's push to main, in
// its production environment.
func githubJob() map[string]any {
	return map[string]any{"repository": "my-org/my-app", "repository_owner": "my-org", "environment": "production",
		"event_name": "push", "ref": "refs/heads/main", "ref_protected": "true", "sub": "repo:my-org/my-app:environment:production"}
}

// gitlabJob are the claims of docs/oidc.md's GitLab job: my-group/my-app's pipeline on its
// protected main branch, deploying to production.
func gitlabJob() map[string]any {
	return map[string]any{"project_path": "my-group/my-app", "namespace_path": "my-group", "ref": "main", "ref_type": "branch",
		"ref_protected": "true", "environment": "production", "environment_protected": "true", "pipeline_source": "push",
		"user_login": "maintainer", "sub": "project_path:my-group/my-app:ref_type:branch:ref:main"}
}

// with is claims with k set to v (deleted when v is nil).
func with(claims map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for key, val := range claims {
		out[key] = val
	}
	if v == nil {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

// TestOIDCWithoutSecrets: a real kube-apiserver started with --authentication-config trusts
// the two issuers exactly as docs/oidc.md configures them (its YAML blocks, read from the doc,
// the issuer URLs and CAs replaced by local fakes: discovery, JWKS and RS256 tokens over HTTPS
// with their own CA), and the doc's ClusterRoleBindings give the shipped read-only role to the
// users its production jobs map to. With nothing but the oidc: line (no kubeconfig, no
// secret) the app is Current from a GitHub job and from a GitLab job; every token the doc's
// rules refuse is Unauthorized, naming the claim, and the API server's log gives the doc's
// message for it; a token the API server accepts for an identity nothing binds is Forbidden,
// naming the user. A GitHub token that lives 20 s is asked again before it expires while the
// run waits past its expiry.
func TestOIDCWithoutSecrets(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("needs a real cluster: run without -short")
	}
	doc := readOIDCDoc(t)
	github, err := fakegithub.NewIssuer(githubJob())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(github.Close)
	gitlab, err := fakegithub.NewGitLabIssuer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gitlab.Close)
	// (The parallel subtests run once this function has returned: the context ends with the
	// test.)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	b, err := testbed.Start(ctx, testbed.Options{Clusters: 1, Nodes: 1, Flux: true, Prefix: "oidc",
		AuthenticationConfig: doc.config(t, github, gitlab),
		Log:                  func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }})
	if err != nil {
		t.Fatalf("start the bed: %v", err)
	}
	t.Cleanup(b.Close)
	o := &oidcBed{doc: doc, github: github, gitlab: gitlab, cluster: b.Clusters[0]}
	c := o.cluster

	manifests, _ := leastPrivilegeRole(t)
	for _, binding := range doc.bindings {
		manifests = append(append(manifests, "\n---\n"...), binding...)
	}
	if err := c.Apply(ctx, "", manifests); err != nil {
		t.Fatal(err)
	}
	o.app = c.Namespace(t)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: o.app, TargetNamespace: o.app}, appDir(t, "web"), commitA)
	ca := c.Config.CAData
	if len(ca) == 0 {
		if ca, err = os.ReadFile(c.Config.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	o.ca = string(ca)

	t.Run("GitHub", func(t *testing.T) {
		t.Parallel()
		testOIDCGitHub(ctx, t, o)
	})
	t.Run("GitLab", func(t *testing.T) {
		t.Parallel()
		testOIDCGitLab(ctx, t, o)
	})
	t.Run("token refresh", func(t *testing.T) {
		t.Parallel()
		testOIDCRefresh(ctx, t, o)
	})
}

// oidcCase is a token and what the run must say of it.
type oidcCase struct {
	name    string
	token   string
	verdict result.Verdict
	want    []string // in the verdict's message
	logged  string   // in the API server's log: the doc's message of the rule that refused it
}

// check runs the cases one after the other, each with run, so that what the API server logs
// during a case is that case's.
func (o *oidcBed) check(t *testing.T, tests []oidcCase, run func(t *testing.T, token string) result.Cluster) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, offset := o.apiServerLog(t, 0)
			start := time.Now()
			got := run(t, tt.token)
			if got.Verdict != tt.verdict {
				t.Fatalf("verdict %s (%s): %s; want %s", got.Verdict, got.Code, got.Message, tt.verdict)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q\nlacks %q", got.Message, w)
				}
			}
			if tt.logged != "" {
				if log, _ := o.apiServerLog(t, offset); !strings.Contains(log, "failed: "+tt.logged) {
					t.Errorf("the API server's log of the run lacks the rule's message %q:\n%s", tt.logged, log)
				}
			}
			t.Logf("%s: %s in %s: %s", tt.name, got.Verdict, time.Since(start).Round(time.Millisecond), got.Message)
		})
	}
}

// testOIDCGitHub: the doc's GitHub rules, each exercised by a token of the job's issuer.
func testOIDCGitHub(ctx context.Context, t *testing.T, o *oidcBed) {
	run := func(t *testing.T, token string) result.Cluster {
		t.Helper()
		line := "gh=oidc:" + o.cluster.Config.Host + " audience=" + oidcAudience + " ca=env:CLUSTER_CA token=env:ID_TOKEN"
		vars := map[string]string{"GITHUB_ACTIONS": "true", "CLUSTER_CA": o.ca, "ID_TOKEN": token}
		clusters, secrets, err := kubeconfig.Load(kubeconfig.Input{Clusters: line}, kubeconfig.Env{
			Getenv: func(k string) string { return vars[k] }, ReadFile: os.ReadFile,
		})
		if err != nil {
			t.Fatal(err)
		}
		if clusters[0].Invalid != "" {
			t.Fatalf("the oidc: cluster is Invalid: %s", clusters[0].Invalid)
		}
		got := verify.Run(ctx, verify.Request{Targets: []verify.Target{{Name: clusters[0].Name, Config: clusters[0].Config}},
			Resources: []flux.Ref{ks(o.app)}, Revision: mustRevision(t, commitA), Timeout: 90 * time.Second, Workloads: true}).Results[0]
		for _, v := range secrets.Values() {
			if strings.Contains(got.Message, v) {
				t.Errorf("the verdict's message holds a secret")
			}
		}
		return got
	}
	iss, job, refused := o.github, githubJob(), "the API server refused the token (401)"
	inAnHour := time.Now().Add(time.Hour)
	forged, err := iss.Forged(oidcAudience, job, inAnHour)
	if err != nil {
		t.Fatal(err)
	}
	environment := o.doc.rule(t, docGitHubIssuer, "?environment")
	o.check(t, []oidcCase{{
		name:    "the production environment's job",
		token:   iss.Token(oidcAudience, job, inAnHour),
		verdict: result.VerdictCurrent,
	}, {
		name:    "another repository",
		token:   iss.Token(oidcAudience, with(job, "repository", "fork/my-app"), inAnHour),
		verdict: result.VerdictUnauthorized,
		want:    []string{refused, `repository "fork/my-app"`},
		logged:  o.doc.rule(t, docGitHubIssuer, "repository"),
	}, {
		name:    "another environment",
		token:   iss.Token(oidcAudience, with(job, "environment", "staging"), inAnHour),
		verdict: result.VerdictUnauthorized,
		want:    []string{refused, `environment "staging"`},
		logged:  environment,
	}, {
		name: "a pull_request run of a branch, without the environment",
		token: iss.Token(oidcAudience, with(with(with(job, "environment", nil), "event_name", "pull_request"),
			"ref", "refs/pull/7/merge"), inAnHour),
		verdict: result.VerdictUnauthorized,
		want:    []string{refused, `event_name "pull_request"`, `ref "refs/pull/7/merge"`},
		logged:  environment,
	}, {
		name:    "a pull_request_target run",
		token:   iss.Token(oidcAudience, with(job, "event_name", "pull_request_target"), inAnHour),
		verdict: result.VerdictUnauthorized,
		want:    []string{refused, `event_name "pull_request_target"`},
		logged:  o.doc.rule(t, docGitHubIssuer, "event_name"),
	}, {
		name:    "another audience",
		token:   iss.Token("another-audience", job, inAnHour),
		verdict: result.VerdictUnauthorized,
		want:    []string{refused, `audience "another-audience"`},
	}, {
		name:    "expired",
		token:   iss.Token(oidcAudience, job, time.Now().Add(-time.Minute)),
		verdict: result.VerdictUnauthorized,
		want:    []string{refused, "it EXPIRED at"},
	}, {
		name:    "signed by another key",
		token:   forged,
		verdict: result.VerdictUnauthorized,
		want:    []string{refused, "signed by the issuer's key"},
	}}, run)
}

// testOIDCGitLab: the CLI as the GitLab component runs it (GITLAB_CI, the line in --cluster,
// the token in the job's id_tokens: variable), with the doc's GitLab rules.
func testOIDCGitLab(ctx context.Context, t *testing.T, o *oidcBed) {
	run := func(t *testing.T, token string) result.Cluster {
		t.Helper()
		vars := map[string]string{"CI": "true", "GITLAB_CI": "true", "CI_PROJECT_PATH": "my-group/my-app", "CLUSTER_CA": o.ca, "APP_STATUS_ID_TOKEN": token}
		var stdout, stderr bytes.Buffer
		// (The reports a GitLab job writes into its folder go to the test's.)
		reports := t.TempDir()
		code := cli.Run(ctx, []string{"verify", "--quiet", "--cluster",
			"prod=oidc:" + o.cluster.Config.Host + " audience=" + oidcAudience + " ca=env:CLUSTER_CA token=env:APP_STATUS_ID_TOKEN",
			"--resource", "ks/" + o.app, "--revision", commitA, "--timeout", "90s", "-o", "json",
			"--dotenv-file", filepath.Join(reports, "app-status.env"), "--junit-file", filepath.Join(reports, "app-status-junit.xml"),
			"--summary-file", filepath.Join(reports, "app-status-summary.md")},
			cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return vars[k] }, ReadFile: os.ReadFile, Clock: time.Now})
		var doc result.Run
		if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || len(doc.Results) != 1 {
			t.Fatalf("app-status verify exited %d with no report of one cluster (%v):\n%s\n%s", code, err, stdout.String(), stderr.String())
		}
		if got := doc.Results[0]; (code == 0) != (got.Verdict == result.VerdictCurrent) {
			t.Errorf("app-status verify exited %d with the verdict %s", code, got.Verdict)
		}
		if strings.Contains(stdout.String()+stderr.String(), token) {
			t.Errorf("the output holds the token")
		}
		return doc.Results[0]
	}
	iss, job, refused := o.gitlab, gitlabJob(), "the API server refused the token (401)"
	inAnHour := time.Now().Add(time.Hour)
	o.check(t, []oidcCase{{
		name:    "the production environment's job",
		token:   iss.Token(oidcAudience, job, inAnHour),
		verdict: result.VerdictCurrent,
	}, {
		name:    "another project",
		token:   iss.Token(oidcAudience, with(with(job, "project_path", "other-group/my-app"), "namespace_path", "other-group"), inAnHour),
		verdict: result.VerdictUnauthorized,
		want:    []string{refused, `project_path "other-group/my-app"`},
		logged:  o.doc.rule(t, docGitLabIssuer, "project_path"),
	}, {
		name:    "an unprotected branch",
		token:   iss.Token(oidcAudience, with(with(job, "ref", "feature"), "ref_protected", "false"), inAnHour),
		verdict: result.VerdictUnauthorized,
		want:    []string{refused, `ref "feature"`, `ref_protected "false"`},
		logged:  o.doc.rule(t, docGitLabIssuer, "ref_protected"),
	}, {
		name:    "another audience",
		token:   iss.Token("another-audience", job, inAnHour),
		verdict: result.VerdictUnauthorized,
		want:    []string{refused, `audience "another-audience"`},
	}, {
		name:    "a job without an environment, which nothing binds",
		token:   iss.Token(oidcAudience, with(with(job, "environment", nil), "environment_protected", nil), inAnHour),
		verdict: result.VerdictForbidden,
		want:    []string{`"gitlab:my-group/my-app:"`},
	}}, run)
}

// testOIDCRefresh: the GitHub job's endpoint gives tokens that live 20 s. The app's
// Kustomization appears only after 12 s and its Deployment is available 16 s after its pods are
// ready, so the run reads the cluster well past the first token's expiry: the token is asked
// again before it expired (from halfway through its life, at the run's next request), and
// the app ends Current.
func testOIDCRefresh(ctx context.Context, t *testing.T, o *oidcBed) {
	const life, appears, minReady = 20 * time.Second, 12 * time.Second, 16
	o.github.SetLifetime(life)
	app := o.cluster.Namespace(t)
	dir := t.TempDir()
	for _, f := range []string{"configmap.yaml", "service.yaml", "kustomization.yaml", "deployment.yaml"} {
		data, err := os.ReadFile(filepath.Join(appDir(t, "web"), f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "deployment.yaml" {
			data = bytes.Replace(data, []byte("\nspec:\n"), fmt.Appendf(nil, "\nspec:\n  minReadySeconds: %d\n", minReady), 1)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	line := "refresh=oidc:" + o.cluster.Config.Host + " audience=" + oidcAudience + " ca=env:CLUSTER_CA"
	vars := map[string]string{"GITHUB_ACTIONS": "true", "CLUSTER_CA": o.ca,
		"ACTIONS_ID_TOKEN_REQUEST_URL": o.github.RequestURL, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": o.github.RequestToken}
	clusters, _, err := kubeconfig.Load(kubeconfig.Input{Clusters: line}, kubeconfig.Env{
		Getenv: func(k string) string { return vars[k] }, ReadFile: os.ReadFile,
		CloudAuth: cloudauth.Options{HTTPClient: o.github.Client()},
	})
	if err != nil || clusters[0].Config == nil {
		t.Fatalf("Load() = %+v, %v", clusters, err)
	}
	deployed := make(chan error, 1)
	go func() {
		time.Sleep(appears)
		_, err := o.cluster.DeployApp(ctx, testbed.Kustomization{Name: app, TargetNamespace: app}, dir, commitA)
		deployed <- err
	}()
	start := time.Now()
	got := verify.Run(ctx, verify.Request{Targets: []verify.Target{{Name: "refresh", Config: clusters[0].Config}},
		Resources: []flux.Ref{ks(app)}, Revision: mustRevision(t, commitA), Timeout: 2 * time.Minute, Workloads: true}).Results[0]
	took := time.Since(start)
	if err := <-deployed; err != nil {
		t.Fatal(err)
	}
	issued := o.github.Issued()
	t.Logf("%s after %s; tokens issued: %s", got.Verdict, took.Round(time.Millisecond), describeIssued(issued, start))
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict %s (%s): %s; want Current", got.Verdict, got.Code, got.Message)
	}
	if len(issued) < 2 {
		t.Fatalf("%d tokens issued; want the first asked again before it expired", len(issued))
	}
	first, second := issued[0], issued[1]
	if first.Audience != oidcAudience {
		t.Errorf("the token was asked for %q; want %q", first.Audience, oidcAudience)
	}
	if !second.At.Before(first.Expiry) {
		t.Errorf("the second token was asked at %s, after the first expired at %s", second.At.Format(time.RFC3339Nano), first.Expiry.Format(time.RFC3339))
	}
	if end := start.Add(took); !end.After(first.Expiry.Add(5 * time.Second)) {
		t.Errorf("the run ended at %s, not well past the first token's expiry %s: the test proves nothing", end.Format(time.RFC3339), first.Expiry.Format(time.RFC3339))
	}
}

func describeIssued(issued []fakegithub.Issued, start time.Time) string {
	var parts []string
	for _, i := range issued {
		parts = append(parts, fmt.Sprintf("at +%s expiring +%s", i.At.Sub(start).Round(100*time.Millisecond), i.Expiry.Sub(start).Round(time.Second)))
	}
	return strings.Join(parts, ", ")
}
