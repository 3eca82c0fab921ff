package classify

import "testing"

func TestTransientPull(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason, message string
		transient       bool
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
		{"ErrImagePull", `something the classifier has never seen`, false},
		{"ImagePullBackOff", `Back-off pulling image "r/app:1"`, false},
		{"ImagePullBackOff", `Back-off pulling image "r/app:1": ErrImagePull: i/o timeout`, true},
		{"RegistryUnavailable", `registry is unavailable`, true},
		{"InvalidImageName", `couldn't parse image name "r/app:": invalid reference format`, false},
		{"CreateContainerConfigError", `i/o timeout`, false},
	}
	for _, tt := range tests {
		if got := transientPull(tt.reason, tt.message); got != tt.transient {
			t.Errorf("transientPull(%s, %q) = %t, want %t", tt.reason, tt.message, got, tt.transient)
		}
	}
}
