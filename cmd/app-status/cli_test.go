package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
)

// runCLI runs the built binary as a person would at a terminal.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// TestCLIVerifyAndGet: the CLI gives the same verdicts as the action: verify -o json prints the
// report document (schema-valid), progress goes to stderr, and get takes a snapshot without
// waiting (InProgress while a revision is not applied yet).
func TestCLIVerifyAndGet(t *testing.T) {
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := b.Namespace(t)
	var lines []string
	for i, c := range b.Clusters[:2] {
		if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, testbed.Testdata(t, "apps", "web"), commit); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("c%d=file:%s", i+1, c.KubeconfigPath))
	}
	clustersFile := filepath.Join(t.TempDir(), "clusters.txt")
	if err := os.WriteFile(clustersFile, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runCLI(t, "verify", "--clusters-file", clustersFile, "--resource", "ks/"+ns, "--revision", "main@sha1:"+commit, "--timeout", "2m", "-o", "json")
	if code != 0 {
		t.Fatalf("verify exit code = %d, want 0\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	validateAgainstSchema(t, stdout, "")
	var run result.Run
	if err := json.Unmarshal([]byte(stdout), &run); err != nil {
		t.Fatal(err)
	}
	got := map[string]result.Verdict{}
	for _, c := range run.Results {
		got[c.Name] = c.Verdict
	}
	if diff := cmp.Diff(map[string]result.Verdict{"c1": result.VerdictCurrent, "c2": result.VerdictCurrent}, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if !strings.Contains(stderr, "✔ c1:") || !strings.Contains(stderr, "✔ c2:") {
		t.Errorf("progress on stderr lacks the final lines:\n%s", stderr)
	}

	code, stdout, _ = runCLI(t, "get", "--clusters-file", clustersFile, "--resource", "ks/"+ns, "-o", "text")
	if code != 0 || !strings.Contains(stdout, "c1") || !strings.Contains(stdout, "Current") {
		t.Errorf("get = %d\n%s, want 0 and a table with c1 Current", code, stdout)
	}

	// A snapshot while the expected revision is not applied: InProgress at once, exit 1.
	start := time.Now()
	code, stdout, _ = runCLI(t, "get", "--clusters-file", clustersFile, "--resource", "ks/"+ns, "--revision", "0123456789abcdef", "-o", "json", "--quiet")
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("get took %s: a snapshot must not wait", took)
	}
	if code != 1 {
		t.Errorf("get for an unapplied revision exit code = %d, want 1", code)
	}
	if err := json.Unmarshal([]byte(stdout), &run); err != nil {
		t.Fatal(err)
	}
	for _, c := range run.Results {
		if c.Verdict != result.VerdictInProgress || !strings.Contains(c.Message, "0123456") {
			t.Errorf("get %s = %s (%q), want InProgress naming the awaited revision", c.Name, c.Verdict, c.Message)
		}
	}
}

// TestCLIVerifyPositionalCurrentContext: `app-status verify ks/NAME -o json`, the object as an
// argument as kubectl and flux take it, with a KUBECONFIG of two clusters' files: the files
// are merged as kubectl merges them, and the current context alone (the first file's) is
// verified.
func TestCLIVerifyPositionalCurrentContext(t *testing.T) {
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := b.Namespace(t)
	first, second := b.Clusters[0], b.Clusters[1]
	if _, err := first.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, testbed.Testdata(t, "apps", "web"), commit); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(first.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "verify", "ks/"+ns, "--revision", "main@sha1:"+commit, "--timeout", "2m", "-o", "json")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"KUBECONFIG=" + first.KubeconfigPath + string(filepath.ListSeparator) + second.KubeconfigPath}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("verify: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	validateAgainstSchema(t, stdout.String(), "")
	var run result.Run
	if err := json.Unmarshal(stdout.Bytes(), &run); err != nil {
		t.Fatal(err)
	}
	got := map[string]result.Verdict{}
	for _, c := range run.Results {
		got[c.Name] = c.Verdict
	}
	if diff := cmp.Diff(map[string]result.Verdict{cfg.CurrentContext: result.VerdictCurrent}, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}
