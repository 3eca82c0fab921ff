package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/kubeconfig"
	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/verify"
)

// defaultSettings are the settings both modes start from, the one place their defaults are
// written down: action.yml's input defaults and the CLI's flag defaults are checked against
// them (TestActionYMLMatchesTheProgram, TestFlagDefaults).
func defaultSettings() settings {
	return settings{
		namespace:          "flux-system",
		timeout:            verify.DefaultTimeout,
		maxParallel:        verify.DefaultMaxParallel,
		workloads:          true,
		crashRestarts:      int(classify.DefaultCrashRestarts),
		unschedulableGrace: classify.DefaultUnschedulableGrace,
	}
}

// settings is what both modes collect from the user before anything is contacted.
type settings struct {
	resources          []string // as given: kustomization/NAME, ks/NAME, hr/NAME ...
	namespace          string
	revision           string
	timeout            time.Duration
	maxParallel        int
	failFast           bool
	workloads          bool
	snapshot           bool
	crashRestarts      int
	unschedulableGrace time.Duration
	clusters           kubeconfig.Input
}

// request validates the settings and loads the kubeconfigs into a verification request. The
// names say which input (or flag) is at fault, for the error messages.
func (s settings) request(env Env, names inputNames) (verify.Request, *kubeconfig.Secrets, error) {
	var req verify.Request
	if len(s.resources) == 0 {
		return req, nil, fmt.Errorf("%s is required: name the Flux object to verify, e.g. kustomization/my-app or helmrelease/my-app", names.resource)
	}
	ns := cmp.Or(s.namespace, defaultSettings().namespace)
	seen := map[string]bool{}
	for i, r := range s.resources {
		ref, err := flux.ParseResource(r, ns)
		if err != nil {
			if len(s.resources) == 1 {
				return req, nil, fmt.Errorf("%s: %w", names.resource, err)
			}
			return req, nil, fmt.Errorf("%s (%s %d): %w", names.resource, names.resourceItem, i+1, err)
		}
		if !seen[ref.ID()] {
			seen[ref.ID()] = true
			req.Resources = append(req.Resources, ref)
		}
	}
	rev, err := flux.ParseRevision(s.revision)
	if err != nil {
		return req, nil, fmt.Errorf("%s: %w", names.revision, err)
	}
	if s.timeout <= 0 {
		return req, nil, fmt.Errorf("%s must be a positive duration such as 10m or 90s", names.timeout)
	}
	if s.maxParallel <= 0 {
		return req, nil, fmt.Errorf("%s must be a whole number of at least 1", names.maxParallel)
	}
	if s.crashRestarts <= 0 {
		return req, nil, fmt.Errorf("%s must be a whole number of at least 1", names.crashRestarts)
	}
	if s.unschedulableGrace < 0 {
		return req, nil, fmt.Errorf("%s must not be negative", names.unschedulableGrace)
	}
	clusters, secrets, err := kubeconfig.Load(s.clusters, s.kubeconfigEnv(env))
	if err != nil {
		return req, secrets, err
	}
	if len(clusters) == 0 {
		return req, secrets, fmt.Errorf("no clusters to verify: %s", names.noClusters)
	}
	for _, c := range clusters {
		req.Targets = append(req.Targets, verify.Target{Name: c.Name, Config: c.Config, Invalid: c.Invalid})
	}
	req.Revision = rev
	req.Timeout = s.timeout
	req.MaxParallel = s.maxParallel
	req.FailFast = s.failFast
	req.Workloads = s.workloads
	req.Snapshot = s.snapshot
	req.Classify = classify.Options{CrashRestarts: int32(s.crashRestarts), UnschedulableGrace: s.unschedulableGrace}
	req.Clock = env.Clock
	return req, secrets, nil
}

// inputNames names the inputs (action) or flags (CLI) in error messages.
type inputNames struct {
	resource, resourceItem, revision, timeout, maxParallel, crashRestarts, unschedulableGrace, noClusters string
}

// progressPrinter prints each cluster's state changes as they happen, one line each.
func progressPrinter(w io.Writer, redact func(string) string) func(verify.Progress) {
	return func(p verify.Progress) {
		fmt.Fprint(w, report.ProgressLine(p.Elapsed, p.Cluster, p.Verdict, p.Final, redact(p.Message)))
	}
}

// redactRun replaces every secret in every string of the run: kubeconfig secrets never reach
// an output, a summary or a log, even if an API server or a container echoed one.
func redactRun(run result.Run, secrets *kubeconfig.Secrets) (result.Run, error) {
	if secrets == nil || len(secrets.Values()) == 0 {
		return run, nil
	}
	data, err := json.Marshal(run)
	if err != nil {
		return run, fmt.Errorf("redact results: %w", err)
	}
	var out result.Run
	if err := json.Unmarshal([]byte(redactJSON(string(data), secrets)), &out); err != nil {
		return run, fmt.Errorf("redact results: %w", err)
	}
	return out, nil
}

// redactJSON redacts secrets both as they are and as JSON escapes them.
func redactJSON(s string, secrets *kubeconfig.Secrets) string {
	s = secrets.Redact(s)
	for _, v := range secrets.Values() {
		quoted, _ := json.Marshal(v)
		escaped := strings.Trim(string(quoted), `"`)
		if escaped != v {
			s = strings.ReplaceAll(s, escaped, "***")
		}
	}
	return s
}

// kubeconfigEnv is what the kubeconfig loader may see. Only the CLI may run exec credential
// plugins: the action's container has none, and its users get an InvalidConfig verdict that
// says how to pass a token instead.
func (s settings) kubeconfigEnv(env Env) kubeconfig.Env {
	ke := kubeconfig.Env{Getenv: env.Getenv, ReadFile: env.ReadFile, Home: env.Getenv("HOME")}
	if s.clusters.CLI {
		ke.LookPath = exec.LookPath
		ke.Workspace, _ = os.Getwd()
	} else {
		ke.Workspace = env.Getenv("GITHUB_WORKSPACE")
	}
	return ke
}
