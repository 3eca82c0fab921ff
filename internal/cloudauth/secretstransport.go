package cloudauth

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"regexp"
	"time"
)

// secretsTransport hands every token and secret in a token endpoint's JSON answer (access,
// refresh and ID tokens, OIDC subject tokens, client secrets) to OnSecret before the SDK that
// asked reads it, so tokens that only pass through an SDK are masked too.
type secretsTransport struct {
	next    http.RoundTripper
	secrets *secrets
	// timeout bounds each request, answer included. It is a context deadline rather than
	// http.Client.Timeout, which would also call the deprecated CancelRequest of the SDKs'
	// own transports.
	timeout time.Duration
}

// maxSniffed bounds the part of an answer that is looked at; a token endpoint's answer is a
// few kilobytes.
const maxSniffed = 1 << 20

// secretField matches the JSON fields that hold secrets: access_token, id_token,
// refresh_token, accessToken, client_secret, private_key, SessionToken... and "value", the
// field GitHub's OIDC token endpoint answers with. token_type and expires_in do not.
var secretField = regexp.MustCompile(`(?i)(token|secret|password|assertion|key|^value)$`)

func (t *secretsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil || resp.Body == nil {
		cancel()
		return resp, err
	}
	if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media != "application/json" && media != "text/json" {
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
		return resp, nil
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, maxSniffed+1))
	if err != nil {
		_ = resp.Body.Close()
		cancel()
		return nil, err
	}
	if len(head) <= maxSniffed {
		_ = resp.Body.Close()
		cancel()
		var doc any
		if json.Unmarshal(head, &doc) == nil {
			walkSecrets("", doc, t.secrets.add)
		}
		resp.Body = io.NopCloser(bytes.NewReader(head))
		return resp, nil
	}
	resp.Body = &cancelOnClose{ReadCloser: struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends a request's deadline when its answer is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	defer c.cancel()
	return c.ReadCloser.Close()
}

// walkSecrets walks a JSON document and hands the strings of its secret fields to add.
func walkSecrets(field string, v any, add func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			walkSecrets(k, sub, add)
		}
	case []any:
		for _, sub := range v {
			walkSecrets(field, sub, add)
		}
	case string:
		if field != "" && secretField.MatchString(field) {
			add(v)
		}
	}
}
