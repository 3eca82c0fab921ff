package assess

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/result"
)

// The trees where a nested object's own source, a dependency, a remote cluster or a Job
// deleted after it finished decides.

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

// suspendedInfra is infraKs suspended.
func suspendedInfra(status string) string {
	return strings.Replace(infraKs(status), "spec: {sourceRef: {kind: GitRepository, name: infra}}",
		"spec: {sourceRef: {kind: GitRepository, name: infra}, suspend: true}", 1)
}

// TestNestedTrees: a nested Kustomization applies what its source offers; a revision
// superseded before it was applied; dependsOn; a remote cluster; a Job gone; a suspended
// nested Kustomization; a failure kustomize-controller retries.
func TestNestedTrees(t *testing.T) {
	t.Parallel()
	const infra = "Kustomization/flux-system/infra"
	wait := func(reason string, says ...string) expected {
		return expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: reason}, Says: says}
	}
	fail := func(code result.Code, reason string, says ...string) expected {
		return expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: code, Reason: reason}, Says: says}
	}
	// retrying is waiting out kustomize-controller's retries of a failure that may pass.
	retrying := func(says ...string) expected {
		return expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxReconciliationFailed, Reason: "ReconciliationFailed"}, Says: says}
	}
	withRecheck := func(e expected, at time.Time) expected {
		e.Recheck = at
		return e
	}
	dependencyNotReady := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxDependencyNotReady, Reason: "DependencyNotReady"}}
	root := rootWithInfra(readyOnB)
	nestedOnA := infraKs(infraReadyOnA)

	// Superseded: waiting for B, the run sees the source on A, then on C.
	readyOnA := `  observedGeneration: 2
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revA + `
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: ` + revA + `", observedGeneration: 2}`
	// kustomize-controller still health-checks B when the source moves to C: B may yet be
	// applied (it does not cancel health checks for a new revision).
	stillCheckingB := `  observedGeneration: 2
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: "Running health checks for revision ` + revB + ` with a timeout of 5m0s", observedGeneration: 2}
  - {type: Ready, status: Unknown, reason: Progressing, message: Reconciliation in progress, observedGeneration: 2}`
	buildingC := strings.ReplaceAll(stillCheckingB, "Running health checks for revision "+revB, "Building manifests for revision "+revC)
	buildingC = strings.Replace(buildingC, "lastAttemptedRevision: "+revB, "lastAttemptedRevision: "+revC, 1)

	// The app waits for infra (dependsOn), outside the verified tree.
	dependent := `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, generation: 2, resourceVersion: "7"}
spec:
  sourceRef: {kind: GitRepository, name: app}
  dependsOn: [{name: infra}]
status:
  observedGeneration: 1
  conditions:
  - {type: Ready, status: "False", reason: DependencyNotReady, message: "dependency 'flux-system/infra' is not ready", observedGeneration: 2}`

	// remote is the app applying to another cluster (spec.kubeConfig), with extra spec fields.
	remote := func(extra string) string {
		return strings.Replace(kustomization(readyOnB), "spec: {sourceRef: {kind: GitRepository, name: app}}",
			"spec: {sourceRef: {kind: GitRepository, name: app}, kubeConfig: {secretRef: {name: prod}}"+extra+"}", 1)
	}
	remoteApp := func(verdict result.Verdict) map[string]fluxExpected {
		return map[string]fluxExpected{"Kustomization/flux-system/app": {Verdict: verdict, Remote: true, Says: "applied to a remote cluster"}}
	}
	unverified := expected{Outcome: outcome{Verdict: result.VerdictUnverified, Code: result.CodeFluxRemoteUnverified, Reason: "RemoteNotVerified"},
		Says: []string{"set spec.wait"}, Objects: map[string]result.ObjectStatus{}, Flux: remoteApp(result.VerdictUnverified)}

	// withJob is the app listing the Job shop/migrate in place of the Service, with spec.wait when wait.
	withJob := func(wait bool) string {
		k := strings.Replace(kustomization(readyOnB), "    - {id: shop_web__Service, v: v1}\n", "    - {id: shop_migrate_batch_Job, v: v1}\n", 1)
		if wait {
			k = strings.Replace(k, "spec: {sourceRef: {kind: GitRepository, name: app}}", "spec: {sourceRef: {kind: GitRepository, name: app}, wait: true}", 1)
		}
		return k
	}

	// failed is the app failing on B with message; a dry-run against a CRD of the same rollout
	// not served yet may pass once kustomize-controller retries, an invalid object never.
	failed := func(message string) string {
		return kustomization(`  observedGeneration: 2
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Ready, status: "False", reason: ReconciliationFailed, message: '` + message + `', observedGeneration: 2}`)
	}
	// buildFailed is the app failing to build B with message (quoted for YAML).
	buildFailed := func(message string) string {
		return strings.Replace(failed(strings.ReplaceAll(message, "'", "''")), "reason: ReconciliationFailed,", "reason: BuildFailed,", 1)
	}
	const strictVariable = `post build failed for 'Deployment.v1.apps/web': envsubst error: variable substitution failed: variable not set (strict mode): "CLUSTER_NAME"`
	// substitutingFrom is doc, a Kustomization, substituting variables from a Secret.
	substitutingFrom := func(doc string) string {
		return strings.Replace(doc, "spec: {sourceRef:", "spec: {postBuild: {substituteFrom: [{kind: Secret, name: cluster-secrets}]}, sourceRef:", 1)
	}
	const immutableJob = `Job/shop/migrate dry-run failed (Invalid): Job.batch "migrate" is invalid: spec.template: Invalid value: core.PodTemplateSpec{}: field is immutable`
	// migrateJob is the Job shop/migrate, complete since 11:58, with spec fields extra.
	migrateJob := func(extra string) string {
		return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, namespace: shop, generation: 1}\nspec: {" + extra + "template: {spec: {containers: []}}}\n" +
			"status: {completionTime: \"2026-11-01T11:58:00Z\", conditions: [{type: Complete, status: \"True\", lastTransitionTime: \"2026-11-01T11:58:00Z\"}]}"
	}
	// runningJob is the Job shop/migrate, started at 11:59 and still running, with spec fields extra.
	runningJob := func(extra string) string {
		return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, namespace: shop, generation: 1}\nspec: {" + extra + "template: {spec: {containers: []}}}\n" +
			"status: {startTime: \"2026-11-01T11:59:00Z\", active: 1}"
	}
	// kueueJob is the running Job suspended, labelled for Kueue's queue batch; kueueWorkload
	// is its Workload, in a cluster that runs Kueue.
	kueueJob := strings.Replace(runningJob("suspend: true, ttlSecondsAfterFinished: 600, "), "generation: 1}", "generation: 1, labels: {kueue.x-k8s.io/queue-name: batch}}", 1)
	kueueWorkload := func(version string) string {
		return "apiVersion: kueue.x-k8s.io/" + version + "\nkind: Workload\nmetadata: {name: job-migrate, namespace: shop}\nspec: {queueName: batch}"
	}
	// retryingEvery is doc, a Kustomization, with spec.retryInterval every.
	retryingEvery := func(doc, every string) string {
		return strings.Replace(doc, "spec: {sourceRef:", "spec: {retryInterval: "+every+", sourceRef:", 1)
	}
	const otherJobDoc = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: report, namespace: shop, generation: 1}\nspec: {template: {spec: {containers: []}}}"
	// decrypting is doc, a Kustomization, decrypting with the SOPS Secret sops-age.
	decrypting := func(doc string) string {
		return strings.Replace(doc, "spec: {sourceRef:", "spec: {decryption: {provider: sops, secretRef: {name: sops-age}}, sourceRef:", 1)
	}
	const noCRD = `Widget/shop/w dry-run failed: no matches for kind "Widget" in version "example.com/v1"`
	const invalid = `Deployment/shop/web dry-run failed: Deployment.apps "web" is invalid: spec.template.spec.containers[0].image: Required value`
	// timed is failed(noCRD) with its retry cadence known: spec.interval 10m, the last attempt at failedAt.
	timed := func(failedAt string) string {
		doc := strings.Replace(failed(noCRD), "spec: {sourceRef: {kind: GitRepository, name: app}}", "spec: {interval: 10m, sourceRef: {kind: GitRepository, name: app}}", 1)
		return strings.Replace(doc, "reason: ReconciliationFailed,", "reason: ReconciliationFailed, lastTransitionTime: '"+failedAt+"',", 1)
	}
	retryAt := time.Date(2026, 11, 1, 12, 11, 20, 0, time.UTC)
	// pruneFailed is the app failing to prune an object of A, applied B, with message.
	pruneFailed := func(message string) string {
		return strings.Replace(failed(message), "reason: ReconciliationFailed,", "reason: PruneFailed,", 1)
	}
	const webhookDown = `delete failed, errors: ConfigMap/shop/old delete failed: Internal error occurred: failed calling webhook "v.example.com": failed to call webhook: Post "https://v.example.svc:443/validate?timeout=10s": dial tcp 10.96.0.9:443: connect: connection refused`
	const pruneForbidden = `delete failed, errors: Namespace/legacy delete failed: namespaces "legacy" is forbidden: User "system:serviceaccount:flux-system:kustomize-controller" cannot delete resource "namespaces"`

	runFixtureCases(t, []fixtureCase{
		// A nested Kustomization of another source is Current only once it applied that
		// source's current artifact, and source-controller is done with the source.
		{name: "its source offers what it applied",
			looks: []fixtureLook{{docs: []string{root, nestedOnA, gitRepository("infra", revA, true)}, want: expected{Outcome: current}}}},
		{name: "its source offers a newer artifact",
			looks: []fixtureLook{{docs: []string{root, nestedOnA, gitRepository("infra", revC, true)},
				want: wait("ReconciliationSucceeded", "applied main@sha1:aaaaaaa, waiting for main@sha1:ccccccc")}}},
		{name: "source-controller is fetching a new spec",
			looks: []fixtureLook{{docs: []string{root, nestedOnA, gitRepository("infra", revA, false)},
				want: wait("SourceNotReady", "waiting for source-controller to finish GitRepository/flux-system/infra")}}},
		{name: "its source stalled",
			looks: []fixtureLook{{docs: []string{root, nestedOnA, `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: infra, namespace: flux-system, generation: 1}
status:
  observedGeneration: 1
  conditions:
  - {type: Stalled, status: "True", reason: URLInvalid, message: "invalid URL"}
  - {type: Ready, status: "False", reason: URLInvalid, message: "invalid URL"}`},
				want: fail(result.CodeFluxArtifactFailed, "SourceStalled", "invalid URL")}}},
		{name: "credentials that may not read the source: judged as before, and said",
			forbidden: []schema.GroupResource{{Group: "source.toolkit.fluxcd.io", Resource: "gitrepositories"}},
			looks: []fixtureLook{{docs: []string{root, nestedOnA},
				want: expected{Outcome: current, Flux: map[string]fluxExpected{infra: {Verdict: result.VerdictCurrent, Owner: "Kustomization/flux-system/app",
					Says: "not compared with its source GitRepository/flux-system/infra"}}}}}},

		// Waiting for B, the run sees the source on A, then on C: B will not be applied.
		{name: "superseded: the source moves from A to C while the Kustomization builds C",
			looks: []fixtureLook{
				{docs: []string{kustomization(readyOnA), gitRepository("app", revA, true)}, want: wait("ReconciliationSucceeded")},
				{docs: []string{kustomization(readyOnA), gitRepository("app", revC, true)}, want: wait("ReconciliationSucceeded")},
				{docs: []string{kustomization(stillCheckingB), gitRepository("app", revC, true)}, want: wait("Progressing")},
				{docs: []string{kustomization(buildingC), gitRepository("app", revC, true)},
					want: fail(result.CodeFluxRevisionSuperseded, "Superseded", "main@sha1:ccccccc")},
			}},
		// A run that first sees the source past B cannot tell older from newer: it waits.
		{name: "superseded: the source first seen on C",
			looks: []fixtureLook{{docs: []string{kustomization(readyOnA), gitRepository("app", revC, true)}, want: wait("ReconciliationSucceeded")}}},

		// infra's build failed for good: the run fails with flux-dependency-failed. A
		// dependency still on its way keeps the run waiting. A suspended dependency that is
		// Ready does not hold the app up (Flux does not look at suspend); one suspended short
		// of Ready does, for good.
		{name: "a failed dependency",
			looks: []fixtureLook{{docs: []string{dependent, infraKs(infraStalledOnA), gitRepository("infra", revA, true)},
				want: fail(result.CodeFluxDependencyFailed, "BuildFailed", "Kustomization/flux-system/infra")}}},
		{name: "a dependency on its way",
			looks: []fixtureLook{{docs: []string{dependent, infraKs(buildingB), gitRepository("infra", revA, true)},
				want: dependencyNotReady}}},
		{name: "a suspended dependency, Ready",
			looks: []fixtureLook{{docs: []string{dependent, suspendedInfra(infraReadyOnA), gitRepository("infra", revA, true)}, want: dependencyNotReady}}},
		{name: "a suspended dependency, not Ready",
			looks: []fixtureLook{{docs: []string{dependent, suspendedInfra(infraStalledOnA), gitRepository("infra", revA, true)},
				want: fail(result.CodeFluxDependencyFailed, "Suspended", "suspended short of Ready")}}},

		// A Kustomization with spec.kubeConfig applies to another cluster: its objects are never
		// looked up here (a namesake would pass, none would wait forever). It is Current only
		// when Flux itself waited for them (spec.wait, health checks of every one).
		{name: "remote, without wait",
			looks: []fixtureLook{{docs: []string{remote(""), deploymentPulling}, want: unverified}}},
		{name: "remote, with spec.wait",
			looks: []fixtureLook{{docs: []string{remote(", wait: true"), deploymentPulling},
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{}, Flux: remoteApp(result.VerdictCurrent)}}}},
		{name: "remote, with health checks of every object",
			looks: []fixtureLook{{docs: []string{remote(", healthChecks: [{apiVersion: apps/v1, kind: Deployment, name: web, namespace: shop}, {apiVersion: v1, kind: Service, name: web, namespace: shop}]"), deploymentPulling},
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{}, Flux: remoteApp(result.VerdictCurrent)}}}},
		{name: "remote, with health checks of some objects",
			looks: []fixtureLook{{docs: []string{remote(", healthChecks: [{apiVersion: apps/v1, kind: Deployment, name: web, namespace: shop}]"), deploymentPulling},
				want: unverified}}},

		// A Job of the inventory that is gone counts as finished when the Kustomization's own
		// health check (spec.wait) counted it so; otherwise how it ended cannot be told.
		{name: "a Job gone, spec.wait",
			looks: []fixtureLook{{docs: []string{withJob(true), deploymentCurrent}, want: expected{Outcome: current}}}},
		{name: "a Job gone, no wait, never seen: Unverified",
			looks: []fixtureLook{{docs: []string{withJob(false), deploymentCurrent},
				want: expected{Outcome: outcome{Verdict: result.VerdictUnverified, Code: result.CodeJobGoneUnverified, Reason: "NotFound"},
					Says: []string{"Job/shop/migrate: gone before the run saw how it ended", "Kustomization/flux-system/app did not wait for it", "spec.wait: true"}}}}},

		// A nested Kustomization suspended on purpose is reported, and what it lists is not
		// verified; the cluster fails on it only when asked.
		{name: "a suspended nested Kustomization",
			looks: []fixtureLook{{docs: []string{root, suspendedInfra(infraReadyOnA)},
				want: expected{Outcome: current, Flux: map[string]fluxExpected{infra: {Verdict: result.VerdictSuspended, Owner: "Kustomization/flux-system/app"}}}}}},
		{name: "a suspended nested Kustomization, fail-on-suspended", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{root, suspendedInfra(infraReadyOnA)},
				want: expected{Outcome: outcome{Verdict: result.VerdictSuspended, Code: result.CodeFluxSuspended, Reason: "Suspended"}}}}},

		// A failure kustomize-controller retries and that may pass waits out the retry grace
		// from when the run first saw it, then fails, saying how long it lasted; a failure that
		// cannot pass by itself fails at once; once the object is Current, it is forgotten.
		{name: "a retried failure: the grace, then a failure",
			looks: []fixtureLook{
				{docs: []string{failed(noCRD), service, deploymentCurrent},
					want: withRecheck(retrying("kustomize-controller retries since 2026-11-01T12:00:00Z, fails at 2026-11-01T12:02:00Z"), fixtureNow.Add(2*time.Minute))},
				{docs: []string{failed(noCRD), service, deploymentCurrent}, at: fixtureNow.Add(2 * time.Minute),
					want: fail(result.CodeFluxReconciliationFailed, "ReconciliationFailed", "still failing after 2m0s of kustomize-controller's retries")},
			}},
		// With its retry cadence known (the last attempt at 11:59:50): past the window, it
		// waits for kustomize-controller's next attempt, as the CRD may be there now.
		{name: "a retried failure, its cadence known: the next attempt, then a failure",
			looks: []fixtureLook{
				{docs: []string{timed("2026-11-01T11:59:50Z"), service, deploymentCurrent}, want: retrying()},
				{docs: []string{timed("2026-11-01T11:59:50Z"), service, deploymentCurrent}, at: fixtureNow.Add(2 * time.Minute),
					want: withRecheck(retrying("kustomize-controller tries again by 2026-11-01T12:11:20Z"), retryAt)},
				{docs: []string{timed("2026-11-01T11:59:50Z"), service, deploymentCurrent}, at: retryAt,
					want: fail(result.CodeFluxReconciliationFailed, "ReconciliationFailed")},
			}},
		{name: "a retried failure, its cadence known: tried again after the window and failed",
			looks: []fixtureLook{
				{docs: []string{timed("2026-11-01T11:59:50Z"), service, deploymentCurrent}, want: retrying()},
				{docs: []string{timed("2026-11-01T11:59:50Z"), service, deploymentCurrent}, at: fixtureNow.Add(2 * time.Minute), want: retrying()},
				{docs: []string{timed("2026-11-01T12:02:30Z"), service, deploymentCurrent}, at: fixtureNow.Add(3 * time.Minute),
					want: fail(result.CodeFluxReconciliationFailed, "ReconciliationFailed")},
			}},
		// A prune kustomize-controller retries, whatever its words: v1.9.5 keeps the survivors
		// in the inventory and fails its retry of a forbidden delete again, v1.7.3 kept the new
		// inventory and passes it.
		{name: "a prune refused by a webhook not answering: the grace, then a failure",
			looks: []fixtureLook{
				{docs: []string{pruneFailed(webhookDown), service, deploymentCurrent},
					want: withRecheck(expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxPruneFailed, Reason: "PruneFailed"},
						Says: []string{"kustomize-controller retries since 2026-11-01T12:00:00Z, fails at 2026-11-01T12:02:00Z", "failed calling webhook"}}, fixtureNow.Add(2*time.Minute))},
				{docs: []string{pruneFailed(webhookDown), service, deploymentCurrent}, at: fixtureNow.Add(2 * time.Minute),
					want: fail(result.CodeFluxPruneFailed, "PruneFailed", "still failing after 2m0s of kustomize-controller's retries")},
			}},
		{name: "a forbidden prune: the grace, then a failure",
			looks: []fixtureLook{
				{docs: []string{pruneFailed(pruneForbidden), service, deploymentCurrent},
					want: withRecheck(expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxPruneFailed, Reason: "PruneFailed"},
						Says: []string{"kustomize-controller retries since 2026-11-01T12:00:00Z, fails at 2026-11-01T12:02:00Z", "is forbidden"}}, fixtureNow.Add(2*time.Minute))},
				{docs: []string{pruneFailed(pruneForbidden), service, deploymentCurrent}, at: fixtureNow.Add(2 * time.Minute),
					want: fail(result.CodeFluxPruneFailed, "PruneFailed", "is forbidden")},
			}},
		{name: "a forbidden prune that kustomize-controller v1.7.3 passes at its retry: Current",
			looks: []fixtureLook{
				{docs: []string{pruneFailed(pruneForbidden), service, deploymentCurrent},
					want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxPruneFailed, Reason: "PruneFailed"}}},
				{docs: []string{kustomization(readyOnB), service, deploymentCurrent}, at: fixtureNow.Add(time.Minute), want: expected{Outcome: current}},
			}},
		// A build kustomize-controller retries on a postBuild.substituteFrom Secret or a strict
		// variable not there yet passes once it is (an ExternalSecret, a SOPS Secret, a key of
		// the same merge): the grace, then a failure. Manifests that do not build fail at once.
		{name: "a build lacking a substituteFrom Secret: the grace, then a failure",
			looks: []fixtureLook{
				{docs: []string{buildFailed(lacksSecret), service, deploymentCurrent},
					want: withRecheck(expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxBuildFailed, Reason: "BuildFailed"},
						Says: []string{"kustomize-controller retries since 2026-11-01T12:00:00Z, fails at 2026-11-01T12:02:00Z", "substitute from 'Secret/cluster-secrets'"}}, fixtureNow.Add(2*time.Minute))},
				{docs: []string{buildFailed(lacksSecret), service, deploymentCurrent}, at: fixtureNow.Add(2 * time.Minute),
					want: fail(result.CodeFluxBuildFailed, "BuildFailed", "still failing after 2m0s of kustomize-controller's retries")},
			}},
		{name: "a build lacking a strict variable, substituteFrom set: the grace",
			looks: []fixtureLook{{docs: []string{substitutingFrom(buildFailed(strictVariable)), service, deploymentCurrent},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxBuildFailed, Reason: "BuildFailed"}}}}},
		// Without substituteFrom nothing may bring the variable: a typo, the manifests'.
		{name: "a build lacking a strict variable, no substituteFrom: a failure at once",
			looks: []fixtureLook{{docs: []string{buildFailed(strictVariable), service, deploymentCurrent},
				want: fail(result.CodeFluxBuildFailed, "BuildFailed", "variable not set (strict mode)")}}},
		{name: "a build lacking a substituteFrom Secret, then Secret there: Current",
			looks: []fixtureLook{
				{docs: []string{buildFailed(lacksSecret), service, deploymentCurrent}, want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxBuildFailed, Reason: "BuildFailed"}}},
				{docs: []string{kustomization(readyOnB), service, deploymentCurrent}, at: fixtureNow.Add(time.Minute), want: expected{Outcome: current}},
			}},
		// A Job's changed template, refused as immutable: kustomize-controller retries, and
		// the retry after the TTL controller deleted the finished Job creates the new one.
		{name: "an immutable Job its TTL deletes: waits for the TTL and the retry, then fails",
			looks: []fixtureLook{
				{docs: []string{failed(immutableJob), service, deploymentCurrent, migrateJob("ttlSecondsAfterFinished: 600, ")},
					want: withRecheck(expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxReconciliationFailed, Reason: "ReconciliationFailed"},
						Says: []string{"Job/shop/migrate finished at 2026-11-01T11:58:00Z and its ttlSecondsAfterFinished deletes it by 2026-11-01T12:08:00Z", "fails at 2026-11-01T12:10:42Z"}},
						time.Date(2026, 11, 1, 12, 10, 42, 0, time.UTC))},
				{docs: []string{failed(immutableJob), service, deploymentCurrent, migrateJob("ttlSecondsAfterFinished: 600, ")}, at: time.Date(2026, 11, 1, 12, 10, 42, 0, time.UTC),
					want: fail(result.CodeFluxReconciliationFailed, "ReconciliationFailed", "field is immutable")},
			}},
		{name: "an immutable Job its TTL deletes only in a day fails at once, saying when",
			looks: []fixtureLook{{docs: []string{failed(immutableJob), service, deploymentCurrent, migrateJob("ttlSecondsAfterFinished: 86400, ")},
				want: fail(result.CodeFluxReconciliationFailed, "ReconciliationFailed", "deletes it only at 2026-11-02T11:58:00Z")}}},
		// A Job still running: its TTL deletes it once it finishes (the Job's change wakes
		// the run, no recheck), then the finished Job's wait.
		{name: "an immutable Job still running with a TTL: waits for it to finish, then for the TTL",
			looks: []fixtureLook{
				{docs: []string{failed(immutableJob), service, deploymentCurrent, runningJob("ttlSecondsAfterFinished: 600, activeDeadlineSeconds: 600, ")},
					want: retrying("Job/shop/migrate is still running (until 2026-11-01T12:09:00Z at the latest: its activeDeadlineSeconds); once it finishes, its ttlSecondsAfterFinished (600 s) deletes it and kustomize-controller's retry after that (at the Kustomization's retry interval) creates the new one (a Job's template cannot change): ",
						immutableJob)},
				{docs: []string{failed(immutableJob), service, deploymentCurrent, migrateJob("ttlSecondsAfterFinished: 600, activeDeadlineSeconds: 600, ")}, at: fixtureNow.Add(time.Minute),
					want: withRecheck(retrying("Job/shop/migrate finished at 2026-11-01T11:58:00Z", "fails at 2026-11-01T12:10:42Z"), time.Date(2026, 11, 1, 12, 10, 42, 0, time.UTC))},
			}},
		// A deadline far off is no answer: the Job ends before it, often long before.
		{name: "an immutable Job still running, its deadline far off: waits, at its retry interval",
			looks: []fixtureLook{{docs: []string{retryingEvery(failed(immutableJob), "1m"), service, deploymentCurrent, runningJob("ttlSecondsAfterFinished: 600, activeDeadlineSeconds: 86400, ")},
				want: retrying("Job/shop/migrate is still running (until 2026-11-02T11:59:00Z at the latest: its activeDeadlineSeconds); once it finishes, its ttlSecondsAfterFinished (600 s)",
					"kustomize-controller's retry after that (every 1m0s, the Kustomization's retry interval)")}}},
		{name: "an immutable Job still running, its TTL too long even were it to finish now: fails at once, saying when",
			looks: []fixtureLook{{docs: []string{failed(immutableJob), service, deploymentCurrent, runningJob("ttlSecondsAfterFinished: 86400, activeDeadlineSeconds: 600, ")},
				want: fail(result.CodeFluxReconciliationFailed, "ReconciliationFailed", "field is immutable (Job/shop/migrate is still running (until 2026-11-01T12:09:00Z at the latest: its activeDeadlineSeconds), and its ttlSecondsAfterFinished (86400 s) deletes it only that long after it finishes, at 2026-11-02T12:00:00Z at the earliest")}}},
		{name: "an immutable Job still running without a TTL fails at once",
			looks: []fixtureLook{{docs: []string{failed(immutableJob), service, deploymentCurrent, runningJob("activeDeadlineSeconds: 600, ")},
				want: fail(result.CodeFluxReconciliationFailed, "ReconciliationFailed", immutableJob)}}},
		{name: "an immutable Job suspended with a TTL fails at once",
			looks: []fixtureLook{{docs: []string{failed(immutableJob), service, deploymentCurrent, runningJob("suspend: true, ttlSecondsAfterFinished: 600, ")},
				want: fail(result.CodeFluxReconciliationFailed, "ReconciliationFailed", immutableJob)}}},
		{name: "an immutable Job suspended by Kueue until it admits it, with a TTL: waits as a running Job",
			looks: []fixtureLook{{docs: []string{failed(immutableJob), service, deploymentCurrent, kueueJob, kueueWorkload("v1beta1")},
				want: retrying("Job/shop/migrate waits for Kueue to admit it (queue batch), which resumes it; once it finishes, its ttlSecondsAfterFinished (600 s)", immutableJob)}}},
		{name: "an immutable Job suspended by a Kueue that serves v1beta2 Workloads only: waits as a running Job",
			looks: []fixtureLook{{docs: []string{failed(immutableJob), service, deploymentCurrent, kueueJob, kueueWorkload("v1beta2")},
				want: retrying("Job/shop/migrate waits for Kueue to admit it (queue batch)", immutableJob)}}},
		{name: "an immutable Job labelled for Kueue in a cluster without Kueue fails at once: nothing resumes it",
			looks: []fixtureLook{{docs: []string{failed(immutableJob), service, deploymentCurrent, kueueJob},
				want: fail(result.CodeFluxReconciliationFailed, "ReconciliationFailed", immutableJob)}}},
		{name: "an immutable Job without a TTL fails at once",
			looks: []fixtureLook{{docs: []string{failed(immutableJob), service, deploymentCurrent, migrateJob("")},
				want: fail(result.CodeFluxReconciliationFailed, "ReconciliationFailed", "field is immutable")}}},
		{name: "an immutable Job being deleted, without a TTL: the grace, as a retried failure",
			looks: []fixtureLook{{docs: []string{failed(immutableJob), service, deploymentCurrent,
				strings.Replace(runningJob("activeDeadlineSeconds: 600, "), "generation: 1}", `generation: 1, deletionTimestamp: "2026-11-01T11:59:30Z", finalizers: [foreground]}`, 1)},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxReconciliationFailed, Reason: "ReconciliationFailed"},
					Says: []string{"kustomize-controller retries since 2026-11-01T12:00:00Z"}}}}},
		{name: "an immutable Job already deleted: the grace, as a retried failure",
			looks: []fixtureLook{{docs: []string{failed(immutableJob), service, deploymentCurrent, otherJobDoc},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxReconciliationFailed, Reason: "ReconciliationFailed"},
					Says: []string{"kustomize-controller retries since 2026-11-01T12:00:00Z"}}}}},
		// A decryption Secret (spec.decryption.secretRef) not there yet: kustomize-controller
		// writes the API's NotFound bare and retries; the same words of another Secret are final.
		{name: "a build lacking its decryption Secret: the grace",
			looks: []fixtureLook{{docs: []string{decrypting(buildFailed(`secrets "sops-age" not found`)), service, deploymentCurrent},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxBuildFailed, Reason: "BuildFailed"},
					Says: []string{"kustomize-controller retries since 2026-11-01T12:00:00Z"}}}}},
		{name: "a build lacking a Secret other than its decryption Secret fails at once",
			looks: []fixtureLook{{docs: []string{decrypting(buildFailed(`secrets "other" not found`)), service, deploymentCurrent},
				want: fail(result.CodeFluxBuildFailed, "BuildFailed")}}},
		{name: "manifests that do not build fail at once",
			looks: []fixtureLook{{docs: []string{buildFailed("kustomize build failed: accumulating resources: missing ./web.yaml"), service, deploymentCurrent},
				want: fail(result.CodeFluxBuildFailed, "BuildFailed")}}},
		// A field the schema does not declare: of a built-in kind no CRD can add it, so it
		// fails at once, without waiting kustomize-controller's retry (spec.interval 30m, no
		// retryInterval); of a custom resource, a CRD of the same rollout may: the grace.
		{name: "a field a Deployment's schema lacks fails at once",
			looks: []fixtureLook{{docs: []string{strings.Replace(failed(`Deployment/shop/web dry-run failed (BadRequest): .spec.template.spec.containers[name="web"].imagePullPolicyy: field not declared in schema`),
				"spec: {sourceRef:", "spec: {interval: 30m, sourceRef:", 1), service, deploymentCurrent},
				want: fail(result.CodeFluxReconciliationFailed, "ReconciliationFailed", "imagePullPolicyy: field not declared in schema")}}},
		{name: "a field a custom resource's schema lacks: the grace",
			looks: []fixtureLook{{docs: []string{failed(`Widget/shop/w dry-run failed (BadRequest): .spec.size: field not declared in schema`), service, deploymentCurrent},
				want: withRecheck(retrying("kustomize-controller retries since 2026-11-01T12:00:00Z, fails at 2026-11-01T12:02:00Z"), fixtureNow.Add(2*time.Minute))}}},
		{name: "an invalid object fails at once",
			looks: []fixtureLook{{docs: []string{failed(invalid), service, deploymentCurrent}, want: fail(result.CodeFluxReconciliationFailed, "ReconciliationFailed")}}},
		{name: "a retried failure, Current in between, failing again: a new grace",
			looks: []fixtureLook{
				{docs: []string{failed(noCRD), service, deploymentCurrent}, want: retrying()},
				{docs: []string{kustomization(readyOnB), service, deploymentCurrent}, at: fixtureNow.Add(time.Minute), want: expected{Outcome: current}},
				// Failing again past the first failure's window: a new window, not a failure at once.
				{docs: []string{failed(noCRD), service, deploymentCurrent}, at: fixtureNow.Add(3 * time.Minute), want: retrying()},
			}},
	})
}
