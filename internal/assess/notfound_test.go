package assess

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// ksIn is Kustomization namespace/name, Ready on rev.
func ksIn(namespace, name, rev string) string {
	return strings.Replace(ks(name, "GitRepository", "app", "", rev), "namespace: flux-system", "namespace: "+namespace, 1)
}

// parentWith is the Kustomization flux-system/apps, which applies the app's Kustomization,
// with the given status (YAML lines under status:).
func parentWith(status string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system, generation: 2, resourceVersion: "5"}
spec: {sourceRef: {kind: GitRepository, name: app}}
status:
` + status
}

const (
	// parentApplied has applied revB, what its source offers.
	parentApplied = `  observedGeneration: 2
  lastAppliedRevision: "` + revB + `"
  lastAttemptedRevision: "` + revB + `"
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: ` + revB + `", observedGeneration: 2}`
	// parentReconciling is kustomize-controller v1.9.5 at work on revB, revA applied.
	parentReconciling = `  observedGeneration: 2
  lastAppliedRevision: "` + revA + `"
  lastAttemptedRevision: "` + revA + `"
  conditions:
  - {type: Ready, status: "Unknown", reason: Progressing, message: "Reconciliation in progress", observedGeneration: 2}
  - {type: Reconciling, status: "True", reason: Progressing, message: "Fetching manifests for revision ` + revB + ` with a timeout of 5m0s", observedGeneration: 2}`
	// parentBehind is Ready on revA while its source offers revB: not started yet.
	parentBehind = `  observedGeneration: 2
  lastAppliedRevision: "` + revA + `"
  lastAttemptedRevision: "` + revA + `"
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: ` + revA + `", observedGeneration: 2}`
	// parentWaitsForDependencies waits for spec.dependsOn.
	parentWaitsForDependencies = `  observedGeneration: 2
  lastAppliedRevision: "` + revA + `"
  lastAttemptedRevision: "` + revA + `"
  conditions:
  - {type: Ready, status: "False", reason: DependencyNotReady, message: "dependency 'flux-system/infra' is not ready", observedGeneration: 2}`
	// parentFailed failed to build revB, its source's newest: its answer for it.
	parentFailed = `  observedGeneration: 1
  lastAppliedRevision: "` + revA + `"
  lastAttemptedRevision: "` + revB + `"
  conditions:
  - {type: Ready, status: "False", reason: BuildFailed, message: "kustomize build failed: accumulating resources", observedGeneration: 2}
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "Fetching manifests for revision ` + revB + ` with a timeout of 5m0s", observedGeneration: 2}`
	// parentRetrying failed to apply revB at 12:01 on a kind whose CRD is not served yet: the
	// whole batch was refused (fluxcd/pkg/ssa aborts on one dry-run), kustomize-controller
	// tries again at retryInterval (retrying, below).
	parentRetrying = `  observedGeneration: 1
  lastAppliedRevision: "` + revA + `"
  lastAttemptedRevision: "` + revB + `"
  conditions:
  - {type: Ready, status: "False", reason: ReconciliationFailed, lastTransitionTime: "2026-11-01T12:01:00Z", observedGeneration: 2,
     message: 'ServiceMonitor/apps/podinfo dry-run failed: no matches for kind "ServiceMonitor" in version "monitoring.coreos.com/v1"'}
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "Detecting drift for revision ` + revB + ` with a timeout of 5m0s", observedGeneration: 2}`
)

// parentLacking failed to apply revB at 12:01 on what the words name (a namespace missing, a
// kind not served), as every attempt of the same build has since 2026-10-31 08:00
// (status.history); kustomize-controller tries again every 10m.
func parentLacking(words string) string {
	return retrying(parentWith(`  observedGeneration: 1
  lastAppliedRevision: "`+revA+`"
  lastAttemptedRevision: "`+revB+`"
  conditions:
  - {type: Ready, status: "False", reason: ReconciliationFailed, lastTransitionTime: "2026-11-01T12:01:00Z", observedGeneration: 2,
     message: '`+words+`'}
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "Detecting drift for revision `+revB+` with a timeout of 5m0s", observedGeneration: 2}
  history:
  - {digest: "sha256:2b1a", firstReconciled: "2026-10-31T08:00:00Z", lastReconciled: "2026-11-01T12:01:00Z", lastReconciledStatus: ReconciliationFailed, totalReconciliations: 170, metadata: {revision: "`+revB+`"}}`), "10m")
}

