// Package cloudauthtest holds the fakes the tests of the built-in credential providers run
// against, all on 127.0.0.1: AWS STS (it verifies EKS tokens as STS and EKS do, and assumes
// roles), GitHub's OIDC token endpoint, Google's STS and IAM credentials endpoints, Microsoft
// Entra ID (over TLS with a test CA), and a TokenReview webhook for kube-apiserver that
// accepts only the tokens these fakes issued.
package cloudauthtest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AWSKey is an access key the fake knows, and whose it is.
type AWSKey struct {
	AccessKeyID, SecretAccessKey, SessionToken string
	// ARN is the identity STS's GetCallerIdentity would return for the key.
	ARN string
}

// AWS is a fake of the parts of AWS STS that EKS tokens involve. Verify checks a token as
// EKS does (the form, the host) and as STS does when EKS forwards it (the SigV4 signature
// with the key's secret, the signed x-k8s-aws-id header with EKS's own cluster name, the
// 15 minutes after X-Amz-Date). Its server answers AssumeRole (SigV4-signed with a known
// key) and AssumeRoleWithWebIdentity (with a web identity token it was told to accept),
// handing out new keys it then knows.
type AWS struct {
	// URL is the fake STS endpoint, for AWS_ENDPOINT_URL_STS.
	URL string
	// Validity is how long after its X-Amz-Date a token is accepted: 15 minutes, as STS, unless
	// a test shortens it.
	Validity time.Duration

	server *httptest.Server
	now    func() time.Time

	mu            sync.Mutex
	keys          map[string]AWSKey // by access key ID
	webIdentities map[string]string // accepted web identity token -> role ARN it may assume
	assumed       []string          // roles assumed, in order
}

// NewAWS starts the fake.
func NewAWS() *AWS {
	a := &AWS{Validity: 15 * time.Minute, now: time.Now, keys: map[string]AWSKey{}, webIdentities: map[string]string{}}
	a.server = httptest.NewServer(http.HandlerFunc(a.serveSTS))
	a.URL = a.server.URL
	return a
}

// Close stops the fake's server.
func (a *AWS) Close() { a.server.Close() }

// NewKey makes an access key for arn (with a session token when session is set).
func (a *AWS) NewKey(arn string, session bool) AWSKey {
	k := AWSKey{AccessKeyID: "AKIA" + strings.ToUpper(randomHex(8)), SecretAccessKey: randomHex(20), ARN: arn}
	if session {
		k.AccessKeyID = "ASIA" + k.AccessKeyID[4:]
		k.SessionToken = "IQoJb3JpZ2lu" + randomHex(40)
	}
	a.mu.Lock()
	a.keys[k.AccessKeyID] = k
	a.mu.Unlock()
	return k
}

// AcceptWebIdentity lets a web identity token assume role.
func (a *AWS) AcceptWebIdentity(token, role string) {
	a.mu.Lock()
	a.webIdentities[token] = role
	a.mu.Unlock()
}

// Assumed returns the roles assumed so far.
func (a *AWS) Assumed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.assumed...)
}

// The query parameters a presigned GetCallerIdentity URL may carry (aws-iam-authenticator
// refuses others).
var eksTokenParams = map[string]bool{
	"action": true, "version": true, "x-amz-algorithm": true, "x-amz-credential": true, "x-amz-date": true,
	"x-amz-expires": true, "x-amz-security-token": true, "x-amz-signature": true, "x-amz-signedheaders": true,
}

var stsHost = regexp.MustCompile(`^sts(\.[a-z0-9-]+)?\.amazonaws\.com$`)

// VerifyEKSToken checks an EKS token for the cluster cluster (the x-k8s-aws-id EKS sends)
// and returns the ARN of the key that signed it.
func (a *AWS) VerifyEKSToken(token, cluster string) (string, error) {
	const prefix = "k8s-aws-v1."
	if len(token) > 4096 || !strings.HasPrefix(token, prefix) {
		return "", errors.New("not an EKS token")
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, prefix))
	if err != nil {
		return "", fmt.Errorf("token is not base64url: %w", err)
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		return "", fmt.Errorf("token is not a URL: %w", err)
	}
	if u.Scheme != "https" || !stsHost.MatchString(u.Host) || u.Path != "/" {
		return "", fmt.Errorf("unexpected presigned URL %s://%s%s", u.Scheme, u.Host, u.Path)
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", fmt.Errorf("malformed query: %w", err)
	}
	lower := map[string]string{}
	for k, vs := range query {
		if !eksTokenParams[strings.ToLower(k)] || len(vs) != 1 {
			return "", fmt.Errorf("unexpected query parameter %q", k)
		}
		lower[strings.ToLower(k)] = vs[0]
	}
	if lower["action"] != "GetCallerIdentity" || lower["x-amz-algorithm"] != sigV4Algorithm {
		return "", errors.New("not a SigV4-signed GetCallerIdentity")
	}
	signed := strings.Split(lower["x-amz-signedheaders"], ";")
	if !slices.Contains(signed, "x-k8s-aws-id") || !slices.Contains(signed, "host") {
		return "", errors.New("the x-k8s-aws-id header is not signed")
	}
	if expires, err := strconv.Atoi(lower["x-amz-expires"]); err != nil || expires < 0 || expires > 900 {
		return "", fmt.Errorf("invalid X-Amz-Expires %q", lower["x-amz-expires"])
	}
	date, err := parseAmzDate(lower["x-amz-date"])
	if err != nil {
		return "", err
	}
	now := a.now()
	if now.After(date.Add(a.Validity)) {
		return "", fmt.Errorf("token expired: signed at %s, valid %s", date.Format(time.RFC3339), a.Validity)
	}
	if date.After(now.Add(5 * time.Minute)) {
		return "", fmt.Errorf("token signed in the future (%s)", date.Format(time.RFC3339))
	}
	cred := strings.SplitN(lower["x-amz-credential"], "/", 2)
	if len(cred) != 2 || !strings.HasSuffix(cred[1], "/sts/aws4_request") {
		return "", fmt.Errorf("malformed X-Amz-Credential")
	}
	a.mu.Lock()
	key, ok := a.keys[cred[0]]
	a.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("unknown access key %s", cred[0])
	}
	if key.SessionToken != lower["x-amz-security-token"] {
		return "", errors.New("wrong or missing session token")
	}
	q := url.Values{}
	for k, vs := range query {
		if !strings.EqualFold(k, "X-Amz-Signature") {
			q[k] = vs
		}
	}
	req := sigV4Request{
		method: http.MethodGet, path: "/", query: q, signedHeaders: signed,
		header: func(name string) string {
			switch name {
			case "host":
				return u.Host
			case "x-k8s-aws-id":
				return cluster // what EKS sends: a token signed for another cluster does not match
			}
			return ""
		},
		payloadHash: emptyBodySHA256, amzDate: lower["x-amz-date"], scope: cred[1],
	}
	if err := req.verify(key.SecretAccessKey, lower["x-amz-signature"]); err != nil {
		return "", fmt.Errorf("%w (signed with another key, or for another cluster than %q)", err, cluster)
	}
	return key.ARN, nil
}

