package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/verify"
)

// healthyCluster starts a fake API server whose app is applied and Current, and returns its
// kubeconfig.
func healthyCluster(t *testing.T) string {
	t.Helper()
	resources, objects := fakeapi.App("app", "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", 3)
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(s.Close)
	return fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\nusers: [{name: u, user: {token: tok-0123456789}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", s.URL())
}

// progressLines splits a log into the progress lines a person follows and the steps (marked ·).
func progressLines(log string) (shown, steps []string) {
	for _, l := range strings.Split(log, "\n") {
		switch {
		case strings.HasPrefix(l, "[") && strings.Contains(l, "] · "):
			steps = append(steps, l)
		case strings.HasPrefix(l, "["):
			shown = append(shown, l)
		}
	}
	return shown, steps
}

// TestVerboseProgress: the CLI prints what a person follows a cluster by, and the run's
// internal steps too with --verbose; the action likewise when the runner's debug logging is on
// (RUNNER_DEBUG=1).
func TestVerboseProgress(t *testing.T) {
	t.Parallel()
	want := []string{
		"[   0.0s] … prod: connected",
		"[   0.0s] … prod: Kustomization/flux-system/app applied main@sha1:a1b2c3d",
		"[   0.0s] ✔ prod: 3 objects Current",
	}
	tests := []struct {
		name    string
		action  bool
		verbose bool
	}{
		{name: "cli"},
		{name: "cli --verbose", verbose: true},
		{name: "action", action: true},
		{name: "action with debug logging", action: true, verbose: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			kubeconfig := healthyCluster(t)
			f := newFakeEnv(t, map[string]string{"KC_PROD": kubeconfig})
			var code int
			if tt.action {
				f.vars["INPUT_CLUSTERS"], f.vars["INPUT_RESOURCE"], f.vars["INPUT_REVISION"], f.vars["INPUT_TIMEOUT"] = "prod=env:KC_PROD", "ks/app", "a1b2c3d4", "20s"
				if tt.verbose {
					f.vars["RUNNER_DEBUG"] = "1"
				}
				code = Run(context.Background(), []string{"action"}, f.env())
			} else {
				args := []string{"verify", "--clusters-file", clustersFile(t, t.TempDir(), "prod=env:KC_PROD\n", map[string]string{"KC_PROD": kubeconfig}),
					"--resource", "ks/app", "--revision", "a1b2c3d4", "--timeout", "20s"}
				if tt.verbose {
					args = append(args, "--verbose")
				}
				code = Run(context.Background(), args, f.env())
			}
			log := f.stdout.String() + f.stderr.String()
			if code != 0 {
				t.Fatalf("Run() = %d, want 0\n%s", code, log)
			}
			shown, steps := progressLines(log)
			if diff := cmp.Diff(want, shown); diff != "" {
				t.Errorf("progress a person follows (-want +got):\n%s\n%s", diff, log)
			}
			if hasSteps := slices.Contains(steps, "[   0.0s] · prod: connecting"); hasSteps != tt.verbose || (len(steps) > 0) != tt.verbose {
				t.Errorf("steps %q, want them only when verbose (%t)", steps, tt.verbose)
			}
		})
	}
}

// recorder records what an observer is told.
type recorder []string

func (r *recorder) Observe(cluster string, v result.Verdict, message string) {
	*r = append(*r, cluster+" "+string(v)+": "+message)
}

// TestActionProgressObserves: a deployment's description follows the cluster's state, never
// the run's internal steps that debug logging prints, and holds no secret.
func TestActionProgressObserves(t *testing.T) {
	t.Parallel()
	var printed []string
	var observed recorder
	progress := actionProgress(func(p verify.Progress) { printed = append(printed, p.Message) }, &observed,
		func(s string) string { return strings.ReplaceAll(s, "s3cr3t", "***") })
	for _, p := range []verify.Progress{
		{Cluster: "prod", Verdict: result.VerdictInProgress, Message: "connecting", Step: true},
		{Cluster: "prod", Verdict: result.VerdictInProgress, Message: "connected"},
		{Cluster: "prod", Verdict: result.VerdictInProgress, Message: "waiting for the list of pods in namespace my-app", Step: true},
		{Cluster: "prod", Verdict: result.VerdictInProgress, Message: "waiting for Deployment/my-app/web: token s3cr3t"},
		{Cluster: "prod", Verdict: result.VerdictCurrent, Message: "3 objects Current", Final: true},
	} {
		progress(p)
	}
	if len(printed) != 5 {
		t.Errorf("printed %q, want every change", printed)
	}
	want := recorder{"prod InProgress: connected", "prod InProgress: waiting for Deployment/my-app/web: token ***", "prod Current: 3 objects Current"}
	if diff := cmp.Diff(want, observed); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
}
