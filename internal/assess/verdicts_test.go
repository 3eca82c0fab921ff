package assess

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// kustomization is the Kustomization flux-system/app with its status, listing a Deployment
// and a Service of namespace shop.
func kustomization(status string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, generation: 2, resourceVersion: "7"}
spec: {sourceRef: {kind: GitRepository, name: app}}
status:
  inventory:
    entries:
    - {id: shop_web_apps_Deployment, v: v1}
    - {id: shop_web__Service, v: v1}
` + status
}

const readyOnB = `  observedGeneration: 2
  lastAppliedRevision: ` + revB + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: ` + revB + `", observedGeneration: 2}`

const buildingB = `  observedGeneration: 1
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: "Building manifests for revision ` + revB + ` with a timeout of 5m0s", observedGeneration: 2}
  - {type: Ready, status: Unknown, reason: Progressing, message: Reconciliation in progress, observedGeneration: 2}`

const healthCheckingB = `  observedGeneration: 1
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: "Running health checks for revision ` + revB + ` with a timeout of 5m0s", observedGeneration: 2}
  - {type: Ready, status: Unknown, reason: Progressing, message: Reconciliation in progress, observedGeneration: 2}`

// healthCheckingBBeforeSpec is healthCheckingB by a reconcile that started on generation 1:
// the spec moved to 2 while it applied, and the patch of "Running health checks" stamped the
// Reconciling condition with the generation the object had then.
const healthCheckingBBeforeSpec = `  observedGeneration: 1
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: "Running health checks for revision ` + revB + ` with a timeout of 5m0s", observedGeneration: 2}
  - {type: Ready, status: Unknown, reason: Progressing, message: Reconciliation in progress, observedGeneration: 1}`

// healthCheckFailedBBeforeSpec is where healthCheckingBBeforeSpec ends when its check fails:
// Ready=False and the Reconciling condition it keeps (ProgressingWithRetry) are stamped with
// the generation the object has at that write, 2, though the objects checked are of 1.
const healthCheckFailedBBeforeSpec = `  observedGeneration: 1
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "Running health checks for revision ` + revB + ` with a timeout of 5m0s", observedGeneration: 2, lastTransitionTime: "2026-11-01T11:55:00Z"}
  - {type: Ready, status: "False", reason: HealthCheckFailed, message: "health check failed after 5m0s: timeout waiting for: [Deployment/shop/web status: 'InProgress']", observedGeneration: 2, lastTransitionTime: "2026-11-01T11:59:50Z"}`

// dependencyAfterHealthCheck is the next reconcile stopped on its dependsOn before its first
// status patch: Ready=False stamped 2 beside the Reconciling condition the previous one kept.
const dependencyAfterHealthCheck = `  observedGeneration: 1
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "Running health checks for revision ` + revB + ` with a timeout of 5m0s", observedGeneration: 2}
  - {type: Ready, status: "False", reason: DependencyNotReady, message: "dependency 'flux-system/infra' is not ready", observedGeneration: 2}`

const healthCheckFailedB = `  observedGeneration: 1
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Ready, status: "False", reason: HealthCheckFailed, message: "health check failed after 30s: timeout waiting for: [Deployment/shop/web status: 'InProgress']", observedGeneration: 2}`

const deploymentCurrent = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, generation: 3, uid: dep-web, annotations: {deployment.kubernetes.io/revision: "3"}}
spec: {replicas: 1}
status:
  observedGeneration: 3
  replicas: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  conditions:
  - {type: Available, status: "True"}
  - {type: Progressing, status: "True", reason: NewReplicaSetAvailable}`

// deploymentPulling is a Deployment whose newest ReplicaSet's pod cannot pull its image.
const deploymentPulling = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, generation: 3, uid: dep-web, annotations: {deployment.kubernetes.io/revision: "3"}}
spec: {replicas: 1}
status:
  observedGeneration: 3
  replicas: 2
  updatedReplicas: 1
  conditions:
  - {type: Progressing, status: "True", reason: ReplicaSetUpdated}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-3
  namespace: shop
  uid: rs-web-3
  annotations: {deployment.kubernetes.io/revision: "3"}
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: dep-web, controller: true}]
status: {observedGeneration: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: web-3-x
  namespace: shop
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-3, uid: rs-web-3, controller: true}]
spec: {containers: [{name: web, image: "web:nope"}]}
status:
  phase: Pending
  containerStatuses:
  - {name: web, image: "web:nope", imageID: "", ready: false, restartCount: 0, state: {waiting: {reason: ErrImagePull, message: "web:nope: not found"}}}`

