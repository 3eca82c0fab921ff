package flagger

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// A Flagger Canary (flagger.app/v1beta1) decides which template serves: Flux applies a new pod
// template to the Canary's target (Deployment web), whose pods come up and pass kstatus, while
// production keeps running web-primary until Flagger's analysis promotes the template, or
// fails and scales the target to zero. Its phases are those of Flagger v1.36.1
// (pkg/apis/flagger/v1beta1/status.go; pkg/controller/scheduler.go advanceCanary):
//
//   - Initializing, then Initialized: the first install; the primary is created from the
//     target's template, which Flagger records as promoted.
//   - Progressing (the analysis runs: canaryWeight, iterations), Waiting (a confirm-rollout
//     webhook holds the start), WaitingPromotion (a confirm-promotion webhook holds the
//     promotion: a manual gate), Promoting (the template is copied to the primary, which rolls
//     out), Finalising (the traffic goes back to the primary): in progress.
//   - Succeeded: promoted; with spec.skipAnalysis Flagger copies the template and says
//     Succeeded at once, before the primary has rolled out.
//   - Failed: the analysis failed (failed checks, a webhook, the progress deadline); the target
//     is scaled to zero and the primary keeps the previous template.
//
// Flagger records the hash of the template it last saw (status.lastAppliedSpec) and of the one
// it last promoted (status.lastPromotedSpec); a template whose hash is the promoted one (a
// revert) starts no analysis. That hash is Flagger's ComputeHash, an FNV hash of spew's
// printing of the Go struct corev1.PodTemplateSpec as compiled into the Flagger binary: every
// field of that k8s.io/api version is printed, so the same template hashes differently under
// another k8s.io/api (Flagger v1.36.1 builds with v0.27.11; this module's v0.36 gives another
// value) and no process of ours can recompute it. What the hashes tell without recomputing
// them: equal, Flagger promoted the last template it saw. Whether it has seen the target's
// current one is told by time instead: Flagger writes its Promoted condition (lastUpdateTime)
// at every change of phase, and the API server records when a field manager last wrote the
// target's template (assess.ObjectFacts.TemplateWritten); a state written after the template is of that template.
// For a target with no primary to compare, a state older than the template waits for Flagger
// to pick it up (at its next analysis tick, spec.analysis.interval), for two intervals at most
// (pickup). For a Deployment or DaemonSet neither hashes nor times prove what the primary runs: Flagger looks for a new template only while
// Progressing or WaitingPromotion, and writes Succeeded (Initialized on first install) with
// the hash of whatever the target holds then, so a template written while it was Promoting,
// Finalising or Initializing is recorded as promoted and never reaches the primary. A
// Deployment's or DaemonSet's Canary is therefore Current only when its primary runs the
// target's pod template (TemplateDiff) and copies of the configs Flagger tracks, and has
// rolled out; it fails only on a Failed provably written about the current template (one
// analysis interval after it), and waits with no timer otherwise. A suspended Canary is never
// a failure, and Current only as any.

// The phases of a Canary (Flagger v1.36.1, pkg/apis/flagger/v1beta1/status.go).
const (
	phaseInitialized = "Initialized"
	phaseSucceeded   = "Succeeded"
	PhaseFailed      = "Failed"
)

// working are the phases of an analysis or a promotion under way.
var working = map[string]bool{"Progressing": true, "Waiting": true, "WaitingPromotion": true, "Promoting": true, "Finalising": true}

// analysisInterval is Flagger's spec.analysis.interval when unset (1m), and its floor
// (10s): pkg/apis/flagger/v1beta1/canary.go GetAnalysisInterval.
const (
	analysisInterval = time.Minute
	minInterval      = 10 * time.Second
)

// Canary is what a Canary's status says.
type Canary struct {
	ID                string
	Phase             string
	Weight, Iteration int64
	Applied, Promoted string
	// Message is Flagger's, from its Promoted condition (untrusted, compacted).
	Message string
	// Since is when Flagger last changed the Promoted condition (a change of phase).
	Since    time.Time
	Interval time.Duration
	// Suspended is spec.suspend: Flagger skips the Canary.
	Suspended bool
	// TargetKind and TargetName are spec.targetRef's.
	TargetKind, TargetName string
	// Tracked are the ConfigMaps and Secrets Flagger tracks (status.trackedConfigs keys,
	// "configmap/NAME" and "secret/NAME"): a change of one starts an analysis too.
	Tracked []string
}

