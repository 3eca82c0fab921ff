package flux

import (
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/result"
)

// The Flux Operator (v0.59.0) runs ResourceSets: flux-operator renders the spec's resources for
// every input, applies them with server-side apply, records what it applied as
// status.inventory (the format of a Kustomization's) and a digest of the rendered objects as
// status.lastAppliedRevision, and marks Ready=True, reason ReconciliationSucceeded. It writes no
// status.observedGeneration: the Ready condition's observedGeneration says which generation it
// reconciled (api/v1 HealthCheckExpr: Ready True at metadata.generation).

// FluxOperator is the Flux Operator's controller, and the field manager it applies what a
// ResourceSet generates with (cmd/operator controllerName, the StatusManager of its
// ResourceSet reconciler).
const FluxOperator = "flux-operator"

// operatorReconcileAnnotation set to "disabled" pauses a Flux Operator object
// (api/v1 ReconcileAnnotation, DisabledValue): its suspend.
const operatorReconcileAnnotation = "fluxcd.controlplane.io/reconcile"

// operatorTimeoutAnnotation bounds a Flux Operator object's reconcile, its wait included
// (api/v1 ReconcileTimeoutAnnotation).
const operatorTimeoutAnnotation = "fluxcd.controlplane.io/reconcileTimeout"

// operatorDisabledReason is the reason of the Ready condition flux-operator writes, True, on
// an object created with reconciliation disabled (api/v1 ReconciliationDisabledReason,
// internal/controller initializeObjectStatus: "Initialized with reconciliation suspended"):
// it has reconciled nothing yet, and the condition stays so once the annotation is removed
// until it does.
const operatorDisabledReason = "ReconciliationDisabled"

// operatorDisabled reports whether a Flux Operator object's reconciliation is disabled.
func operatorDisabled(obj *unstructured.Unstructured) bool {
	return strings.EqualFold(obj.GetAnnotations()[operatorReconcileAnnotation], "disabled")
}

// resourceSetGate applies the rules of a fluxcd.controlplane.io/v1 ResourceSet. Its own status
// says nothing of a revision (lastAppliedRevision is a digest of what it rendered): want is the
// walk's to give to the objects it generated (ResourceSetWant), not the ResourceSet's.
func resourceSetGate(ref Ref, v *view, _ Revision) decision {
	if v.suspended {
		return decision{
			verdict: result.VerdictSuspended, code: result.CodeFluxSuspended, reason: meta.SuspendedReason,
			message: fmt.Sprintf("reconciliation disabled (annotation %s: disabled); resume it with: flux-operator -n %s resume resourceset %s",
				operatorReconcileAnnotation, ref.Namespace, ref.Name),
		}
	}
	ready := v.cond(meta.ReadyCondition)
	if st := v.cond(meta.StalledCondition); st.status == string(metav1.ConditionTrue) {
		// BuildFailed (a template that does not render, inputs that cannot be read) or
		// InvalidCELExpression: flux-operator stops until the spec changes.
		code := result.CodeFluxStalled
		if st.reason == meta.BuildFailedReason {
			code = result.CodeFluxBuildFailed
		}
		stalled := decision{verdict: result.VerdictFailed, code: code, reason: st.reason, message: "stalled: " + st.message}
		if resourceSetProviderWords.MatchString(st.message) {
			// A provider not created yet: the rollout may create it.
			stalled.verdict = result.VerdictInProgress
			stalled.message = "waiting for its input provider (spec.inputsFrom) to exist: " + st.message
		}
		if v.olderGeneration(st) {
			return staleGeneration(v, st.observedGeneration, FluxOperator, stalled)
		}
		return stalled
	}
	if ready.status == string(metav1.ConditionFalse) {
		switch ready.reason {
		case meta.ReconciliationFailedReason, meta.BuildFailedReason:
			failure := decision{verdict: result.VerdictFailed, code: result.CodeFluxReconciliationFailed, reason: ready.reason, message: ready.message}
			switch {
			case ready.reason == meta.BuildFailedReason:
				failure.code = result.CodeFluxBuildFailed
			case resourceSetHealthWords.MatchString(ready.message):
				failure.code = result.CodeFluxHealthCheckFailed
			default:
				switch applyWording(ready.message) {
				case retriedWords:
					failure.retried = true
				case unrecognised:
					// Retried or final, only its words would say: neither fail nor pass.
					failure.verdict = result.VerdictInProgress
					failure.message = joinSentences(failure.message, unrecognisedNote(FluxOperator, "v0.59.0"))
				}
			}
			if v.olderGeneration(ready) {
				return staleGeneration(v, ready.observedGeneration, FluxOperator, failure)
			}
			return failure
		case meta.DependencyNotReadyReason:
			return decision{code: result.CodeFluxDependencyNotReady, reason: ready.reason,
				message: "waiting for its dependencies (spec.dependsOn): " + ready.message}
		}
	}
	if ready.status != string(metav1.ConditionTrue) {
		return progressing(v, FluxOperator)
	}
	if ready.reason == operatorDisabledReason {
		return decision{reason: ready.reason, message: fmt.Sprintf("waiting for %s to reconcile it: it was created with reconciliation disabled and has not been reconciled since (Ready: %s)",
			FluxOperator, ready.message)}
	}
	if v.olderGeneration(ready) || ready.observedGeneration == 0 && v.generation > 0 {
		return decision{reason: ready.reason, message: fmt.Sprintf("waiting for %s to reconcile generation %d (Ready is of generation %d)",
			FluxOperator, v.generation, ready.observedGeneration)}
	}
	return decision{verdict: result.VerdictCurrent, reason: ready.reason, message: ready.message}
}

