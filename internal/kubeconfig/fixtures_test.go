package kubeconfig

import (
	"encoding/base64"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"syscall"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Every fixture secret holds the marker, so that noSecret can find any of them in a message.
const marker = "SEKRET"

const (
	fakeCA   = "-----BEGIN CERTIFICATE-----\nMIIBfakeCAcertificateDataForTestsOnly0123456789\n-----END CERTIFICATE-----\n"
	fakeCert = "-----BEGIN CERTIFICATE-----\nMIIBfakeClientCertificateForTestsOnly987654321\n-----END CERTIFICATE-----\n"
	fakeKey  = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI" + marker + "keyLineOneAbCdEfGhIjKlMnOp\nAwEHoUQD" + marker + "keyLineTwo0123456789QrStUv\n-----END EC PRIVATE KEY-----\n"
)

// tokenFor is the fixture token of a user.
func tokenFor(user string) string {
	return "tok-" + user + "-" + marker + "-eyJhbGciOiJSUzI1NiJ9.Zx9Qp3Lm7Vb2"
}

// hostFor is the fixture API server of a cluster.
func hostFor(cluster string) string { return "https://" + cluster + ".example.com:6443" }

// eksServer is an EKS cluster's API server, as aws eks update-kubeconfig writes it.
const eksServer = "https://0123456789ABCDEF0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com"

// newConfig builds a kubeconfig with one context per name, each with its own cluster (with
// certificate-authority-data) and token user of the same name, and no current-context.
func newConfig(contexts ...string) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	for _, n := range contexts {
		cfg.Clusters[n] = &clientcmdapi.Cluster{Server: hostFor(n), CertificateAuthorityData: []byte(fakeCA)}
		cfg.AuthInfos[n] = &clientcmdapi.AuthInfo{Token: tokenFor(n)}
		cfg.Contexts[n] = &clientcmdapi.Context{Cluster: n, AuthInfo: n}
	}
	return cfg
}

// withCurrent sets the current-context.
func withCurrent(cfg *clientcmdapi.Config, name string) *clientcmdapi.Config {
	cfg.CurrentContext = name
	return cfg
}

// yamlOf writes cfg as kubectl would, with a comment line whose base64 holds '+' and '/', so
// that the standard and URL alphabets differ.
func yamlOf(t testing.TB, cfg *clientcmdapi.Config) string {
	t.Helper()
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatalf("clientcmd.Write() = %v", err)
	}
	return "# ???~~~>>>\n" + string(data)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// wrap breaks s into lines of n characters, as base64 -w76 does.
func wrap(s string, n int, eol string) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + eol)
		s = s[n:]
	}
	return b.String() + s + eol
}

// execUser is a user that needs the aws exec credential plugin.
func execUser() *clientcmdapi.AuthInfo {
	return &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion:      "client.authentication.k8s.io/v1beta1",
		Command:         "aws",
		Args:            []string{"--region", "eu-west-1", "eks", "get-token", "--cluster-name", "prod"},
		Env:             []clientcmdapi.ExecEnvVar{{Name: "AWS_SECRET_ACCESS_KEY", Value: "aws-" + marker + "-wJalrXUtnFEMI"}},
		InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode,
	}}
}

// fakeEnv is an Env over maps: files are keyed by absolute path.
type fakeEnv struct {
	vars  map[string]string
	files map[string]string
	path  []string // commands LookPath finds; nil means no LookPath at all
	ci    bool     // Env.CI
}

func (f fakeEnv) env() Env {
	env := Env{
		Getenv: func(k string) string { return f.vars[k] },
		ReadFile: func(p string) ([]byte, error) {
			if v, ok := f.files[p]; ok {
				return []byte(v), nil
			}
			return nil, &fs.PathError{Op: "open", Path: p, Err: syscall.ENOENT}
		},
		Workspace: "/ws",
		Home:      "/home/me",
		CI:        f.ci,
	}
	if f.path != nil {
		env.LookPath = func(c string) (string, error) {
			if slices.Contains(f.path, c) {
				return "/usr/bin/" + c, nil
			}
			return "", errors.New("not found")
		}
	}
	return env
}

// summary is what a test checks of a Cluster.
type summary struct {
	Name, Source, Context, Host, Token string
	Invalid                            bool
}

func summarize(clusters []Cluster) []summary {
	var out []summary
	for _, c := range clusters {
		s := summary{Name: c.Name, Source: c.Source, Context: c.Context, Invalid: c.Invalid != ""}
		if c.Config != nil {
			s.Host, s.Token = c.Config.Host, c.Config.BearerToken
		}
		out = append(out, s)
	}
	return out
}

// ok is the summary of a cluster loaded from the fixture context ctx.
func ok(name, source, ctx string) summary {
	return summary{Name: name, Source: source, Context: ctx, Host: hostFor(ctx), Token: tokenFor(ctx)}
}

// noSecret fails when a message holds a fixture secret, or a piece of a base64 kubeconfig.
func noSecret(t *testing.T, what, msg string, encoded ...string) {
	t.Helper()
	if strings.Contains(msg, marker) {
		t.Errorf("%s holds a secret: %s", what, msg)
	}
	for _, e := range encoded {
		if len(e) > 16 && strings.Contains(msg, e[len(e)/2:len(e)/2+16]) {
			t.Errorf("%s holds a piece of an encoded kubeconfig: %s", what, msg)
		}
	}
}

// errString is err's message, or "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
