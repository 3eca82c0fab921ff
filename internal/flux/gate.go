package flux

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
	// Source is the source the object applies from (SourceOf), Kind/namespace/name: nested
	// objects of the same source must apply the same revision.
	Source string
	// Remote is set when the object applies to another cluster (spec.kubeConfig): what its
	// inventory lists lives there, and is not verified here.
	Remote bool
	// DependsOn are the objects of the same kind it waits for (spec.dependsOn) with Flux's
	// own readiness check (an entry with a readyExpr is left out): the one a DependencyNotReady
	// message names, or all of them.
	DependsOn []Ref
	// Attempting are the revisions the object works on or last worked on (Superseded).
	Attempting []string
	// HasApplied reports whether the expected revision is the one the object last applied
	// (a Kustomization's lastAppliedRevision, a HelmRelease's newest deployed release),
	// whatever it works on now: Flux finished it before a newer one came (Superseded).
	HasApplied bool
	// Upgrading is set while helm-controller runs Helm's upgrade to the expected chart at the
	// current generation (not recorded in status.history until Helm returns, after its wait):
	// the chart version it upgrades to. The workloads Helm has updated since are the new
	// chart's, and may fail the rollout at once, whatever Helm's wait.
	Upgrading string
	// Installing is set while helm-controller runs Helm's install of the expected chart at the
	// current generation: the chart version it installs. Every workload of the release (by
	// Helm's meta.helm.sh/release-name annotation) is then the new chart's, and may fail the
	// rollout at once, whatever Helm's wait. ReleaseName and ReleaseNamespace name the release.
	Installing                    string
	ReleaseName, ReleaseNamespace string
	// UpgradeAttempt names the attempt of that upgrade (the chart, the generation and the
	// release it starts from): a retry after a rollback is another attempt.
	UpgradeAttempt string
	// Retried is set on a failure its controller retries and that may pass with no change to
	// the revision, when something the same rollout brings becomes available: a dry-run
	// against a CRD or webhook not served yet, a namespace created by another object, an
	// artifact that cannot be downloaded yet, a valuesFrom ConfigMap or Secret that an
	// operator creates later. The engine lets it last its retry grace before it counts.
	Retried bool
	// FailedAt is when the retried failure (or a Kustomization's failed health checks) was
	// last reported (its Ready=False condition's
	// lastTransitionTime: kustomize-controller marks Ready Unknown at the start of every
	// attempt, and helm-controller before every release action, so this is the end of the
	// latest one), and RetryEvery how soon the controller tries again: a Kustomization's
	// spec.retryInterval, else spec.interval; a HelmRelease's action's RetryOnFailure
	// retryInterval (helmRetryInterval). Zero when unknown or at once. They tell whether the
	// controller has tried again since a moment.
	FailedAt   time.Time
	RetryEvery time.Duration
	// MaybeOlderGeneration is set on a Kustomization's failure that may be of an older
	// generation than the current one, though its condition carries the current one
	// (kustomizationGate says when); FailedAt and RetryEvery then time it.
	MaybeOlderGeneration bool
	// GeneratedWant is set on a ResourceSet whose inputs do not carry the expected revision
	// (ResourceSetInputsCarry): one of the Flux objects it generated must have applied the
	// expected revision itself. Each of them applies what its own source offers, as any
	// nested object of another source.
	GeneratedWant bool
	// CRDsSkippedBy names a HelmRelease's CRD policy that kept helm-controller from creating
	// the CRDs of its chart its inventory lists ("spec.upgrade.crds: Skip", crdsSkippedBy):
	// one of them not found was never created, and will not be.
	CRDsSkippedBy string
	// WaitsForAll is set when the object's Ready condition says every object it applied is
	// Current, a Job deleted after it finished (ttlSecondsAfterFinished) included: a
	// Kustomization with spec.wait, a HelmRelease whose release action waited for Jobs
	// (waitsForJobs).
	WaitsForAll bool
}

