package verify_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// shortGrace is the unschedulable-grace, never-ready-grace or retry-grace of the cases that
// wait for it.
const shortGrace = 3 * time.Second

// failureCase is one failure code produced for real: the real kustomize-controller delivers a
// broken app to one cluster (kwok's failure stages play the kubelet) and the healthy app to
// another, and one run verifies both.
type failureCase struct {
	code result.Code
	app  string // the folder under testdata/apps the broken cluster gets
	// verdict is the broken cluster's verdict; Failed when empty.
	verdict result.Verdict
	// kustomization changes the broken cluster's Kustomization.
	kustomization func(k *testbed.Kustomization)
	// request changes the run's request.
	request func(r *verify.Request)
	// deploy replaces the broken cluster's DeployApp.
	deploy func(ctx context.Context, t *testing.T, c *testbed.Cluster, k testbed.Kustomization, dir string)
	// state is the failing state whose arrival starts the latency clock.
	state stateProbe
	// reason is the broken cluster's reason, when the case checks it.
	reason string
	// message holds what the broken cluster's message must say.
	message []string
	// evidence checks the failing object's evidence, beyond its code; the flux-* codes have
	// none beyond the Flux object's own message.
	evidence func(t *testing.T, f *result.Failure)
}

// TestFailureCodes produces every failure code that can be produced for real on the test bed,
// with the current and the previous minor of kustomize-controller, each in a run of two
// clusters: the broken one must get the code, a useful message and the evidence, the healthy
// one must stay Current. It measures, without asserting it, the time from the failing state
// appearing in the cluster to the cluster's verdict.
func TestFailureCodes(t *testing.T) {
	t.Parallel()
	cases := []failureCase{
		{
			code: result.CodeImagePull, app: "fail-image-pull",
			state:   podState("pod waiting ErrImagePull", waitingWith("ErrImagePull", "ImagePullBackOff")),
			message: []string{"Deployment/", "ghcr.io/example/web:1.0.1-missing", "not found"},
			evidence: func(t *testing.T, f *result.Failure) {
				wantEvent(t, f, "Failed", "Failed to pull image")
				if f.Logs != "" || !strings.Contains(f.LogsError, "cannot read the log") {
					t.Errorf("logs = %q, logsError = %q; want no logs and why", f.Logs, f.LogsError)
				}
			},
		},
		{
			// The kubelet retries: the ConfigMap may be created later (issue 19). The failure
			// waits for the retry grace period, then says how long it lasted.
			code: result.CodeConfig, app: "fail-config",
			request: func(r *verify.Request) { r.Classify.RetryGrace = shortGrace },
			state:   gracedPodState("pod waiting CreateContainerConfigError", createdWaiting("CreateContainerConfigError")),
			reason:  "CreateContainerConfigError",
			message: []string{`container "web"`, "still failing after ", `configmap "missing" not found`},
			evidence: func(t *testing.T, f *result.Failure) {
				wantEvent(t, f, "Failed", `configmap "missing" not found`)
			},
		},
		{
			code: result.CodeCrashLoop, app: "fail-crash-loop",
			state:   podState("pod restartCount at the threshold", crashedTimes(classify.DefaultCrashRestarts, "Error")),
			message: []string{`container "web"`, "exit code 1"},
			evidence: func(t *testing.T, f *result.Failure) {
				wantRestarts(t, f, classify.DefaultCrashRestarts)
				wantLogs(t, f, testbed.FailCrashLoop)
				wantEvent(t, f, "BackOff", "Back-off restarting failed container web")
			},
		},
		{
			code: result.CodeOOM, app: "fail-oom",
			state:   podState("pod restartCount at the threshold", crashedTimes(classify.DefaultCrashRestarts, "OOMKilled")),
			message: []string{"OOMKilled", "memory limit 256Mi"},
			evidence: func(t *testing.T, f *result.Failure) {
				wantRestarts(t, f, classify.DefaultCrashRestarts)
				wantLogs(t, f, testbed.FailOOM)
				wantEvent(t, f, "BackOff", "Back-off restarting failed container web")
			},
		},
		{
			code: result.CodeUnschedulable, app: "fail-unschedulable",
			request: func(r *verify.Request) { r.Classify.UnschedulableGrace = shortGrace },
			state:   gracedPodState("pod Unschedulable", unschedulableSince),
			message: []string{"Insufficient cpu"},
			evidence: func(t *testing.T, f *result.Failure) {
				wantEvent(t, f, "FailedScheduling", "Insufficient cpu")
			},
		},
		{
			code: result.CodeQuota, app: "fail-quota",
			deploy: func(ctx context.Context, t *testing.T, c *testbed.Cluster, k testbed.Kustomization, dir string) {
				createQuota(ctx, t, c, k.TargetNamespace, "100m")
				deployApp(ctx, t, c, k, dir)
			},
			request: func(r *verify.Request) { r.Classify.RetryGrace = shortGrace },
			state:   gracedReplicaFailure(),
			message: []string{"still refused after ", "exceeded quota", "requests.cpu=500m"},
			evidence: func(t *testing.T, f *result.Failure) {
				wantEvent(t, f, "FailedCreate", "exceeded quota")
			},
		},
		{
			// A registry that times out may answer again: the failure waits for the grace
			// period, then names the network error.
			code: result.CodeImagePull, app: "fail-image-pull-timeout",
			request: func(r *verify.Request) { r.Classify.RetryGrace = shortGrace },
			state:   gracedPodState("pod waiting ErrImagePull (i/o timeout)", pullTimeoutSince),
			message: []string{"still failing to pull after ", "i/o timeout"},
			evidence: func(t *testing.T, f *result.Failure) {
				wantEvent(t, f, "Failed", "i/o timeout")
			},
		},
		{
			// Pod Security admission, built into kube-apiserver, refuses the pods of a
			// namespace that enforces the restricted profile.
			code: result.CodeAdmissionDenied, app: "web",
			deploy: func(ctx context.Context, t *testing.T, c *testbed.Cluster, k testbed.Kustomization, dir string) {
				enforcePodSecurity(ctx, t, c, k.TargetNamespace, "restricted")
				deployApp(ctx, t, c, k, dir)
			},
			state:   objectState("ReplicaSet ReplicaFailure", replicaSetsGVR, replicaFailure),
			reason:  "FailedCreate",
			message: []string{"violates PodSecurity", "restricted"},
			evidence: func(t *testing.T, f *result.Failure) {
				wantEvent(t, f, "FailedCreate", "violates PodSecurity")
			},
		},
		{
			// The pods run, never ready: by default never-ready waits for the Deployment's own
			// progress deadline (3s here) and a margin, so the controller's verdict speaks.
			code: result.CodeNotProgressing, app: "fail-not-progressing",
			state:   objectState("Deployment ProgressDeadlineExceeded", deploymentsGVR, deadlineExceeded),
			reason:  "ProgressDeadlineExceeded",
			message: []string{"Deployment/", "timed out progressing"},
		},
		{
			code: result.CodeJobFailed, app: "fail-job",
			state:   podState("pod phase Failed", podFailed),
			message: []string{"Job/", "backoff limit"},
			evidence: func(t *testing.T, f *result.Failure) {
				if f.Reason != "BackoffLimitExceeded" {
					t.Errorf("reason = %q, want BackoffLimitExceeded", f.Reason)
				}
				wantLogs(t, f, testbed.FailJob)
			},
		},
		{
			code: result.CodeNeverReady, app: "fail-never-ready",
			request: func(r *verify.Request) { r.Classify.NeverReadyGrace = shortGrace },
			state:   gracedPodState("pod running, not ready", runningUnreadySince),
			message: []string{"not ready for 3s", "readiness probe failing"},
			evidence: func(t *testing.T, f *result.Failure) {
				wantEvent(t, f, "Unhealthy", "Readiness probe failed")
				wantLogs(t, f, testbed.FailNeverReady)
			},
		},
		{
			code: result.CodeFluxBuildFailed, app: "fail-build",
			state:   kustomizationState("Ready=False BuildFailed", readyFalse("BuildFailed")),
			message: []string{"kustomize build failed", "service.yaml"},
		},
		{
			// A 404 leaves status.lastAttemptedRevision unset (kustomize-controller sets it once
			// it has the files), so only a run that accepts any revision can call it a failure of
			// this revision; with a revision it stays pending until the timeout. kustomize-controller
			// retries a download (source-controller may serve the artifact again): the failure
			// waits out the retry grace.
			code: result.CodeFluxArtifactFailed, app: "web",
			request: func(r *verify.Request) { r.Revision, r.Classify.RetryGrace = flux.Revision{}, shortGrace },
			deploy:  deployBrokenArtifact,
			state:   kustomizationState("Ready=False ArtifactFailed", readyFalse("ArtifactFailed")),
			message: []string{"still failing after ", "kustomize-controller's retries", "artifact not found"},
		},
		{
			// kustomize-controller stalls on a configuration it can never reconcile, such as
			// a health check expression that does not compile.
			code: result.CodeFluxStalled, app: "web",
			kustomization: func(k *testbed.Kustomization) {
				k.HealthCheckExprs = []map[string]any{{"apiVersion": "apps/v1", "kind": "Deployment", "current": "status.readyReplicas ==== ("}}
			},
			state:   kustomizationState("Ready=False InvalidCELExpression", readyFalse("InvalidCELExpression")),
			reason:  "InvalidCELExpression",
			message: []string{"Kustomization/", "terminal"},
		},
		{
			// kustomize-controller waits at least 30s for pods that are merely not ready, but
			// stops at its next poll (every 5s) once kstatus calls an object Failed: here the
			// Deployment's progress deadline (3s) runs out. It checks them again at
			// spec.retryInterval (10s): without the workloads the run waits for that retry, and
			// fails once it fails again.
			code: result.CodeFluxHealthCheckFailed, app: "fail-not-progressing",
			kustomization: func(k *testbed.Kustomization) { k.Wait, k.Timeout, k.RetryInterval = true, "30s", "10s" },
			request:       func(r *verify.Request) { r.Workloads = false },
			state:         kustomizationState("Ready=False HealthCheckFailed", readyFalse("HealthCheckFailed")),
			message:       []string{"health check failed", "Deployment/"},
		},
		{
			// The dependency does not exist (yet): Flux waits for it, and so does the run.
			code: result.CodeFluxDependencyNotReady, app: "web", verdict: result.VerdictTimeout,
			kustomization: func(k *testbed.Kustomization) { k.DependsOn = []string{k.Name + "-dep"} },
			request:       func(r *verify.Request) { r.Timeout = 15 * time.Second },
			state:         kustomizationState("Ready=False DependencyNotReady", readyFalse("DependencyNotReady")),
			message:       []string{"timed out after 15s", "waiting for dependency flux-system/", "-dep"},
		},
		{
			// The dependency never becomes ready: its revision does not build. The run says so
			// at once (issue 18), not at its timeout.
			code: result.CodeFluxDependencyFailed, app: "web",
			kustomization: func(k *testbed.Kustomization) { k.DependsOn = []string{k.Name + "-dep"} },
			deploy: func(ctx context.Context, t *testing.T, c *testbed.Cluster, k testbed.Kustomization, dir string) {
				dep := testbed.Kustomization{Name: k.DependsOn[0], TargetNamespace: k.TargetNamespace}
				deployApp(ctx, t, c, dep, appDir(t, "fail-build"))
				deployApp(ctx, t, c, k, dir)
			},
			state:   kustomizationState("Ready=False DependencyNotReady", readyFalse("DependencyNotReady")),
			reason:  "BuildFailed",
			message: []string{"-dep (dependsOn), which failed", "kustomize build failed"},
		},
		{
			code: result.CodeFluxSuspended, app: "web", verdict: result.VerdictSuspended,
			kustomization: func(k *testbed.Kustomization) { k.Suspend = true },
			state:         kustomizationState("spec.suspend true", suspended),
			message:       []string{"suspended", "flux resume kustomization"},
		},
	}
	onControllerMatrix(t, "kustomize-controller", func(t *testing.T, b *testbed.Bed) {
		for i, tc := range cases {
			t.Run(string(tc.code)+"/"+tc.app, func(t *testing.T) {
				t.Parallel()
				// Alternate the clusters so the runs spread over the bed.
				broken, healthy := b.Clusters[i%len(b.Clusters)], b.Clusters[(i+1)%len(b.Clusters)]
				runFailureCase(t, b, tc, broken, healthy)
			})
		}
	})
}

