package assess

import (
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// The preflight: before a run waits for Flux, it checks that the Flux controllers that must
// act for the tree are running, so that a broken installation (a controller scaled to zero,
// crash-looping, evicted) is named at once rather than waited out as a slow app. It decides
// from what was read (the controllers' Deployments in the namespace Flux runs in, or the Flux
// Operator's FluxReport); reading them is internal/verify's. Evidence never decides against the
// app: what cannot be read is a note, a controller that cannot be found is a note, and a
// controller the tree does not need is a warning.

// ShardLabel is the label that gives a Flux object to a shard's controllers (Flux sharding):
// kustomize-controller-SHARD (by convention, as the Flux Operator names them) reconciles the
// objects labelled SHARD.
const ShardLabel = "sharding.fluxcd.io/key"

// The controllers the preflight knows, by their Deployment's name in a Flux installation.
const (
	kustomizeController = "kustomize-controller"
	helmController      = "helm-controller"
	sourceController    = "source-controller"
	operatorController  = "flux-operator"
)

// ControllerNeed is a controller that must act for an object of the tree.
type ControllerNeed struct {
	// Controller is the name of its Deployment: kustomize-controller, or
	// kustomize-controller-SHARD for a sharded object.
	Controller string
	// For is the ID of the first object of the tree that needs it.
	For string
}

// ControllersFor lists the controllers a Flux object of the tree needs: its own (by its kind
// and shard), and the source-controller of the source it applies from, by the source's own
// shard (unless that is an ExternalArtifact, which its producer writes, or the source was not
// read: its shard is not known).
func ControllersFor(id string, kind flux.Kind, obj PreflightObject) []ControllerNeed {
	shard := func(name string, labels map[string]string) string {
		if key := labels[ShardLabel]; key != "" {
			return name + "-" + key
		}
		return name
	}
	var needs []ControllerNeed
	switch kind {
	case flux.KindKustomization:
		needs = append(needs, ControllerNeed{Controller: shard(kustomizeController, obj.Labels), For: id})
	case flux.KindHelmRelease:
		needs = append(needs, ControllerNeed{Controller: shard(helmController, obj.Labels), For: id})
	case flux.KindResourceSet:
		needs = append(needs, ControllerNeed{Controller: operatorController, For: id})
	}
	if obj.SourceRead && obj.SourceKind != "" && obj.SourceKind != flux.KindExternalArtifact {
		needs = append(needs, ControllerNeed{Controller: shard(sourceController, obj.SourceLabels), For: id})
	}
	return needs
}

// sourceWatcher is the controller of ArtifactGenerators (Flux 2.7).
const sourceWatcher = "source-watcher"

// RequestControllers lists the controller a reconcile request the run waits on needs that the
// tree's objects do not name (ControllersFor): an ArtifactGenerator's, source-watcher (of its
// shard: source-watcher-KEY serves the generators labelled KEY), asked for an ExternalArtifact
// the tree applies from. Down, it would never handle the request, and the run would wait for
// it to its timeout. None for any other wait.
func RequestControllers(w *ReconcileWait) []ControllerNeed {
	if w == nil || !strings.HasPrefix(w.ID, flux.KindArtifactGenerator+"/") {
		return nil
	}
	name := sourceWatcher
	if w.Shard != "" {
		name += "-" + w.Shard
	}
	return []ControllerNeed{{Controller: name, For: w.ID}}
}

// PreflightObject is what was read of a Flux object of the tree for the preflight; the zero
// value for one not read (not there yet): whoever creates it, its kind's controller must
// reconcile it then (its shard, if it has one, is not known yet).
type PreflightObject struct {
	// Labels are the object's.
	Labels map[string]string
	// SourceKind is its source's kind, "" when it has none.
	SourceKind string
	// SourceRead says whether its source was read, SourceLabels are the source's labels: a
	// source is its own shard's (sharding.fluxcd.io/key on the source), whatever the
	// shard of the object that applies from it.
	SourceRead   bool
	SourceLabels map[string]string
}

// ControllersNeeded lists the controllers the Flux objects of the tree still need: those of
// the objects not yet Current, and their sources'. A Current object's controllers have done
// their part for this run (a Current HelmRelease needs helm-controller no more: the rollout
// of what it applied is the Deployment controller's), except the requested objects' while
// the run waits for Flux to handle its own reconcile request (awaitingRequest). A suspended
// object needs none: its controller returns at once for it (kustomize-controller v1.9.5,
// helm-controller v1.6.4), and the verdict rules judge its suspension. read returns what was
// read of one.
func ControllersNeeded(objects []result.FluxObject, awaitingRequest bool, read func(result.FluxObject) PreflightObject) []ControllerNeed {
	var needs []ControllerNeed
	for _, fo := range objects {
		if fo.Verdict == result.VerdictCurrent && (!awaitingRequest || fo.Owner != "") || fo.Suspended {
			continue
		}
		needs = append(needs, ControllersFor(fo.ID, flux.Kind(fo.Kind), read(fo))...)
	}
	return needs
}

// ReportComponent is one component of a FluxReport (spec.components, Flux Operator v0.59.0
// api/v1 FluxComponentStatus): Ready is kstatus's Current for its Deployment, Status
// "<kstatus status> <message>" (internal/reporter/components.go).
type ReportComponent struct {
	Name   string
	Ready  bool
	Status string
}

// PreflightInput is what was read of the Flux installation.
type PreflightInput struct {
	// Namespace is the namespace Flux runs in (the FluxReport's, else flux-system).
	Namespace string
	// Deployments are the Deployments of Namespace by name; nil when they could not be read.
	Deployments map[string]*appsv1.Deployment
	// Report are the FluxReport's components, when the Flux Operator reported; used when the
	// Deployments could not be read.
	Report []ReportComponent
	// Notes say what could not be read, and why.
	Notes []string
}

// PreflightResult is the preflight's decision.
type PreflightResult struct {
	// Fatal is set when a controller the tree needs is not available: flux-unhealthy.
	Fatal *Finding
	// Warnings name the controllers the tree does not need that are not available.
	Warnings []string
	// Notes say what the preflight could not judge.
	Notes []string
	// RetryAt is when to look again: a controller the tree needs that has no available
	// replica is given unavailableGrace, from when the run first saw it so, before it counts,
	// and is looked at again every unavailableRecheck meanwhile.
	RetryAt time.Time
}

// unavailableGrace is how long the run must have seen a controller with replicas but none
// available before it counts as down: a pod restarted after an out-of-memory kill, or a Flux
// upgrade of source-controller (strategy Recreate: the old pod terminates, then the new one's
// image is pulled and it starts), is back within it; a crash loop's back-off and an eviction
// with nowhere to go are not. It is measured from the run's own first look, not from the
// Deployment's Available condition: with several replicas, one Pending for an hour keeps
// that condition False since then, and the last one's restart would get no grace at all.
const unavailableGrace = 2 * time.Minute

// unavailableRecheck is how often the preflight looks again at a controller within its
// grace. Only a look that sees the controller available clears the run's memory of when it
// was first seen unavailable; with looks at the grace's end only, a controller back in 10 s
// and down again later would be judged from its first outage and fail at once.
const unavailableRecheck = 15 * time.Second

// knownControllers are the Deployments of a Flux installation the preflight judges when
// the tree does not need them (a warning).
var knownControllers = []string{sourceController, kustomizeController, helmController, "notification-controller",
	"image-reflector-controller", "image-automation-controller", sourceWatcher}

// preflightRunes bounds each of the preflight's texts: they quote a Deployment's condition
// message or a FluxReport's status, untrusted text of any length.
const preflightRunes = 400

// preflightText is s on one line, cut to preflightRunes.
func preflightText(s string) string {
	return sanitize.Truncate(sanitize.Compact(s), preflightRunes)
}

// Preflight decides whether the controllers the tree needs are available at now. mem keeps
// when the run first saw each controller unavailable, from one call to the next.
func Preflight(needs []ControllerNeed, in PreflightInput, mem *Memory, now time.Time) PreflightResult {
	r := preflight(needs, in, mem, now)
	if r.Fatal != nil {
		r.Fatal.Message = preflightText(r.Fatal.Message)
	}
	for _, texts := range [][]string{r.Warnings, r.Notes} {
		for i := range texts {
			texts[i] = preflightText(texts[i])
		}
	}
	return r
}

func preflight(needs []ControllerNeed, in PreflightInput, mem *Memory, now time.Time) PreflightResult {
	r := PreflightResult{Notes: slices.Clone(in.Notes)}
	needed := map[string]string{}
	var order []string
	for _, n := range needs {
		if _, ok := needed[n.Controller]; !ok {
			needed[n.Controller] = n.For
			order = append(order, n.Controller)
		}
	}
	if in.Deployments == nil && in.Report == nil {
		return r
	}
	for _, name := range order {
		down, state, retry := controllerDown(name, in, mem, now)
		switch {
		case state == "":
			r.Notes = append(r.Notes, fmt.Sprintf("%s: no Deployment %s in %s; the preflight did not judge it", needed[name], name, in.Namespace))
		case !down && strings.HasPrefix(state, reportState+"Failed"):
			r.Notes = append(r.Notes, fmt.Sprintf("%s in %s: %s; the FluxReport does not say whether a replica is available: the preflight did not judge it", name, in.Namespace, state))
		case down && retry.IsZero():
			if r.Fatal == nil {
				r.Fatal = &Finding{Verdict: result.VerdictFailed, Code: result.CodeFluxUnhealthy, Reason: "ControllerUnavailable",
					Message: fmt.Sprintf("%s in %s is not available: %s; it must reconcile %s", name, in.Namespace, state, needed[name])}
			}
		case down:
			r.Notes = append(r.Notes, fmt.Sprintf("%s in %s: %s; it counts as down at %s if still so", name, in.Namespace, state, retry.UTC().Format(time.RFC3339)))
			// Look again within unavailableRecheck, not only at the grace's end: a look that
			// sees it available forgets when it was first seen not, so a later outage gets
			// a grace of its own.
			next := retry
			if soon := now.Add(unavailableRecheck); soon.Before(next) {
				next = soon
			}
			if r.RetryAt.IsZero() || next.Before(r.RetryAt) {
				r.RetryAt = next
			}
		}
	}
	for _, name := range knownControllers {
		if _, ok := needed[name]; ok {
			continue
		}
		if down, state, _ := controllerDown(name, in, mem, now); down {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s in %s is not available (%s); this app does not need it", name, in.Namespace, state))
		}
	}
	return r
}

// reportState begins the state of a controller read from the FluxReport.
const reportState = "FluxReport: "

// controllerDown says whether the controller is not available, and its state ("" when it
// was not found); retry is set while it is within unavailableGrace. A rolling update with a
// replica still available is not down; nor is a report of one in progress.
func controllerDown(name string, in PreflightInput, mem *Memory, now time.Time) (down bool, state string, retry time.Time) {
	if in.Deployments != nil {
		d, ok := in.Deployments[name]
		if !ok {
			return false, "", time.Time{}
		}
		scaledDown, unavailable, state := deploymentState(d)
		key := in.Namespace + "/" + name
		switch {
		case scaledDown:
			return true, state, time.Time{}
		case !unavailable:
			delete(mem.controllerUnavailable, key)
			return false, state, time.Time{}
		}
		if mem.controllerUnavailable == nil {
			mem.controllerUnavailable = map[string]time.Time{}
		}
		since, seen := mem.controllerUnavailable[key]
		if !seen {
			since, mem.controllerUnavailable[key] = now, now
		}
		state += "; unavailable since " + since.UTC().Format(time.RFC3339) + " at least"
		if until := since.Add(unavailableGrace); now.Before(until) {
			return true, state, until
		}
		return true, state, time.Time{}
	}
	for _, c := range in.Report {
		if c.Name != name {
			continue
		}
		// Only a Deployment scaled to zero is down by the FluxReport alone: it says "Current
		// Deployment is available. Replicas: 0" for it. Its kstatus Failed ("Progress deadline
		// exceeded", "Failed to compute status") does not say whether a replica of the
		// previous version still serves, nor does InProgress.
		status := strings.TrimSpace(c.Status)
		return c.Ready && strings.HasSuffix(status, "Replicas: 0"), reportState + status, time.Time{}
	}
	return false, "", time.Time{}
}

// deploymentState judges a controller's Deployment: scaled down (spec.replicas: 0), or with
// replicas but none available, and says so.
func deploymentState(d *appsv1.Deployment) (scaledDown, unavailable bool, state string) {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	if replicas == 0 {
		return true, false, "scaled to zero (spec.replicas: 0)"
	}
	if d.Status.AvailableReplicas > 0 {
		return false, false, fmt.Sprintf("%d of %d replicas available", d.Status.AvailableReplicas, replicas)
	}
	state = fmt.Sprintf("no replica available (0 of %d)", replicas)
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionFalse {
			state += fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
		}
	}
	return false, true, state
}