// decision is what a kind's rules conclude; Evaluate turns it into a Gate.
type decision struct {
	verdict result.Verdict // zero means InProgress
	code    result.Code
	reason  string // the Flux reason behind the decision
	message string
	// retried marks a failure its controller retries and that may pass by itself (Gate.Retried).
	retried bool
	// olderGeneration marks a failure that may be of an older generation
	// (Gate.MaybeOlderGeneration).
	olderGeneration bool
}

// gates holds the rules of each kind, as kstatus dispatches on group and kind.
var gates = map[Kind]func(Ref, *view, Revision) decision{
	KindKustomization: kustomizationGate,
	KindHelmRelease:   helmReleaseGate,
	KindResourceSet:   resourceSetGate,
}

// Working reports whether the object waits only while its controller works through a
// reconcile, with no failure to report: Reconciling=True with reason Progressing ("Fetching
// manifests…", "Building manifests…", "Detecting drift…", "Running health checks…",
// helm-controller's "Running 'upgrade' action…"), phases that follow each other within
// moments.
func (g Gate) Working() bool {
	return g.Verdict == result.VerdictInProgress && g.Code == "" && g.Object.Reason == meta.ProgressingReason
}

// Evaluate reads the status of obj, the object ref names, and says whether it has applied
// want (any revision when want is zero) and is Ready, is still getting there, has failed or
// is suspended. A nil obj is InProgress: it may not have been created yet. src, when known, is
// the object's source as it is now (ReadSource of SourceOf): it tells the revision an OCI
// artifact or a chart was built from, which then counts as applied too.
func Evaluate(ref Ref, obj *unstructured.Unstructured, want Revision, src *Source) Gate {
	fo := result.FluxObject{
		ID: ref.ID(), Kind: string(ref.Kind), Namespace: ref.Namespace, Name: ref.Name,
		Ready: string(metav1.ConditionUnknown),
	}
	var d decision
	var g Gate
	rules, known := gates[ref.Kind]
	switch {
	case obj == nil:
		d = decision{message: "the object does not exist yet"}
	case !known:
		d = decision{message: fmt.Sprintf("unknown kind %q; %s", ref.Kind, resourceUsage)}
	default:
		v := readView(ref.Kind, obj)
		v.src = src
		d = rules(ref, v, want)
		if d.retried || d.olderGeneration || d.code == result.CodeFluxHealthCheckFailed || d.code == result.CodeFluxValuesFailed || immutableJobFailure(ref.Kind, d) {
			retrySchedule(ref.Kind, obj, v, &d, &g)
		}
		g.Applied = appliedRules[ref.Kind](v, want)
		g.Source, g.Remote = v.sourceRef, v.remote
		g.WaitsForAll = waitsForAll(ref.Kind, obj)
		g.GeneratedWant = ref.Kind == KindResourceSet && !want.IsZero() && !ResourceSetInputsCarry(obj, want)
		g.DependsOn = v.waitingFor(ref.Kind)
		g.Attempting = v.attempting()
		g.HasApplied = !want.IsZero() && v.hasApplied(want)
		if ref.Kind == KindHelmRelease {
			g.CRDsSkippedBy = crdsSkippedBy(obj)
		}
		if ref.Kind == KindHelmRelease && v.installing(want) {
			g.Installing = v.lastAttempted
			g.ReleaseName, g.ReleaseNamespace = releaseName(obj)
		}
		if ref.Kind == KindHelmRelease && v.upgrading(want) {
			g.Upgrading = v.lastAttempted
			g.UpgradeAttempt = fmt.Sprintf("%s@%d", v.lastAttempted, v.generation)
			if len(v.history) > 0 {
				g.UpgradeAttempt += fmt.Sprintf(" from release %d", v.history[0].version)
			}
		}
		if v.remote && d.verdict == result.VerdictCurrent {
			if waited, how := remoteWaited(ref.Kind, obj); waited {
				d.message = joinSentences(d.message, remoteNote(v)+"; "+how)
			} else {
				// Not a failed rollout: nothing here says how it went, so the run cannot tell.
				d = decision{verdict: result.VerdictUnverified, code: result.CodeFluxRemoteUnverified, reason: "RemoteNotVerified",
					message: joinSentences(d.message, remoteNote(v)+", and Flux did not wait for them ("+how+
						"), so its Ready says only that they were applied: whether they rolled out cannot be told from this cluster. "+
						"To verify it, make Flux wait for them: set spec.wait: true (or spec.healthChecks naming every object it applies); "+
						"a HelmRelease: leave Helm's wait on")}
			}
		}
		if ref.Kind == KindHelmRelease && d.verdict == result.VerdictCurrent {
			if c := v.cond(driftedCondition); c.status == string(metav1.ConditionTrue) {
				d.message = joinSentences(d.message, "helm-controller detected drift (Drifted=True): the cluster differs from the release: "+c.message)
			}
		}
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
	fo.Remote = g.Remote
	g.Verdict, g.Object, g.Code, g.Message = d.verdict, fo, d.code, d.message
	g.Retried = d.retried && d.verdict == result.VerdictFailed
	g.MaybeOlderGeneration = d.olderGeneration && d.verdict == result.VerdictFailed
	if d.verdict != result.VerdictFailed {
		g.FailedAt, g.RetryEvery = time.Time{}, 0
	}
	return g
}

// retrySchedule records in g when the failure d was written and how soon the controller of
// kind tries again; a HelmRelease's retry note is added to d's message.
func retrySchedule(kind Kind, obj *unstructured.Unstructured, v *view, d *decision, g *Gate) {
	g.FailedAt = v.cond(meta.ReadyCondition).since
	switch kind {
	case KindKustomization:
		g.RetryEvery = retryInterval(obj, v.cond(meta.ReadyCondition).message)
	case KindResourceSet:
		g.RetryEvery = resourceSetRetry(obj)
	case KindHelmRelease:
		var note string
		g.RetryEvery, note = helmRetryInterval(obj, v, d.code)
		if d.retried && note != "" {
			d.message = joinSentences(d.message, note)
		}
	}
}

// retryInterval is how soon kustomize-controller tries a failed Kustomization again: what its
// message says, else spec.retryInterval, else spec.interval (api/v1 GetRetryInterval).
func retryInterval(obj *unstructured.Unstructured, message string) time.Duration {
	if m := retryingInWords.FindStringSubmatch(message); m != nil {
		if d, err := time.ParseDuration(m[1]); err == nil && d > 0 {
			return d
		}
	}
	for _, field := range []string{"retryInterval", "interval"} {
		if v, _, _ := unstructured.NestedString(obj.Object, "spec", field); v != "" {
			if d, err := time.ParseDuration(v); err == nil && d > 0 {
				return d
			}
		}
	}
	return 0
}

// driftedCondition is helm-controller's condition for a release whose objects differ from the
// cluster (spec.driftDetection.mode: warn; helm-controller v1.6 api/v2 DriftedCondition).
const driftedCondition = "Drifted"

// remoteWaited reports whether Flux itself waited for the objects an object applies to a
// remote cluster before it said Ready: a Kustomization with spec.wait or health checks of
// every object it applies that has a status (remoteChecked), a HelmRelease with Helm's wait (on
// unless disableWait); how says which, or what is missing.
func remoteWaited(kind Kind, obj *unstructured.Unstructured) (bool, string) {
	switch kind {
	case KindKustomization:
		if wait, _, _ := unstructured.NestedBool(obj.Object, "spec", "wait"); wait {
			return true, "kustomize-controller waited for them (spec.wait)"
		}
		return remoteChecked(obj)
	case KindHelmRelease:
		// The wait of the action that made the release: status.lastAttemptedReleaseAction
		// (helm-controller v1.6), both when it is not recorded.
		actions := []string{"install", "upgrade"}
		if last, _, _ := unstructured.NestedString(obj.Object, "status", "lastAttemptedReleaseAction"); last == "install" || last == "upgrade" {
			actions = []string{last}
		}
		for _, action := range actions {
			if off, _, _ := unstructured.NestedBool(obj.Object, "spec", action, "disableWait"); off {
				return false, "spec." + action + ".disableWait"
			}
		}
		for _, action := range actions {
			if off, _, _ := unstructured.NestedBool(obj.Object, "spec", action, "disableWaitForJobs"); off {
				return true, "Helm waited for them, but not for their Jobs (spec." + action + ".disableWaitForJobs)"
			}
		}
		return true, "Helm waited for them"
	}
	return false, "no wait"
}

// WaitedForAll reports whether Flux itself waited for every object an object applied, with a
// status, before it said Ready (a Kustomization's spec.wait or health checks of each, a
// HelmRelease's Helm wait; remoteWaited), and how, or what is missing: then its Ready on a
// revision says that revision's workloads rolled out, whatever replaced them since.
func WaitedForAll(kind Kind, obj *unstructured.Unstructured) (bool, string) {
	return remoteWaited(kind, obj)
}

// waitsForAll reports whether the object's Ready condition says every object it applied was
// Current (Gate.WaitsForAll). A Kustomization: with spec.wait. A HelmRelease: when the action
// of its release (status.lastAttemptedReleaseAction; both when unknown) waited, and waited for
// Jobs (neither disableWait nor disableWaitForJobs). helm-controller v1.6.4 then waits with
// fluxcd/pkg/ssa (internal/action/wait.go WaitWithJobs), which counts a Job that is gone and
// had a ttlSecondsAfterFinished as finished; Helm's legacy wait strategy fails on a Job it
// cannot get, so it was Complete when its wait passed.
func waitsForAll(kind Kind, obj *unstructured.Unstructured) bool {
	switch kind {
	case KindKustomization, KindResourceSet:
		wait, _, _ := unstructured.NestedBool(obj.Object, "spec", "wait")
		return wait
	case KindHelmRelease:
		actions := []string{"install", "upgrade"}
		if last, _, _ := unstructured.NestedString(obj.Object, "status", "lastAttemptedReleaseAction"); last == "install" || last == "upgrade" {
			actions = []string{last}
		}
		for _, action := range actions {
			for _, off := range []string{"disableWait", "disableWaitForJobs"} {
				if disabled, _, _ := unstructured.NestedBool(obj.Object, "spec", action, off); disabled {
					return false
				}
			}
		}
		return true
	}
	return false
}

// statusless are the kinds whose objects have no status to wait for: kstatus calls them
// Current as soon as they exist (cli-utils kstatus/status/core.go has no rule for them, and
// they carry no conditions), so a health check of one proves nothing more than Ready does.
var statusless = map[string]bool{
	"/ConfigMap": true, "/Secret": true, "/ServiceAccount": true, "/LimitRange": true, "/ResourceQuota": true,
	"rbac.authorization.k8s.io/Role": true, "rbac.authorization.k8s.io/RoleBinding": true,
	"rbac.authorization.k8s.io/ClusterRole": true, "rbac.authorization.k8s.io/ClusterRoleBinding": true,
	"networking.k8s.io/NetworkPolicy": true,
}

// remoteChecked reports whether a Kustomization without spec.wait checked every object it
// applies that has a status: kustomize-controller v1.9.5 (checkHealth) then checks
// spec.healthChecks only (inventory.ReferenceToObjMetadataSet: apiVersion apps/v1 when unset,
// the namespace as given), so its Ready says nothing of an object they leave out. how says
// which objects they miss, or that they cover them all.
func remoteChecked(obj *unstructured.Unstructured) (bool, string) {
	checks := nestedMaps(obj.Object, "spec", "healthChecks")
	if len(checks) == 0 {
		return false, "no spec.wait, no spec.healthChecks"
	}
	refs, err := Inventory(obj)
	if err != nil {
		return false, "its inventory cannot be read to compare with spec.healthChecks: " + err.Error()
	}
	checked := map[ObjectRef]bool{}
	for _, c := range checks {
		gv, err := schema.ParseGroupVersion(cmp.Or(str(c, "apiVersion"), "apps/v1"))
		if err != nil {
			continue
		}
		checked[ObjectRef{Group: gv.Group, Kind: str(c, "kind"), Namespace: str(c, "namespace"), Name: str(c, "name")}] = true
	}
	var missed []string
	for _, r := range refs {
		if !statusless[r.Group+"/"+r.Kind] && !checked[ObjectRef{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}] {
			missed = append(missed, r.ID())
		}
	}
	if len(missed) > 0 {
		more := ""
		if len(missed) > 3 {
			missed, more = missed[:3], fmt.Sprintf(" and %d more", len(missed)-3)
		}
		return false, fmt.Sprintf("spec.healthChecks leave out %s%s, and there is no spec.wait", strings.Join(missed, ", "), more)
	}
	return true, fmt.Sprintf("kustomize-controller checked every one with a status (spec.healthChecks, %d)", len(checks))
}

// remoteNote says that the objects of an object applying to another cluster are not verified.
func remoteNote(v *view) string {
	if !v.hasInventory {
		return "what it applies is in a remote cluster (spec.kubeConfig) and is not verified here"
	}
	return fmt.Sprintf("its %d objects are applied to a remote cluster (spec.kubeConfig) and are not verified here", v.inventorySize)
}

// waitingFor are the dependencies Flux checks itself: the one its DependencyNotReady message
// names when it names one of them, or all of them.
func (v *view) waitingFor(kind Kind) []Ref {
	var deps []Ref
	for _, dep := range v.dependsOnChecked {
		ns, name, _ := strings.Cut(dep, "/")
		deps = append(deps, Ref{Kind: kind, Namespace: ns, Name: name})
	}
	if ready := v.cond(meta.ReadyCondition); ready.reason == meta.DependencyNotReadyReason {
		if m := dependencyWords.FindStringSubmatch(ready.message); m != nil {
			for _, d := range deps {
				if d.Namespace+"/"+d.Name == m[1] {
					return []Ref{d}
				}
			}
		}
	}
	return deps
}

func joinSentences(a, b string) string {
	if a == "" {
		return b
	}
	return strings.TrimRight(a, ". ") + "; " + b
}

// ReadyDependency reports whether a dependency lets its dependents go on, as Flux checks it:
// Ready at its current generation and, for a Kustomization, when want is set (it applies from
// the dependent's own source), on that revision. A suspended dependency that is Ready does not
// hold anything up.
func ReadyDependency(ref Ref, obj *unstructured.Unstructured, want Revision, src *Source) bool {
	if obj == nil {
		return false
	}
	v := readView(ref.Kind, obj)
	v.src = src
	if len(v.conditions) == 0 || v.generation != v.observedGeneration || v.cond(meta.ReadyCondition).status != string(metav1.ConditionTrue) {
		return false
	}
	if ref.Kind == KindHelmRelease {
		return true // helm-controller checks Ready at the current generation only
	}
	return v.applied(want)
}

// suspendedGate is the decision for an object with spec.suspend: true.
func suspendedGate(ref Ref) decision {
	return decision{
		verdict: result.VerdictSuspended, code: result.CodeFluxSuspended, reason: meta.SuspendedReason,
		message: fmt.Sprintf("suspended (spec.suspend: true); resume it with: flux resume %s %s -n %s",
			kinds[ref.Kind].cli, ref.Name, ref.Namespace),
	}
}

// dependencyGate is the decision for Ready=False with reason DependencyNotReady.
func dependencyGate(v *view, ready condition) decision {
	d := decision{verdict: result.VerdictInProgress, code: result.CodeFluxDependencyNotReady, reason: ready.reason}
	waiting := "dependencies"
	if m := dependencyWords.FindStringSubmatch(ready.message); m != nil {
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
func staleGeneration(v *view, failedGeneration int64, controller string, failure decision) decision {
	failure.verdict = result.VerdictInProgress
	failure.message = fmt.Sprintf("waiting for %s to reconcile generation %d; generation %d failed: %s",
		controller, v.generation, failedGeneration, failure.message)
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
	case rc.status == string(metav1.ConditionTrue) && rc.message != "" && v.kind == KindKustomization &&
		healthCheckingWords.MatchString(rc.message) && ready.status == string(metav1.ConditionUnknown) && !v.currentGeneration(ready):
		return decision{reason: rc.reason, message: fmt.Sprintf("%s, in a reconcile begun on generation %d: its objects are the previous spec's, and %s reconciles generation %d next",
			rc.message, ready.observedGeneration, controller, v.generation)}
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
	// since is the condition's lastTransitionTime (zero when missing or unreadable).
	since time.Time
}

// release is one entry of a HelmRelease's status.history.
type release struct {
	chartVersion, status, ociDigest, configDigest string
	version                                       int64
}

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
	lastAttemptedGeneration        int64  // a HelmRelease's: the generation of its last attempt
	lastAttemptedConfigDigest      string // a HelmRelease's: the digest of the values it last attempted
	history                        []release
	dependsOn                      []string // namespace/name
	dependsOnChecked               []string // those without a readyExpr, which Flux checks itself
	kind                           Kind
	sourceRef                      string // SourceOf: Kind/namespace/name
	// testFailureIgnored: a HelmRelease's failed tests count neither in its Ready nor as a
	// failure of its release (testFailureIgnored).
	testFailureIgnored bool
	// lastAppliedOrigin is a Kustomization's lastAppliedOriginRevision: the revision the
	// applied OCI artifact was built from.
	lastAppliedOrigin string
	// reconcilingRevision is the revision a Kustomization's Reconciling message names
	// ("Fetching manifests for revision X with a timeout of 5m0s"): the one it works on,
	// before it records lastAttemptedRevision.
	reconcilingRevision string
	// reconcilingUnrecognised is set when a Kustomization's Reconciling message is not one of
	// kustomize-controller's known words (reconcilingRevisionWords).
	reconcilingUnrecognised bool
	remote                  bool // spec.kubeConfig is set
	inventorySize           int
	hasInventory            bool
	src                     *Source // the object's source as it is now, when known
	// obj is the object itself, for the rules that read its spec.
	obj *unstructured.Unstructured
}

func readView(kind Kind, obj *unstructured.Unstructured) *view {
	u := obj.Object
	v := &view{namespace: obj.GetNamespace(), conditions: map[string]condition{}, obj: obj}
	v.generation = int64Field(u, "metadata", "generation")
	v.observedGeneration = int64Field(u, "status", "observedGeneration")
	v.suspended, _, _ = unstructured.NestedBool(u, "spec", "suspend")
	v.testFailureIgnored = testFailureIgnored(obj)
	v.lastApplied, _, _ = unstructured.NestedString(u, "status", "lastAppliedRevision")
	v.lastAttempted, _, _ = unstructured.NestedString(u, "status", "lastAttemptedRevision")
	v.lastAttemptedDigest, _, _ = unstructured.NestedString(u, "status", "lastAttemptedRevisionDigest")
	v.lastAttemptedGeneration = int64Field(u, "status", "lastAttemptedGeneration")
	v.lastAttemptedConfigDigest, _, _ = unstructured.NestedString(u, "status", "lastAttemptedConfigDigest")
	v.sourceRef = SourceOf(kind, obj).ID()
	v.lastAppliedOrigin, _, _ = unstructured.NestedString(u, "status", "lastAppliedOriginRevision")
	_, v.remote, _ = unstructured.NestedMap(u, "spec", "kubeConfig")
	v.inventorySize = len(nestedMaps(u, "status", "inventory", "entries"))
	_, v.hasInventory, _ = unstructured.NestedFieldNoCopy(u, "status", "inventory")
	v.kind = kind
	for _, m := range nestedMaps(u, "status", "conditions") {
		t := str(m, "type")
		if _, seen := v.conditions[t]; !seen && t != "" {
			since, _ := time.Parse(time.RFC3339, str(m, "lastTransitionTime"))
			v.conditions[t] = condition{
				status: str(m, "status"), reason: str(m, "reason"), message: str(m, "message"),
				observedGeneration: int64Field(m, "observedGeneration"), since: since,
			}
		}
	}
	for _, m := range nestedMaps(u, "status", "history") {
		v.history = append(v.history, release{chartVersion: str(m, "chartVersion"), status: str(m, "status"), ociDigest: str(m, "ociDigest"),
			configDigest: str(m, "configDigest"), version: int64Field(m, "version")})
	}
	for _, m := range nestedMaps(u, "spec", "dependsOn") {
		if kind == KindResourceSet {
			// Any object of the cluster, not a Flux object of its kind: flux-operator
			// checks them, and says so in DependencyNotReady.
			break
		}
		ns := str(m, "namespace")
		if ns == "" {
			ns = v.namespace
		}
		v.dependsOn = append(v.dependsOn, ns+"/"+str(m, "name"))
		if str(m, "readyExpr") == "" {
			v.dependsOnChecked = append(v.dependsOnChecked, ns+"/"+str(m, "name"))
		}
	}
	sort.Strings(v.dependsOn)
	sort.Strings(v.dependsOnChecked)
	if kind == KindResourceSet {
		v.suspended = operatorDisabled(obj)
		// No status.observedGeneration: the Ready condition says which generation it
		// reconciled.
		v.observedGeneration = v.cond(meta.ReadyCondition).observedGeneration
	}
	if rc := v.cond(meta.ReconcilingCondition); kind == KindKustomization && rc.status == string(metav1.ConditionTrue) && v.currentGeneration(rc) {
		if m := reconcilingRevisionWords.FindStringSubmatch(rc.message); m != nil {
			v.reconcilingRevision = m[1]
		} else {
			v.reconcilingUnrecognised = rc.message != ""
		}
	}
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

func nestedMaps(u map[string]any, fields ...string) []map[string]any {
	items, _, _ := NestedSlice(u, fields...)
	var out []map[string]any
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// NestedSlice is unstructured.NestedSlice without its deep copy: the slice at fields, as the
// cached object holds it, for reading only (a Kustomization's inventory of thousands of
// entries is otherwise copied on every evaluation). found is false when a field is missing; an
// error says a field is of another type.
func NestedSlice(u map[string]any, fields ...string) (items []any, found bool, err error) {
	v, found, err := unstructured.NestedFieldNoCopy(u, fields...)
	if !found || err != nil {
		return nil, found, err
	}
	items, ok := v.([]any)
	if !ok {
		return nil, false, fmt.Errorf(".%s accessor error: %v is of the type %T, expected []interface{}", strings.Join(fields, "."), v, v)
	}
	return items, true, nil
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

// IsRemote reports whether a Flux object applies to another cluster (spec.kubeConfig).
func IsRemote(obj *unstructured.Unstructured) bool {
	_, remote, _ := unstructured.NestedMap(obj.Object, "spec", "kubeConfig")
	return remote
}

// immutableJobFailure reports whether d is a Kustomization's failure to apply a Job's changed
// template (ImmutableJob), which the engine times by the Job's TTL and the retry after it.
func immutableJobFailure(kind Kind, d decision) bool {
	if kind != KindKustomization || d.verdict != result.VerdictFailed || d.code != result.CodeFluxReconciliationFailed {
		return false
	}
	_, _, ok := ImmutableJob(d.message)
	return ok
}
