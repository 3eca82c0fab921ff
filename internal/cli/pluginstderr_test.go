package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"github.com/org/app-status-action/internal/kubeconfig"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/testing/runnertest"
)

// pluginChild is set in the environment of the process TestExecPluginStderr starts, which
// runs the program as main does (TestPluginStderrChild).
const pluginChild = "APP_STATUS_TEST_PLUGIN_CHILD"

// pluginLate holds the secret the child writes to its standard error after its run has ended.
const pluginLate = "APP_STATUS_TEST_PLUGIN_LATE"

// TestExecPluginStderr (attacker): an exec credential plugin that client-go runs writes to the
// process's standard error, which the runner reads as the step's log: there, a line a plugin
// prints ("::warning::", "##[stop-commands]", "::add-mask::") would be a command, and a
// secret it echoes would be shown. The program runs in a process of its own, with its real
// standard output and error, as a CI step runs it: the CLI in GitLab (a --cluster line, whose
// plugins run) and the action with allow-exec. Read as the runner reads them, neither holds a
// command of the plugin's; its text reaches the log, broken, and the secret of its env does
// not.
func TestExecPluginStderr(t *testing.T) {
	const rev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	resources, objects := fakeapi.App("app", rev, 3)
	api := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, TLS: &tls.Config{MinVersion: tls.VersionTLS12}})
	t.Cleanup(api.Close)
	const secret = "s3cr3t-api-token-0123456789abcdef"
	dir := t.TempDir()
	plugin := filepath.Join(dir, "get-token")
	script := "#!/bin/sh\n" +
		"printf '%s\\n' '::warning::plugin-warning-x' '##[stop-commands]plugin-stop' '::add-mask::plugin-mask' >&2\n" +
		`echo "plugin-echoes $API_TOKEN" >&2` + "\n" +
		`echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"exec-tok-0123456789"}}'` + "\n"
	if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil { //nolint:gosec // a test's plugin
		t.Fatal(err)
	}
	kubeconfig := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]\n"+
		"users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: %q, interactiveMode: Never, env: [{name: API_TOKEN, value: %s}]}}}]\n"+
		"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", api.URL(), plugin, secret)

	tests := []struct {
		name string
		vars []string
		args []string
	}{{
		name: "the CLI in GitLab",
		vars: []string{"GITLAB_CI=true", "CI=true"},
		args: []string{"verify", "--cluster", "c=env:KC", "ks/app", "--revision", "a1b2c3d4", "--timeout", "20s", "-o", "json"},
	}, {
		name: "the action with allow-exec",
		vars: []string{"GITHUB_ACTIONS=true", "GITHUB_OUTPUT=" + filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY=" + filepath.Join(dir, "summary"),
			"GITHUB_WORKSPACE=" + dir, "INPUT_CLUSTERS=c=env:KC", "INPUT_RESOURCE=ks/app", "INPUT_REVISION=a1b2c3d4", "INPUT_TIMEOUT=20s", "INPUT_ALLOW-EXEC=true"},
		args: []string{"action"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], append([]string{"-test.run=^TestPluginStderrChild$", "--"}, tt.args...)...) //nolint:gosec // the test binary itself
			cmd.Dir = dir
			cmd.Env = append([]string{pluginChild + "=1", pluginLate + "=" + secret, "PATH=" + os.Getenv("PATH"), "HOME=" + dir, "KC=" + kubeconfig}, tt.vars...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if err != nil {
				t.Fatalf("the program: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			log := stdout.String() + stderr.String()
			for _, c := range runnertest.Commands(log) {
				if strings.Contains(c.Line, "plugin-") {
					t.Errorf("the runner reads a command of the plugin's: %q", c.Line)
				}
			}
			if !strings.Contains(log, "plugin-warning-x") || !strings.Contains(log, "plugin-stop") {
				t.Errorf("the plugin's text is not in the log:\n%s", log)
			}
			// The action registers the secret as a mask first (its own command): elsewhere, the
			// log never holds it.
			for _, line := range strings.Split(log, "\n") {
				if strings.Contains(line, secret) && !strings.HasPrefix(line, "::add-mask::") {
					t.Errorf("the log holds the secret of the plugin's env: %q", line)
				}
			}
			if !strings.Contains(log, "plugin-echoes ") {
				t.Errorf("the plugin's line with the secret is not in the log:\n%s", log)
			}
			// A plugin that outlives its run (client-go cannot stop one) is still redacted.
			if !strings.Contains(log, "plugin-late ") {
				t.Errorf("the line written after the run is not in the log:\n%s", log)
			}
		})
	}
}

// TestPluginStderrChild runs the program as main does, with the arguments after "--", in the
// process TestExecPluginStderr starts.
func TestPluginStderrChild(t *testing.T) {
	if os.Getenv(pluginChild) == "" {
		t.Skip("the process of TestExecPluginStderr")
	}
	args := os.Args[slices.Index(os.Args, "--")+1:]
	code := Run(context.Background(), args, OSEnv())
	if code != 0 {
		os.Exit(10 + code)
	}
	// What a plugin still running after the run would write, then the wait for the route to
	// pass it on, as the end of a run waits: a flush line through the same pipe. (Bounded: a
	// route that no longer reads fails the test on the line missing, rather than hanging it.)
	_, _ = fmt.Fprintf(os.Stderr, "plugin-late %s\n", os.Getenv(pluginLate))
	if p := &pluginStderr; p.pipe != nil {
		if _, err := io.WriteString(p.pipe, "\n"+p.flush+"\n"); err == nil {
			select {
			case <-p.flushed:
			case <-time.After(30 * time.Second):
			}
		}
	}
	os.Exit(0)
}

// TestRelayLinesKeepsSecretsWhole: a line longer than the buffer is passed on in parts, and a
// secret across a part's end still reaches the redaction whole, wherever it falls; the parts
// put together are the line.
func TestRelayLinesKeepsSecretsWhole(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-token-abcdefgh"
	var secrets kubeconfig.Secrets
	secrets.Add(secret)
	for at := range 40 {
		text := strings.Repeat("x", at) + secret + strings.Repeat("y", 40) + "\nnext line " + secret + "\n"
		var parts []string
		relayLines(strings.NewReader(text), 16, secrets.Longest, secrets.Redact, func(s string) { parts = append(parts, s) })
		for _, p := range parts {
			if strings.Contains(p, "s3cr3t") || strings.Contains(p, "abcdefgh") {
				t.Errorf("secret at %d: part %q holds part of the secret", at, p)
			}
		}
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		if got, want := strings.Join(parts, ""), secrets.Redact(lines[0])+secrets.Redact(lines[1]); got != want {
			t.Errorf("secret at %d: parts %q put together are not the redacted lines %q", at, parts, want)
		}
	}
}
