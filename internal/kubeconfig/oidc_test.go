package kubeconfig

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
)

func TestParseOIDCSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		text    string
		want    []entry
		wantErr string
	}{{
		name: "server and audience",
		text: "prod=oidc:https://prod.example.com:6443 audience=app-status",
		want: []entry{{line: 1, text: "prod=oidc:https://prod.example.com:6443 audience=app-status", name: "prod", kind: "oidc",
			ref: "https://prod.example.com:6443", oidc: &oidcSpec{audience: "app-status"}}},
	}, {
		name: "every option",
		text: "a=oidc:https://a.example.com/ audience=k8s ca=certs/a.pem token=env:CI_ID_TOKEN\n" +
			"b=oidc:https://b.example.com audience=k8s ca=env:B_CA token=file:/run/ci/token",
		want: []entry{{line: 1, text: "a=oidc:https://a.example.com/ audience=k8s ca=certs/a.pem token=env:CI_ID_TOKEN", name: "a", kind: "oidc",
			ref: "https://a.example.com", oidc: &oidcSpec{audience: "k8s", caFile: "certs/a.pem", tokenEnv: "CI_ID_TOKEN"}},
			{line: 2, text: "b=oidc:https://b.example.com audience=k8s ca=env:B_CA token=file:/run/ci/token", name: "b", kind: "oidc",
				ref: "https://b.example.com", oidc: &oidcSpec{audience: "k8s", caEnv: "B_CA", tokenFile: "/run/ci/token"}}},
	}, {
		name:    "not https",
		text:    "prod=oidc:http://prod.example.com:6443 audience=k8s",
		wantErr: `input clusters line 1: "prod=oidc:http://prod.example.com:6443 audience=k8s": oidc: the server http://prod.example.com:6443 is not https: an ID token is sent only over TLS; write https://prod.example.com:6443`,
	}, {
		name:    "no audience",
		text:    "prod=oidc:https://prod.example.com",
		wantErr: `input clusters line 1: "prod=oidc:https://prod.example.com": oidc: needs audience=AUDIENCE, the audience the API server's AuthenticationConfiguration expects, e.g. prod=oidc:https://prod.example.com:6443 audience=app-status ca=certs/prod.pem`,
	}, {
		name:    "no server",
		text:    "prod=oidc:audience=k8s",
		wantErr: `input clusters line 1: "prod=oidc:audience=k8s": oidc: needs the API server's URL, https://HOST[:PORT], first, e.g. prod=oidc:https://prod.example.com:6443 audience=app-status ca=certs/prod.pem`,
	}, {
		name:    "unknown option",
		text:    "prod=oidc:https://p.example.com audience=k8s insecure=true",
		wantErr: `input clusters line 1: "prod=oidc:https://p.example.com audience=k8s insecure=true": oidc: unknown option "insecure": the options are audience=, ca= and token=`,
	}, {
		name:    "bad token source, shown since it names no secret",
		text:    "prod=oidc:https://p.example.com audience=k8s token=TOKEN",
		wantErr: `input clusters line 1: "prod=oidc:https://p.example.com audience=k8s token=TOKEN": oidc: token= is env:VAR (a GitLab id_tokens: variable) or file:PATH, e.g. token=env:PROD_ID_TOKEN`,
	}, {
		name:    "a pasted token is not shown",
		text:    "prod=oidc:https://p.example.com audience=k8s token=" + tokenFor("a"),
		wantErr: `input clusters line 1: this line looks like kubeconfig contents or a credential (not shown); ` + sourceHelp + `: put the kubeconfig in an environment variable and write name=env:VAR`,
	}, {
		name:    "user in the URL",
		text:    "prod=oidc:https://me@p.example.com audience=k8s",
		wantErr: `input clusters line 1: "prod=oidc:https://me@p.example.com audience=k8s": oidc: the server's URL may not have a user, a query or a fragment: write https://HOST[:PORT]`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseClusters(tt.text, "input clusters")
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("parseClusters() error (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(entry{}, oidcSpec{})); diff != "" {
				t.Errorf("parseClusters() (-want +got):\n%s", diff)
			}
		})
	}
}

// jwtFor is an unsigned JWT for audience that expires in an hour: the API server checks
// signatures, not the loader.
func jwtFor(audience string) string {
	payload, _ := json.Marshal(map[string]any{"aud": audience, "exp": time.Now().Add(time.Hour).Unix(), "repository": "org/app"})
	return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(payload) + ".c2lnbmF0dXJlLXNpZ25hdHVyZQ"
}

