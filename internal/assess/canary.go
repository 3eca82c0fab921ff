package assess

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
// target's template (TemplateWritten); a state written after the template is of that template.
// For a target with no primary to compare, a state older than the template waits for Flagger
// to pick it up (at its next analysis tick, spec.analysis.interval), for two intervals at most
// (pickup). For a Deployment or DaemonSet neither hashes nor times prove what the primary runs: Flagger looks for a new template only while
// Progressing or WaitingPromotion, and writes Succeeded (Initialized on first install) with
// the hash of whatever the target holds then, so a template written while it was Promoting,
// Finalising or Initializing is recorded as promoted and never reaches the primary. A
// Deployment's or DaemonSet's Canary is therefore Current only when its primary runs the
// target's pod template (flagger.TemplateDiff) and copies of the configs Flagger tracks, and has
// rolled out; it fails only on a Failed provably written about the current template (one
// analysis interval after it), and waits with no timer otherwise. A suspended Canary is never
// a failure, and Current only as any.

var (
	// CanaryGVK is the kind of a Flagger Canary.
	CanaryGVK = schema.GroupVersionKind{Group: "flagger.app", Version: "v1beta1", Kind: "Canary"}
	// canaryGVR is the resource of a Canary, listed per namespace.
	canaryGVR = schema.GroupVersionResource{Group: "flagger.app", Version: "v1beta1", Resource: "canaries"}
	// canaryTargets are the kinds of a Canary's target whose primary is a copy of the same
	// kind named NAME-primary, with their resources.
	canaryTargets = map[string]schema.GroupVersionResource{
		"Deployment": {Group: "apps", Version: "v1", Resource: "deployments"},
		"DaemonSet":  {Group: "apps", Version: "v1", Resource: "daemonsets"},
	}
)

// NotServedError is a Mapping's error for a kind the cluster does not serve (no CRD).
type NotServedError struct{ GVK schema.GroupVersionKind }

func (e NotServedError) Error() string { return "the cluster does not serve " + e.GVK.String() }

// The phases of a Canary (Flagger v1.36.1, pkg/apis/flagger/v1beta1/status.go).
const (
	canaryInitialized = "Initialized"
	canarySucceeded   = "Succeeded"
	canaryFailed      = "Failed"
)

// canaryWorking are the phases of an analysis or a promotion under way.
var canaryWorking = map[string]bool{"Progressing": true, "Waiting": true, "WaitingPromotion": true, "Promoting": true, "Finalising": true}

// canaryAnalysisInterval is Flagger's spec.analysis.interval when unset (1m), and its floor
// (10s): pkg/apis/flagger/v1beta1/canary.go GetAnalysisInterval.
const (
	canaryAnalysisInterval = time.Minute
	canaryMinInterval      = 10 * time.Second
)

// canary is what a Canary's status says.
type canary struct {
	id                string
	phase             string
	weight, iteration int64
	applied, promoted string
	// message is Flagger's, from its Promoted condition (untrusted, compacted).
	message string
	// since is when Flagger last changed the Promoted condition (a change of phase).
	since    time.Time
	interval time.Duration
	// suspended is spec.suspend: Flagger skips the Canary.
	suspended bool
	// targetKind and targetName are spec.targetRef's.
	targetKind, targetName string
	// tracked are the ConfigMaps and Secrets Flagger tracks (status.trackedConfigs keys,
	// "configmap/NAME" and "secret/NAME"): a change of one starts an analysis too.
	tracked []string
}

func readCanary(u *unstructured.Unstructured) canary {
	c := canary{id: result.ObjectID("Canary", u.GetNamespace(), u.GetName()), interval: canaryAnalysisInterval}
	c.phase = flaggerString(u, "status", "phase")
	c.weight, _, _ = unstructured.NestedInt64(u.Object, "status", "canaryWeight")
	c.iteration, _, _ = unstructured.NestedInt64(u.Object, "status", "iterations")
	c.applied, _, _ = unstructured.NestedString(u.Object, "status", "lastAppliedSpec")
	c.promoted, _, _ = unstructured.NestedString(u.Object, "status", "lastPromotedSpec")
	c.suspended, _, _ = unstructured.NestedBool(u.Object, "spec", "suspend")
	c.targetKind = flaggerString(u, "spec", "targetRef", "kind")
	c.targetName = flaggerString(u, "spec", "targetRef", "name")
	tracked, _, _ := unstructured.NestedMap(u.Object, "status", "trackedConfigs")
	for key := range tracked {
		c.tracked = append(c.tracked, sanitize.Truncate(sanitize.Compact(key), canaryMessageMax))
	}
	slices.Sort(c.tracked)
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conds {
		cond, _ := raw.(map[string]any)
		if cond["type"] != "Promoted" {
			continue
		}
		msg, _ := cond["message"].(string)
		c.message = sanitize.Truncate(sanitize.Compact(msg), canaryMessageMax)
		for _, field := range []string{"lastUpdateTime", "lastTransitionTime"} {
			if s, _ := cond[field].(string); s != "" {
				if at, err := time.Parse(time.RFC3339, s); err == nil {
					c.since = at
					break
				}
			}
		}
	}
	for _, path := range [][]string{{"spec", "analysis", "interval"}, {"spec", "canaryAnalysis", "interval"}} {
		if s, found, _ := unstructured.NestedString(u.Object, path...); found && s != "" {
			if d, err := time.ParseDuration(s); err == nil {
				c.interval = max(d, canaryMinInterval)
			}
			break
		}
	}
	return c
}