// rootWithInfra is the Kustomization flux-system/app of the GitRepository app, whose inventory
// lists the Kustomization flux-system/infra (of another source), then the other entries given.
func rootWithInfra(status string, entries ...string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, generation: 2, resourceVersion: "7"}
spec: {sourceRef: {kind: GitRepository, name: app}}
status:
  inventory:
    entries:
    - {id: flux-system_infra_kustomize.toolkit.fluxcd.io_Kustomization, v: v1}
` + strings.Join(entries, "") + status
}

// infraKs is the Kustomization flux-system/infra of the GitRepository infra, at generation 1.
func infraKs(status string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: infra, namespace: flux-system, generation: 1, resourceVersion: "3"}
spec: {sourceRef: {kind: GitRepository, name: infra}}
status:
  observedGeneration: 1
` + status
}

// infraStalledOnA is infra's status when its build failed for good on revision A.
const infraStalledOnA = `  lastAttemptedRevision: ` + revA + `
  conditions:
  - {type: Ready, status: "False", reason: BuildFailed, message: "kustomize build failed", observedGeneration: 1}
  - {type: Stalled, status: "True", reason: BuildFailed, message: "kustomize build failed", observedGeneration: 1}`

// TestVerdicts: a Kustomization's workloads as kustomize-controller's phases let them decide:
// the previous revision's broken pods do not count while it builds, the new revision's fail
// it while it health-checks; credentials that may not list a kind; a team's annotations.
func TestVerdicts(t *testing.T) {
	t.Parallel()
	const (
		dep = "Deployment/shop/web"
		svc = "Service/shop/web"
	)
	wait := func(reason string, says ...string) expected {
		return expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: reason}, Says: says}
	}
	fail := func(code result.Code, reason string) expected {
		return expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: code, Reason: reason}}
	}
	with := func(e expected, objects map[string]result.ObjectStatus) expected {
		e.Objects = objects
		return e
	}
	app := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	infra := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "infra"}
	nestedOnA := infraKs(`  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revA + `
  inventory: {entries: []}
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: ` + revA + `", observedGeneration: 1}`)
	rootForbidden := `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, generation: 2, resourceVersion: "7"}
spec: {sourceRef: {kind: GitRepository, name: app}}
status:
  inventory:
    entries:
    - {id: shop_web_apps_Deployment, v: v1}
    - {id: shop_web_rbac.authorization.k8s.io_Role, v: v1}
    - {id: shop_config_source.toolkit.fluxcd.io_GitRepository, v: v1}
` + readyOnB
	// annotated is deploymentPulling with a team's annotation, as Flux applied it, its pod's
	// pull error the one given.
	annotated := func(annotation, pullError string) string {
		d := strings.Replace(deploymentPulling, `annotations: {deployment.kubernetes.io/revision: "3"}}`,
			`annotations: {deployment.kubernetes.io/revision: "3", `+annotation+`}}`, 1)
		return strings.Replace(d, `message: "web:nope: not found"`, `message: "`+pullError+`"`, 1)
	}
	const timeout = "dial tcp 10.0.0.1:443: i/o timeout"
	// withStart gives the pod web-3-x its creation time, two minutes before fixtureNow.
	withStart := func(doc string) string {
		return strings.Replace(doc, "  name: web-3-x\n", "  name: web-3-x\n  creationTimestamp: \"2026-11-01T11:58:00Z\"\n", 1)
	}
	runFixtureCases(t, []fixtureCase{
		{name: "applied and Current",
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB), deploymentCurrent, service},
				want: with(expected{Outcome: current}, map[string]result.ObjectStatus{dep: result.ObjectCurrent, svc: result.ObjectCurrent})}}},
		{name: "Ready on the expected revision, an object not there yet",
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB), deploymentCurrent},
				want: with(wait("NotFound", "Service/shop/web not found"), map[string]result.ObjectStatus{dep: result.ObjectCurrent, svc: result.ObjectNotFound})}}},
		{name: "Ready on another revision: waits, whatever the objects", revision: "main@sha1:ccccccc",
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB), deploymentPulling, service},
				want: with(wait("ReconciliationSucceeded", "applied main@sha1:bbbbbbb, waiting for main@sha1:ccccccc"), map[string]result.ObjectStatus{dep: result.ObjectInProgress, svc: result.ObjectCurrent})}}},
		{name: "building the expected revision: the previous revision's broken pods do not count",
			looks: []fixtureLook{{docs: []string{kustomization(buildingB), deploymentPulling, service},
				want: with(wait("Progressing", "Building manifests for revision "+revB), map[string]result.ObjectStatus{dep: result.ObjectInProgress, svc: result.ObjectCurrent})}}},
		{name: "health-checking the expected revision: its broken pods fail it",
			looks: []fixtureLook{{docs: []string{kustomization(healthCheckingB), deploymentPulling, service},
				want: with(fail(result.CodeImagePull, "ErrImagePull"), map[string]result.ObjectStatus{dep: result.ObjectFailed, svc: result.ObjectCurrent})}}},
		{name: "health-checking the expected revision for the previous spec: its broken pods do not count",
			looks: []fixtureLook{{docs: []string{kustomization(healthCheckingBBeforeSpec), deploymentPulling, service},
				want: with(wait("Progressing", "Running health checks for revision "+revB), map[string]result.ObjectStatus{dep: result.ObjectInProgress, svc: result.ObjectCurrent})}}},
		{name: "the previous spec's health check, then its failure: its broken pods do not count until the current one's retry",
			looks: []fixtureLook{
				{docs: []string{kustomization(healthCheckingBBeforeSpec), deploymentPulling, service},
					want: with(wait("Progressing", "in a reconcile begun on generation 1: its objects are the previous spec's"), map[string]result.ObjectStatus{dep: result.ObjectInProgress, svc: result.ObjectCurrent})},
				{docs: []string{kustomization(healthCheckFailedBBeforeSpec), deploymentPulling, service},
					want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxHealthCheckFailed, Reason: "HealthCheckFailed"},
						Says: []string{"may be of an earlier one"}, Objects: map[string]result.ObjectStatus{dep: result.ObjectInProgress, svc: result.ObjectCurrent}}}}},
		{name: "a leftover health-check condition beside a reconcile stopped on its dependsOn: the pods do not count",
			looks: []fixtureLook{{docs: []string{kustomization(dependencyAfterHealthCheck), deploymentPulling, service},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxDependencyNotReady, Reason: "DependencyNotReady"},
					Objects: map[string]result.ObjectStatus{dep: result.ObjectInProgress, svc: result.ObjectCurrent}}}}},
		{name: "Flux's health check failed: the workload's own reason wins",
			looks: []fixtureLook{{docs: []string{kustomization(healthCheckFailedB), deploymentPulling, service},
				want: with(fail(result.CodeImagePull, "ErrImagePull"), map[string]result.ObjectStatus{dep: result.ObjectFailed, svc: result.ObjectCurrent})}}},
		{name: "Flux's health check failed, nothing more precise",
			looks: []fixtureLook{{docs: []string{kustomization(healthCheckFailedB), deploymentCurrent, service},
				want: with(fail(result.CodeFluxHealthCheckFailed, "HealthCheckFailed"), map[string]result.ObjectStatus{dep: result.ObjectCurrent, svc: result.ObjectCurrent})}}},
		{name: "pods may not be listed: the workload waits on kstatus alone",
			forbidden: []schema.GroupResource{{Resource: "pods"}},
			looks: []fixtureLook{{docs: []string{kustomization(healthCheckingB), deploymentPulling, service},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "Progressing"},
					Objects:    map[string]result.ObjectStatus{dep: result.ObjectInProgress, svc: result.ObjectCurrent},
					ObjectSays: map[string]string{dep: "rollout failures classified without pods: the credentials may not list pods"}}}}},
		{name: "Deployments may not be listed: Forbidden, naming them",
			forbidden: []schema.GroupResource{{Group: "apps", Resource: "deployments"}},
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB), service},
				want: with(expected{Outcome: outcome{Verdict: result.VerdictForbidden, Reason: "Forbidden"}}, map[string]result.ObjectStatus{dep: result.ObjectUnknown, svc: result.ObjectCurrent})}}},

		// Every requested resource is a root: one another requested one's inventory also lists
		// is judged on the run's revision, whatever the order the resources were given in. Here
		// the nested Kustomization comes from another source, so as a nested object it would
		// only need to be Ready at whatever it last applied (A).
		{name: "a requested Kustomization another lists, given after it, is a root", resources: []flux.Ref{app, infra},
			looks: []fixtureLook{{docs: []string{rootWithInfra(readyOnB), nestedOnA},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}, Says: []string{"infra"},
					Flux: map[string]fluxExpected{"Kustomization/flux-system/infra": {Verdict: result.VerdictInProgress}}}}}},
		{name: "a requested Kustomization another lists, given before it, is a root", resources: []flux.Ref{infra, app},
			looks: []fixtureLook{{docs: []string{rootWithInfra(readyOnB), nestedOnA},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}, Says: []string{"infra"},
					Flux: map[string]fluxExpected{"Kustomization/flux-system/infra": {Verdict: result.VerdictInProgress}}}}}},

		// With workloads off, a root Ready right after applying (no wait) whose inventory holds
		// a Kustomization that failed is not Current: the nested Flux object's failure is the
		// cluster's.
		{name: "without workloads, a nested Kustomization's failure", noWorkloads: true,
			looks: []fixtureLook{{docs: []string{rootWithInfra(readyOnB, "    - {id: shop_web_apps_Deployment, v: v1}\n"), infraKs(infraStalledOnA), deploymentPulling},
				want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxStalled, Reason: "BuildFailed"}, Says: []string{"infra"}, Objects: map[string]result.ObjectStatus{}}}}},

		// A nested Flux object that failed before its owner applied the expected revision (which
		// may change its spec and fix it) makes the run wait; once the owner applied it, it fails.
		{name: "a nested failure, the owner still building B",
			looks: []fixtureLook{{docs: []string{rootWithInfra(buildingB), infraKs(infraStalledOnA)}, want: wait("Progressing")}}},
		{name: "a nested failure, the owner still building B, without workloads", noWorkloads: true,
			looks: []fixtureLook{{docs: []string{rootWithInfra(buildingB), infraKs(infraStalledOnA)}, want: wait("Progressing")}}},
		{name: "a nested failure, the owner applied B",
			looks: []fixtureLook{{docs: []string{rootWithInfra(readyOnB), infraKs(infraStalledOnA)}, want: fail(result.CodeFluxStalled, "BuildFailed")}}},
		{name: "a nested failure, the owner applied B, without workloads", noWorkloads: true,
			looks: []fixtureLook{{docs: []string{rootWithInfra(readyOnB), infraKs(infraStalledOnA)}, want: fail(result.CodeFluxStalled, "BuildFailed")}}},

		// Credentials that may not list the kinds an app holds beside its workloads (its own
		// Flux sources, its RBAC) leave those objects "not verified"; the cluster is Current on
		// its workloads, never Forbidden.
		{name: "kinds without readiness forbidden: not verified",
			forbidden: []schema.GroupResource{{Group: "rbac.authorization.k8s.io", Resource: "roles"}, {Group: "source.toolkit.fluxcd.io", Resource: "gitrepositories"}},
			looks: []fixtureLook{{docs: []string{rootForbidden, deploymentCurrent},
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{dep: result.ObjectCurrent, "Role/shop/web": result.ObjectUnknown, "GitRepository/shop/config": result.ObjectUnknown},
					ObjectSays: map[string]string{"Role/shop/web": "not verified: the credentials may not list", "GitRepository/shop/config": "not verified: the credentials may not list"}}}}},

		// A team's annotations on a workload, in Git, are honoured: ignore-readiness leaves an
		// unready workload reported and not verified; a grace annotation lets a retried pull
		// error wait longer than the run's setting; a value that cannot be read is ignored and
		// said.
		{name: "ignore-readiness",
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB), annotated(`app-status.io/ignore-readiness: "true"`, "web:nope: not found"), service},
				want: expected{Outcome: current, ObjectSays: map[string]string{dep: "not verified (app-status.io/ignore-readiness)"}}}}},
		{name: "ignore-readiness added in the cluster (kubectl annotate), not by Flux: ignored, said",
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB),
				notFromGit(t, annotated(`app-status.io/ignore-readiness: "true"`, "web:nope: not found"), "app-status.io/ignore-readiness"), service},
				want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "ErrImagePull"},
					ObjectSays: map[string]string{dep: "annotations app-status.io/ignore-readiness ignored: not applied by Flux (set them in Git)"}}}}},
		// kustomize-controller v1.9.5 neither applies nor waits for an object of its inventory
		// whose labels or annotations say so (in the cluster, read with its managedFields:
		// the view's facts): reported with its state, not verified, never failing or holding
		// the verdict, with or without spec.wait. The same Deployment not skipped fails.
		{name: "skipped by kustomize-controller (reconcile: disabled), failing: not verified",
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB), skippedBy(deploymentPulling, "kustomize.toolkit.fluxcd.io/reconcile: disabled", "reconcile-disabled"), service},
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{dep: result.ObjectInProgress, "Service/shop/web": result.ObjectCurrent},
					ObjectSays: map[string]string{dep: "not verified: kustomize-controller skips it (kustomize.toolkit.fluxcd.io/reconcile: disabled)"}}}}},
		{name: "skipped by kustomize-controller (ssa: IfNotPresent), failing, spec.wait: not verified",
			looks: []fixtureLook{{docs: []string{withWait(kustomization(readyOnB)), skippedBy(deploymentPulling, "kustomize.toolkit.fluxcd.io/ssa: IfNotPresent", "ssa-if-not-present"), service},
				want: expected{Outcome: current, ObjectSays: map[string]string{dep: "not verified: kustomize-controller skips it (kustomize.toolkit.fluxcd.io/ssa: IfNotPresent)"}}}}},
		{name: "skipped by kustomize-controller, Current, under fail-on-suspended: fails as suspended", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB), skippedBy(deploymentCurrent, "kustomize.toolkit.fluxcd.io/reconcile: disabled", "reconcile-disabled"), service},
				want: expected{Outcome: outcome{Verdict: result.VerdictSuspended, Code: result.CodeFluxSuspended, Reason: "Suspended"},
					Says: []string{"Deployment/shop/web: kustomize-controller skips it (kustomize.toolkit.fluxcd.io/reconcile: disabled): it does not get the revision"}}}}},
		{name: "paused by kustomize-controller (reconcile: disabled), Current: named as not rolled out",
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB), skippedBy(deploymentCurrent, "kustomize.toolkit.fluxcd.io/reconcile: disabled", "reconcile-disabled"), service},
				want: expected{Outcome: current, ObjectSays: map[string]string{dep: "not rolled out: kustomize-controller skips it (kustomize.toolkit.fluxcd.io/reconcile: disabled)"}}}}},
		{name: "created once (ssa: IfNotPresent), Current, under fail-on-suspended: Current", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB), skippedBy(deploymentCurrent, "kustomize.toolkit.fluxcd.io/ssa: IfNotPresent", "ssa-if-not-present"), service},
				want: expected{Outcome: current}}}},
		{name: "not skipped, failing, spec.wait: fails",
			looks: []fixtureLook{{docs: []string{withWait(kustomization(readyOnB)), deploymentPulling, service}, want: fail(result.CodeImagePull, "ErrImagePull")}}},
		// A missing object is waited for, with or without spec.wait: skipped by its manifest
		// (never created) or deleted since, which the run cannot tell apart.
		{name: "missing under a Kustomization Ready with spec.wait: waited for",
			looks: []fixtureLook{{docs: []string{withWait(kustomization(readyOnB)), service}, want: wait("NotFound")}}},
		{name: "missing under a Kustomization Ready without spec.wait: waited for",
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB), service}, want: wait("NotFound")}}},
		// The pod's ErrImagePull has no creation or start time: the grace runs from the zero
		// time, so only a grace of the workload's own far from it holds it back.
		{name: "a retry grace above 24h is refused: the run's grace, and a failure",
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB), annotated(`app-status.io/retry-grace: "876000h"`, timeout), service},
				want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "ErrImagePull"}, ObjectSays: map[string]string{dep: `annotation app-status.io/retry-grace="876000h" ignored`}}}}},
		{name: "retry-grace 10m, failing for 2m: waits until 12:08",
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB), withStart(annotated(`app-status.io/retry-grace: "10m"`, timeout)), service},
				want: wait("InProgress", "fails at 2026-11-01T12:08:00Z")}}},
		{name: "retry-grace 1m, failing for 2m: fails",
			looks: []fixtureLook{{docs: []string{kustomization(readyOnB), withStart(annotated(`app-status.io/retry-grace: "1m"`, timeout)), service},
				want: fail(result.CodeImagePull, "ErrImagePull")}}},
	})
}

