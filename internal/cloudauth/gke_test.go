package cloudauth_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/org/app-status-action/internal/cloudauth"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/safefile"
	"github.com/org/app-status-action/internal/testing/cloudauthtest"
)

// gkeExec is the exec of a user as gcloud container clusters get-credentials writes it.
func gkeExec() *clientcmdapi.ExecConfig {
	return &clientcmdapi.ExecConfig{
		APIVersion:         "client.authentication.k8s.io/v1beta1",
		Command:            "gke-gcloud-auth-plugin",
		InstallHint:        "Install gke-gcloud-auth-plugin for use with kubectl by following https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin",
		ProvideClusterInfo: true,
	}
}

// TestGKEWorkloadIdentityFederation: the external_account file google-github-actions/auth
// writes (its token URL and impersonation URL at the fakes) gives the service account's
// token: GitHub's OIDC token is exchanged at STS, the federated token impersonates the
// account. Every token on the way, and the OIDC request token in the file, go to OnSecret.
func TestGKEWorkloadIdentityFederation(t *testing.T) {
	t.Parallel()
	oidc := cloudauthtest.NewGitHubOIDC()
	defer oidc.Close()
	google := cloudauthtest.NewGoogle(oidc)
	defer google.Close()
	dir := t.TempDir()
	creds, err := google.WriteCredentialsFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	secrets := &recorder{}
	src := source(t, gkeExec(), map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": creds}, cloudauth.Options{OnSecret: secrets.add})
	tok := token(t, src)
	if account, ok := google.Valid(tok); !ok || account != google.ServiceAccount {
		t.Fatalf("the token is not the service account's: Valid() = %q, %v", account, ok)
	}
	for _, s := range []string{oidc.RequestToken, tok} {
		if !secrets.has(s) {
			t.Errorf("OnSecret never got %.12s…", s)
		}
	}
	federated := 0
	secrets.mu.Lock()
	for _, v := range secrets.values {
		if strings.HasPrefix(v, "gcp-federated-") {
			federated++
		}
		if strings.HasPrefix(v, "eyJ") {
			federated++ // GitHub's OIDC token, from the credential source's answer
		}
	}
	secrets.mu.Unlock()
	if federated < 2 {
		t.Errorf("OnSecret got %d of the intermediate tokens (the OIDC token and the federated token), want both", federated)
	}
}

// TestGKECredentialsInTheWorkspace: the runner's path of the credentials file does not exist
// in the container; the file is found by its name in GITHUB_WORKSPACE, where the runner
// mounts the workspace.
func TestGKECredentialsInTheWorkspace(t *testing.T) {
	t.Parallel()
	oidc := cloudauthtest.NewGitHubOIDC()
	defer oidc.Close()
	google := cloudauthtest.NewGoogle(oidc)
	defer google.Close()
	workspace := t.TempDir()
	creds, err := google.WriteCredentialsFile(workspace)
	if err != nil {
		t.Fatal(err)
	}
	runnerPath := filepath.Join("/home/runner/work/app/app", filepath.Base(creds))
	src := source(t, gkeExec(), map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": runnerPath, "GITHUB_WORKSPACE": workspace}, cloudauth.Options{})
	if _, ok := google.Valid(token(t, src)); !ok {
		t.Fatal("the token is not valid")
	}
}

// TestGKERefused: an OIDC token the provider does not accept (another audience) is the
// cluster's Unauthorized verdict, quoting Google's answer.
func TestGKERefused(t *testing.T) {
	t.Parallel()
	oidc := cloudauthtest.NewGitHubOIDC()
	defer oidc.Close()
	google := cloudauthtest.NewGoogle(oidc)
	defer google.Close()
	creds, err := google.WriteCredentialsFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The provider the file names is no longer served.
	google.Audience = "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/other/providers/x"
	src := source(t, gkeExec(), map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": creds}, cloudauth.Options{})
	_, err = src.Token(context.Background())
	var e *cloudauth.Error
	if !errors.As(err, &e) || e.Verdict != result.VerdictUnauthorized || !strings.Contains(e.Message, "GKE credentials (gke-gcloud-auth-plugin, built in): could not get a token:") || !strings.Contains(e.Message, "unknown workload identity provider") {
		t.Errorf("Token() error = %v, want Unauthorized naming the provider and quoting Google", err)
	}
}

// TestGKESubjectTokenFile (issue 20): an external account whose subject token comes from a
// file has that token masked before anything can quote it, and a credential_source.file under
// /proc (the process's environment) or a device is refused, never read.
func TestGKESubjectTokenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	subject := filepath.Join(dir, "oidc-token")
	const subjectToken = "eyJhbGciOiJSUzI1NiJ9.subject-token-from-a-file.c2lnbmF0dXJl"
	if err := os.WriteFile(subject, []byte(subjectToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	credentials := func(file string) string {
		path := filepath.Join(dir, filepath.Base(file)+".json")
		doc := `{"type": "external_account", "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/gh",
			"subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_url": "https://sts.googleapis.com/v1/token",
			"credential_source": {"file": "` + file + `"}}`
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	secrets := &recorder{}
	p := cloudauth.Recognise(gkeExec())
	_, err := p.NewSource(cloudauth.Options{Getenv: func(k string) string {
		return map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": credentials(subject)}[k]
	}, ReadFile: safefile.Read, OnSecret: secrets.add})
	if err != nil {
		t.Fatalf("NewSource() error = %v", err)
	}
	if !secrets.has(subjectToken) {
		t.Errorf("the subject token was not masked")
	}
	for _, special := range []string{"/proc/self/environ", "/dev/zero"} {
		_, err := p.NewSource(cloudauth.Options{Getenv: func(k string) string {
			return map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": credentials(special)}[k]
		}, ReadFile: safefile.Read})
		var e *cloudauth.Error
		if !errors.As(err, &e) || e.Verdict != result.VerdictInvalidConfig || !strings.Contains(e.Message, "credential_source.file that cannot be read here") {
			t.Errorf("credential_source.file %s: NewSource() error = %v, want InvalidConfig saying it cannot be read", special, err)
		}
	}
}
