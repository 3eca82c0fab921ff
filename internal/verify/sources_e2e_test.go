package verify_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// The layouts of issue 18 where a nested object, a dependency or an artifact's origin decides
// the verdict, with the real kustomize-controller and helm-controller; the test bed plays
// source-controller (GitRepository, OCIRepository and HelmChart artifacts).

// TestNestedGitChartLagsItsRoot: a root Kustomization applies a HelmRelease whose chart a
// HelmChart builds from the root's own Git repository (VERSION+<sha12>). When the root is
// Ready on commit B and the chart is still the one built from A, the run waits (before, the
// nested HelmRelease passed "Ready at whatever it last applied"); once the chart is built
// from B and Helm upgraded, the run is Current within seconds.
func TestNestedGitChartLagsItsRoot(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[1]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	root, chart := ns+"-root", ns+"-chart"
	cleanUpFlux(t, c, root)
	t.Cleanup(func() {
		_ = c.Dynamic.Resource(testbed.HelmChartGVR).Namespace("flux-system").Delete(context.Background(), chart, metav1.DeleteOptions{})
	})
	if _, err := c.PublishHelmChart(ctx, "flux-system", chart, chartDir(t, "web"), "1.0.0", root, commitA); err != nil {
		t.Fatal(err)
	}
	dir := manifestDir(t, testbed.HelmRelease{Name: "web", ChartKind: "HelmChart", Chart: chart, ChartNamespace: "flux-system"}.Manifest())
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: root, TargetNamespace: ns}, dir, commitA); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHelmReleased(ctx, ns, "web", "1.0.0+"+commitA[:12]); err != nil {
		t.Fatal(err)
	}
	// Commit B reaches the root; the chart is not rebuilt yet.
	if _, err := c.PublishGit(ctx, "flux-system", root, dir, commitB); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", root, "main@sha1:"+commitB); err != nil {
		t.Fatal(err)
	}
	req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(root)}, Revision: mustRevision(t, commitB), Workloads: true}
	req.Timeout = 5 * time.Second
	lagging := verify.Run(ctx, req).Results[0]
	if lagging.Verdict != result.VerdictTimeout || !strings.Contains(lagging.Message, "HelmChart/flux-system/"+chart) {
		t.Fatalf("root on B, chart built from A: verdict %s (%s), want Timeout waiting for the HelmChart", lagging.Verdict, lagging.Message)
	}
	t.Logf("chart built from A under a root on B: %s: %s", lagging.Verdict, lagging.Message)
	published := time.Now()
	if _, err := c.PublishHelmChart(ctx, "flux-system", chart, chartDir(t, "web"), "1.0.0", root, commitB); err != nil {
		t.Fatal(err)
	}
	req.Timeout = 2 * time.Minute
	got := verify.Run(ctx, req).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("chart built from B: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	for _, f := range got.Flux {
		if f.Kind == "HelmRelease" && f.ChartVersion != "1.0.0+"+commitB[:12] {
			t.Errorf("HelmRelease chartVersion %q, want 1.0.0+%s", f.ChartVersion, commitB[:12])
		}
	}
	t.Logf("Current %s after the chart built from B was published (Helm's upgrade and wait included)", time.Since(published).Round(time.Millisecond))
}

// TestOCIArtifactOriginRevision: the gitless flow. Manifests pushed as an OCI artifact with
// their commit (`flux push artifact --revision main@sha1:SHA`) are applied as
// latest@sha256:<digest>; the run verifies them with the commit SHA, and a new push with the
// next commit within seconds.
func TestOCIArtifactOriginRevision(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	name := ns + "-oci"
	k := testbed.Kustomization{Name: name, TargetNamespace: ns, SourceKind: "OCIRepository"}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system").Delete(ctx, name, metav1.DeleteOptions{})
		_ = c.Dynamic.Resource(testbed.OCIRepositoryGVR).Namespace("flux-system").Delete(ctx, name, metav1.DeleteOptions{})
	})
	if _, err := c.PublishOCI(ctx, "flux-system", name, appDir(t, "web"), "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyObject(ctx, "flux-system", k.Manifest()); err != nil {
		t.Fatal(err)
	}
	req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, commitA), Timeout: 2 * time.Minute, Workloads: true}
	got := verify.Run(ctx, req).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("OCI artifact of commit A, verified with its SHA: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	if applied := got.Flux[0].LastAppliedRevision; !strings.HasPrefix(applied, "latest@sha256:") {
		t.Errorf("lastAppliedRevision %q, want latest@sha256:<digest> (the commit only in the origin revision)", applied)
	}
	// The next push: commit B, verified with its SHA while Flux applies it.
	published := time.Now()
	if _, err := c.PublishOCI(ctx, "flux-system", name, appDir(t, "web-v2"), "main@sha1:"+commitB); err != nil {
		t.Fatal(err)
	}
	req.Revision = mustRevision(t, commitB[:7])
	got = verify.Run(ctx, req).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("OCI artifact of commit B: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	t.Logf("Current %s after the artifact of commit B was pushed", time.Since(published).Round(time.Millisecond))
}

