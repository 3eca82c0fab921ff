package kubeconfig

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// substringMinLen is the length from which a secret is redacted wherever it appears, even
// inside a longer word. A shorter one (a four-letter password) is redacted only where it
// stands as a word of its own, so that the rest of a message stays readable; its longer forms
// (user:password, base64) are hidden everywhere, here and by the runner's masks. At 7 or 8,
// the padded base64 forms, which are not held (add), would be redacted in fewer places
// (TestPaddedFormsRedactedAsBefore).
const substringMinLen = 6

// MinMaskLen is the length from which a secret is registered with the runner (Values,
// OnAdd). The runner masks a value wherever it appears, in every later line of the job, and
// drops a job output that holds one: a short value ("admin", "1", a four-letter password) would
// blank common words and cluster names. A shorter secret is redacted here all the same, in
// everything this program prints (Redact); its longer forms (user:password, base64) are
// registered.
const MinMaskLen = 8

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
	// redactor matches every value held when it was built; added holds the values recorded
	// since, until there are too many of them and the next Redact builds a new one.
	redactor *Redactor
	added    []string
	// words are the words the run prints (Input.Words, the clusters' and contexts' names) of
	// MinMaskLen bytes or more, the only ones a value the runner masks can be part of, added
	// before any secret is registered with the runner: no form that is one or a part of one is
	// (maskable), nor one that holds one. grams holds every MinMaskLen bytes of them at every
	// offset, so that a value none of them holds, as good as every one, is told in one lookup;
	// starts holds the words by their first MinMaskLen bytes, so that a value holding one is
	// told in one lookup per offset, and pairs their first two bytes (a bit each), so that
	// most offsets of a value holding none (a token's) are passed over without one.
	words   []string
	wordMax int
	grams   map[uint64]struct{}
	starts  map[uint64][]string
	pairs   *[1 << 16 / 64]uint64
}

// addWords adds to the words the run prints, before any secret is registered with the runner.
func (s *Secrets) addWords(words ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range words {
		if len(w) < MinMaskLen {
			continue
		}
		if s.grams == nil {
			s.grams, s.starts, s.pairs = map[uint64]struct{}{}, map[uint64][]string{}, new([1 << 16 / 64]uint64)
		}
		s.words = append(s.words, w)
		s.starts[gram(w)] = append(s.starts[gram(w)], w)
		p := pair(w)
		s.pairs[p/64] |= 1 << (p % 64)
		s.wordMax = max(s.wordMax, len(w))
		for i := 0; i+MinMaskLen <= len(w); i++ {
			s.grams[gram(w[i:])] = struct{}{}
		}
	}
}

// gram is the first MinMaskLen (8) bytes of v, which has as many or more, as one number.
func gram(v string) uint64 {
	var g uint64
	for i := range MinMaskLen {
		g = g<<8 | uint64(v[i])
	}
	return g
}

// pair is the first two bytes of v, which has as many or more, as one number.
func pair(v string) uint16 {
	return uint16(v[0])<<8 | uint16(v[1])
}

// inWord reports whether v, of MinMaskLen bytes or more, is one of the words the run prints,
// a part of one, or holds one: the runner masks a value inside words too, and drops every
// output that holds it, so a value holding a word (["prod-eu-west-1"], prod-eu-west-1","x)
// would blank that word wherever the run prints it so (the clusters' lists).
func (s *Secrets) inWord(v string) bool {
	if len(v) < MinMaskLen || len(s.words) == 0 {
		return false
	}
	if _, ok := s.grams[gram(v)]; ok && len(v) <= s.wordMax {
		for _, w := range s.words {
			if strings.Contains(w, v) {
				return true
			}
		}
	}
	for i := 0; i+MinMaskLen <= len(v); i++ {
		if p := pair(v[i:]); s.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, w := range s.starts[gram(v[i:])] {
			if strings.HasPrefix(v[i:], w) {
				return true
			}
		}
	}
	return false
}

