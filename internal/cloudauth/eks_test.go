package cloudauth_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/org/app-status-action/internal/cloudauth"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/cloudauthtest"
)

// eksExec is the exec of a user as aws eks update-kubeconfig writes it, for the cluster prod.
func eksExec(extra ...string) *clientcmdapi.ExecConfig {
	return &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1beta1",
		Command:    "aws",
		Args:       append([]string{"--region", "eu-west-1", "eks", "get-token", "--cluster-name", "prod", "--output", "json"}, extra...),
	}
}

// recorder collects what OnSecret was given.
type recorder struct {
	mu     sync.Mutex
	values []string
}

func (r *recorder) add(v string) {
	r.mu.Lock()
	r.values = append(r.values, v)
	r.mu.Unlock()
}

func (r *recorder) has(v string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.values, v)
}

// source builds the source of exec with the given environment and files.
func source(t *testing.T, exec *clientcmdapi.ExecConfig, vars map[string]string, opts cloudauth.Options) *cloudauth.Source {
	t.Helper()
	p := cloudauth.Recognise(exec)
	if p == nil {
		t.Fatalf("Recognise(%s %v) = nil", exec.Command, exec.Args)
	}
	opts.Getenv = func(k string) string { return vars[k] }
	if opts.ReadFile == nil {
		opts.ReadFile = os.ReadFile
	}
	src, err := p.NewSource(opts)
	if err != nil {
		t.Fatalf("NewSource() error = %v", err)
	}
	return src
}

func token(t *testing.T, src *cloudauth.Source) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tok, err := src.Token(ctx)
	if err != nil {
		t.Fatalf("Token() error = %v", err)
	}
	return tok
}

// TestEKSTokenFromEnvironmentKeys: the keys aws-actions/configure-aws-credentials exports
// sign a token that STS (the fake, which recomputes the signature) accepts for the cluster
// named in the kubeconfig, and for no other; the secret key, the session token and the token
// go to OnSecret.
func TestEKSTokenFromEnvironmentKeys(t *testing.T) {
	t.Parallel()
	aws := cloudauthtest.NewAWS()
	defer aws.Close()
	key := aws.NewKey("arn:aws:sts::111122223333:assumed-role/deploy/GitHubActions", true)
	secrets := &recorder{}
	src := source(t, eksExec(), map[string]string{
		"AWS_ACCESS_KEY_ID": key.AccessKeyID, "AWS_SECRET_ACCESS_KEY": key.SecretAccessKey, "AWS_SESSION_TOKEN": key.SessionToken,
	}, cloudauth.Options{OnSecret: secrets.add})
	tok := token(t, src)

	arn, err := aws.VerifyEKSToken(tok, "prod")
	if err != nil {
		t.Fatalf("VerifyEKSToken(token, prod) error = %v", err)
	}
	if arn != key.ARN {
		t.Errorf("VerifyEKSToken() = %s, want %s", arn, key.ARN)
	}
	if _, err := aws.VerifyEKSToken(tok, "staging"); err == nil {
		t.Error("VerifyEKSToken(token, staging) = nil error: a token for prod verified for another cluster")
	}
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(tok, "k8s-aws-v1."))
	u, _ := url.Parse(string(raw))
	if u.Host != "sts.eu-west-1.amazonaws.com" || u.Query().Get("X-Amz-Expires") != "60" || u.Query().Get("X-Amz-SignedHeaders") != "host;x-k8s-aws-id" {
		t.Errorf("presigned URL %s://%s?%s: want the regional STS host, X-Amz-Expires=60, signed host;x-k8s-aws-id", u.Scheme, u.Host, u.RawQuery)
	}
	// What the token decodes to is masked too (issue 20): an API server or a proxy may quote
	// the presigned URL, replayable for 15 minutes, or the session token it carries encoded.
	derived := []string{string(raw), u.Query().Get("X-Amz-Signature"), url.QueryEscape(key.SessionToken)}
	for _, s := range append([]string{key.SecretAccessKey, key.SessionToken, tok}, derived...) {
		if !secrets.has(s) {
			t.Errorf("OnSecret never got %.12s…", s)
		}
	}
}

// TestEKSVerifierRejects: the fake really verifies: another key's signature, a token whose
// 15 minutes passed, and a token with a byte changed all fail.
func TestEKSVerifierRejects(t *testing.T) {
	t.Parallel()
	aws := cloudauthtest.NewAWS()
	defer aws.Close()
	key := aws.NewKey("arn:aws:iam::111122223333:user/ci", false)
	forged := key
	forged.SecretAccessKey = strings.Repeat("0", len(key.SecretAccessKey)) // same key ID, another secret

	mint := func(k cloudauthtest.AWSKey) string {
		return token(t, source(t, eksExec(), map[string]string{"AWS_ACCESS_KEY_ID": k.AccessKeyID, "AWS_SECRET_ACCESS_KEY": k.SecretAccessKey}, cloudauth.Options{}))
	}
	good := mint(key)
	if _, err := aws.VerifyEKSToken(good, "prod"); err != nil {
		t.Fatalf("the genuine token does not verify: %v", err)
	}
	if _, err := aws.VerifyEKSToken(mint(forged), "prod"); err == nil || !strings.Contains(err.Error(), "signature does not match") {
		t.Errorf("a token signed with another secret key: error = %v, want a signature mismatch", err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(good, "k8s-aws-v1."))
	tampered := "k8s-aws-v1." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), "X-Amz-Expires=60", "X-Amz-Expires=61", 1)))
	if _, err := aws.VerifyEKSToken(tampered, "prod"); err == nil {
		t.Error("a token with a changed parameter verified")
	}
	aws.Validity = 0
	if _, err := aws.VerifyEKSToken(good, "prod"); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("a token past its validity: error = %v, want expired", err)
	}
}

