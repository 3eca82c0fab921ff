package kubeconfig

import (
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/cloudauth"
)

// oidcSpec is an oidc: source: an API server that trusts the CI's OIDC issuer, reached with
// the job's ID token for audience, no secret stored anywhere.
type oidcSpec struct {
	audience string
	// caFile or caEnv holds the server's CA (PEM, or base64 of PEM); neither means the
	// system's roots.
	caFile, caEnv string
	// tokenEnv or tokenFile holds the ID token; neither means GitHub's OIDC token endpoint.
	tokenEnv, tokenFile string
}

// oidcExample is a complete oidc: line for cluster name, for messages.
func oidcExample(name string) string {
	return name + "=oidc:https://" + name + ".example.com:6443 audience=app-status ca=certs/" + name + ".pem"
}

// parseOIDC reads "https://SERVER[:PORT] audience=AUD [ca=PATH|ca=env:VAR]
// [token=env:VAR|token=file:PATH]".
func (e *entry) parseOIDC() error {
	fields := strings.Fields(e.ref)
	if len(fields) == 0 {
		return fmt.Errorf("oidc: needs the API server's https:// URL and the audience, e.g. %s", oidcExample(e.name))
	}
	server, err := url.Parse(fields[0])
	switch {
	case err != nil || server.Host == "" || server.Scheme == "":
		return fmt.Errorf("oidc: needs the API server's URL, https://HOST[:PORT], first, e.g. %s", oidcExample(e.name))
	case server.Scheme != "https":
		return fmt.Errorf("oidc: the server %s is not https: an ID token is sent only over TLS; write https://%s", server.Redacted(), server.Host)
	case server.User != nil || server.RawQuery != "" || server.Fragment != "":
		return errors.New("oidc: the server's URL may not have a user, a query or a fragment: write https://HOST[:PORT]")
	}
	e.ref = strings.TrimSuffix(server.String(), "/")
	spec := &oidcSpec{}
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		key, value, ok := strings.Cut(f, "=")
		if !ok || value == "" {
			return fmt.Errorf("oidc: %q is not KEY=VALUE: after the server come audience=AUDIENCE, and optionally ca=PATH (or ca=env:VAR) and token=env:VAR (or token=file:PATH)", f)
		}
		if seen[key] {
			return fmt.Errorf("oidc: %s= is given twice", key)
		}
		seen[key] = true
		switch key {
		case "audience":
			spec.audience = value
		case "ca":
			if v, isEnv := strings.CutPrefix(value, "env:"); isEnv {
				if !envVarName.MatchString(v) {
					return fmt.Errorf("oidc: ca=env: needs a variable name (letters, digits and _), e.g. ca=env:%s_CA", envName(e.name))
				}
				spec.caEnv = v
			} else {
				spec.caFile = strings.TrimPrefix(value, "file:")
			}
		case "token":
			kind, ref, _ := strings.Cut(value, ":")
			switch {
			case kind == "env" && envVarName.MatchString(ref):
				spec.tokenEnv = ref
			case kind == "file" && ref != "":
				spec.tokenFile = ref
			default:
				return fmt.Errorf("oidc: token= is env:VAR (a GitLab id_tokens: variable) or file:PATH, e.g. token=env:%s_ID_TOKEN", envName(e.name))
			}
		default:
			return fmt.Errorf("oidc: unknown option %q: the options are audience=, ca= and token=", key)
		}
	}
	if spec.audience == "" {
		return fmt.Errorf("oidc: needs audience=AUDIENCE, the audience the API server's AuthenticationConfiguration expects, e.g. %s", oidcExample(e.name))
	}
	e.oidc = spec
	return nil
}

