package verify_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// flaggerBed runs a real Flagger v1.36.1 beside the Flux controllers (provider kubernetes:
// blue/green over plain Services, no metrics server), so a Canary goes through Flagger's own
// phases on kwok's simulated pods.
var flaggerBed = testbed.NewShared(testbed.Options{Clusters: 1, Flux: true, Flagger: true, Prefix: "flagger"})

var canaryGVR = schema.GroupVersionResource{Group: "flagger.app", Version: "v1beta1", Resource: "canaries"}

// gate is a Flagger webhook the test serves on 127.0.0.1: it passes (200) or fails (500).
type gate struct {
	srv  *httptest.Server
	fail atomic.Bool
}

func newGate(t *testing.T) *gate {
	t.Helper()
	g := &gate{}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if g.fail.Load() {
			http.Error(w, "the test's gate says no", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// canaryApp is a folder holding the Deployment web running image and a blue/green Canary of
// it whose analysis is one iteration gated by a rollout webhook, and its promotion by a
// confirm-promotion webhook (a manual gate) when promotion is set.
func canaryApp(t *testing.T, image, webhook, promotion string) string {
	t.Helper()
	gates := ""
	if promotion != "" {
		gates = "    - name: approval\n      type: confirm-promotion\n      url: " + promotion + "\n"
	}
	dir := t.TempDir()
	files := map[string]string{
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- deployment.yaml\n- canary.yaml\n",
		"deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: ` + image + `
        ports:
        - containerPort: 8080
`,
		"canary.yaml": `apiVersion: flagger.app/v1beta1
kind: Canary
metadata:
  name: web
spec:
  provider: kubernetes
  targetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  progressDeadlineSeconds: 120
  service:
    port: 80
    targetPort: 8080
  analysis:
    interval: 10s
    threshold: 1
    iterations: 1
    webhooks:
    - name: gate
      type: rollout
      url: ` + webhook + `
` + gates,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// canaryWatch polls the Canary and records when it first reached each phase, logging every
// change of its status.
type canaryWatch struct {
	mu    sync.Mutex
	first map[string]time.Time
	last  string
}

func watchCanary(ctx context.Context, t *testing.T, c *testbed.Cluster, ns string) *canaryWatch {
	t.Helper()
	w := &canaryWatch{first: map[string]time.Time{}}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cd, err := c.Dynamic.Resource(canaryGVR).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
			if err == nil {
				phase, _, _ := unstructured.NestedString(cd.Object, "status", "phase")
				applied, _, _ := unstructured.NestedString(cd.Object, "status", "lastAppliedSpec")
				promoted, _, _ := unstructured.NestedString(cd.Object, "status", "lastPromotedSpec")
				state := fmt.Sprintf("phase=%s lastAppliedSpec=%s lastPromotedSpec=%s", phase, applied, promoted)
				w.mu.Lock()
				if _, seen := w.first[phase]; !seen {
					w.first[phase] = time.Now()
				}
				if state != w.last {
					t.Logf("%s Canary %s", time.Now().Format("15:04:05.000"), state)
					w.last = state
				}
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return w
}

// phaseAt checks that the Canary, read right after a verdict given at done, is in phase, and
// returns when Flagger entered it (its Promoted condition's lastUpdateTime, to the second):
// the verdict must come after it (not before the second it names) and within 10s.
func phaseAt(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, phase string, done time.Time) time.Time {
	t.Helper()
	cd, err := c.Dynamic.Resource(canaryGVR).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedString(cd.Object, "status", "phase")
	if got != phase {
		t.Fatalf("verdict given at %s while the Canary is %s, want %s", done.Format("15:04:05.000"), got, phase)
	}
	conds, _, _ := unstructured.NestedSlice(cd.Object, "status", "conditions")
	for _, raw := range conds {
		cond, _ := raw.(map[string]any)
		if cond["type"] != "Promoted" || cond["reason"] != phase {
			continue
		}
		s, _ := cond["lastUpdateTime"].(string)
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatalf("Promoted condition's lastUpdateTime %q: %v", s, err)
		}
		if lag := done.Sub(at); lag < 0 || lag > 11*time.Second {
			t.Errorf("verdict %s after Flagger's %s (at %s, verdict at %s), want within 10s (to the second)", lag.Round(time.Millisecond), phase, s, done.Format("15:04:05.000"))
		}
		return at
	}
	t.Fatalf("the Canary has no Promoted condition of reason %s: %v", phase, conds)
	return time.Time{}
}

func (w *canaryWatch) seen(phase string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.first[phase]
	return ok
}

// deployCanaryApp deploys the Canary app at commitA and waits until verify says Current on
// it: Flagger has initialized the canary (web-primary runs its image).
func deployCanaryApp(ctx context.Context, t *testing.T, c *testbed.Cluster, k testbed.Kustomization, dir string) {
	t.Helper()
	const commit = commitA
	if _, err := c.DeployApp(ctx, k, dir, commit); err != nil {
		t.Fatal(err)
	}
	run := verify.Run(ctx, verify.Request{
		Targets:   targetsOf(c),
		Resources: []flux.Ref{ks(k.Name)},
		Revision:  mustRevision(t, commit),
		Timeout:   2 * time.Minute,
		Workloads: true,
	})
	if cl := run.Results[0]; cl.Verdict != result.VerdictCurrent {
		t.Fatalf("first install: verdict = %s (%s), want Current\nflagger log:\n%s", cl.Verdict, cl.Message, flaggerLog(c))
	}
}

// flaggerLog is the end of the cluster's Flagger log, for a test's failure.
func flaggerLog(c *testbed.Cluster) string {
	const n = 30
	lines := strings.Split(strings.TrimRight(c.ControllerLog("flagger"), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestCanaryCurrentOnlyAfterPromotion: a new revision of a Deployment that a Canary targets is
// Current only once Flagger has promoted it (the canary's phase Succeeded, web-primary on the
// new template), within seconds of the promotion, never during the analysis while the target's
// own pods are ready.
func TestCanaryCurrentOnlyAfterPromotion(t *testing.T) {
	b := flaggerBed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	g := newGate(t)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	deployCanaryApp(ctx, t, c, k, canaryApp(t, "ghcr.io/example/web:1.0.0", g.srv.URL, ""))

	watch := watchCanary(ctx, t, c, ns)
	if _, err := c.DeployApp(ctx, k, canaryApp(t, "ghcr.io/example/web:1.1.0", g.srv.URL, ""), commitB); err != nil {
		t.Fatal(err)
	}
	run := verify.Run(ctx, verify.Request{
		Targets:   targetsOf(c),
		Resources: []flux.Ref{ks(ns)},
		Revision:  mustRevision(t, commitB),
		Timeout:   3 * time.Minute,
		Workloads: true,
	})
	done := time.Now()
	cl := run.Results[0]
	if cl.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict = %s (%s), want Current\nflagger log:\n%s", cl.Verdict, cl.Message, flaggerLog(c))
	}
	if !watch.seen("Progressing") {
		t.Fatal("Flagger never said Progressing: the canary analysis did not run")
	}
	promotedAt := phaseAt(ctx, t, c, ns, "Succeeded", done)
	t.Logf("Flagger promoted at %s, Current at %s (%s after)", promotedAt.Format("15:04:05"), done.Format("15:04:05.000"), done.Sub(promotedAt).Round(time.Millisecond))
	primary, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, "web-primary", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := primary.Spec.Template.Spec.Containers[0].Image; got != "ghcr.io/example/web:1.1.0" {
		t.Errorf("web-primary runs %s once Current, want the new revision's ghcr.io/example/web:1.1.0", got)
	}
}

// TestCanaryFailedAnalysis: the analysis of a new revision fails through a failing webhook;
// Flagger rolls back (the canary Failed, the target scaled to zero, web-primary left on the
// previous revision) and the run fails with canary-failed and Flagger's events as evidence,
// within seconds of the rollback.
func TestCanaryFailedAnalysis(t *testing.T) {
	b := flaggerBed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	g := newGate(t)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	deployCanaryApp(ctx, t, c, k, canaryApp(t, "ghcr.io/example/web:1.0.0", g.srv.URL, ""))

	watch := watchCanary(ctx, t, c, ns)
	g.fail.Store(true)
	if _, err := c.DeployApp(ctx, k, canaryApp(t, "ghcr.io/example/web:1.1.0", g.srv.URL, ""), commitB); err != nil {
		t.Fatal(err)
	}
	run := verify.Run(ctx, verify.Request{
		Targets:   targetsOf(c),
		Resources: []flux.Ref{ks(ns)},
		Revision:  mustRevision(t, commitB),
		Timeout:   3 * time.Minute,
		Workloads: true,
	})
	done := time.Now()
	cl := run.Results[0]
	if cl.Verdict != result.VerdictFailed || cl.Code != result.CodeCanaryFailed {
		t.Fatalf("verdict = %s (%s): %s, want Failed (canary-failed)\nflagger log:\n%s", cl.Verdict, cl.Code, cl.Message, flaggerLog(c))
	}
	if !watch.seen("Progressing") {
		t.Fatal("Flagger never said Progressing: the canary analysis did not run")
	}
	failedAt := phaseAt(ctx, t, c, ns, "Failed", done)
	t.Logf("Flagger rolled back at %s, verdict at %s (%s after)", failedAt.Format("15:04:05"), done.Format("15:04:05.000"), done.Sub(failedAt).Round(time.Millisecond))
	var found *result.Failure
	for _, o := range cl.Objects {
		if o.Failure != nil && o.Failure.Code == result.CodeCanaryFailed {
			found = o.Failure
			break
		}
	}
	if found == nil {
		t.Fatalf("no object carries the canary-failed failure: %+v", cl.Objects)
	}
	var flaggerSaid bool
	for _, ev := range found.Events {
		if ev.Object == "Canary/"+ns+"/web" && strings.Contains(ev.Message, "Canary failed!") {
			flaggerSaid = true
		}
	}
	if !flaggerSaid {
		t.Errorf("evidence = %+v (events error %q), want Flagger's event Canary failed! on Canary/%s/web", found.Events, found.EventsError, ns)
	}
}

// TestCanaryManualGate: a confirm-promotion webhook (a manual gate) holds the promotion of an
// analysed revision: Flagger says WaitingPromotion, and the run waits, quoting it, until the
// gate opens; then Current within seconds of Flagger's promotion.
func TestCanaryManualGate(t *testing.T) {
	b := flaggerBed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	g, approval := newGate(t), newGate(t)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	deployCanaryApp(ctx, t, c, k, canaryApp(t, "ghcr.io/example/web:1.0.0", g.srv.URL, approval.srv.URL))

	watch := watchCanary(ctx, t, c, ns)
	approval.fail.Store(true)
	if _, err := c.DeployApp(ctx, k, canaryApp(t, "ghcr.io/example/web:1.1.0", g.srv.URL, approval.srv.URL), commitB); err != nil {
		t.Fatal(err)
	}
	for !watch.seen("WaitingPromotion") {
		select {
		case <-ctx.Done():
			t.Fatal("Flagger never said WaitingPromotion")
		case <-time.After(200 * time.Millisecond):
		}
	}
	req := verify.Request{
		Targets:   targetsOf(c),
		Resources: []flux.Ref{ks(ns)},
		Revision:  mustRevision(t, commitB),
		Timeout:   15 * time.Second,
		Workloads: true,
	}
	held := verify.Run(ctx, req).Results[0]
	if held.Verdict != result.VerdictTimeout || !strings.Contains(held.Message, "WaitingPromotion") || !strings.Contains(held.Message, "Waiting for approval.") {
		t.Fatalf("while the gate is closed: verdict = %s (%s), want Timeout quoting WaitingPromotion and Flagger's message", held.Verdict, held.Message)
	}
	approval.fail.Store(false)
	req.Timeout = 2 * time.Minute
	run := verify.Run(ctx, req)
	done := time.Now()
	if cl := run.Results[0]; cl.Verdict != result.VerdictCurrent {
		t.Fatalf("once the gate opened: verdict = %s (%s), want Current\nflagger log:\n%s", cl.Verdict, cl.Message, flaggerLog(c))
	}
	promotedAt := phaseAt(ctx, t, c, ns, "Succeeded", done)
	t.Logf("Flagger promoted at %s, Current at %s (%s after)", promotedAt.Format("15:04:05"), done.Format("15:04:05.000"), done.Sub(promotedAt).Round(time.Millisecond))
}

// TestCanaryFixAfterFailure: a fix pushed over a failed analysis is not failed on the previous
// revision's Failed, which the Canary still says until Flagger picks the new template up: the
// run waits, and is Current once Flagger promoted the fix.
func TestCanaryFixAfterFailure(t *testing.T) {
	b := flaggerBed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	g := newGate(t)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	deployCanaryApp(ctx, t, c, k, canaryApp(t, "ghcr.io/example/web:1.0.0", g.srv.URL, ""))

	watch := watchCanary(ctx, t, c, ns)
	g.fail.Store(true)
	if _, err := c.DeployApp(ctx, k, canaryApp(t, "ghcr.io/example/web:1.1.0", g.srv.URL, ""), commitB); err != nil {
		t.Fatal(err)
	}
	for !watch.seen("Failed") {
		select {
		case <-ctx.Done():
			t.Fatal("Flagger never failed the analysis")
		case <-time.After(200 * time.Millisecond):
		}
	}
	g.fail.Store(false)
	if _, err := c.DeployApp(ctx, k, canaryApp(t, "ghcr.io/example/web:1.2.0", g.srv.URL, ""), commitC); err != nil {
		t.Fatal(err)
	}
	run := verify.Run(ctx, verify.Request{
		Targets:   targetsOf(c),
		Resources: []flux.Ref{ks(ns)},
		Revision:  mustRevision(t, commitC),
		Timeout:   3 * time.Minute,
		Workloads: true,
	})
	done := time.Now()
	if cl := run.Results[0]; cl.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict = %s (%s): %s, want Current once the fix is promoted\nflagger log:\n%s", cl.Verdict, cl.Code, cl.Message, flaggerLog(c))
	}
	promotedAt := phaseAt(ctx, t, c, ns, "Succeeded", done)
	t.Logf("Flagger promoted the fix at %s, Current at %s (%s after)", promotedAt.Format("15:04:05"), done.Format("15:04:05.000"), done.Sub(promotedAt).Round(time.Millisecond))
	primary, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, "web-primary", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := primary.Spec.Template.Spec.Containers[0].Image; got != "ghcr.io/example/web:1.2.0" {
		t.Errorf("web-primary runs %s once Current, want the fix's ghcr.io/example/web:1.2.0", got)
	}
}

// canaryConfigApp is canaryApp (image web:1.0.0, no promotion gate) whose Deployment takes its
// environment from ConfigMap web-config, which Flagger tracks (copied to web-config-primary):
// its data are fixed, and it carries the labels given ("" for none).
func canaryConfigApp(t *testing.T, webhook, labels string) string {
	t.Helper()
	dir := canaryApp(t, "ghcr.io/example/web:1.0.0", webhook, "")
	deployment, err := os.ReadFile(filepath.Join(dir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	withEnv := strings.Replace(string(deployment), "        image: ghcr.io/example/web:1.0.0\n",
		"        image: ghcr.io/example/web:1.0.0\n        envFrom:\n        - configMapRef:\n            name: web-config\n", 1)
	metadata := "  name: web-config\n"
	if labels != "" {
		metadata += "  labels: {" + labels + "}\n"
	}
	files := map[string]string{
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- configmap.yaml\n- deployment.yaml\n- canary.yaml\n",
		"deployment.yaml":    withEnv,
		"configmap.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n" + metadata + "data:\n  GREETING: hello\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCanaryTrackedConfigLabelOnly: a commit that only adds a label to a ConfigMap the Canary
// tracks. kustomize-controller's server-side apply entry, which owns the data too, is
// rewritten; Flagger, which compares a checksum of the data only, sees no change and never
// rewrites web-config-primary. The run compares the two by their data and is Current within
// seconds of Flux's apply (before, it waited for a copy that never came, to the timeout).
func TestCanaryTrackedConfigLabelOnly(t *testing.T) {
	b := flaggerBed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	g := newGate(t)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	deployCanaryApp(ctx, t, c, k, canaryConfigApp(t, g.srv.URL, ""))
	if _, err := c.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-config-primary", metav1.GetOptions{}); err != nil {
		t.Fatalf("Flagger made no copy of the tracked ConfigMap: %v\nflagger log:\n%s", err, flaggerLog(c))
	}

	watch := watchCanary(ctx, t, c, ns)
	if _, err := c.DeployApp(ctx, k, canaryConfigApp(t, g.srv.URL, "team: shop"), commitB); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitB); err != nil {
		t.Fatal(err)
	}
	applied := time.Now()
	cm, err := c.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels["team"] != "shop" {
		t.Fatalf("web-config after B has labels %v, want team: shop applied", cm.Labels)
	}
	run := verify.Run(ctx, verify.Request{
		Targets:   targetsOf(c),
		Resources: []flux.Ref{ks(ns)},
		Revision:  mustRevision(t, commitB),
		Timeout:   2 * time.Minute,
		Workloads: true,
	})
	got := run.Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict %s %s (%s), want Current: the label changed no data Flagger tracks\nflagger log:\n%s", got.Verdict, got.Code, got.Message, flaggerLog(c))
	}
	if took := time.Since(applied); took > 30*time.Second {
		t.Errorf("Current %s after Flux applied B, want within seconds", took.Round(time.Millisecond))
	}
	if watch.seen("Progressing") {
		t.Errorf("Flagger started an analysis for a label alone: the test proves less than it says")
	}
}
