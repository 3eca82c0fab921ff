package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/filecommand"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/runnertest"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// The tests run the built binary the way GitHub runs the container: INPUT_* variables, the
// GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, and `action` as the argument action.yml gives.
var (
	bed    = testbed.NewShared(testbed.Options{Clusters: 3, Flux: true, Prefix: "action"})
	binary string
)

func TestMain(m *testing.M) {
	// The tests that run the engine in-process: as the binary does.
	verify.DiscardClientLogs()
	dir, err := os.MkdirTemp("", "app-status-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "app-status")
	build := exec.Command("go", "build", "-trimpath", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build app-status: %v\n%s", err, out)
		os.Exit(1)
	}
	if clouds, err = newCloudFakes(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	removeImage()
	bed.Close()
	clouds.Close()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

const commit = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"

// actionRun is one execution of the action.
type actionRun struct {
	exitCode int
	stdout   string
	outputs  map[string]string
	summary  string
	// afterSignal is how long the process took to exit after SIGTERM, when it was sent.
	afterSignal time.Duration
}

// runAction runs the binary as GitHub would, with the given inputs and extra environment.
// When signalWhen is not empty, SIGTERM is sent (a cancelled job) once the action's log shows
// it.
func runAction(t *testing.T, workspace string, inputs, env map[string]string, signalWhen string) actionRun {
	t.Helper()
	outFile := filepath.Join(workspace, "github_output")
	summaryFile := filepath.Join(workspace, "step_summary")
	for _, f := range []string{outFile, summaryFile} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(binary, "action")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + workspace,
		"GITHUB_ACTIONS=true", "GITHUB_WORKSPACE=" + workspace,
		"GITHUB_OUTPUT=" + outFile, "GITHUB_STEP_SUMMARY=" + summaryFile,
	}
	for k, v := range inputs {
		cmd.Env = append(cmd.Env, "INPUT_"+strings.ToUpper(k)+"="+v)
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdout := &syncBuffer{}
	cmd.Stdout = stdout
	cmd.Stderr = stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	signalled := make(chan struct{})
	var signalledAt time.Time
	if signalWhen != "" {
		go func() {
			defer close(signalled)
			if stdout.waitFor(signalWhen, ended) {
				signalledAt = time.Now()
				_ = cmd.Process.Signal(syscall.SIGTERM)
			} else {
				t.Errorf("the action ended before it was cancelled: its log never showed %q", signalWhen)
			}
		}()
	} else {
		close(signalled)
	}
	err := cmd.Wait()
	end := time.Now()
	close(ended)
	<-signalled
	run := readRun(t, err, stdout.String(), outFile, summaryFile)
	if !signalledAt.IsZero() {
		run.afterSignal = end.Sub(signalledAt)
	}
	return run
}

// readRun reads what the runner reads once the action's process (err from its Wait) has ended:
// its exit code, its log, the step outputs and the job summary.
func readRun(t *testing.T, err error, stdout, outFile, summaryFile string) actionRun {
	t.Helper()
	run := actionRun{stdout: stdout}
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		run.exitCode = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	outputs, err := filecommand.ParseOutputs(string(data))
	if err != nil {
		t.Fatalf("the runner could not read GITHUB_OUTPUT: %v\n%s", err, data)
	}
	run.outputs = outputs
	summary, err := os.ReadFile(summaryFile)
	if err != nil {
		t.Fatal(err)
	}
	run.summary = string(summary)
	return run
}

func kubeconfigSecrets(t *testing.T, kubeconfigs ...[]byte) []string {
	t.Helper()
	var secrets []string
	for _, kc := range kubeconfigs {
		for _, line := range strings.Split(string(kc), "\n") {
			line = strings.TrimSpace(line)
			for _, key := range []string{"client-key-data: ", "token: "} {
				if v, ok := strings.CutPrefix(line, key); ok {
					secrets = append(secrets, v)
				}
			}
		}
	}
	if len(secrets) == 0 {
		t.Fatal("test kubeconfigs hold no secrets to look for")
	}
	return secrets
}

func validateAgainstSchema(t *testing.T, doc string, ref string) {
	t.Helper()
	c := jsonschema.NewCompiler()
	schemaPath, _ := filepath.Abs(filepath.Join("..", "..", "schema", "results.schema.json"))
	sch, err := c.Compile(schemaPath + ref)
	if err != nil {
		t.Fatalf("compile schema: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, doc)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("output does not match %s%s: %v", schemaPath, ref, err)
	}
}

// TestActionOnThreeClusters: kubeconfigs from an env var (plain), an env var (base64) and a
// workspace file; two clusters roll out, one cannot pull its image. The step fails with
// exit 1, and every output, the summary and the annotations say exactly that.
func TestActionOnThreeClusters(t *testing.T) {
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := b.Namespace(t)
	for i, c := range b.Clusters {
		app := "web"
		if i == 2 {
			app = "web-broken"
		}
		if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, testbed.Testdata(t, "apps", app), commit); err != nil {
			t.Fatal(err)
		}
	}
	workspace := t.TempDir()
	if err := os.WriteFile(filepath.Join(workspace, "gamma.kubeconfig"), b.Clusters[2].Kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	run := runAction(t, workspace, map[string]string{
		"clusters":     "alpha=env:KC_ALPHA\nbeta=env:KC_BETA\n\n# the third from a file in the workspace\ngamma=file:gamma.kubeconfig\n",
		"resource":     "kustomization/" + ns,
		"revision":     commit[:7],
		"timeout":      "2m",
		"fail-fast":    "false",
		"workloads":    "true",
		"summary":      "true",
		"namespace":    "flux-system",
		"max-parallel": "3",
	}, map[string]string{
		"KC_ALPHA": string(b.Clusters[0].Kubeconfig),
		"KC_BETA":  base64.StdEncoding.EncodeToString(b.Clusters[1].Kubeconfig),
	}, "")

	if run.exitCode != 1 {
		t.Errorf("exit code = %d, want 1 (one cluster failed)\n%s", run.exitCode, run.stdout)
	}
	want := map[string]string{
		"status":          "failure",
		"ready-clusters":  `["alpha","beta"]`,
		"failed-clusters": `["gamma"]`,
	}
	for k, v := range want {
		if run.outputs[k] != v {
			t.Errorf("output %s = %q, want %q", k, run.outputs[k], v)
		}
	}
	var results []result.Cluster
	if err := json.Unmarshal([]byte(run.outputs["results"]), &results); err != nil {
		t.Fatalf("results output is not a JSON array of clusters: %v\n%s", err, run.outputs["results"])
	}
	validateAgainstSchema(t, run.outputs["results"], "#/$defs/results")
	validateAgainstSchema(t, run.outputs["report"], "")
	got := map[string]string{}
	for _, r := range results {
		got[r.Name] = string(r.Verdict) + "/" + string(r.Code)
	}
	if diff := cmp.Diff(map[string]string{"alpha": "Current/", "beta": "Current/", "gamma": "Failed/image-pull"}, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if !strings.Contains(run.summary, "2 of 3 clusters ready") || !strings.Contains(run.summary, "image-pull") {
		t.Errorf("summary lacks the headline or the failure code:\n%s", run.summary)
	}
	if !strings.Contains(run.stdout, "::error title=gamma::") {
		t.Errorf("no error annotation for gamma in the log:\n%s", run.stdout)
	}
	if strings.Contains(run.stdout, "::error title=alpha") {
		t.Errorf("an annotation for a Current cluster:\n%s", run.stdout)
	}
	assertMaskedFirst(t, run, kubeconfigSecrets(t, b.Clusters[0].Kubeconfig, b.Clusters[2].Kubeconfig))
	if _, err := time.ParseDuration(run.outputs["duration"]); err != nil {
		t.Errorf("duration output %q is not a duration: %v", run.outputs["duration"], err)
	}
}

// assertMaskedFirst checks that every secret is registered with ::add-mask:: before any other
// line, and appears nowhere else: not in the log, the outputs or the summary.
func assertMaskedFirst(t *testing.T, run actionRun, secrets []string) {
	t.Helper()
	lines := strings.Split(run.stdout, "\n")
	masked := map[string]bool{}
	seenOther := false
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, "::add-mask::"); ok {
			if seenOther {
				t.Errorf("::add-mask:: after other output: %q", l)
			}
			masked[v] = true
			continue
		}
		if l != "" {
			seenOther = true
		}
		for _, s := range secrets {
			if strings.Contains(l, s) {
				t.Errorf("a secret leaked into the log: %q", l)
			}
		}
	}
	for _, s := range secrets {
		if !runnertest.Masked(masked, s) {
			t.Errorf("secret %.8s… was never masked", s)
		}
		for name, v := range run.outputs {
			if strings.Contains(v, s) {
				t.Errorf("a secret leaked into output %s", name)
			}
		}
		if strings.Contains(run.summary, s) {
			t.Error("a secret leaked into the summary")
		}
	}
}

// TestActionHostileCluster: on a real cluster, a custom resource of the app whose condition
// message (written by any controller, or anyone who may write its status) carries a forged
// block of step outputs and a shell injection. The action's outputs read back, the way the
// runner reads them, to exactly its own outputs: the forgery adds none and changes none.
func TestActionHostileCluster(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	// kustomize-controller may dry-run the Widget before the API server serves its CRD
	// ("no matches for kind"), and tries again at retryInterval.
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns, RetryInterval: "2s"}, testbed.Testdata(t, "apps", "hostile-cr"), commit); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commit); err != nil {
		t.Fatal(err)
	}
	const forgery = "refused\n_GitHubActionsFileCommandDelimeter_\nstatus=success\nfailed-clusters=[]\nextra<<EOF\nowned\nEOF\n" +
		"::add-mask::nothing\n'; id; echo '"
	widgets := c.Dynamic.Resource(schema.GroupVersionResource{Group: "test.app-status.dev", Version: "v1", Resource: "widgets"}).Namespace(ns)
	w, err := widgets.Get(ctx, "gadget", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Object["status"] = map[string]any{"conditions": []any{map[string]any{
		"type": "Stalled", "status": "True", "reason": "Forged", "message": forgery,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}}}
	if _, err := widgets.UpdateStatus(ctx, w, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	run := runAction(t, t.TempDir(), map[string]string{
		"clusters": "hostile=env:KC", "resource": "kustomization/" + ns, "revision": commit, "timeout": "1m",
	}, map[string]string{"KC": string(c.Kubeconfig)}, "")
	if run.exitCode != 1 {
		t.Errorf("exit code = %d, want 1\n%s", run.exitCode, run.stdout)
	}
	want := []string{"duration", "failed-clusters", "junit-file", "message", "ready-clusters", "report", "report-file", "results", "status"}
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(run.outputs))); diff != "" {
		t.Errorf("output names (-want +got):\n%s", diff)
	}
	if run.outputs["status"] != "failure" || run.outputs["failed-clusters"] != `["hostile"]` {
		t.Errorf("status %q, failed-clusters %q; want failure and [\"hostile\"]", run.outputs["status"], run.outputs["failed-clusters"])
	}
	if !strings.Contains(run.outputs["message"], "Widget/"+ns+"/gadget") || strings.ContainsAny(run.outputs["message"], "\r\n") {
		t.Errorf("message %q, want the Widget's failure on one line", run.outputs["message"])
	}
	for _, l := range strings.Split(run.stdout, "\n") {
		if strings.HasPrefix(l, "status=") || strings.HasPrefix(l, "::add-mask::nothing") || strings.HasPrefix(l, "'; id") {
			t.Errorf("the cluster's text started a log line: %q", l)
		}
	}
	validateAgainstSchema(t, run.outputs["results"], "#/$defs/results")
}

