package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/testing/runnertest"
	"github.com/org/app-status-action/internal/verify"
)

// fakeEnv runs the program in-process with the given environment and a temp GITHUB_OUTPUT
// and GITHUB_STEP_SUMMARY.
type fakeEnv struct {
	vars            map[string]string
	stdout, stderr  bytes.Buffer
	output, summary string
}

func newFakeEnv(t *testing.T, vars map[string]string) *fakeEnv {
	t.Helper()
	dir := t.TempDir()
	f := &fakeEnv{vars: map[string]string{}, output: filepath.Join(dir, "output"), summary: filepath.Join(dir, "summary")}
	for k, v := range vars {
		f.vars[k] = v
	}
	f.vars["GITHUB_ACTIONS"] = "true"
	f.vars["GITHUB_OUTPUT"] = f.output
	f.vars["GITHUB_STEP_SUMMARY"] = f.summary
	f.vars["GITHUB_WORKSPACE"] = dir
	return f
}

func (f *fakeEnv) env() Env {
	return Env{
		Stdout: &f.stdout, Stderr: &f.stderr,
		Getenv:    func(k string) string { return f.vars[k] },
		ReadFile:  os.ReadFile,
		WriteFile: writeFile,
		Clock:     func() time.Time { return time.Unix(1700000000, 0) },
	}
}

