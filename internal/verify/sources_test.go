package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/flux"
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
				if e.fatal != nil || e.pending != nil {
					t.Fatalf("fatal %+v, pending %+v; want Current", e.fatal, e.pending)
				}
			case result.VerdictFailed:
				if e.fatal == nil || e.fatal.verdict != result.VerdictFailed || e.fatal.code != result.CodeFluxArtifactFailed || !strings.Contains(e.fatal.message, tt.says) {
					t.Fatalf("fatal %+v, pending %+v; want Failed flux-artifact-failed saying %q", e.fatal, e.pending, tt.says)
				}
			default:
				if e.fatal != nil || e.pending == nil || !strings.Contains(e.pending.message, tt.says) {
					t.Fatalf("fatal %+v, pending %+v; want waiting, saying %q", e.fatal, e.pending, tt.says)
				}
			}
		})
	}
	// Credentials that may not read the source: judged as before, and said.
	s := newFakeState(t, revB, root+"\n---\n"+infra(infraReadyOnA), gitGVR.GroupResource())
	e := s.assess(fixtureNow)
	if e.fatal != nil || e.pending != nil {
		t.Fatalf("source forbidden: fatal %+v, pending %+v; want Current", e.fatal, e.pending)
	}
	for _, f := range e.flux {
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
	if e := s.assess(fixtureNow); e.fatal != nil || e.pending == nil {
		t.Fatalf("source on A: fatal %+v, pending %+v; want waiting for B", e.fatal, e.pending)
	}
	replaceFixture(t, s, gitRepository("app", revC, true))
	if e := s.assess(fixtureNow); e.fatal != nil {
		t.Fatalf("source moved to C, the Kustomization not on C yet: fatal %+v; want waiting", e.fatal)
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
	if e := s.assess(fixtureNow); e.fatal != nil {
		t.Fatalf("source on C, B still health-checked: fatal %+v; want waiting", e.fatal)
	}
	buildingC := strings.ReplaceAll(healthCheckingB, "Running health checks for revision "+revB, "Building manifests for revision "+revC)
	buildingC = strings.Replace(buildingC, "lastAttemptedRevision: "+revB, "lastAttemptedRevision: "+revC, 1)
	replaceFixture(t, s, kustomization(buildingC))
	e := s.assess(fixtureNow)
	if e.fatal == nil || e.fatal.code != result.CodeFluxRevisionSuperseded || !strings.Contains(e.fatal.message, "main@sha1:ccccccc") {
		t.Fatalf("source moved to C, the Kustomization building C: fatal %+v, pending %+v; want Failed flux-revision-superseded naming C", e.fatal, e.pending)
	}
	// A run that first sees the source past B cannot tell older from newer: it waits.
	s = newFakeState(t, revB, kustomization(readyOnA)+"\n---\n"+gitRepository("app", revC, true))
	if e := s.assess(fixtureNow); e.fatal != nil {
		t.Errorf("source first seen on C: fatal %+v; want waiting", e.fatal)
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
			l := s.watches.get(watchKey{gvr: mp.Resource, namespace: u.GetNamespace()}).(*staticList)
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
	if e.fatal == nil || e.fatal.code != result.CodeFluxDependencyFailed || !strings.Contains(e.fatal.message, "Kustomization/flux-system/infra") {
		t.Fatalf("failed dependency: fatal %+v, pending %+v; want Failed flux-dependency-failed naming infra", e.fatal, e.pending)
	}
	s = newFakeState(t, revB, app+"\n---\n"+infra(buildingB)+"\n---\n"+gitRepository("infra", revA, true))
	if e := s.assess(fixtureNow); e.fatal != nil || e.pending == nil || e.pending.code != result.CodeFluxDependencyNotReady {
		t.Fatalf("dependency on its way: fatal %+v, pending %+v; want waiting (flux-dependency-not-ready)", e.fatal, e.pending)
	}
	// A suspended dependency that is Ready does not hold the app up (Flux does not look at
	// suspend); one suspended short of Ready does, for good.
	suspendedReady := strings.Replace(infra(infraReadyOnA), "spec: {sourceRef: {kind: GitRepository, name: infra}}",
		"spec: {sourceRef: {kind: GitRepository, name: infra}, suspend: true}", 1)
	s = newFakeState(t, revB, app+"\n---\n"+suspendedReady+"\n---\n"+gitRepository("infra", revA, true))
	if e := s.assess(fixtureNow); e.fatal != nil {
		t.Fatalf("suspended dependency, Ready: fatal %+v; want waiting", e.fatal)
	}
	suspendedStalled := strings.Replace(infra(infraStalledOnA), "spec: {sourceRef: {kind: GitRepository, name: infra}}",
		"spec: {sourceRef: {kind: GitRepository, name: infra}, suspend: true}", 1)
	s = newFakeState(t, revB, app+"\n---\n"+suspendedStalled+"\n---\n"+gitRepository("infra", revA, true))
	if e := s.assess(fixtureNow); e.fatal == nil || e.fatal.code != result.CodeFluxDependencyFailed || !strings.Contains(e.fatal.message, "suspended short of Ready") {
		t.Fatalf("suspended dependency, not Ready: fatal %+v, pending %+v; want flux-dependency-failed", e.fatal, e.pending)
	}
}

// TestAssessRemoteCluster: a Kustomization with spec.kubeConfig applies to another cluster:
// its objects are never looked up here (a namesake would pass, none would wait forever).
func TestAssessRemoteCluster(t *testing.T) {
	t.Parallel()
	remote := strings.Replace(kustomization(readyOnB), "spec: {sourceRef: {kind: GitRepository, name: app}}",
		"spec: {sourceRef: {kind: GitRepository, name: app}, kubeConfig: {secretRef: {name: prod}}}", 1)
	s := newFakeState(t, revB, remote+"\n---\n"+deploymentPulling)
	e := s.assess(fixtureNow)
	if e.fatal != nil || e.pending != nil || len(e.objects) != 0 {
		t.Fatalf("fatal %+v, pending %+v, objects %v; want Current, no object looked up", e.fatal, e.pending, e.objects)
	}
	if !e.flux[0].Remote || !strings.Contains(e.flux[0].Message, "applied to a remote cluster") {
		t.Errorf("flux object %+v, want it remote, saying its objects are not verified here", e.flux[0])
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
	if e := s.assess(fixtureNow); e.fatal != nil || e.pending != nil {
		t.Fatalf("spec.wait, Job gone: fatal %+v, pending %+v; want Current", e.fatal, e.pending)
	}
	s = newFakeState(t, revB, withJob(false)+"\n---\n"+deploymentCurrent)
	if e := s.assess(fixtureNow); e.pending == nil || !strings.Contains(e.pending.message, "Job/shop/migrate not found") {
		t.Fatalf("no wait, Job never seen: fatal %+v, pending %+v; want waiting for the Job", e.fatal, e.pending)
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
	n := &notifyingStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc), transform: transformFor(jobsGVR), onChange: func() {}, keepGone: true,
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
	owner := &flux.Gate{Applied: true}
	ref := func(name string) flux.ObjectRef {
		return flux.ObjectRef{Group: "batch", Kind: "Job", Namespace: "shop", Name: name}
	}
	if done, failed, msg := jobGone(w, "shop", ref("migrate"), owner, applied); !done || failed != nil || !strings.Contains(msg, "completed") {
		t.Errorf("migrate: done %t, failed %v, %q; want done, deleted after it completed", done, failed, msg)
	}
	if done, failed, _ := jobGone(w, "shop", ref("seed"), owner, applied); done || failed == nil {
		t.Errorf("seed: done %t, failed %v; want its failure", done, failed)
	}
	for _, name := range []string{"other", "old", "again"} {
		if done, failed, _ := jobGone(w, "shop", ref(name), owner, applied); done || failed != nil {
			t.Errorf("%s (never seen, deleted before the owner applied, or created again): done %t, failed %v; want neither", name, done, failed)
		}
	}
	if done, failed, _ := jobGone(w, "shop", ref("migrate"), &flux.Gate{}, time.Time{}); done || failed != nil {
		t.Errorf("owner not applied: done %t, failed %v; want neither", done, failed)
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
	if e.fatal != nil || e.pending != nil {
		t.Fatalf("fatal %+v, pending %+v; want Current", e.fatal, e.pending)
	}
	c := result.Cluster{Flux: e.flux, Objects: e.objects}
	if msg := currentMessage(c); !strings.Contains(msg, "suspended, not verified: Kustomization/flux-system/infra") {
		t.Errorf("currentMessage = %q, want it to name the suspended Kustomization", msg)
	}
	s = newFakeState(t, revB, docs)
	s.req.FailOnSuspended = true
	if e := s.assess(fixtureNow); e.fatal == nil || e.fatal.verdict != result.VerdictSuspended {
		t.Fatalf("fail-on-suspended: fatal %+v, pending %+v; want Suspended", e.fatal, e.pending)
	}
}

// TestUpdatedByUpgrade (issue 19): while Helm upgrades to the expected chart, a workload is
// the new chart's once its rollout revision changed since the attempt started; not for a
// change of replicas, not when first seen already updated, and a retry after a rollback
// starts from the rollback's revision.
func TestUpdatedByUpgrade(t *testing.T) {
	t.Parallel()
	s := &clusterState{}
	deployment := func(revision string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetAnnotations(map[string]string{"deployment.kubernetes.io/revision": revision})
		return u
	}
	idle := &flux.Gate{Object: result.FluxObject{ID: "HelmRelease/shop/web", Kind: "HelmRelease"}}
	upgrading := func(attempt string) *flux.Gate {
		g := *idle
		g.Upgrading, g.UpgradeAttempt = "1.1.0", attempt
		return &g
	}
	steps := []struct {
		name    string
		owner   *flux.Gate
		id      string
		rev     string
		updated bool
	}{
		{"seen before the upgrade", idle, "Deployment/shop/web", "1", false},
		{"upgrade started, not rolled out yet", upgrading("1.1.0@2 from release 1"), "Deployment/shop/web", "1", false},
		{"replicas changed (an autoscaler)", upgrading("1.1.0@2 from release 1"), "Deployment/shop/web", "1", false},
		{"Helm rolled out the new template", upgrading("1.1.0@2 from release 1"), "Deployment/shop/web", "2", true},
		{"first seen during the upgrade", upgrading("1.1.0@2 from release 1"), "Deployment/shop/api", "5", false},
		{"rolled back", idle, "Deployment/shop/web", "3", false},
		{"retry after the rollback, not rolled out yet", upgrading("1.1.0@2 from release 3"), "Deployment/shop/web", "3", false},
		{"retry rolled out", upgrading("1.1.0@2 from release 3"), "Deployment/shop/web", "4", true},
	}
	for _, st := range steps {
		if got := s.updatedByUpgrade(st.owner, st.id, deployment(st.rev)); got != st.updated {
			t.Errorf("%s: updated %t, want %t", st.name, got, st.updated)
		}
	}
	if s.updatedByUpgrade(&flux.Gate{Object: result.FluxObject{Kind: "Kustomization"}, Upgrading: "x"}, "Deployment/shop/web", deployment("9")) {
		t.Error("a Kustomization's workload: want never updated by a Helm upgrade")
	}
}

// TestAssessRetriedFluxFailure: a failure kustomize-controller retries and that may pass (a
// dry-run against a CRD of the same rollout not served yet) waits out the retry grace from
// when the run first saw it, then fails, saying how long it lasted; a failure that cannot pass
// by itself (an invalid object) fails at once; once the object is Current, it is forgotten.
func TestAssessRetriedFluxFailure(t *testing.T) {
	t.Parallel()
	failed := func(message string) string {
		return kustomization(`  observedGeneration: 1
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Ready, status: "False", reason: ReconciliationFailed, message: '` + message + `', observedGeneration: 2}`)
	}
	const noCRD = `Widget/shop/w dry-run failed: no matches for kind "Widget" in version "example.com/v1"`
	s := newFakeState(t, revB, failed(noCRD)+"\n---\n"+service+"\n---\n"+deploymentCurrent)
	e := s.assess(fixtureNow)
	if e.fatal != nil || e.pending == nil || !strings.Contains(e.pending.message, "kustomize-controller retries since 2026-11-01T12:00:00Z, fails at 2026-11-01T12:02:00Z") {
		t.Fatalf("retried failure, first seen: fatal %+v, pending %+v; want waiting, naming the end of the grace", e.fatal, e.pending)
	}
	if want := fixtureNow.Add(2 * time.Minute); !e.recheck.Equal(want) {
		t.Errorf("recheck %v, want %v (the end of the grace)", e.recheck, want)
	}
	e = s.assess(fixtureNow.Add(2 * time.Minute))
	if e.fatal == nil || e.fatal.code != result.CodeFluxReconciliationFailed || !strings.Contains(e.fatal.message, "still failing after 2m0s of kustomize-controller's retries") {
		t.Fatalf("retried failure past the grace: fatal %+v, pending %+v; want flux-reconciliation-failed saying how long", e.fatal, e.pending)
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
	if e.fatal != nil || e.pending == nil || !strings.Contains(e.pending.message, "kustomize-controller tries again by 2026-11-01T12:11:20Z") {
		t.Fatalf("past the window, not tried again: fatal %+v, pending %+v; want waiting for the retry at 12:11:20", e.fatal, e.pending)
	}
	if want := time.Date(2026, 11, 1, 12, 11, 20, 0, time.UTC); !e.recheck.Equal(want) {
		t.Errorf("recheck %v, want %v (the retry)", e.recheck, want)
	}
	if e := s.assess(time.Date(2026, 11, 1, 12, 11, 20, 0, time.UTC)); e.fatal == nil || e.fatal.code != result.CodeFluxReconciliationFailed {
		t.Fatalf("retry overdue: fatal %+v, pending %+v; want flux-reconciliation-failed", e.fatal, e.pending)
	}
	retried := newFakeState(t, revB, timed("2026-11-01T12:02:30Z")+"\n---\n"+service+"\n---\n"+deploymentCurrent)
	retried.retriedSince = s.retriedSince
	if e := retried.assess(fixtureNow.Add(3 * time.Minute)); e.fatal == nil || e.fatal.code != result.CodeFluxReconciliationFailed {
		t.Fatalf("tried again after the window and failed: fatal %+v, pending %+v; want flux-reconciliation-failed", e.fatal, e.pending)
	}

	const invalid = `Deployment/shop/web dry-run failed: Deployment.apps "web" is invalid: spec.template.spec.containers[0].image: Required value`
	s = newFakeState(t, revB, failed(invalid)+"\n---\n"+service+"\n---\n"+deploymentCurrent)
	if e := s.assess(fixtureNow); e.fatal == nil || e.fatal.code != result.CodeFluxReconciliationFailed {
		t.Fatalf("invalid object: fatal %+v, pending %+v; want flux-reconciliation-failed at once", e.fatal, e.pending)
	}

	// Current in between: a later retried failure starts a new grace.
	s = newFakeState(t, revB, failed(noCRD)+"\n---\n"+service+"\n---\n"+deploymentCurrent)
	s.assess(fixtureNow)
	ready := newFakeState(t, revB, kustomization(readyOnB)+"\n---\n"+service+"\n---\n"+deploymentCurrent)
	s.watches = ready.watches
	if e := s.assess(fixtureNow.Add(time.Minute)); e.fatal != nil || e.pending != nil {
		t.Fatalf("Current: fatal %+v, pending %+v", e.fatal, e.pending)
	}
	if len(s.retriedSince) != 0 {
		t.Errorf("retriedSince %v after Current, want it forgotten", s.retriedSince)
	}
}

// TestInstallObjects: during Helm's install, the workloads of the release created since the
// run saw the install start are judged; one left by an earlier attempt, one being deleted and
// one of another release are not.
func TestInstallObjects(t *testing.T) {
	t.Parallel()
	deployment := func(name, release, created, extra string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
  namespace: prod
  creationTimestamp: "` + created + `"
  annotations: {meta.helm.sh/release-name: ` + release + `, meta.helm.sh/release-namespace: prod}` + extra + `
spec: {replicas: 1}`
	}
	docs := strings.Join([]string{
		deployment("web", "prod-web", "2026-11-01T12:00:05Z", ""),
		deployment("kept", "prod-web", "2026-11-01T11:30:00Z", ""),
		deployment("going", "prod-web", "2026-11-01T12:00:06Z", "\n  deletionTimestamp: \"2026-11-01T12:00:07Z\"\n  finalizers: [x]"),
		deployment("other", "prod-api", "2026-11-01T12:00:05Z", ""),
	}, "\n---\n")
	s := newFakeState(t, revB, docs)
	g := &flux.Gate{Installing: "1.0.0+abc", ReleaseName: "prod-web", ReleaseNamespace: "prod"}
	refs, ok := s.installObjects(&assessment{}, g, fixtureNow)
	if !ok {
		t.Fatal("installObjects: not ok")
	}
	var got []string
	for _, r := range refs {
		got = append(got, r.ID())
	}
	if diff := cmp.Diff([]string{"Deployment/prod/web"}, got); diff != "" {
		t.Errorf("install objects (-want +got):\n%s", diff)
	}
}
