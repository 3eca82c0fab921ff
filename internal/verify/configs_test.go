package verify

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/org/app-status-action/internal/assess"
)

// TestFlaggerConfigKeepsNoData: the data of a Secret (or ConfigMap) a Flagger Canary tracks
// are read only for Flagger's checksum of them and dropped at once: once the read is in, what
// the cluster's state keeps of it (its configs, the fetcher's results) is the checksum alone,
// and holds none of the data, in no form.
func TestFlaggerConfigKeepsNoData(t *testing.T) {
	t.Parallel()
	const value = "db-password-0123456789abcdef"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", ResourceVersion: "7"},
		Data: map[string][]byte{"password": []byte(value)}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings", ResourceVersion: "8"},
		Data: map[string]string{"dsn": "postgres://app:" + value + "@db"}}
	tests := []struct {
		name     string
		need     assess.ConfigNeed
		checksum string
	}{
		{name: "a Secret", need: assess.ConfigNeed{Key: "secrets/shop/db@7", GVR: corev1.SchemeGroupVersion.WithResource("secrets"), Namespace: "shop", Name: "db"},
			checksum: assess.FlaggerChecksum(secret.Data)},
		{name: "a ConfigMap", need: assess.ConfigNeed{Key: "configmaps/shop/settings@8", GVR: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "shop", Name: "settings"},
			checksum: assess.FlaggerChecksum(cm.Data)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &clusterState{core: fake.NewClientset(secret, cm).CoreV1(), fetches: newFetcher(t.Context(), func() {}, true)}
			if !s.fetchConfig(tt.need, fixtureNow) {
				t.Fatal("fetchConfig() = false, want the read in")
			}
			got, ok := s.config(tt.need.Key)
			if diff := cmp.Diff(assess.StoredConfig{Checksum: tt.checksum}, got); !ok || diff != "" {
				t.Errorf("config(%q) = %v (-want +got):\n%s", tt.need.Key, ok, diff)
			}
			kept := fmt.Sprintf("%#v %#v", s.configs, s.fetches.results)
			for _, form := range []string{value, base64.StdEncoding.EncodeToString([]byte(value)), strings.TrimPrefix(fmt.Sprintf("%#v", []byte(value)), "[]byte"), fmt.Sprintf("%x", value)} {
				if strings.Contains(kept, form) {
					t.Errorf("the cluster's state holds the data (%q): %s", form, kept)
				}
			}
		})
	}
}