// parentBuildLacking failed to build revB at 12:01 on a postBuild.substituteFrom Secret not
// there yet (an ExternalSecret of the same merge creates it); kustomize-controller writes no
// status.history entry for a build that failed and tries again every 10m.
func parentBuildLacking() string {
	return retrying(parentWith(`  observedGeneration: 1
  lastAppliedRevision: "`+revA+`"
  lastAttemptedRevision: "`+revB+`"
  conditions:
  - {type: Ready, status: "False", reason: BuildFailed, lastTransitionTime: "2026-11-01T12:01:00Z", observedGeneration: 2,
     message: '`+strings.ReplaceAll(lacksSecret, "'", "''")+`'}
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "Building manifests for revision `+revB+` with a timeout of 5m0s", observedGeneration: 2}`), "10m")
}

// lacksSecret is kustomize-controller v1.9.5's build failure on a substituteFrom Secret that
// does not exist.
const lacksSecret = `post build failed for 'Deployment.v1.apps/podinfo': substitute from 'Secret/cluster-secrets' error: secrets "cluster-secrets" not found`

// The words of a failed apply that name what it lacks.
const (
	lacksNamespace = `ConfigMap/shop/web-config not found: namespaces "shop" not found`
	lacksCRD       = `ServiceMonitor/apps/podinfo dry-run failed: no matches for kind "ServiceMonitor" in version "monitoring.coreos.com/v1"`
	lacksWebhook   = `Deployment/apps/web dry-run failed: Internal error occurred: failed calling webhook "validate.kyverno.svc": context deadline exceeded`
)

// previews is ResourceSet flux-system/previews, Ready, which takes its inputs from a provider
// of pull requests and generates an object of kind for each (flux-operator's preview
// environments).
func previews(kind string) string {
	return `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: previews, namespace: flux-system, generation: 1}
spec:
  inputsFrom: [{kind: ResourceSetInputProvider, name: pull-requests}]
  resourcesTemplate: |
    apiVersion: example/v1
    kind: ` + kind + `
    metadata:
      name: app-pr-<< inputs.id >>
      namespace: flux-system
status:
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Reconciliation finished in 2s", observedGeneration: 1}`
}

// writtenAt is doc, a createdAt object, with a managedFields entry written at the moment
// given (RFC 3339).
func writtenAt(doc, at string) string {
	return strings.Replace(doc, "creationTimestamp:", `managedFields: [{manager: helm, operation: Update, apiVersion: apiextensions.k8s.io/v1, time: "`+at+`"}], creationTimestamp:`, 1)
}

// helmReleaseInstalling is HelmRelease infra/platform, which helm-controller is installing:
// it may create namespaces and CRDs.
const helmReleaseInstalling = `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: platform, namespace: infra, generation: 1}
spec: {interval: 10m, chartRef: {kind: OCIRepository, name: platform}}
status:
  conditions:
  - {type: Ready, status: "Unknown", reason: Progressing, message: "Fulfilling prerequisites", observedGeneration: 1}
  - {type: Reconciling, status: "True", reason: Progressing, message: "Fulfilling prerequisites", observedGeneration: 1}`

// createdAt is a cluster-scoped object of kind (Namespace, CustomResourceDefinition) named
// name, created at the moment given (RFC 3339).
func createdAt(kind, name, at string) string {
	apiVersion := "v1"
	if kind == "CustomResourceDefinition" {
		apiVersion = "apiextensions.k8s.io/v1"
	}
	return "apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata: {name: " + name + ", creationTimestamp: \"" + at + "\"}"
}

// retrying is the parent Kustomization doc with spec.retryInterval every.
func retrying(doc, every string) string {
	return strings.Replace(doc, "spec: {sourceRef:", "spec: {retryInterval: "+every+", sourceRef:", 1)
}