// TestLoadOIDC: an oidc: line is a cluster whose requests go to its server alone, over TLS
// with its CA (a file, or a variable with the PEM or its base64), carrying the job's ID token
// (GitHub's endpoint, asked for the line's audience, or a GitLab id_tokens: variable), which is
// a secret before it is sent; a job without id-token: write gets an Invalid cluster that says
// which line to add, and a CA that cannot be read is bad input.
func TestLoadOIDC(t *testing.T) {
	t.Parallel()
	// The API server answers with the bearer token it received.
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")))
	}))
	t.Cleanup(api.Close)
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: api.Certificate().Raw}))
	var mu sync.Mutex
	var asked []string
	githubToken := jwtFor("gh-audience")
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "bearer request-token-0123456789" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		asked = append(asked, r.URL.Query().Get("audience"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"value": githubToken})
	}))
	t.Cleanup(endpoint.Close)
	gitlabToken := jwtFor("gl-audience")
	github := map[string]string{"GITHUB_ACTIONS": "true", "ACTIONS_ID_TOKEN_REQUEST_URL": endpoint.URL + "/idtoken?api-version=2.0",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-token-0123456789"}

	tests := []struct {
		name        string
		clusters    string
		env         fakeEnv
		wantToken   string   // the token the API server received
		wantAsked   []string // the audiences asked of GitHub
		wantInvalid string
		wantErr     string
	}{{
		name:      "GitHub's ID token, CA file",
		clusters:  "prod=oidc:" + api.URL + " audience=gh-audience ca=certs/prod.pem",
		env:       fakeEnv{vars: github, files: map[string]string{"/ws/certs/prod.pem": caPEM}},
		wantToken: githubToken,
		wantAsked: []string{"gh-audience"},
	}, {
		name:      "GitLab id_tokens variable, CA in a variable as base64",
		clusters:  "prod=oidc:" + api.URL + " audience=gl-audience ca=env:PROD_CA token=env:APP_STATUS_ID_TOKEN",
		env:       fakeEnv{vars: map[string]string{"GITLAB_CI": "true", "APP_STATUS_ID_TOKEN": gitlabToken, "PROD_CA": base64.StdEncoding.EncodeToString([]byte(caPEM))}},
		wantToken: gitlabToken,
	}, {
		name:        "GitHub job without id-token: write",
		clusters:    "prod=oidc:" + api.URL + " audience=gh-audience ca=env:PROD_CA",
		env:         fakeEnv{vars: map[string]string{"GITHUB_ACTIONS": "true", "PROD_CA": caPEM}},
		wantInvalid: "add `permissions: id-token: write` to the job",
	}, {
		name:     "CA file missing",
		clusters: "prod=oidc:" + api.URL + " audience=gh-audience ca=certs/prod.pem",
		env:      fakeEnv{vars: github},
		wantErr:  "input clusters line 1: oidc:" + api.URL + ": ca=certs/prod.pem: cannot read the API server's CA certificate: open /ws/certs/prod.pem: no such file or directory",
	}, {
		name:     "CA that is no certificate",
		clusters: "prod=oidc:" + api.URL + " audience=gh-audience ca=env:PROD_CA",
		env:      fakeEnv{vars: map[string]string{"PROD_CA": "not a certificate"}},
		wantErr:  "input clusters line 1: oidc:" + api.URL + ": ca=: holds no PEM certificate: give the API server's CA certificate (-----BEGIN CERTIFICATE-----, or its base64)",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clusters, secrets, err := Load(Input{Clusters: tt.clusters}, tt.env.env())
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Fatalf("Load() error (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			if len(clusters) != 1 || clusters[0].Source != "oidc:"+api.URL {
				t.Fatalf("clusters = %+v; want one, of source oidc:%s", summarize(clusters), api.URL)
			}
			c := clusters[0]
			if tt.wantInvalid != "" {
				if !strings.Contains(c.Invalid, tt.wantInvalid) || c.Config != nil {
					t.Fatalf("Invalid = %q; want it to contain %q", c.Invalid, tt.wantInvalid)
				}
				return
			}
			if c.Invalid != "" || c.Config.BearerToken != "" {
				t.Fatalf("Invalid = %q, BearerToken set %v; want a config whose transport sets the token", c.Invalid, c.Config.BearerToken != "")
			}
			client, err := rest.HTTPClientFor(c.Config)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Get(api.URL + "/version")
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.wantToken {
				t.Errorf("the API server received another token than the job's")
			}
			if !slices.Contains(secrets.Values(), tt.wantToken) {
				t.Errorf("the ID token is not among the secrets to mask")
			}
			if tt.wantAsked != nil {
				mu.Lock()
				defer mu.Unlock()
				if diff := cmp.Diff(tt.wantAsked, asked); diff != "" {
					t.Errorf("audiences asked of GitHub (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestOIDCTokenGoesToItsServerAlone: a redirect the API server answers with, to another host,
// is followed without the ID token.
func TestOIDCTokenGoesToItsServerAlone(t *testing.T) {
	t.Parallel()
	elsewhere := make(chan string, 1)
	other := httptest.NewTLSServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		elsewhere <- r.Header.Get("Authorization")
	}))
	t.Cleanup(other.Close)
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			t.Errorf("the API server got no token")
		}
		// Another port is another server.
		http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
	}))
	t.Cleanup(api.Close)
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: api.Certificate().Raw}))
	env := fakeEnv{vars: map[string]string{"ID_TOKEN": jwtFor("k8s"), "CA": caPEM}}
	clusters, _, err := Load(Input{Clusters: "prod=oidc:" + api.URL + " audience=k8s ca=env:CA token=env:ID_TOKEN"}, env.env())
	if err != nil {
		t.Fatal(err)
	}
	client, err := rest.HTTPClientFor(clusters[0].Config)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(api.URL + "/version")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := <-elsewhere; got != "" {
		t.Errorf("the redirect to another host carried %q; want no Authorization header", got)
	}
}

