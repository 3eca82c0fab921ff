package kubeconfig

import (
	"encoding/base64"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

func TestDecode(t *testing.T) {
	t.Parallel()
	plain := yamlOf(t, newConfig("a", "b"))
	std := base64.StdEncoding.EncodeToString([]byte(plain))
	if !strings.ContainsAny(std, "+/") {
		t.Fatalf("fixture %q has neither '+' nor '/': the URL alphabet would not be tested", std)
	}
	// unpadded needs padding when encoded: the "no padding" cases differ from the padded ones.
	unpadded := plain + "#"
	for len(unpadded)%3 == 0 {
		unpadded += "#"
	}
	asJSON, err := yaml.YAMLToJSON([]byte(plain))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		raw         string
		wantEncoded bool
		wantErr     string
	}{
		{name: "YAML", raw: plain},
		{name: "YAML with CRLF and a BOM", raw: "\ufeff" + strings.ReplaceAll(plain, "\n", "\r\n")},
		{name: "JSON", raw: string(asJSON)},
		{name: "YAML without apiVersion", raw: "contexts:\n- name: a\n  context: {cluster: a, user: a}\n"},
		{name: "standard base64", raw: std, wantEncoded: true},
		{name: "standard base64, no padding", raw: base64.RawStdEncoding.EncodeToString([]byte(unpadded)), wantEncoded: true},
		{name: "URL base64", raw: base64.URLEncoding.EncodeToString([]byte(unpadded)), wantEncoded: true},
		{name: "URL base64, no padding", raw: base64.RawURLEncoding.EncodeToString([]byte(unpadded)), wantEncoded: true},
		{name: "base64 -w76", raw: wrap(std, 76, "\n"), wantEncoded: true},
		{name: "base64 wrapped with CRLF, indented", raw: "  " + wrap(std, 64, "\r\n  "), wantEncoded: true},
		{name: "empty", raw: " \n", wantErr: "empty"},
		{name: "text", raw: "hello, world", wantErr: "not a kubeconfig (neither YAML nor base64 of one)"},
		{name: "base64 of text", raw: b64("hello, world"), wantEncoded: true, wantErr: "not a kubeconfig (neither YAML nor base64 of one)"},
		{name: "a manifest", raw: "apiVersion: apps/v1\nkind: Deployment\n", wantErr: "not a kubeconfig: expected apiVersion: v1 and kind: Config"},
		{name: "bad base64 data field", raw: "apiVersion: v1\nkind: Config\nusers:\n- name: a\n  user:\n    client-key-data: " + marker + "!!\n", wantErr: "not a valid kubeconfig: a *-data field (certificate-authority-data, client-certificate-data, client-key-data) is not valid base64"},
		{name: "wrong type", raw: "apiVersion: v1\nkind: Config\nusers:\n- name: a\n  user:\n    token: [" + marker + "]\n", wantErr: "not a valid kubeconfig: field users.user.token must be of type string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, encoded, err := decode([]byte(tt.raw))
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("decode() error (-want +got):\n%s", diff)
			}
			if encoded != tt.wantEncoded {
				t.Errorf("decode() encoded = %v, want %v", encoded, tt.wantEncoded)
			}
			noSecret(t, "error", errString(err))
			if err != nil {
				return
			}
			if got := slices.Sorted(maps.Keys(cfg.Contexts)); len(got) == 0 {
				t.Errorf("decode() contexts = %v, want some", got)
			}
		})
	}
}

func TestPick(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     *clientcmdapi.Config
		want    string
		context string
		wantErr string
	}{
		{name: "named", cfg: newConfig("a", "b"), context: "b", want: "b"},
		{name: "current-context", cfg: withCurrent(newConfig("a", "b"), "a"), want: "a"},
		{name: "named over current-context", cfg: withCurrent(newConfig("a", "b"), "a"), context: "b", want: "b"},
		{name: "only context", cfg: newConfig("a"), want: "a"},
		{name: "unknown", cfg: newConfig("a", "b"), context: "c", wantErr: `context "c" not found in env:KC; it has: a, b`},
		{name: "several, no current-context", cfg: newConfig("b", "a"), wantErr: `env:KC has several contexts and no current-context; add #context to pick one, e.g. env:KC#a (it has: a, b)`},
		{name: "dangling current-context", cfg: withCurrent(newConfig("a", "b"), "gone"), wantErr: `the current-context "gone" of env:KC is not one of its contexts; it has: a, b: pick one with env:KC#CONTEXT`},
		{name: "no contexts", cfg: newConfig(), wantErr: `env:KC has no contexts; add one (kubectl config set-context NAME --cluster=CLUSTER --user=USER)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := &doc{origin: "env:KC", cfg: tt.cfg}
			got, err := d.pick(tt.context)
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("pick(%q) error (-want +got):\n%s", tt.context, diff)
			}
			if got != tt.want {
				t.Errorf("pick(%q) = %q, want %q", tt.context, got, tt.want)
			}
		})
	}
}