// TestMissingRequestedObject: a requested Flux object that does not exist waits for the
// not-found grace, and longer only while a Kustomization or ResourceSet of the cluster may
// still create it; then it is NotFound, naming the close names of its namespace and the
// namespaces where its name exists.
func TestMissingRequestedObject(t *testing.T) {
	t.Parallel()
	app := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "pod-info"}
	nearbyAt := func(rev string) []string {
		return []string{ksIn("flux-system", "podinfo", rev), ksIn("flux-system", "unrelated", rev), ksIn("apps", "pod-info", rev), ksIn("shop", "pod-info", rev)}
	}
	nearby := nearbyAt(revB)
	const grace = 2 * time.Minute
	// What get says at its one look: NotFound at once when nothing creates the object, the
	// lists unconfirmed read again (as verify past the grace); else the assessment waits,
	// saying what may still create it, and get concludes NotFound.
	uk := []string{"kustomizations in all namespaces", "kustomizations in flux-system"}
	waitsNotFound := outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"}
	getNotFound := func(unconfirmed ...string) missingWant {
		return missingWant{outcome: outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"}, verdict: result.VerdictNotFound,
			message: []string{"Kustomization/flux-system/pod-info not found; close names in flux-system: podinfo;", "no Kustomization or ResourceSet is creating it"},
			lacks:   "missing for", unconfirmed: unconfirmed}
	}
	getWaits := func(says ...string) missingWant {
		return missingWant{outcome: waitsNotFound, verdict: result.VerdictNotFound,
			message: append([]string{"Kustomization/flux-system/pod-info not found yet; Flux may still create it: "}, says...)}
	}
	const (
		retries     = "Kustomization/flux-system/apps retries an apply that failed on what may still come"
		noKind      = `no matches for kind "ServiceMonitor"`
		noNamespace = `namespaces "shop" not found`
	)
	tests := []struct {
		name    string
		ref     flux.Ref
		docs    []string
		elapsed time.Duration // since the run first saw it missing
		// forbidAll lists the resources whose lists of every namespace are forbidden.
		forbidAll []string
		// order, when set, reads the lists at one moment each, in order (consistency).
		order       []string
		want        outcome
		wantMessage []string
		// lacksMessage must not be in the message.
		lacksMessage string
		// wantUnconfirmed are the lists a NotFound must be read again from.
		wantUnconfirmed []string
		// get is what get says at its one look, at once (it has no grace).
		get missingWant
	}{
		{name: "missing within the grace: waits",
			ref: app, docs: append([]string{parentWith(parentApplied), gitRepo()}, nearby...), elapsed: time.Minute,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"Kustomization/flux-system/pod-info not found", "close names in flux-system: podinfo", "not-found-grace"},
			get:         getNotFound(uk...)},
		{name: "missing after the grace, the parent applied its source's revision: NotFound",
			ref: app, docs: append([]string{parentWith(parentApplied), gitRepo()}, nearby...), elapsed: grace,
			want: outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantMessage: []string{"Kustomization/flux-system/pod-info not found", "close names in flux-system: podinfo;",
				"Kustomization pod-info exists in namespace apps, shop", "no Kustomization or ResourceSet is creating it"},
			wantUnconfirmed: []string{"kustomizations in all namespaces", "kustomizations in flux-system"},
			get:             getNotFound(uk...)},
		{name: "missing after the grace, read at one moment after the parents: nothing to read again",
			ref: app, docs: append([]string{parentWith(parentApplied), gitRepo()}, nearby...), elapsed: grace,
			order: []string{"gitrepositories@3", "kustomizations@7"},
			want:  outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			get:   getNotFound()},
		{name: "missing after the grace while the parent reconciles a newer revision: waits",
			ref: app, docs: append([]string{parentWith(parentReconciling), gitRepo()}, nearby...), elapsed: 5 * grace,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"Flux may still create it: Kustomization/flux-system/apps is applying main@sha1:bbbbbbb"},
			get:         getWaits("Kustomization/flux-system/apps is applying main@sha1:bbbbbbb")},
		{name: "missing after the grace, the parent not started on its source's newer revision: waits",
			ref: app, docs: append([]string{parentWith(parentBehind), gitRepo()}, nearby...), elapsed: 5 * grace,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"Kustomization/flux-system/apps has not applied main@sha1:bbbbbbb of GitRepository/flux-system/app yet"},
			get:         getWaits("Kustomization/flux-system/apps has not applied main@sha1:bbbbbbb of GitRepository/flux-system/app yet")},
		{name: "missing after the grace, the parent waits for its dependencies: waits",
			ref: app, docs: append([]string{parentWith(parentWaitsForDependencies), gitRepo()}, nearby...), elapsed: 5 * grace,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"Kustomization/flux-system/apps waits for its dependencies"},
			get:         getWaits("Kustomization/flux-system/apps waits for its dependencies")},
		{name: "missing after the grace, the parent failed its source's newest revision: NotFound",
			ref: app, docs: append([]string{parentWith(parentFailed), gitRepo()}, nearby...), elapsed: grace,
			want:            outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantUnconfirmed: []string{"kustomizations in all namespaces", "kustomizations in flux-system"},
			get:             getNotFound(uk...)},
		{name: "missing after the grace, the parent retries an apply refused for a CRD not served yet, within the retry grace: waits",
			ref: app, docs: append([]string{retrying(parentWith(parentRetrying), "5m"), gitRepo()}, nearby...), elapsed: 100 * time.Second,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"Flux may still create it: Kustomization/flux-system/apps retries an apply that failed on what may still come", "no matches for kind"},
			get:         getWaits(retries, noKind)},
		{name: "the CRD still not served past the retry grace, nothing at work: NotFound",
			ref: app, docs: append([]string{retrying(parentWith(parentRetrying), "5m"), gitRepo()}, nearby...), elapsed: 4 * time.Minute,
			want:            outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantUnconfirmed: []string{"kustomizations in all namespaces", "kustomizations in flux-system"},
			get:             getWaits(retries, noKind)},
		{name: "the CRD still not served past the retry grace, a HelmRelease installing: waits",
			ref: app, docs: append([]string{retrying(parentWith(parentRetrying), "5m"), gitRepo(), helmReleaseInstalling}, nearby...), elapsed: 4 * time.Minute,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"retries an apply that failed on what may still come", "no matches for kind"},
			get:         getWaits(retries, noKind)},
		{name: "a Kustomization failing for a day on a namespace still missing: NotFound past the grace",
			ref: app, docs: append([]string{parentLacking(lacksNamespace), gitRepo()}, nearby...), elapsed: grace,
			want:            outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantUnconfirmed: []string{"kustomizations in all namespaces", "kustomizations in flux-system"},
			get:             getNotFound(uk...)},
		{name: "a Kustomization failing on a namespace deleted a minute ago and still missing: NotFound past the grace",
			ref: app, docs: append([]string{strings.Replace(parentLacking(lacksNamespace), "2026-10-31T08:00:00Z", "2026-11-01T11:59:00Z", 1), gitRepo()}, nearby...), elapsed: grace,
			want:            outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantUnconfirmed: []string{"kustomizations in all namespaces", "kustomizations in flux-system"},
			get:             getNotFound(uk...)},
		{name: "its namespace created since the failure: waits for the next attempt",
			ref: app, docs: append([]string{parentLacking(lacksNamespace), gitRepo(), createdAt("Namespace", "shop", "2026-11-01T12:01:30Z")}, nearby...), elapsed: grace,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"Flux may still create it: Kustomization/flux-system/apps retries an apply that failed on what may still come", `namespaces "shop" not found`},
			get:         getWaits(retries, noNamespace)},
		{name: "its namespace created since the failure, past the next attempt: NotFound",
			ref: app, docs: append([]string{parentLacking(lacksNamespace), gitRepo(), createdAt("Namespace", "shop", "2026-11-01T12:01:30Z")}, nearby...), elapsed: 13 * time.Minute,
			want:            outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantUnconfirmed: []string{"kustomizations in all namespaces", "kustomizations in flux-system"},
			get:             getWaits(retries, noNamespace)},
		{name: "its namespace there, created before the failure was written (during the attempt): waits for the next attempt",
			ref: app, docs: append([]string{parentLacking(lacksNamespace), gitRepo(), createdAt("Namespace", "shop", "2026-11-01T12:00:59Z")}, nearby...), elapsed: grace,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"retries an apply that failed on what may still come"},
			get:         getWaits(retries, noNamespace)},
		{name: "a namespace still missing while a HelmRelease installs: waits",
			ref: app, docs: append([]string{parentLacking(lacksNamespace), gitRepo(), helmReleaseInstalling}, nearby...), elapsed: grace,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"retries an apply that failed on what may still come"},
			get:         getWaits(retries, noNamespace)},
		// (get, at its one look, already knows the failure began a day ago: status.history.)
		{name: "failing for a day on a kind not served: NotFound past the grace",
			ref: app, docs: append([]string{parentLacking(lacksCRD), gitRepo()}, nearby...), elapsed: grace,
			want:            outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantUnconfirmed: []string{"kustomizations in all namespaces", "kustomizations in flux-system"},
			get:             getNotFound(uk...)},
		{name: "a CRD of the kind's group created since the failure: waits for the next attempt",
			ref: app, docs: append([]string{parentLacking(lacksCRD), gitRepo(), createdAt("CustomResourceDefinition", "servicemonitors.monitoring.coreos.com", "2026-11-01T12:01:30Z")}, nearby...), elapsed: grace,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"retries an apply that failed on what may still come", "no matches for kind"},
			get:         getWaits(retries, noKind)},
		{name: "a CRD of the kind's group there long, written since the failure (a version added): waits for the next attempt",
			ref: app, docs: append([]string{parentLacking(lacksCRD), gitRepo(), writtenAt(createdAt("CustomResourceDefinition", "servicemonitors.monitoring.coreos.com", "2026-01-01T00:00:00Z"), "2026-11-01T12:01:30Z")}, nearby...), elapsed: grace,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"retries an apply that failed on what may still come", "no matches for kind"},
			get:         getWaits(retries, noKind)},
		{name: "a CRD of the kind's group there long, not written since: NotFound past the grace",
			ref: app, docs: append([]string{parentLacking(lacksCRD), gitRepo(), writtenAt(createdAt("CustomResourceDefinition", "servicemonitors.monitoring.coreos.com", "2026-01-01T00:00:00Z"), "2026-06-01T00:00:00Z")}, nearby...), elapsed: grace,
			want:            outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantUnconfirmed: uk,
			get:             getNotFound(uk...)},
		{name: "failing for a day on a webhook (its fix may be the merge): waits out the retry grace from the run's start",
			ref: app, docs: append([]string{parentLacking(lacksWebhook), gitRepo()}, nearby...), elapsed: grace,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"retries an apply that failed on what may still come", "failed calling webhook"},
			get:         getWaits(retries, "failed calling webhook")},
		{name: "failing for a day on a webhook, past the retry grace and the next attempt: NotFound",
			ref: app, docs: append([]string{parentLacking(lacksWebhook), gitRepo()}, nearby...), elapsed: 13 * time.Minute,
			want:            outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantUnconfirmed: []string{"kustomizations in all namespaces", "kustomizations in flux-system"},
			get:             getWaits(retries, "failed calling webhook")},
		{name: "a ResourceSet fed by input providers that may generate it, within their interval: waits",
			ref: app, docs: append([]string{parentWith(parentApplied), gitRepo(), previews("Kustomization")}, nearby...), elapsed: 5 * time.Minute,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"Flux may still create it: ResourceSet/flux-system/previews takes inputs from providers (spec.inputsFrom), which export new ones within 10m0s"},
			get:         getWaits("ResourceSet/flux-system/previews takes inputs from providers")},
		{name: "a ResourceSet fed by input providers that may generate it, past their interval: NotFound",
			ref: app, docs: append([]string{parentWith(parentApplied), gitRepo(), previews("Kustomization")}, nearby...), elapsed: 10*time.Minute + 30*time.Second,
			want:            outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantUnconfirmed: uk,
			get:             getWaits("ResourceSet/flux-system/previews takes inputs from providers")},
		{name: "a ResourceSet fed by input providers that generates other kinds: NotFound past the grace",
			ref: app, docs: append([]string{parentWith(parentApplied), gitRepo(), previews("HelmRelease")}, nearby...), elapsed: grace,
			want:            outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantUnconfirmed: uk,
			get:             getNotFound(uk...)},
		// A build that lacks a substituteFrom Secret names no namespace or CRD: the rule of
		// words that name nothing readable.
		{name: "a build failing on a substituteFrom Secret not there yet: waits out the retry grace and the next attempt",
			ref: app, docs: append([]string{parentBuildLacking(), gitRepo()}, nearby...), elapsed: grace,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"Flux may still create it: Kustomization/flux-system/apps retries a build that failed on what may still come", "substitute from 'Secret/cluster-secrets'"},
			get:         getWaits("Kustomization/flux-system/apps retries a build that failed on what may still come", "substitute from 'Secret/cluster-secrets'")},
		{name: "a build failing on a substituteFrom Secret, past the retry grace and the next attempt: NotFound",
			ref: app, docs: append([]string{parentBuildLacking(), gitRepo()}, nearby...), elapsed: 13 * time.Minute,
			want:            outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantUnconfirmed: []string{"kustomizations in all namespaces", "kustomizations in flux-system"},
			get:             getWaits("Kustomization/flux-system/apps retries a build that failed on what may still come", "substitute from 'Secret/cluster-secrets'")},
		{name: "the merge's revision in no source yet, within the source's interval: waits",
			ref: app, docs: append([]string{parentWith(parentBehind), fetchingEvery("5m", revA)}, nearbyAt(revA)...), elapsed: 5 * time.Minute,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"Flux may still create it: main@sha1:bbbbbbb is in none of the 1 sources the cluster's Kustomizations apply from yet (each fetches within its interval, the longest 5m0s)"},
			get:         getWaits("main@sha1:bbbbbbb is in none of the 1 sources")},
		{name: "the merge's revision in no source past the source's interval: NotFound",
			ref: app, docs: append([]string{parentWith(parentBehind), fetchingEvery("5m", revA)}, nearbyAt(revA)...), elapsed: 5*time.Minute + 30*time.Second,
			want:            outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantUnconfirmed: []string{"kustomizations in all namespaces", "kustomizations in flux-system"},
			get:             getWaits("main@sha1:bbbbbbb is in none of the 1 sources")},
		{name: "missing after the grace, a ResourceSet reconciling: waits",
			ref: app, docs: append([]string{parentWith(parentApplied), gitRepo(), rset("[]", `  - {type: Ready, status: "Unknown", reason: Progressing, message: "Reconciliation in progress", observedGeneration: 2}`)}, nearby...),
			elapsed:     grace,
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"ResourceSet/flux-system/tenants is reconciling"},
			get:         getWaits("ResourceSet/flux-system/tenants is reconciling")},
		{name: "Kustomizations of every namespace forbidden: waits, saying why",
			ref: app, docs: append([]string{parentWith(parentApplied), gitRepo()}, nearby...), elapsed: grace,
			forbidAll:   []string{"kustomizations"},
			want:        outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			wantMessage: []string{"cannot tell whether Flux is creating it: listing kustomizations in all namespaces"},
			get: missingWant{outcome: waitsNotFound, verdict: result.VerdictNotFound,
				message: []string{"Kustomization/flux-system/pod-info not found; cannot tell whether Flux is creating it: listing kustomizations in all namespaces"}}},
		{name: "HelmReleases of every namespace forbidden: NotFound, saying other namespaces were not searched",
			ref: flux.Ref{Kind: flux.KindHelmRelease, Namespace: "flux-system", Name: "web"}, docs: []string{parentWith(parentApplied), gitRepo()}, elapsed: grace,
			forbidAll:       []string{"helmreleases"},
			want:            outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"},
			wantMessage:     []string{"HelmRelease/flux-system/web not found; other namespaces not searched (listing helmreleases in all namespaces:"},
			wantUnconfirmed: []string{"kustomizations in all namespaces", "helmreleases in flux-system"},
			get: missingWant{outcome: outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"}, verdict: result.VerdictNotFound,
				message:     []string{"HelmRelease/flux-system/web not found; other namespaces not searched (listing helmreleases in all namespaces:", "no Kustomization or ResourceSet is creating it"},
				lacks:       "missing for",
				unconfirmed: []string{"kustomizations in all namespaces", "helmreleases in flux-system"}}},
		{name: "get: no grace",
			ref: app, docs: append([]string{parentWith(parentApplied), gitRepo()}, nearby...),
			order:       []string{"gitrepositories@3", "kustomizations@7"},
			want:        waitsNotFound,
			wantMessage: []string{"close names in flux-system: podinfo", "NotFound once it has been missing for 2m0s (not-found-grace)"},
			get: missingWant{outcome: outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"}, verdict: result.VerdictNotFound,
				message: []string{"close names in flux-system: podinfo", "no Kustomization or ResourceSet is creating it"},
				lacks:   "missing for"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			view := newFixtureView(t, strings.Join(tt.docs, "\n---\n"), tt.order...)
			for _, r := range tt.forbidAll {
				view.forbidAllNamespaces(schema.GroupResource{Group: fixtureGroup(t, r), Resource: r})
			}
			rev, err := flux.ParseRevision(revB)
			if err != nil {
				t.Fatal(err)
			}
			for _, mode := range []string{"get", "verify"} {
				spec := Spec{Resources: []flux.Ref{tt.ref}, Revision: rev, Snapshot: mode == "get", NotFoundGrace: grace, Health: fluxhealth.New(t.Context())}
				mem := NewMemory()
				e := Assess(view, mem, spec, fixtureNow)
				if !e.NotFound {
					t.Errorf("%s, first assessment: NotFound false, want true", mode)
				}
				want := tt.get
				if mode == "verify" {
					want = missingWant{outcome: tt.want, message: tt.wantMessage, lacks: tt.lacksMessage, unconfirmed: tt.wantUnconfirmed}
					if tt.elapsed > 0 {
						e = Assess(view, mem, spec, fixtureNow.Add(tt.elapsed))
					}
				}
				checkMissing(t, mode, e, want)
			}
		})
	}
}

