package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// checkGolden compares got with testdata/cli/NAME.golden, or rewrites it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "cli", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -run %s -update)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// parsed is what a command line of verify gives runCLI, as text.
func parsed(o *cliOptions, args []string, parseErr error) string {
	var b strings.Builder
	if parseErr != nil {
		fmt.Fprintf(&b, "parse error: %v\n", parseErr)
		return b.String()
	}
	fmt.Fprintf(&b, "--resource: %q\narguments: %q\n", o.resources, args)
	fmt.Fprintf(&b, "namespace: %s\nrevision: %s\noutput: %s\n", o.namespace, o.revision, o.output)
	fmt.Fprintf(&b, "contexts: %q\nall-contexts: %t\nkubeconfig: %s\n", o.contexts, o.allContexts, o.kubeconfigPath)
	fmt.Fprintf(&b, "timeout: %s\nretry-grace: %s\nreconcile: %q\nfail-fast: %t\nworkloads: %t\n", o.timeout, o.retryGrace, o.reconcile, o.failFast, o.workloads)
	return b.String()
}

// parsedMerge is what a command line of merge gives runMerge, as text.
func parsedMerge(o *mergeOptions, args []string, parseErr error) string {
	if parseErr != nil {
		return fmt.Sprintf("parse error: %v\n", parseErr)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "reports: %q\n--resource: %q\nnamespace: %s\nrevision: %s\n", args, o.resources, o.namespace, o.revision)
	fmt.Fprintf(&b, "allow-foreign-reports: %t\noutput: %s\nonly-failed: %t\n", o.allowForeign, o.output, o.onlyFailed)
	fmt.Fprintf(&b, "evidence: %s\nsummary-file: %s\n", o.evidence, o.summaryFile)
	return b.String()
}

// TestCommandLineParsing: the forms of kubectl and flux (objects as arguments, -o and
// --output, flags before or after the arguments) and the forms of before (--resource, a flag
// with one dash, durations as seconds) give the flags and objects in the golden files.
func TestCommandLineParsing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
	}{
		{"positional-objects", []string{"verify", "ks/my-app", "hr/other", "--revision", "5f1c0ff"}},
		{"output-shorthand", []string{"verify", "ks/my-app", "-o", "json"}},
		{"output-equals", []string{"verify", "--output=json", "ks/my-app"}},
		{"flags-after-args", []string{"verify", "ks/my-app", "--context", "prod-eu", "--context", "prod-us", "--timeout", "300", "-n", "apps"}},
		{"resource-flag", []string{"verify", "--resource", "ks/x", "--resource", "kustomization/apps/y", "ks/z"}},
		{"one-dash-long-flags", []string{"verify", "-resource", "ks/x", "-timeout=90s", "-fail-fast", "-o", "junit"}},
		{"durations", []string{"verify", "ks/x", "--timeout", "15m", "--retry-grace", "90"}},
		{"all-contexts-reconcile", []string{"verify", "ks/x", "--all-contexts", "--reconcile", "--workloads=false"}},
		{"reconcile-force", []string{"get", "hr/x", "--reconcile=force", "--", "-not-a-flag"}},
		{"bad-duration", []string{"verify", "ks/x", "--timeout", "ten minutes"}},
		{"unknown-flag", []string{"verify", "ks/x", "--no-such-flag"}},
		{"output-two-dashes", []string{"verify", "ks/x", "--o", "json"}},
		// merge, as the repository calls it: hack/bench/shards.go, docs/shards.md and
		// docs/shard-benchmark.md, docs/cli.md, the tests of internal/cli.
		{"merge-bench", []string{"merge", "-o", "json", "shard-1.json", "shard-2.json"}},
		{"merge-pattern", []string{"merge", "shard-*.json"}},
		{"merge-foreign", []string{"merge", "--allow-foreign-reports", "--resource", "hr/app", "reports/shard.json"}},
		{"merge-evidence", []string{"merge", "--evidence", "no-logs", "-o", "markdown", "reports/*.json"}},
		// merge's forms of before (flag package) and those of verify.
		{"merge-one-dash-long-flags", []string{"merge", "-resource", "ks/a", "-resource=ks/b", "-namespace", "apps", "-revision=5f1c0ff", "-only-failed", "-summary-file", "s.md", "-o", "junit", "r.json"}},
		{"merge-flags-after-args", []string{"merge", "reports/*.json", "--resource", "ks/my-app", "--revision", "5f1c0ff", "--output=json", "-n", "apps", "--only-failed"}},
		{"merge-end-of-flags", []string{"merge", "--", "-report.json"}},
		{"merge-unknown-flag", []string{"merge", "r.json", "--no-such-flag"}},
		// exit, as deploy/tekton/task.yaml's last step calls it.
		{"exit-tekton", []string{"exit", "/tekton/steps/step-verify/exitCode"}},
		{"exit-end-of-flags", []string{"exit", "--", "-exitCode"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got string
			record := func(o *cliOptions, _ *pflag.FlagSet, args []string, parseErr error) int {
				got = parsed(o, args, parseErr)
				return 0
			}
			recordMerge := func(o *mergeOptions, args []string, parseErr error) int {
				got = parsedMerge(o, args, parseErr)
				return 0
			}
			recordExit := func(args []string, parseErr error) int {
				got = fmt.Sprintf("file: %q\nparse error: %v\n", args, parseErr)
				return 0
			}
			code := -1
			root := &cobra.Command{Use: "app-status", SilenceErrors: true, SilenceUsage: true}
			root.AddGroup(&cobra.Group{ID: groupRollout, Title: "Verify a rollout:"}, &cobra.Group{ID: groupCI, Title: "In CI pipelines:"})
			root.AddCommand(newVerifyCommand(false, &code, record), newVerifyCommand(true, &code, record), newMergeCommand(&code, recordMerge), newExitCommand(&code, recordExit))
			root.SetArgs(append(tt.args[:1:1], flagPackageSpellings(root, tt.args[0], tt.args[1:])...))
			if err := root.Execute(); err != nil && !errors.Is(err, errReported) {
				t.Fatalf("Execute() = %v", err)
			}
			checkGolden(t, "parse-"+tt.name, fmt.Sprintf("app-status %s\n\n%s", strings.Join(tt.args, " "), got))
		})
	}
}