// withWait is a Kustomization of kustomization with spec.wait: true.
func withWait(ks string) string {
	return strings.Replace(ks, "spec: {sourceRef: {kind: GitRepository, name: app}}", "spec: {sourceRef: {kind: GitRepository, name: app}, wait: true}", 1)
}

// skippedBy is docs, whose first document is the Deployment shop/web, as the view holds it
// when kustomize-controller skips it: annotation on it, and skip (as documentFacts reads
// it) in its facts.
func skippedBy(docs, annotation, skip string) string {
	return "facts: {kustomizeSkip: " + skip + "}\n" + strings.Replace(docs, `annotations: {deployment.kubernetes.io/revision: "3"}}`,
		`annotations: {deployment.kubernetes.io/revision: "3", `+annotation+`}}`, 1)
}

// TestRootsAppliedAfterTheHolds: a root whose failure awaitGeneration holds as maybe of an
// earlier generation lists objects that are not taken as applied, and the run does not
// announce the revision applied (RootsApplied) meanwhile.
func TestRootsAppliedAfterTheHolds(t *testing.T) {
	t.Parallel()
	rev, err := flux.ParseRevision(revB)
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}},
		Revision: rev, Workloads: true, Health: fluxhealth.New(t.Context())}
	view := newFixtureView(t, strings.Join([]string{kustomization(healthCheckFailedBBeforeSpec), deploymentPulling, service}, "\n---\n"), fixtureReads...)
	if e := Assess(view, NewMemory(), spec, fixtureNow); e.RootsApplied {
		t.Errorf("Assess() RootsApplied = true while the failure is held (pending %+v)", e.Pending)
	}
}
