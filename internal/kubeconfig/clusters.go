package kubeconfig

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Source kinds of a clusters line.
const (
	sourceEnv     = "env"
	sourceFile    = "file"
	sourceContext = "context"
	sourceOIDC    = "oidc"
)

// entry is one "name=source" line of a clusters list.
type entry struct {
	line int
	text string // the line, trimmed
	name string
	kind string // sourceEnv, sourceFile or sourceContext
	ref  string // the variable, path or context name
	// context is the "#context" suffix of an env: or file: source; empty means the
	// kubeconfig's current-context, or its only context.
	context string
	// oidc is what an oidc: source says besides its server (ref).
	oidc *oidcSpec
}

// source is the entry's source without its #context suffix: "env:KC".
func (e entry) source() string { return e.kind + ":" + e.ref }

// written is the source as the user wrote it, #context included.
func (e entry) written() string {
	if e.kind == sourceOIDC {
		return e.source() // the server; its options are in the list
	}
	if e.context != "" {
		return e.source() + "#" + e.context
	}
	return e.source()
}

var (
	clusterName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
	envVarName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// credentialRun is a long run of base64 or token characters, as in a JWT or an encoded
	// kubeconfig pasted where a source belongs.
	credentialRun = regexp.MustCompile(`[A-Za-z0-9+/_=-]{24,}`)
	// kubeconfigKey starts a line of kubeconfig YAML.
	kubeconfigKey = regexp.MustCompile(`^-?\s*(apiVersion|kind|clusters|contexts|users|current-context|preferences|name|cluster|user|context|server|token|tokenFile|username|password|certificate-authority(-data)?|client-certificate(-data)?|client-key(-data)?|insecure-skip-tls-verify|tls-server-name|proxy-url|namespace|exec|auth-provider|command|args|env|value|config|extensions|interactiveMode|provideClusterInfo):(\s|$)`)
	// gitlabAgentContext is a context the GitLab agent for Kubernetes writes into a job's
	// KUBECONFIG: the path of the agent's configuration project, ':' and the agent's name
	// (GitLab's rule for that name: lower-case letters, digits and '-', at most 63).
	gitlabAgentContext = regexp.MustCompile(`^[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+:([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)$`)
	// colonInsteadOfEquals is "prod: env:KC", a name=source written as YAML.
	colonInsteadOfEquals = regexp.MustCompile(`^([A-Za-z0-9._-]+)\s*:\s*((env|file|context|oidc):.*)$`)
)

const sourceHelp = "expected name=source, where source is env:VAR, file:PATH, context:NAME or oidc:https://SERVER audience=AUDIENCE"

// parseClusters parses a clusters list: one name=source per line; blank lines and lines
// starting with # are skipped. origin names the list in messages ("input clusters"). Every
// bad line is reported, joined.
func parseClusters(text, origin string) ([]entry, error) {
	var entries []entry
	var errs []error
	first := map[string]int{} // cluster name -> line
	for i, raw := range strings.Split(text, "\n") {
		e := entry{line: i + 1, text: strings.TrimSpace(raw)}
		if e.text == "" || strings.HasPrefix(e.text, "#") {
			continue
		}
		if err := e.parse(); err != nil {
			// An oidc: line names no secret (token=env:VAR is a name): only a run that looks
			// like one hides it.
			oidcLine := e.kind == sourceOIDC && len(e.text) <= 200 && !hasCredentialRun(e.text)
			if !oidcLine && credentialLike(e.text) {
				// The line and the parse error (which may quote its name) are not shown.
				errs = append(errs, fmt.Errorf("%s line %d: this line looks like kubeconfig contents or a credential (not shown); %s: put the kubeconfig in an environment variable and write name=env:VAR", origin, e.line, sourceHelp))
				continue
			}
			errs = append(errs, fmt.Errorf("%s: %w", lineRef(origin, e), err))
			continue
		}
		if line, dup := first[e.name]; dup {
			errs = append(errs, fmt.Errorf("%s line %d: duplicate cluster name %q (first on line %d)", origin, e.line, e.name, line))
			continue
		}
		first[e.name] = e.line
		entries = append(entries, e)
	}
	return entries, errors.Join(errs...)
}

