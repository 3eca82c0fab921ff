package kubeconfig

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/org/app-status-action/internal/cloudauth"
)

// A kubeconfig of a file: source can come from the repository, so from a pull request. It may
// use the credentials it holds (a token, a client key, a file next to it) however it likes, but
// it never chooses where the run's own credentials are read from or sent to:
//
//   - every file it refers to (certificate-authority, client-certificate, client-key,
//     tokenFile) is in its own folder: a path with "..", or one that is or links outside the
//     folder, is refused before anything is read (confine);
//   - a built-in provider's token (EKS, GKE, AKS, from the job's cloud credentials) goes only
//     over verified TLS, to the cloud's own API endpoints or a server the workflow allows,
//     never through a proxy the kubeconfig names (checkRoute); an endpoint is a plain DNS
//     name under the cloud's domains, never an address whatever it ends with, on port 443
//     and with no tls-server-name; and, even when the workflow allows the server, the
//     cloud's own API (EKS DescribeCluster, GKE clusters.get, AKS's managed cluster and
//     listClusterUserCredential at Azure Resource Manager), asked with the job's credentials, must
//     say it is the cluster's endpoint and the kubeconfig's CA the cluster's before any
//     request is sent (cloudauth.Source.RequireEndpoint);
//   - it never chooses what such a token is for: kubelogin's --server-id is a server
//     application's ID (cloudauth.Options.Repository);
//   - its exec env may choose only an account, a role and a region (see cloudauth).
//
// The kubeconfig input, env: sources and the CLI's --kubeconfig are the workflow's own (a
// secret, a variable, the user's file): they keep kubectl's rules. So does an exec plugin the
// CLI runs itself: it is the program kubectl would run.

// confine returns the file that path, from a repository kubeconfig in dir, names, with its
// links resolved, or why it is refused: a ".." in it, or a file outside dir. file is path made
// absolute. A file that does not exist is returned as named: reading it fails.
func confine(dir, path, file string) (string, string) {
	for _, elem := range strings.Split(filepath.ToSlash(path), "/") {
		if elem == ".." {
			return "", `it goes up with ".."`
		}
	}
	base, target := dir, filepath.Clean(file)
	resolved, err := filepath.EvalSymlinks(file)
	switch {
	case err == nil:
		target = resolved
		if b, err := filepath.EvalSymlinks(dir); err == nil {
			base = b
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", "its links cannot be followed"
	}
	rel, err := filepath.Rel(base, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		if target != filepath.Clean(file) {
			return "", "it links to a file outside the kubeconfig's folder"
		}
		return "", "it is outside the kubeconfig's folder"
	}
	return target, ""
}

// servers is the set of API servers the workflow allows a repository kubeconfig to send a
// built-in provider's token to (Input.AllowedServers), as host:port.
type servers map[string]bool

// parseServers reads Input.AllowedServers: https:// URLs, or host[:port], one per entry.
func parseServers(list []string, origin string) (servers, error) {
	out := servers{}
	for i, raw := range list {
		s := strings.TrimSpace(raw)
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			u, err = url.Parse("https://" + s)
		}
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("%s entry %d is not an API server: give its https:// URL (https://HOST or https://HOST:PORT), as the kubeconfig's server says", origin, i+1)
		}
		if strings.HasSuffix(u.Hostname(), ".") {
			return nil, fmt.Errorf("%s entry %d has a host that ends with a dot: write it without the final dot, as a repository kubeconfig's server must be written "+
				"(a name with and without it may resolve to different servers under the runner's DNS search domains)", origin, i+1)
		}
		out[hostPort(u)] = true
	}
	return out, nil
}

// hostPort is the URL's host, in lower case, and its port (443 when none is given). A final
// dot is kept: "host." and "host" may resolve to different servers (the runner's DNS search
// domains apply to the second alone), so they are different servers here too.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// allowedServer reports whether the workflow lists server in Input.AllowedServers.
func (l *loader) allowedServer(server string) bool {
	u, err := url.Parse(server)
	return err == nil && u.Host != "" && l.allowed[hostPort(u)]
}