// TestActionCancelled: SIGTERM (what the runner sends when a job is cancelled) while waiting
// for a revision that never comes: the action still writes its outputs and summary, with the
// state each cluster had reached, and exits 1 at once.
func TestActionCancelled(t *testing.T) {
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := b.Namespace(t)
	c := b.Clusters[0]
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, testbed.Testdata(t, "apps", "web"), commit); err != nil {
		t.Fatal(err)
	}
	// Cancelled once it waits for the revision (Flux applied the app's own), as a job is
	// cancelled mid-wait.
	run := runAction(t, t.TempDir(), map[string]string{
		"kubeconfig": string(c.Kubeconfig),
		"resource":   "ks/" + ns,
		"revision":   "deadbeefcafe",
		"timeout":    "5m",
	}, nil, "waiting for deadbee")
	if run.exitCode != 1 {
		t.Errorf("exit code = %d, want 1\n%s", run.exitCode, run.stdout)
	}
	if run.afterSignal == 0 || run.afterSignal > 10*time.Second {
		t.Errorf("the action took %s to stop after SIGTERM", run.afterSignal)
	}
	if run.outputs["status"] != "failure" {
		t.Errorf("status output = %q, want failure\n%s", run.outputs["status"], run.stdout)
	}
	var results []result.Cluster
	if err := json.Unmarshal([]byte(run.outputs["results"]), &results); err != nil || len(results) != 1 {
		t.Fatalf("results output = %q (%v), want one cluster", run.outputs["results"], err)
	}
	if results[0].Verdict != result.VerdictCancelled || !strings.Contains(results[0].Message, "deadbee") {
		t.Errorf("verdict = %s (%q), want Cancelled saying what it waited for", results[0].Verdict, results[0].Message)
	}
	if !strings.Contains(run.summary, "Cancelled") {
		t.Errorf("summary does not show the cancellation:\n%s", run.summary)
	}
}
