package kubeconfig

import (
	"encoding/base64"
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// encoded is v and the base64 forms a server or proxy may echo it in, without padding: a
// padded form is one of them and its '=' (TestSecretsRedact).
func encoded(v string) []string {
	out := []string{v}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		out = append(out, enc.EncodeToString([]byte(v)))
	}
	return out
}

func TestSecretsValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		added []string
		want  []string // besides the base64 forms of each added value
	}{
		{name: "none"},
		{name: "sorted, unique, trimmed", added: []string{"zz-token-1", " aa-token-2\n", "zz-token-1"}, want: []string{"aa-token-2", "zz-token-1"}},
		{name: "no value under 8 bytes, nor its base64", added: []string{"admin", "abc", "", "1234567"}},
		{name: "8 bytes", added: []string{"pw-12345"}, want: []string{"pw-12345"}},
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
			want := map[string]bool{}
			for _, v := range tt.added {
				s.add(v)
				if trimmed := strings.TrimSpace(v); trimmed != "" {
					for _, e := range append(encoded(trimmed)[1:], encoded(v)[1:]...) {
						want[e] = len(e) >= MinMaskLen
					}
				}
			}
			for _, v := range tt.want {
				want[v] = true
			}
			maps.DeleteFunc(want, func(_ string, masked bool) bool { return !masked })
			got := map[string]bool{}
			for _, v := range s.Values() {
				got[v] = true
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Values() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSecretsForms: what a kubeconfig's users in use hold that is a credential is masked in
// every form it can be echoed in. A value only taken for a credential by its name (an exec
// plugin's flag) that is too short to mask is no credential: neither masked nor redacted. What
// names things (a cluster, a region, a client ID, an issuer, a login mode) is neither.
func TestSecretsForms(t *testing.T) {
	t.Parallel()
	cfg := clientcmdapi.NewConfig()
	cfg.AuthInfos["basic"] = &clientcmdapi.AuthInfo{Username: "deploy", Password: "pw-4-deploy"}
	cfg.AuthInfos["exec"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		Command: "kubelogin", Args: []string{"get-token", "--login", "spn", "--client-secret", "cs-Value", "--tenant-id=tnt", "--token=tk-v",
			"positional", "--environment", "AzurePublicCloud", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630", "Zx9Qp3Lm7Vb2Kk4Rr8Tt6Yy1"},
		Env: []clientcmdapi.ExecEnvVar{{Name: "AZURE_CLIENT_SECRET", Value: "env-v"}, {Name: "AZURE_TENANT_ID", Value: "tenant-a"}, {Name: "ANY_NAME", Value: "a1B2c3D4e5F6g7H8i9J0kLmN"}},
	}}
	cfg.AuthInfos["eks"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		Command: "aws", Args: []string{"--region", "eu-west-1", "eks", "get-token", "--cluster-name", "platform-prod-us-east-1", "--output", "json",
			"--profile=platform-prod-admin-2024", "--role-arn", "arn:aws:iam::111122223333:role/platform-prod-us-east-1"},
		Env:        []clientcmdapi.ExecEnvVar{{Name: "AWS_PROFILE", Value: "platform-prod-us-east-1-ro"}, {Name: "AWS_SECRET_ACCESS_KEY", Value: "aws-secret-wJalrXUtnFEMI"}},
		APIVersion: "client.authentication.k8s.io/v1beta1",
	}}
	cfg.AuthInfos["provider"] = &clientcmdapi.AuthInfo{AuthProvider: &clientcmdapi.AuthProviderConfig{Name: "oidc", Config: map[string]string{
		"client-id": "kubernetes", "idp-issuer-url": "https://issuer.example.com/realms/platform-prod-us-east-1", "config-mode": "1",
		"extra-scopes": "groups,offline_access", "id-token": "idt-eyJhbGciOiJSUzI1NiJ9", "refresh-token": "rt-0123456789abcdef",
		"client-secret": "cs-oidc-Zk3Pq9", "access-token": "ya29.a0AfB_byC0123",
	}}}
	cfg.AuthInfos["teleport"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		Command: "tsh", Args: []string{"kube", "credentials", "--kube-cluster=platform-prod-us-east-2", "--teleport-cluster", "teleport.example.com",
			"--proxy=teleport.example.com:443", "--unknown-switch", "bastion-prod-east2-0042a", "--server", "10.0.12.34:3080"},
	}}
	cfg.AuthInfos["pinniped"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		Command: "pinniped", Args: []string{"login", "oidc", "--concierge-authenticator-name=platform-prod-eu-north-1-jwt",
			"--concierge-ca-bundle-data=LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM2akNDQWRL", "--request-audience=platform-prod-eu-north-1",
			"--client-id=pinniped-cli", "--client-secret-file-token=Pz8xNDc2YWJjZGVmZ2hpams", "platform-prod-context-2024", "prod-fleet-member-0042"},
	}}
	cfg.Contexts["platform-prod-context-2024"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "pinniped"}
	s := &Secrets{}
	l := &loader{secrets: s}
	d := &doc{cfg: cfg, public: publicNames(cfg, map[string]bool{"prod-fleet-member-0042": true})}
	for name := range cfg.AuthInfos {
		if msg := l.recordContext(d, &clientcmdapi.Context{AuthInfo: name}); msg != "" {
			t.Fatalf("user %s: %s", name, msg)
		}
	}
	masked := map[string]bool{}
	for _, v := range s.Values() {
		masked[v] = true
	}
	for _, v := range [][]string{encoded("pw-4-deploy"), encoded("deploy:pw-4-deploy"), encoded("cs-Value"), encoded("Zx9Qp3Lm7Vb2Kk4Rr8Tt6Yy1"),
		encoded("a1B2c3D4e5F6g7H8i9J0kLmN"), encoded("aws-secret-wJalrXUtnFEMI"), encoded("idt-eyJhbGciOiJSUzI1NiJ9"),
		encoded("rt-0123456789abcdef"), encoded("cs-oidc-Zk3Pq9"), encoded("ya29.a0AfB_byC0123"), encoded("Pz8xNDc2YWJjZGVmZ2hpams")} {
		for _, form := range v {
			if !masked[form] {
				t.Errorf("%q is not masked", form)
			}
		}
	}
	for _, short := range []string{"tk-v", "env-v"} {
		if masked[short] {
			t.Errorf("%q is masked: it is shorter than %d bytes", short, MinMaskLen)
		}
		if got := s.Redact("x " + short + " y"); got != "x "+short+" y" {
			t.Errorf("Redact(%q) = %q: a value too short to be a credential is kept", short, got)
		}
	}
	for _, word := range []string{"get-token", "spn", "--login", "--client-secret", "deploy", "eks", "json", "aws", "v1beta1",
		"eu-west-1", "platform-prod-us-east-1", "platform-prod-admin-2024", "platform-prod-us-east-1-ro", "tnt", "tenant-a", "positional",
		"AzurePublicCloud", "6dae42f8-4368-4678-94ff-3960e28e3630", "kubernetes", "https://issuer.example.com/realms/platform-prod-us-east-1",
		"groups,offline_access",
		// An unknown plugin's flags (Teleport's, Pinniped's) name clusters and addresses, and
		// the kubeconfig's and the input's names are printed: none is a secret, whatever its
		// shape. After a flag that is no secret's, a value is taken for what the flag says.
		"platform-prod-us-east-2", "teleport.example.com", "teleport.example.com:443", "10.0.12.34:3080", "bastion-prod-east2-0042a",
		"platform-prod-eu-north-1-jwt", "platform-prod-eu-north-1", "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM2akNDQWRL",
		"platform-prod-context-2024", "prod-fleet-member-0042"} {
		if masked[word] {
			t.Errorf("%q is masked: it is the plugin's own word, a region, a name or an ID, and masking it would blank it from every log line", word)
		}
		if got := s.Redact(word); got != word {
			t.Errorf("Redact(%q) = %q, want it kept", word, got)
		}
	}
	if got := s.Redact("Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("deploy:pw-4-deploy"))); got != "Authorization: Basic ***" {
		t.Errorf("Redact(an echoed Basic header) = %q", got)
	}
}

