package verify_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// The flows users meet every week: a fix pushed over a broken rollout, a revision
// that arrives after the step started, an object the new revision removes, a chart Flux
// refuses, least-privilege credentials. Each logs the time to its verdict.

const commitC = "c3d4e5f60718293a4b5c6d7e8f9012345678a1b2"

// commitD is a fourth commit.
const commitD = "d4e5f60718293a4b5c6d7e8f9012345678a1b2c3"

// progressLog records a run's progress lines, to check that no failure was ever announced.
type progressLog struct {
	mu    sync.Mutex
	lines []verify.Progress
}

func (l *progressLog) record(p verify.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, p)
}

func (l *progressLog) messages() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.lines {
		out = append(out, string(p.Verdict)+": "+p.Message)
	}
	return out
}

// startRun starts verify.Run and returns a channel that gets its result.
func startRun(ctx context.Context, req verify.Request) <-chan result.Run {
	done := make(chan result.Run, 1)
	go func() { done <- verify.Run(ctx, req) }()
	return done
}

// waitPods waits until a pod of the namespace matching the selector satisfies ok.
func waitPods(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, selector, what string, ok func(p *corev1.Pod) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, nil
		}
		return slices.ContainsFunc(pods.Items, func(p corev1.Pod) bool { return ok(&p) }), nil
	})
	if err != nil {
		t.Fatalf("cluster %s: no pod %s in %s: %v", c.Name, what, ns, err)
	}
}

// TestFixOverBrokenDeployment: revision A's Deployment cannot pull its image; the fix B is
// pushed after the step started. The broken pods of A must never fail the run: it is Current
// once Flux applied B.
func TestFixOverBrokenDeployment(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	cleanUpFlux(t, c, ns)
	deployAppAt(ctx, t, c, k, appDir(t, "web-broken"), commitA)
	waitPods(ctx, t, c, ns, "app.kubernetes.io/name=web", "in ImagePullBackOff", waitingWith("ImagePullBackOff"))

	var progress progressLog
	done := startRun(ctx, verify.Request{
		Targets: targetsOf(c), Resources: []flux.Ref{ks(ns)}, Revision: mustRevision(t, commitB),
		Timeout: 90 * time.Second, Workloads: true, Progress: progress.record,
	})
	pushed := time.Now()
	deployAppAt(ctx, t, c, k, appDir(t, "web"), commitB)
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitB); err != nil {
		t.Fatal(err)
	}
	applied := time.Now()
	got := (<-done).Results[0]
	took := time.Now()
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict %s (%s): %s; want Current once Flux applied the fix\nprogress: %q", got.Verdict, got.Code, got.Message, progress.messages())
	}
	for _, m := range progress.messages() {
		if strings.HasPrefix(m, "Failed") {
			t.Errorf("progress announced a failure before the fix was applied: %q", m)
		}
	}
	t.Logf("flow fix-over-broken-deployment: Current %dms after the fix was pushed, %dms after Flux applied it (timeout 90s)",
		took.Sub(pushed).Milliseconds(), took.Sub(applied).Milliseconds())
}

// TestRevisionPublishedAfterStart: the step starts on the old revision; the expected one is
// published seconds later. The run waits, says what it waits for, and is Current once it is
// applied.
func TestRevisionPublishedAfterStart(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[1]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	cleanUpFlux(t, c, ns)
	deployAppAt(ctx, t, c, k, appDir(t, "web"), commitA)
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}
	var progress progressLog
	start := time.Now()
	done := startRun(ctx, verify.Request{
		Targets: targetsOf(c), Resources: []flux.Ref{ks(ns)}, Revision: mustRevision(t, commitB[:7]),
		Timeout: 90 * time.Second, Workloads: true, Progress: progress.record,
	})
	const delay = 4 * time.Second
	publish := time.NewTimer(delay)
	select {
	case <-publish.C:
	case run := <-done:
		t.Fatalf("the run ended before the revision was published: %+v", run.Results)
	}
	pushed := time.Now()
	deployAppAt(ctx, t, c, k, appDir(t, "web-v2"), commitB)
	got := (<-done).Results[0]
	took := time.Now()
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict %s: %s; want Current", got.Verdict, got.Message)
	}
	if !slices.ContainsFunc(progress.messages(), func(m string) bool { return strings.Contains(m, "waiting for b2c3d4e") }) {
		t.Errorf("progress never said it waits for b2c3d4e: %q", progress.messages())
	}
	t.Logf("flow revision-after-start: Current %dms after the revision was published %s after the start (%s in all, timeout 90s)",
		took.Sub(pushed).Milliseconds(), delay, took.Sub(start).Round(time.Millisecond))
}