// runFailureCase starts a run over the two clusters, then deploys the healthy app to one and the
// broken one to the other, checks the verdicts and the evidence, and logs the latency.
func runFailureCase(t *testing.T, b *testbed.Bed, tc failureCase, broken, healthy *testbed.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := b.Namespace(t)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	bk := k
	if tc.kustomization != nil {
		tc.kustomization(&bk)
	}
	cleanUpFlux(t, broken, append([]string{ns}, bk.DependsOn...)...)
	cleanUpFlux(t, healthy, ns)
	appeared := watchState(ctx, t, broken, ns, tc.state)

	var mu sync.Mutex
	var verdictAt time.Time
	req := verify.Request{
		Targets:   targetsOf(broken, healthy),
		Resources: []flux.Ref{ks(ns)},
		Revision:  mustRevision(t, commitA),
		Timeout:   90 * time.Second,
		Workloads: true,
		Progress: func(p verify.Progress) {
			if p.Final && p.Cluster == broken.Name {
				mu.Lock()
				verdictAt = time.Now()
				mu.Unlock()
			}
		},
	}
	if tc.request != nil {
		tc.request(&req)
	}

	// The run starts before the apps exist, so it watches the failing state arrive.
	done := make(chan result.Run, 1)
	start := time.Now()
	go func() { done <- verify.Run(ctx, req) }()
	deployApp(ctx, t, healthy, k, appDir(t, "web"))
	if tc.deploy != nil {
		tc.deploy(ctx, t, broken, bk, appDir(t, tc.app))
	} else {
		deployApp(ctx, t, broken, bk, appDir(t, tc.app))
	}
	run := <-done

	want := map[string]result.Verdict{broken.Name: orVerdict(tc.verdict, result.VerdictFailed), healthy.Name: result.VerdictCurrent}
	if diff := cmp.Diff(want, verdicts(run)); diff != "" {
		t.Fatalf("verdicts (-want +got):\n%s\nresults: %+v", diff, run.Results)
	}
	got := byName(t, run, broken.Name)
	if got.Code != tc.code {
		t.Errorf("broken cluster code = %q (%s), want %q", got.Code, got.Message, tc.code)
	}
	if tc.reason != "" && got.Reason != tc.reason {
		t.Errorf("broken cluster reason = %q, want %q", got.Reason, tc.reason)
	}
	for _, s := range tc.message {
		if !strings.Contains(got.Message, s) {
			t.Errorf("broken cluster message = %q, want it to hold %q", got.Message, s)
		}
	}
	t.Logf("%s: %s (%s) after %s: %s", broken.Name, got.Verdict, got.Code, time.Duration(got.DurationMs)*time.Millisecond, got.Message)
	if fo := got.Flux[0]; strings.HasPrefix(string(tc.code), "flux-") && fo.Code != tc.code {
		t.Errorf("Flux object %s code = %q, want %q", fo.ID, fo.Code, tc.code)
	}
	checkMoments(t, got)
	checkMoments(t, byName(t, run, healthy.Name))
	if strings.HasPrefix(string(tc.code), "flux-") && got.Flux[0].SinceMs == nil {
		t.Errorf("Flux object %s: no moment it failed (sinceMs)", got.Flux[0].ID)
	}
	if !strings.HasPrefix(string(tc.code), "flux-") {
		for _, o := range got.Objects {
			if o.Failure != nil && o.Failure.Code == tc.code && o.SinceMs == nil {
				t.Errorf("object %s: no moment it failed (sinceMs)", o.ID)
			}
		}
		f := failureOf(t, got, tc.code)
		if tc.evidence != nil {
			tc.evidence(t, f)
		}
		t.Logf("evidence: %s", evidenceSummary(f))
	}

	mu.Lock()
	verdict := verdictAt
	mu.Unlock()
	// The test's own watch may hear of the state a little after the engine's did.
	from, ok := appeared.wait(ctx, 5*time.Second)
	switch {
	case verdict.IsZero():
		t.Errorf("no final progress for cluster %s", broken.Name)
	case tc.verdict == result.VerdictTimeout:
		// The verdict is due when the timeout passes, not when the state appears.
		t.Logf("latency code=%s timeout->verdict=%dms (state seen %dms after the start, timeout %s)",
			tc.code, verdict.Sub(start.Add(req.Timeout)).Milliseconds(), from.Sub(start).Milliseconds(), req.Timeout)
	case !ok:
		t.Errorf("the failing state (%s) was never seen on %s; result: %+v", tc.state.what, broken.Name, got)
	default:
		t.Logf("latency code=%s state->verdict=%dms (%s)", tc.code, verdict.Sub(from).Milliseconds(), tc.state.what)
	}
}

