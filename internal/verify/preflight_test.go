package verify_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/verify"
)

// The preflight's reads against a fake API server: the app's Kustomization is still in
// progress, so the run waits and the preflight reads the Flux controllers' Deployments in
// flux-system (and the Flux Operator's FluxReports). What it cannot read is a note; what it
// reads decides only when a controller the app needs is down.

// inProgressApp is fakeapi.App's app with its Kustomization still reconciling.
func inProgressApp() ([]fakeapi.Resource, []map[string]any) {
	resources, objects := fakeapi.App("app", fakeRevision, 3)
	status := objects[0]["status"].(map[string]any)
	status["conditions"] = []any{map[string]any{"type": "Ready", "status": "Unknown", "reason": "Progressing",
		"message": "Reconciliation in progress", "observedGeneration": int64(1)}}
	return resources, objects
}

// fluxController is a Flux controller's Deployment in flux-system: replicas wanted, available,
// and its Available condition's status, since 2026-01-01 (long past), and message.
func fluxController(name string, replicas, available int64, availableStatus, message string) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "flux-system", "generation": int64(2), "resourceVersion": "7",
			"labels": map[string]any{"app.kubernetes.io/part-of": "flux", "app.kubernetes.io/component": name}},
		"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": map[string]any{"app": name}}},
		"status": map[string]any{"observedGeneration": int64(2), "replicas": replicas, "availableReplicas": available, "updatedReplicas": replicas,
			"conditions": []any{map[string]any{"type": "Available", "status": availableStatus, "reason": "MinimumReplicasAvailable",
				"message": message, "lastTransitionTime": "2026-01-01T00:00:00Z", "lastUpdateTime": "2026-01-01T00:00:00Z"}}},
	}
}

func healthyController(name string) map[string]any {
	return fluxController(name, 1, 1, "True", "Deployment has minimum availability.")
}

