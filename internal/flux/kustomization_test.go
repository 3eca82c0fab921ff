package flux

import (
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/result"
)

const (
	oldSHA   = "c00dbbc9dadfbe1e232e93a729dd4752fade0abf"
	newSHA   = "c2a6b03f190dfb2b4aa91f8af8d477a9bc3401dc"
	newerSHA = "1d47386a9777a927aac611d869a7baed63609654"
)

// The messages kustomize-controller wrote in the fixtures.
const (
	ksBuildMsg          = "kustomize build failed: accumulating resources: accumulation err='accumulating resources from './podinfo.yaml': open /tmp/kustomization-1468113452/apps/production/podinfo.yaml: no such file or directory': must build at directory: not a valid directory: evalsymlink failure on '/tmp/kustomization-1468113452/apps/production/podinfo.yaml' : lstat /tmp/kustomization-1468113452/apps/production/podinfo.yaml: no such file or directory"
	ksArtifactMsg       = "kustomization path not found: stat /tmp/kustomization-2905563157/apps/production: no such file or directory"
	ksHealthMsg         = "health check failed after 5m0.03125s: timeout waiting for: [Deployment/apps/podinfo status: 'InProgress']"
	ksReconciliationMsg = `Deployment/apps/podinfo dry-run failed (Invalid): Deployment.apps "podinfo" is invalid: spec.template.spec.containers[0].image: Required value`
	ksSchemaMsg         = `Deployment/apps/podinfo dry-run failed: .spec.template.spec.containers[name="podinfo"].imagePullPolicyy: field not declared in schema`
	ksPruneMsg          = `failed to delete Namespace/legacy: namespaces "legacy" is forbidden: User "system:serviceaccount:flux-system:kustomize-controller" cannot delete resource "namespaces" in API group "" in the namespace "legacy"`
	ksCELMsg            = `Reconciliation failed terminally due to configuration error: failed to parse the CEL expression 'status.conditions.filter(e, e.type == "Ready").all(e, e.status == "True"': ERROR: <input>:1:70: Syntax error: missing ')' at '<EOF>'`
)

var ksRef = Ref{Kind: KindKustomization, Namespace: "flux-system", Name: "apps"}

// ksObjects is what each Kustomization fixture's status says, whatever revision is expected.
var ksObjects = func() map[string]result.FluxObject {
	applied := func(ready, appliedRev, attemptedRev string, gen, observed int64) result.FluxObject {
		return result.FluxObject{Ready: ready, LastAppliedRevision: appliedRev, LastAttemptedRevision: attemptedRev, Generation: gen, ObservedGeneration: observed}
	}
	failedOn := func(attempted string) result.FluxObject {
		return applied("False", "main@sha1:"+oldSHA, "main@sha1:"+attempted, 3, 2)
	}
	suspended := applied("True", "main@sha1:"+oldSHA, "main@sha1:"+oldSHA, 2, 2)
	suspended.Suspended = true
	return map[string]result.FluxObject{
		"ks-ready.yaml":                 applied("True", "main@sha1:"+newSHA, "main@sha1:"+newSHA, 2, 2),
		"ks-ready-legacy.yaml":          applied("True", "main/"+newSHA, "main/"+newSHA, 2, 2),
		"ks-generation.yaml":            applied("True", "main@sha1:"+newSHA, "main@sha1:"+newSHA, 3, 2),
		"ks-reconciling.yaml":           applied("Unknown", "main@sha1:"+oldSHA, "main@sha1:"+newSHA, 3, 2),
		"ks-building.yaml":              applied("Unknown", "main@sha1:"+oldSHA, "main@sha1:"+newSHA, 3, 2),
		"ks-build-failed.yaml":          failedOn(newSHA),
		"ks-artifact-failed.yaml":       failedOn(oldSHA),
		"ks-health-check-failed.yaml":   failedOn(newSHA),
		"ks-reconciliation-failed.yaml": failedOn(newSHA),
		"ks-prune-failed.yaml":          failedOn(newSHA),
		"ks-schema-refused.yaml":        failedOn(newSHA),
		"ks-stalled.yaml":               applied("False", "main@sha1:"+oldSHA, "main@sha1:"+oldSHA, 2, 2),
		"ks-suspended.yaml":             suspended,
		"ks-dependency.yaml":            applied("False", "main@sha1:"+oldSHA, "main@sha1:"+oldSHA, 3, 2),
		"ks-new.yaml":                   applied("Unknown", "", "", 1, 0),
	}
}()