// unmaskable says why a secret cannot be masked safely, or "": it is shorter than MinMaskLen
// (the runner would blank it from every later line, inside words too), or it, or one of the
// forms it is masked in, is a word the run prints or a part of one (the runner would blank the
// word, and drop every output that holds it: the status, the results, the clusters' lists), or
// it holds a double quote (it could span the quotes of the JSON outputs).
// It never quotes the secret.
func (s *Secrets) unmaskable(raw string) string {
	v := strings.TrimSpace(raw)
	if v == "" {
		return ""
	}
	if len(v) < MinMaskLen {
		return fmt.Sprintf("it is shorter than %d characters, and the runner would blank so short a value from every line of the job", MinMaskLen)
	}
	for _, f := range forms(raw) {
		if len(f) >= MinMaskLen && !strings.Contains(f, "\n") && s.inWord(f) {
			return "it is, is part of, or holds a word the run prints (a status, a verdict, a code, a namespace, a kind, a cluster's or a resource's name), " +
				"and the runner would blank that word and drop every output that holds it"
		}
	}
	if strings.Contains(v, `"`) {
		// No token, key or certificate holds one; a value that does can span the quotes of
		// the JSON outputs ("verdict":", ["eu","us"]), which the runner would then drop.
		return "it holds a double quote, and the runner would blank the JSON the run prints around it and drop the outputs that hold it"
	}
	return ""
}

// OnAdd registers fn to be called, with each secret added from now on, as soon as it is added:
// the action registers it with ::add-mask:: before the value can reach any output. Secrets
// already held are not passed: mask them from Values first. Like Values, it is given no value
// shorter than MinMaskLen, nor a word the run prints or a part of one.
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
// value (not a PEM armor line), and base64 in the standard and URL alphabets. The padded
// base64 forms are the unpadded ones and one or two '='; those alone are left of them, which
// say nothing but the value's length modulo 3, and a fleet's client keys are held half as
// many times (a PEM key's forms were 18 KB of every cluster's memory).
func (s *Secrets) add(raw string) {
	s.record(forms(raw)...)
}

// forms are raw as it is (trimmed) and the forms it may be echoed in (add); none for a blank
// value.
func forms(raw string) []string {
	v := strings.TrimSpace(raw)
	if v == "" {
		return nil
	}
	forms := []string{v}
	if strings.Contains(v, "\n") {
		for line := range strings.Lines(v) {
			if line = strings.TrimSpace(line); line != "" && !pemArmor(line) {
				forms = append(forms, line)
			}
		}
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(v)))
		if raw != v {
			// As given, with its line break: a PEM key is encoded so in client-key-data.
			forms = append(forms, enc.EncodeToString([]byte(raw)))
		}
	}
	return forms
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
			s.added = append(s.added, f)
			if s.maskable(f) {
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

// maskable reports a form to register with the runner: one line, of MinMaskLen bytes or more,
// and no word the run prints nor a part of one (inWord). s.mu is held.
func (s *Secrets) maskable(v string) bool {
	return len(v) >= MinMaskLen && !strings.Contains(v, "\n") && !s.inWord(v)
}

// Values returns the secrets to register with ::add-mask:: before anything is printed,
// sorted and unique, none shorter than MinMaskLen (Redact hides those) and none a word the run
// prints or a part of one (the loader refuses a credential that is one: unmaskable). The runner masks line
// by line, so a multi-line secret (a PEM key, a wrapped base64 kubeconfig) is given as its
// lines, not as one value.
func (s *Secrets) Values() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for v := range s.values {
		if s.maskable(v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// Longest is the length in bytes of the longest secret recorded, 0 when none: a text cut into
// parts (a line too long to hold) keeps that many bytes less one from each part's end with
// the next, so that no secret is cut in two, unredacted.
func (s *Secrets) Longest() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for v := range s.values {
		n = max(n, len(v))
	}
	return n
}

// Redact replaces every occurrence of a secret in text with "***", longest secret first, so a
// token inside a longer value is hidden along with it. Secrets shorter than substringMinLen are
// replaced where they stand as a word of their own.
//
// It costs one pass over text whatever the number of secrets: the matcher is built once for
// the set it holds (Redactor), and a secret added since (a token minted during the run) is
// looked for on its own until there are enough of them to build a new one. A text that holds
// one of those is redacted by a matcher built for it there and then, so the result is the same
// as if the matcher had been built with every secret.
func (s *Secrets) Redact(text string) string {
	if s == nil || text == "" {
		return text
	}
	s.mu.Lock()
	if s.redactor == nil || len(s.added) > maxPendingSecrets || holdsAny(text, s.added) {
		s.rebuildLocked()
	}
	r := s.redactor
	s.mu.Unlock()
	return r.Redact(text)
}

// holdsAny reports whether text contains one of values.
func holdsAny(text string, values []string) bool {
	for _, v := range values {
		if strings.Contains(text, v) {
			return true
		}
	}
	return false
}

// maxPendingSecrets is how many secrets added since the matcher was built Redact looks for one
// by one before it builds a new matcher.
const maxPendingSecrets = 16

// Redactor returns a redactor for every secret held now; it does not see secrets added later.
// A caller that redacts many strings in a row (a whole run's result) takes one and uses it.
func (s *Secrets) Redactor() *Redactor {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.redactor == nil || len(s.added) > 0 {
		s.rebuildLocked()
	}
	return s.redactor
}

// rebuildLocked builds the matcher for every value held. s.mu is held.
func (s *Secrets) rebuildLocked() {
	s.redactor = newRedactor(s.values)
	s.added = nil
}

// Redactor replaces a fixed set of secrets in text, in one pass over it whatever their number:
// one strings.Replacer (a trie, tried at every position, longest secret first) for those of
// substringMinLen bytes or more, and a set looked up by length at word starts for the shorter
// ones. A nil *Redactor redacts nothing. It is safe for concurrent use.
type Redactor struct {
	long     *strings.Replacer
	minLen   int // the length of the shortest secret; shorter texts hold none
	short    map[string]struct{}
	shortMax int
}

func newRedactor(values map[string]struct{}) *Redactor {
	r := &Redactor{minLen: math.MaxInt}
	long := make([]string, 0, len(values))
	for v := range values {
		r.minLen = min(r.minLen, len(v))
		if len(v) >= substringMinLen {
			long = append(long, v)
			continue
		}
		if r.short == nil {
			r.short = map[string]struct{}{}
		}
		r.short[v] = struct{}{}
		r.shortMax = max(r.shortMax, len(v))
	}
	if len(long) > 0 {
		slices.SortFunc(long, func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b)) })
		pairs := make([]string, 0, 2*len(long))
		for _, v := range long {
			pairs = append(pairs, v, "***")
		}
		// strings.Replacer tries the pairs in argument order at each position: longest first.
		r.long = strings.NewReplacer(pairs...)
	}
	return r
}