// missingWant is what an assessment of a missing object says: its outcome, the cluster's
// verdict get concludes from it (Conclude, Facts.Snapshot; unchecked when ""), parts of its
// message and one it lacks, and the lists a NotFound must be read again from.
type missingWant struct {
	outcome     outcome
	verdict     result.Verdict
	message     []string
	lacks       string
	unconfirmed []string
}

// checkMissing checks that e, assessed in mode, says want.
func checkMissing(t *testing.T, mode string, e *Assessment, want missingWant) {
	t.Helper()
	if diff := cmp.Diff(want.outcome, outcomeOf(e)); diff != "" {
		t.Errorf("%s: Assess() (-want +got):\n%s\npending %+v fatal %+v", mode, diff, e.Pending, e.Fatal)
	}
	if want.verdict != "" {
		if got := Conclude(e, Facts{Snapshot: true}).Verdict.Verdict; got != want.verdict {
			t.Errorf("%s: concluded verdict %s, want %s", mode, got, want.verdict)
		}
	}
	msg := verdictMessage(e)
	for _, part := range want.message {
		if !strings.Contains(msg, part) {
			t.Errorf("%s: Assess() message = %q, want it to contain %q", mode, msg, part)
		}
	}
	if want.lacks != "" && strings.Contains(msg, want.lacks) {
		t.Errorf("%s: Assess() message = %q, want it without %q", mode, msg, want.lacks)
	}
	if got := keyNames(e.Unconfirmed); !cmp.Equal(got, want.unconfirmed) {
		t.Errorf("%s: Assess() unconfirmed = %q, want %q", mode, got, want.unconfirmed)
	}
}