// TestSecretsOnAdd: a secret added later is passed, in each of its forms, to the OnAdd
// function before Add returns.
func TestSecretsOnAdd(t *testing.T) {
	t.Parallel()
	s := &Secrets{}
	s.add("loaded-early")
	var got []string
	s.OnAdd(func(v string) { got = append(got, v) })
	s.Add("minted-later")
	s.Add("minted-later")
	// Each form once: the four base64 encodings of "minted-later" are the same text.
	if diff := cmp.Diff([]string{"minted-later", "bWludGVkLWxhdGVy"}, got); diff != "" {
		t.Errorf("OnAdd got (-want +got):\n%s", diff)
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
		{name: "short values as words", added: []string{"pw1"}, text: "password pw1; pw1x kept; x-pw1-y", want: "password ***; pw1x kept; x-***-y"},
		{name: "short values inside words kept", added: []string{"adm"}, text: "admin", want: "admin"},
		{
			// "admin" is 5 bytes, the other 35: one '=' and one; the second's two alphabets
			// differ ('/' and '+' against '_' and '-').
			name: "padded base64: the padding alone is left", added: []string{"admin", "long-secret-?>?>?>-0123456789abcdef"},
			text: "Basic " + base64.StdEncoding.EncodeToString([]byte("admin")) + " url " + base64.URLEncoding.EncodeToString([]byte("long-secret-?>?>?>-0123456789abcdef")) +
				" std " + base64.StdEncoding.EncodeToString([]byte("long-secret-?>?>?>-0123456789abcdef")),
			want: "Basic ***= url ***= std ***=",
		},
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

// TestSecretsRedactAddedLater: secrets added after the matcher was built (tokens minted during
// the run) are redacted as if it had been built with them, also when one holds an older one or
// is held by it (longest first), and after more were added than are looked for one by one.
func TestSecretsRedactAddedLater(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		early, later []string
		text, want   string
	}{
		{name: "a new token", early: []string{"old-token-1"}, later: []string{"new-token-2"},
			text: "a new-token-2 b old-token-1", want: "a *** b ***"},
		{name: "the new one holds an old one", early: []string{"inner-secret"}, later: []string{"outer-inner-secret-x"},
			text: "[outer-inner-secret-x]", want: "[***]"},
		{name: "the new one is held by an old one", early: []string{"outer-inner-secret-x"}, later: []string{"inner-secret"},
			text: "[outer-inner-secret-x] [inner-secret]", want: "[***] [***]"},
		{name: "a new short one", early: []string{"long-secret-1"}, later: []string{"pw9"},
			text: "pw9 pw9x long-secret-1", want: "*** pw9x ***"},
		{name: "text without the new ones", early: []string{"old-token-1"}, later: []string{"new-token-2"},
			text: "old-token-1 only", want: "*** only"},
		{name: "more than are looked for one by one", early: []string{"old-token-1"}, later: manyTokens(maxPendingSecrets + 3),
			text: "t-17-abcdef t-0-abcdef", want: "*** ***"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &Secrets{}
			for _, v := range tt.early {
				s.Add(v)
			}
			s.Redact("build the matcher now")
			for _, v := range tt.later {
				s.Add(v)
			}
			if diff := cmp.Diff(tt.want, s.Redact(tt.text)); diff != "" {
				t.Errorf("Redact(%q) (-want +got):\n%s", tt.text, diff)
			}
			// A redactor taken now sees them all, and agrees.
			if diff := cmp.Diff(tt.want, s.Redactor().Redact(tt.text)); diff != "" {
				t.Errorf("Redactor().Redact(%q) (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func manyTokens(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "t-" + strconv.Itoa(i) + "-abcdef"
	}
	return out
}

// TestRedactorShortSecrets: the one-pass word matcher for short secrets agrees with the rule
// "a short secret is replaced where it stands as a word", with several short secrets of
// different lengths sharing prefixes.
func TestRedactorShortSecrets(t *testing.T) {
	t.Parallel()
	s := &Secrets{}
	for _, v := range []string{"ab", "abc", "x:y", "q"} {
		s.record(v)
	}
	tests := []struct{ text, want string }{
		{"ab abc abcd xab", "*** *** abcd xab"},
		{"abc-ab.ab", "***-***.***"},
		{"(x:y) x:yz", "(***) x:yz"},
		{"q qq q", "*** qq ***"},
		{"ab", "***"},
		{"", ""},
		{"é ab é", "é *** é"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, s.Redact(tt.text)); diff != "" {
			t.Errorf("Redact(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

// TestPaddedFormsRedactedAsBefore: with only the unpadded base64 forms held, a padded form
// is redacted wherever it was when it was held too (all but its '='), whatever the secret's
// length and the text around it. This holds while substringMinLen is 5 or 6: a 4-byte
// secret's padded form, 8 bytes, is redacted inside words, and so must its 6 unpadded ones be.
func TestPaddedFormsRedactedAsBefore(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 12; n++ {
		secret := "s?>~" + strings.Repeat("k", n)
		secret = secret[len(secret)-n:]
		s := &Secrets{}
		s.add(secret)
		now := newRedactor(s.values)
		held := map[string]struct{}{}
		for v := range s.values {
			held[v] = struct{}{}
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			held[enc.EncodeToString([]byte(secret))] = struct{}{}
		}
		before := newRedactor(held)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			padded := enc.EncodeToString([]byte(secret))
			bare := strings.TrimRight(padded, "=")
			for _, around := range [][2]string{{"", ""}, {"x", ""}, {"", "x"}, {"x", "x"}, {" ", " "}, {"_", "-"}, {"é", "é"}} {
				text := around[0] + padded + around[1]
				got, was := now.Redact(text), before.Redact(text)
				if strings.Contains(got, bare) && !strings.Contains(was, bare) {
					t.Errorf("%d-byte secret %q: Redact(%q) = %q, and %q with the padded forms held", n, secret, text, got, was)
				}
			}
		}
	}
}