// resourceSetApplied: flux-operator (v0.59.0, ResourceSetReconciler.apply) applies the
// objects of each step in turn and records status.inventory as the union of the previous
// inventory and what it applied so far (inventory.Merge, trackPartialApply): a failed step, or
// the failed wait of a step that is not the last (spec.steps), leaves the previous
// generation's objects listed beside the new ones. Only once every step applied and garbage
// collection removed what the new set no longer holds does it record the new inventory alone,
// then it waits for the last step's objects (spec.wait). So what the inventory lists is of
// the current generation once Ready is True at it, or once the wait of its last step (or of
// a ResourceSet without steps) failed at it.
func resourceSetApplied(v *view, _ Revision) bool {
	ready := v.cond(meta.ReadyCondition)
	if ready.reason == operatorDisabledReason {
		return false // never reconciled: created disabled
	}
	if !v.hasInventory {
		return true // nothing applied yet
	}
	if ready.observedGeneration != v.generation {
		return false
	}
	return ready.status == string(metav1.ConditionTrue) ||
		ready.status == string(metav1.ConditionFalse) && resourceSetHealthWords.MatchString(ready.message) && !earlierStep(v.obj, ready.message)
}

// earlierStep reports whether a ResourceSet's failure names a step (stepError: step "NAME")
// that is not the last of spec.steps.
func earlierStep(obj *unstructured.Unstructured, message string) bool {
	m := resourceSetStepWords.FindStringSubmatch(message)
	if m == nil || obj == nil {
		return false
	}
	steps := nestedMaps(obj.Object, "spec", "steps")
	return len(steps) > 0 && str(steps[len(steps)-1], "name") != m[1]
}

// resourceSetRetry is how long a ResourceSet's next attempt may take to say again that its
// wait failed: flux-operator (v0.59.0) returns the failure to controller-runtime, which
// retries with a backoff from 750 ms (--min-retry-delay), and each attempt waits for its
// objects up to the step's timeout (spec.steps[].timeout), else the
// fluxcd.controlplane.io/reconcileTimeout annotation, else 5 minutes (stepTimeout,
// GetTimeout): the longest of those.
func resourceSetRetry(obj *unstructured.Unstructured) time.Duration {
	timeout := 5 * time.Minute
	if d, err := time.ParseDuration(obj.GetAnnotations()[operatorTimeoutAnnotation]); err == nil && d > 0 {
		timeout = d
	}
	longest := timeout
	for _, st := range nestedMaps(obj.Object, "spec", "steps") {
		if d, err := time.ParseDuration(str(st, "timeout")); err == nil && d > longest {
			longest = d
		}
	}
	return longest
}

// ResourceSetInputsCarry reports whether the revision is one of a ResourceSet's inputs: a
// string value of spec.inputs (a tag, a commit, a chart version a pipeline set there) that is
// the revision. Then what the ResourceSet rendered at its current generation is of that
// revision, and the objects it generated apply what their own sources offer. Inputs of
// providers (spec.inputsFrom) are not read.
func ResourceSetInputsCarry(obj *unstructured.Unstructured, want Revision) bool {
	if obj == nil || want.IsZero() {
		return false
	}
	inputs, _, _ := NestedSlice(obj.Object, "spec", "inputs")
	for _, in := range inputs {
		m, ok := in.(map[string]any)
		if !ok {
			continue
		}
		if anyStringMatches(m, want) {
			return true
		}
	}
	return false
}