// Redact replaces the redactor's secrets in text with "***".
func (r *Redactor) Redact(text string) string {
	if r == nil || len(text) < r.minLen {
		return text
	}
	if r.long != nil {
		text = r.long.Replace(text)
	}
	if r.short != nil {
		text = r.redactShort(text)
	}
	return text
}

// redactShort replaces the short secrets where they stand as words of their own: at every
// position that starts a word (not preceded by a letter or digit), the longest short secret
// there that is not followed by one.
func (r *Redactor) redactShort(text string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); i++ {
		if i > 0 && wordByte(text[i-1]) {
			continue
		}
		for n := min(r.shortMax, len(text)-i); n > 0; n-- {
			end := i + n
			if _, ok := r.short[text[i:end]]; !ok || end < len(text) && wordByte(text[end]) {
				continue
			}
			if b.Len() == 0 {
				b.Grow(len(text))
			}
			b.WriteString(text[last:i])
			b.WriteString("***")
			last = end
			i = end - 1
			break
		}
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

func wordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

// fieldSecret is a credential a kubeconfig holds for sure, and the field it is in, for
// messages. basic is set for a basic-auth password: user:password is a form of it too.
type fieldSecret struct {
	field, value, user string
	basic              bool
}

// userSecrets returns what a user holds: the credentials it holds for sure (its token, its
// basic-auth password, its client key) and the values taken for one by their name or shape (an
// auth provider's settings, an exec plugin's arguments and env; see providerSecret and
// execSecrets). public are the names the run prints (publicNames): never taken for a
// credential.
func userSecrets(u *clientcmdapi.AuthInfo, public publicSet) (sure []fieldSecret, guessed []string) {
	if u.Token != "" {
		sure = append(sure, fieldSecret{field: "token", value: u.Token})
	}
	if u.Password != "" {
		sure = append(sure, fieldSecret{field: "password", value: u.Password, user: u.Username, basic: true})
	}
	if len(u.ClientKeyData) > 0 {
		sure = append(sure, fieldSecret{field: "client-key-data", value: string(u.ClientKeyData)})
	}
	if u.AuthProvider != nil {
		for k, v := range u.AuthProvider.Config {
			if providerSecret(k) && !public.has(strings.TrimSpace(v)) {
				guessed = append(guessed, v)
			}
		}
	}
	if u.Exec != nil {
		guessed = append(guessed, execSecrets(u.Exec, public)...)
	}
	return sure, guessed
}

// clusterSecrets returns the passwords a cluster's URLs hold (https://user:pass@host), its
// server's and its proxy's.
func clusterSecrets(c *clientcmdapi.Cluster) []fieldSecret {
	var out []fieldSecret
	for _, u := range []struct{ field, raw string }{{"server", c.Server}, {"proxy-url", c.ProxyURL}} {
		if user, password, basic, ok := urlPassword(u.raw); ok {
			out = append(out, fieldSecret{field: u.field + " URL's password", value: password, user: user, basic: basic})
		}
	}
	return out
}

// recordSure records a credential in every form (a password with its user:password too).
func (s *Secrets) recordSure(f fieldSecret) {
	if f.basic {
		s.addBasicAuth(f.user, f.value)
		return
	}
	s.add(f.value)
}

// publicNames are the names a run prints in its outputs (failed-clusters, the report): the
// clusters input's, and cfg's cluster, context and user names (a context's name is a
// cluster's when the input names none). Masking one would have the runner drop every output
// that names it. The input's names are shared by every document, not copied into each: a
// fleet of n clusters would copy n names n times.
func publicNames(cfg *clientcmdapi.Config, names map[string]bool) publicSet {
	own := map[string]bool{}
	for n := range cfg.Clusters {
		own[n] = true
	}
	for n := range cfg.AuthInfos {
		own[n] = true
	}
	for n, c := range cfg.Contexts {
		own[n] = true
		if c != nil {
			own[c.Cluster], own[c.AuthInfo] = true, true
		}
	}
	return publicSet{input: names, own: own}
}

// publicSet are the names a run prints (publicNames).
type publicSet struct {
	input, own map[string]bool
}

// has reports whether name is one the run prints; never "".
func (p publicSet) has(name string) bool {
	return name != "" && (p.input[name] || p.own[name])
}

// providerSecret reports an auth-provider setting that holds a credential: a key named for a
// token, secret, password or key (oidc's id-token, refresh-token and client-secret, azure's and
// gcp's access-token...), and none of the settings that name things or say how to get a token
// (client-id, idp-issuer-url, config-mode, apiserver-id, tenant-id, gcp's cmd-path and its
// JSONPath token-key...). Masking those would blank a client ID such as "kubernetes" from the
// whole job's log and outputs.
func providerSecret(key string) bool {
	return !publicProviderKeys[strings.ToLower(key)] && secretName(key)
}

var publicProviderKeys = map[string]bool{
	"client-id": true, "idp-issuer-url": true, "idp-certificate-authority": true, "idp-certificate-authority-data": true,
	"extra-scopes": true, "config-mode": true, "apiserver-id": true, "tenant-id": true, "environment": true,
	"cmd-path": true, "cmd-args": true, "token-key": true, "expiry-key": true, "expiry": true, "expires-in": true, "expires-on": true,
	"scopes": true,
}

// execSecrets returns what an exec plugin's arguments and env hold that is a credential: a
// value whose name says so (an env variable or a flag named for a secret, token, password, key
// or credential), an env value or a positional argument whose shape does (secretShaped),
// except the value of a known public option or variable (publicFlags, publicEnv), a name the
// run prints (public: a cluster's, a context's, a user's) and an address (addressShaped, such as
// Teleport's --proxy=teleport.example.com:443). The value of a flag no name marks as secret is
// never taken for its shape: an unknown plugin's flags name things (tsh --kube-cluster,
// pinniped --concierge-authenticator-name, --ca-bundle-data). Regions, cluster, profile and
// account names, flags and the plugins' own words are not secrets: registering them with
// ::add-mask:: would blank them from every later line of the job, inside words too, and make
// the runner drop every job output that names the cluster.
func execSecrets(exec *clientcmdapi.ExecConfig, public publicSet) []string {
	var out []string
	take := func(v string) {
		if !public.has(strings.TrimSpace(v)) && !addressShaped(v) {
			out = append(out, v)
		}
	}
	for _, e := range exec.Env {
		if !publicEnv[e.Name] && (secretName(e.Name) || secretShaped(e.Value)) {
			take(e.Value)
		}
	}
	flag := "" // the flag whose value the next argument may be
	for _, a := range exec.Args {
		if strings.HasPrefix(a, "-") {
			name, value, hasValue := strings.Cut(a, "=")
			flag = name
			if hasValue {
				flag = ""
				if !publicFlags[name] && secretName(name) {
					take(value)
				}
			}
			continue
		}
		switch {
		case flag != "":
			// A flag's value, or a positional argument after a switch: only a flag named
			// for a secret says which.
			if !publicFlags[flag] && secretName(flag) {
				take(a)
			}
		case secretShaped(a):
			take(a)
		}
		flag = ""
	}
	return out
}

// addressShaped reports a value that is an address, host or host:port, as a plugin's --proxy or
// --server takes: a DNS name in lower case of two labels or more whose last is letters only
// (teleport.example.com), an IPv4 address, or a bracketed IPv6 one, each with a port or not.
// A token's dotted segments (a JWT's) hold upper case or end in digits.
func addressShaped(v string) bool {
	return hostPortShape.MatchString(v)
}

var hostPortShape = regexp.MustCompile(`^(?:(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}|(?:[0-9]{1,3}\.){3}[0-9]{1,3}|\[[0-9a-fA-F:.]+\])(?::[0-9]{1,5})?$`)

// publicFlags are the exec plugins' options whose values name things, never credentials: the
// cluster (aws --cluster-name platform-prod-us-east-1 is also its name in every output), the
// region, zone or project, the AWS profile, role and session names (an ARN names, it does not
// authenticate), Entra's tenant, client and server application IDs and cloud, the login mode
// and output format. Left out, so masked when they look like a key: aws-iam-authenticator's
// --external-id, which guards a role against confused deputies and is better not printed.
var publicFlags = map[string]bool{
	"--cluster-name": true, "--cluster-id": true, "-i": true, "--cluster": true, "--region": true, "--profile": true,
	"--role-arn": true, "-r": true, "--role": true, "--session-name": true, "--output": true,
	"--project": true, "--zone": true, "--location": true, "--context": true,
	"--server-id": true, "--client-id": true, "--tenant-id": true, "-t": true, "--environment": true, "-e": true,
	"--login": true, "-l": true, "--authority-host": true,
}

// publicEnv are the exec env variables that name an account, a role, a region or a login mode
// (see cloudauth's kubeconfigEnv): never masked.
var publicEnv = map[string]bool{
	"AWS_PROFILE": true, "AWS_DEFAULT_PROFILE": true, "AWS_REGION": true, "AWS_DEFAULT_REGION": true,
	"AWS_ROLE_ARN": true, "AWS_ROLE_SESSION_NAME": true, "AWS_STS_REGIONAL_ENDPOINTS": true, "DEFAULT_ROLE": true,
	"AAD_LOGIN_METHOD": true, "AZURE_CLIENT_ID": true, "AZURE_TENANT_ID": true, "AAD_SERVICE_PRINCIPAL_CLIENT_ID": true,
	"USE_GKE_GCLOUD_AUTH_PLUGIN": true, "CLOUDSDK_CORE_PROJECT": true,
}

// secretName reports a variable or flag name that says its value is a credential.
func secretName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"secret", "token", "password", "passwd", "credential", "private", "apikey", "api-key", "api_key"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return strings.HasSuffix(n, "key") || strings.Contains(n, "_key") || strings.Contains(n, "-key")
}