// serveSTS answers AssumeRole and AssumeRoleWithWebIdentity as STS's query protocol does.
func (a *AWS) serveSTS(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || r.ParseForm() != nil {
		stsError(w, http.StatusBadRequest, "MalformedInput", "cannot read the request")
		return
	}
	form, _ := url.ParseQuery(string(body))
	var role, session, subject string
	switch form.Get("Action") {
	case "AssumeRole":
		key, err := a.verifySigned(r, body)
		if err != nil {
			stsError(w, http.StatusForbidden, "SignatureDoesNotMatch", err.Error())
			return
		}
		role, session, subject = form.Get("RoleArn"), form.Get("RoleSessionName"), key.ARN
	case "AssumeRoleWithWebIdentity":
		a.mu.Lock()
		allowed, ok := a.webIdentities[form.Get("WebIdentityToken")]
		a.mu.Unlock()
		if !ok || allowed != form.Get("RoleArn") {
			stsError(w, http.StatusBadRequest, "InvalidIdentityToken", "the web identity token is not accepted for this role")
			return
		}
		role, session, subject = form.Get("RoleArn"), form.Get("RoleSessionName"), "web-identity"
	default:
		stsError(w, http.StatusBadRequest, "InvalidAction", "unsupported action")
		return
	}
	if session == "" {
		stsError(w, http.StatusBadRequest, "ValidationError", "RoleSessionName is required")
		return
	}
	name := role[strings.LastIndex(role, "/")+1:]
	key := a.NewKey(strings.Replace(strings.Replace(role, ":iam:", ":sts:", 1), ":role/", ":assumed-role/", 1)+"/"+session, true)
	a.mu.Lock()
	a.assumed = append(a.assumed, role)
	a.mu.Unlock()
	action := form.Get("Action")
	w.Header().Set("Content-Type", "text/xml")
	_, _ = fmt.Fprintf(w, `<%[1]sResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><%[1]sResult>`+
		`<Credentials><AccessKeyId>%[2]s</AccessKeyId><SecretAccessKey>%[3]s</SecretAccessKey><SessionToken>%[4]s</SessionToken><Expiration>%[5]s</Expiration></Credentials>`+
		`<AssumedRoleUser><Arn>%[6]s</Arn><AssumedRoleId>AROA%[7]s:%[8]s</AssumedRoleId></AssumedRoleUser>`+
		`<SubjectFromWebIdentityToken>%[9]s</SubjectFromWebIdentityToken>`+
		`</%[1]sResult><ResponseMetadata><RequestId>%[10]s</RequestId></ResponseMetadata></%[1]sResponse>`,
		action, key.AccessKeyID, key.SecretAccessKey, key.SessionToken, a.now().Add(time.Hour).UTC().Format(time.RFC3339),
		xmlText(key.ARN), strings.ToUpper(randomHex(8)), xmlText(name), xmlText(subject), randomHex(16))
}

// verifySigned checks a header-signed SigV4 request and returns its key.
func (a *AWS) verifySigned(r *http.Request, body []byte) (AWSKey, error) {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, sigV4Algorithm+" ")
	if !ok {
		return AWSKey{}, errors.New("not SigV4-signed")
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	cred := strings.SplitN(fields["Credential"], "/", 2)
	if len(cred) != 2 {
		return AWSKey{}, errors.New("malformed credential")
	}
	a.mu.Lock()
	key, ok := a.keys[cred[0]]
	a.mu.Unlock()
	if !ok {
		return AWSKey{}, fmt.Errorf("unknown access key %s", cred[0])
	}
	if key.SessionToken != r.Header.Get("X-Amz-Security-Token") {
		return AWSKey{}, errors.New("wrong or missing session token")
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		payload = sha256Hex(body)
	}
	req := sigV4Request{
		method: r.Method, path: r.URL.Path, query: r.URL.Query(), signedHeaders: strings.Split(fields["SignedHeaders"], ";"),
		header: func(name string) string {
			if name == "host" {
				return r.Host
			}
			return strings.Join(r.Header.Values(name), ",")
		},
		payloadHash: payload, amzDate: r.Header.Get("X-Amz-Date"), scope: cred[1],
	}
	return key, req.verify(key.SecretAccessKey, fields["Signature"])
}

func stsError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>%s</RequestId></ErrorResponse>`,
		code, xmlText(msg), randomHex(16))
}

func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
