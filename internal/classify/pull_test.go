package classify

import "testing"

func TestRetriedPull(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason, message string
		retried         bool
	}{
		{"ErrImagePull", `failed to resolve reference "r/app:1": r/app:1: not found`, false},
		{"ErrImagePull", `failed to resolve reference "r/app:1": unexpected status: 404: manifest unknown`, false},
		{"ErrImagePull", `pull access denied for app, repository does not exist or may require 'docker login'`, false},
		{"ErrImagePull", `dial tcp 10.0.0.1:443: i/o timeout`, true},
		{"ErrImagePull", `net/http: TLS handshake timeout`, true},
		{"ErrImagePull", `dial tcp 10.0.0.1:443: connect: connection refused`, true},
		{"ErrImagePull", `429 Too Many Requests`, true},
		{"ErrImagePull", `unexpected status code: 503 Service Unavailable`, true},
		{"ErrImagePull", `lookup registry.example on 10.96.0.10:53: no such host`, true},
		{"ErrImagePull", `failed to pull image "r/app:1.429": not found`, false},
		// Not proven permanent: retried.
		{"ErrImagePull", `something the classifier has never seen`, true},
		{"ImagePullBackOff", `Back-off pulling image "r/app:1"`, true},
		{"ImagePullBackOff", `Back-off pulling image "r/app:1": ErrImagePull: i/o timeout`, true},
		{"ImagePullBackOff", `Back-off pulling image "r/app:1": ErrImagePull: r/app:1: not found`, false},
		{"RegistryUnavailable", `registry is unavailable`, true},
		{"InvalidImageName", `couldn't parse image name "r/app:": invalid reference format`, false},
		{"ErrImageNeverPull", `Container image "r/app:1" is not present with pull policy of Never`, false},
		{"CreateContainerConfigError", `i/o timeout`, false},
	}
	for _, tt := range tests {
		if got := retriedPull(tt.reason, tt.message); got != tt.retried {
			t.Errorf("retriedPull(%s, %q) = %t, want %t", tt.reason, tt.message, got, tt.retried)
		}
	}
}