// TestRemovedWhileBroken: revision A has a DaemonSet that cannot pull its image; revision B
// removes it. Verifying B is Current: the DaemonSet is in A's inventory, never in B's.
func TestRemovedWhileBroken(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[2]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	cleanUpFlux(t, c, ns)
	deployAppAt(ctx, t, c, k, appDir(t, "web-agent-broken"), commitA)
	waitPods(ctx, t, c, ns, "app.kubernetes.io/name=agent", "in ImagePullBackOff", waitingWith("ImagePullBackOff"))

	var progress progressLog
	done := startRun(ctx, verify.Request{
		Targets: targetsOf(c), Resources: []flux.Ref{ks(ns)}, Revision: mustRevision(t, commitB),
		Timeout: 90 * time.Second, Workloads: true, Progress: progress.record,
	})
	pushed := time.Now()
	deployAppAt(ctx, t, c, k, appDir(t, "web"), commitB)
	got := (<-done).Results[0]
	took := time.Since(pushed)
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict %s (%s): %s; want Current\nprogress: %q", got.Verdict, got.Code, got.Message, progress.messages())
	}
	for _, o := range got.Objects {
		if o.Kind == "DaemonSet" {
			t.Errorf("the removed DaemonSet is still judged: %+v", o)
		}
	}
	t.Logf("flow removed-while-broken: Current %dms after the revision removing the broken DaemonSet was pushed (timeout 90s)", took.Milliseconds())
}

// TestFixOverBrokenStatefulSet: revision A crash-loops, so the rolling update stops at db-1;
// the fix B cannot roll out while db-1 is not Ready (OrderedReady), a Kubernetes limitation.
// Verifying B fails at once with statefulset-blocked naming the pod to delete; once it is
// deleted, B rolls out and verifying it again is Current.
func TestFixOverBrokenStatefulSet(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	cleanUpFlux(t, c, ns)
	deployAppAt(ctx, t, c, k, appDir(t, "db"), commitA)
	req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(ns)}, Revision: mustRevision(t, commitA), Timeout: 90 * time.Second, Workloads: true}
	if got := verify.Run(ctx, req).Results[0]; got.Verdict != result.VerdictCurrent {
		t.Fatalf("revision A: verdict %s: %s; want Current", got.Verdict, got.Message)
	}
	deployAppAt(ctx, t, c, k, appDir(t, "db-broken"), commitB)
	waitPods(ctx, t, c, ns, "app.kubernetes.io/name=db", "crash-looping", crashedTimes(3, "Error"))

	pushed := time.Now()
	deployAppAt(ctx, t, c, k, appDir(t, "db-fixed"), commitC)
	req.Revision = mustRevision(t, commitC)
	got := verify.Run(ctx, req).Results[0]
	took := time.Since(pushed)
	if got.Verdict != result.VerdictFailed || got.Code != result.CodeStatefulSetBlocked {
		t.Fatalf("fix C: verdict %s (%s): %s; want Failed (statefulset-blocked)", got.Verdict, got.Code, got.Message)
	}
	f := failureOf(t, got, result.CodeStatefulSetBlocked)
	if f.Pod == "" || !strings.Contains(got.Message, "kubectl delete pod "+f.Pod+" -n "+ns) {
		t.Errorf("message %q, want it to say how to delete the blocking pod %q", got.Message, f.Pod)
	}
	t.Logf("flow fix-over-broken-statefulset: Failed (statefulset-blocked) %dms after the fix was pushed (timeout 90s): %s", took.Milliseconds(), got.Message)

	// Do what the message says.
	if err := c.Kube.CoreV1().Pods(ns).Delete(ctx, f.Pod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	got = verify.Run(ctx, req).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("after deleting %s: verdict %s (%s): %s; want Current", f.Pod, got.Verdict, got.Code, got.Message)
	}
	t.Logf("flow fix-over-broken-statefulset: Current %dms after the blocking pod was deleted", time.Since(deleted).Milliseconds())
}