func TestEvaluateKustomization(t *testing.T) {
	t.Parallel()
	const applied = "Applied revision: main@sha1:" + newSHA
	const succeeded = "ReconciliationSucceeded"
	runGateCases(t, ksRef, ksObjects, []gateCase{
		// Done: current, current generation, expected revision, in any form the user has.
		{"ready on full revision", "ks-ready.yaml", "main@sha1:" + newSHA, current, "", succeeded, applied},
		{"ready on refs/heads revision", "ks-ready.yaml", "refs/heads/main@sha1:" + newSHA, current, "", succeeded, applied},
		{"ready on full sha", "ks-ready.yaml", newSHA, current, "", succeeded, applied},
		{"ready on short upper-case sha", "ks-ready.yaml", "C2A6B03", current, "", succeeded, applied},
		{"ready on the commit, with its branch", "ks-ready.yaml", "main@c2a6b03", current, "", succeeded, applied},
		{"ready on legacy revision", "ks-ready.yaml", "main/" + newSHA, current, "", succeeded, applied},
		{"ready with no revision asked", "ks-ready.yaml", "", current, "", succeeded, applied},
		{"legacy applied revision, new-format expected", "ks-ready-legacy.yaml", "main@sha1:" + newSHA, current, "", succeeded, "Applied revision: main/" + newSHA},
		// The stale-success trap: current, but on another revision.
		{"ready on older revision", "ks-ready.yaml", newerSHA, inProgress, "", succeeded, "applied main@sha1:c2a6b03, waiting for 1d47386"},
		{"ready on another tag", "ks-ready.yaml", "refs/tags/release-1.2", inProgress, "", succeeded, "applied main@sha1:c2a6b03, waiting for refs/tags/release-1.2"},
		{"ready on another sha of the same branch", "ks-ready.yaml", "main@sha1:" + newerSHA, inProgress, "", succeeded, "applied main@sha1:c2a6b03, waiting for main@sha1:1d47386"},
		{"legacy applied revision, other sha", "ks-ready-legacy.yaml", "main@sha1:" + newerSHA, inProgress, "", succeeded, "applied main/c2a6b03, waiting for main@sha1:1d47386"},
		// Not done yet.
		{"generation not observed", "ks-generation.yaml", newSHA, inProgress, "", succeeded, "waiting for kustomize-controller to reconcile generation 3 (observed 2)"},
		{"generation not observed, no revision asked", "ks-generation.yaml", "", inProgress, "", succeeded, "waiting for kustomize-controller to reconcile generation 3 (observed 2)"},
		{"reconciling", "ks-reconciling.yaml", newSHA, inProgress, "", "Progressing", "Running health checks for revision main@sha1:" + newSHA + " with a timeout of 5m0s"},
		{"building", "ks-building.yaml", newSHA, inProgress, "", "Progressing", "Building manifests for revision main@sha1:" + newSHA + " with a timeout of 5m0s"},
		{"never reconciled", "ks-new.yaml", newSHA, inProgress, "", "", "waiting for kustomize-controller to report the Ready condition"},
		{"dependency not ready", "ks-dependency.yaml", newSHA, inProgress, result.CodeFluxDependencyNotReady, "DependencyNotReady",
			"waiting for dependency flux-system/infra to be ready (dependsOn: flux-system/infra, platform/crds): dependency 'flux-system/infra' is not ready"},
		// Terminal reasons: Failed for the expected revision (or none asked), inProgress for an older one.
		{"build failed on expected", "ks-build-failed.yaml", newSHA, failed, result.CodeFluxBuildFailed, "BuildFailed", "revision main@sha1:c2a6b03 failed: " + ksBuildMsg},
		{"build failed, none asked", "ks-build-failed.yaml", "", failed, result.CodeFluxBuildFailed, "BuildFailed", "revision main@sha1:c2a6b03 failed: " + ksBuildMsg},
		{"build failed on older", "ks-build-failed.yaml", newerSHA, inProgress, result.CodeFluxBuildFailed, "BuildFailed",
			"waiting for 1d47386 to be attempted; the last attempt was main@sha1:c2a6b03 and failed: " + ksBuildMsg},
		{"artifact failed on expected", "ks-artifact-failed.yaml", "main@sha1:" + oldSHA, failed, result.CodeFluxArtifactFailed, "ArtifactFailed", "revision main@sha1:c00dbbc failed: " + ksArtifactMsg},
		{"artifact failed before fetching expected", "ks-artifact-failed.yaml", newSHA, inProgress, result.CodeFluxArtifactFailed, "ArtifactFailed",
			"waiting for c2a6b03 to be attempted; the last attempt was main@sha1:c00dbbc and failed: " + ksArtifactMsg},
		{"health check failed on expected", "ks-health-check-failed.yaml", "c2a6b03", failed, result.CodeFluxHealthCheckFailed, "HealthCheckFailed", "revision main@sha1:c2a6b03 failed: " + ksHealthMsg},
		{"health check failed on older", "ks-health-check-failed.yaml", "main@sha1:" + newerSHA, inProgress, result.CodeFluxHealthCheckFailed, "HealthCheckFailed",
			"waiting for main@sha1:1d47386 to be attempted; the last attempt was main@sha1:c2a6b03 and failed: " + ksHealthMsg},
		{"reconciliation failed on expected", "ks-reconciliation-failed.yaml", newSHA[:10], failed, result.CodeFluxReconciliationFailed, "ReconciliationFailed",
			"revision main@sha1:c2a6b03 failed: " + ksReconciliationMsg},
		{"reconciliation failed on older", "ks-reconciliation-failed.yaml", newerSHA, inProgress, result.CodeFluxReconciliationFailed, "ReconciliationFailed",
			"waiting for 1d47386 to be attempted; the last attempt was main@sha1:c2a6b03 and failed: " + ksReconciliationMsg},
		{"schema refused on expected", "ks-schema-refused.yaml", newSHA, failed, result.CodeFluxReconciliationFailed, "ReconciliationFailed",
			"revision main@sha1:c2a6b03 failed: " + ksSchemaMsg},
		{"prune failed on expected", "ks-prune-failed.yaml", newSHA, failed, result.CodeFluxPruneFailed, "PruneFailed", "revision main@sha1:c2a6b03 failed: " + ksPruneMsg},
		{"prune failed on older", "ks-prune-failed.yaml", newerSHA, inProgress, result.CodeFluxPruneFailed, "PruneFailed",
			"waiting for 1d47386 to be attempted; the last attempt was main@sha1:c2a6b03 and failed: " + ksPruneMsg},
		// Flux will not go on by itself.
		{"stalled", "ks-stalled.yaml", newSHA, failed, result.CodeFluxStalled, "InvalidCELExpression", "stalled: " + ksCELMsg},
		{"suspended", "ks-suspended.yaml", newSHA, suspended, result.CodeFluxSuspended, "Suspended",
			"suspended (spec.suspend: true); resume it with: flux resume kustomization apps -n flux-system"},
	})
}

