package kubeconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretsValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		added []string
		want  []string
	}{
		{name: "none"},
		{name: "sorted, unique, trimmed", added: []string{"zz-token-1", " aa-token-2\n", "zz-token-1"}, want: []string{"aa-token-2", "zz-token-1"}},
		{name: "short values skipped", added: []string{"admin", "abc", "", "sixsix"}, want: []string{"sixsix"}},
		{
			name:  "multi-line: each line, not the armor, not the whole",
			added: []string{fakeKey},
			want:  []string{"AwEHoUQD" + marker + "keyLineTwo0123456789QrStUv", "MHcCAQEEI" + marker + "keyLineOneAbCdEfGhIjKlMnOp"},
		},
		{name: "wrapped base64", added: []string{"QUJDREVG\r\nR0hJSktM\r\nTU4=\r\n"}, want: []string{"QUJDREVG", "R0hJSktM"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &Secrets{}
			for _, v := range tt.added {
				s.add(v)
			}
			if diff := cmp.Diff(tt.want, s.Values()); diff != "" {
				t.Errorf("Values() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretsRedact(t *testing.T) {
	t.Parallel()
	token := tokenFor("a")
	tests := []struct {
		name  string
		added []string
		text  string
		want  string
	}{
		{name: "no secrets", text: "nothing to hide", want: "nothing to hide"},
		{name: "token inside a longer message", added: []string{token}, text: "401 for Authorization: Bearer " + token + "; retrying", want: "401 for Authorization: Bearer ***; retrying"},
		{name: "every occurrence", added: []string{token}, text: token + "," + token, want: "***,***"},
		{name: "longest first", added: []string{"secret-part", "secret-part-and-more"}, text: "x secret-part-and-more y secret-part", want: "x *** y ***"},
		{name: "multi-line whole and lines", added: []string{fakeKey}, text: "key:\n" + fakeKey + "line: MHcCAQEEI" + marker + "keyLineOneAbCdEfGhIjKlMnOp!", want: "key:\n***\nline: ***!"},
		{name: "short values kept", added: []string{"admin"}, text: "user admin", want: "user admin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &Secrets{}
			for _, v := range tt.added {
				s.add(v)
			}
			got := s.Redact(tt.text)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Redact(%q) (-want +got):\n%s", tt.text, diff)
			}
			noSecret(t, "Redact()", got)
		})
	}
}

func TestSecretsNil(t *testing.T) {
	t.Parallel()
	var s *Secrets
	if got := s.Values(); got != nil {
		t.Errorf("nil Values() = %v, want nil", got)
	}
	if got := s.Redact("text"); got != "text" {
		t.Errorf("nil Redact() = %q, want %q", got, "text")
	}
}
