package verify

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/result"
)

// The trees of issue 18 where a nested object's own source, a dependency, a remote cluster or
// a Job deleted after it finished decides; the objects as YAML, as informers hold them.

// gitRepository is the GitRepository flux-system/NAME whose artifact is revision, at
// generation 1 (observed when done).
func gitRepository(name, revision string, done bool) string {
	observed := "1"
	if !done {
		observed = "0"
	}
	return `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: ` + name + `, namespace: flux-system, generation: 1}
status:
  observedGeneration: ` + observed + `
  artifact: {revision: "` + revision + `"}
  conditions: [{type: Ready, status: "True", reason: Succeeded}]`
}

// infraReadyOnA is infra's status once it applied revision A.
const infraReadyOnA = `  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revA + `
  inventory: {entries: []}
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: ` + revA + `", observedGeneration: 1}`

const revC = "main@sha1:ccccccc3333333333333333333333333333333cc"

// TestAssessNestedObjectAppliesWhatItsSourceOffers: a nested Kustomization of another source
// is Current only once it applied that source's current artifact, and source-controller is
// done with the source.
func TestAssessNestedObjectAppliesWhatItsSourceOffers(t *testing.T) {
	t.Parallel()
	root := rootWithInfra(readyOnB)
	tests := []struct {
		name    string
		source  string
		verdict result.Verdict // "" is Current
		says    string
	}{
		{"its source offers what it applied", gitRepository("infra", revA, true), "", ""},
		{"its source offers a newer artifact", gitRepository("infra", revC, true), result.VerdictInProgress, "applied main@sha1:aaaaaaa, waiting for main@sha1:ccccccc"},
		{"source-controller is fetching a new spec", gitRepository("infra", revA, false), result.VerdictInProgress, "waiting for source-controller to finish GitRepository/flux-system/infra"},
		{"its source stalled", `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: infra, namespace: flux-system, generation: 1}
status:
  observedGeneration: 1
  conditions:
  - {type: Stalled, status: "True", reason: URLInvalid, message: "invalid URL"}
  - {type: Ready, status: "False", reason: URLInvalid, message: "invalid URL"}`, result.VerdictFailed, "invalid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newFakeState(t, revB, root+"\n---\n"+infra(infraReadyOnA)+"\n---\n"+tt.source)
			e := s.assess(fixtureNow)
			switch tt.verdict {
			case "":
				if e.Fatal != nil || e.Pending != nil {
					t.Fatalf("fatal %+v, pending %+v; want Current", e.Fatal, e.Pending)
				}
			case result.VerdictFailed:
				if e.Fatal == nil || e.Fatal.Verdict != result.VerdictFailed || e.Fatal.Code != result.CodeFluxArtifactFailed || !strings.Contains(e.Fatal.Message, tt.says) {
					t.Fatalf("fatal %+v, pending %+v; want Failed flux-artifact-failed saying %q", e.Fatal, e.Pending, tt.says)
				}
			default:
				if e.Fatal != nil || e.Pending == nil || !strings.Contains(e.Pending.Message, tt.says) {
					t.Fatalf("fatal %+v, pending %+v; want waiting, saying %q", e.Fatal, e.Pending, tt.says)
				}
			}
		})
	}
	// Credentials that may not read the source: judged as before, and said.
	s := newFakeState(t, revB, root+"\n---\n"+infra(infraReadyOnA), gitGVR.GroupResource())
	e := s.assess(fixtureNow)
	if e.Fatal != nil || e.Pending != nil {
		t.Fatalf("source forbidden: fatal %+v, pending %+v; want Current", e.Fatal, e.Pending)
	}
	for _, f := range e.Flux {
		if f.Name == "infra" && !strings.Contains(f.Message, "not compared with its source GitRepository/flux-system/infra") {
			t.Errorf("infra's message %q, want it to say it was not compared with its source", f.Message)
		}
	}
}

