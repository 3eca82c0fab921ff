package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/result"
)

// tokenError is a credential provider's failure, as internal/cloudauth returns it from a
// request's transport.
type tokenError struct {
	verdict result.Verdict
	msg     string
}

func (e tokenError) Error() string                     { return e.msg }
func (e tokenError) CredentialVerdict() result.Verdict { return e.verdict }

// TestConnectionVerdict: a credential provider's failure, which client-go wraps in a
// *url.Error like a network error, keeps the verdict and message the provider gave.
func TestConnectionVerdict(t *testing.T) {
	t.Parallel()
	asClientGo := func(err error) error {
		return fmt.Errorf("get kustomization: %w", &url.Error{Op: "Get", URL: "https://10.0.0.1/apis", Err: err})
	}
	type got struct {
		Verdict result.Verdict
		Message string
		OK      bool
	}
	tests := []struct {
		name string
		err  error
		want got
	}{{
		name: "provider refused",
		err:  asClientGo(tokenError{result.VerdictUnauthorized, "EKS credentials (aws eks get-token, built in): could not get a token: AccessDenied"}),
		want: got{result.VerdictUnauthorized, "EKS credentials (aws eks get-token, built in): could not get a token: AccessDenied", true},
	}, {
		name: "provider's token endpoint unreachable",
		err:  asClientGo(tokenError{result.VerdictUnreachable, "AKS credentials (kubelogin get-token, built in): could not get a token: dial tcp: connection refused"}),
		want: got{result.VerdictUnreachable, "AKS credentials (kubelogin get-token, built in): could not get a token: dial tcp: connection refused", true},
	}, {
		name: "provider misconfigured",
		err:  asClientGo(tokenError{result.VerdictInvalidConfig, "GKE credentials (gke-gcloud-auth-plugin, built in): the credentials file cannot be used"}),
		want: got{result.VerdictInvalidConfig, "GKE credentials (gke-gcloud-auth-plugin, built in): the credentials file cannot be used", true},
	}, {
		name: "API server's 401",
		err:  apierrors.NewUnauthorized("Unauthorized"),
		want: got{result.VerdictUnauthorized, "the API server rejected the credentials (401) while reading Kustomization/flux-system/app: check that the token or client certificate in the kubeconfig is valid and not expired", true},
	}, {
		name: "network",
		err:  asClientGo(syscall.ECONNREFUSED),
		want: got{result.VerdictUnreachable, "cannot reach the API server: 10.0.0.1: connection refused", true},
	}, {
		name: "not about connecting",
		err:  apierrors.NewNotFound(schema.GroupResource{Resource: "kustomizations"}, "app"),
		want: got{},
	}, {
		name: "plain error",
		err:  errors.New("decode: unexpected EOF"),
		want: got{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, msg, ok := connectionVerdict(tt.err, "Kustomization/flux-system/app")
			if diff := cmp.Diff(tt.want, got{v, msg, ok}); diff != "" {
				t.Errorf("connectionVerdict() (-want +got):\n%s", diff)
			}
		})
	}
}

// timeoutError is a net.Error that timed out, as a dial or read deadline returns it.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o deadline reached" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// TestIsNetworkError: the errors of the network between here and the API server, typed or as
// text only, and those that are not (the run's own deadline or cancellation, an answer).
func TestIsNetworkError(t *testing.T) {
	t.Parallel()
	asClientGo := func(err error) error {
		return fmt.Errorf("get kustomization: %w", &url.Error{Op: "Get", URL: "https://10.0.0.1/apis", Err: err})
	}
	dial := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"name does not resolve", asClientGo(&net.DNSError{Err: "no such host", Name: "api.example", IsNotFound: true}), true},
		{"refused, dial", asClientGo(dial(os.NewSyscallError("connect", syscall.ECONNREFUSED))), true},
		{"refused, errno alone", asClientGo(syscall.ECONNREFUSED), true},
		{"reset, errno", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"host unreachable", fmt.Errorf("connect: %w", syscall.EHOSTUNREACH), true},
		{"network unreachable", fmt.Errorf("connect: %w", syscall.ENETUNREACH), true},
		{"timed out, errno", fmt.Errorf("connect: %w", syscall.ETIMEDOUT), true},
		{"unexpected EOF", asClientGo(io.ErrUnexpectedEOF), true},
		{"EOF, wrapped twice", asClientGo(fmt.Errorf("read body: %w", io.EOF)), true},
		{"net.Error timeout", asClientGo(timeoutError{}), true},
		{"deadline of a connection", asClientGo(os.ErrDeadlineExceeded), true},
		{"refused, text only", errors.New(`Get "https://10.0.0.1/apis": dial tcp 10.0.0.1:443: connect: connection refused`), true},
		{"no such host, text only", errors.New("dial tcp: lookup api.example on 127.0.0.53:53: no such host"), true},
		{"i/o timeout, text only", errors.New("dial tcp 10.0.0.1:443: i/o timeout"), true},
		{"reset, text only", errors.New("read tcp 10.0.0.2:5000->10.0.0.1:443: read: connection reset by peer"), true},

		{"the run's cancellation", asClientGo(context.Canceled), false},
		{"the run's deadline", asClientGo(context.DeadlineExceeded), false},
		{"an answer", apierrors.NewNotFound(schema.GroupResource{Resource: "kustomizations"}, "app"), false},
		{"decoding", errors.New("decode: unexpected EOF"), false},
		{"throttled", apierrors.NewTooManyRequests("slow down", 30), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := isNetworkError(tt.err); got != tt.want {
				t.Errorf("isNetworkError(%v) = %t, want %t", tt.err, got, tt.want)
			}
		})
	}
}
