package verify

import (
	"errors"
	"fmt"
	"net/url"
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
