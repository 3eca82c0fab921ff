package cloudauth_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/org/app-status-action/internal/cloudauth"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/cloudauthtest"
)

// hangingServer accepts connections and never answers; it is closed when the test ends.
func hangingServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}

// closedPort is an address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// TestTokenEndpointFailures: a token endpoint that refuses is Unauthorized, one that cannot be
// reached or never answers is Unreachable within Options.Timeout; every message names the
// provider, is one line and quotes no secret.
func TestTokenEndpointFailures(t *testing.T) {
	t.Parallel()
	oidc, entra := entraFakes(t)
	aws := cloudauthtest.NewAWS()
	t.Cleanup(aws.Close)
	key := aws.NewKey("arn:aws:iam::111122223333:user/ci", false)
	hanging, closed := hangingServer(t), closedPort(t)
	google := cloudauthtest.NewGoogle(oidc)
	t.Cleanup(google.Close)
	gkeFile := func(tokenURL string) string {
		path, err := google.WriteCredentialsFile(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		data = []byte(strings.ReplaceAll(string(data), google.URL+"/v1/token", tokenURL))
		path = filepath.Join(t.TempDir(), "creds.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	spn := func(secret, authority string) map[string]string {
		return map[string]string{"AZURE_CLIENT_ID": entra.ClientID, "AZURE_TENANT_ID": entra.TenantID, "AZURE_CLIENT_SECRET": secret, "AZURE_AUTHORITY_HOST": authority}
	}
	role := "arn:aws:iam::111122223333:role/eks-reader"
	awsEnv := func(secret, sts string) map[string]string {
		return map[string]string{"AWS_ACCESS_KEY_ID": key.AccessKeyID, "AWS_SECRET_ACCESS_KEY": secret, "AWS_ENDPOINT_URL_STS": sts}
	}
	tests := []struct {
		name   string
		exec   *clientcmdapi.ExecConfig
		vars   map[string]string
		want   result.Verdict
		secret string
	}{
		{"AKS, wrong client secret", aksExec("spn", ""), spn("wrong-secret-0123456789", entra.URL), result.VerdictUnauthorized, "wrong-secret-0123456789"},
		{"AKS, authority host not listening", aksExec("spn", ""), spn(entra.ClientSecret, "https://"+closed+"/"), result.VerdictUnreachable, entra.ClientSecret},
		{"AKS, authority host never answers", aksExec("spn", ""), spn(entra.ClientSecret, "https://"+hanging+"/"), result.VerdictUnreachable, entra.ClientSecret},
		{"EKS, STS refuses the role", eksExec("--role-arn", role), awsEnv("not-the-secret-0123456789", aws.URL), result.VerdictUnauthorized, "not-the-secret-0123456789"},
		{"EKS, STS never answers", eksExec("--role-arn", role), awsEnv(key.SecretAccessKey, "http://"+hanging), result.VerdictUnreachable, key.SecretAccessKey},
		{"GKE, token exchange not listening", gkeExec(), map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": gkeFile("http://" + closed + "/v1/token")}, result.VerdictUnreachable, oidc.RequestToken},
		{"GKE, token exchange never answers", gkeExec(), map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": gkeFile("http://" + hanging + "/v1/token")}, result.VerdictUnreachable, oidc.RequestToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := source(t, tt.exec, tt.vars, cloudauth.Options{HTTPClient: entra.Client(), Timeout: time.Second})
			start := time.Now()
			_, err := src.Token(context.Background())
			var e *cloudauth.Error
			if !errors.As(err, &e) {
				t.Fatalf("Token() error = %v, want a *cloudauth.Error", err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("Token() took %s with a 1s timeout", took)
			}
			if e.Verdict != tt.want || !strings.HasPrefix(e.Message, src.Name()+": ") {
				t.Errorf("Token() error = %s: %q, want %s naming the provider", e.Verdict, e.Message, tt.want)
			}
			if strings.Contains(e.Message, tt.secret) || strings.ContainsAny(e.Message, "\n\r") {
				t.Errorf("message %q holds a secret or a line break", e.Message)
			}
		})
	}
}