// TestAssessSuperseded: waiting for B, the run sees the source on A, then on C: B will not be
// applied.
func TestAssessSuperseded(t *testing.T) {
	t.Parallel()
	readyOnA := `  observedGeneration: 2
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revA + `
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: ` + revA + `", observedGeneration: 2}`
	s := newFakeState(t, revB, kustomization(readyOnA)+"\n---\n"+gitRepository("app", revA, true))
	if e := s.assess(fixtureNow); e.Fatal != nil || e.Pending == nil {
		t.Fatalf("source on A: fatal %+v, pending %+v; want waiting for B", e.Fatal, e.Pending)
	}
	replaceFixture(t, s, gitRepository("app", revC, true))
	if e := s.assess(fixtureNow); e.Fatal != nil {
		t.Fatalf("source moved to C, the Kustomization not on C yet: fatal %+v; want waiting", e.Fatal)
	}
	// kustomize-controller still health-checks B when the source moves to C: B may yet be
	// applied (it does not cancel health checks for a new revision).
	healthCheckingB := `  observedGeneration: 2
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: "Running health checks for revision ` + revB + ` with a timeout of 5m0s", observedGeneration: 2}
  - {type: Ready, status: Unknown, reason: Progressing, message: Reconciliation in progress, observedGeneration: 2}`
	replaceFixture(t, s, kustomization(healthCheckingB))
	if e := s.assess(fixtureNow); e.Fatal != nil {
		t.Fatalf("source on C, B still health-checked: fatal %+v; want waiting", e.Fatal)
	}
	buildingC := strings.ReplaceAll(healthCheckingB, "Running health checks for revision "+revB, "Building manifests for revision "+revC)
	buildingC = strings.Replace(buildingC, "lastAttemptedRevision: "+revB, "lastAttemptedRevision: "+revC, 1)
	replaceFixture(t, s, kustomization(buildingC))
	e := s.assess(fixtureNow)
	if e.Fatal == nil || e.Fatal.Code != result.CodeFluxRevisionSuperseded || !strings.Contains(e.Fatal.Message, "main@sha1:ccccccc") {
		t.Fatalf("source moved to C, the Kustomization building C: fatal %+v, pending %+v; want Failed flux-revision-superseded naming C", e.Fatal, e.Pending)
	}
	// A run that first sees the source past B cannot tell older from newer: it waits.
	s = newFakeState(t, revB, kustomization(readyOnA)+"\n---\n"+gitRepository("app", revC, true))
	if e := s.assess(fixtureNow); e.Fatal != nil {
		t.Errorf("source first seen on C: fatal %+v; want waiting", e.Fatal)
	}
}