// TestEKSAssumeRole: --role-arn in the kubeconfig assumes the role with the environment's keys
// (a SigV4-signed AssumeRole the fake STS verifies) and signs the token with the role's keys.
func TestEKSAssumeRole(t *testing.T) {
	t.Parallel()
	aws := cloudauthtest.NewAWS()
	defer aws.Close()
	base := aws.NewKey("arn:aws:iam::111122223333:user/ci", false)
	role := "arn:aws:iam::111122223333:role/eks-reader"
	secrets := &recorder{}
	src := source(t, eksExec("--role-arn", role), map[string]string{
		"AWS_ACCESS_KEY_ID": base.AccessKeyID, "AWS_SECRET_ACCESS_KEY": base.SecretAccessKey, "AWS_ENDPOINT_URL_STS": aws.URL,
	}, cloudauth.Options{OnSecret: secrets.add})
	arn, err := aws.VerifyEKSToken(token(t, src), "prod")
	if err != nil {
		t.Fatal(err)
	}
	if want := "arn:aws:sts::111122223333:assumed-role/eks-reader/EKSGetTokenAuth"; arn != want {
		t.Errorf("token signed by %s, want %s", arn, want)
	}
	if got := aws.Assumed(); !slices.Equal(got, []string{role}) {
		t.Errorf("roles assumed = %v, want [%s]", got, role)
	}
}

// TestEKSWebIdentity: AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE (IRSA, or a runner's OIDC
// token) assume the role through AssumeRoleWithWebIdentity; aws-iam-authenticator's form of
// the kubeconfig works the same.
func TestEKSWebIdentity(t *testing.T) {
	t.Parallel()
	aws := cloudauthtest.NewAWS()
	defer aws.Close()
	role := "arn:aws:iam::111122223333:role/runner"
	identity := "eyJhbGciOiJSUzI1NiJ9.web-identity." + strings.Repeat("x", 20)
	aws.AcceptWebIdentity(identity, role)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(identity+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := &recorder{}
	exec := &clientcmdapi.ExecConfig{Command: "aws-iam-authenticator", Args: []string{"token", "-i", "prod"}}
	src := source(t, exec, map[string]string{
		"AWS_ROLE_ARN": role, "AWS_WEB_IDENTITY_TOKEN_FILE": file, "AWS_ENDPOINT_URL_STS": aws.URL, "AWS_REGION": "us-west-2",
	}, cloudauth.Options{OnSecret: secrets.add})
	arn, err := aws.VerifyEKSToken(token(t, src), "prod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(arn, "arn:aws:sts::111122223333:assumed-role/runner/") {
		t.Errorf("token signed by %s, want the runner role's session", arn)
	}
	if !secrets.has(identity) {
		t.Error("OnSecret never got the web identity token")
	}
}

// TestEKSRefusedRole: a role the keys may not assume is the cluster's Unauthorized verdict,
// naming the provider; the secret key never appears in the message.
func TestEKSRefusedRole(t *testing.T) {
	t.Parallel()
	aws := cloudauthtest.NewAWS()
	defer aws.Close()
	base := aws.NewKey("arn:aws:iam::111122223333:user/ci", false)
	src := source(t, eksExec("--role-arn", "arn:aws:iam::111122223333:role/admin"), map[string]string{
		"AWS_ACCESS_KEY_ID": base.AccessKeyID, "AWS_SECRET_ACCESS_KEY": strings.Repeat("9", 40), "AWS_ENDPOINT_URL_STS": aws.URL,
	}, cloudauth.Options{})
	_, err := src.Token(context.Background())
	var e *cloudauth.Error
	if !errors.As(err, &e) {
		t.Fatalf("Token() error = %v, want a *cloudauth.Error", err)
	}
	if e.Verdict != result.VerdictUnauthorized || !strings.HasPrefix(e.Message, "EKS credentials (aws eks get-token, built in): could not get a token:") {
		t.Errorf("Token() error = %s: %s, want Unauthorized naming the provider", e.Verdict, e.Message)
	}
	if strings.Contains(e.Message, strings.Repeat("9", 40)) {
		t.Errorf("the message holds the secret key: %s", e.Message)
	}
}

// TestEKSProfile: a profile (the kubeconfig's env: AWS_PROFILE, as aws eks update-kubeconfig
// --profile writes it) is read from the shared credentials file with the SDK's own loading.
func TestEKSProfile(t *testing.T) {
	t.Parallel()
	aws := cloudauthtest.NewAWS()
	defer aws.Close()
	key := aws.NewKey("arn:aws:iam::111122223333:user/ci", false)
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials")
	config := filepath.Join(dir, "config")
	if err := os.WriteFile(creds, []byte("[ci]\naws_access_key_id = "+key.AccessKeyID+"\naws_secret_access_key = "+key.SecretAccessKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte("[profile ci]\nregion = eu-west-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exec := eksExec()
	exec.Env = []clientcmdapi.ExecEnvVar{{Name: "AWS_PROFILE", Value: "ci"}}
	secrets := &recorder{}
	src := source(t, exec, map[string]string{"AWS_SHARED_CREDENTIALS_FILE": creds, "AWS_CONFIG_FILE": config}, cloudauth.Options{OnSecret: secrets.add})
	if _, err := aws.VerifyEKSToken(token(t, src), "prod"); err != nil {
		t.Fatal(err)
	}
	if !secrets.has(key.SecretAccessKey) {
		t.Error("OnSecret never got the profile's secret key")
	}
}