// TestHelmFixOverFailedUpgrade: chart 1.1.0 cannot pull its image and its upgrade failed; the
// fix 1.2.0 is published after the step started. The 1.1.0 pods never fail the run: it is
// Current once helm-controller released 1.2.0.
func TestHelmFixOverFailedUpgrade(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[1]
	helmLogOnFailure(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	// Helm gives up on a release whose workloads are not ready after 15s, with no remediation.
	release := testbed.HelmRelease{Name: "web", Namespace: ns, Timeout: "15s"}
	if _, err := c.DeployChart(ctx, release, chartDir(t, "web"), "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHelmReleased(ctx, ns, "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	// The broken chart and its fix are new versions in the chart repository, as users publish
	// them: the HelmRelease's spec does not change.
	if _, err := c.PublishChartVersion(ctx, ns, "web", brokenChart(t, "image-pull"), "1.1.0"); err != nil {
		t.Fatal(err)
	}
	waitHelmFailed(ctx, t, c, ns, "web", "1.1.0")

	var progress progressLog
	done := startRun(ctx, verify.Request{
		Targets: targetsOf(c), Resources: []flux.Ref{hr(ns, "web")}, Revision: mustRevision(t, "1.2.0"),
		Timeout: 2 * time.Minute, Workloads: true, Progress: progress.record,
	})
	pushed := time.Now()
	if _, err := c.PublishChartVersion(ctx, ns, "web", chartDir(t, "web"), "1.2.0"); err != nil {
		t.Fatal(err)
	}
	got := (<-done).Results[0]
	took := time.Since(pushed)
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict %s (%s): %s; want Current once 1.2.0 is released\nprogress: %q", got.Verdict, got.Code, got.Message, progress.messages())
	}
	for _, m := range progress.messages() {
		if strings.HasPrefix(m, "Failed") {
			t.Errorf("progress announced a failure before the fix was released: %q", m)
		}
	}
	t.Logf("flow fix-over-failed-helm-upgrade: Current %dms after 1.2.0 was published (timeout 2m)", took.Milliseconds())
}

// brokenChart is a copy of the web chart whose pods get the test bed's failure mode by default.
func brokenChart(t *testing.T, mode testbed.FailureMode) string {
	t.Helper()
	src := chartDir(t, "web")
	dst := filepath.Join(t.TempDir(), "web")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	values := filepath.Join(dst, "values.yaml")
	data, err := os.ReadFile(values)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), `failureMode: ""`, `failureMode: "`+string(mode)+`"`, 1))
	if err := os.WriteFile(values, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// waitHelmFailed waits until the HelmRelease's newest release is the chart version, failed.
func waitHelmFailed(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, name, version string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		obj, err := c.Dynamic.Resource(testbed.HelmReleaseGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		history, _, _ := unstructured.NestedSlice(obj.Object, "status", "history")
		if len(history) == 0 {
			return false, nil
		}
		latest, _ := history[0].(map[string]any)
		chartVersion, _ := latest["chartVersion"].(string)
		return latest["status"] == "failed" && strings.HasPrefix(chartVersion, version), nil
	})
	if err != nil {
		t.Fatalf("HelmRelease %s/%s: release %s never failed: %v", ns, name, version, err)
	}
}

// TestHelmChartRefused: the source's artifact is chart revision 1.3.0 but its Chart.yaml says
// 1.0.0, which helm-controller refuses (ChartMutateError) before attempting anything. Verifying
// 1.3.0 fails within seconds with Flux's own message, not at the timeout with a stale one.
func TestHelmChartRefused(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[2]
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
	const timeout = 90 * time.Second
	done := startRun(ctx, verify.Request{
		Targets: targetsOf(c), Resources: []flux.Ref{hr(ns, "web")}, Revision: mustRevision(t, "1.3.0"),
		Timeout: timeout, Workloads: true,
	})
	pushed := time.Now()
	// The chart folder as it is (version 1.0.0), published as revision 1.3.0.
	if _, err := c.PublishChart(ctx, ns, "web", chartDir(t, "web"), "1.3.0"); err != nil {
		t.Fatal(err)
	}
	got := (<-done).Results[0]
	took := time.Since(pushed)
	if got.Verdict != result.VerdictFailed || got.Code != result.CodeFluxChartFailed {
		t.Fatalf("verdict %s (%s): %s; want Failed (flux-chart-failed)", got.Verdict, got.Code, got.Message)
	}
	if !strings.Contains(got.Message, "1.3.0") || !strings.Contains(got.Message, "1.0.0") {
		t.Errorf("message %q, want Flux's words naming 1.3.0 and 1.0.0", got.Message)
	}
	if took > timeout/2 {
		t.Errorf("the refusal took %s to be reported, with a %s timeout", took, timeout)
	}
	t.Logf("flow chart-refused: Failed (flux-chart-failed) %dms after the chart was published (timeout %s): %s", took.Milliseconds(), timeout, got.Message)
}

