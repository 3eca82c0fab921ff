package verify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/result"
)

var (
	errTimeout  = errors.New("timeout")
	errFailFast = errors.New("another cluster failed and fail-fast is set")
)

// stopVerdict tells why a cluster's wait ended without a verdict of its own: the run's
// timeout, fail-fast, or the caller's cancellation (a cancelled job).
func stopVerdict(ctx context.Context) (result.Verdict, string) {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errTimeout):
		return result.VerdictTimeout, ""
	case errors.Is(cause, errFailFast):
		return result.VerdictCancelled, "stopped: " + errFailFast.Error()
	default:
		return result.VerdictCancelled, "stopped: the run was cancelled"
	}
}

// credentialError is a failure to obtain the credentials of a request (internal/cloudauth's
// built-in providers): it knows the verdict it means, and its message names the provider.
type credentialError interface {
	error
	CredentialVerdict() result.Verdict
}

// connectionVerdict maps an API or transport error to the verdict it means for the cluster,
// and a message that says what to do (readFailure's, as assess words it). ok is false for
// errors that are not about reaching the API server or being allowed to read from it.
func connectionVerdict(err error, what string) (v result.Verdict, message string, ok bool) {
	x := readFailure(err).Explain(what)
	return x.Verdict, x.Message, x.Known
}

// readFailure classifies a read's error for the decision (assess.ReadFailure), with what only
// the error's types tell: a credential provider's verdict, a certificate's problem, the
// network's.
func readFailure(err error) assess.ReadFailure {
	f := assess.ReadFailure{Detail: apiMessage(err)}
	var cred credentialError
	switch {
	case errors.As(err, &cred):
		f.Cause, f.Verdict, f.Said = assess.ReadCredentials, cred.CredentialVerdict(), cred.Error()
		return f
	case apierrors.IsUnauthorized(err):
		f.Cause = assess.ReadUnauthorized
		return f
	case apierrors.IsForbidden(err):
		f.Cause = assess.ReadForbidden
		return f
	case apierrors.IsTooManyRequests(err):
		f.Cause, f.RetryAfter = assess.ReadThrottled, retryAfter(err)
		return f
	case meta.IsNoMatchError(err), isNotServed(err):
		f.Cause = assess.ReadNotServed
		return f
	}
	if msg, ok := tlsProblem(err); ok {
		f.Cause, f.Said = assess.ReadTLS, msg
	} else if isNetworkError(err) {
		f.Cause, f.Said = assess.ReadUnreachable, networkMessage(err)
	}
	return f
}

// retryAfter is the wait a 429's Retry-After asked for, when the error carries it.
func retryAfter(err error) time.Duration {
	if secs, ok := apierrors.SuggestsClientDelay(err); ok && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	return 0
}

func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}

// isNotServed reports a 404 for a whole resource type (no CRD), as opposed to a missing object.
func isNotServed(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsNotFound(err) {
		return false
	}
	d := status.Status().Details
	return d == nil || d.Name == ""
}

// tlsProblem says what is wrong with the API server's certificate, or with speaking TLS to
// it at all, and which field of the kubeconfig fixes it. The network is fine: retrying will
// not help.
func tlsProblem(err error) (string, bool) {
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	switch {
	case errors.As(err, &unknownAuthority):
		subject := ""
		if c := unknownAuthority.Cert; c != nil {
			subject = fmt.Sprintf(" (issued by %q)", c.Issuer.CommonName)
		}
		return fmt.Sprintf("the API server's certificate%s is signed by an authority the kubeconfig does not trust: "+
			"set the cluster's certificate-authority-data to the CA that signed it (kubectl config view --raw --minify shows yours)", subject), true
	case errors.As(err, &hostname):
		valid := "other names"
		if c := hostname.Certificate; c != nil {
			valid = strings.Join(append(append([]string{}, c.DNSNames...), ipStrings(c.IPAddresses)...), ", ")
		}
		return fmt.Sprintf("the API server's certificate is valid for %s, not for %s: set the cluster's server to a name the certificate holds, or tls-server-name",
			valid, hostname.Host), true
	case errors.As(err, &invalid):
		if invalid.Reason == x509.Expired {
			return fmt.Sprintf("the API server's certificate has expired or is not valid yet (%s): renew it, or check this machine's clock", invalid.Detail), true
		}
		return fmt.Sprintf("the API server's certificate is not valid: %s: fix the certificate, or the cluster's certificate-authority-data", invalid.Error()), true
	case errors.As(err, &record), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "the API server answered in plain HTTP, not TLS: use http:// in the cluster's server, or point it at the server's HTTPS port", true
	}
	return "", false
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out
}

// isNetworkError reports an error of the network between here and the API server: the name
// does not resolve, the connection is refused, reset or times out, or ends early. The run's
// own deadline is not one: it is a Timeout.
func isNetworkError(err error) bool {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded) && !isTimeoutError(err):
		return false
	case errors.As(err, &dnsErr), errors.As(err, &opErr):
		return true
	case utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsTimeout(err),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.ETIMEDOUT),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return true
	}
	// An error that reaches here as text only (its type lost on the way): apimachinery's
	// predicates read the types, or only "connection reset by peer" of the text (IsProbableEOF,
	// which also takes an HTTP/2 GOAWAY for a network error, which this does not).
	msg := err.Error()
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such host") || strings.Contains(msg, "i/o timeout") ||
		strings.Contains(msg, "connection reset")
}

// isClientTimeout reports a wait the client gave up: a network timeout, a TLS handshake that
// did not finish in time, a deadline.
func isClientTimeout(err error) bool {
	return err != nil && (isTimeoutError(err) || errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "TLS handshake timeout"))
}

// isTimeoutError reports a network timeout (i/o timeout), as opposed to a context's deadline.
func isTimeoutError(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout() && !errors.Is(err, context.DeadlineExceeded)
}

// networkMessage keeps the useful end of a network error (the URL's host is fine to show; the
// kubeconfig's secrets never reach an error).
func networkMessage(err error) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		u, perr := url.Parse(urlErr.URL)
		host := urlErr.URL
		if perr == nil {
			host = u.Host
		}
		return fmt.Sprintf("%s: %v", host, urlErr.Err)
	}
	return err.Error()
}