// canaryClockMargin is the margin kept where a time of Flagger's clock (its status) is compared
// with one of the API server's (managedFields): their skew, and the second both are truncated
// to.
const canaryClockMargin = 2 * time.Second

// sinceAt is " at T" for a known time.
func sinceAt(at time.Time) string {
	if at.IsZero() {
		return ""
	}
	return " at " + at.UTC().Format(time.RFC3339)
}

// canaryMessageMax and canaryWordMax bound what a Canary's status and spec put in a message:
// Flagger's message, and a phase or a target's kind or name.
const (
	canaryMessageMax = 300
	canaryWordMax    = 64
)

// flaggerString is the string at path in a Canary, compacted to one line and bounded: every
// byte of it is untrusted.
func flaggerString(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return sanitize.Truncate(sanitize.Compact(s), canaryWordMax)
}

// pickup is how long a canary state older than its target's last change waits for Flagger to
// pick the change up: two analysis ticks.
func (c canary) pickup() time.Duration { return 2 * c.interval }

// canaryJudgement is what a Canary says of the workload it targets.
type canaryJudgement struct {
	status  result.ObjectStatus
	message string
	// failed is set when Flagger's analysis of the target's current template failed.
	failed bool
	// stale is set while the decision waits for Flagger to pick up a change of the target
	// newer than its state (the run's memory keeps since when).
	stale bool
}

// canaryTarget is what the view holds of a Canary's target and its primary.
type canaryTarget struct {
	// workload is false for a target that has no primary copy to compare (a Service).
	workload bool
	found    bool
	// written is when its pod template, or a ConfigMap or Secret Flagger tracks for it, was
	// last written; zero: unknown.
	written time.Time
	// primaryID names NAME-primary; primaryFound, primaryStatus (kstatus) and primaryMessage
	// are its state, imageDiff how its images differ from the target's template ("": same).
	primaryID      string
	primaryFound   bool
	primaryStatus  result.ObjectStatus
	primaryMessage string
	// differs says how the primary's pod template differs from the target's (imageDiff,
	// else flagger.TemplateDiff); "": it is the target's.
	differs string
	// configs says which ConfigMap or Secret Flagger tracks was changed after its primary
	// copy; unproven why that cannot be told (credentials that may not list Secrets).
	configs, unproven string
}

// judgeCanary decides what Canary c says of its target's current template; staleFor is how
// long the run has seen this state of c older than the template.
func judgeCanary(c canary, t canaryTarget, staleFor time.Duration) canaryJudgement {
	j := judgeCanaryState(c, t, staleFor)
	if c.suspended && j.status != result.ObjectCurrent {
		// Flagger skips a suspended Canary (scheduler.go advanceCanary): its state, Failed
		// included, may be of any earlier template, and nothing moves until it is resumed.
		return canaryJudgement{status: result.ObjectInProgress,
			message: c.id + " is suspended (spec.suspend): Flagger does not act on the target's changes; " + j.message}
	}
	return j
}

