package cloudauth

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Plugin is an exec credential plugin that a built-in provider replaces, as a kubeconfig
// runs it: `aws eks get-token`, `aws-iam-authenticator token`, `gke-gcloud-auth-plugin` or
// `kubelogin get-token`.
type Plugin struct {
	// Cloud is "EKS", "GKE" or "AKS".
	Cloud string
	// Command is the plugin's command and subcommand, for messages: "aws eks get-token".
	Command string

	env     map[string]string // the exec's env: entries
	err     error             // an argument the built-in provider does not support
	start   func(p *provider) (fetcher, error)
	refused string // what to check when the API server refuses the provider's token
}

// What to check when an API server refuses a built-in provider's token.
const (
	eksRefused = "the token is signed for the cluster name in the kubeconfig's args (--cluster-name, or -i): check that it is the EKS cluster's, " +
		"and that the IAM identity of the credentials has an access entry (or an aws-auth mapping) in the cluster"
	gkeRefused = "check that the Google identity of the credentials may use the cluster (an IAM role such as roles/container.clusterViewer, or a Kubernetes RBAC binding)"
	aksRefused = "check that the Microsoft Entra identity of the credentials has a role on the cluster (Azure RBAC, or a Kubernetes RBAC binding) " +
		"and that --server-id is the cluster's server application"
)

// Recognise returns the built-in provider of an exec plugin, known by its command's name and
// subcommand; nil when there is none. A known plugin with an argument the provider does not
// support is still returned: NewSource then says which.
func Recognise(exec *clientcmdapi.ExecConfig) *Plugin {
	if exec == nil {
		return nil
	}
	var p *Plugin
	switch name := strings.TrimSuffix(filepath.Base(exec.Command), ".exe"); name {
	case "aws":
		if !hasSequence(exec.Args, "eks", "get-token") {
			return nil
		}
		p = &Plugin{Cloud: "EKS", Command: "aws eks get-token", refused: eksRefused}
		p.start, p.err = parseAWSCLI(exec.Args)
	case "aws-iam-authenticator":
		if !slices.Contains(exec.Args, "token") {
			return nil
		}
		p = &Plugin{Cloud: "EKS", Command: "aws-iam-authenticator token", refused: eksRefused}
		p.start, p.err = parseIAMAuthenticator(exec.Args)
	case "gke-gcloud-auth-plugin":
		p = &Plugin{Cloud: "GKE", Command: "gke-gcloud-auth-plugin", refused: gkeRefused}
		p.start, p.err = parseGKEPlugin(exec.Args)
	case "kubelogin":
		if !slices.Contains(exec.Args, "get-token") {
			return nil
		}
		p = &Plugin{Cloud: "AKS", Command: "kubelogin get-token", refused: aksRefused}
		p.start, p.err = parseKubelogin(exec.Args)
	default:
		return nil
	}
	p.env = map[string]string{}
	for _, e := range exec.Env {
		p.env[e.Name] = e.Value
	}
	return p
}

// kubeconfigEnv are the variables a kubeconfig's exec env may set for a built-in provider: they
// choose an account, a role, a region or a login mode, or carry the kubeconfig's own
// credentials to the cloud's own endpoint. Every other variable (a credentials or token file, a
// config folder, an endpoint, an authority, a proxy, a CA bundle) says where credentials are
// read from or sent to, which only the workflow's own environment may say.
var kubeconfigEnv = map[string]bool{
	"AWS_PROFILE": true, "AWS_DEFAULT_PROFILE": true, "AWS_REGION": true, "AWS_DEFAULT_REGION": true,
	"AWS_ROLE_ARN": true, "AWS_ROLE_SESSION_NAME": true, "AWS_STS_REGIONAL_ENDPOINTS": true, "DEFAULT_ROLE": true,
	"AWS_ACCESS_KEY_ID": true, "AWS_SECRET_ACCESS_KEY": true, "AWS_SESSION_TOKEN": true,
	"AAD_LOGIN_METHOD": true, "AZURE_CLIENT_ID": true, "AZURE_TENANT_ID": true,
	"AAD_SERVICE_PRINCIPAL_CLIENT_ID": true, "AAD_SERVICE_PRINCIPAL_CLIENT_SECRET": true, "AZURE_CLIENT_SECRET": true,
	"USE_GKE_GCLOUD_AUTH_PLUGIN": true, "CLOUDSDK_CORE_PROJECT": true,
}

// sanitizeName is a variable name as a message may quote it: the characters of a name only.
func sanitizeName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '?'
	}, sanitizeLength(name))
}

func sanitizeLength(s string) string {
	if len(s) > 64 {
		return s[:64]
	}
	return s
}

// describe names the provider in messages.
func (p *Plugin) describe() string {
	return fmt.Sprintf("%s credentials (%s, built in)", p.Cloud, p.Command)
}