// oidcCluster is the cluster of an oidc: line: its server with its CA, and the job's ID token
// as the bearer token of every request, sent to that server alone. A CA that cannot be read
// is an error; an environment that cannot give a token (GitHub Actions without `id-token:
// write`) makes the cluster Invalid, saying what to add. A line of a clusters file, which can
// be a pull request's, is Invalid in CI, whatever its server, and its token and CA files must
// be in the file's folder: it never chooses where the job's token goes, nor which token.
func (l *loader) oidcCluster(e entry, origin, dir string) (Cluster, error) {
	spec := e.oidc
	fail := func(format string, args ...any) (Cluster, error) {
		return Cluster{}, fmt.Errorf("%s line %d: %s: %s", origin, e.line, e.source(), fmt.Sprintf(format, args...))
	}
	cfg := &rest.Config{Host: e.ref}
	fromFile := l.clustersFromFile()
	if fromFile && l.env.CI {
		// Allowing the server is not enough: the line would still choose the audience the
		// job's token is asked for, or which variable or file is sent as it (another
		// id_tokens: variable, a cloud's audience), and the allowed server would get it.
		return Cluster{Name: e.name, Source: e.written(), Invalid: fmt.Sprintf("%s line %d: the cluster %q is an oidc: line of a clusters file, which is not used in a CI job: "+
			"the file can come from the repository, so from a pull request, and an oidc: line chooses where the job's identity token goes, for which audience, and which token it is "+
			"(--allowed-server does not change that): put the line in the pipeline itself, as --cluster '%s=oidc:...' in the job's script, or in the action's or the GitLab component's clusters input",
			origin, e.line, e.name, e.name)}, nil
	}
	// A line of a clusters file reads its files from the file's folder alone, as a file:
	// kubeconfig does (confine): a pull request cannot send another file as the token.
	path := func(option, p string) (string, string) {
		file := l.resolve(dir, p)
		if !fromFile {
			return file, ""
		}
		file, refused := confine(dir, p, file)
		if refused != "" {
			refused = fmt.Sprintf("%s line %d: %s: %s%s is not read: %s, and a line of a clusters file, which can come from the repository and so from a pull request, "+
				"may refer only to files in the folder its relative paths start at (%s): move the file there, or put the line in the pipeline itself (--cluster)",
				origin, e.line, e.source(), option, p, strings.ReplaceAll(refused, "the kubeconfig's folder", "that folder"), dir)
		}
		return file, refused
	}
	var ca []byte
	switch {
	case spec.caEnv != "":
		v := strings.TrimSpace(l.env.Getenv(spec.caEnv))
		if v == "" {
			return fail("ca=env:%s: the environment variable is empty or not set: put the API server's CA certificate (PEM) in it", spec.caEnv)
		}
		ca = []byte(v)
	case spec.caFile != "":
		file, refused := path("ca=", spec.caFile)
		if refused != "" {
			return Cluster{Name: e.name, Source: e.written(), Invalid: refused}, nil
		}
		data, err := l.env.ReadFile(file)
		if err != nil {
			return fail("ca=%s: cannot read the API server's CA certificate: %v", spec.caFile, err)
		}
		ca = data
	}
	if ca != nil {
		if !strings.Contains(string(ca), "-----BEGIN") {
			if decoded, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(ca))); err == nil {
				ca = decoded
			}
		}
		if !x509.NewCertPool().AppendCertsFromPEM(ca) {
			return fail("ca=: holds no PEM certificate: give the API server's CA certificate (-----BEGIN CERTIFICATE-----, or its base64)")
		}
		cfg.CAData = ca
	}
	from := cloudauth.IDTokenFrom{Audience: spec.audience, Env: spec.tokenEnv}
	if spec.tokenFile != "" {
		file, refused := path("token=file:", spec.tokenFile)
		if refused != "" {
			return Cluster{Name: e.name, Source: e.written(), Invalid: refused}, nil
		}
		from.File = file
	}
	opts := l.env.CloudAuth
	opts.Getenv, opts.ReadFile, opts.OnSecret = l.env.Getenv, l.env.ReadFile, l.secrets.Add
	cluster := Cluster{Name: e.name, Source: e.written()}
	src, err := cloudauth.NewIDTokenSource(opts, from)
	if err != nil {
		cluster.Invalid = err.Error()
		return cluster, nil
	}
	// The token goes to the line's own server alone: never on a redirect to another host.
	cfg.WrapTransport = src.WrapTransportFor(e.ref)
	cluster.Config = cfg
	return cluster, nil
}

// clustersFromFile reports whether the clusters list is a file (--clusters-file), which can
// come from the repository, rather than the pipeline's own text (the action's clusters input,
// --cluster).
func (l *loader) clustersFromFile() bool {
	return l.in.CLI && l.in.ClustersFile != "" && len(l.in.ClusterLines) == 0 && l.in.KubeconfigDir == ""
}
