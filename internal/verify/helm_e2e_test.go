package verify_test

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

func chartDir(t *testing.T, name string) string { return testbed.Testdata(t, "charts", name) }

func hr(ns, name string) flux.Ref {
	return flux.Ref{Kind: flux.KindHelmRelease, Namespace: ns, Name: name}
}

// helmLogOnFailure prints the end of helm-controller's log when the test fails.
func helmLogOnFailure(t *testing.T, c *testbed.Cluster) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			log := c.ControllerLog("helm-controller")
			lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
			if len(lines) > 40 {
				lines = lines[len(lines)-40:]
			}
			t.Logf("helm-controller log of %s (last lines):\n%s", c.Name, strings.Join(lines, "\n"))
		}
	})
}

// TestHelmInstall: the real helm-controller installs the chart on three clusters; verify with
// the plain chart version says Current for all three, with the chart version helm-controller
// recorded and the Deployment and Service from the HelmRelease's inventory.
func TestHelmInstall(t *testing.T) {
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := b.Namespace(t)
	for _, c := range b.Clusters {
		helmLogOnFailure(t, c)
		if _, err := c.DeployChart(ctx, testbed.HelmRelease{Name: "web", Namespace: ns}, chartDir(t, "web"), "1.0.0"); err != nil {
			t.Fatal(err)
		}
	}
	run := verify.Run(ctx, verify.Request{
		Targets:   targetsOf(b.Clusters...),
		Resources: []flux.Ref{hr(ns, "web")},
		Revision:  mustRevision(t, "1.0.0"),
		Timeout:   2 * time.Minute,
		Workloads: true,
	})
	if run.Status != result.RunSuccess {
		t.Fatalf("Run() status = %s, want success; condition: %+v", run.Status, run.Condition)
	}
	wantObjects := []string{"Deployment/" + ns + "/web", "Service/" + ns + "/web"}
	for _, c := range run.Results {
		if got := c.Flux[0].ChartVersion; !strings.HasPrefix(got, "1.0.0+") {
			t.Errorf("cluster %s chartVersion = %q, want 1.0.0+<digest prefix>", c.Name, got)
		}
		var got []string
		for _, o := range c.Objects {
			got = append(got, o.ID)
			if o.Status != result.ObjectCurrent || o.Owner != "HelmRelease/"+ns+"/web" {
				t.Errorf("cluster %s object %s: status %s owner %q, want Current owned by the HelmRelease", c.Name, o.ID, o.Status, o.Owner)
			}
		}
		if diff := cmp.Diff(wantObjects, got); diff != "" {
			t.Errorf("cluster %s objects (-want +got):\n%s", c.Name, diff)
		}
	}
}