func TestPreflightReads(t *testing.T) {
	t.Parallel()
	const hostile = "<script>alert(1)</script>\n::error::pwned @org/team ##[group]x"
	healthy := []map[string]any{healthyController("source-controller"), healthyController("kustomize-controller"), healthyController("helm-controller")}
	scaledToZero := []map[string]any{healthyController("source-controller"), fluxController("kustomize-controller", 0, 0, "True", "Deployment has minimum availability.")}
	tests := []struct {
		name        string
		absent      bool // the Kustomization is not there (yet)
		controllers []map[string]any
		refusals    []fakeapi.Refusal
		timeout     time.Duration
		verdict     result.Verdict
		code        result.Code
		message     string // in the cluster's message
		notes       []string
		warnings    []string
		within      time.Duration
		hostile     bool // the controller's text is hostile: each exit must escape it
	}{
		{name: "healthy, no Flux Operator", controllers: healthy, timeout: 2 * time.Second, verdict: result.VerdictTimeout},
		{name: "kustomize-controller scaled to zero", controllers: scaledToZero, timeout: 20 * time.Second,
			verdict: result.VerdictFailed, code: result.CodeFluxUnhealthy, within: 3 * time.Second,
			message: "kustomize-controller in flux-system is not available: scaled to zero (spec.replicas: 0); it must reconcile Kustomization/flux-system/app"},
		{name: "kustomize-controller scaled to zero, the Kustomization not there yet", absent: true, controllers: scaledToZero, timeout: 20 * time.Second,
			verdict: result.VerdictFailed, code: result.CodeFluxUnhealthy, within: 3 * time.Second,
			message: "kustomize-controller in flux-system is not available: scaled to zero (spec.replicas: 0); it must reconcile Kustomization/flux-system/app"},
		{name: "helm-controller scaled to zero, not needed", timeout: 2 * time.Second, verdict: result.VerdictTimeout,
			controllers: []map[string]any{healthyController("source-controller"), healthyController("kustomize-controller"), fluxController("helm-controller", 0, 0, "True", "")},
			warnings:    []string{"helm-controller in flux-system is not available (scaled to zero (spec.replicas: 0)); this app does not need it"}},
		{name: "Deployments in flux-system forbidden", controllers: scaledToZero, timeout: 2 * time.Second, verdict: result.VerdictTimeout,
			refusals: []fakeapi.Refusal{{Plural: "deployments", Namespace: "flux-system", Code: http.StatusForbidden}},
			notes:    []string{"preflight could not read the Flux controllers' Deployments in flux-system: " + `deployments.apps is forbidden`}},
		{name: "Deployments in flux-system not found", controllers: scaledToZero, timeout: 2 * time.Second, verdict: result.VerdictTimeout,
			refusals: []fakeapi.Refusal{{Plural: "deployments", Namespace: "flux-system", Code: http.StatusNotFound}},
			notes:    []string{"preflight could not read the Flux controllers' Deployments in flux-system: the server could not find the requested resource"}},
		{name: "FluxReports refused: the Deployments still decide", controllers: scaledToZero, timeout: 20 * time.Second,
			refusals: []fakeapi.Refusal{{Plural: "fluxreports", Code: http.StatusForbidden}},
			verdict:  result.VerdictFailed, code: result.CodeFluxUnhealthy, within: 3 * time.Second, message: "kustomize-controller in flux-system is not available",
			notes: []string{"preflight could not read the Flux Operator's FluxReports: fluxreports.fluxcd.controlplane.io is forbidden"}},
		{name: "a proxy that holds the Deployments: bounded, a note", controllers: scaledToZero, timeout: 7 * time.Second, verdict: result.VerdictTimeout,
			refusals: []fakeapi.Refusal{{Plural: "deployments", Namespace: "flux-system", Code: 0}},
			within:   9 * time.Second,
			notes:    []string{"preflight could not read the Flux controllers' Deployments in flux-system"}},
		{name: "kustomize-controller without a replica: a note within its grace", timeout: 2 * time.Second, verdict: result.VerdictTimeout,
			controllers: []map[string]any{healthyController("source-controller"), fluxController("kustomize-controller", 1, 0, "False", "pod crashed")},
			notes:       []string{"kustomize-controller in flux-system: no replica available (0 of 1) (MinimumReplicasAvailable: pod crashed); unavailable since "}},
		{name: "hostile text in a condition's message", timeout: 2 * time.Second, verdict: result.VerdictTimeout, hostile: true,
			controllers: []map[string]any{healthyController("source-controller"), fluxController("kustomize-controller", 1, 0, "False", hostile)},
			notes:       []string{"no replica available (0 of 1) (MinimumReplicasAvailable: " + sanitize.Compact(hostile) + ")"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resources, objects := inProgressApp()
			if tt.absent {
				objects = objects[1:]
			}
			s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: append(objects, tt.controllers...), Refusals: tt.refusals})
			t.Cleanup(s.Close)
			start := time.Now()
			run := verify.Run(context.Background(), fakeRequest([]verify.Target{fakeTarget("c", s)}, tt.timeout))
			took := time.Since(start)
			got := run.Results[0]
			if got.Verdict != tt.verdict || got.Code != tt.code || !strings.Contains(got.Message, tt.message) {
				t.Errorf("verdict %s (%s): %q; want %s (%s) saying %q", got.Verdict, got.Code, got.Message, tt.verdict, tt.code, tt.message)
			}
			if tt.within > 0 && took > tt.within {
				t.Errorf("the verdict took %s, want it within %s", took, tt.within)
			}
			var notes, warnings []string
			if got.Preflight != nil {
				notes, warnings = got.Preflight.Notes, got.Preflight.Warnings
			}
			if !holdsAll(notes, tt.notes) || len(notes) != len(tt.notes) {
				t.Errorf("preflight notes %q, want %d, holding %q", notes, len(tt.notes), tt.notes)
			}
			if !holdsAll(warnings, tt.warnings) || len(warnings) != len(tt.warnings) {
				t.Errorf("preflight warnings %q, want %q", warnings, tt.warnings)
			}
			if tt.hostile {
				// The cluster's text is data; each exit escapes it. A note goes to the JSON
				// results only; the summary must not carry it raw either way.
				js, err := report.JSON(run)
				if err != nil || !strings.Contains(string(js), "pwned") {
					t.Errorf("the JSON results do not hold the controller's text (%v):\n%s", err, js)
				}
				md := report.Markdown(run, report.MarkdownOptions{})
				if strings.Contains(md, "<script>") || strings.Contains(md, "\n::error::") || strings.Contains(md, " @org/team") {
					t.Errorf("the summary carries the controller's text unescaped:\n%s", md)
				}
				// The runner's log: the progress line, through the writer the action logs with.
				line := sanitize.CommandsText(report.ProgressLine(time.Second, got.Name, got.Verdict, true, false, got.Message))
				if strings.Contains(line, "\n::") || strings.Contains(line, "##[") {
					t.Errorf("the log line carries a workflow command: %q", line)
				}
			}
		})
	}
}

// holdsAll reports whether each of want is a prefix or part of one of got, in order.
func holdsAll(got, want []string) bool {
	for i, w := range want {
		if i >= len(got) || !strings.Contains(got[i], w) {
			return false
		}
	}
	return true
}
