package cloudauth

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/org/app-status-action/internal/result"
)

// A repository kubeconfig names the server and the CA its cluster is reached at, and the
// cluster a built-in provider's token is for; only the host's domain was checked (checkRoute
// in internal/kubeconfig), so a server of its choosing under the cloud's domain, with a CA
// of its own, could take a token signed for another cluster. RequireEndpoint makes the
// source ask the cloud's own API, with the job's credentials, where the cluster is before the
// first token goes out: the kubeconfig's server must be one of the cluster's endpoints and
// its CA the cluster's, or no request is sent at all.

// Endpoint is where a cloud's API says one of its clusters' API servers is.
type Endpoint struct {
	// Hosts are the cluster's API server addresses, host:port (443 when the cloud gives no
	// port), in lower case.
	Hosts []string
	// CAData is the cluster's CA bundle, PEM; empty when the cloud gives none.
	CAData []byte
}

// Entry names the kubeconfig's entries a cluster is reached with: its cluster entry (GKE's
// gke_PROJECT_LOCATION_NAME, AKS's NAME) and its user (AKS's clusterUser_RESOURCEGROUP_NAME).
type Entry struct {
	Cluster, User string
	// ListedIn, when set, says where the workflow lists the kubeconfig's server ("the
	// allowed-servers input"): the server may then have any name, but the cloud is still
	// asked, and a mismatch says that the list does not choose the cluster.
	ListedIn string
}

// locator asks the cloud's API where the cluster the entry names is; EKS's plugin names its
// cluster in its own arguments.
type locator func(ctx context.Context, entry Entry) (Endpoint, error)

// locatable says, before anything is contacted, why the cloud cannot be asked about the
// entry's cluster (a setting or a name it needs is missing), as an *Error for which
// CannotLocate is true; nil when it can.
type locatable func(entry Entry) error

// CannotLocate reports whether err says that the cloud cannot be asked where the cluster is
// for want of a setting or a name, so that the workflow's other guards (allowed-servers,
// pinned-ca) may stand in.
func CannotLocate(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.cannotLocate
}

// pinned is what a repository kubeconfig says of its cluster, to be checked against the
// cloud's answer before any request.
type pinned struct {
	entry       Entry
	kubeCluster string // entry.Cluster, for messages
	server      string // as the kubeconfig gives it, scheme and host, for messages
	host        string // host:port
	caData      []byte // the kubeconfig's CA, PEM

	mu      sync.Mutex
	ok      bool
	failed  *Error
	retryAt time.Time
	refused bool // a mismatch: final, never asked again
}

// RequireEndpoint makes every request of the source wait until the cloud's own API has said
// where the cluster is (EKS DescribeCluster, GKE clusters.get, AKS's managed cluster at Azure
// Resource Manager), with the job's credentials,
// and fail, before any token is obtained or any byte is sent, unless the request goes to one
// of the cluster's endpoints and every certificate of caData (the kubeconfig's CA; empty is
// the system's roots) is one of the cluster's CAs. entry names the kubeconfig's cluster and
// user entries, server is its server. A provider that cannot ask its cloud is left as it is:
// RequireEndpoint reports false. When the environment or the entries lack what the question
// needs (AKS's subscription), the error says what, and CannotLocate is true of it.
func (s *Source) RequireEndpoint(entry Entry, server string, caData []byte) (bool, error) {
	if s.locate == nil {
		return false, nil
	}
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return false, invalid("the kubeconfig's server is not a URL")
	}
	if s.locatable != nil {
		if err := s.locatable(entry); err != nil {
			return false, s.asError(err)
		}
	}
	s.pin = &pinned{entry: entry, kubeCluster: entry.Cluster, server: u.Scheme + "://" + u.Host, host: hostPort(u), caData: slices.Clone(caData)}
	return true, nil
}

// checkEndpoint is nil when the source requires no endpoint, or when req goes to the cluster's
// endpoint the cloud gave and the kubeconfig's CA is the cluster's; else an *Error.
func (s *Source) checkEndpoint(req *http.Request) error {
	p := s.pin
	if p == nil {
		return nil
	}
	if err := s.located(req.Context()); err != nil {
		return err
	}
	if got := hostPort(req.URL); got != p.host {
		return &Error{Verdict: result.VerdictInvalidConfig,
			Message: fmt.Sprintf("%s: a request to %s, not the kubeconfig's server %s, is not sent the token", s.what, got, p.server)}
	}
	return nil
}

// located asks the cloud once where the cluster is and compares; a failure to ask is reused
// for errorBackoff, a mismatch for good.
func (s *Source) located(ctx context.Context) error {
	p := s.pin
	p.mu.Lock()
	defer p.mu.Unlock()
	now := s.opts.Clock()
	switch {
	case p.ok:
		return nil
	case p.failed != nil && (p.refused || now.Before(p.retryAt)):
		return p.failed
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.Timeout)
	defer cancel()
	ep, err := s.locate(ctx, p.entry)
	if err != nil {
		p.failed, p.retryAt = s.asError(err), now.Add(errorBackoff)
		return p.failed
	}
	if msg := p.mismatch(s.cloud, ep); msg != "" {
		p.failed, p.refused = &Error{Verdict: result.VerdictInvalidConfig, Message: s.what + ": " + msg}, true
		return p.failed
	}
	p.ok = true
	return nil
}

