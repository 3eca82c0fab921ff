package cli

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/result"
)

// TestPreflightWarningAnnotation: a cluster where a Flux controller the app does not need is
// down stays Current, and the step says so in a warning annotation and in the job summary;
// the controller's words come from a cluster (here through a leg's report) and forge no
// runner command.
func TestPreflightWarningAnnotation(t *testing.T) {
	t.Parallel()
	const rev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	dir := t.TempDir()
	c := result.Cluster{Name: "prod-eu", Verdict: result.VerdictCurrent, Flux: []result.FluxObject{},
		Objects: []result.Object{{ID: "Deployment/apps/web", Kind: "Deployment", Namespace: "apps", Name: "web", Status: result.ObjectCurrent}},
		Preflight: &result.Preflight{
			Warnings: []string{"helm-controller in flux-system is not available (OOMKilled\n::error::forged ##[error]forged); this app does not need it"},
			Notes:    []string{},
		}}
	writeReport(t, filepath.Join(dir, "app-status-eu.json"), result.NewRun([]string{"Kustomization/flux-system/app"}, rev, []result.Cluster{c}, time.Second))
	f := newFakeEnv(t, map[string]string{
		"INPUT_RESOURCE": "Kustomization/app",
		"INPUT_MERGE":    filepath.Join(dir, "*.json"),
		"INPUT_CLUSTERS": "prod-eu=env:UNUSED",
		"RUNNER_TEMP":    t.TempDir(),
	})
	if code := Run(context.Background(), []string{"action"}, f.env()); code != 0 {
		t.Fatalf("Run() = %d, want 0: a controller the app does not need changes no verdict\n%s", code, f.stdout.String())
	}
	log := f.stdout.String()
	if !strings.Contains(log, "::warning title=prod-eu%3A a Flux controller is down::helm-controller in flux-system is not available") {
		t.Errorf("no warning annotation naming the controller in the log:\n%s", log)
	}
	if m := regexp.MustCompile(`(?m)^::error|##\[error\]`).FindString(log); m != "" {
		t.Errorf("the controller's words forged a runner command (%q):\n%s", m, log)
	}
	if summary := f.file(t, f.summary); !strings.Contains(summary, "⚠️ prod-eu: helm-controller in flux-system is not available") {
		t.Errorf("the job summary does not name the controller that is down:\n%s", summary)
	}
}