// judgeCanaryState is judgeCanary's decision by Flagger's state, whether suspended or not.
func judgeCanaryState(c canary, t canaryTarget, staleFor time.Duration) canaryJudgement {
	inProgress := func(format string, args ...any) canaryJudgement {
		return canaryJudgement{status: result.ObjectInProgress, message: fmt.Sprintf(format, args...)}
	}
	flagger := func(s string) string {
		if c.message == "" {
			return s
		}
		return s + ": " + c.message
	}
	if t.workload && !t.found {
		return inProgress("%s targets %s %s, not found", c.id, c.targetKind, c.targetName)
	}
	stale := c.since.IsZero() || (!t.written.IsZero() && !c.since.After(t.written.Add(canaryClockMargin)))
	waitPickup := stale && staleFor < c.pickup()
	at := ""
	if !t.written.IsZero() {
		at = " at " + t.written.UTC().Format(time.RFC3339)
	}
	switch {
	case c.phase == "" || c.phase == "Initializing":
		return inProgress("%s", flagger(c.id+" initializing"))
	case canaryWorking[c.phase]:
		return inProgress("%s", flagger(fmt.Sprintf("%s %s (canary weight %d, iteration %d)", c.id, c.phase, c.weight, c.iteration)))
	case c.phase != canaryInitialized && c.phase != canarySucceeded && c.phase != canaryFailed:
		return inProgress("%s", flagger(c.id+" "+c.phase))
	}
	if t.workload {
		return judgeCanaryWorkload(c, t, at)
	}
	promotedLast := c.applied != "" && c.applied == c.promoted
	if c.phase == canaryFailed && !promotedLast {
		if waitPickup {
			j := inProgress("%s Failed before its target changed%s: waiting for Flagger to analyse the change", c.id, at)
			j.stale = true
			return j
		}
		return canaryJudgement{status: result.ObjectFailed, failed: true, message: flagger(c.id + " Failed")}
	}
	if !promotedLast {
		return inProgress("%s %s has not promoted the last template it saw", c.id, c.phase)
	}
	if waitPickup || stale && c.suspended {
		j := inProgress("%s %s before its target changed%s: waiting for Flagger to pick the change up", c.id, c.phase, at)
		j.stale = true
		return j
	}
	msg := fmt.Sprintf("promoted by Flagger (%s %s)", c.id, c.phase)
	if stale {
		msg += fmt.Sprintf("; Flagger started no analysis of the change%s in %s", at, staleFor.Round(time.Second))
	}
	return canaryJudgement{status: result.ObjectCurrent, message: msg}
}

// judgeCanaryWorkload judges Canary c, settled (Initialized, Succeeded, Failed), of a
// Deployment or DaemonSet: its primary serves the target's template when it runs the same pod
// template (flagger.TemplateDiff) and has rolled out, whatever the hashes and times of Flagger's
// status say; Flagger can write Succeeded with the hash of a template it never promoted (one
// written while it was Promoting or Finalising, which it does not look for), and then it
// never analyses it. A primary on another template waits, with no timer.
func judgeCanaryWorkload(c canary, t canaryTarget, at string) canaryJudgement {
	inProgress := func(format string, args ...any) canaryJudgement {
		return canaryJudgement{status: result.ObjectInProgress, message: fmt.Sprintf(format, args...)}
	}
	promotedLast := c.applied != "" && c.applied == c.promoted
	switch {
	case !t.primaryFound:
		return inProgress("%s %s, but %s not found", c.id, c.phase, t.primaryID)
	case c.phase == canaryFailed && (t.differs != "" || t.configs != ""):
		// While Failed, Flagger rewrites status.lastTransitionTime and lastAppliedSpec at every
		// tick (scheduler.go shouldAdvance syncs the status before it looks for a new
		// template), but not its Promoted condition (c.since): that says when Failed was
		// written. It is this template's only when the tick before it came after the template:
		// Failed written more than one interval (and the clocks' margin) after the template.
		if t.written.IsZero() || c.since.IsZero() || !c.since.After(t.written.Add(c.interval+canaryClockMargin)) {
			return inProgress("%s Failed%s, not provably for the target's template (written%s): waiting for Flagger to analyse it", c.id, sinceAt(c.since), at)
		}
		msg := c.id + " Failed"
		if c.message != "" {
			msg += ": " + c.message
		}
		return canaryJudgement{status: result.ObjectFailed, failed: true, message: msg}
	case c.phase != canaryFailed && !promotedLast:
		return inProgress("%s %s has not promoted the last template it saw", c.id, c.phase)
	case t.differs != "":
		return inProgress("%s %s, but %s %s: waiting for Flagger to promote the target's template", c.id, c.phase, t.primaryID, t.differs)
	case t.configs != "":
		return inProgress("%s %s, but %s: waiting for Flagger to promote it", c.id, c.phase, t.configs)
	case t.unproven != "":
		return inProgress("%s %s, but %s", c.id, c.phase, t.unproven)
	case t.primaryStatus != result.ObjectCurrent:
		return inProgress("%s %s, %s rolling out: %s", c.id, c.phase, t.primaryID, cmpOr(t.primaryMessage, string(t.primaryStatus)))
	}
	return canaryJudgement{status: result.ObjectCurrent, message: fmt.Sprintf("promoted by Flagger (%s %s, %s runs the template)", c.id, c.phase, t.primaryID)}
}

// templateWritten is the TemplateWritten annotation the view put on a workload; zero when
// none.
func templateWritten(u *unstructured.Unstructured) time.Time {
	at, err := time.Parse(time.RFC3339, u.GetAnnotations()[TemplateWritten])
	if err != nil {
		return time.Time{}
	}
	return at
}

// imageDiff says how the primary's containers' images differ from the target's template
// (Flagger copies the template and renames only ConfigMaps, Secrets and selector labels);
// "" when they are the same.
func imageDiff(target, primary *unstructured.Unstructured) string {
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