// TestSupersededRevision: the run waits for commit B; the source moves from A to C instead
// (another merge landed first). Flux will never apply B: the run says so within seconds, with
// flux-revision-superseded naming both, instead of waiting out its timeout.
// With the current and the previous minor of kustomize-controller.
func TestSupersededRevision(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "kustomize-controller", testSupersededRevision)
}

func testSupersededRevision(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[len(b.Clusters)-1]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	cleanUpFlux(t, c, ns)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: ns, TargetNamespace: ns}, appDir(t, "web"), commitA)
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}
	var progress progressLog
	run := startRun(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(ns)}, Revision: mustRevision(t, commitB),
		Timeout: 2 * time.Minute, Workloads: true, Progress: progress.record})
	// Let the run see the source on A before it moves: only a move it sees tells that B
	// was passed over. (While the run lists the GitRepositories, that is what it reports
	// waiting for; then the Kustomization's own wait.)
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		for _, m := range progress.messages() {
			if strings.Contains(m, "waiting for "+commitB[:7]) {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("the run did not report waiting for B: %v", progress.messages())
	}
	published := time.Now()
	if _, err := c.PublishGit(ctx, "flux-system", ns, appDir(t, "web"), commitC); err != nil {
		t.Fatal(err)
	}
	got := (<-run).Results[0]
	took := time.Since(published)
	if got.Verdict != result.VerdictFailed || got.Code != result.CodeFluxRevisionSuperseded ||
		!strings.Contains(got.Message, commitB[:7]) || !strings.Contains(got.Message, commitC[:7]) {
		t.Fatalf("source moved from A to C while waiting for B: verdict %s, code %s (%s), want Failed flux-revision-superseded naming B and C", got.Verdict, got.Code, got.Message)
	}
	if took > 30*time.Second {
		t.Errorf("superseded after %s, want within seconds of the move", took)
	}
	t.Logf("flux-revision-superseded %s after the source moved to C: %s", took.Round(time.Millisecond), got.Message)
}

// TestSupersededAfterApply: the run waits for commit B, which kustomize-controller applied
// and health-checked (lastAppliedRevision B); before the run looks, the source moved on to C,
// whose Deployment never gets ready, and the Kustomization health-checks C. Flux's answer for
// B was its Ready on B: the run is Current at once, saying C replaces it (it waited to its
// timeout: no move of the source was seen, so it could not tell B from a revision to come).
// With the current and the previous minor of kustomize-controller.
func TestSupersededAfterApply(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "kustomize-controller", testSupersededAfterApply)
}

func testSupersededAfterApply(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	cleanUpFlux(t, c, ns)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: ns, TargetNamespace: ns, Wait: true, Timeout: "2m"}, appDir(t, "web"), commitB)
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitB); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PublishGit(ctx, "flux-system", ns, appDir(t, "fail-never-ready"), commitC); err != nil {
		t.Fatal(err)
	}
	// kustomize-controller works on C: it applied it and runs its health checks.
	kustomizations := c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system")
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := kustomizations.Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		applied, _, _ := unstructured.NestedString(u.Object, "status", "lastAppliedRevision")
		attempted, _, _ := unstructured.NestedString(u.Object, "status", "lastAttemptedRevision")
		return applied == "main@sha1:"+commitB && attempted == "main@sha1:"+commitC && reconcilingReason(u) != "", nil
	}); err != nil {
		t.Fatalf("kustomize-controller never worked on C with B applied: %v", err)
	}
	start := time.Now()
	got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(ns)}, Revision: mustRevision(t, commitB),
		Timeout: 30 * time.Second, Workloads: true}).Results[0]
	took := time.Since(start)
	if got.Verdict != result.VerdictCurrent || len(got.Flux) != 1 ||
		!strings.Contains(got.Flux[0].Message, "applied "+commitB[:7]) || !strings.Contains(got.Flux[0].Message, commitC[:7]) {
		t.Fatalf("B applied, the source moved on to C before the run looked: verdict %s, code %s (%s), Flux objects %+v; want Current, the Kustomization saying C replaces B",
			got.Verdict, got.Code, got.Message, got.Flux)
	}
	if u, err := kustomizations.Get(ctx, ns, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if applied, _, _ := unstructured.NestedString(u.Object, "status", "lastAppliedRevision"); applied != "main@sha1:"+commitB {
		t.Fatalf("lastAppliedRevision %s when the run answered, want B still: the test proves less than it says", applied)
	}
	if took > verdictWithin {
		t.Errorf("Current %s after the start, with B applied before it, want within %s", took, verdictWithin)
	}
	t.Logf("Current %s after the start: %s", took.Round(time.Millisecond), got.Flux[0].Message)
}