// TestHelmUpgradeRevision: with 1.0.0 released, a run that expects 1.1.0 must not pass on
// 1.0.0 (it times out, naming both); once 1.1.0 is published it is Current, whether the
// revision is given as the plain chart version or as the OCI digest.
func TestHelmUpgradeRevision(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	release := testbed.HelmRelease{Name: "web", Namespace: ns}
	if _, err := c.DeployChart(ctx, release, chartDir(t, "web"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHelmReleased(ctx, ns, "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	req := verify.Request{
		Targets:   targetsOf(c),
		Resources: []flux.Ref{hr(ns, "web")},
		Revision:  mustRevision(t, "1.1.0"),
		Timeout:   5 * time.Second,
		Workloads: true,
	}
	stale := verify.Run(ctx, req).Results[0]
	if stale.Verdict != result.VerdictTimeout || !strings.Contains(stale.Message, "1.0.0") || !strings.Contains(stale.Message, "waiting for 1.1.0") {
		t.Fatalf("with only 1.0.0 released: verdict %s, message %q; want Timeout naming 1.0.0 and waiting for 1.1.0", stale.Verdict, stale.Message)
	}

	release.Values = map[string]any{"image": map[string]any{"tag": "1.1.0"}}
	art, err := c.DeployChart(ctx, release, chartDir(t, "web"), "1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	req.Timeout = 2 * time.Minute
	got := verify.Run(ctx, req).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("after the upgrade to 1.1.0: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	fo := got.Flux[0]
	if !strings.HasPrefix(fo.ChartVersion, "1.1.0+") || fo.LastAppliedRevision != fo.ChartVersion || !strings.HasPrefix(fo.LastAttemptedRevision, "1.1.0+") {
		t.Errorf("HelmRelease chartVersion %q lastApplied %q lastAttempted %q, want 1.1.0+<digest prefix> for all", fo.ChartVersion, fo.LastAppliedRevision, fo.LastAttemptedRevision)
	}
	if digest := strings.TrimPrefix(fo.ChartVersion, "1.1.0+"); !strings.HasPrefix(strings.TrimPrefix(art.Digest, "sha256:"), digest) {
		t.Errorf("chartVersion %q does not end with the published digest %s", fo.ChartVersion, art.Digest)
	}

	req.Revision, req.Timeout = mustRevision(t, art.Digest), 10*time.Second
	if got := verify.Run(ctx, req).Results[0]; got.Verdict != result.VerdictCurrent {
		t.Errorf("with the OCI digest %s as revision: verdict %s (%s), want Current", art.Digest, got.Verdict, got.Message)
	}
}

// TestHelmUpgradeCrashLoop: the upgrade to 1.1.0 gives the pods a crash loop. helm-controller
// records the release only once Helm's action returns, but the Deployment Helm updated during
// the upgrade to the expected chart is the new chart's (issue 19): a run that saw it before
// fails with crash-loop while Helm still waits. A run started once Helm had updated it cannot
// tell whose it is, and waits for Helm: after Helm's timeout (10s), helm-controller rolls back
// to 1.0.0, and verify says flux-rolled-back, naming 1.1.0, which is not running. With the
// current and the previous minor of helm-controller.
func TestHelmUpgradeCrashLoop(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "helm-controller", testHelmUpgradeCrashLoop)
}

func testHelmUpgradeCrashLoop(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[1]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	remediateLast := true
	release := testbed.HelmRelease{
		Name: "web", Namespace: ns, Timeout: "10s",
		Upgrade: &testbed.Remediation{Retries: 0, RemediateLastFailure: &remediateLast, Strategy: "rollback"},
	}
	if _, err := c.DeployChart(ctx, release, chartDir(t, "web"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHelmReleased(ctx, ns, "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	req := verify.Request{
		Targets:   targetsOf(c),
		Resources: []flux.Ref{hr(ns, "web")},
		Revision:  mustRevision(t, "1.1.0"),
		Timeout:   time.Minute,
		Workloads: true,
	}
	during := startRun(ctx, req)
	time.Sleep(time.Second) // the run sees the Deployment of 1.0.0
	// The new chart alone (its values crash): publishing it is what starts the upgrade.
	if _, err := c.PublishChartVersion(ctx, ns, "web", chartWithFailure(t, testbed.FailCrashLoop), "1.1.0"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	crashing := (<-during).Results[0]
	took := time.Since(start)
	t.Logf("verdict during Helm's wait after %s: %s %s: %s", took.Round(time.Millisecond), crashing.Verdict, crashing.Code, crashing.Message)
	if crashing.Verdict != result.VerdictFailed || crashing.Code != result.CodeCrashLoop || !strings.Contains(crashing.Message, "during Helm's upgrade") {
		t.Fatalf("during Helm's wait: verdict %s code %q (%s), want Failed crash-loop during Helm's upgrade", crashing.Verdict, crashing.Code, crashing.Message)
	}
	if took >= 10*time.Second {
		t.Errorf("crash-loop after %s, want it before Helm's own timeout (10s)", took)
	}
	start = time.Now()
	rolledBack := verify.Run(ctx, req).Results[0]
	t.Logf("verdict after %s: %s %s: %s", time.Since(start).Round(time.Millisecond), rolledBack.Verdict, rolledBack.Code, rolledBack.Message)
	if rolledBack.Verdict != result.VerdictFailed || rolledBack.Code != result.CodeFluxRolledBack {
		t.Fatalf("after Helm's timeout: verdict %s code %q (%s), want Failed flux-rolled-back", rolledBack.Verdict, rolledBack.Code, rolledBack.Message)
	}
	if !strings.Contains(rolledBack.Message, "1.1.0") {
		t.Errorf("rollback message %q does not name the chart version that is not running (1.1.0)", rolledBack.Message)
	}
	// helm-controller keeps the failed upgrade as history[0] (the chart version) and the
	// release rolled back to as the newest deployed one (what is applied).
	if got := rolledBack.Flux[0].LastAppliedRevision; !strings.HasPrefix(got, "1.0.0+") {
		t.Errorf("applied revision after the rollback = %q, want 1.0.0+<digest prefix>", got)
	}
}

// TestHelmUpgradeImagePullDuringWait (issue 19): an upgrade with Helm's default wait whose
// image cannot be pulled fails with image-pull within seconds, long before the HelmRelease's
// timeout (2m), and names the Helm upgrade in progress; an upgrade that succeeds is never
// failed while Helm waits.
func TestHelmUpgradeImagePullDuringWait(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[2]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	release := testbed.HelmRelease{Name: "web", Namespace: ns, Timeout: "2m"}
	if _, err := c.DeployChart(ctx, release, chartDir(t, "web"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHelmReleased(ctx, ns, "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	// A good upgrade first: Current, never failed while Helm waits.
	good := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{hr(ns, "web")}, Revision: mustRevision(t, "1.1.0"), Timeout: time.Minute, Workloads: true}
	run := startRun(ctx, good)
	time.Sleep(time.Second)
	if _, err := c.PublishChartVersion(ctx, ns, "web", chartDir(t, "web"), "1.1.0"); err != nil {
		t.Fatal(err)
	}
	if got := (<-run).Results[0]; got.Verdict != result.VerdictCurrent {
		t.Fatalf("good upgrade: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	// Then one whose image cannot be pulled.
	bad := good
	bad.Revision = mustRevision(t, "1.2.0")
	run = startRun(ctx, bad)
	time.Sleep(time.Second)
	if _, err := c.PublishChartVersion(ctx, ns, "web", chartWithFailure(t, testbed.FailImagePull), "1.2.0"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := (<-run).Results[0]
	took := time.Since(start)
	t.Logf("image-pull during Helm's wait after %s: %s", took.Round(time.Millisecond), got.Message)
	if got.Verdict != result.VerdictFailed || got.Code != result.CodeImagePull || !strings.Contains(got.Message, "during Helm's upgrade") {
		t.Fatalf("unpullable image: verdict %s code %q (%s), want Failed image-pull during Helm's upgrade", got.Verdict, got.Code, got.Message)
	}
	if took > 30*time.Second {
		t.Errorf("image-pull after %s, want it within seconds (Helm's timeout is 2m)", took)
	}
}

// chartWithFailure is a copy of the web chart whose default values give its pods the test
// bed's failure mode: publishing it upgrades a HelmRelease without a change to its spec.
func chartWithFailure(t *testing.T, mode testbed.FailureMode) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "web")
	src := chartDir(t, "web")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "values.yaml" {
			data = []byte(strings.Replace(string(data), `failureMode: ""`, fmt.Sprintf("failureMode: %q", mode), 1))
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHelmUpgradeCrashLoopNoWait: with disableWait, Helm returns as soon as it applied 1.1.0,
// so the release is recorded at once and verify is the one that waits for the pods: it fails
// with the classifier's crash-loop and the pod's evidence within seconds.
func TestHelmUpgradeCrashLoopNoWait(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	release := testbed.HelmRelease{Name: "web", Namespace: ns, DisableWait: true}
	if _, err := c.DeployChart(ctx, release, chartDir(t, "web"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHelmReleased(ctx, ns, "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	release.Values = map[string]any{"failureMode": string(testbed.FailCrashLoop)}
	if _, err := c.DeployChart(ctx, release, chartDir(t, "web"), "1.1.0"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	crashing := verify.Run(ctx, verify.Request{
		Targets: targetsOf(c), Resources: []flux.Ref{hr(ns, "web")}, Revision: mustRevision(t, "1.1.0"),
		Timeout: time.Minute, Workloads: true,
	}).Results[0]
	t.Logf("crash-loop verdict after %s: %s %s: %s", time.Since(start).Round(time.Millisecond), crashing.Verdict, crashing.Code, crashing.Message)
	if crashing.Verdict != result.VerdictFailed || crashing.Code != result.CodeCrashLoop {
		t.Fatalf("verdict %s code %q (%s), want Failed crash-loop", crashing.Verdict, crashing.Code, crashing.Message)
	}
	var failed *result.Object
	for i, o := range crashing.Objects {
		if o.Failure != nil {
			failed = &crashing.Objects[i]
		}
	}
	if failed == nil || failed.ID != "Deployment/"+ns+"/web" || failed.Owner != "HelmRelease/"+ns+"/web" || failed.Failure.Pod == "" {
		t.Errorf("failing object = %+v, want the Deployment owned by the HelmRelease with its crashing pod", failed)
	}
}

// TestHelmInstallFailed: the API server rejects an object of the chart, so the install fails;
// helm-controller, with no retries, stalls, and verify says flux-install-failed with Helm's
// error. With the current and the previous minor of helm-controller.
func TestHelmInstallFailed(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "helm-controller", testHelmInstallFailed)
}

func testHelmInstallFailed(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[len(b.Clusters)-1]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	if _, err := c.DeployChart(ctx, testbed.HelmRelease{Name: "broken", Namespace: ns, Chart: "web-invalid"}, chartDir(t, "web-invalid"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := verify.Run(ctx, verify.Request{
		Targets:   targetsOf(c),
		Resources: []flux.Ref{hr(ns, "broken")},
		Revision:  mustRevision(t, "1.0.0"),
		Timeout:   time.Minute,
		Workloads: true,
	}).Results[0]
	t.Logf("verdict after %s: %s %s: %s", time.Since(start).Round(time.Millisecond), got.Verdict, got.Code, got.Message)
	if got.Verdict != result.VerdictFailed || got.Code != result.CodeFluxInstallFailed {
		t.Fatalf("verdict %s code %q (%s), want Failed flux-install-failed", got.Verdict, got.Code, got.Message)
	}
	if !strings.Contains(got.Message, "port") {
		t.Errorf("message %q does not carry the API server's error about the port", got.Message)
	}
}

// TestHelmStorageSecret: a HelmRelease whose status has no inventory, as helm-controllers
// older than 1.5 write it, is verified from the Helm storage secret of its latest release.
// Credentials that may not read that secret get Forbidden, saying what to grant.
func TestHelmStorageSecret(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	if _, err := c.DeployChart(ctx, testbed.HelmRelease{Name: "web", Namespace: ns}, chartDir(t, "web"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHelmReleased(ctx, ns, "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	// helm-controller ignores status-only changes, so the inventory stays removed.
	releases := c.Dynamic.Resource(testbed.HelmReleaseGVR).Namespace(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := releases.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		unstructured.RemoveNestedField(obj.Object, "status", "inventory")
		_, err = releases.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	noSecrets, err := c.TokenKubeconfig(ctx, ns, "no-secrets", []rbacv1.PolicyRule{
		{APIGroups: []string{"helm.toolkit.fluxcd.io"}, Resources: []string{"helmreleases"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"services", "pods", "events"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets", "controllerrevisions"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "watch"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Count the reads of Helm storage secrets: one per release version, however many times
	// the cluster is evaluated.
	var secretReads atomic.Int32
	admin := rest.CopyConfig(c.Config)
	admin.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if strings.Contains(req.URL.Path, "/secrets/sh.helm.release.v1.") {
				secretReads.Add(1)
			}
			return rt.RoundTrip(req)
		})
	})
	run := verify.Run(ctx, verify.Request{
		Targets:   []verify.Target{{Name: "admin", Config: admin}, {Name: "no-secrets", Config: restConfig(t, noSecrets)}},
		Resources: []flux.Ref{hr(ns, "web")},
		Revision:  mustRevision(t, "1.0.0"),
		Timeout:   time.Minute,
		Workloads: true,
	})

	current := byName(t, run, "admin")
	if current.Verdict != result.VerdictCurrent {
		t.Fatalf("admin: verdict %s (%s), want Current", current.Verdict, current.Message)
	}
	if n := secretReads.Load(); n != 1 {
		t.Errorf("admin: read Helm storage secrets %d times, want once", n)
	}
	var got []string
	for _, o := range current.Objects {
		got = append(got, o.ID+" owned by "+o.Owner+": "+string(o.Status))
	}
	owner := "HelmRelease/" + ns + "/web"
	want := []string{"Deployment/" + ns + "/web owned by " + owner + ": Current", "Service/" + ns + "/web owned by " + owner + ": Current"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("admin: objects from the storage secret (-want +got):\n%s", diff)
	}
	obj, err := releases.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "inventory"); found {
		t.Fatal("helm-controller restored .status.inventory: the test did not exercise the storage secret")
	}

	denied := byName(t, run, "no-secrets")
	if denied.Verdict != result.VerdictForbidden || !strings.Contains(denied.Message, "grant get on secrets in namespace "+ns) ||
		!strings.Contains(denied.Message, "sh.helm.release.v1.web.v1") || !strings.Contains(denied.Message, "helm-controller to 1.5") {
		t.Errorf("no-secrets: verdict %s (%s), want Forbidden naming the secret, the grant and the upgrade", denied.Verdict, denied.Message)
	}
}

// TestHelmInKustomization: a Kustomization applies a HelmRelease; verifying the Kustomization
// shows the tree: the Kustomization, the HelmRelease its inventory lists, and the objects of
// the HelmRelease's own inventory.
func TestHelmInKustomization(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[2]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	if _, err := c.PublishChartVersion(ctx, ns, "web", chartDir(t, "web"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	dir := manifestDir(t, testbed.HelmRelease{Name: "web"}.Manifest())
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, dir, commitA); err != nil {
		t.Fatal(err)
	}
	got := verify.Run(ctx, verify.Request{
		Targets:   targetsOf(c),
		Resources: []flux.Ref{ks(ns)},
		Revision:  mustRevision(t, commitA[:7]),
		Timeout:   2 * time.Minute,
		Workloads: true,
	}).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	ksID, hrID := "Kustomization/flux-system/"+ns, "HelmRelease/"+ns+"/web"
	type node struct{ ID, Owner, Status string }
	var fluxNodes, objects []node
	for _, f := range got.Flux {
		fluxNodes = append(fluxNodes, node{f.ID, f.Owner, string(f.Verdict)})
	}
	for _, o := range got.Objects {
		objects = append(objects, node{o.ID, o.Owner, string(o.Status)})
	}
	wantFlux := []node{{ksID, "", "Current"}, {hrID, ksID, "Current"}}
	if diff := cmp.Diff(wantFlux, fluxNodes); diff != "" {
		t.Errorf("Flux objects (-want +got):\n%s", diff)
	}
	wantObjects := []node{
		{"Deployment/" + ns + "/web", hrID, "Current"},
		{"Service/" + ns + "/web", hrID, "Current"},
		{hrID, ksID, "Current"},
	}
	if diff := cmp.Diff(wantObjects, objects); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if chart := got.Flux[1].ChartVersion; !strings.HasPrefix(chart, "1.0.0+") {
		t.Errorf("nested HelmRelease chartVersion = %q, want 1.0.0+<digest prefix>", chart)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestHelmInstallImagePullDuringWait (issue 19): a first install with Helm's default wait
// whose image cannot be pulled fails with image-pull within seconds, long before the
// HelmRelease's timeout (2m): helm-controller records nothing until Helm returns, but the
// release's Deployment, found by Helm's annotations, is the new chart's. The failure names the
// install in progress.
func TestHelmInstallImagePullDuringWait(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[2]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	release := testbed.HelmRelease{Name: "web", Namespace: ns, Timeout: "2m"}
	req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{hr(ns, "web")}, Revision: mustRevision(t, "1.0.0"), Timeout: 90 * time.Second, Workloads: true}
	// The run watches from before the install: a workload counts as the install's when it
	// was created after the run first saw the install (one left by an earlier attempt does
	// not).
	during := startRun(ctx, req)
	time.Sleep(time.Second)
	start := time.Now()
	if _, err := c.DeployChart(ctx, release, chartWithFailure(t, testbed.FailImagePull), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	got := (<-during).Results[0]
	took := time.Since(start)
	t.Logf("verdict during Helm's install after %s: %s %s: %s", took.Round(time.Millisecond), got.Verdict, got.Code, got.Message)
	if got.Verdict != result.VerdictFailed || got.Code != result.CodeImagePull || !strings.Contains(got.Message, "during Helm's install") {
		t.Fatalf("during Helm's install: verdict %s code %q (%s), want Failed image-pull during Helm's install", got.Verdict, got.Code, got.Message)
	}
	if took >= time.Minute {
		t.Errorf("image-pull after %s, want it long before Helm's own timeout (2m)", took)
	}
}

// TestHelmChartIndexRefresh: a chart version bumped before the repository's index refresh.
// The HelmRelease's HelmChart of an HTTP HelmRepository (both played by the bed, their status
// as source-controller v1.9.3 writes it) moves to 1.1.0 while the repository's index lists
// 1.0.0 only: source-controller stalls the chart (InvalidChartReference). The run waits,
// naming the repository's next fetch, where it used to fail with flux-chart-failed; when the
// refreshed index lists 1.1.0 and the chart is built, it is Current within seconds of
// helm-controller's upgrade; when the refreshed index still lacks it, it fails with
// flux-chart-failed within seconds of the chart's rebuild. With the current and the previous
// minor of helm-controller.
func TestHelmChartIndexRefresh(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "helm-controller", testHelmChartIndexRefresh)
}

func testHelmChartIndexRefresh(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[len(b.Clusters)-1]
	helmLogOnFailure(t, c)
	for _, refreshedLists := range []bool{true, false} {
		t.Run(fmt.Sprintf("refreshed index lists it %t", refreshedLists), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			ns := c.Namespace(t)
			index, err := c.PublishHelmIndex(ctx, ns, "charts", "1m", "web", "1.0.0")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.PublishRepositoryChart(ctx, ns, "web", "charts", chartDir(t, "web"), "1.0.0", index); err != nil {
				t.Fatal(err)
			}
			if err := c.ApplyObject(ctx, ns, testbed.HelmRelease{Name: "web", Namespace: ns, ChartKind: "HelmChart", Chart: "web"}.Manifest()); err != nil {
				t.Fatal(err)
			}
			if err := c.WaitHelmReleased(ctx, ns, "web", "1.0.0"); err != nil {
				t.Fatal(err)
			}
			// The chart moves to 1.1.0; the repository's index does not list it yet.
			if err := c.StallRepositoryChart(ctx, ns, "web", "charts", "web", "1.1.0", index); err != nil {
				t.Fatal(err)
			}
			req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{hr(ns, "web")}, Revision: mustRevision(t, "1.1.0"), Timeout: 5 * time.Second, Workloads: true}
			stale := verify.Run(ctx, req).Results[0]
			if stale.Verdict != result.VerdictTimeout || !strings.Contains(stale.Message, "builds it again when HelmRepository/"+ns+"/charts's index changes") {
				t.Fatalf("the index not refreshed yet: verdict %s %s (%s), want Timeout waiting for the repository's next fetch", stale.Verdict, stale.Code, stale.Message)
			}
			t.Logf("stalled before the index refresh: %s: %s", stale.Verdict, stale.Message)

			req.Timeout = 2 * time.Minute
			if refreshedLists {
				refreshed, err := c.PublishHelmIndex(ctx, ns, "charts", "1m", "web", "1.0.0", "1.1.0")
				if err != nil {
					t.Fatal(err)
				}
				published := time.Now()
				if _, err := c.PublishRepositoryChart(ctx, ns, "web", "charts", chartDir(t, "web"), "1.1.0", refreshed); err != nil {
					t.Fatal(err)
				}
				got := verify.Run(ctx, req).Results[0]
				took := time.Since(published)
				if got.Verdict != result.VerdictCurrent {
					t.Fatalf("the refreshed index lists 1.1.0: verdict %s %s (%s), want Current", got.Verdict, got.Code, got.Message)
				}
				if v := got.Flux[0].ChartVersion; v != "1.1.0" {
					t.Errorf("HelmRelease chartVersion %q, want 1.1.0 released by helm-controller", v)
				}
				// helm-controller upgrades and waits for the workloads first; the run follows
				// its Ready within seconds.
				if took > 60*time.Second {
					t.Errorf("Current %s after the chart was built from the refreshed index, want within a minute", took)
				}
				t.Logf("Current %s after the chart was built from the refreshed index (Helm's upgrade and wait included)", took.Round(time.Millisecond))
				return
			}
			refreshed, err := c.PublishHelmIndex(ctx, ns, "charts", "1m", "web", "1.0.0", "1.0.1")
			if err != nil {
				t.Fatal(err)
			}
			rebuilt := time.Now()
			if err := c.StallRepositoryChart(ctx, ns, "web", "charts", "web", "1.1.0", refreshed); err != nil {
				t.Fatal(err)
			}
			got := verify.Run(ctx, req).Results[0]
			took := time.Since(rebuilt)
			if got.Verdict != result.VerdictFailed || got.Code != result.CodeFluxChartFailed || !strings.Contains(got.Message, "index changed") {
				t.Fatalf("the refreshed index still lacks 1.1.0: verdict %s %s (%s), want Failed flux-chart-failed", got.Verdict, got.Code, got.Message)
			}
			if took > 15*time.Second {
				t.Errorf("Failed %s after the chart was rebuilt from the refreshed index, want within seconds", took)
			}
			t.Logf("Failed %s after the chart was rebuilt from the refreshed index: %s", took.Round(time.Millisecond), got.Message)
		})
	}
}