// Read reads what Canary u's spec and status say.
func Read(u *unstructured.Unstructured) Canary {
	c := Canary{ID: result.ObjectID("Canary", u.GetNamespace(), u.GetName()), Interval: analysisInterval}
	c.Phase = flaggerString(u, "status", "phase")
	c.Weight, _, _ = unstructured.NestedInt64(u.Object, "status", "canaryWeight")
	c.Iteration, _, _ = unstructured.NestedInt64(u.Object, "status", "iterations")
	c.Applied, _, _ = unstructured.NestedString(u.Object, "status", "lastAppliedSpec")
	c.Promoted, _, _ = unstructured.NestedString(u.Object, "status", "lastPromotedSpec")
	c.Suspended, _, _ = unstructured.NestedBool(u.Object, "spec", "suspend")
	c.TargetKind = flaggerString(u, "spec", "targetRef", "kind")
	c.TargetName = flaggerString(u, "spec", "targetRef", "name")
	tracked, _, _ := unstructured.NestedMap(u.Object, "status", "trackedConfigs")
	for key := range tracked {
		c.Tracked = append(c.Tracked, sanitize.Truncate(sanitize.Compact(key), messageMax))
	}
	slices.Sort(c.Tracked)
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conds {
		cond, _ := raw.(map[string]any)
		if cond["type"] != "Promoted" {
			continue
		}
		msg, _ := cond["message"].(string)
		c.Message = sanitize.Truncate(sanitize.Compact(msg), messageMax)
		for _, field := range []string{"lastUpdateTime", "lastTransitionTime"} {
			if s, _ := cond[field].(string); s != "" {
				if at, err := time.Parse(time.RFC3339, s); err == nil {
					c.Since = at
					break
				}
			}
		}
	}
	for _, path := range [][]string{{"spec", "analysis", "interval"}, {"spec", "canaryAnalysis", "interval"}} {
		if s, found, _ := unstructured.NestedString(u.Object, path...); found && s != "" {
			if d, err := time.ParseDuration(s); err == nil {
				c.Interval = max(d, minInterval)
			}
			break
		}
	}
	return c
}

// clockMargin is the margin kept where a time of Flagger's clock (its status) is compared
// with one of the API server's (managedFields): their skew, and the second both are truncated
// to.
const clockMargin = 2 * time.Second

// sinceAt is " at T" for a known time.
func sinceAt(at time.Time) string {
	if at.IsZero() {
		return ""
	}
	return " at " + at.UTC().Format(time.RFC3339)
}

// messageMax and wordMax bound what a Canary's status and spec put in a message:
// Flagger's message, and a phase or a target's kind or name.
const (
	messageMax = 300
	wordMax    = 64
)

// flaggerString is the string at path in a Canary, compacted to one line and bounded: every
// byte of it is untrusted.
func flaggerString(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return sanitize.Truncate(sanitize.Compact(s), wordMax)
}

// Pickup is how long a canary state older than its target's last change waits for Flagger to
// pick the change up: two analysis ticks.
func (c Canary) Pickup() time.Duration { return 2 * c.Interval }

// Judgement is what a Canary says of the workload it targets.
type Judgement struct {
	Status  result.ObjectStatus
	Message string
	// Failed is set when Flagger's analysis of the target's current template failed.
	Failed bool
	// Stale is set while the decision waits for Flagger to pick up a change of the target
	// newer than its state (the run's memory keeps since when).
	Stale bool
}

// Target is what the view holds of a Canary's target and its primary.
type Target struct {
	// Workload is false for a target that has no primary copy to compare (a Service).
	Workload bool
	Found    bool
	// Written is when its pod template, or a ConfigMap or Secret Flagger tracks for it, was
	// last written; zero: unknown.
	Written time.Time
	// PrimaryID names NAME-primary; PrimaryFound, PrimaryStatus (kstatus) and PrimaryMessage
	// are its state, ImageDiff how its images differ from the target's template ("": same).
	PrimaryID      string
	PrimaryFound   bool
	PrimaryStatus  result.ObjectStatus
	PrimaryMessage string
	// Differs says how the primary's pod template differs from the target's (ImageDiff,
	// else TemplateDiff); "": it is the target's.
	Differs string
	// Configs says which ConfigMap or Secret Flagger tracks was changed after its primary
	// copy; Unproven why that cannot be told (credentials that may not list Secrets).
	Configs, Unproven string
}