// NewSource checks that the environment holds what the plugin's built-in provider needs and
// returns the source of its tokens; nothing is contacted yet. The error is an *Error
// (InvalidConfig) that names the provider and the variable that is missing, or the argument
// that is not supported, and links the credentials page.
func (p *Plugin) NewSource(opts Options) (*Source, error) {
	opts = opts.withDefaults()
	s := &secrets{onSecret: opts.OnSecret}
	fail := func(e *Error) error {
		return &Error{Verdict: e.Verdict, Message: fmt.Sprintf("%s: %s; see %s", p.describe(), e.Message, DocsURL), err: e.err}
	}
	if p.err != nil {
		return nil, fail(invalid("%s", p.err.Error()))
	}
	for _, name := range slices.Sorted(maps.Keys(p.env)) {
		if !kubeconfigEnv[name] {
			return nil, fail(invalid("the kubeconfig's exec env sets %s, which a kubeconfig may not: it can come from the repository, "+
				"so from a pull request, and the built-in providers let it choose only an account, a role and a region, never where "+
				"credentials are read from or sent to (files, endpoints, proxies); set %s in the step's env: instead, or remove it",
				sanitizeName(name), sanitizeName(name)))
		}
	}
	pr := &provider{env: environ{overlay: p.env, getenv: opts.Getenv}, opts: opts, secrets: s}
	pr.http = pr.httpClient()
	fetch, err := p.start(pr)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = invalid("%s", s.quote(err))
		}
		return nil, fail(e)
	}
	return &Source{cloud: p.Cloud, what: p.describe(), refused: p.refused, fetch: fetch, locate: pr.locate, locatable: pr.locatable,
		opts: opts, secrets: s}, nil
}

// provider is what a built-in provider works with.
type provider struct {
	env     environ
	opts    Options
	secrets *secrets
	http    *http.Client // for token requests; it hands the tokens in responses to secrets
	locate  locator      // asks the cloud where a cluster is; nil when the provider cannot
	// locatable says why the cloud cannot be asked about an entry's cluster; nil when it can.
	locatable locatable
}

// requestTimeout bounds one token request.
const requestTimeout = 15 * time.Second

// httpClient is the client for token requests: Options.HTTPClient (or the default one), every
// request bounded, whose transport hands every token in a JSON response to OnSecret before
// the SDK sees it. The bound matters for the Google SDK, whose token sources take no context.
func (p *provider) httpClient() *http.Client {
	c := &http.Client{}
	if p.opts.HTTPClient != nil {
		*c = *p.opts.HTTPClient
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = &secretsTransport{next: next, secrets: p.secrets, timeout: min(requestTimeout, p.opts.Timeout)}
	return c
}

// unexpectedArguments says that the plugin was given n arguments the built-in provider does
// not know, without quoting them: they may be secrets.
func unexpectedArguments(n int, command string) error {
	return fmt.Errorf("%d argument(s) besides the options of %s that the built-in provider does not know (remove them from the kubeconfig's args)", n, command)
}

// hasSequence reports whether words appear in args in this order, one after the other.
func hasSequence(args []string, words ...string) bool {
	for i := 0; i+len(words) <= len(args); i++ {
		if slices.Equal(args[i:i+len(words)], words) {
			return true
		}
	}
	return false
}

// flags describes a plugin's options: those that take a value, and the switches. A nil
// destination accepts the option and ignores it.
type flags struct {
	values   map[string]*string
	switches map[string]*bool
}

// optionName is what an option's name looks like; a message quotes nothing else.
var optionName = regexp.MustCompile(`^--?[a-z][a-z0-9_-]{0,40}$`)

// parse sets the options' destinations and returns the other arguments. An option it does not
// know is an error naming only the option: the values may be secrets.
func (f flags) parse(args []string) ([]string, error) {
	var positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			positional = append(positional, arg)
			continue
		}
		if arg == "--" {
			return append(positional, args[i+1:]...), nil
		}
		name, value, hasValue := strings.Cut(arg, "=")
		if dst, ok := f.values[name]; ok {
			if !hasValue {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("the option %s has no value", name)
				}
				i++
				value = args[i]
			}
			if dst != nil {
				*dst = value
			}
			continue
		}
		if dst, ok := f.switches[name]; ok {
			on := true
			if hasValue {
				var err error
				if on, err = strconv.ParseBool(value); err != nil {
					return nil, fmt.Errorf("the option %s takes true or false", name)
				}
			}
			if dst != nil {
				*dst = on
			}
			continue
		}
		if !optionName.MatchString(name) {
			name = "an argument starting with -" // not an option's name: it is not quoted
		}
		return nil, fmt.Errorf("the option %s is not supported by the built-in provider (remove it from the kubeconfig's args)", name)
	}
	return positional, nil
}
