package cloudauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
)

// fakeIDTokens is GitHub's OIDC token endpoint of a job: it answers the request token with
// an unsigned JWT for the audience asked, valid for life from the clock's now.
type fakeIDTokens struct {
	t            *testing.T
	clock        *fakeClock
	life         time.Duration
	requestToken string

	mu        sync.Mutex
	audiences []string // asked, in order
}

func (f *fakeIDTokens) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "bearer "+f.requestToken {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	aud := r.URL.Query().Get("audience")
	f.mu.Lock()
	f.audiences = append(f.audiences, aud)
	n := len(f.audiences)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"value": testJWT(map[string]any{
		"iss": "https://token.actions.githubusercontent.com", "aud": aud, "sub": "repo:org/app:environment:prod",
		"repository": "org/app", "environment": "prod", "exp": f.clock.Now().Add(f.life).Unix(), "jti": strings.Repeat("j", n),
	})})
}

func (f *fakeIDTokens) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.audiences...)
}

// testJWT is a JWT of claims, with a signature that is no signature: the source never checks
// one, the API server does.
func testJWT(claims map[string]any) string {
	payload, _ := json.Marshal(claims)
	return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(payload) + ".c2lnbmF0dXJlLXNpZ25hdHVyZQ"
}

// TestIDTokenSourceRefreshesBeforeExpiry: GitHub's ID token is asked for the cluster's
// audience with the request token, shared by the requests while it is fresh, asked again
// before its exp claim (halfway through a 6-minute life), and every token and the request
// token reach OnSecret before any request carries them.
func TestIDTokenSourceRefreshesBeforeExpiry(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	endpoint := &fakeIDTokens{t: t, clock: clock, life: 6 * time.Minute, requestToken: "request-token-0123456789"}
	srv := httptest.NewServer(endpoint)
	t.Cleanup(srv.Close)

	var mu sync.Mutex
	masked := map[string]bool{}
	var sent []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		mu.Lock()
		defer mu.Unlock()
		if !masked[tok] {
			t.Errorf("a request carried a token that was not masked first")
		}
		sent = append(sent, tok)
	}))
	t.Cleanup(api.Close)

	env := map[string]string{"GITHUB_ACTIONS": "true", "ACTIONS_ID_TOKEN_REQUEST_URL": srv.URL + "/idtoken?api-version=2.0",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": endpoint.requestToken}
	src, err := NewIDTokenSource(Options{
		Getenv:   func(k string) string { return env[k] },
		OnSecret: func(v string) { mu.Lock(); masked[v] = true; mu.Unlock() },
		Clock:    clock.Now,
	}, IDTokenFrom{Audience: "app-status.example"})
	if err != nil {
		t.Fatal(err)
	}
	if !masked[endpoint.requestToken] {
		t.Errorf("the request token was not masked")
	}
	client := &http.Client{Transport: src.WrapTransportFor(api.URL)(http.DefaultTransport)}
	get := func() {
		t.Helper()
		resp, err := client.Get(api.URL)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	get()
	get()
	clock.Add(2 * time.Minute) // still fresh
	get()
	clock.Add(90 * time.Second) // past half of its life: replaced
	get()
	waitIdle(t, src)
	get()
	if diff := cmp.Diff([]string{"app-status.example", "app-status.example"}, endpoint.asked()); diff != "" {
		t.Errorf("audiences asked (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 5 || sent[0] != sent[3] || sent[4] == sent[0] {
		t.Errorf("tokens sent: want the first until the refresh, then a new one; got %d tokens, first==fourth %v, fifth new %v",
			len(sent), len(sent) > 3 && sent[0] == sent[3], len(sent) > 4 && sent[4] != sent[0])
	}
}

// TestIDTokenSourceEnvironment: where the token comes from, and the clear InvalidConfig
// message of each way it cannot come: GitHub without id-token: write names the line to add.
func TestIDTokenSourceEnvironment(t *testing.T) {
	t.Parallel()
	valid := testJWT(map[string]any{"aud": "k8s", "exp": time.Now().Add(time.Hour).Unix()})
	tests := []struct {
		name    string
		env     map[string]string
		files   map[string]string
		from    IDTokenFrom
		wantErr string // in NewIDTokenSource's or Token's error
	}{{
		name:    "GitHub Actions without id-token: write",
		env:     map[string]string{"GITHUB_ACTIONS": "true"},
		from:    IDTokenFrom{Audience: "k8s"},
		wantErr: "add `permissions: id-token: write` to the job",
	}, {
		name:    "GitLab without token=",
		env:     map[string]string{"GITLAB_CI": "true"},
		from:    IDTokenFrom{Audience: "k8s"},
		wantErr: "declare one in the job (id_tokens: APP_STATUS_ID_TOKEN: aud: k8s) and add token=env:APP_STATUS_ID_TOKEN",
	}, {
		name:    "no CI token endpoint",
		from:    IDTokenFrom{Audience: "k8s"},
		wantErr: "outside GitHub Actions give the token with token=env:VAR or token=file:PATH",
	}, {
		name:    "GitLab id_tokens variable not declared",
		from:    IDTokenFrom{Audience: "k8s", Env: "APP_STATUS_ID_TOKEN"},
		wantErr: "in GitLab declare it in the job's id_tokens: (id_tokens: APP_STATUS_ID_TOKEN: aud: k8s)",
	}, {
		name: "GitLab id_tokens variable",
		env:  map[string]string{"APP_STATUS_ID_TOKEN": valid},
		from: IDTokenFrom{Audience: "k8s", Env: "APP_STATUS_ID_TOKEN"},
	}, {
		name:  "token file",
		files: map[string]string{"/var/run/ci/token": valid + "\n"},
		from:  IDTokenFrom{Audience: "k8s", File: "/var/run/ci/token"},
	}, {
		name:    "missing token file",
		from:    IDTokenFrom{Audience: "k8s", File: "/var/run/ci/token"},
		wantErr: "the token file /var/run/ci/token does not exist",
	}, {
		name:    "not a JWT",
		env:     map[string]string{"TOK": "not-a-jwt-at-all"},
		from:    IDTokenFrom{Audience: "k8s", Env: "TOK"},
		wantErr: "the ID token is not a JWT: it has 1 parts",
	}, {
		name:    "no exp",
		env:     map[string]string{"TOK": testJWT(map[string]any{"aud": "k8s"})},
		from:    IDTokenFrom{Audience: "k8s", Env: "TOK"},
		wantErr: "the ID token has no exp claim",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := Options{
				Getenv: func(k string) string { return tt.env[k] },
				ReadFile: func(name string) ([]byte, error) {
					if v, ok := tt.files[name]; ok {
						return []byte(v), nil
					}
					return nil, fs.ErrNotExist
				},
			}
			src, err := NewIDTokenSource(opts, tt.from)
			var tok string
			if err == nil {
				tok, err = src.Token(context.Background())
			}
			if tt.wantErr == "" {
				if err != nil || tok != valid {
					t.Fatalf("token %q, error %v; want the token", tok, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Verdict != result.VerdictInvalidConfig || !strings.Contains(e.Message, tt.wantErr) {
				t.Fatalf("error %v; want InvalidConfig containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestIDTokenRefusedNamesItsClaims: a token the API server refuses (401) is Unauthorized, and
// the message names the claims the token carried (audience, repository or project_path,
// environment, event_name, ref and ref_protected, the claims rules check) and an expiry
// already past, never the token.
func TestIDTokenRefusedNamesItsClaims(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	github := map[string]any{"iss": "https://token.actions.githubusercontent.com", "aud": []string{"wrong-audience"},
		"repository": "fork/app", "environment": "prod"}
	with := func(claims map[string]any, more map[string]any) map[string]any {
		out := map[string]any{}
		for _, m := range []map[string]any{claims, more} {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	tests := []struct {
		name   string
		claims map[string]any
		exp    time.Time
		want   []string
	}{{
		name:   "valid token of another repository",
		claims: github,
		exp:    now.Add(time.Hour),
		want:   []string{`audience "wrong-audience"`, `repository "fork/app"`, `environment "prod"`, "it expires at 2026-01-02T04:04:05Z"},
	}, {
		name:   "expired token",
		claims: github,
		exp:    now.Add(-time.Minute),
		want:   []string{"it EXPIRED at 2026-01-02T03:03:05Z, before it was sent"},
	}, {
		name:   "a pull_request_target run's token",
		claims: with(github, map[string]any{"event_name": "pull_request_target", "ref": "refs/heads/main", "ref_protected": "true"}),
		exp:    now.Add(time.Hour),
		want:   []string{`event_name "pull_request_target"`, `ref "refs/heads/main"`, `ref_protected "true"`},
	}, {
		name: "a GitLab token of an unprotected branch",
		claims: map[string]any{"iss": "https://gitlab.example.com", "aud": "k8s", "project_path": "group/app",
			"ref": "feature", "ref_type": "branch", "ref_protected": "false"},
		exp:  now.Add(time.Hour),
		want: []string{`issuer "https://gitlab.example.com"`, `project_path "group/app"`, `ref "feature"`, `ref_protected "false"`},
	}, {
		name:   "ref_protected as a boolean",
		claims: with(github, map[string]any{"ref_protected": false}),
		exp:    now.Add(time.Hour),
		want:   []string{`ref_protected "false"`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tok := testJWT(with(tt.claims, map[string]any{"exp": tt.exp.Unix()}))
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, `{"kind":"Status","code":401}`, http.StatusUnauthorized)
			}))
			t.Cleanup(api.Close)
			src, err := NewIDTokenSource(Options{Getenv: func(string) string { return tok }, Clock: func() time.Time { return now }},
				IDTokenFrom{Audience: "k8s", Env: "TOK"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = (&http.Client{Transport: src.WrapTransportFor(api.URL)(http.DefaultTransport)}).Get(api.URL)
			var e *Error
			if !errors.As(err, &e) || e.Verdict != result.VerdictUnauthorized {
				t.Fatalf("error %v; want Unauthorized", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message %q\nlacks %q", e.Message, w)
				}
			}
			if strings.Contains(e.Message, tok) {
				t.Errorf("the message quotes the token")
			}
		})
	}
}