// TestOIDCLineOfAClustersFile: an oidc: line chooses where the job's ID token goes, for which
// audience and which token, so in a CI job one of a clusters file (which a pull request can
// change) is refused, its cluster Invalid, before any token is asked or sent, even when the
// workflow lists its server; the pipeline's own lines (--cluster, the clusters input) and a
// run outside CI use it. A line of a file reads its token and CA files from the file's folder
// alone.
func TestOIDCLineOfAClustersFile(t *testing.T) {
	// Not parallel, nor its cases: each case counts what the fake servers received.
	var mu sync.Mutex
	var received []string // the Authorization headers the API server received
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		received = append(received, r.Header.Get("Authorization"))
		mu.Unlock()
		_, _ = w.Write([]byte("{}"))
	}))
	t.Cleanup(api.Close)
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: api.Certificate().Raw}))
	var asked []string // the audiences asked of GitHub
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Query().Get("audience"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"value": jwtFor("sts.amazonaws.com")})
	}))
	t.Cleanup(endpoint.Close)
	token := jwtFor("app-status")
	vars := map[string]string{"CA": caPEM, "ID_TOKEN": token, "GITHUB_ACTIONS": "true",
		"ACTIONS_ID_TOKEN_REQUEST_URL": endpoint.URL + "/idtoken", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-token-0123456789"}
	line := "x=oidc:" + api.URL + " audience=app-status ca=env:CA token=env:ID_TOKEN"
	// The refusal names the line and the cluster, says why, and gives the fix.
	refusedInCI := []string{`clusters.txt line 1: the cluster "x" is an oidc: line of a clusters file, which is not used in a CI job`,
		"from a pull request", "where the job's identity token goes, for which audience, and which token it is", "--allowed-server does not change that",
		"--cluster 'x=oidc:...' in the job's script, or in the action's or the GitLab component's clusters input"}

	tests := []struct {
		name        string
		in          Input
		ci          bool
		files       map[string]string
		wantInvalid []string // what the Invalid message says; none: the token reaches the server
	}{{
		name: "CI, a line of a clusters file",
		in:   Input{CLI: true, ClustersFile: "clusters.txt"},
		ci:   true, files: map[string]string{"/ws/clusters.txt": line},
		wantInvalid: refusedInCI,
	}, {
		name: "CI, a line of a clusters file asking GitHub for another audience",
		in:   Input{CLI: true, ClustersFile: "clusters.txt"},
		ci:   true, files: map[string]string{"/ws/clusters.txt": "x=oidc:" + api.URL + " audience=sts.amazonaws.com ca=env:CA"},
		wantInvalid: refusedInCI,
	}, {
		name: "CI, a line of a clusters file in another folder (--clusters-dir)",
		in:   Input{CLI: true, ClustersFile: "clusters.txt", ClustersBase: "."},
		ci:   true, files: map[string]string{"/ws/clusters.txt": line},
		wantInvalid: refusedInCI,
	}, {
		name: "CI, a --cluster line",
		in:   Input{CLI: true, ClusterLines: []string{line}},
		ci:   true,
	}, {
		name: "CI, the action's clusters input",
		in:   Input{Clusters: line},
		ci:   true,
	}, {
		name:  "outside CI, a line of a clusters file",
		in:    Input{CLI: true, ClustersFile: "clusters.txt"},
		files: map[string]string{"/ws/clusters.txt": line},
	}, {
		// The workflow allows the server, but the file would still choose the audience and
		// the token: a cloud's audience, or another id_tokens: variable, sent to it.
		name: "CI, a line of a clusters file whose server the workflow allows",
		in:   Input{CLI: true, ClustersFile: "clusters.txt", AllowedServers: []string{api.URL}},
		ci:   true, files: map[string]string{"/ws/clusters.txt": line},
		wantInvalid: refusedInCI,
	}, {
		name: "CI, a line of a clusters file whose server the workflow allows, asking GitHub for a cloud's audience",
		in:   Input{CLI: true, ClustersFile: "clusters.txt", AllowedServers: []string{api.URL}},
		ci:   true, files: map[string]string{"/ws/clusters.txt": "x=oidc:" + api.URL + " audience=sts.amazonaws.com ca=env:CA"},
		wantInvalid: refusedInCI,
	}, {
		name:  "a token file in the clusters file's folder",
		in:    Input{CLI: true, ClustersFile: "clusters.txt"},
		files: map[string]string{"/ws/clusters.txt": "x=oidc:" + api.URL + " audience=app-status ca=env:CA token=file:tokens/id", "/ws/tokens/id": token},
	}, {
		name: "a token file outside the clusters file's folder",
		in:   Input{CLI: true, ClustersFile: "clusters.txt"},
		files: map[string]string{"/ws/clusters.txt": "x=oidc:" + api.URL + " audience=app-status ca=env:CA token=file:/var/run/secrets/kubernetes.io/serviceaccount/token",
			"/var/run/secrets/kubernetes.io/serviceaccount/token": token},
		wantInvalid: []string{"token=file:/var/run/secrets/kubernetes.io/serviceaccount/token is not read: it is outside that folder", "(/ws)"},
	}, {
		name: "a token file up from the clusters file's folder",
		in:   Input{CLI: true, ClustersFile: "clusters.txt"},
		files: map[string]string{"/ws/clusters.txt": "x=oidc:" + api.URL + " audience=app-status ca=env:CA token=file:../token",
			"/token": token},
		wantInvalid: []string{`token=file:../token is not read: it goes up with ".."`},
	}, {
		name: "a CA file outside the clusters file's folder",
		in:   Input{CLI: true, ClustersFile: "clusters.txt"},
		files: map[string]string{"/ws/clusters.txt": "x=oidc:" + api.URL + " audience=app-status ca=/etc/ca.pem token=env:ID_TOKEN",
			"/etc/ca.pem": caPEM},
		wantInvalid: []string{"ca=/etc/ca.pem is not read: it is outside that folder"},
	}, {
		name:  "a token file anywhere, on a --cluster line",
		in:    Input{CLI: true, ClusterLines: []string{"x=oidc:" + api.URL + " audience=app-status ca=env:CA token=file:/run/ci/token"}},
		ci:    true,
		files: map[string]string{"/run/ci/token": token},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			received, asked = nil, nil
			mu.Unlock()
			env := fakeEnv{vars: vars, files: tt.files}.env()
			env.CI = tt.ci
			clusters, _, err := Load(tt.in, env)
			if err != nil {
				t.Fatal(err)
			}
			if len(clusters) != 1 {
				t.Fatalf("clusters = %+v; want one", summarize(clusters))
			}
			c := clusters[0]
			if tt.wantInvalid != nil {
				for _, want := range tt.wantInvalid {
					if !strings.Contains(c.Invalid, want) {
						t.Errorf("Invalid = %q; want it to contain %q", c.Invalid, want)
					}
				}
				if c.Config != nil {
					t.Errorf("the refused cluster has a config")
				}
				mu.Lock()
				defer mu.Unlock()
				if len(received) != 0 || len(asked) != 0 {
					t.Errorf("the API server received %q, GitHub was asked for %q; want nothing sent", received, asked)
				}
				return
			}
			if c.Invalid != "" {
				t.Fatalf("Invalid = %q; want the cluster used", c.Invalid)
			}
			client, err := rest.HTTPClientFor(c.Config)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Get(api.URL + "/version")
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			if want := []string{"Bearer " + token}; !slices.Equal(received, want) {
				t.Errorf("the API server received %d requests, with the job's token %v; want one, with it", len(received), slices.Equal(received, want))
			}
		})
	}
}
