package cloudauthtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
)

// This file checks AWS Signature Version 4 from its specification, independently of the
// SDK that signed: the canonical request, the string to sign and the derived key are
// rebuilt from what the request carries and the secret key the fake knows.

const (
	sigV4Algorithm  = "AWS4-HMAC-SHA256"
	amzDateFormat   = "20060102T150405Z"
	emptyBodySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// sigV4Request is what a signature covers.
type sigV4Request struct {
	method        string
	path          string
	query         url.Values // without X-Amz-Signature
	signedHeaders []string   // lower case, as the signer listed them
	header        func(name string) string
	payloadHash   string
	amzDate       string
	scope         string // date/region/service/aws4_request
}

// signature computes the signature of r with secret.
func (r sigV4Request) signature(secret string) (string, error) {
	parts := strings.Split(r.scope, "/")
	if len(parts) != 4 || parts[3] != "aws4_request" {
		return "", fmt.Errorf("malformed credential scope %q", r.scope)
	}
	var headers strings.Builder
	for _, h := range r.signedHeaders {
		headers.WriteString(h + ":" + strings.Join(strings.Fields(r.header(h)), " ") + "\n")
	}
	canonical := strings.Join([]string{
		r.method,
		uriEncode(r.path, false),
		canonicalQuery(r.query),
		headers.String(),
		strings.Join(r.signedHeaders, ";"),
		r.payloadHash,
	}, "\n")
	digest := sha256.Sum256([]byte(canonical))
	toSign := strings.Join([]string{sigV4Algorithm, r.amzDate, r.scope, hex.EncodeToString(digest[:])}, "\n")
	key := hmacSHA256([]byte("AWS4"+secret), parts[0])
	for _, p := range parts[1:] {
		key = hmacSHA256(key, p)
	}
	return hex.EncodeToString(hmacSHA256(key, toSign)), nil
}

// verify reports whether signature is r's with secret, in constant time.
func (r sigV4Request) verify(secret, signature string) error {
	want, err := r.signature(secret)
	if err != nil {
		return err
	}
	if !hmac.Equal([]byte(want), []byte(signature)) {
		return fmt.Errorf("signature does not match")
	}
	return nil
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// canonicalQuery sorts the parameters by name and URI-encodes names and values.
func canonicalQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		values := append([]string(nil), q[k]...)
		sort.Strings(values)
		for _, v := range values {
			parts = append(parts, uriEncode(k, true)+"="+uriEncode(v, true))
		}
	}
	return strings.Join(parts, "&")
}

// uriEncode encodes every byte but the unreserved characters (and "/" in a path).
func uriEncode(s string, encodeSlash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		case c == '/' && !encodeSlash:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// parseAmzDate reads an X-Amz-Date.
func parseAmzDate(s string) (time.Time, error) {
	t, err := time.Parse(amzDateFormat, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("malformed X-Amz-Date %q", s)
	}
	return t, nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