// Judge decides what Canary c says of its target's current template; staleFor is how
// long the run has seen this state of c older than the template.
func Judge(c Canary, t Target, staleFor time.Duration) Judgement {
	j := judgeState(c, t, staleFor)
	if c.Suspended && j.Status != result.ObjectCurrent {
		// Flagger skips a suspended Canary (scheduler.go advanceCanary): its state, Failed
		// included, may be of any earlier template, and nothing moves until it is resumed.
		return Judgement{Status: result.ObjectInProgress,
			Message: c.ID + " is suspended (spec.suspend): Flagger does not act on the target's changes; " + j.Message}
	}
	return j
}

// judgeState is Judge's decision by Flagger's state, whether suspended or not.
func judgeState(c Canary, t Target, staleFor time.Duration) Judgement {
	inProgress := func(format string, args ...any) Judgement {
		return Judgement{Status: result.ObjectInProgress, Message: fmt.Sprintf(format, args...)}
	}
	flagger := func(s string) string {
		if c.Message == "" {
			return s
		}
		return s + ": " + c.Message
	}
	if t.Workload && !t.Found {
		return inProgress("%s targets %s %s, not found", c.ID, c.TargetKind, c.TargetName)
	}
	stale := c.Since.IsZero() || (!t.Written.IsZero() && !c.Since.After(t.Written.Add(clockMargin)))
	waitPickup := stale && staleFor < c.Pickup()
	at := ""
	if !t.Written.IsZero() {
		at = " at " + t.Written.UTC().Format(time.RFC3339)
	}
	switch {
	case c.Phase == "" || c.Phase == "Initializing":
		return inProgress("%s", flagger(c.ID+" initializing"))
	case working[c.Phase]:
		return inProgress("%s", flagger(fmt.Sprintf("%s %s (canary weight %d, iteration %d)", c.ID, c.Phase, c.Weight, c.Iteration)))
	case c.Phase != phaseInitialized && c.Phase != phaseSucceeded && c.Phase != PhaseFailed:
		return inProgress("%s", flagger(c.ID+" "+c.Phase))
	}
	if t.Workload {
		return judgeWorkload(c, t, at, staleFor)
	}
	promotedLast := c.Applied != "" && c.Applied == c.Promoted
	if c.Phase == PhaseFailed && !promotedLast {
		if waitPickup {
			j := inProgress("%s Failed before its target changed%s: waiting for Flagger to analyse the change", c.ID, at)
			j.Stale = true
			return j
		}
		return Judgement{Status: result.ObjectFailed, Failed: true, Message: flagger(c.ID + " Failed")}
	}
	if !promotedLast {
		return inProgress("%s %s has not promoted the last template it saw", c.ID, c.Phase)
	}
	if waitPickup || stale && c.Suspended {
		j := inProgress("%s %s before its target changed%s: waiting for Flagger to pick the change up", c.ID, c.Phase, at)
		j.Stale = true
		return j
	}
	msg := fmt.Sprintf("promoted by Flagger (%s %s)", c.ID, c.Phase)
	if stale {
		msg += fmt.Sprintf("; Flagger started no analysis of the change%s in %s", at, staleFor.Round(time.Second))
	}
	return Judgement{Status: result.ObjectCurrent, Message: msg}
}