func TestRetriedKustomization(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason, message string
		retried         bool
	}{
		{"ReconciliationFailed", `Widget/shop/w dry-run failed: no matches for kind "Widget" in version "example.com/v1"`, true},
		{"ReconciliationFailed", `Deployment/shop/web dry-run failed: Internal error occurred: failed calling webhook "validate.example.com": failed to call webhook: Post "https://hook.shop.svc:443/validate": dial tcp 10.96.0.4:443: connect: connection refused`, true},
		{"ReconciliationFailed", `Deployment/shop/web dry-run failed: namespaces "shop" not found`, true},
		{"ReconciliationFailed", `Deployment/shop/web dry-run failed: Deployment.apps "web" is invalid: spec.selector: Invalid value: field is immutable`, false},
		{"ReconciliationFailed", `Deployment/shop/web dry-run failed: admission webhook "validate.kyverno.svc" denied the request: label required`, false},
		{"ReconciliationFailed", ksSchemaMsg, false},
		{"ReconciliationFailed", `Server/rabbitmq-instances/rabbitmq-management dry-run failed: .spec.accessPolicy: field not declared in schema`, true},
		{"ReconciliationFailed", `something never seen`, false},
		{"PruneFailed", `delete failed, errors: ConfigMap/apps/old delete failed: Internal error occurred: failed calling webhook "v.example.com": failed to call webhook: Post "https://v.example.svc:443/validate?timeout=10s": dial tcp 10.96.0.9:443: connect: connection refused`, true},
		{"PruneFailed", `delete failed, errors: ConfigMap/apps/old delete failed: Timeout: request did not complete within requested timeout - context deadline exceeded`, true},
		// Every prune is retried: kustomize-controller v1.7.3 passes its retry of a forbidden
		// delete (it kept the new inventory), v1.9.5 fails it again.
		{"PruneFailed", ksPruneMsg, true},
		{"PruneFailed", `delete failed, errors: Namespace/legacy delete failed: in new words`, true},
		{"ArtifactFailed", `Source artifact not found, retrying in 30s`, true},
		{"ArtifactFailed", `failed to download archive from http://source-controller.flux-system.svc.cluster.local./gitrepository/flux-system/app/x.tar.gz (status: 503 Service Unavailable)`, true},
		{"ArtifactFailed", `kustomization path not found: stat /tmp/x/apps/web: no such file or directory`, false},
		{"BuildFailed", `kustomize build failed: accumulating resources: no such file`, false},
		{"BuildFailed", `post build failed for 'Deployment.v1.apps/web': substitute from 'Secret/cluster-secrets' error: secrets "cluster-secrets" not found`, true},
		{"BuildFailed", `post build failed for 'Deployment.v1.apps/web': envsubst error: variable substitution failed: variable not set (strict mode): "CLUSTER_NAME"`, true},
		{"HealthCheckFailed", `health check failed after 5m: timeout`, false},
	}
	substitutes := substitutingView(t, true)
	for _, tt := range tests {
		if got := retriedKustomization(substitutes, condition{reason: tt.reason, message: tt.message}); got != tt.retried {
			t.Errorf("retriedKustomization(%s, %q) = %v, want %v", tt.reason, tt.message, got, tt.retried)
		}
	}
}

