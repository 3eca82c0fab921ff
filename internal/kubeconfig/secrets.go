package kubeconfig

import (
	"cmp"
	"encoding/base64"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// substringMinLen is the length from which a secret is redacted wherever it appears, even
// inside a longer word. A shorter one (a four-letter password) is redacted only where it
// stands as a word of its own, so that the rest of a message stays readable; the runner masks
// it everywhere all the same, since every secret is registered with ::add-mask::.
const substringMinLen = 6

// Secrets holds every secret value seen while loading the kubeconfigs, and those obtained
// later (tokens a credential provider mints): tokens, passwords and their basic-auth forms,
// client keys, the values of exec plugins and auth providers, the base64 kubeconfigs
// themselves, the contents of token and key files, each as written and in the encodings a
// server or a proxy may echo it in. The zero value is empty and ready; a nil *Secrets has no
// values. It is safe for concurrent use.
type Secrets struct {
	mu     sync.Mutex
	values map[string]struct{}
	// onAdd, when set, is called with each value Values would newly return, once.
	onAdd func(string)
}

// OnAdd registers fn to be called, with each secret added from now on, as soon as it is added:
// the action registers it with ::add-mask:: before the value can reach any output. Secrets
// already held are not passed: mask them from Values first.
func (s *Secrets) OnAdd(fn func(string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onAdd = fn
}

// Add records a secret obtained after loading (a token minted for a cluster), in every form,
// and passes each new form to the OnAdd function before it returns.
func (s *Secrets) Add(v string) {
	s.add(v)
}

// add records v as it is and in the forms it may be echoed in: each line of a multi-line
// value (not a PEM armor line), and base64 in the standard and URL alphabets, padded or not.
func (s *Secrets) add(raw string) {
	v := strings.TrimSpace(raw)
	if v == "" {
		return
	}
	forms := []string{v}
	if strings.Contains(v, "\n") {
		for line := range strings.Lines(v) {
			if line = strings.TrimSpace(line); line != "" && !pemArmor(line) {
				forms = append(forms, line)
			}
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(v)))
		if raw != v {
			// As given, with its line break: a PEM key is encoded so in client-key-data.
			forms = append(forms, enc.EncodeToString([]byte(raw)))
		}
	}
	s.record(forms...)
}

// addBasicAuth records a username and password and the basic-auth credentials they make,
// user:password and its base64, which an echoed Authorization header carries.
func (s *Secrets) addBasicAuth(user, password string) {
	if password == "" {
		return
	}
	s.add(password)
	s.add(user + ":" + password)
}

func (s *Secrets) record(forms ...string) {
	s.mu.Lock()
	var added []string
	for _, f := range forms {
		if s.values == nil {
			s.values = map[string]struct{}{}
		}
		if _, ok := s.values[f]; !ok {
			s.values[f] = struct{}{}
			if !strings.Contains(f, "\n") {
				added = append(added, f)
			}
		}
	}
	onAdd := s.onAdd
	s.mu.Unlock()
	if onAdd != nil {
		for _, f := range added {
			onAdd(f)
		}
	}
}

// pemArmor reports a PEM header or footer line: it is no secret, and masking it would hide
// every "-----BEGIN CERTIFICATE-----" in the logs.
func pemArmor(line string) bool {
	return strings.HasPrefix(line, "-----BEGIN ") || strings.HasPrefix(line, "-----END ")
}

// Values returns the secrets to register with ::add-mask:: before anything is printed,
// sorted and unique, whatever their length. The runner masks line by line, so a multi-line
// secret (a PEM key, a wrapped base64 kubeconfig) is given as its lines, not as one value.
func (s *Secrets) Values() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for v := range s.values {
		if !strings.Contains(v, "\n") {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// Redact replaces every occurrence of a secret in text with "***", longest secret first, so a
// token inside a longer value is hidden along with it. Secrets shorter than substringMinLen are
// replaced where they stand as a word of their own.
func (s *Secrets) Redact(text string) string {
	if s == nil || text == "" {
		return text
	}
	s.mu.Lock()
	long := make([]string, 0, len(s.values))
	var short []string
	for v := range s.values {
		if len(v) >= substringMinLen {
			long = append(long, v)
		} else {
			short = append(short, v)
		}
	}
	s.mu.Unlock()
	if len(long) > 0 {
		slices.SortFunc(long, func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b)) })
		pairs := make([]string, 0, 2*len(long))
		for _, v := range long {
			pairs = append(pairs, v, "***")
		}
		// strings.Replacer tries the pairs in argument order at each position: longest first.
		text = strings.NewReplacer(pairs...).Replace(text)
	}
	for _, v := range short {
		text = redactWord(text, v)
	}
	return text
}