// fetchingEvery is the GitRepository app, fetching every interval, its artifact rev.
func fetchingEvery(interval, rev string) string {
	return strings.Replace(gitRepoAt(rev), "generation: 1}\n", "generation: 1}\nspec: {interval: "+interval+"}\n", 1)
}

// TestMissingButListedInAllNamespaces: a HelmRelease the list of its namespace lacks but the
// list of every namespace holds (a watch behind the other) waits for the list to catch up,
// never NotFound in verify; get, which does not wait, concludes the wait NotFound.
func TestMissingButListedInAllNamespaces(t *testing.T) {
	t.Parallel()
	hr := `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: flux-system, generation: 1}
spec: {interval: 10m}`
	waits := missingWant{outcome: outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
		message: []string{"HelmRelease/flux-system/web not found in its namespace's list yet, though listed in all namespaces"}}
	for _, mode := range []string{"get", "verify"} {
		view := newFixtureView(t, strings.Join([]string{parentWith(parentApplied), gitRepo(), hr}, "\n---\n"))
		gvr := flux.KindHelmRelease.GroupVersionResource()
		delete(view.list(ListKey{GVR: gvr, Namespace: "flux-system"}).objects, "flux-system/web")
		spec := Spec{Resources: []flux.Ref{{Kind: flux.KindHelmRelease, Namespace: "flux-system", Name: "web"}}, Snapshot: mode == "get",
			Health: fluxhealth.New(t.Context())}
		want := waits
		if mode == "get" {
			want.verdict = result.VerdictNotFound
		}
		e := Assess(view, NewMemory(), spec, fixtureNow)
		checkMissing(t, mode, e, want)
		if mode == "verify" && Conclude(e, Facts{}).Done {
			t.Errorf("verify: Conclude() done with %+v, want it waiting", Conclude(e, Facts{}).Verdict)
		}
	}
}