// TestFailedDependency: the app waits (dependsOn) for an infra Kustomization outside the
// verified tree whose build fails. Flux would say DependencyNotReady until the run's timeout;
// the run fails at once with flux-dependency-failed naming the dependency and its failure.
func TestFailedDependency(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	infra, app := ns+"-infra", ns+"-app"
	cleanUpFlux(t, c, infra, app)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: infra, TargetNamespace: ns}, appDir(t, "fail-build"), commitA)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: app, TargetNamespace: ns, DependsOn: []string{infra}}, appDir(t, "web"), commitB)
	start := time.Now()
	got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(app)}, Revision: mustRevision(t, commitB),
		Timeout: 2 * time.Minute, Workloads: true}).Results[0]
	took := time.Since(start)
	if got.Verdict != result.VerdictFailed || got.Code != result.CodeFluxDependencyFailed || !strings.Contains(got.Message, infra) {
		t.Fatalf("dependency with a failed build: verdict %s, code %s (%s), want Failed flux-dependency-failed naming %s", got.Verdict, got.Code, got.Message, infra)
	}
	if took > 30*time.Second {
		t.Errorf("flux-dependency-failed after %s, want within seconds", took)
	}
	t.Logf("flux-dependency-failed %s after the start: %s", took.Round(time.Millisecond), got.Message)
}

// TestTTLJobGone: a Job the TTL controller deleted after it completed is still in the
// Kustomization's inventory. With spec.wait, kustomize-controller counted it finished (a Job
// with a TTL that is gone is, to fluxcd/pkg/ssa); the run, started after it is gone, is
// Current at once rather than waiting for it as "not found".
func TestTTLJobGone(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[1]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	deployTTLJobGone(ctx, t, c, ns, true)
	start := time.Now()
	got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(ns)}, Revision: mustRevision(t, commitA),
		Timeout: 30 * time.Second, Workloads: true}).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("Job gone after it completed: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	found := false
	for _, o := range got.Objects {
		if o.Kind == "Job" {
			found = true
			if o.Status != result.ObjectCurrent || !strings.Contains(o.Message, "ttlSecondsAfterFinished") {
				t.Errorf("Job %s: %s (%s), want Current, saying it was deleted after it finished", o.ID, o.Status, o.Message)
			}
		}
	}
	if !found {
		t.Error("the Job of the inventory is not in the result")
	}
	t.Logf("Current in %s with the Job gone", time.Since(start).Round(time.Millisecond))
}

// TestTTLJobGoneUnwaited: the same Job, deleted by the TTL controller before the run started,
// under a Kustomization without spec.wait: Flux never judged it, and neither can the run. The
// run says Unverified (job-gone-unverified) at once, not a wait for it until the timeout.
func TestTTLJobGoneUnwaited(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[1]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	deployTTLJobGone(ctx, t, c, ns, false)
	const timeout = time.Minute
	start := time.Now()
	got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(ns)}, Revision: mustRevision(t, commitA),
		Timeout: timeout, Workloads: true}).Results[0]
	took := time.Since(start)
	if got.Verdict != result.VerdictUnverified || got.Code != result.CodeJobGoneUnverified || !strings.Contains(got.Message, "Job/"+ns+"/migrate") {
		t.Fatalf("Job gone, unwaited: verdict %s, code %s (%s), want Unverified job-gone-unverified naming the Job", got.Verdict, got.Code, got.Message)
	}
	if took > timeout/2 {
		t.Errorf("Unverified after %s, want it long before the timeout (%s)", took, timeout)
	}
	t.Logf("Unverified in %s: %s", took.Round(time.Millisecond), got.Message)
}

// deployTTLJobGone applies the app with a TTL Job (migrate) as Kustomization ns, with
// spec.wait when wait, and returns once the Kustomization applied it and the TTL controller
// deleted the completed Job.
func deployTTLJobGone(ctx context.Context, t *testing.T, c *testbed.Cluster, ns string, wait bool) {
	t.Helper()
	cleanUpFlux(t, c, ns)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: ns, TargetNamespace: ns, Wait: wait}, appDir(t, "web-ttl-job"), commitA)
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}
	if err := pollJobGone(ctx, c, ns); err != nil {
		t.Fatalf("the TTL controller did not delete the completed Job: %v", err)
	}
}

