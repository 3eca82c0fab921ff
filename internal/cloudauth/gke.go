package cloudauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// gkeScopes are the scopes gke-gcloud-auth-plugin asks for.
var gkeScopes = []string{"https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/userinfo.email"}

// gkeDefaultLifetime is used when a Google token comes without an expiry.
const gkeDefaultLifetime = 30 * time.Minute

// parseGKEPlugin reads gke-gcloud-auth-plugin's arguments: none, as gcloud container clusters
// get-credentials writes it, or --use_application_default_credentials.
func parseGKEPlugin(args []string) (func(*provider) (fetcher, error), error) {
	positional, err := flags{switches: map[string]*bool{"--use_application_default_credentials": nil}}.parse(args)
	switch {
	case err != nil:
		return nil, err
	case len(positional) > 0:
		return nil, unexpectedArguments(len(positional), "gke-gcloud-auth-plugin")
	}
	return startGKE, nil
}

const googleCredentialsHelp = "set GOOGLE_APPLICATION_CREDENTIALS to a credentials file " +
	"(google-github-actions/auth writes one, for workload identity federation or a service account key)"

// googleCredentialTypes are the Application Default Credentials files the provider reads.
var googleCredentialTypes = []string{
	"external_account", "service_account", "authorized_user", "impersonated_service_account", "external_account_authorized_user",
}

