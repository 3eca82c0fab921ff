package assess

import (
	"testing"
	"time"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// TestFailureOutranksWhatCameFirst: of the findings that settle a cluster's verdict, a
// failure is never hidden by one the walk met before it. Two requested Kustomizations: app,
// whose Deployment cannot pull its image (Failed), and far, applied to a remote cluster
// without wait (Unverified). The verdict is the failure whatever the order of the requested
// resources. A failure that still waits for its controller's retry (failed health checks
// within retryInterval) is not made final by the Unverified met before it.
func TestFailureOutranksWhatCameFirst(t *testing.T) {
	t.Parallel()
	app := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	far := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "far"}
	remote := ks("far", "GitRepository", "app", ", kubeConfig: {secretRef: {name: prod}}", revB, "shop_api_apps_Deployment")
	pulling := []string{kustomization(readyOnB), deploymentPulling, service, gitRepo(), remote}
	imagePull := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "ErrImagePull"}}

	failedAt := fixtureNow.Add(-30 * time.Second)
	healthChecking := `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, generation: 2}
spec: {sourceRef: {kind: GitRepository, name: app}, interval: 10m, retryInterval: 1m, wait: true, timeout: 30s}
status:
  observedGeneration: 2
  lastAppliedRevision: "` + revA + `"
  lastAttemptedRevision: "` + revB + `"
  conditions:
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, message: "Running health checks for revision ` + revB + ` with a timeout of 30s", observedGeneration: 2}
  - {type: Ready, status: "False", reason: HealthCheckFailed, observedGeneration: 2, lastTransitionTime: "` + failedAt.Format(time.RFC3339) + `",
     message: "health check failed after 30.004s: timeout waiting for: [Deployment/shop/web status: 'InProgress']"}
  inventory:
    entries: [{id: shop_web_apps_Deployment, v: v1}, {id: shop_web__Service, v: v1}]`
	retrying := []string{healthChecking, gitRepoAt(revB), deployment("Deployment", 3, 3), service, remote}
	unverified := expected{Outcome: outcome{Verdict: result.VerdictUnverified, Code: result.CodeFluxRemoteUnverified, Reason: "RemoteNotVerified"}}
	retry := failedAt.Add(time.Minute + 6*time.Second + 30*time.Second)
	healthFailed := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxHealthCheckFailed, Reason: "HealthCheckFailed"}}
	runFixtureCases(t, []fixtureCase{
		{name: "the failing root first", resources: []flux.Ref{app, far}, looks: []fixtureLook{{docs: pulling, want: imagePull}}},
		{name: "the unverified root first", resources: []flux.Ref{far, app}, looks: []fixtureLook{{docs: pulling, want: imagePull}}},
		{name: "the unverified root first, failed health checks before their retry", resources: []flux.Ref{far, app}, looks: []fixtureLook{
			{docs: retrying, want: unverified},
			{docs: retrying, at: retry.Add(time.Second), want: healthFailed},
		}},
	})
}
