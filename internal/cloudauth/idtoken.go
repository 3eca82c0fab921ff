package cloudauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// IDTokenFrom says where the CI job's OIDC ID token for an API server comes from. With
// neither Env nor File, it is asked of GitHub's OIDC token endpoint of the job
// (ACTIONS_ID_TOKEN_REQUEST_URL) for Audience.
type IDTokenFrom struct {
	// Audience is the audience the API server's AuthenticationConfiguration expects.
	Audience string
	// Env names a variable that holds the token (a GitLab job's id_tokens: variable).
	Env string
	// File is a file that holds the token, read again for each new token (a rotated one).
	File string
}

// NewIDTokenSource is the token source of a cluster whose API server trusts the CI's OIDC
// issuer: the job's own ID token, presented as a bearer token, replaced before it expires (its
// exp claim) and when the API server refuses it. It checks that the environment can give a
// token, without contacting anything: in GitHub Actions without ACTIONS_ID_TOKEN_REQUEST_URL,
// the error says which permission the job lacks.
func NewIDTokenSource(opts Options, from IDTokenFrom) (*Source, error) {
	opts = opts.withDefaults()
	s := &secrets{onSecret: opts.OnSecret}
	env := environ{getenv: opts.Getenv}
	var fetch fetcher
	var what string
	switch {
	case from.Env != "":
		what = "the ID token of " + from.Env
		fetch = func(context.Context) (token, error) {
			v := strings.TrimSpace(env.get(from.Env))
			if v == "" {
				return token{}, invalid("the environment variable %s is empty or not set: in GitLab declare it in the job's id_tokens: (id_tokens: %s: aud: %s); elsewhere export the CI's ID token for that audience in it",
					from.Env, from.Env, from.Audience)
			}
			return idToken(s, v)
		}
	case from.File != "":
		what = "the ID token of the file " + from.File
		fetch = func(context.Context) (token, error) {
			data, err := opts.ReadFile(from.File)
			if err != nil {
				why := "cannot be read"
				if errors.Is(err, fs.ErrNotExist) {
					why = "does not exist"
				}
				return token{}, invalid("the token file %s %s: write the CI's ID token for the audience %s there", from.File, why, from.Audience)
			}
			return idToken(s, string(data))
		}
	default:
		what = "GitHub's ID token for the audience " + from.Audience
		reqURL, reqToken := env.get("ACTIONS_ID_TOKEN_REQUEST_URL"), env.get("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
		switch {
		case reqURL == "" && env.get("GITHUB_ACTIONS") == "true":
			return nil, invalid("%s: the job may not ask for an ID token (ACTIONS_ID_TOKEN_REQUEST_URL is not set): add `permissions: id-token: write` to the job (or the workflow)", what)
		case reqURL == "" && env.get("GITLAB_CI") == "true":
			return nil, invalid("%s: a GitLab job gets its ID token from an id_tokens: variable: declare one in the job (id_tokens: APP_STATUS_ID_TOKEN: aud: %s) and add token=env:APP_STATUS_ID_TOKEN to the cluster's line", what, from.Audience)
		case reqURL == "" || reqToken == "":
			return nil, invalid("%s: there is no GitHub Actions ID token endpoint here (ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN): outside GitHub Actions give the token with token=env:VAR or token=file:PATH", what)
		}
		s.add(reqToken)
		p := &provider{env: env, opts: opts, secrets: s}
		p.http = p.httpClient()
		fetch = func(ctx context.Context) (token, error) {
			v, err := githubIDToken(ctx, p, reqURL, reqToken, from.Audience)
			if err != nil {
				return token{}, err
			}
			return idToken(s, v)
		}
	}
	src := &Source{cloud: "OIDC", what: what, fetch: fetch, opts: opts, secrets: s}
	src.refusedBy = func(tok string) string { return refusedIDToken(tok, opts.Clock()) }
	return src, nil
}

// idToken masks an ID token and reads its expiry from its exp claim.
func idToken(s *secrets, raw string) (token, error) {
	v := strings.TrimSpace(raw)
	s.add(v)
	c, err := decodeClaims(v)
	if err != nil {
		return token{}, &Error{Verdict: result.VerdictInvalidConfig, Message: "the ID token is not a JWT: " + err.Error(), err: err}
	}
	if c.Exp == 0 {
		return token{}, invalid("the ID token has no exp claim: an API server accepts only a token that expires")
	}
	return token{value: v, expiry: time.Unix(c.Exp, 0)}, nil
}

// idClaims are the claims of an ID token that say whose it is and for what: what a user
// needs to see when an API server refuses it. They are read without checking the signature:
// only to be shown, never to decide anything.
type idClaims struct {
	Issuer      string   `json:"iss"`
	Subject     string   `json:"sub"`
	Audience    audience `json:"aud"`
	Exp         int64    `json:"exp"`
	Repository  string   `json:"repository"`   // GitHub
	ProjectPath string   `json:"project_path"` // GitLab
	Environment string   `json:"environment"`
	EventName   string   `json:"event_name"` // GitHub: push, pull_request_target...
	Ref         string   `json:"ref"`
	// RefProtected is "true" or "false": a string in GitHub's and GitLab's tokens, read as
	// well from a token that has a boolean.
	RefProtected loose `json:"ref_protected"`
}

// loose is a claim that is a string, or a boolean or a number written as one.
type loose string

func (l *loose) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = loose(s)
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v.(type) {
	case bool, float64:
		*l = loose(strings.TrimSpace(string(b)))
	}
	return nil
}

// audience is the aud claim: one string or a list of them.
type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*a = audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("aud is neither a string nor a list of strings")
	}
	*a = many
	return nil
}

// decodeClaims reads a JWT's claims, without checking its signature.
func decodeClaims(jwt string) (idClaims, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return idClaims{}, fmt.Errorf("it has %d parts separated by '.', not 3", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return idClaims{}, errors.New("its payload is not base64url")
	}
	var c idClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return idClaims{}, errors.New("its payload is not a JSON object of claims")
	}
	return c, nil
}

// refusedIDToken says what to check when the API server refuses an ID token: the claims the
// token itself carries (the API server never says which one did not match), read without
// trusting them.
func refusedIDToken(tok string, now time.Time) string {
	c, err := decodeClaims(tok)
	if err != nil {
		return "the token is not a JWT"
	}
	var said []string
	add := func(name, v string) {
		if v != "" {
			said = append(said, fmt.Sprintf("%s %q", name, sanitize.Truncate(sanitize.Line(v), 200)))
		}
	}
	add("issuer", c.Issuer)
	add("audience", strings.Join(c.Audience, ","))
	add("subject", c.Subject)
	add("repository", c.Repository)
	add("project_path", c.ProjectPath)
	add("environment", c.Environment)
	add("event_name", c.EventName)
	add("ref", c.Ref)
	add("ref_protected", string(c.RefProtected))
	exp := time.Unix(c.Exp, 0).UTC()
	expiry := "it expires at " + exp.Format(time.RFC3339)
	if !now.Before(exp) {
		expiry = "it EXPIRED at " + exp.Format(time.RFC3339) + ", before it was sent"
	}
	return fmt.Sprintf("the token sent has %s, and %s; the cluster's AuthenticationConfiguration must trust that issuer for that audience, "+
		"its claimValidationRules must accept these claims, and the token must be signed by the issuer's key", strings.Join(said, ", "), expiry)
}