// runText runs the program with args in an environment of no kubeconfig, and returns its exit
// code, stdout and stderr as text.
func runText(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, ReadFile: os.ReadFile, Clock: time.Now}
	code := Run(context.Background(), args, env)
	return fmt.Sprintf("$ app-status %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
}

// TestCommandLineErrors: a command line that is wrong is a line saying what is wrong and one
// pointing at --help, exit 2, before any cluster is read.
func TestCommandLineErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
	}{
		{"unknown-flag", []string{"verify", "ks/my-app", "--no-such-flag"}},
		{"unknown-shorthand", []string{"get", "-x", "ks/my-app"}},
		{"bad-duration", []string{"verify", "ks/my-app", "--timeout", "ten"}},
		{"missing-value", []string{"verify", "ks/my-app", "--revision"}},
		{"bad-output", []string{"verify", "ks/my-app", "-o", "yaml"}},
		{"no-object", []string{"verify", "--revision", "5f1c0ff"}},
		{"unknown-command", []string{"frobnicate"}},
		{"unknown-root-flag", []string{"--frobnicate"}},
		{"merge-unknown-flag", []string{"merge", "reports/*.json", "--no-such-flag"}},
		{"merge-bad-evidence", []string{"merge", "--evidence", "some", "reports/*.json"}},
		{"merge-bad-output", []string{"merge", "-o", "yaml", "reports/*.json"}},
		{"merge-no-report", []string{"merge", "--revision", "5f1c0ff"}},
		{"exit-unknown-flag", []string{"exit", "-x", "/tekton/steps/step-verify/exitCode"}},
		{"exit-no-file", []string{"exit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkGolden(t, "error-"+tt.name, runText(t, tt.args...))
		})
	}
}

// TestHelp: the help of each command, grouped by task, with examples.
func TestHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
	}{
		{"root", []string{"--help"}},
		{"verify", []string{"verify", "--help"}},
		{"get", []string{"get", "-h"}},
		{"completion", []string{"completion", "--help"}},
		{"merge", []string{"merge", "--help"}},
		{"merge-one-dash", []string{"merge", "-help"}},
		{"exit", []string{"exit", "--help"}},
		{"no-arguments", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkGolden(t, "help-"+tt.name, runText(t, tt.args...))
		})
	}
}

// TestCompletion: app-status completion SHELL prints the shell's completion script.
func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			checkGolden(t, "completion-"+shell, runText(t, "completion", shell))
		})
	}
}

// TestCompletionOfArguments: the shell asks app-status (__complete) for an argument's
// completions: the kinds' prefixes for an object, the formats for -o.
func TestCompletionOfArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "verify", ""}, "kustomization/\nks/\nhelmrelease/\nhr/\nresourceset/\nrset/\n:6\n"},
		{[]string{"__complete", "verify", "ks/x", "-o", ""}, "text\njson\nmarkdown\njunit\n:4\n"},
		{[]string{"__complete", "merge", "r.json", "-o", ""}, "text\njson\nmarkdown\njunit\n:4\n"},
		{[]string{"__complete", "merge", "--evidence", ""}, "full\nno-logs\nnone\n:4\n"},
		{[]string{"__complete", "merge", "--resource", ""}, "kustomization/\nks/\nhelmrelease/\nhr/\nresourceset/\nrset/\n:6\n"},
		{[]string{"__complete", "merge", "--allow"}, "--allow-foreign-reports\tmerge reports written in another CI run (another repository, workflow run or pipeline, or none) on purpose\n:4\n"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		env := Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Clock: time.Now}
		if code := Run(context.Background(), tt.args, env); code != 0 {
			t.Errorf("Run(%q) = %d\n%s", tt.args, code, stderr.String())
		}
		if diff := cmp.Diff(tt.want, stdout.String()); diff != "" {
			t.Errorf("Run(%q) stdout (-want +got):\n%s", tt.args, diff)
		}
	}
}