// startGKE finds the Application Default Credentials file and returns the fetcher of its
// access tokens. Unlike google.FindDefaultCredentials it never falls back to the GCE metadata
// server, which a container action cannot count on and whose probing takes seconds.
func startGKE(p *provider) (fetcher, error) {
	path, data, err := findGoogleCredentials(p)
	if err != nil {
		return nil, err
	}
	var file struct {
		Type             string `json:"type"`
		CredentialSource struct {
			Headers map[string]string `json:"headers"`
			File    string            `json:"file"`
		} `json:"credential_source"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, invalid("the Google credentials file %s is not JSON: %s", path, googleCredentialsHelp)
	}
	var doc any
	_ = json.Unmarshal(data, &doc)
	walkSecrets("", doc, p.secrets.add) // keys, refresh tokens, client secrets
	for _, v := range file.CredentialSource.Headers {
		p.secrets.add(v) // "Bearer <ACTIONS_ID_TOKEN_REQUEST_TOKEN>"
		if _, cred, ok := strings.Cut(v, " "); ok {
			p.secrets.add(cred)
		}
	}
	if subject := file.CredentialSource.File; subject != "" {
		// The Google library reads this file itself; it is read here first, through the same
		// checks as every credential file (a regular file, not under /proc, /sys or /dev, of a
		// bounded size), and what it holds, the subject token, is masked.
		if err := maskSubjectToken(p, subject); err != nil {
			return nil, invalid("the Google credentials file %s names a credential_source.file that cannot be read here: %s", path, p.secrets.quote(err))
		}
	}
	if !slices.Contains(googleCredentialTypes, file.Type) {
		return nil, invalid("the Google credentials file %s has the type %q, which the built-in provider does not read (it reads %s)",
			path, file.Type, strings.Join(googleCredentialTypes, ", "))
	}
	g := &gkeTokens{p: p, path: path, data: data, subjectFile: file.CredentialSource.File}
	p.locate = g.locate
	return g.token, nil
}

// maskSubjectToken reads an external account's subject token file and masks what it holds.
func maskSubjectToken(p *provider, path string) error {
	data, err := p.opts.ReadFile(path)
	if err != nil {
		return err
	}
	p.secrets.add(strings.TrimSpace(string(data)))
	return nil
}

// findGoogleCredentials reads GOOGLE_APPLICATION_CREDENTIALS's file, or gcloud's
// application_default_credentials.json.
func findGoogleCredentials(p *provider) (string, []byte, error) {
	if path := p.env.get("GOOGLE_APPLICATION_CREDENTIALS"); path != "" {
		data, err := readRunnerFile(p.env, p.opts, path)
		if err != nil {
			why := "cannot be read here"
			if errors.Is(err, fs.ErrNotExist) {
				why = "does not exist here"
			}
			return "", nil, invalid("GOOGLE_APPLICATION_CREDENTIALS names %s, which %s: run google-github-actions/auth before this step (it writes the file into the workspace)", path, why)
		}
		return path, data, nil
	}
	dir := p.env.get("CLOUDSDK_CONFIG")
	if dir == "" && p.env.get("HOME") != "" {
		dir = filepath.Join(p.env.get("HOME"), ".config", "gcloud")
	}
	if dir != "" {
		path := filepath.Join(dir, "application_default_credentials.json")
		if data, err := p.opts.ReadFile(path); err == nil {
			return path, data, nil
		}
	}
	return "", nil, invalid("no Google credentials in the environment: %s", googleCredentialsHelp)
}

// gkeTokens gets access tokens with golang.org/x/oauth2/google, whose token sources keep the
// context they are made with: it is made on first use, without its cancellation, carrying
// the provider's HTTP client (every request of it is bounded by the client's timeout).
type gkeTokens struct {
	p    *provider
	path string
	data []byte
	// subjectFile is an external account's subject token file, which a login action may
	// rewrite: its new token is masked before the library reads it.
	subjectFile string

	mu sync.Mutex
	ts oauth2.TokenSource
}

func (g *gkeTokens) tokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ts == nil {
		sdkCtx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, g.p.http)
		// The file's type is read first and only the kinds a workflow's Google login writes are
		// taken: the library no longer reads a file of any type unchecked.
		var file struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(g.data, &file); err != nil {
			return nil, invalid("the Google credentials file %s is not JSON: %s", g.path, g.p.secrets.quote(err))
		}
		credType := google.CredentialsType(file.Type)
		switch credType {
		case google.ServiceAccount, google.ExternalAccount, google.AuthorizedUser, google.ImpersonatedServiceAccount, google.ExternalAccountAuthorizedUser:
		default:
			return nil, invalid("the Google credentials file %s is of type %q: use a service account key, a workload identity federation (external_account) or an impersonated service account file", g.path, file.Type)
		}
		creds, err := google.CredentialsFromJSONWithTypeAndParams(sdkCtx, g.data, credType, google.CredentialsParams{Scopes: gkeScopes})
		if err != nil {
			return nil, invalid("the Google credentials file %s cannot be used: %s", g.path, g.p.secrets.quote(err))
		}
		g.ts = creds.TokenSource
	}
	return g.ts, nil
}

func (g *gkeTokens) token(ctx context.Context) (token, error) {
	ts, err := g.tokenSource(ctx)
	if err != nil {
		return token{}, err
	}
	if g.subjectFile != "" {
		if err := maskSubjectToken(g.p, g.subjectFile); err != nil {
			return token{}, invalid("the subject token file %s cannot be read here: %s", g.subjectFile, g.p.secrets.quote(err))
		}
	}
	tok, err := ts.Token()
	if err != nil {
		return token{}, err
	}
	expiry := tok.Expiry
	if expiry.IsZero() {
		expiry = g.p.opts.Clock().Add(gkeDefaultLifetime)
	}
	return token{value: tok.AccessToken, expiry: expiry}, nil
}

// gkeClusterName is the name gcloud container clusters get-credentials gives a cluster's
// entry: gke_PROJECT_LOCATION_NAME (none of which holds an underscore).
var gkeClusterName = regexp.MustCompile(`^gke_([a-z][a-z0-9.:-]{0,100})_([a-z0-9-]{1,63})_([a-z][a-z0-9-]{0,99})$`)

// locate asks GKE (clusters.get, with the job's access token) where the cluster the
// kubeconfig's entry names (gke_PROJECT_LOCATION_NAME) is: its endpoints (the IP, the private
// IP, the DNS name) and CA.
func (g *gkeTokens) locate(ctx context.Context, entry Entry) (Endpoint, error) {
	kubeCluster := entry.Cluster
	m := gkeClusterName.FindStringSubmatch(kubeCluster)
	if m == nil {
		return Endpoint{}, invalid("the kubeconfig's cluster entry is named %q, not gke_PROJECT_LOCATION_NAME as gcloud container clusters get-credentials names it: "+
			"the built-in provider asks GKE where the cluster of that name is before it sends a token; rename the entry (and its context's cluster:)", kubeCluster)
	}
	project, location, name := m[1], m[2], m[3]
	call := apiCall{cloud: "GKE", what: fmt.Sprintf("clusters.get of the cluster %q in %s of the project %s", name, location, project),
		permission: "container.clusters.get (roles/container.clusterViewer)", notFound: "check the project, location and name in the kubeconfig's cluster entry gke_PROJECT_LOCATION_NAME"}
	tok, err := g.token(ctx)
	if err != nil {
		return Endpoint{}, err
	}
	base := g.p.opts.GKEAPI
	if base == "" {
		base = "https://container.googleapis.com"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/v1/projects/"+project+"/locations/"+location+"/clusters/"+name, nil)
	if err != nil {
		return Endpoint{}, fmt.Errorf("GKE clusters.get: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+tok.value)
	var out struct {
		Endpoint   string `json:"endpoint"`
		MasterAuth struct {
			ClusterCACertificate string `json:"clusterCaCertificate"`
		} `json:"masterAuth"`
		PrivateClusterConfig struct {
			PrivateEndpoint string `json:"privateEndpoint"`
		} `json:"privateClusterConfig"`
		ControlPlaneEndpointsConfig struct {
			DNSEndpointConfig struct {
				Endpoint string `json:"endpoint"`
			} `json:"dnsEndpointConfig"`
		} `json:"controlPlaneEndpointsConfig"`
	}
	if err := call.do(g.p.http, req, &out); err != nil {
		return Endpoint{}, err
	}
	ca, err := base64.StdEncoding.DecodeString(out.MasterAuth.ClusterCACertificate)
	if err != nil {
		return Endpoint{}, invalid("GKE's answer to %s has a CA that is not base64", call.what)
	}
	ep := Endpoint{CAData: ca}
	for _, e := range []string{out.ControlPlaneEndpointsConfig.DNSEndpointConfig.Endpoint, out.Endpoint, out.PrivateClusterConfig.PrivateEndpoint} {
		if h := endpointHost(e); h != "" {
			ep.Hosts = append(ep.Hosts, h)
		}
	}
	return ep, nil
}
