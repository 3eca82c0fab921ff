package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
		Getenv:   func(k string) string { return f.vars[k] },
		ReadFile: os.ReadFile,
		Clock:    func() time.Time { return time.Unix(1700000000, 0) },
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
			name:   "bad revision",
			inputs: map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_REVISION": "main branch"},
			want:   "input revision",
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
			if strings.Contains(log+f.file(t, f.output)+f.file(t, f.summary), "s3cr3t-t0ken") &&
				!strings.Contains(log, "::add-mask::s3cr3t-t0ken") {
				t.Errorf("the token leaked")
			}
			out := f.file(t, f.output)
			if !strings.Contains(out, "status<<") || !strings.Contains(out, "\nfailure\n") {
				t.Errorf("status output not written as failure:\n%s", out)
			}
			if sum := f.file(t, f.summary); !strings.Contains(sum, "Bad input") || !strings.Contains(sum, tt.want) {
				t.Errorf("summary does not explain the bad input:\n%s", sum)
			}
		})
	}
}

// TestActionMasksBeforeAnythingElse: the token of a kubeconfig input is registered with
// ::add-mask:: on the first line, and appears nowhere else even when the run fails.
func TestActionMasksBeforeAnythingElse(t *testing.T) {
	t.Parallel()
	f := newFakeEnv(t, map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_TIMEOUT": "3s"})
	if code := Run(context.Background(), []string{"action"}, f.env()); code != 1 {
		t.Errorf("Run() = %d, want 1 (nothing listens on 127.0.0.1:1)", code)
	}
	lines := strings.Split(f.stdout.String(), "\n")
	if lines[0] != "::add-mask::s3cr3t-t0ken-value-that-must-never-leak" {
		t.Errorf("first line = %q, want the token's mask", lines[0])
	}
	for _, l := range lines[1:] {
		if strings.Contains(l, "s3cr3t") {
			t.Errorf("token leaked on line %q", l)
		}
	}
	out := f.file(t, f.output)
	if strings.Contains(out, "s3cr3t") {
		t.Error("token leaked into the outputs")
	}
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
		{name: "bad output", args: []string{"verify", "--resource", "ks/a", "-o", "yaml"}, wantCode: 2, wantErr: "-o must be text, json or markdown"},
		{name: "stray argument", args: []string{"verify", "ks/a"}, wantCode: 2, wantErr: `unexpected argument "ks/a"`},
		{name: "missing kubeconfig", args: []string{"verify", "--resource", "ks/a", "--kubeconfig", "/nonexistent/kubeconfig"}, wantCode: 2, wantErr: "/nonexistent/kubeconfig"},
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