func (f *fakeEnv) file(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

const tokenKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
users:
- name: u
  user:
    token: s3cr3t-t0ken-value-that-must-never-leak
`

// TestActionBadInput: malformed input fails before any cluster is contacted, with a message
// naming the input and the line, and the outputs and summary are still written.
func TestActionBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		inputs map[string]string
		want   string
		// summaryLacks is raw markup the summary must not hold (it is escaped there).
		summaryLacks string
	}{
		{
			name:   "no resource",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig},
			want:   "input resource is required",
		},
		{
			name:   "unknown kind",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "deployment/web"},
			want:   `unknown kind "deployment"`,
		},
		{
			name:   "bad duration",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_TIMEOUT": "ten minutes"},
			want:   "input timeout",
		},
		{
			name:   "bad boolean",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_FAIL-FAST": "maybe"},
			want:   "input fail-fast",
		},
		{
			name:   "missing env var",
			inputs: map[string]string{"INPUT_CLUSTERS": "prod=env:PROD_KUBECONFIG", "INPUT_RESOURCE": "ks/app"},
			want:   "PROD_KUBECONFIG",
		},
		{
			name:   "bad clusters line",
			inputs: map[string]string{"INPUT_CLUSTERS": "ok=env:KC\nstaging", "INPUT_RESOURCE": "ks/app", "KC": tokenKubeconfig},
			want:   "line 2",
		},
		{
			name:   "seconds that would overflow",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_TIMEOUT": "18446744074"},
			want:   "input timeout: 18446744074 seconds is out of range: give a duration up to 24h",
		},
		{
			name:   "too many seconds",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_TIMEOUT": "9999999999"},
			want:   "input timeout: 9999999999 seconds is out of range",
		},
		{
			name:   "a duration beyond ParseDuration",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_TIMEOUT": "9999999999h"},
			want:   `input timeout: "9999999999h" is out of range`,
		},
		{
			name:   "a duration beyond a day",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_TIMEOUT": "25h"},
			want:   "input timeout 25h0m0s is out of range: give a duration from 1s to 24h",
		},
		{
			name:   "negative timeout",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_TIMEOUT": "-5m"},
			want:   "input timeout -5m0s is out of range",
		},
		{
			name:   "a count beyond 32 bits",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_CRASH-RESTARTS": "4294967296"},
			want:   "input crash-restarts: 4294967296 is out of range",
		},
		{
			name:   "too many restarts",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_CRASH-RESTARTS": "5000"},
			want:   "input crash-restarts 5000 is out of range: give a whole number from 1 to 1000",
		},
		{
			name:   "no parallelism",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_MAX-PARALLEL": "0"},
			want:   "input max-parallel 0 is out of range",
		},
		{
			name:   "grace beyond a day",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_UNSCHEDULABLE-GRACE": "200000"},
			want:   "input unschedulable-grace: 200000 seconds is out of range",
		},
		{
			// 0 is rejected rather than silently becoming the default (issue 19).
			name:   "no grace at all",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_UNSCHEDULABLE-GRACE": "0s"},
			want:   "input unschedulable-grace 0s is out of range: give a duration from 1s to 24h, such as 10m, or leave it unset for the workload's own deadline",
		},
		{
			name:   "no never-ready grace",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_NEVER-READY-GRACE": "0s"},
			want:   "input never-ready-grace 0s is out of range",
		},
		{
			name:   "no retry grace",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_RETRY-GRACE": "0"},
			want:   "input retry-grace 0s is out of range: give a duration from 1s to 24h",
		},
		{
			name:   "no not-found grace",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_NOT-FOUND-GRACE": "0"},
			want:   "input not-found-grace 0s is out of range: give a duration from 1s to 24h",
		},
		{
			name:         "markup in the input",
			inputs:       map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "<img src=x onerror=alert(1)>/[a](http://x)"},
			want:         "<img src=x onerror=alert(1)>",
			summaryLacks: "<img",
		},
		{
			name:   "bad revision",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_REVISION": "main branch"},
			want:   "input revision",
		},
		{
			name:   "a branch as the revision (issue 18): it would match any commit",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_REVISION": "main"},
			want:   `input revision: revision "main": a branch, HEAD, latest or a short version (v1, 1.2) names whatever it points to when Flux looks`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeEnv(t, tt.inputs)
			start := time.Now()
			code := Run(context.Background(), []string{"action"}, f.env())
			if code != 1 {
				t.Errorf("Run() = %d, want 1\n%s", code, f.stdout.String())
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("bad input took %s: something was contacted", took)
			}
			log := f.stdout.String()
			if !strings.Contains(log, "::error title=app-status bad input::") || !strings.Contains(log, tt.want) {
				t.Errorf("log lacks an error annotation containing %q:\n%s", tt.want, log)
			}
			var forms []string
			for _, v := range tt.inputs {
				if strings.Contains(v, tokenForms[0]) {
					forms = tokenForms // the inputs hold the token: it must be masked
				}
			}
			assertNoLeak(t, log, f.file(t, f.output)+f.file(t, f.summary), forms)
			out := f.file(t, f.output)
			if !strings.Contains(out, "status<<") || !strings.Contains(out, "\nfailure\n") {
				t.Errorf("status output not written as failure:\n%s", out)
			}
			// The summary escapes markdown: drop the backslashes to read the text.
			sum := f.file(t, f.summary)
			if tt.summaryLacks != "" {
				if strings.Contains(sum, tt.summaryLacks) || !strings.Contains(sum, "&lt;img") {
					t.Errorf("summary holds raw markup %q:\n%s", tt.summaryLacks, sum)
				}
			} else if !strings.Contains(sum, "Bad input") || !strings.Contains(strings.ReplaceAll(sum, `\`, ""), tt.want) {
				t.Errorf("summary does not explain the bad input:\n%s", sum)
			}
			if !strings.Contains(sum, "**Ready=False** — no cluster was contacted\n") {
				t.Errorf("the summary does not say the error once, above:\n%s", sum)
			}
		})
	}
}

// tokenForms are the forms of the token of tokenKubeconfig that must never be printed: as it
// is, and in base64 (as a proxy echoing an Authorization header would print it).
var tokenForms = []string{"s3cr3t-t0ken-value-that-must-never-leak", "czNjcjN0LXQwa2VuLXZhbHVlLXRoYXQtbXVzdC1uZXZlci1sZWFr"}

// assertNoLeak checks that every form of the secret is registered with ::add-mask:: before
// any other line of the log, and that no other line, and nothing written to files, holds one.
func assertNoLeak(t *testing.T, log, files string, forms []string) {
	t.Helper()
	masked := map[string]bool{}
	others := false
	for _, l := range strings.Split(log, "\n") {
		if v, ok := strings.CutPrefix(l, "::add-mask::"); ok {
			if others {
				t.Errorf("::add-mask:: after other output: %q", l)
			}
			masked[v] = true
			continue
		}
		if l != "" {
			others = true
		}
		for _, s := range forms {
			if strings.Contains(l, s) {
				t.Errorf("a secret leaked into the log: %q", l)
			}
		}
	}
	for _, s := range forms {
		if !runnertest.Masked(masked, s) {
			t.Errorf("%q was never masked; masks: %v", s, masked)
		}
		if strings.Contains(files, s) {
			t.Errorf("%q leaked into the outputs or the summary", s)
		}
	}
}

// TestActionMasksBeforeAnythingElse: the token of a kubeconfig input, in every form, is
// registered with ::add-mask:: before any other line, and appears nowhere else even when
// the run fails.
func TestActionMasksBeforeAnythingElse(t *testing.T) {
	t.Parallel()
	// (Refused, the cluster is Unreachable after its probe's tries, 1.5s: the timeout is only
	// a bound, far enough that a loaded machine's run does not time out first.)
	f := newFakeEnv(t, map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_TIMEOUT": "30s"})
	if code := Run(context.Background(), []string{"action"}, f.env()); code != 1 {
		t.Errorf("Run() = %d, want 1 (nothing listens on 127.0.0.1:1)", code)
	}
	out := f.file(t, f.output)
	assertNoLeak(t, f.stdout.String(), out+f.file(t, f.summary), tokenForms)
	if !strings.Contains(out, `"verdict":"Unreachable"`) {
		t.Errorf("results output lacks the Unreachable verdict:\n%s", out)
	}
}

func TestCLIUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{name: "no args outside actions", args: nil, wantCode: 2, wantErr: "Usage"},
		{name: "unknown command", args: []string{"frobnicate"}, wantCode: 2, wantErr: `unknown command "frobnicate"`},
		{name: "bad output", args: []string{"verify", "--resource", "ks/a", "-o", "yaml"}, wantCode: 2, wantErr: "-o must be text, json, markdown or junit"},
		{name: "positional object", args: []string{"verify", "ks/a"}, wantCode: 2, wantErr: "no kubeconfig: pass --kubeconfig PATH or set KUBECONFIG"},
		{name: "missing kubeconfig", args: []string{"verify", "--resource", "ks/a", "--kubeconfig", "/nonexistent/kubeconfig"}, wantCode: 2, wantErr: "/nonexistent/kubeconfig"},
		{name: "a --cluster line that is not https", args: []string{"verify", "--resource", "ks/a", "--cluster", "prod=oidc:http://prod.example.com audience=k8s"}, wantCode: 2,
			wantErr: `--cluster line 1: "prod=oidc:http://prod.example.com audience=k8s": oidc: the server http://prod.example.com is not https`},
		{name: "version", args: []string{"version"}, wantCode: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			env := Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, ReadFile: os.ReadFile, Clock: time.Now}
			if got := Run(context.Background(), tt.args, env); got != tt.wantCode {
				t.Errorf("Run(%q) = %d, want %d; stderr: %s", tt.args, got, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("Run(%q) stderr = %q, want it to contain %q", tt.args, stderr.String(), tt.wantErr)
			}
		})
	}
}