func orVerdict(v, def result.Verdict) result.Verdict {
	if v == "" {
		return def
	}
	return v
}

func deployApp(ctx context.Context, t *testing.T, c *testbed.Cluster, k testbed.Kustomization, dir string) {
	t.Helper()
	deployAppAt(ctx, t, c, k, dir, commitA)
}

func deployAppAt(ctx context.Context, t *testing.T, c *testbed.Cluster, k testbed.Kustomization, dir, commit string) {
	t.Helper()
	if _, err := c.DeployApp(ctx, k, dir, commit); err != nil {
		t.Fatal(err)
	}
}

// deployBrokenArtifact publishes the app, then points the GitRepository's artifact at a URL
// that answers 404 (as after a source-controller restart that lost its storage), then applies
// the Kustomization.
func deployBrokenArtifact(ctx context.Context, t *testing.T, c *testbed.Cluster, k testbed.Kustomization, dir string) {
	t.Helper()
	art, err := c.PublishGit(ctx, "flux-system", k.Name, dir, commitA)
	if err != nil {
		t.Fatal(err)
	}
	repos := c.Dynamic.Resource(testbed.GitRepositoryGVR).Namespace("flux-system")
	repo, err := repos.Get(ctx, k.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(repo.Object, art.URL+".gone", "status", "artifact", "url"); err != nil {
		t.Fatal(err)
	}
	if _, err := repos.UpdateStatus(ctx, repo, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyObject(ctx, "flux-system", k.Manifest()); err != nil {
		t.Fatal(err)
	}
}

// createQuota gives the namespace a ResourceQuota on requests.cpu and waits until the quota
// controller has computed its usage, as it would have long before a deployment.
// enforcePodSecurity makes the namespace enforce a Pod Security Standard profile.
func enforcePodSecurity(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, profile string) {
	t.Helper()
	patch := []byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"` + profile + `"}}}`)
	if _, err := c.Kube.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// pullTimeoutSince dates a pod whose image pull keeps timing out as the classifier does: from
// the pod's creation.
func pullTimeoutSince(p *corev1.Pod) (time.Time, bool) {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason == "ErrImagePull" && strings.HasSuffix(w.Message, "i/o timeout") {
			return p.CreationTimestamp.Time, true
		}
	}
	return time.Time{}, false
}

func createQuota(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, cpu string) {
	t.Helper()
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "compute", Namespace: ns},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse(cpu)}},
	}
	if _, err := c.Kube.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		q, err := c.Kube.CoreV1().ResourceQuotas(ns).Get(ctx, "compute", metav1.GetOptions{})
		return err == nil && len(q.Status.Hard) > 0, nil
	})
	if err != nil {
		t.Fatalf("quota of %s in %s never computed: %v", ns, c.Name, err)
	}
}

// cleanUpFlux deletes the test's Kustomizations and GitRepositories when it ends, so the
// shared bed's controllers stop retrying the broken ones.
func cleanUpFlux(t *testing.T, c *testbed.Cluster, names ...string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, name := range names {
			_ = c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system").Delete(ctx, name, metav1.DeleteOptions{})
			_ = c.Dynamic.Resource(testbed.GitRepositoryGVR).Namespace("flux-system").Delete(ctx, name, metav1.DeleteOptions{})
		}
	})
}

// failureOf returns the failure with the code among the cluster's objects.
// checkMoments: the timeline's moments of a cluster lie within its run, and every object
// reported has the moment it reached its status.
func checkMoments(t *testing.T, c result.Cluster) {
	t.Helper()
	within := func(what string, ms *int64) {
		if ms != nil && (*ms < 0 || *ms > c.DurationMs) {
			t.Errorf("cluster %s: %s at %dms, outside its %dms", c.Name, what, *ms, c.DurationMs)
		}
	}
	within("appliedMs", c.AppliedMs)
	for _, f := range c.Flux {
		within(f.ID+" sinceMs", f.SinceMs)
	}
	for _, o := range c.Objects {
		if o.SinceMs == nil {
			t.Errorf("cluster %s: object %s (%s) has no sinceMs", c.Name, o.ID, o.Status)
		}
		within(o.ID+" sinceMs", o.SinceMs)
	}
}

func failureOf(t *testing.T, c result.Cluster, code result.Code) *result.Failure {
	t.Helper()
	for _, o := range c.Objects {
		if o.Failure != nil && o.Failure.Code == code {
			return o.Failure
		}
	}
	t.Fatalf("no object of cluster %s has a %s failure: %+v", c.Name, code, c.Objects)
	return nil
}

func wantEvent(t *testing.T, f *result.Failure, reason, message string) {
	t.Helper()
	for _, ev := range f.Events {
		if ev.Reason == reason && strings.Contains(ev.Message, message) {
			return
		}
	}
	t.Errorf("events = %+v, want a %s event saying %q", f.Events, reason, message)
}

func wantRestarts(t *testing.T, f *result.Failure, atLeast int32) {
	t.Helper()
	if f.RestartCount < atLeast {
		t.Errorf("restartCount = %d, want at least %d", f.RestartCount, atLeast)
	}
}

// wantLogs checks the evidence holds the log lines kwok serves for the failure mode.
func wantLogs(t *testing.T, f *result.Failure, mode testbed.FailureMode) {
	t.Helper()
	for _, line := range testbed.FailureLog(mode) {
		if line != "" && !strings.Contains(f.Logs, line) {
			t.Errorf("logs = %q (logsError %q), want them to hold %q", f.Logs, f.LogsError, line)
			return
		}
	}
}

func evidenceSummary(f *result.Failure) string {
	var b strings.Builder
	b.WriteString("reason=" + f.Reason + " pod=" + f.Pod + " container=" + f.Container)
	for _, ev := range f.Events {
		b.WriteString(" event=" + ev.Reason + ":" + strings.SplitN(ev.Message, "\n", 2)[0])
	}
	logs := strings.Split(f.Logs, "\n")
	b.WriteString(" logs=" + strings.Join(logs[max(0, len(logs)-1):], ""))
	if f.LogsError != "" {
		b.WriteString(" logsError=" + f.LogsError)
	}
	return b.String()
}
