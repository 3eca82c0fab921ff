// Package cloudauth turns a recognised exec credential plugin of a managed cloud into an
// in-process token source: the token `aws eks get-token` (or aws-iam-authenticator),
// gke-gcloud-auth-plugin or `kubelogin get-token` would print is obtained with the cloud's own
// Go SDK, from the credentials the standard login actions leave in the job's environment, and
// kept fresh for every request a rest.Config makes (see Source.WrapTransportFor).
//
// Recognise says whether a built-in provider knows a plugin; Plugin.NewSource checks that the
// environment holds what the provider needs (naming the variable that is missing when not)
// without contacting anything. Tokens are obtained on first use, replaced before they expire
// and when the API server rejects one, and every secret read or obtained is handed to
// Options.OnSecret before it is used, so it can be masked before anything could print it.
package cloudauth

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// DocsURL is the documentation section that shows the workflows of the built-in providers.
const DocsURL = "https://github.com/org/app-status-action/blob/main/docs/credentials.md#credentials-for-managed-clusters"

// The defaults of Options.
const (
	DefaultTimeout          = 20 * time.Second
	DefaultRefreshMargin    = 5 * time.Minute
	DefaultEKSTokenLifetime = 14 * time.Minute
)

// errorBackoff is how long a failure to obtain a token is reused before the next request
// tries again: the probe's retries then report the provider's own error, and the informers'
// retries do not hammer a token endpoint that refused.
const errorBackoff = 5 * time.Second

// Options is what the providers may see and how they behave. Getenv and ReadFile are the only
// ways they read the environment and files, except where an SDK reads its own settings (the
// AWS shared config of a profile, proxies, SSL_CERT_FILE).
type Options struct {
	// Getenv reads an environment variable; the exec's env: entries win over it.
	Getenv func(string) string
	// ReadFile reads credential files (token files, Google credentials, certificates).
	ReadFile func(string) ([]byte, error)
	// OnSecret receives every secret a provider reads or obtains (keys, federated tokens,
	// access tokens), before it is used. It may be called from any goroutine.
	OnSecret func(string)
	// HTTPClient makes the token requests; nil means a client with a 15 s timeout, the
	// environment's proxy and the system's CAs.
	HTTPClient *http.Client
	// Timeout bounds obtaining one token; zero means DefaultTimeout.
	Timeout time.Duration
	// RefreshMargin is how long before its expiry a token is replaced (at most halfway
	// through its life); zero means DefaultRefreshMargin.
	RefreshMargin time.Duration
	// EKSTokenLifetime is how long an EKS token is used, from its signing; zero means
	// DefaultEKSTokenLifetime (the 14 minutes aws eks get-token reports; EKS accepts 15).
	EKSTokenLifetime time.Duration
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time
	// Repository says the kubeconfig comes from the repository (a file: source), so from a
	// pull request: it may not choose what the job's token is for, so kubelogin's
	// --server-id must be an application ID, never a URL (https://management.azure.com
	// would get an Azure Resource Manager token) nor another Microsoft service's.
	Repository bool
	// EKSAPI, GKEAPI, AKSAPI are the base URLs of the clouds' control-plane APIs the
	// providers ask where a repository kubeconfig's cluster is (Source.RequireEndpoint); empty
	// means the cloud's own (https://eks.REGION.amazonaws.com, https://container.googleapis.com,
	// Azure Resource Manager of kubelogin's --environment: https://management.azure.com).
	// Tests point them at fakes.
	EKSAPI, GKEAPI, AKSAPI string
}

func (o Options) withDefaults() Options {
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.ReadFile == nil {
		o.ReadFile = func(name string) ([]byte, error) { return nil, fmt.Errorf("read %s: no file access", name) }
	}
	if o.OnSecret == nil {
		o.OnSecret = func(string) {}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.RefreshMargin <= 0 {
		o.RefreshMargin = DefaultRefreshMargin
	}
	if o.EKSTokenLifetime <= 0 {
		o.EKSTokenLifetime = DefaultEKSTokenLifetime
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o
}

// Error says why a built-in provider has no token: the verdict it means for the cluster
// (InvalidConfig, Unauthorized or Unreachable) and a message that names the provider and what
// to do. The message holds no secret: SDK errors are quoted cleaned and cut, and the
// caller's redaction of the secrets given to OnSecret still applies.
type Error struct {
	Verdict result.Verdict
	Message string
	err     error
	// cannotLocate: the cloud cannot be asked where the cluster is (see CannotLocate).
	cannotLocate bool
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.err }

// CredentialVerdict is the verdict the failure means; internal/verify reads it.
func (e *Error) CredentialVerdict() result.Verdict { return e.Verdict }

// invalid is the error of a plugin that cannot be replaced with what the environment holds.
func invalid(format string, args ...any) *Error {
	return &Error{Verdict: result.VerdictInvalidConfig, Message: fmt.Sprintf(format, args...)}
}

// maxQuoted bounds how much of an SDK's error message is quoted.
const maxQuoted = 400

// secrets records the secrets one source handed to OnSecret, to redact them from the SDK
// errors it quotes before cutting them (a cut secret would escape the caller's redaction).
type secrets struct {
	mu       sync.Mutex
	values   []string
	onSecret func(string)
}

// add hands v to OnSecret and remembers it, unless it is empty.
func (s *secrets) add(v string) {
	if v = strings.TrimSpace(v); v == "" {
		return
	}
	s.mu.Lock()
	if !slices.Contains(s.values, v) {
		s.values = append(s.values, v)
	}
	s.mu.Unlock()
	s.onSecret(v)
}

// quote cleans an SDK's error message (it may quote a token endpoint's response) for a
// one-line verdict message: secrets redacted, one line, bounded.
func (s *secrets) quote(err error) string {
	msg := err.Error()
	s.mu.Lock()
	for _, v := range s.values {
		msg = strings.ReplaceAll(msg, v, "***")
	}
	s.mu.Unlock()
	return sanitize.Truncate(sanitize.Compact(msg), maxQuoted)
}

// environ is the environment a plugin runs in: the exec's env: entries over the process's.
type environ struct {
	overlay map[string]string
	getenv  func(string) string
}

func (e environ) get(name string) string {
	if v, ok := e.overlay[name]; ok {
		return v
	}
	return e.getenv(name)
}

// first returns the first of the variables that is set, and its name.
func (e environ) first(names ...string) (value, name string) {
	for _, n := range names {
		if v := e.get(n); v != "" {
			return v, n
		}
	}
	return "", ""
}

// readRunnerFile reads a file a login action named by its path on the runner. A container
// action sees the runner's workspace at GITHUB_WORKSPACE (/github/workspace), not at the
// path the runner gave, so a file that is not where the path says is looked for there by its
// name, where google-github-actions/auth writes its credentials file.
func readRunnerFile(e environ, o Options, path string) ([]byte, error) {
	data, err := o.ReadFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return data, err
	}
	ws := e.get("GITHUB_WORKSPACE")
	if ws == "" || !filepath.IsAbs(path) || filepath.Dir(path) == ws {
		return nil, err
	}
	if data, wsErr := o.ReadFile(filepath.Join(ws, filepath.Base(path))); wsErr == nil {
		return data, nil
	}
	return nil, err
}