// replaceFixture replaces an object of the fake cluster, as a watch event would.
func replaceFixture(t *testing.T, s *clusterState, doc string) {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	for _, mp := range fakeMappings() {
		if mp.GroupVersionKind == u.GroupVersionKind() {
			l := s.watches.get(assess.ListKey{GVR: mp.Resource, Namespace: u.GetNamespace()}).(*staticList)
			if err := l.store.Update(u); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no mapping for %s", u.GroupVersionKind())
}

// TestAssessFailedDependency: the app waits for infra (dependsOn), outside the verified tree;
// infra's build failed for good: the run fails with flux-dependency-failed. A dependency
// still on its way keeps the run waiting.
func TestAssessFailedDependency(t *testing.T) {
	t.Parallel()
	app := `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, generation: 2, resourceVersion: "7"}
spec:
  sourceRef: {kind: GitRepository, name: app}
  dependsOn: [{name: infra}]
status:
  observedGeneration: 1
  conditions:
  - {type: Ready, status: "False", reason: DependencyNotReady, message: "dependency 'flux-system/infra' is not ready", observedGeneration: 2}`
	s := newFakeState(t, revB, app+"\n---\n"+infra(infraStalledOnA)+"\n---\n"+gitRepository("infra", revA, true))
	e := s.assess(fixtureNow)
	if e.Fatal == nil || e.Fatal.Code != result.CodeFluxDependencyFailed || !strings.Contains(e.Fatal.Message, "Kustomization/flux-system/infra") {
		t.Fatalf("failed dependency: fatal %+v, pending %+v; want Failed flux-dependency-failed naming infra", e.Fatal, e.Pending)
	}
	s = newFakeState(t, revB, app+"\n---\n"+infra(buildingB)+"\n---\n"+gitRepository("infra", revA, true))
	if e := s.assess(fixtureNow); e.Fatal != nil || e.Pending == nil || e.Pending.Code != result.CodeFluxDependencyNotReady {
		t.Fatalf("dependency on its way: fatal %+v, pending %+v; want waiting (flux-dependency-not-ready)", e.Fatal, e.Pending)
	}
	// A suspended dependency that is Ready does not hold the app up (Flux does not look at
	// suspend); one suspended short of Ready does, for good.
	suspendedReady := strings.Replace(infra(infraReadyOnA), "spec: {sourceRef: {kind: GitRepository, name: infra}}",
		"spec: {sourceRef: {kind: GitRepository, name: infra}, suspend: true}", 1)
	s = newFakeState(t, revB, app+"\n---\n"+suspendedReady+"\n---\n"+gitRepository("infra", revA, true))
	if e := s.assess(fixtureNow); e.Fatal != nil {
		t.Fatalf("suspended dependency, Ready: fatal %+v; want waiting", e.Fatal)
	}
	suspendedStalled := strings.Replace(infra(infraStalledOnA), "spec: {sourceRef: {kind: GitRepository, name: infra}}",
		"spec: {sourceRef: {kind: GitRepository, name: infra}, suspend: true}", 1)
	s = newFakeState(t, revB, app+"\n---\n"+suspendedStalled+"\n---\n"+gitRepository("infra", revA, true))
	if e := s.assess(fixtureNow); e.Fatal == nil || e.Fatal.Code != result.CodeFluxDependencyFailed || !strings.Contains(e.Fatal.Message, "suspended short of Ready") {
		t.Fatalf("suspended dependency, not Ready: fatal %+v, pending %+v; want flux-dependency-failed", e.Fatal, e.Pending)
	}
}

// TestAssessRemoteCluster: a Kustomization with spec.kubeConfig applies to another cluster:
// its objects are never looked up here (a namesake would pass, none would wait forever). It is
// Current only when Flux itself waited for them (spec.wait, health checks of every one); without, Ready
// says only that they were applied, and the verdict is flux-remote-unverified.
func TestAssessRemoteCluster(t *testing.T) {
	t.Parallel()
	remote := func(extra string) string {
		return strings.Replace(kustomization(readyOnB), "spec: {sourceRef: {kind: GitRepository, name: app}}",
			"spec: {sourceRef: {kind: GitRepository, name: app}, kubeConfig: {secretRef: {name: prod}}"+extra+"}", 1)
	}
	for _, tt := range []struct {
		name  string
		extra string
		code  result.Code
	}{
		{name: "without wait", code: result.CodeFluxRemoteUnverified},
		{name: "with spec.wait", extra: ", wait: true"},
		{name: "with health checks of every object", extra: ", healthChecks: [{apiVersion: apps/v1, kind: Deployment, name: web, namespace: shop}, {apiVersion: v1, kind: Service, name: web, namespace: shop}]"},
		{name: "with health checks of some objects", extra: ", healthChecks: [{apiVersion: apps/v1, kind: Deployment, name: web, namespace: shop}]", code: result.CodeFluxRemoteUnverified},
	} {
		s := newFakeState(t, revB, remote(tt.extra)+"\n---\n"+deploymentPulling)
		e := s.assess(fixtureNow)
		if len(e.Objects) != 0 {
			t.Errorf("%s: objects %v; want none looked up", tt.name, e.Objects)
		}
		switch {
		case tt.code != "":
			if e.Fatal == nil || e.Fatal.Code != tt.code || !strings.Contains(e.Fatal.Message, "set spec.wait") {
				t.Errorf("%s: fatal %+v, pending %+v; want %s saying how to verify it", tt.name, e.Fatal, e.Pending, tt.code)
			}
		case e.Fatal != nil || e.Pending != nil:
			t.Errorf("%s: fatal %+v, pending %+v; want Current", tt.name, e.Fatal, e.Pending)
		}
		if !e.Flux[0].Remote || !strings.Contains(e.Flux[0].Message, "applied to a remote cluster") {
			t.Errorf("%s: flux object %+v, want it remote, saying its objects are not verified here", tt.name, e.Flux[0])
		}
	}
}

// TestAssessTTLJobGone: a Job of the inventory that is gone counts as finished when the
// Kustomization's own health check (spec.wait) counted it so, or when the run saw it complete
// before it was deleted; otherwise it is waited on.
func TestAssessTTLJobGone(t *testing.T) {
	t.Parallel()
	withJob := func(wait bool) string {
		k := kustomization(readyOnB)
		k = strings.Replace(k, "    - {id: shop_web__Service, v: v1}\n", "    - {id: shop_migrate_batch_Job, v: v1}\n", 1)
		if wait {
			k = strings.Replace(k, "spec: {sourceRef: {kind: GitRepository, name: app}}", "spec: {sourceRef: {kind: GitRepository, name: app}, wait: true}", 1)
		}
		return k
	}
	s := newFakeState(t, revB, withJob(true)+"\n---\n"+deploymentCurrent)
	if e := s.assess(fixtureNow); e.Fatal != nil || e.Pending != nil {
		t.Fatalf("spec.wait, Job gone: fatal %+v, pending %+v; want Current", e.Fatal, e.Pending)
	}
	s = newFakeState(t, revB, withJob(false)+"\n---\n"+deploymentCurrent)
	if e := s.assess(fixtureNow); e.Pending == nil || !strings.Contains(e.Pending.Message, "Job/shop/migrate not found") {
		t.Fatalf("no wait, Job never seen: fatal %+v, pending %+v; want waiting for the Job", e.Fatal, e.Pending)
	}
}

// TestStoreRemembersDeletedJobs: a Job deleted by a watch event, or missing from a new list,
// is remembered with its last state.
func TestStoreRemembersDeletedJobs(t *testing.T) {
	t.Parallel()
	job := func(name, condition string) *unstructured.Unstructured {
		var m map[string]any
		doc := `apiVersion: batch/v1
kind: Job
metadata: {name: ` + name + `, namespace: shop}
spec: {ttlSecondsAfterFinished: 1}
status: {conditions: [{type: ` + condition + `, status: "True"}]}`
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	now := fixtureNow
	n := &notifyingStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc), transform: transformFor(assess.ListKey{GVR: assess.JobsGVR}), onChange: func() {}, keepGone: true,
		clock: func() time.Time { return now }}
	w := &watch{store: n}
	if err := n.Replace([]any{job("migrate", "Complete"), job("seed", "Failed"), job("old", "Complete"), job("again", "Complete")}, "1"); err != nil {
		t.Fatal(err)
	}
	if err := n.Delete(job("old", "Complete")); err != nil { // before the owner applied
		t.Fatal(err)
	}
	applied := now.Add(time.Second)
	now = applied.Add(time.Second)
	if err := n.Delete(job("migrate", "Complete")); err != nil {
		t.Fatal(err)
	}
	if err := n.Delete(job("again", "Complete")); err != nil {
		t.Fatal(err)
	}
	if err := n.Add(job("again", "Complete")); err != nil { // created again
		t.Fatal(err)
	}
	if err := n.Replace([]any{job("again", "Complete")}, "2"); err != nil { // seed vanished while the watch was down
		t.Fatal(err)
	}
	// What the store remembers (assess's jobGone judges it: TestJobGone there).
	gone := func(name string) (string, bool) {
		last, at, ok := w.Gone("shop", name)
		if !ok {
			return "", false
		}
		job, _ := last.(*batchv1.Job)
		if job == nil || len(job.Status.Conditions) == 0 {
			t.Fatalf("%s: last state %T, want the Job with its conditions", name, last)
		}
		return string(job.Status.Conditions[0].Type) + " at " + at.Sub(applied).String(), true
	}
	for name, want := range map[string]string{"migrate": "Complete at 1s", "seed": "Failed at 1s", "old": "Complete at -1s"} {
		if got, ok := gone(name); !ok || got != want {
			t.Errorf("%s: gone %q (%t), want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"other", "again"} {
		if got, ok := gone(name); ok {
			t.Errorf("%s (never seen, created again): gone %q, want not gone", name, got)
		}
	}
}

// TestAssessSuspendedNested (issue 19): a nested Kustomization suspended on purpose is
// reported, and what it lists is not verified; the cluster fails on it only when asked.
func TestAssessSuspendedNested(t *testing.T) {
	t.Parallel()
	suspended := strings.Replace(infra(infraReadyOnA), "spec: {sourceRef: {kind: GitRepository, name: infra}}",
		"spec: {sourceRef: {kind: GitRepository, name: infra}, suspend: true}", 1)
	docs := rootWithInfra(readyOnB) + "\n---\n" + suspended
	s := newFakeState(t, revB, docs)
	e := s.assess(fixtureNow)
	if e.Fatal != nil || e.Pending != nil {
		t.Fatalf("fatal %+v, pending %+v; want Current", e.Fatal, e.Pending)
	}
	if msg := assess.CurrentMessage(e); !strings.Contains(msg, "suspended, not verified: Kustomization/flux-system/infra") {
		t.Errorf("currentMessage = %q, want it to name the suspended Kustomization", msg)
	}
	s = newFakeState(t, revB, docs)
	s.req.FailOnSuspended = true
	if e := s.assess(fixtureNow); e.Fatal == nil || e.Fatal.Verdict != result.VerdictSuspended {
		t.Fatalf("fail-on-suspended: fatal %+v, pending %+v; want Suspended", e.Fatal, e.Pending)
	}
}

// TestAssessRetriedFluxFailure: a failure kustomize-controller retries and that may pass (a
// dry-run against a CRD of the same rollout not served yet) waits out the retry grace from
// when the run first saw it, then fails, saying how long it lasted; a failure that cannot pass
// by itself (an invalid object) fails at once; once the object is Current, it is forgotten.
func TestAssessRetriedFluxFailure(t *testing.T) {
	t.Parallel()
	failed := func(message string) string {
		return kustomization(`  observedGeneration: 2
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Ready, status: "False", reason: ReconciliationFailed, message: '` + message + `', observedGeneration: 2}`)
	}
	const noCRD = `Widget/shop/w dry-run failed: no matches for kind "Widget" in version "example.com/v1"`
	s := newFakeState(t, revB, failed(noCRD)+"\n---\n"+service+"\n---\n"+deploymentCurrent)
	e := s.assess(fixtureNow)
	if e.Fatal != nil || e.Pending == nil || !strings.Contains(e.Pending.Message, "kustomize-controller retries since 2026-11-01T12:00:00Z, fails at 2026-11-01T12:02:00Z") {
		t.Fatalf("retried failure, first seen: fatal %+v, pending %+v; want waiting, naming the end of the grace", e.Fatal, e.Pending)
	}
	if want := fixtureNow.Add(2 * time.Minute); !e.Recheck.Equal(want) {
		t.Errorf("recheck %v, want %v (the end of the grace)", e.Recheck, want)
	}
	e = s.assess(fixtureNow.Add(2 * time.Minute))
	if e.Fatal == nil || e.Fatal.Code != result.CodeFluxReconciliationFailed || !strings.Contains(e.Fatal.Message, "still failing after 2m0s of kustomize-controller's retries") {
		t.Fatalf("retried failure past the grace: fatal %+v, pending %+v; want flux-reconciliation-failed saying how long", e.Fatal, e.Pending)
	}

	// With its retry cadence known (spec.interval 10m, the last attempt at 11:59:50): past the
	// window, it waits for kustomize-controller's next attempt, as the CRD may be there now;
	// an attempt after the window that failed again fails.
	timed := func(failedAt string) string {
		doc := strings.Replace(failed(noCRD), "spec: {sourceRef: {kind: GitRepository, name: app}}", "spec: {interval: 10m, sourceRef: {kind: GitRepository, name: app}}", 1)
		return strings.Replace(doc, "reason: ReconciliationFailed,", "reason: ReconciliationFailed, lastTransitionTime: '"+failedAt+"',", 1)
	}
	s = newFakeState(t, revB, timed("2026-11-01T11:59:50Z")+"\n---\n"+service+"\n---\n"+deploymentCurrent)
	s.assess(fixtureNow)
	e = s.assess(fixtureNow.Add(2 * time.Minute))
	if e.Fatal != nil || e.Pending == nil || !strings.Contains(e.Pending.Message, "kustomize-controller tries again by 2026-11-01T12:11:20Z") {
		t.Fatalf("past the window, not tried again: fatal %+v, pending %+v; want waiting for the retry at 12:11:20", e.Fatal, e.Pending)
	}
	if want := time.Date(2026, 11, 1, 12, 11, 20, 0, time.UTC); !e.Recheck.Equal(want) {
		t.Errorf("recheck %v, want %v (the retry)", e.Recheck, want)
	}
	if e := s.assess(time.Date(2026, 11, 1, 12, 11, 20, 0, time.UTC)); e.Fatal == nil || e.Fatal.Code != result.CodeFluxReconciliationFailed {
		t.Fatalf("retry overdue: fatal %+v, pending %+v; want flux-reconciliation-failed", e.Fatal, e.Pending)
	}
	retried := newFakeState(t, revB, timed("2026-11-01T12:02:30Z")+"\n---\n"+service+"\n---\n"+deploymentCurrent)
	retried.mem = s.mem // the run's memory: when it first saw the failure
	if e := retried.assess(fixtureNow.Add(3 * time.Minute)); e.Fatal == nil || e.Fatal.Code != result.CodeFluxReconciliationFailed {
		t.Fatalf("tried again after the window and failed: fatal %+v, pending %+v; want flux-reconciliation-failed", e.Fatal, e.Pending)
	}

	const invalid = `Deployment/shop/web dry-run failed: Deployment.apps "web" is invalid: spec.template.spec.containers[0].image: Required value`
	s = newFakeState(t, revB, failed(invalid)+"\n---\n"+service+"\n---\n"+deploymentCurrent)
	if e := s.assess(fixtureNow); e.Fatal == nil || e.Fatal.Code != result.CodeFluxReconciliationFailed {
		t.Fatalf("invalid object: fatal %+v, pending %+v; want flux-reconciliation-failed at once", e.Fatal, e.Pending)
	}

	// Current in between: a later retried failure starts a new grace.
	s = newFakeState(t, revB, failed(noCRD)+"\n---\n"+service+"\n---\n"+deploymentCurrent)
	s.assess(fixtureNow)
	ready := newFakeState(t, revB, kustomization(readyOnB)+"\n---\n"+service+"\n---\n"+deploymentCurrent)
	s.watches = ready.watches
	if e := s.assess(fixtureNow.Add(time.Minute)); e.Fatal != nil || e.Pending != nil {
		t.Fatalf("Current: fatal %+v, pending %+v", e.Fatal, e.Pending)
	}
	// Failing again past the first failure's window: a new window, not a failure at once.
	s.watches = newFakeState(t, revB, failed(noCRD)+"\n---\n"+service+"\n---\n"+deploymentCurrent).watches
	if e := s.assess(fixtureNow.Add(3 * time.Minute)); e.Fatal != nil || e.Pending == nil {
		t.Errorf("failing again after Current: fatal %+v, pending %+v; want a new retry window (the first one forgotten)", e.Fatal, e.Pending)
	}
}