// Names are the cluster names of a clusters list, as parseClusters reads it (every bad line is
// an error), without reading any source: what a merge needs of the fleet.
func Names(text, origin string) ([]string, error) {
	entries, err := parseClusters(text, origin)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.name
	}
	return names, nil
}

func (e *entry) parse() error {
	name, src, ok := strings.Cut(e.text, "=")
	if !ok {
		if m := colonInsteadOfEquals.FindStringSubmatch(e.text); m != nil {
			return fmt.Errorf("write %s=%s, with '=' between the cluster name and the source", m[1], m[2])
		}
		return errors.New(sourceHelp)
	}
	e.name = strings.TrimSpace(name)
	if err := checkName(e.name); err != nil {
		return err
	}
	kind, ref, ok := strings.Cut(strings.TrimSpace(src), ":")
	if !ok {
		return errors.New(sourceHelp)
	}
	e.kind, e.ref = strings.TrimSpace(kind), strings.TrimSpace(ref)
	switch e.kind {
	case sourceEnv:
		e.ref, e.context, ok = strings.Cut(e.ref, "#")
		e.ref = strings.TrimSpace(e.ref)
		if !envVarName.MatchString(e.ref) {
			return fmt.Errorf("env: needs an environment variable name (letters, digits and _), e.g. %s=env:%s_KUBECONFIG", e.name, envName(e.name))
		}
	case sourceFile:
		// A path may hold a '#' more likely than a context name: split at the last one.
		if i := strings.LastIndex(e.ref, "#"); i >= 0 {
			e.ref, e.context, ok = e.ref[:i], e.ref[i+1:], true
		} else {
			ok = false
		}
		if e.ref = strings.TrimSpace(e.ref); e.ref == "" {
			return fmt.Errorf("file: needs a path, e.g. %s=file:kubeconfigs/%s.yaml", e.name, e.name)
		}
	case sourceContext:
		if e.ref == "" {
			return fmt.Errorf("context: needs a context name of the kubeconfig input, e.g. %s=context:%s", e.name, e.name)
		}
		return nil
	case sourceOIDC:
		return e.parseOIDC()
	default:
		return fmt.Errorf("unknown source %q; %s", e.kind+":", sourceHelp)
	}
	e.context = strings.TrimSpace(e.context)
	if ok && e.context == "" {
		return fmt.Errorf("empty context after '#': write %s#CONTEXT, or drop the '#' to use the current-context", e.source())
	}
	return nil
}

// checkName checks a cluster name; it is used in outputs, file names and annotations.
func checkName(name string) error {
	if name == "" {
		return errors.New("missing cluster name before '='; " + sourceHelp)
	}
	if !clusterName.MatchString(name) {
		return fmt.Errorf("invalid cluster name %q: use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// contextClusterName is the name of the cluster a context is, when no clusters list names it:
// the context's own name, or the agent's for a GitLab agent's context
// ("mygroup/agent-config:prod-eu" is prod-eu).
func contextClusterName(context string) string {
	if m := gitlabAgentContext.FindStringSubmatch(context); m != nil {
		return m[1]
	}
	return context
}

// envName suggests an environment variable name for a cluster name.
func envName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, name)
}

// lineRef names a parsed line in a message. Only lines that may not hold a credential are
// quoted: see credentialLike.
func lineRef(origin string, e entry) string {
	return fmt.Sprintf("%s line %d: %s", origin, e.line, strconv.Quote(e.text))
}

// credentialLike reports a line that may be a piece of a kubeconfig or a token, pasted where
// a name=source belongs: a malformed line like that is not printed.
func credentialLike(s string) bool {
	if len(s) > 200 || kubeconfigKey.MatchString(s) {
		return true
	}
	lower := strings.ToLower(s)
	for _, w := range []string{"token", "password", "-data", "private key", "bearer"} {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return hasCredentialRun(s)
}

// hasCredentialRun reports a long run of mixed-case letters and digits, as in a token, a JWT
// or base64: never a word, a name or a path.
func hasCredentialRun(s string) bool {
	for _, run := range credentialRun.FindAllString(s, -1) {
		if strings.ContainsAny(run, "abcdefghijklmnopqrstuvwxyz") &&
			strings.ContainsAny(run, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") &&
			strings.ContainsAny(run, "0123456789") {
			return true
		}
	}
	return false
}