func anyStringMatches(v any, want Revision) bool {
	switch x := v.(type) {
	case string:
		return x != "" && want.Matches(x)
	case map[string]any:
		for _, e := range x {
			if anyStringMatches(e, want) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if anyStringMatches(e, want) {
				return true
			}
		}
	}
	return false
}

// ResourceSetWithoutInputs reports whether a ResourceSet takes inputs from providers
// (spec.inputsFrom) and its last reconcile had none: flux-operator v0.59.0 then reconciles an
// empty set (garbage collecting what it generated) and marks Ready all the same, recording
// the count as the newest status.history entry's metadata.inputs.
func ResourceSetWithoutInputs(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	if from, _, _ := NestedSlice(obj.Object, "spec", "inputsFrom"); len(from) == 0 {
		return false
	}
	history := nestedMaps(obj.Object, "status", "history")
	if len(history) == 0 {
		return false
	}
	inputs, _, _ := unstructured.NestedString(history[0], "metadata", "inputs")
	return inputs == "0"
}

// ResourceSetReadyBeforeSpec tells whether a ResourceSet's Ready=True may be of an older
// generation than its current one though it carries it. flux-operator v0.59.0 writes no
// status.observedGeneration, and the patch helper it writes its status with
// (fluxcd/pkg/runtime patch.SerialPatcher, patchStatusConditions) applies the conditions to
// the object as the API server holds it at the write, conditions.Set stamping each with that
// object's generation: a reconcile of generation 2 that ends after the spec moved to 3 (the
// render and the apply are not interrupted) leaves Ready=True stamped 3, until the reconcile of
// 3, queued at once (GenerationChangedPredicate), marks it Unknown. The newest status.history
// entry dates the reconcile that wrote Ready (History.Upsert: lastReconciled at its end,
// lastReconciledDuration since its start, which the object it rendered was read just before);
// the newest metadata.managedFields entry that owns fields of the spec dates the spec's last
// write. Both times are in whole seconds: a reconcile stale for sure started at least a second
// before the spec's second began (lastReconciled + 1s - lastReconciledDuration <= that
// second); one within the second counts as of the new spec. until bounds the wait: the
// reconcile of the new generation starts within moments of the stale one's end, and a manager
// that changed only the metadata moves its entry's time without a new generation. Without
// history or a dated spec write, Ready is taken at its word.
func ResourceSetReadyBeforeSpec(obj *unstructured.Unstructured) (msg string, until time.Time, stale bool) {
	history := nestedMaps(obj.Object, "status", "history")
	if len(history) == 0 {
		return "", time.Time{}, false
	}
	end, err := time.Parse(time.RFC3339, str(history[0], "lastReconciled"))
	if err != nil {
		return "", time.Time{}, false
	}
	took, err := time.ParseDuration(str(history[0], "lastReconciledDuration"))
	if err != nil || took < 0 {
		return "", time.Time{}, false
	}
	written := specWritten(obj)
	startedBy := end.Add(time.Second - took)
	if written.IsZero() || startedBy.After(written) {
		return "", time.Time{}, false
	}
	until = end.Add(time.Second + specReconcileMargin)
	return fmt.Sprintf("its Ready (generation %d) was written by a reconcile that started by %s, before its spec was last written (%s, metadata.managedFields): "+
		"flux-operator stamps Ready with the generation of the object it writes, so it may be of the previous generation; "+
		"waiting for %s to reconcile the current one, until %s",
		obj.GetGeneration(), startedBy.UTC().Format(time.RFC3339), written.UTC().Format(time.RFC3339), FluxOperator, until.UTC().Format(time.RFC3339)), until, true
}

// specReconcileMargin is how long after a stale reconcile's end ResourceSetReadyBeforeSpec
// waits for the reconcile of the new generation to show.
const specReconcileMargin = 30 * time.Second

// specWritten is the time of the newest metadata.managedFields entry that owns fields of the
// object's spec (its fieldsV1 has f:spec); zero when none says.
func specWritten(obj *unstructured.Unstructured) time.Time {
	var latest time.Time
	for _, f := range nestedMaps(obj.Object, "metadata", "managedFields") {
		fields, _ := f["fieldsV1"].(map[string]any)
		if _, owns := fields["f:spec"]; !owns {
			continue
		}
		if at, err := time.Parse(time.RFC3339, str(f, "time")); err == nil && at.After(latest) {
			latest = at
		}
	}
	return latest
}
