package verify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/helmstorage"
)

// TestReadUndecodableRelease: a Helm storage secret that does not decode is said to be so,
// with no retry (Helm writes a release version once) and nothing of its content: assess says
// it in words of its own.
func TestReadUndecodableRelease(t *testing.T) {
	t.Parallel()
	const content = "hunter2 is not a release"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "sh.helm.release.v1.web.v2"},
		Data: map[string][]byte{helmstorage.DataKey: []byte(content)}}
	s := &clusterState{core: fake.NewClientset(secret).CoreV1()}
	got := s.readRelease(t.Context(), "HelmRelease/shop/web", "shop", secret.Name, fixtureNow)
	if diff := cmp.Diff(assess.StoredRelease{Undecodable: true}, got); diff != "" {
		t.Errorf("readRelease (-want +got):\n%s", diff)
	}
}