// leastPrivilegeRole reads the ClusterRole of deploy/rbac/base/app-status.yaml.
// markReady writes the status a Flux source's controller would: Ready at its generation.
func markReady(ctx context.Context, t *testing.T, c *testbed.Cluster, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	client := c.Dynamic.Resource(gvr).Namespace(ns)
	obj, err := client.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// As source-controller leaves it: Ready on an artifact it serves (a listed source is judged
	// by what it serves, as Flux does).
	obj.Object["status"] = map[string]any{
		"observedGeneration": obj.GetGeneration(),
		"artifact":           map[string]any{"revision": "sha256:" + strings.Repeat("a", 64), "digest": "sha256:" + strings.Repeat("a", 64), "path": "a.tar.gz", "url": "http://127.0.0.1/a.tar.gz", "lastUpdateTime": time.Now().UTC().Format(time.RFC3339)},
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "stored artifact",
			"observedGeneration": obj.GetGeneration(), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}},
	}
	if _, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func leastPrivilegeRole(t *testing.T) ([]byte, rbacv1.ClusterRole) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(testbed.Testdata(t)), "deploy", "rbac", "base", "app-status.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testbed.DecodeManifests(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" {
			var role rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
				t.Fatal(err)
			}
			for _, r := range role.Rules {
				for _, v := range r.Verbs {
					if v != "get" && v != "list" && v != "watch" {
						t.Fatalf("deploy/rbac/base/app-status.yaml grants %q on %v: the role must be read-only", v, r.Resources)
					}
				}
				if slices.Contains(r.Resources, "secrets") || slices.Contains(r.Resources, "*") {
					t.Fatalf("deploy/rbac/base/app-status.yaml grants %v: it must not read Secrets", r.Resources)
				}
			}
			return data, role
		}
	}
	t.Fatal("deploy/rbac/base/app-status.yaml has no ClusterRole")
	return nil, rbacv1.ClusterRole{}
}

// TestLeastPrivilege: deploy/rbac/base/app-status.yaml, applied as docs/credentials.md says, is all the
// action needs: with a token of its ServiceAccount, a healthy app (with a Secret it may not
// read) is Current, and a broken one fails with its precise code and its evidence.
func TestLeastPrivilege(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[1]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	manifests, _ := leastPrivilegeRole(t)
	if err := c.Apply(ctx, "", manifests); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := c.ServiceAccountKubeconfig(ctx, "flux-system", "app-status")
	if err != nil {
		t.Fatal(err)
	}
	target := []verify.Target{{Name: c.Name, Config: restConfig(t, kubeconfig)}}

	healthy, broken, sources := c.Namespace(t), c.Namespace(t), c.Namespace(t)
	cleanUpFlux(t, c, healthy, broken, sources)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: healthy, TargetNamespace: healthy}, appDir(t, "web-secret"), commitA)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: broken, TargetNamespace: broken}, appDir(t, "fail-image-pull"), commitA)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: sources, TargetNamespace: sources}, appDir(t, "web-sources"), commitA)
	// The test bed has no source-controller: it plays one for the app's own sources, once
	// Flux has applied them.
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", sources, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}
	markReady(ctx, t, c, testbed.GitRepositoryGVR, sources, "config")
	markReady(ctx, t, c, testbed.GitRepositoryGVR.GroupVersion().WithResource("helmrepositories"), sources, "charts")

	// An app holding its own HelmRepository, GitRepository and Role (issue 19): the shipped
	// role reads them all, so every object is verified and the app is Current.
	got := verify.Run(ctx, verify.Request{Targets: target, Resources: []flux.Ref{ks(sources)}, Revision: mustRevision(t, commitA), Timeout: 90 * time.Second, Workloads: true}).Results[0]
	if got.Verdict != result.VerdictCurrent || strings.Contains(got.Message, "not verified") {
		t.Fatalf("app with its own sources and RBAC under the least-privilege role: verdict %s (%s): %s; want Current, everything verified", got.Verdict, got.Code, got.Message)
	}
	kinds := map[string]bool{}
	for _, o := range got.Objects {
		kinds[o.Kind] = true
	}
	for _, k := range []string{"HelmRepository", "GitRepository", "Role", "Deployment"} {
		if !kinds[k] {
			t.Errorf("objects %v: want a %s among them", got.Objects, k)
		}
	}

	start := time.Now()
	got = verify.Run(ctx, verify.Request{Targets: target, Resources: []flux.Ref{ks(healthy)}, Revision: mustRevision(t, commitA), Timeout: 90 * time.Second, Workloads: true}).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("healthy app with the least-privilege role: verdict %s (%s): %s; want Current", got.Verdict, got.Code, got.Message)
	}
	if !strings.Contains(got.Message, "1 not verified") {
		t.Errorf("message %q, want it to say the Secret was not verified", got.Message)
	}
	t.Logf("flow least-privilege healthy: Current in %s: %s", time.Since(start).Round(time.Millisecond), got.Message)

	start = time.Now()
	got = verify.Run(ctx, verify.Request{Targets: target, Resources: []flux.Ref{ks(broken)}, Revision: mustRevision(t, commitA), Timeout: 90 * time.Second, Workloads: true}).Results[0]
	if got.Verdict != result.VerdictFailed || got.Code != result.CodeImagePull {
		t.Fatalf("broken app with the least-privilege role: verdict %s (%s): %s; want Failed (image-pull)", got.Verdict, got.Code, got.Message)
	}
	f := failureOf(t, got, result.CodeImagePull)
	wantEvent(t, f, "Failed", "Failed to pull image")
	if f.EventsError != "" || strings.Contains(f.LogsError, "forbidden") {
		t.Errorf("evidence errors %q / %q: the role grants events and pods/log", f.EventsError, f.LogsError)
	}
	t.Logf("flow least-privilege broken: Failed (image-pull) in %s", time.Since(start).Round(time.Millisecond))
}

