package testbed

import "testing"

func TestControllersBinary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cs   Controllers
		name string
		want string
	}{
		{CurrentControllers, "kustomize-controller", "kustomize-controller"},
		{CurrentControllers, "helm-controller", "helm-controller"},
		{CurrentControllers, "source-controller", "source-controller"},
		{PreviousControllers, "kustomize-controller", "kustomize-controller-prev"},
		{PreviousControllers, "helm-controller", "helm-controller-prev"},
		// source-controller is not part of the matrix.
		{PreviousControllers, "source-controller", "source-controller"},
	}
	for _, tt := range tests {
		if got := tt.cs.binary(tt.name); got != tt.want {
			t.Errorf("%s.binary(%q) = %q, want %q", tt.cs, tt.name, got, tt.want)
		}
	}
}