// TestMissingMessageIsOneLine: what the cluster says of the objects that may still create a
// missing one (a source's revision with an escape sequence and a line break) is shown on one
// line, without them, in get (which concludes the wait NotFound) as in verify.
func TestMissingMessageIsOneLine(t *testing.T) {
	t.Parallel()
	hostile := strings.Replace(gitRepo(), `revision: "`+revB+`"`, `revision: "main@sha1:\x1b[31mred\n::error::injected"`, 1)
	for _, mode := range []string{"get", "verify"} {
		view := newFixtureView(t, strings.Join([]string{parentWith(parentBehind), hostile}, "\n---\n"))
		spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}}, Snapshot: mode == "get",
			Health: fluxhealth.New(t.Context())}
		want := missingWant{outcome: outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
			message: []string{"Kustomization/flux-system/app not found yet; Flux may still create it: Kustomization/flux-system/apps has not applied"}}
		if mode == "get" {
			want.verdict = result.VerdictNotFound
		}
		e := Assess(view, NewMemory(), spec, fixtureNow)
		checkMissing(t, mode, e, want)
		if msg := verdictMessage(e); strings.ContainsAny(msg, "\x1b\n\r") {
			t.Errorf("%s: Assess() message = %q, want one line without escape sequences", mode, msg)
		}
	}
}