// TestEvidenceForbidden: credentials of the least-privilege role without events and pods/log
// still give the same verdict; the evidence says what it could not read.
// With the current and the previous minor of kustomize-controller.
func TestEvidenceForbidden(t *testing.T) {
	t.Parallel()
	onControllerMatrix(t, "kustomize-controller", testEvidenceForbidden)
}

func testEvidenceForbidden(t *testing.T, b *testbed.Bed) {
	c := b.Clusters[len(b.Clusters)-1]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, role := leastPrivilegeRole(t)
	var rules []rbacv1.PolicyRule
	for _, r := range role.Rules {
		r.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(res string) bool { return res == "events" || res == "pods/log" })
		if len(r.Resources) > 0 {
			rules = append(rules, r)
		}
	}
	ns := c.Namespace(t)
	kubeconfig, err := c.TokenKubeconfig(ctx, ns, "no-evidence", rules)
	if err != nil {
		t.Fatal(err)
	}
	cleanUpFlux(t, c, ns)
	deployAppAt(ctx, t, c, testbed.Kustomization{Name: ns, TargetNamespace: ns}, appDir(t, "fail-crash-loop"), commitA)
	start := time.Now()
	got := verify.Run(ctx, verify.Request{
		Targets: []verify.Target{{Name: c.Name, Config: restConfig(t, kubeconfig)}}, Resources: []flux.Ref{ks(ns)},
		Revision: mustRevision(t, commitA), Timeout: 90 * time.Second, Workloads: true,
	}).Results[0]
	if got.Verdict != result.VerdictFailed || got.Code != result.CodeCrashLoop {
		t.Fatalf("verdict %s (%s): %s; want Failed (crash-loop) without events and logs", got.Verdict, got.Code, got.Message)
	}
	f := failureOf(t, got, result.CodeCrashLoop)
	if len(f.Events) != 0 || !strings.Contains(f.EventsError, "forbidden") {
		t.Errorf("events %+v, eventsError %q; want none and a forbidden error", f.Events, f.EventsError)
	}
	if f.Logs != "" || !strings.Contains(f.LogsError, "forbidden") {
		t.Errorf("logs %q, logsError %q; want none and a forbidden error", f.Logs, f.LogsError)
	}
	t.Logf("flow evidence-forbidden: Failed (crash-loop) in %s; eventsError %q; logsError %q", time.Since(start).Round(time.Millisecond), f.EventsError, f.LogsError)
}