// redactWord replaces v in text where it is not part of a longer run of letters and digits.
func redactWord(text, v string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, v)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(v)
		if (i == 0 || !wordByte(text[i-1])) && (end == len(text) || !wordByte(text[end])) {
			b.WriteString(text[:i])
			b.WriteString("***")
		} else {
			b.WriteString(text[:end])
		}
		text = text[end:]
	}
}

func wordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

// addKubeconfig records the secrets of every user and cluster in cfg, selected or not.
func (s *Secrets) addKubeconfig(cfg *clientcmdapi.Config) {
	for _, u := range cfg.AuthInfos {
		if u == nil {
			continue
		}
		s.add(u.Token)
		s.addBasicAuth(u.Username, u.Password)
		if len(u.ClientKeyData) > 0 {
			s.add(string(u.ClientKeyData))
		}
		if u.AuthProvider != nil {
			// Every value, not only those whose key says it is a token: a provider's keys are
			// its own to name.
			for _, v := range u.AuthProvider.Config {
				s.add(v)
			}
		}
		if u.Exec != nil {
			for _, e := range u.Exec.Env {
				s.add(e.Value)
			}
			for _, a := range execValues(u.Exec.Args) {
				s.add(a)
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

// execWords are the exec plugins' own words, which say nothing of an account and which
// masking would erase from every log line: subcommands and the values of output flags.
var execWords = map[string]bool{
	"eks": true, "get-token": true, "token": true, "json": true, "yaml": true, "text": true,
	"kubernetes": true, "cluster": true, "kubeconfig": true, "exec-credential": true,
	"config": true, "config-helper": true, "auth": true, "true": true, "false": true,
	// Words of the plugins' commands and API versions that a message would otherwise lose
	// wherever they appear ("kube-system", "credentials"...).
	"credentials": true, "kube": true, "v1": true, "v1beta1": true, "v1alpha1": true,
	"client.authentication.k8s.io/v1": true, "client.authentication.k8s.io/v1beta1": true,
	"gcloud": true, "gke": true, "aws": true, "aws-iam-authenticator": true, "AzurePublicCloud": true,
	// kubelogin's login modes, and the Azure Kubernetes Service AAD server application ID,
	// which every AKS kubeconfig names and Microsoft documents.
	"azurecli": true, "workloadidentity": true, "spn": true, "devicecode": true, "interactive": true,
	"msi": true, "ropc": true, "azd": true, "6dae42f8-4368-4678-94ff-3960e28e3630": true,
}

// execValues returns the arguments of an exec plugin that may be secret: every value of a
// flag (--client-secret VALUE, --token=VALUE) and every positional argument, except the
// plugins' own words (execWords) and flags.
func execValues(args []string) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			if _, v, ok := strings.Cut(a, "="); ok {
				out = append(out, v)
			}
			continue
		}
		if !execWords[a] {
			out = append(out, a)
		}
	}
	return out
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
		s.addBasicAuth(u.User.Username(), p)
	}
}

var urlPassword = regexp.MustCompile(`://[^/@:]*:([^/@]+)@`)