// secretShaped reports a value long and mixed enough to be a key or token whatever it is
// called: 20 characters or more, no white space, letters and digits both. An ARN, a URL, a
// UUID (a tenant or client ID) and a path are identifiers, not credentials.
func secretShaped(v string) bool {
	if len(v) < 20 || strings.ContainsAny(v, " \t\n") || strings.HasPrefix(v, "arn:") || strings.Contains(v, "://") ||
		strings.HasPrefix(v, "/") || uuidShape.MatchString(v) {
		return false
	}
	return strings.ContainsAny(v, "0123456789") && strings.IndexFunc(v, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0
}

var uuidShape = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// execWords are the exec plugins' own words, which say nothing of an account: subcommands and
// the values of output flags, the only arguments a message about a plugin quotes (execSummary).
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

// urlPassword returns the user and password of a URL's user info (https://user:pass@host);
// basic is unset for a URL that does not parse, whose password is found by its shape alone.
func urlPassword(raw string) (user, password string, basic, ok bool) {
	if raw == "" {
		return "", "", false, false
	}
	u, err := url.Parse(raw)
	if err != nil {
		// An unparsable URL may still end up quoted in a validation message.
		if m := urlPasswordShape.FindStringSubmatch(raw); m != nil {
			return "", m[1], false, true
		}
		return "", "", false, false
	}
	password, ok = u.User.Password()
	return u.User.Username(), password, true, ok && password != ""
}

var urlPasswordShape = regexp.MustCompile(`://[^/@:]*:([^/@]+)@`)