// TestMissingWithinGraceRechecks: within the grace, the assessment asks to be made again when
// it ends, and the grace runs from the first assessment that saw the object missing. get has
// no grace: NotFound at its one look, with nothing to recheck.
func TestMissingWithinGraceRechecks(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"get", "verify"} {
		view := newFixtureView(t, strings.Join([]string{parentWith(parentApplied), gitRepo()}, "\n---\n"))
		spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}}, NotFoundGrace: 90 * time.Second,
			Snapshot: mode == "get", Health: fluxhealth.New(t.Context())}
		mem := NewMemory()
		e := Assess(view, mem, spec, fixtureNow)
		want := missingWant{outcome: outcome{Verdict: result.VerdictNotFound, Reason: "NotFound"}, verdict: result.VerdictNotFound,
			message:     []string{"Kustomization/flux-system/app not found; close names in flux-system: apps; no Kustomization or ResourceSet is creating it"},
			lacks:       "missing for",
			unconfirmed: []string{"kustomizations in all namespaces", "kustomizations in flux-system"}}
		recheck := time.Time{}
		if mode == "verify" {
			e = Assess(view, mem, spec, fixtureNow.Add(time.Minute))
			want = missingWant{outcome: outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"},
				message: []string{"Kustomization/flux-system/app not found; close names in flux-system: apps; NotFound once it has been missing for 1m30s (not-found-grace)"}}
			recheck = fixtureNow.Add(90 * time.Second)
		}
		checkMissing(t, mode, e, want)
		if !e.Recheck.Equal(recheck) {
			t.Errorf("%s: Assess() Recheck = %s, want %s", mode, e.Recheck, recheck)
		}
	}
}