// judgeWorkload judges Canary c, settled (Initialized, Succeeded, Failed), of a
// Deployment or DaemonSet: its primary serves the target's template when it runs the same pod
// template (TemplateDiff) and has rolled out, whatever the hashes and times of Flagger's
// status say; Flagger can write Succeeded with the hash of a template it never promoted (one
// written while it was Promoting or Finalising, which it does not look for), and then it
// never analyses it. A primary on another template waits, with no timer. staleFor is how
// long the run has seen this state of c, with this template.
func judgeWorkload(c Canary, t Target, at string, staleFor time.Duration) Judgement {
	inProgress := func(format string, args ...any) Judgement {
		return Judgement{Status: result.ObjectInProgress, Message: fmt.Sprintf(format, args...)}
	}
	promotedLast := c.Applied != "" && c.Applied == c.Promoted
	switch {
	case !t.PrimaryFound:
		return inProgress("%s %s, but %s not found", c.ID, c.Phase, t.PrimaryID)
	case c.Phase == PhaseFailed && (t.Differs != "" || t.Configs != ""):
		// While Failed, Flagger rewrites status.lastTransitionTime and lastAppliedSpec at every
		// tick (scheduler.go shouldAdvance syncs the status before it looks for a new
		// template), but not its Promoted condition (c.Since): that says when Failed was
		// written. It is this template's when the tick before it came after the template:
		// Failed written more than one interval (and the clocks' margin) after the template.
		// Any other Failed is decided once Flagger has had its ticks. At each, a Failed Canary
		// looks for a new template (shouldAdvance: SyncStatus records the target's template as
		// lastAppliedSpec, then HasTargetChanged compares it with the one it had) and starts
		// to analyse it, unless its primary is not ready at that tick: then the template is
		// recorded as seen and never analysed (scheduler.go:835-846, 294-302). So a Failed
		// unchanged two ticks (Pickup) after the run saw it with this template is final: of
		// this template when written after it (an analysis that failed at its first tick
		// after the pick-up), and, written before it, a template Flagger will not roll out
		// without a change.
		msg := c.ID + " Failed"
		if c.Message != "" {
			msg += ": " + c.Message
		}
		failedAfter := !t.Written.IsZero() && !c.Since.IsZero() && c.Since.After(t.Written.Add(clockMargin))
		if !failedAfter || !c.Since.After(t.Written.Add(c.Interval+clockMargin)) {
			if staleFor < c.Pickup() {
				j := inProgress("%s Failed%s, not provably for the target's template (written%s): waiting for Flagger to analyse it", c.ID, sinceAt(c.Since), at)
				j.Stale = true
				return j
			}
			if failedAfter {
				msg += fmt.Sprintf(" (written after the target's template%s, and unchanged for the %s the run has seen it: Flagger analyses a new template at its next tick)", at, staleFor.Round(time.Second))
			} else {
				msg = fmt.Sprintf("%s Failed%s, before the target's template (written%s), and Flagger has not started to analyse that template in the %s the run has seen it: "+
					"it will not without a change (a tick that saw the template while the primary was not ready recorded it as seen); %s",
					c.ID, sinceAt(c.Since), at, staleFor.Round(time.Second), cmpOr(c.Message, "no message"))
			}
		}
		return Judgement{Status: result.ObjectFailed, Failed: true, Message: msg}
	case c.Phase != PhaseFailed && !promotedLast:
		return inProgress("%s %s has not promoted the last template it saw", c.ID, c.Phase)
	case t.Differs != "":
		return inProgress("%s %s, but %s %s: waiting for Flagger to promote the target's template", c.ID, c.Phase, t.PrimaryID, t.Differs)
	case t.Configs != "":
		return inProgress("%s %s, but %s: waiting for Flagger to promote it", c.ID, c.Phase, t.Configs)
	case t.Unproven != "":
		return inProgress("%s %s, but %s", c.ID, c.Phase, t.Unproven)
	case t.PrimaryStatus != result.ObjectCurrent:
		return inProgress("%s %s, %s rolling out: %s", c.ID, c.Phase, t.PrimaryID, cmpOr(t.PrimaryMessage, string(t.PrimaryStatus)))
	}
	return Judgement{Status: result.ObjectCurrent, Message: fmt.Sprintf("promoted by Flagger (%s %s, %s runs the template)", c.ID, c.Phase, t.PrimaryID)}
}

// ImageDiff says how the primary's containers' images differ from the target's template
// (Flagger copies the template and renames only ConfigMaps, Secrets and selector labels);
// "" when they are the same.
func ImageDiff(target, primary *unstructured.Unstructured) string {
	for _, field := range []string{"initContainers", "containers"} {
		want, got := images(target, field), images(primary, field)
		for name, image := range want {
			if got[name] != image {
				return fmt.Sprintf("runs %s of container %s, the template %s", cmpOr(got[name], "nothing"), name, image)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				return "runs container " + name + ", which the template does not have"
			}
		}
	}
	return ""
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

func images(u *unstructured.Unstructured, field string) map[string]string {
	out := map[string]string{}
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", field)
	for _, raw := range containers {
		c, _ := raw.(map[string]any)
		name, _ := c["name"].(string)
		image, _ := c["image"].(string)
		out[name] = image
	}
	return out
}