// TestVersion: the version command and the root's --version flag print the same line, and
// --help wins over --version, as it did when the flag was cobra's own.
func TestVersion(t *testing.T) {
	t.Parallel()
	version := "app-status " + programVersion() + "\n"
	tests := []struct {
		args       []string
		wantStdout string
	}{
		{args: []string{"version"}, wantStdout: version},
		{args: []string{"--version"}, wantStdout: version},
		{args: []string{"-v"}, wantStdout: version},
		{args: []string{"--version=true"}, wantStdout: version},
		{args: []string{"--version", "--help"}},
		{args: []string{"--version=false"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			env := Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, ReadFile: os.ReadFile, Clock: time.Now}
			if got := Run(t.Context(), tt.args, env); got != 0 {
				t.Errorf("Run(%q) = %d, want 0; stderr: %s", tt.args, got, stderr.String())
			}
			got := stdout.String()
			if tt.wantStdout == "" {
				// The help, not the version.
				if !strings.HasPrefix(got, "app-status verifies") {
					t.Errorf("Run(%q) stdout = %.80q..., want the help", tt.args, got)
				}
				return
			}
			if got != tt.wantStdout {
				t.Errorf("Run(%q) stdout = %q, want %q", tt.args, got, tt.wantStdout)
			}
		})
	}
}

func TestReconcileSetting(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]verify.ReconcileMode{
		"": verify.ReconcileOff, "false": verify.ReconcileOff, "no": verify.ReconcileOff,
		"true": verify.ReconcileOn, " TRUE ": verify.ReconcileOn, "force": verify.ReconcileForce,
	} {
		got, err := parseReconcile(in)
		if err != nil || got != want {
			t.Errorf("parseReconcile(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := parseReconcile("always"); err == nil || !strings.Contains(err.Error(), "use false, true or force") {
		t.Errorf("parseReconcile(always): %v, want an error naming the accepted values", err)
	}
	for args, want := range map[string]verify.ReconcileMode{
		"--reconcile": verify.ReconcileOn, "--reconcile=force": verify.ReconcileForce, "--reconcile=false": verify.ReconcileOff,
	} {
		var o cliOptions
		fs := newFlagSet("verify", &o)
		fs.SetOutput(io.Discard)
		if err := fs.Parse([]string{args}); err != nil || o.reconcile != want {
			t.Errorf("%s: %q, %v; want %q", args, o.reconcile, err, want)
		}
	}
}
