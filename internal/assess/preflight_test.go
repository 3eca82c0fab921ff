package assess

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// controllerDeployment is a Flux controller's Deployment in flux-system as the Deployment
// controller reports it: spec.replicas, the replicas available, updated, and the Available
// condition (status, reason, since).
func controllerDeployment(t *testing.T, name string, replicas, available, updated int, availableStatus, reason, since string) *appsv1.Deployment {
	t.Helper()
	doc := `apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `, namespace: flux-system, generation: 3}
spec: {replicas: ` + itoa(replicas) + `}
status:
  observedGeneration: 3
  replicas: ` + itoa(max(replicas, available)) + `
  availableReplicas: ` + itoa(available) + `
  updatedReplicas: ` + itoa(updated) + `
  conditions:
  - {type: Available, status: "` + availableStatus + `", reason: ` + reason + `, message: "Deployment has minimum availability.", lastTransitionTime: "` + since + `"}`
	d := &appsv1.Deployment{}
	if err := yaml.Unmarshal([]byte(doc), d); err != nil {
		t.Fatal(err)
	}
	return d
}

func itoa(n int) string { return string(rune('0' + n)) }

// TestPreflight: a controller the tree needs that is scaled to zero fails the cluster at once
// (flux-unhealthy), one with no replica available once the run has seen it so for
// unavailableGrace; one it does not need is a warning; a rolling update with a replica still
// available, a restart or a Recreate rollout within the grace, or what could not be read,
// never fail.
func TestPreflight(t *testing.T) {
	t.Parallel()
	const long, recent = "2026-11-01T11:00:00Z", "2026-11-01T11:59:50Z" // fixtureNow is 12:00:00
	ksNeeds := ControllersFor("Kustomization/flux-system/app", flux.KindKustomization, PreflightObject{SourceKind: "GitRepository", SourceRead: true})
	healthy := func(name string) *appsv1.Deployment {
		return controllerDeployment(t, name, 1, 1, 1, "True", "MinimumReplicasAvailable", long)
	}
	deployments := func(ds ...*appsv1.Deployment) map[string]*appsv1.Deployment {
		m := map[string]*appsv1.Deployment{}
		for _, d := range ds {
			m[d.Name] = d
		}
		return m
	}
	type want struct {
		Code     result.Code
		Warnings int
		Notes    int
		// Retry is when the preflight asks to look again, from fixtureNow; 0 when never.
		Retry time.Duration
	}
	// ksDown: kustomize-controller with one replica, available or not since since.
	ksDown := func(available int, since string) PreflightInput {
		status, reason := "False", "MinimumReplicasUnavailable"
		if available > 0 {
			status, reason = "True", "MinimumReplicasAvailable"
		}
		return PreflightInput{Namespace: "flux-system", Deployments: deployments(healthy("source-controller"),
			controllerDeployment(t, "kustomize-controller", 1, available, 1, status, reason, since))}
	}
	// look is an earlier preflight of the same run, ago before fixtureNow.
	type look struct {
		ago time.Duration
		in  PreflightInput
	}
	tests := []struct {
		name  string
		needs []ControllerNeed
		// earlier are the run's earlier looks, oldest first.
		earlier []look
		in      PreflightInput
		want    want
	}{
		{name: "all healthy", needs: ksNeeds,
			in: PreflightInput{Namespace: "flux-system", Deployments: deployments(healthy("kustomize-controller"), healthy("source-controller"), healthy("helm-controller"))}},
		{name: "kustomize-controller scaled to zero", needs: ksNeeds,
			in:   PreflightInput{Namespace: "flux-system", Deployments: deployments(controllerDeployment(t, "kustomize-controller", 0, 0, 0, "True", "MinimumReplicasAvailable", long), healthy("source-controller"))},
			want: want{Code: result.CodeFluxUnhealthy}},
		{name: "kustomize-controller crash-looping for long, the run's first look", needs: ksNeeds,
			in: ksDown(0, long), want: want{Notes: 1, Retry: 15 * time.Second}},
		{name: "kustomize-controller crash-looping, seen so by the run for its grace", needs: ksNeeds,
			earlier: []look{{unavailableGrace, ksDown(0, long)}}, in: ksDown(0, long),
			want: want{Code: result.CodeFluxUnhealthy}},
		{name: "kustomize-controller restarting, within its grace", needs: ksNeeds,
			earlier: []look{{unavailableGrace - time.Second, ksDown(0, recent)}}, in: ksDown(0, recent),
			want: want{Notes: 1, Retry: time.Second}},
		{name: "HA: one replica Pending for an hour, the other just restarted", needs: ksNeeds,
			in: PreflightInput{Namespace: "flux-system", Deployments: deployments(healthy("source-controller"),
				controllerDeployment(t, "kustomize-controller", 2, 0, 2, "False", "MinimumReplicasUnavailable", long))},
			want: want{Notes: 1, Retry: 15 * time.Second}},
		{name: "a Flux upgrade of source-controller (Recreate): 0 available for 90 s", needs: ksNeeds,
			earlier: []look{
				{100 * time.Second, PreflightInput{Namespace: "flux-system", Deployments: deployments(healthy("kustomize-controller"), healthy("source-controller"))}},
				{90 * time.Second, PreflightInput{Namespace: "flux-system", Deployments: deployments(healthy("kustomize-controller"),
					controllerDeployment(t, "source-controller", 1, 0, 0, "False", "MinimumReplicasUnavailable", "2026-11-01T11:58:30Z"))}},
			},
			in: PreflightInput{Namespace: "flux-system", Deployments: deployments(healthy("kustomize-controller"),
				controllerDeployment(t, "source-controller", 1, 0, 1, "False", "MinimumReplicasUnavailable", "2026-11-01T11:58:30Z"))},
			want: want{Notes: 1, Retry: 15 * time.Second}},
		{name: "available again in between: a new grace", needs: ksNeeds,
			earlier: []look{{3 * time.Minute, ksDown(0, long)}, {time.Minute, ksDown(1, long)}}, in: ksDown(0, recent),
			want: want{Notes: 1, Retry: 15 * time.Second}},
		{name: "back within 10 s, seen so by the look 15 s on, down again at 2 min: a new grace", needs: ksNeeds,
			earlier: []look{{2 * time.Minute, ksDown(0, long)}, {2*time.Minute - 15*time.Second, ksDown(1, long)}}, in: ksDown(0, recent),
			want: want{Notes: 1, Retry: 15 * time.Second}},
		{name: "a rolling update with one pod still available", needs: ksNeeds,
			in: PreflightInput{Namespace: "flux-system", Deployments: deployments(controllerDeployment(t, "kustomize-controller", 1, 1, 0, "True", "MinimumReplicasAvailable", long), healthy("source-controller"))}},
		{name: "helm-controller down, not needed", needs: ksNeeds,
			in:   PreflightInput{Namespace: "flux-system", Deployments: deployments(healthy("kustomize-controller"), healthy("source-controller"), controllerDeployment(t, "helm-controller", 0, 0, 0, "True", "MinimumReplicasAvailable", long))},
			want: want{Warnings: 1}},
		{name: "helm-controller down, its HelmRelease Current",
			needs: ControllersNeeded([]result.FluxObject{
				{ID: "Kustomization/flux-system/app", Kind: "Kustomization", Verdict: result.VerdictInProgress},
				{ID: "HelmRelease/shop/web", Kind: "HelmRelease", Owner: "Kustomization/flux-system/app", Verdict: result.VerdictCurrent},
			}, false, func(result.FluxObject) PreflightObject { return PreflightObject{} }),
			in:   PreflightInput{Namespace: "flux-system", Deployments: deployments(healthy("kustomize-controller"), healthy("source-controller"), controllerDeployment(t, "helm-controller", 0, 0, 0, "True", "MinimumReplicasAvailable", long))},
			want: want{Warnings: 1}},
		{name: "a sharded Kustomization: its shard's controller down",
			needs: ControllersFor("Kustomization/flux-system/app", flux.KindKustomization, PreflightObject{Labels: map[string]string{ShardLabel: "shard1"}}),
			in: PreflightInput{Namespace: "flux-system", Deployments: deployments(healthy("kustomize-controller"),
				controllerDeployment(t, "kustomize-controller-shard1", 0, 0, 0, "True", "MinimumReplicasAvailable", long))},
			want: want{Code: result.CodeFluxUnhealthy}},
		{name: "a sharded Kustomization: the main controller down is not its",
			needs: ControllersFor("Kustomization/flux-system/app", flux.KindKustomization, PreflightObject{Labels: map[string]string{ShardLabel: "shard1"}}),
			in: PreflightInput{Namespace: "flux-system", Deployments: deployments(healthy("kustomize-controller-shard1"),
				controllerDeployment(t, "kustomize-controller", 0, 0, 0, "True", "MinimumReplicasAvailable", long))},
			want: want{Warnings: 1}},
		{name: "a sharded Kustomization, its source unsharded: the main source-controller down",
			needs: ControllersFor("Kustomization/flux-system/app", flux.KindKustomization,
				PreflightObject{Labels: map[string]string{ShardLabel: "shard1"}, SourceKind: "GitRepository", SourceRead: true}),
			in: PreflightInput{Namespace: "flux-system", Deployments: deployments(healthy("kustomize-controller-shard1"),
				controllerDeployment(t, "source-controller", 0, 0, 0, "True", "MinimumReplicasAvailable", long))},
			want: want{Code: result.CodeFluxUnhealthy}},
		{name: "an unsharded Kustomization, its source sharded: the source's shard down",
			needs: ControllersFor("Kustomization/flux-system/app", flux.KindKustomization,
				PreflightObject{SourceKind: "GitRepository", SourceRead: true, SourceLabels: map[string]string{ShardLabel: "shard1"}}),
			in: PreflightInput{Namespace: "flux-system", Deployments: deployments(healthy("kustomize-controller"), healthy("source-controller"),
				controllerDeployment(t, "source-controller-shard1", 0, 0, 0, "True", "MinimumReplicasAvailable", long))},
			want: want{Code: result.CodeFluxUnhealthy}},
		{name: "its source not read: its shard unknown, source-controller not judged as needed",
			needs: ControllersFor("Kustomization/flux-system/app", flux.KindKustomization, PreflightObject{SourceKind: "GitRepository"}),
			in: PreflightInput{Namespace: "flux-system", Deployments: deployments(healthy("kustomize-controller"),
				controllerDeployment(t, "source-controller", 0, 0, 0, "True", "MinimumReplicasAvailable", long))},
			want: want{Warnings: 1}},
		{name: "Flux runs elsewhere: no Deployments found", needs: ksNeeds,
			in:   PreflightInput{Namespace: "flux-system", Deployments: deployments()},
			want: want{Notes: 2}},
		{name: "the Deployments could not be read (403)", needs: ksNeeds,
			in:   PreflightInput{Namespace: "flux-system", Notes: []string{"preflight could not read: deployments in flux-system: forbidden"}},
			want: want{Notes: 1}},
		{name: "the FluxReport alone: kustomize-controller scaled to zero", needs: ksNeeds,
			in: PreflightInput{Namespace: "flux-system", Report: []ReportComponent{
				{Name: "kustomize-controller", Ready: true, Status: "Current Deployment is available. Replicas: 0"},
				{Name: "source-controller", Ready: true, Status: "Current Deployment is available. Replicas: 1"}}},
			want: want{Code: result.CodeFluxUnhealthy}},
		{name: "the FluxReport alone: a rollout in progress", needs: ksNeeds,
			in: PreflightInput{Namespace: "flux-system", Report: []ReportComponent{
				{Name: "kustomize-controller", Ready: false, Status: "InProgress Deployment generation is 3, but latest observed generation is 2"},
				{Name: "source-controller", Ready: true, Status: "Current Deployment is available. Replicas: 1"}}}},
		{name: "the FluxReport alone: progress deadline exceeded", needs: ksNeeds,
			in: PreflightInput{Namespace: "flux-system", Report: []ReportComponent{
				{Name: "kustomize-controller", Ready: false, Status: "Failed Progress deadline exceeded"},
				{Name: "source-controller", Ready: true, Status: "Current Deployment is available. Replicas: 1"}}},
			want: want{Notes: 1}},
		{name: "the FluxReport alone: its status not computed", needs: ksNeeds,
			in: PreflightInput{Namespace: "flux-system", Report: []ReportComponent{
				{Name: "kustomize-controller", Ready: false, Status: "Failed to compute status: timeout"},
				{Name: "source-controller", Ready: true, Status: "Current Deployment is available. Replicas: 1"}}},
			want: want{Notes: 1}},
		{name: "a ResourceSet needs flux-operator", needs: ControllersFor("ResourceSet/flux-system/tenants", flux.KindResourceSet, PreflightObject{}),
			earlier: []look{{unavailableGrace, PreflightInput{Namespace: "flux-system", Deployments: deployments(controllerDeployment(t, "flux-operator", 1, 0, 1, "False", "MinimumReplicasUnavailable", long))}}},
			in:      PreflightInput{Namespace: "flux-system", Deployments: deployments(controllerDeployment(t, "flux-operator", 1, 0, 1, "False", "MinimumReplicasUnavailable", long))},
			want:    want{Code: result.CodeFluxUnhealthy}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mem := NewMemory()
			for _, l := range tt.earlier {
				Preflight(tt.needs, l.in, mem, fixtureNow.Add(-l.ago))
			}
			r := Preflight(tt.needs, tt.in, mem, fixtureNow)
			got := want{Warnings: len(r.Warnings), Notes: len(r.Notes)}
			if !r.RetryAt.IsZero() {
				got.Retry = r.RetryAt.Sub(fixtureNow)
			}
			if r.Fatal != nil {
				got.Code = r.Fatal.Code
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Preflight (-want +got):\n%s\nfatal %+v\nwarnings %q\nnotes %q", diff, r.Fatal, r.Warnings, r.Notes)
			}
		})
	}
}

// TestPreflightBoundsItsTexts: a Deployment's condition message and a FluxReport's status are
// untrusted text of any length; every warning, note and failure message the preflight makes
// of them is one line of at most preflightRunes runes.
func TestPreflightBoundsItsTexts(t *testing.T) {
	t.Parallel()
	const long = "2026-11-01T11:00:00Z"
	huge := strings.Repeat("line\n\x1b[31m", 40<<10)
	withMessage := func(d *appsv1.Deployment) *appsv1.Deployment {
		d.Status.Conditions[0].Message = huge
		return d
	}
	ksNeeds := ControllersFor("Kustomization/flux-system/app", flux.KindKustomization, PreflightObject{SourceKind: "GitRepository", SourceRead: true})
	tests := []struct {
		name string
		in   PreflightInput
	}{
		{name: "a needed controller down for long", in: PreflightInput{Namespace: "flux-system", Deployments: map[string]*appsv1.Deployment{
			"kustomize-controller": withMessage(controllerDeployment(t, "kustomize-controller", 1, 0, 1, "False", "MinimumReplicasUnavailable", long))}}},
		{name: "a needed controller within its grace", in: PreflightInput{Namespace: "flux-system", Deployments: map[string]*appsv1.Deployment{
			"kustomize-controller": withMessage(controllerDeployment(t, "kustomize-controller", 1, 0, 1, "False", "MinimumReplicasUnavailable", "2026-11-01T11:59:59Z"))}}},
		{name: "a controller not needed down", in: PreflightInput{Namespace: "flux-system", Deployments: map[string]*appsv1.Deployment{
			"helm-controller": withMessage(controllerDeployment(t, "helm-controller", 1, 0, 1, "False", "MinimumReplicasUnavailable", long))}}},
		{name: "a FluxReport's status", in: PreflightInput{Namespace: "flux-system", Report: []ReportComponent{
			{Name: "kustomize-controller", Status: "Failed " + huge}, {Name: "helm-controller", Status: "Failed " + huge}}}},
		{name: "what could not be read", in: PreflightInput{Namespace: "flux-system", Notes: []string{huge}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := Preflight(ksNeeds, tt.in, NewMemory(), fixtureNow)
			texts := slices.Concat(r.Warnings, r.Notes)
			if r.Fatal != nil {
				texts = append(texts, r.Fatal.Message)
			}
			if len(texts) == 0 {
				t.Fatalf("no text to check: %+v", r)
			}
			for _, text := range texts {
				if n := utf8.RuneCountInString(text); n > preflightRunes || strings.ContainsAny(text, "\n\x1b") {
					t.Errorf("a text of %d runes, or not on one line: %.80q…", n, text)
				}
			}
		})
	}
}

// TestControllersNeeded: only the Flux objects not yet Current need their controllers and
// their sources' for the rest of the run; the requested ones do while the run waits for Flux
// to handle its own reconcile request.
func TestControllersNeeded(t *testing.T) {
	t.Parallel()
	root := result.FluxObject{ID: "Kustomization/flux-system/app", Kind: "Kustomization", Namespace: "flux-system", Name: "app"}
	hr := result.FluxObject{ID: "HelmRelease/shop/web", Kind: "HelmRelease", Namespace: "shop", Name: "web", Owner: root.ID}
	at := func(fo result.FluxObject, v result.Verdict) result.FluxObject {
		fo.Verdict = v
		return fo
	}
	suspendedHR := at(hr, result.VerdictSuspended)
	suspendedHR.Suspended = true
	read := map[string]PreflightObject{
		root.ID: {SourceKind: "GitRepository", SourceRead: true},
		hr.ID:   {Labels: map[string]string{ShardLabel: "shard1"}, SourceKind: "OCIRepository", SourceRead: true, SourceLabels: map[string]string{ShardLabel: "shard1"}},
	}
	tests := []struct {
		name            string
		objects         []result.FluxObject
		awaitingRequest bool
		read            map[string]PreflightObject
		want            []ControllerNeed
	}{
		{name: "nothing Current: every controller",
			objects: []result.FluxObject{at(root, result.VerdictInProgress), at(hr, result.VerdictInProgress)}, read: read,
			want: []ControllerNeed{{"kustomize-controller", root.ID}, {"source-controller", root.ID}, {"helm-controller-shard1", hr.ID}, {"source-controller-shard1", hr.ID}}},
		{name: "a Current HelmRelease needs helm-controller no more",
			objects: []result.FluxObject{at(root, result.VerdictInProgress), at(hr, result.VerdictCurrent)}, read: read,
			want: []ControllerNeed{{"kustomize-controller", root.ID}, {"source-controller", root.ID}}},
		{name: "every object Current: no controller",
			objects: []result.FluxObject{at(root, result.VerdictCurrent), at(hr, result.VerdictCurrent)}, read: read},
		{name: "awaiting the run's reconcile request: the requested object's controllers",
			objects: []result.FluxObject{at(root, result.VerdictCurrent), at(hr, result.VerdictCurrent)}, awaitingRequest: true, read: read,
			want: []ControllerNeed{{"kustomize-controller", root.ID}, {"source-controller", root.ID}}},
		{name: "a suspended HelmRelease needs no controller: Flux does nothing for it",
			objects: []result.FluxObject{at(root, result.VerdictInProgress), suspendedHR}, read: read,
			want: []ControllerNeed{{"kustomize-controller", root.ID}, {"source-controller", root.ID}}},
		{name: "not read yet: its kind's controller",
			objects: []result.FluxObject{at(root, result.VerdictNotFound)},
			want:    []ControllerNeed{{"kustomize-controller", root.ID}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ControllersNeeded(tt.objects, tt.awaitingRequest, func(fo result.FluxObject) PreflightObject { return tt.read[fo.ID] })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ControllersNeeded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequestControllers: a reconcile request the run waits on needs its controller running;
// the tree names every controller but an ArtifactGenerator's (source-watcher), which the run
// asks for an ExternalArtifact the tree applies from: down, it would never handle the request.
func TestRequestControllers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		wait *ReconcileWait
		want []ControllerNeed
	}{
		{name: "no wait"},
		{name: "requests being sent", wait: &ReconcileWait{Sending: true}},
		{name: "a GitRepository's request: the tree names source-controller", wait: &ReconcileWait{ID: "GitRepository/flux-system/app"}},
		{name: "an ArtifactGenerator's request", wait: &ReconcileWait{ID: "ArtifactGenerator/flux-system/gen"},
			want: []ControllerNeed{{Controller: "source-watcher", For: "ArtifactGenerator/flux-system/gen"}}},
		{name: "a sharded ArtifactGenerator's request", wait: &ReconcileWait{ID: "ArtifactGenerator/flux-system/gen", Shard: "shard1"},
			want: []ControllerNeed{{Controller: "source-watcher-shard1", For: "ArtifactGenerator/flux-system/gen"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, RequestControllers(tt.wait)); diff != "" {
				t.Errorf("RequestControllers (-want +got):\n%s", diff)
			}
		})
	}
}
