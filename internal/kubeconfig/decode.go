package kubeconfig

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// doc is one parsed kubeconfig and where it came from.
type doc struct {
	// origin names the kubeconfig in messages: "env:KC", "file:k.yaml", "input kubeconfig".
	origin string
	// dir is the folder its relative file references (certificate-authority: ca.crt) start at.
	dir string
	// repo is set for a file: source, which can come from the repository, so from a pull
	// request, and for an env: line of a clusters file in CI (envDoc): it may refer only to
	// files in dir, and never route a built-in provider's token (see confine and checkRoute).
	repo bool
	cfg  *clientcmdapi.Config
	// public are the names the run prints (publicNames): no exec or auth-provider value equal
	// to one is a secret.
	public publicSet
}

// envLine reports whether the kubeconfig is an env: line's, which is a repository one when the
// line is a clusters file's in CI (envDoc).
func (d *doc) envLine() bool {
	return strings.HasPrefix(d.origin, sourceEnv+":")
}

var errNotKubeconfig = errors.New("not a kubeconfig (neither YAML nor base64 of one)")

// decode parses a kubeconfig written as YAML (or JSON), or as base64 of one: standard or URL
// alphabet, padded or not, wrapped or not. YAML is tried first when the text looks like it.
// encoded reports that the text was base64, so that the caller records it as a secret; it is
// set even when the decoded bytes are no kubeconfig.
//
// Errors never quote the text: YAML and JSON decoders do ("cannot unmarshal string
// \"eyJhbGciOi...\""), so parse errors are replaced by fixed messages with the line number.
func decode(raw []byte) (cfg *clientcmdapi.Config, encoded bool, err error) {
	text := bytes.TrimSpace(bytes.TrimPrefix(raw, []byte("\ufeff")))
	if len(text) == 0 {
		return nil, false, errors.New("empty")
	}
	var yamlErr error
	if looksYAML(text) {
		if cfg, yamlErr = parse(text); yamlErr == nil {
			return cfg, false, nil
		}
	}
	if data, ok := decodeBase64(text); ok {
		cfg, err := parse(data)
		switch {
		case err == nil:
			return cfg, true, nil
		case yamlErr != nil:
			return nil, true, yamlErr
		case looksYAML(data):
			return nil, true, fmt.Errorf("base64 of an invalid kubeconfig: %w", err)
		}
		return nil, true, errNotKubeconfig
	}
	if yamlErr != nil {
		return nil, false, yamlErr
	}
	// YAML without apiVersion or clusters: is still YAML; accept it if it holds contexts.
	if cfg, err := parse(text); err == nil && len(cfg.Contexts) > 0 {
		return cfg, false, nil
	}
	return nil, false, errNotKubeconfig
}

func looksYAML(text []byte) bool {
	return bytes.Contains(text, []byte("apiVersion")) || bytes.Contains(text, []byte("clusters:")) ||
		bytes.Contains(text, []byte(`"clusters"`))
}

// decodeBase64 decodes standard or URL-safe base64, with or without padding, ignoring the
// line breaks and spaces of wrapped output (base64 -w76).
func decodeBase64(text []byte) ([]byte, bool) {
	clean := make([]byte, 0, len(text))
	for _, c := range text {
		switch c {
		case ' ', '\t', '\r', '\n':
		case '-':
			clean = append(clean, '+')
		case '_':
			clean = append(clean, '/')
		default:
			clean = append(clean, c)
		}
	}
	clean = bytes.TrimRight(clean, "=")
	out := make([]byte, base64.RawStdEncoding.DecodedLen(len(clean)))
	n, err := base64.RawStdEncoding.Decode(out, clean)
	if err != nil || n == 0 {
		return nil, false
	}
	return out[:n], true
}

var (
	yamlLine  = regexp.MustCompile(`\bline (\d+)\b`)
	jsonField = regexp.MustCompile(`Go struct field \w+\.([A-Za-z0-9_.-]+) of type ([A-Za-z0-9_.\[\]*]+)`)
)

// parse decodes one kubeconfig. Its errors are fixed messages that cannot contain the input.
func parse(data []byte) (*clientcmdapi.Config, error) {
	cfg, err := clientcmd.Load(data)
	if err == nil {
		return cfg, nil
	}
	msg := err.Error()
	if m := jsonField.FindStringSubmatch(msg); m != nil {
		return nil, fmt.Errorf("not a valid kubeconfig: field %s must be of type %s", m[1], m[2])
	}
	if strings.Contains(msg, "yaml:") {
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			return nil, fmt.Errorf("not a valid kubeconfig: invalid YAML near line %s", m[1])
		}
		return nil, errors.New("not a valid kubeconfig: invalid YAML")
	}
	if strings.Contains(msg, "illegal base64 data") {
		return nil, errors.New("not a valid kubeconfig: a *-data field (certificate-authority-data, client-certificate-data, client-key-data) is not valid base64")
	}
	return nil, errors.New("not a kubeconfig: expected apiVersion: v1 and kind: Config")
}

// pick returns the context to use: want when set, else the current-context, else the only
// context.
func (d *doc) pick(want string) (string, error) {
	if want != "" {
		if _, ok := d.cfg.Contexts[want]; !ok {
			return "", fmt.Errorf("context %q not found in %s; %s", want, d.origin, d.has())
		}
		return want, nil
	}
	names := d.contexts()
	switch cur := d.cfg.CurrentContext; {
	case cur != "":
		if _, ok := d.cfg.Contexts[cur]; !ok {
			return "", fmt.Errorf("the current-context %q of %s is not one of its contexts; %s: pick one with %s#CONTEXT", cur, d.origin, d.has(), d.origin)
		}
		return cur, nil
	case len(names) == 1:
		return names[0], nil
	case len(names) == 0:
		return "", fmt.Errorf("%s has no contexts; add one (kubectl config set-context NAME --cluster=CLUSTER --user=USER)", d.origin)
	}
	return "", fmt.Errorf("%s has several contexts and no current-context; add #context to pick one, e.g. %s#%s (%s)", d.origin, d.origin, names[0], d.has())
}

// contexts returns the names of the kubeconfig's contexts, sorted.
func (d *doc) contexts() []string {
	return slices.Sorted(maps.Keys(d.cfg.Contexts))
}

// has lists the contexts for a message, at most 20 of them.
func (d *doc) has() string {
	names := d.contexts()
	switch {
	case len(names) == 0:
		return "it has no contexts"
	case len(names) > 20:
		return fmt.Sprintf("it has: %s, ... (%d in all)", strings.Join(names[:20], ", "), len(names))
	}
	return "it has: " + strings.Join(names, ", ")
}