// checkRoute says why a built-in provider's token may not go to the cluster of a repository
// kubeconfig: without TLS verification, through a proxy the kubeconfig names, or to a server
// that is neither the cloud's API endpoint nor one the workflow allows. A cloud's endpoint is
// its name on port 443, with no tls-server-name; a server the workflow allows is taken as it
// is listed, host and port. Empty means it may.
func (l *loader) checkRoute(d *doc, clusterName string, c *clientcmdapi.Cluster, src *cloudauth.Source) string {
	why := fmt.Sprintf("a kubeconfig from the repository (%s) never chooses where the job's %s token goes, so that a pull request cannot take it",
		d.origin, src.Cloud())
	switch {
	case c.InsecureSkipTLSVerify:
		return fmt.Sprintf("the kubeconfig's cluster %q sets insecure-skip-tls-verify, and %s: remove it and give the cluster's certificate-authority-data", clusterName, why)
	case c.ProxyURL != "":
		return fmt.Sprintf("the kubeconfig's cluster %q sets proxy-url, and %s: remove it (a proxy the runner needs goes in the step's env: HTTPS_PROXY)", clusterName, why)
	}
	u, err := url.Parse(c.Server)
	if err != nil || u.Host == "" {
		return fmt.Sprintf("the kubeconfig's cluster %q has a server that is not a URL: set server: https://HOST", clusterName)
	}
	shown := u.Scheme + "://" + u.Host
	if u.Scheme != "https" {
		return fmt.Sprintf("the kubeconfig's cluster %q has the server %s, not https, and %s: use its https:// URL", clusterName, shown, why)
	}
	allow := "the allowed-servers input"
	if l.in.CLI {
		allow = "--allowed-server"
	}
	if strings.HasSuffix(u.Hostname(), ".") {
		// The name checked must be the name dialled: "host." and "host" may resolve to
		// different servers, and the clouds and the list name servers without the dot.
		return fmt.Sprintf("the kubeconfig's cluster %q has the server %s, whose host ends with a dot, and %s: write it without the final dot, as the cloud and %s name it "+
			"(a name with and without it may resolve to different servers under the runner's DNS search domains)", clusterName, shown, why, allow)
	}
	if l.allowed[hostPort(u)] {
		return ""
	}
	endpoints, ok := cloudauth.APIEndpoint(src.Cloud(), u.Hostname())
	switch {
	case ok && u.Port() != "" && u.Port() != "443":
		// The clouds serve their API endpoints on 443 alone: another port of such a name is
		// a server of whoever the name's address points to (a private endpoint's name may
		// point anywhere its creator chose).
		return fmt.Sprintf("the kubeconfig's cluster %q has the server %s, the name of one of %s's API endpoints on port %s, and %s: the cloud serves its API endpoints on port 443 only: remove the port, or, if the server is yours, list %s in %s",
			clusterName, shown, src.Cloud(), u.Port(), why, shown, allow)
	case ok && c.TLSServerName != "":
		return fmt.Sprintf("the kubeconfig's cluster %q sets tls-server-name, and %s: remove it (the certificate of %s's API endpoint holds its own name), or, if the server is yours, list it in %s",
			clusterName, why, src.Cloud(), allow)
	case ok:
		return ""
	}
	return fmt.Sprintf("the kubeconfig's cluster %q has the server %s, which is not an %s API endpoint (%s), and %s: if the server is yours, list it in %s",
		clusterName, shown, src.Cloud(), endpoints, why, allow)
}

// pinnedCAs reads Input.PinnedCA or Input.PinnedCAFile: the DER of each certificate; nil when
// neither is given.
func (l *loader) pinnedCAs() ([][]byte, error) {
	origin, data := "input pinned-ca", []byte(l.in.PinnedCA)
	if l.in.PinnedCAFile != "" {
		origin = "--pinned-ca " + l.in.PinnedCAFile
		var err error
		if data, err = l.env.ReadFile(l.in.PinnedCAFile); err != nil {
			return nil, fmt.Errorf("%s cannot be read: give a file of PEM CA certificates", origin)
		}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	cas, err := cloudauth.PEMCertificates(data)
	if err == nil && len(cas) == 0 {
		err = errors.New("no certificate")
	}
	if err != nil {
		return nil, fmt.Errorf("%s is not PEM CA certificates (%w): give the clusters' CA certificates, each from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----", origin, err)
	}
	return cas, nil
}

// pinCA says why a repository kubeconfig's CA may not be used with a built-in provider's token
// whose cluster the cloud is not asked about, when the workflow pins CAs: every certificate of
// its certificate-authority-data must be a pinned one, and it must give one. Empty means it
// may (or nothing is pinned).
func (l *loader) pinCA(d *doc, clusterName string, caData []byte, src *cloudauth.Source) string {
	if len(l.pinned) == 0 {
		return ""
	}
	input := "the pinned-ca input"
	if l.in.CLI {
		input = "--pinned-ca"
	}
	why := fmt.Sprintf("a kubeconfig from the repository (%s) never chooses which server may take the job's %s token, and %s pins the CAs it may trust", d.origin, src.Cloud(), input)
	cas, err := cloudauth.PEMCertificates(caData)
	switch {
	case err != nil:
		return fmt.Sprintf("the kubeconfig's cluster %q has a certificate-authority-data that is not PEM certificates (%v): give the cluster's CA", clusterName, err)
	case len(cas) == 0:
		return fmt.Sprintf("the kubeconfig's cluster %q gives no certificate-authority-data, and %s: give the cluster's CA (certificate-authority-data), one of those pinned", clusterName, why)
	}
	for _, c := range cas {
		if !slices.ContainsFunc(l.pinned, func(p []byte) bool { return bytes.Equal(p, c) }) {
			return fmt.Sprintf("the kubeconfig's cluster %q has a certificate-authority-data (%s) that is none of the pinned CAs, and %s: give the cluster's own CA, or pin it in %s",
				clusterName, describeCerts(c), why, input)
		}
	}
	return ""
}

// describeCerts names a certificate by its subject, for messages.
func describeCerts(der []byte) string {
	if c, err := x509.ParseCertificate(der); err == nil {
		return fmt.Sprintf("%q", c.Subject.String())
	}
	return "a certificate"
}
