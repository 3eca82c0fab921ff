package verify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

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

// connectionVerdict maps an API error to the verdict it means for the cluster, and a message
// that says what to do. ok is false for errors that are not about reaching or being allowed.
func connectionVerdict(err error, what string) (v result.Verdict, message string, ok bool) {
	switch {
	case apierrors.IsUnauthorized(err):
		return result.VerdictUnauthorized, fmt.Sprintf("the API server rejected the credentials (401) while reading %s: check that the token or client certificate in the kubeconfig is valid and not expired", what), true
	case apierrors.IsForbidden(err):
		return result.VerdictForbidden, fmt.Sprintf("the credentials may not read %s (403): grant get, list and watch on it to the kubeconfig's user: %s", what, apiMessage(err)), true
	case meta.IsNoMatchError(err), isNotServed(err):
		return result.VerdictNotFound, fmt.Sprintf("the cluster does not serve %s: is Flux installed?", what), true
	case isNetworkError(err):
		return result.VerdictUnreachable, fmt.Sprintf("cannot reach the API server: %s", networkMessage(err)), true
	}
	return "", "", false
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

func isNetworkError(err error) bool {
	var netErr net.Error
	var urlErr *url.Error
	var opErr *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH), errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.As(err, &opErr), errors.As(err, &netErr):
		return true
	case errors.As(err, &urlErr):
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such host") ||
		strings.Contains(msg, "i/o timeout") || strings.Contains(msg, "x509:") || strings.Contains(msg, "tls:")
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
