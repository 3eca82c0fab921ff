package helmstorage

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/flux"
)

// secretValue stands for a value that must never leave the package, in results or errors.
const secretValue = "hunter2-do-not-print"

// manifest is what Helm renders for a release: documents with # Source comments, namespaced
// objects without a namespace, and a rendered Secret holding a value.
const manifest = `---
# Source: web/templates/secret.yaml
apiVersion: v1
kind: Secret
metadata:
  name: web-credentials
stringData:
  password: ` + secretValue + `
---
# Source: web/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
---
# Source: web/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: other
spec:
  replicas: 2
---
# Source: web/templates/clusterrole.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: web-reader
---
# Source: web/templates/empty.yaml
# only comments: the template rendered nothing
---
# Source: web/templates/pre-install-job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: web-migrate
  annotations:
    helm.sh/hook: pre-install
`

// encode stores a release the way Helm's secret driver does: JSON, gzip (unless legacy), base64.
func encode(t *testing.T, rel map[string]any, compress bool) []byte {
	t.Helper()
	data, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	if compress {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if _, err := zw.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		data = buf.Bytes()
	}
	return []byte(base64.StdEncoding.EncodeToString(data))
}

func release(manifest string) map[string]any {
	return map[string]any{
		"name":      "web",
		"namespace": "apps",
		"version":   3,
		"info":      map[string]any{"status": "deployed"},
		"config":    map[string]any{"password": secretValue},
		"manifest":  manifest,
		"hooks": []any{map[string]any{
			"name": "web-test", "kind": "Pod", "path": "web/templates/tests/test.yaml",
			"manifest": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-test\n",
		}},
	}
}

func TestObjects(t *testing.T) {
	t.Parallel()
	want := []flux.ObjectRef{
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Namespace: "apps", Name: "web-reader"},
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "other", Name: "web"},
		{Version: "v1", Kind: "Secret", Namespace: "apps", Name: "web-credentials"},
		{Version: "v1", Kind: "Service", Namespace: "apps", Name: "web"},
	}
	tests := []struct {
		name    string
		data    []byte
		want    []flux.ObjectRef
		wantErr string
	}{
		{name: "gzipped", data: encode(t, release(manifest), true), want: want},
		{name: "uncompressed, as Helm stored releases before 3.0", data: encode(t, release(manifest), false), want: want},
		{name: "trailing newline", data: append(encode(t, release(manifest), true), '\n'), want: want},
		{name: "empty manifest", data: encode(t, release(""), true), want: []flux.ObjectRef{}},
		{name: "not base64", data: []byte("not base64!"), wantErr: "not base64"},
		{name: "not gzip", data: []byte(base64.StdEncoding.EncodeToString([]byte{0x1f, 0x8b, 0x08, 0, 1, 2})), wantErr: "invalid gzip"},
		{name: "not JSON", data: []byte(base64.StdEncoding.EncodeToString([]byte(`{"manifest": "` + secretValue))), wantErr: "not a Helm release"},
		{
			name:    "invalid YAML document",
			data:    encode(t, release("apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\ndata:\n  password: ["+secretValue+"\n"), true),
			wantErr: "release web version 3: manifest document 1: not a Kubernetes object",
		},
		{
			name: "a list stands for its items, hooks left out, as Helm applies them",
			data: encode(t, release("# Source: web/templates/list.yaml\napiVersion: v1\nkind: List\nitems:\n"+
				"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n"+
				"- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: web\n    namespace: other\n"+
				"- apiVersion: batch/v1\n  kind: Job\n  metadata:\n    name: migrate\n    annotations:\n      helm.sh/hook: pre-upgrade\n"+
				"---\napiVersion: v1\nkind: ConfigMapList\nitems: []\n"), true),
			want: []flux.ObjectRef{
				{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: "a"},
				{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "other", Name: "web"},
			},
		},
		{
			name:    "a list's item without a name",
			data:    encode(t, release("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n"), true),
			wantErr: "manifest document 1: not a Kubernetes object with apiVersion, kind and metadata.name",
		},
		{
			name:    "document without a kind",
			data:    encode(t, release("apiVersion: v1\nmetadata:\n  name: x\n"), true),
			wantErr: "manifest document 1: not a Kubernetes object with apiVersion, kind and metadata.name",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Objects(tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Objects() error = %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), secretValue) {
					t.Errorf("Objects() error = %q quotes the release's content", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Objects() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Objects() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretName(t *testing.T) {
	t.Parallel()
	if got, want := SecretName("apps-web", 12), "sh.helm.release.v1.apps-web.v12"; got != want {
		t.Errorf("SecretName(apps-web, 12) = %q, want %q", got, want)
	}
}