func TestRetryInterval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		doc, message string
		want         time.Duration
	}{
		{"spec: {interval: 10m}", "", 10 * time.Minute},
		{"spec: {interval: 10m, retryInterval: 1m}", "", time.Minute},
		{"spec: {interval: 10m, retryInterval: 1m}", "Source artifact not found, retrying in 30s", 30 * time.Second},
		{"spec: {interval: 10m}", "retrying in soon", 10 * time.Minute},
		{"spec: {}", "", 0},
	}
	for _, tt := range tests {
		if got := retryInterval(fromYAML(t, tt.doc), tt.message); got != tt.want {
			t.Errorf("retryInterval(%s, %q) = %v, want %v", tt.doc, tt.message, got, tt.want)
		}
	}
}

// TestKustomizationMaybeOlderGeneration: kustomize-controller records no generation of a
// failed attempt, and Flux's patch helper stamps its conditions with the generation current
// at the write: a failure stamped with a generation that never ended Ready may be of an
// earlier one. One stamped with an older generation waits anyway; one of a generation that
// ended Ready before, or of the first generation, is of it.
func TestKustomizationMaybeOlderGeneration(t *testing.T) {
	t.Parallel()
	doc := string(readFixture(t, "ks-build-failed.yaml")) // generation 3, observed 2, stamped 3
	tests := []struct {
		name    string
		doc     string
		verdict result.Verdict
		older   bool
	}{
		{"stamped with a generation that never ended Ready", doc, result.VerdictFailed, true},
		{"of a generation that ended Ready before", strings.Replace(doc, "  observedGeneration: 2", "  observedGeneration: 3", 1), result.VerdictFailed, false},
		{"of the first generation", strings.ReplaceAll(strings.ReplaceAll(doc, "generation: 3", "generation: 1"), "Generation: 3", "Generation: 1"), result.VerdictFailed, false},
		{"stamped with an older generation", strings.ReplaceAll(doc, "    observedGeneration: 3", "    observedGeneration: 2"), result.VerdictInProgress, false},
	}
	for _, tt := range tests {
		g := Evaluate(Ref{Kind: KindKustomization, Namespace: "flux-system", Name: "apps"}, parseObject(t, tt.doc), Revision{}, nil)
		if g.Verdict != tt.verdict || g.MaybeOlderGeneration != tt.older {
			t.Errorf("%s: %s, maybe older %t; want %s, %t", tt.name, g.Verdict, g.MaybeOlderGeneration, tt.verdict, tt.older)
		}
		if tt.older && (g.FailedAt.IsZero() || g.RetryEvery != 2*time.Minute) {
			t.Errorf("%s: failed at %v, retry every %s; want the Ready condition's time, 2m", tt.name, g.FailedAt, g.RetryEvery)
		}
	}
}