// pollJobGone waits until Job ns/migrate is gone.
func pollJobGone(ctx context.Context, c *testbed.Cluster, ns string) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.Kube.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// TestSuspendedNestedKustomization (issue 19): a root applies a nested Kustomization that a
// team suspended on purpose. The run is Current, naming it as suspended and not verified;
// with FailOnSuspended the cluster fails on it.
func TestSuspendedNestedKustomization(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[2]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	root, nested := ns+"-root", ns+"-paused"
	cleanUpFlux(t, c, root, nested)
	if _, err := c.PublishGit(ctx, "flux-system", nested, appDir(t, "web"), commitA); err != nil {
		t.Fatal(err)
	}
	dir := manifestDir(t, testbed.Kustomization{Name: nested, TargetNamespace: ns, Suspend: true}.Manifest())
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: root, TargetNamespace: "flux-system"}, dir, commitB)
	req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(root)}, Revision: mustRevision(t, commitB), Timeout: time.Minute, Workloads: true}
	got := verify.Run(ctx, req).Results[0]
	if got.Verdict != result.VerdictCurrent || !strings.Contains(got.Message, "suspended, not verified: Kustomization/flux-system/"+nested) {
		t.Fatalf("suspended nested Kustomization: verdict %s (%s), want Current naming it suspended", got.Verdict, got.Message)
	}
	req.FailOnSuspended = true
	if got := verify.Run(ctx, req).Results[0]; got.Verdict != result.VerdictSuspended {
		t.Fatalf("with FailOnSuspended: verdict %s (%s), want Suspended", got.Verdict, got.Message)
	}
}

// TestWithoutWorkloadsNestedFailure (issue 18): with workloads off, a root without spec.wait
// (Ready right after it applied) whose nested Kustomization cannot build is not Current: the
// nested Flux objects are still walked and judged, as flux tree walks them.
func TestWithoutWorkloadsNestedFailure(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	root, nested := ns+"-root", ns+"-inner"
	cleanUpFlux(t, c, root, nested)
	if _, err := c.PublishGit(ctx, "flux-system", nested, appDir(t, "fail-build"), commitA); err != nil {
		t.Fatal(err)
	}
	dir := manifestDir(t, testbed.Kustomization{Name: nested, TargetNamespace: ns}.Manifest())
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: root, TargetNamespace: "flux-system"}, dir, commitB)
	start := time.Now()
	got := verify.Run(ctx, verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(root)}, Revision: mustRevision(t, commitB),
		Timeout: time.Minute, Workloads: false}).Results[0]
	if got.Verdict != result.VerdictFailed || got.Code != result.CodeFluxBuildFailed || !strings.Contains(got.Message, nested) {
		t.Fatalf("workloads off, nested build failing: verdict %s, code %s (%s), want Failed flux-build-failed naming %s", got.Verdict, got.Code, got.Message, nested)
	}
	t.Logf("flux-build-failed %s after the start, workloads off", time.Since(start).Round(time.Millisecond))
}

// commitE is a fifth commit.
const commitE = "e5f60718293a4b5c6d7e8f9012345678a1b2c3d4"

