package kubeconfig

import (
	"cmp"
	"encoding/base64"
	"net/url"
	"regexp"
	"slices"
	"strings"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// minSecretLen is the length under which a value is neither masked nor redacted: a
// five-letter password would otherwise turn every "admin" in the logs into "***".
const minSecretLen = 6

// Secrets holds every secret value seen while loading the kubeconfigs: tokens, passwords,
// client keys (as written and decoded), the base64 kubeconfigs themselves, and the contents
// of token and key files. The zero value is empty; a nil *Secrets has no values.
type Secrets struct {
	values map[string]struct{}
}

// add records v, and each of its lines when it has several.
func (s *Secrets) add(v string) {
	v = strings.TrimSpace(v)
	if len(v) < minSecretLen {
		return
	}
	if s.values == nil {
		s.values = map[string]struct{}{}
	}
	s.values[v] = struct{}{}
	if !strings.Contains(v, "\n") {
		return
	}
	for line := range strings.Lines(v) {
		line = strings.TrimSpace(line)
		if len(line) < minSecretLen || pemArmor(line) {
			continue
		}
		s.values[line] = struct{}{}
	}
}

// pemArmor reports a PEM header or footer line: it is no secret, and masking it would hide
// every "-----BEGIN CERTIFICATE-----" in the logs.
func pemArmor(line string) bool {
	return strings.HasPrefix(line, "-----BEGIN ") || strings.HasPrefix(line, "-----END ")
}

// Values returns the secrets to register with ::add-mask:: before anything is printed,
// sorted and unique. The runner masks line by line, so a multi-line secret (a PEM key, a
// wrapped base64 kubeconfig) is given as its lines, not as one value.
func (s *Secrets) Values() []string {
	if s == nil {
		return nil
	}
	var out []string
	for v := range s.values {
		if !strings.Contains(v, "\n") {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// Redact replaces every occurrence of a secret in text with "***", longest secret first, so
// a token inside a longer value is hidden along with it.
func (s *Secrets) Redact(text string) string {
	if s == nil || len(s.values) == 0 {
		return text
	}
	all := make([]string, 0, len(s.values))
	for v := range s.values {
		all = append(all, v)
	}
	slices.SortFunc(all, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	pairs := make([]string, 0, 2*len(all))
	for _, v := range all {
		pairs = append(pairs, v, "***")
	}
	// strings.Replacer tries the pairs in argument order at each position: longest first.
	return strings.NewReplacer(pairs...).Replace(text)
}

// secretKey matches the names of auth-provider settings and exec environment variables that
// hold credentials (id-token, refresh-token, client-secret, AWS_SECRET_ACCESS_KEY, ...).
var secretKey = regexp.MustCompile(`(?i)token|secret|password|passwd|credential|key`)

// addKubeconfig records the secrets of every user and cluster in cfg, selected or not.
func (s *Secrets) addKubeconfig(cfg *clientcmdapi.Config) {
	for _, u := range cfg.AuthInfos {
		if u == nil {
			continue
		}
		s.add(u.Token)
		s.add(u.Password)
		if len(u.ClientKeyData) > 0 {
			s.add(string(u.ClientKeyData))
			s.add(base64.StdEncoding.EncodeToString(u.ClientKeyData))
		}
		if u.AuthProvider != nil {
			for k, v := range u.AuthProvider.Config {
				if secretKey.MatchString(k) {
					s.add(v)
				}
			}
		}
		if u.Exec != nil {
			for _, e := range u.Exec.Env {
				if secretKey.MatchString(e.Name) {
					s.add(e.Value)
				}
			}
		}
	}
	for _, c := range cfg.Clusters {
		if c == nil {
			continue
		}
		s.addURLPassword(c.Server)
		s.addURLPassword(c.ProxyURL)
	}
}

// addURLPassword records the password of a URL's user info (https://user:pass@host).
func (s *Secrets) addURLPassword(raw string) {
	if raw == "" {
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		// An unparsable URL may still end up quoted in a validation message.
		if m := urlPassword.FindStringSubmatch(raw); m != nil {
			s.add(m[1])
		}
		return
	}
	if p, ok := u.User.Password(); ok {
		s.add(p)
	}
}

var urlPassword = regexp.MustCompile(`://[^/@:]*:([^/@]+)@`)
