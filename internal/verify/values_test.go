package verify

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/flux"
)

// TestComposeHelmReleaseValues: the values of a HelmRelease are composed from its spec.values
// and the data of its valuesFrom as GETs read them now, as helm-controller composes them (in
// order, a targetPath set in place, an optional object that is missing left out, spec.values
// last), and only their digest is kept, as helm-controller records it: the SHA-256 of the
// values' YAML with sorted keys. When they cannot be read or composed, the reason names the
// object and the key, never a value, and the cluster's state keeps no data in any form.
func TestComposeHelmReleaseValues(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-0123456789abcdef"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-values", ResourceVersion: "7"},
		Data: map[string]string{"values.yaml": "replicas: 2\nimage: {tag: v1, repository: web}\n"}}
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-token", ResourceVersion: "8"},
		Data: map[string][]byte{"token": []byte(secret), "broken.yaml": []byte("password: [" + secret)}}
	release := func(valuesFrom ...map[string]any) *unstructured.Unstructured {
		from := make([]any, len(valuesFrom))
		for i, v := range valuesFrom {
			from[i] = v
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
			"metadata": map[string]any{"namespace": "shop", "name": "web", "generation": int64(2)},
			"spec":     map[string]any{"interval": "10m", "values": map[string]any{"replicas": int64(3), "debug": true}, "valuesFrom": from},
		}}
	}
	values := map[string]any{"kind": "ConfigMap", "name": "web-values"}
	tokenAt := map[string]any{"kind": "Secret", "name": "web-token", "valuesKey": "token", "targetPath": "auth.token"}
	// (helm-controller's digest: chartutil.Encode's YAML, keys sorted, spec.values last.)
	sum := sha256.Sum256([]byte("auth:\n  token: " + secret + "\ndebug: true\nimage:\n  repository: web\n  tag: v1\nreplicas: 3\n"))
	composed := "sha256:" + hex.EncodeToString(sum[:])
	tests := []struct {
		name    string
		release *unstructured.Unstructured
		// fail makes the GETs of a resource fail with an error.
		fail  map[string]error
		want  assess.StoredConfig
		reads []string
	}{
		{name: "composed", release: release(values, tokenAt), want: assess.StoredConfig{Checksum: composed},
			reads: []string{"configmaps/web-values", "secrets/web-token"}},
		{name: "an object twice, read once", release: release(values, tokenAt, values), want: assess.StoredConfig{Checksum: composed},
			reads: []string{"configmaps/web-values", "secrets/web-token"}},
		{name: "an optional object missing", release: release(values, map[string]any{"kind": "ConfigMap", "name": "absent", "optional": true}, tokenAt),
			want: assess.StoredConfig{Checksum: composed}, reads: []string{"configmaps/web-values", "configmaps/absent", "secrets/web-token"}},
		{name: "an object missing", release: release(values, map[string]any{"kind": "ConfigMap", "name": "absent"}),
			want:  assess.StoredConfig{Unreadable: "composing the values of HelmRelease shop/web: ConfigMap shop/absent, key values.yaml: resource not found"},
			reads: []string{"configmaps/web-values", "configmaps/absent"}},
		{name: "a key missing", release: release(map[string]any{"kind": "Secret", "name": "web-token", "valuesKey": "absent.yaml"}),
			want:  assess.StoredConfig{Unreadable: "composing the values of HelmRelease shop/web: Secret shop/web-token, key absent.yaml: key not found"},
			reads: []string{"secrets/web-token"}},
		{name: "data that do not parse", release: release(map[string]any{"kind": "Secret", "name": "web-token", "valuesKey": "broken.yaml"}),
			want:  assess.StoredConfig{Unreadable: "composing the values of HelmRelease shop/web: Secret shop/web-token, key broken.yaml: failed to read values data"},
			reads: []string{"secrets/web-token"}},
		{name: "forbidden", release: release(values, tokenAt),
			fail: map[string]error{"secrets": apierrors.NewForbidden(corev1.Resource("secrets"), "web-token", errors.New("no RBAC"))},
			want: assess.StoredConfig{Unreadable: "the credentials may not get Secret shop/web-token (403)"}, reads: []string{"configmaps/web-values", "secrets/web-token"}},
		{name: "a read that fails", release: release(values, tokenAt),
			fail:  map[string]error{"configmaps": apierrors.NewInternalError(errors.New("etcd timeout"))},
			want:  assess.StoredConfig{Unreadable: "reading ConfigMap shop/web-values: Internal error occurred: etcd timeout", RetryAt: fixtureNow.Add(storageRetry)},
			reads: []string{"configmaps/web-values"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := fake.NewClientset(cm, token)
			for resource, err := range tt.fail {
				client.PrependReactor("get", resource, func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, err })
			}
			s := &clusterState{core: client.CoreV1(), fetches: newFetcher(t.Context(), func() {}, true)}
			need := assess.ConfigNeed{Key: "helmreleases/shop/web@2;ConfigMap/web-values@7;Secret/web-token@8", GVR: flux.KindHelmRelease.GroupVersionResource(),
				Namespace: "shop", Name: "web", Release: tt.release}
			if !s.fetchConfig(need, fixtureNow) {
				t.Fatal("fetchConfig() = false, want the read in")
			}
			got, ok := s.config(need.Key)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); !ok || diff != "" {
				t.Errorf("config(%q) = %v (-want +got):\n%s", need.Key, ok, diff)
			}
			var reads []string
			for _, a := range client.Actions() {
				if get, ok := a.(k8stesting.GetAction); ok && get.GetNamespace() == "shop" {
					reads = append(reads, get.GetResource().Resource+"/"+get.GetName())
				} else {
					t.Errorf("request %s %s, want GETs in shop alone", a.GetVerb(), a.GetResource().Resource)
				}
			}
			if diff := cmp.Diff(tt.reads, reads); diff != "" {
				t.Errorf("GETs (-want +got):\n%s", diff)
			}
			kept := fmt.Sprintf("%#v %#v", s.configs, s.fetches.results)
			for _, form := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), fmt.Sprintf("%x", secret)} {
				if strings.Contains(kept, form) {
					t.Errorf("the cluster's state holds the data (%q): %s", form, kept)
				}
			}
		})
	}
}
