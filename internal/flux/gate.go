package flux

import (
	"cmp"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// Gate is the verdict on one Flux object.
type Gate struct {
	// Verdict is InProgress while the object may still get there on its own, Current when the
	// expected revision is applied and the object is Ready, Failed when the expected revision
	// was attempted and failed (or the object is stalled), Suspended when spec.suspend is true.
	Verdict result.Verdict
	// Object is the object's state for the results; its Verdict, Code, Reason and Message
	// agree with the gate.
	Object result.FluxObject
	// Code says why the object Failed or is Suspended. An object InProgress may carry the code to
	// report if it never gets further: a dependency that is not ready, a failure of another
	// revision or of an older generation of the spec, or a Helm failure helm-controller retries.
	Code result.Code
	// Message is one line for a person: why the object is not done or why it failed. It does
	// not repeat the object's ID.
	Message string
	// Applied reports whether the objects the inventory lists, and the workloads they run, are
	// those of the expected revision (of the last attempted one when none is expected): only
	// then may they fail the rollout. Before, they are the previous revision's, which the
	// expected one may be fixing.
	Applied bool
	// Source is a Kustomization's spec.sourceRef, Kind/namespace/name: nested Kustomizations
	// of the same source must apply the same revision. Empty for a HelmRelease.
	Source string
}

// decision is what a kind's rules conclude; Evaluate turns it into a Gate.
type decision struct {
	verdict result.Verdict // zero means InProgress
	code    result.Code
	reason  string // the Flux reason behind the decision
	message string
}

// gates holds the rules of each kind, as kstatus dispatches on group and kind.
var gates = map[Kind]func(Ref, *view, Revision) decision{
	KindKustomization: kustomizationGate,
	KindHelmRelease:   helmReleaseGate,
}

// Evaluate reads the status of obj, the object ref names, and says whether it has applied
// want (any revision when want is zero) and is Ready, is still getting there, has failed or
// is suspended. A nil obj is InProgress: it may not have been created yet.
func Evaluate(ref Ref, obj *unstructured.Unstructured, want Revision) Gate {
	fo := result.FluxObject{
		ID: ref.ID(), Kind: string(ref.Kind), Namespace: ref.Namespace, Name: ref.Name,
		Ready: string(metav1.ConditionUnknown),
	}
	var d decision
	applied, source := false, ""
	rules, known := gates[ref.Kind]
	switch {
	case obj == nil:
		d = decision{message: "the object does not exist yet"}
	case !known:
		d = decision{message: fmt.Sprintf("unknown kind %q; %s", ref.Kind, resourceUsage)}
	default:
		v := readView(ref.Kind, obj)
		d = rules(ref, v, want)
		applied = appliedRules[ref.Kind](v, want)
		source = v.sourceRef
		if c := v.cond(meta.ReadyCondition); c.status != "" {
			fo.Ready = c.status
		}
		fo.Suspended = v.suspended
		fo.LastAppliedRevision, fo.LastAttemptedRevision = v.lastApplied, v.lastAttempted
		fo.ChartVersion = v.chartVersion()
		fo.Generation, fo.ObservedGeneration = v.generation, v.observedGeneration
	}
	d.message = sanitize.Compact(d.message)
	d.verdict = cmp.Or(d.verdict, result.VerdictInProgress)
	fo.Verdict, fo.Code, fo.Reason, fo.Message = d.verdict, d.code, d.reason, d.message
	return Gate{Verdict: d.verdict, Object: fo, Code: d.code, Message: d.message, Applied: applied, Source: source}
}

// suspendedGate is the decision for an object with spec.suspend: true.
func suspendedGate(ref Ref) decision {
	return decision{
		verdict: result.VerdictSuspended, code: result.CodeFluxSuspended, reason: meta.SuspendedReason,
		message: fmt.Sprintf("suspended (spec.suspend: true); resume it with: flux resume %s %s -n %s",
			kinds[ref.Kind].cli, ref.Name, ref.Namespace),
	}
}

// dependencyPattern finds the dependency a DependencyNotReady message names, e.g.
// "dependency 'flux-system/infra' is not ready" or "unable to get 'apps/redis' dependency".
var dependencyPattern = regexp.MustCompile(`'([^'/\s]+/[^'/\s]+)'`)

// dependencyGate is the decision for Ready=False with reason DependencyNotReady.
func dependencyGate(v *view, ready condition) decision {
	d := decision{verdict: result.VerdictInProgress, code: result.CodeFluxDependencyNotReady, reason: ready.reason}
	waiting := "dependencies"
	if m := dependencyPattern.FindStringSubmatch(ready.message); m != nil {
		waiting = "dependency " + m[1]
	}
	deps := ""
	if len(v.dependsOn) > 0 {
		deps = fmt.Sprintf(" (dependsOn: %s)", strings.Join(v.dependsOn, ", "))
	}
	d.message = fmt.Sprintf("waiting for %s to be ready%s: %s", waiting, deps, ready.message)
	return d
}

// staleFailure is the decision for a failure of a revision other than the expected one: the
// expected revision has not been attempted yet.
func staleFailure(want Revision, attempted string, failure decision) decision {
	last := "the last attempt failed"
	if attempted != "" {
		last = fmt.Sprintf("the last attempt was %s and failed", ShortRevision(attempted))
	}
	failure.verdict = result.VerdictInProgress
	failure.message = fmt.Sprintf("waiting for %s to be attempted; %s: %s", ShortRevision(want.String()), last, failure.message)
	return failure
}

// olderGeneration reports whether a condition was set for an older generation of the spec
// than the current one, which the controller has yet to reconcile.
func (v *view) olderGeneration(c condition) bool {
	return c.observedGeneration > 0 && c.observedGeneration < v.generation
}

// staleGeneration is the decision for a failure recorded for an older generation of the spec:
// the controller has yet to try the current one, which may fix it.
func staleGeneration(v *view, c condition, controller string, failure decision) decision {
	failure.verdict = result.VerdictInProgress
	failure.message = fmt.Sprintf("waiting for %s to reconcile generation %d; generation %d failed: %s",
		controller, v.generation, c.observedGeneration, failure.message)
	return failure
}

// staleSuccess is the message for an object that is done, but with another revision.
func staleSuccess(applied string, want Revision) string {
	if applied == "" {
		return fmt.Sprintf("nothing applied yet, waiting for %s", ShortRevision(want.String()))
	}
	return fmt.Sprintf("applied %s, waiting for %s", ShortRevision(applied), ShortRevision(want.String()))
}

// progressing is the decision for an object that is neither done nor failed: it reports the
// error the controller retries (Ready=False), or else what it says it is doing.
func progressing(v *view, controller string) decision {
	ready := v.cond(meta.ReadyCondition)
	rc := v.cond(meta.ReconcilingCondition)
	switch {
	case ready.status == string(metav1.ConditionFalse) && ready.message != "":
		return decision{reason: ready.reason, message: ready.message}
	case rc.status == string(metav1.ConditionTrue) && rc.message != "":
		return decision{reason: rc.reason, message: rc.message}
	case ready.status == "":
		return decision{message: fmt.Sprintf("waiting for %s to report the Ready condition", controller)}
	case ready.message == "":
		return decision{reason: ready.reason, message: fmt.Sprintf("Ready is %s (%s)", ready.status, ready.reason)}
	}
	return decision{reason: ready.reason, message: ready.message}
}

// generationPending is the message for a Ready object whose latest spec is not reconciled yet.
func generationPending(v *view, controller string) string {
	if v.observedGeneration <= 0 {
		return fmt.Sprintf("waiting for %s to reconcile generation %d for the first time", controller, v.generation)
	}
	return fmt.Sprintf("waiting for %s to reconcile generation %d (observed %d)", controller, v.generation, v.observedGeneration)
}

// condition is one status condition. Its observedGeneration is the generation of the spec the
// controller was working on when it set the condition.
type condition struct {
	status, reason, message string
	observedGeneration      int64
}

// release is one entry of a HelmRelease's status.history.
type release struct{ chartVersion, status, ociDigest string }

// view is what the rules read from a Flux object. Fields of the wrong type read as missing:
// a status the controller did not write yet.
type view struct {
	namespace                      string
	generation, observedGeneration int64
	suspended                      bool
	conditions                     map[string]condition
	lastApplied                    string // a HelmRelease's is the chart version of its deployed release
	lastAttempted                  string
	lastAttemptedDigest            string
	lastAttemptedGeneration        int64 // a HelmRelease's: the generation of its last attempt
	history                        []release
	dependsOn                      []string // namespace/name
	sourceRef                      string   // a Kustomization's: Kind/namespace/name
	testIgnoreFailures             bool
}

func readView(kind Kind, obj *unstructured.Unstructured) *view {
	u := obj.Object
	v := &view{namespace: obj.GetNamespace(), conditions: map[string]condition{}}
	v.generation = int64Field(u, "metadata", "generation")
	v.observedGeneration = int64Field(u, "status", "observedGeneration")
	v.suspended, _, _ = unstructured.NestedBool(u, "spec", "suspend")
	v.testIgnoreFailures, _, _ = unstructured.NestedBool(u, "spec", "test", "ignoreFailures")
	v.lastApplied, _, _ = unstructured.NestedString(u, "status", "lastAppliedRevision")
	v.lastAttempted, _, _ = unstructured.NestedString(u, "status", "lastAttemptedRevision")
	v.lastAttemptedDigest, _, _ = unstructured.NestedString(u, "status", "lastAttemptedRevisionDigest")
	v.lastAttemptedGeneration = int64Field(u, "status", "lastAttemptedGeneration")
	v.sourceRef = SourceRef(kind, obj)
	for _, m := range nestedMaps(u, "status", "conditions") {
		t := str(m, "type")
		if _, seen := v.conditions[t]; !seen && t != "" {
			v.conditions[t] = condition{
				status: str(m, "status"), reason: str(m, "reason"), message: str(m, "message"),
				observedGeneration: int64Field(m, "observedGeneration"),
			}
		}
	}
	for _, m := range nestedMaps(u, "status", "history") {
		v.history = append(v.history, release{chartVersion: str(m, "chartVersion"), status: str(m, "status"), ociDigest: str(m, "ociDigest")})
	}
	for _, m := range nestedMaps(u, "spec", "dependsOn") {
		ns := str(m, "namespace")
		if ns == "" {
			ns = v.namespace
		}
		v.dependsOn = append(v.dependsOn, ns+"/"+str(m, "name"))
	}
	sort.Strings(v.dependsOn)
	if kind == KindHelmRelease {
		// A HelmRelease has no lastAppliedRevision: what it has applied is the chart version
		// of the release Helm reports as deployed, the newest such entry of the history.
		v.lastApplied = ""
		if r, ok := v.deployed(); ok {
			v.lastApplied = r.chartVersion
		}
	}
	return v
}

// SourceRef is a Kustomization's spec.sourceRef, Kind/namespace/name (the namespace defaults
// to the Kustomization's), or "" for other kinds and when it has none.
func SourceRef(kind Kind, obj *unstructured.Unstructured) string {
	if kind != KindKustomization || obj == nil {
		return ""
	}
	src, ok, _ := unstructured.NestedMap(obj.Object, "spec", "sourceRef")
	if !ok || str(src, "name") == "" {
		return ""
	}
	return result.ObjectID(str(src, "kind"), cmp.Or(str(src, "namespace"), obj.GetNamespace()), str(src, "name"))
}

func nestedMaps(u map[string]any, fields ...string) []map[string]any {
	items, _, _ := unstructured.NestedSlice(u, fields...)
	var out []map[string]any
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// int64Field reads an integer decoded as int64 (client-go) or float64 (encoding/json).
func int64Field(u map[string]any, fields ...string) int64 {
	x, _, _ := unstructured.NestedFieldNoCopy(u, fields...)
	switch n := x.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// cond returns the condition of the given type; a missing one has an empty status.
func (v *view) cond(t string) condition { return v.conditions[t] }

// deployed is the newest release of a HelmRelease's history that Helm reports as deployed.
func (v *view) deployed() (release, bool) {
	for _, r := range v.history {
		if r.status == releaseStatusDeployed {
			return r, true
		}
	}
	return release{}, false
}

// chartVersion is the chart version of a HelmRelease's latest release, history[0].
func (v *view) chartVersion() string {
	if len(v.history) == 0 {
		return ""
	}
	return v.history[0].chartVersion
}