// mismatch says how the kubeconfig differs from what the cloud says of the cluster, or "".
func (p *pinned) mismatch(cloud string, ep Endpoint) string {
	fix := fmt.Sprintf("the job's %s token goes only to the cluster's own endpoint, with the cluster's own CA, so that a kubeconfig from the repository "+
		"cannot send it elsewhere: write the kubeconfig again from the cloud (aws eks update-kubeconfig, gcloud container clusters get-credentials --dns-endpoint, az aks get-credentials)", cloud)
	if p.entry.ListedIn != "" {
		fix += fmt.Sprintf("; the server is listed in %s, which says where a token may go, not which cluster a kubeconfig from the repository may have it made for: "+
			"a server that is not the cluster's own endpoint (a proxy) takes the token only from a kubeconfig of the workflow (the kubeconfig input, an env: source)", p.entry.ListedIn)
	}
	if !slices.Contains(ep.Hosts, p.host) {
		shown := make([]string, len(ep.Hosts))
		for i, h := range ep.Hosts {
			shown[i] = "https://" + strings.TrimSuffix(h, ":443")
		}
		return fmt.Sprintf("the kubeconfig's cluster %q has the server %s, but %s says the cluster's API server is %s: %s",
			p.kubeCluster, p.server, cloud, orNone(strings.Join(shown, " or ")), fix)
	}
	cas, err := PEMCertificates(p.caData)
	if err != nil {
		return fmt.Sprintf("the kubeconfig's cluster %q has a certificate-authority-data that is not PEM certificates (%v): give the cluster's CA", p.kubeCluster, err)
	}
	cloudCAs, err := PEMCertificates(ep.CAData)
	if err != nil {
		return fmt.Sprintf("%s gave a CA for the cluster %q that is not PEM certificates", cloud, p.kubeCluster)
	}
	for _, c := range cas {
		if !slices.ContainsFunc(cloudCAs, func(d []byte) bool { return bytes.Equal(d, c) }) {
			return fmt.Sprintf("the kubeconfig's cluster %q has a certificate-authority-data (%s) that is not the cluster's CA, which %s gives (%s): %s",
				p.kubeCluster, describeCAs(cas), cloud, orNone(describeCAs(cloudCAs)), fix)
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// describeCAs names certificates by their subjects, for messages.
func describeCAs(ders [][]byte) string {
	names := make([]string, 0, len(ders))
	for _, d := range ders {
		name := "a certificate"
		if c, err := x509.ParseCertificate(d); err == nil {
			name = fmt.Sprintf("%q", c.Subject.String())
		}
		names = append(names, name)
	}
	return strings.Join(names, ", ")
}

// PEMCertificates returns the DER of each certificate of a PEM bundle (other blocks are
// skipped); nothing for an empty one.
func PEMCertificates(data []byte) ([][]byte, error) {
	var out [][]byte
	rest := bytes.TrimSpace(data)
	for len(rest) > 0 {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, fmt.Errorf("%d byte(s) that are not a PEM block", len(bytes.TrimSpace(rest)))
		}
		rest = bytes.TrimSpace(rest)
		if block.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return nil, fmt.Errorf("a certificate that cannot be parsed: %w", err)
		}
		out = append(out, block.Bytes)
	}
	return out, nil
}

// hostPort is the URL's host, in lower case, and its port (443 when none is given). A final
// dot is kept, so that the name compared is the name dialled: "host." and "host" may resolve
// to different servers (the DNS search domains apply to the second alone).
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// endpointHost is the host:port of an endpoint as a cloud's API gives it: a URL or a bare
// host or address.
func endpointHost(endpoint string) string {
	if endpoint == "" {
		return ""
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "https://" + endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return ""
	}
	return hostPort(u)
}

// maxAPIAnswer bounds a cloud API's answer.
const maxAPIAnswer = 4 << 20

// apiCall is one request to a cloud's control-plane API, for locating a cluster.
type apiCall struct {
	cloud      string // "EKS", "GKE", "Azure Resource Manager"
	what       string // "DescribeCluster of the cluster \"prod\" in eu-west-1", for messages
	permission string // what the job's identity needs: "eks:DescribeCluster"
	notFound   string // what to check when the cluster does not exist
}

// do sends req and decodes a 200's JSON into out; another answer is an *Error that names the
// call and, for a 401 or 403, the permission to add, for a 404 what to check.
func (c apiCall) do(client *http.Client, req *http.Request, out any) error {
	resp, err := client.Do(req)
	if err != nil {
		return &Error{Verdict: classify(err), err: err, Message: fmt.Sprintf("%s could not ask %s %s: %v", c.cloud, c.cloud, c.what, shortNetError(err))}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIAnswer))
	if err != nil {
		return &Error{Verdict: result.VerdictUnreachable, err: err, Message: fmt.Sprintf("%s's answer to %s could not be read", c.cloud, c.what)}
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return &Error{Verdict: result.VerdictUnauthorized, Message: fmt.Sprintf("%s refused %s (%d): give the job's identity the permission %s on the cluster "+
			"(the built-in provider asks the cloud where a repository kubeconfig's cluster is before it sends a token)", c.cloud, c.what, resp.StatusCode, c.permission)}
	case resp.StatusCode == http.StatusNotFound:
		return &Error{Verdict: result.VerdictInvalidConfig, Message: fmt.Sprintf("%s has no cluster for %s (404): %s", c.cloud, c.what, c.notFound)}
	case resp.StatusCode != http.StatusOK:
		return &Error{Verdict: classify(statusError(resp.StatusCode)), Message: fmt.Sprintf("%s answered %s with %d", c.cloud, c.what, resp.StatusCode)}
	}
	if err := json.Unmarshal(body, out); err != nil {
		return &Error{Verdict: result.VerdictUnreachable, err: err, Message: fmt.Sprintf("%s's answer to %s is not the JSON expected", c.cloud, c.what)}
	}
	return nil
}

// shortNetError is a network error without the request's URL, whose query may say more than
// a message should.
func shortNetError(err error) error {
	if u, ok := err.(*url.Error); ok { //nolint:errorlint // only the outermost URL error is unwrapped
		return u.Err
	}
	return err
}