// TestNestedHelmReleaseValuesFromLag: a root Kustomization applies a ConfigMap and a
// HelmRelease that takes its values from it (valuesFrom, no watch label, a 1h interval). On
// commit B the root changes the ConfigMap and is Ready, but helm-controller has not composed
// the new values: the release still runs the old ones, and the run waits, naming the
// ConfigMap (before, it was Current). Once helm-controller reconciles (a request, as
// flux reconcile makes), the run is Current on the release with the new values. A commit
// that only labels the ConfigMap changes no value: Current at once.
func TestNestedHelmReleaseValuesFromLag(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[1]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	root := ns + "-root"
	cleanUpFlux(t, c, root)
	if err := c.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PublishChartVersion(ctx, ns, "web", chartDir(t, "web"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	// values writes the root's manifests: the ConfigMap (with labels: watched by
	// helm-controller or not; with a key the values do not read) and the HelmRelease.
	values := func(replicas int, labels map[string]any, unread string) string {
		md := map[string]any{"name": "web-values"}
		if labels != nil {
			md["labels"] = labels
		}
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": md,
			"data": map[string]any{"values.yaml": fmt.Sprintf("replicas: %d\n", replicas), "unread": unread},
		}}
		return manifestDir(t, cm, testbed.HelmRelease{Name: "web", Interval: "1h", ValuesFrom: []string{"web-values"}}.Manifest())
	}
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: root, TargetNamespace: ns}, values(1, nil, "a"), commitA); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHelmReleased(ctx, ns, "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	// Commit B changes the values; the root applies it, helm-controller is not told.
	if _, err := c.PublishGit(ctx, "flux-system", root, values(3, nil, "a"), commitB); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", root, "main@sha1:"+commitB); err != nil {
		t.Fatal(err)
	}
	req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(root)}, Revision: mustRevision(t, commitB), Workloads: true, Timeout: 6 * time.Second}
	lagging := verify.Run(ctx, req).Results[0]
	if lagging.Verdict != result.VerdictTimeout || !strings.Contains(lagging.Message, "values from ConfigMap/web-values changed at") {
		t.Fatalf("root on B, release on the values of A: verdict %s (%s), want Timeout naming ConfigMap/web-values", lagging.Verdict, lagging.Message)
	}
	t.Logf("release on the old values under a root on B: %s: %s", lagging.Verdict, lagging.Message)

	requested := time.Now()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":%q}}}`, requested.Format(time.RFC3339Nano))
	if _, err := c.Dynamic.Resource(testbed.HelmReleaseGVR).Namespace(ns).Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	req.Timeout = 2 * time.Minute
	got := verify.Run(ctx, req).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("after helm-controller reconciled: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	dep, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if replicasOf(dep) != 3 {
		t.Errorf("Current, but the Deployment runs %d replicas, want the 3 of commit B's values", replicasOf(dep))
	}
	t.Logf("Current %s after the reconcile request (Helm's upgrade and wait included)", time.Since(requested).Round(time.Millisecond))

	// Commit E only labels the ConfigMap (not for helm-controller to watch): the root's apply
	// moves the time of its managedFields entry, but the values composed from it are those
	// helm-controller composed last (its status.lastAttemptedConfigDigest), so the run is
	// Current at once, not after the 1h interval.
	req.Revision = mustRevision(t, commitE)
	published := time.Now()
	if _, err := c.PublishGit(ctx, "flux-system", root, values(3, map[string]any{"app.example.com/team": "web"}, "a"), commitE); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", root, "main@sha1:"+commitE); err != nil {
		t.Fatal(err)
	}
	req.Timeout = time.Minute
	if got := verify.Run(ctx, req).Results[0]; got.Verdict != result.VerdictCurrent {
		t.Fatalf("values relabelled only: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	t.Logf("values relabelled only: Current %s after commit E was published", time.Since(published).Round(time.Millisecond))
	req.Timeout = 2 * time.Minute

	// Commit C labels the ConfigMap for helm-controller to watch and changes the values:
	// Current once Helm upgraded, never on the old values.
	watched := map[string]any{flux.WatchLabel: flux.WatchLabelEnabled}
	req.Revision = mustRevision(t, commitC)
	published = time.Now()
	if _, err := c.PublishGit(ctx, "flux-system", root, values(2, watched, "a"), commitC); err != nil {
		t.Fatal(err)
	}
	if got := verify.Run(ctx, req).Results[0]; got.Verdict != result.VerdictCurrent {
		t.Fatalf("watched values changed: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	if dep, err = c.Kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if replicasOf(dep) != 2 {
		t.Errorf("Current, but the Deployment runs %d replicas, want the 2 of commit C's values", replicasOf(dep))
	}
	t.Logf("watched values: Current %s after commit C was published", time.Since(published).Round(time.Millisecond))

	// Commit D changes a key the values do not read: helm-controller reconciles and finds
	// nothing to upgrade, which leaves no trace. The wait is bounded, not a false red.
	req.Revision = mustRevision(t, commitD)
	published = time.Now()
	if _, err := c.PublishGit(ctx, "flux-system", root, values(2, watched, "d"), commitD); err != nil {
		t.Fatal(err)
	}
	if got := verify.Run(ctx, req).Results[0]; got.Verdict != result.VerdictCurrent {
		t.Fatalf("a key the values do not read changed: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	if took := time.Since(published); took > time.Minute {
		t.Errorf("a change the release does not read held the run %s, want within helm-controller's reconcile and the 30s margin", took)
	} else {
		t.Logf("unread key changed: Current %s after commit D was published", took.Round(time.Millisecond))
	}
}

// replicasOf is a Deployment's spec.replicas, -1 when unset.
func replicasOf(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return -1
	}
	return *d.Spec.Replicas
}