// TestCloseName: the names a NotFound message offers: a few edits apart, or one a prefix of
// the other.
func TestCloseName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		want, have string
		ok         bool
	}{
		{"podinfo", "podinfo", false},
		{"podinfo", "podnfo", true},
		{"podinfo", "pod-info", true},
		{"podinfo", "podinfo-staging", true},
		{"podinfo-staging", "podinfo", true},
		{"web", "wep", true},
		{"web", "api", false},
		{"app", "app-two", false}, // a prefix of fewer than four characters
		{"frontend", "backend", false},
		{strings.Repeat("a", 253), strings.Repeat("b", 253), false},
	}
	for _, tt := range tests {
		if _, ok := closeName(tt.want, tt.have); ok != tt.ok {
			t.Errorf("closeName(%q, %q) = %t, want %t", tt.want, tt.have, ok, tt.ok)
		}
	}
}

// fixtureGroup is the API group of a fixture resource.
func fixtureGroup(t *testing.T, resource string) string {
	t.Helper()
	for _, gvr := range fixtureKinds {
		if gvr.Resource == resource {
			return gvr.Group
		}
	}
	t.Fatalf("fixture resource %s unknown", resource)
	return ""
}

// keyNames names lists as "RESOURCE in NAMESPACE" ("in all namespaces" for "").
func keyNames(keys []ListKey) []string {
	var out []string
	for _, k := range keys {
		ns := k.Namespace
		if ns == "" {
			ns = "all namespaces"
		}
		out = append(out, k.GVR.Resource+" in "+ns)
	}
	return out
}
