package verify_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// applyRBAC applies the files of deploy/rbac, as docs/credentials.md and docs/reconcile.md say.
func applyRBAC(ctx context.Context, t *testing.T, c *testbed.Cluster, files ...string) {
	t.Helper()
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(testbed.Testdata(t)), "deploy", "rbac", f))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := testbed.DecodeManifests(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if err := c.ApplyObject(ctx, o.GetNamespace(), o); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// saTarget is a run's target authenticating as the ServiceAccount ns/name, and a dynamic
// client with its rights.
func saTarget(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, name string) (verify.Target, dynamic.Interface) {
	t.Helper()
	data, err := c.ServiceAccountKubeconfig(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return verify.Target{Name: c.Name, Config: cfg}, dyn
}

// requestedAt is the reconcile request annotation of a Flux object, and who set it last.
func requestedAt(ctx context.Context, t *testing.T, c *testbed.Cluster, gvr schema.GroupVersionResource, name string) (value, manager string) {
	t.Helper()
	obj, err := c.Dynamic.Resource(gvr).Namespace("flux-system").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range obj.GetManagedFields() {
		if strings.Contains(string(f.FieldsV1.GetRawBytes()), "reconcile.fluxcd.io/requestedAt") {
			manager = f.Manager
		}
	}
	return obj.GetAnnotations()["reconcile.fluxcd.io/requestedAt"], manager
}

const policyRefusal = "app-status may only request a reconciliation"

// TestReconcilePolicy (issue 21): deploy/rbac/app-status-reconcile.yaml on top of the read-only
// role lets app-status's ServiceAccount set the reconcile request annotation and nothing else:
// changing spec.path, spec.suspend, a source's spec.url, a label or another annotation is
// refused with the admission policy's message; the request itself passes.
func TestReconcilePolicy(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	applyRBAC(ctx, t, c, "app-status.yaml", "app-status-reconcile.yaml")
	_, dyn := saTarget(ctx, t, c, "flux-system", "app-status")
	ns := c.Namespace(t)
	name := ns + "-policy"
	cleanUpFlux(t, c, name)
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: name, TargetNamespace: ns}, appDir(t, "web"), commitA); err != nil {
		t.Fatal(err)
	}
	patch := func(gvr schema.GroupVersionResource, body string) error {
		_, err := dyn.Resource(gvr).Namespace("flux-system").Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: verify.FieldManager})
		return err
	}
	// The policy takes effect once the API server has loaded it. (Each probe changes the
	// path anew: one that passed before it did would make the next a no-op, which the policy
	// rightly lets through.)
	var last error
	probe := 0
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		probe++
		last = patch(testbed.KustomizationGVR, fmt.Sprintf(`{"spec":{"path":"./probe-%d"}}`, probe))
		return last != nil && strings.Contains(last.Error(), policyRefusal), nil
	}); err != nil {
		t.Fatalf("the admission policy never refused a change of spec.path: %v (last answer: %v)", err, last)
	}
	refused := []struct {
		what string
		gvr  schema.GroupVersionResource
		body string
	}{
		{"spec.path", testbed.KustomizationGVR, `{"spec":{"path":"./other"}}`},
		{"spec.suspend", testbed.KustomizationGVR, `{"spec":{"suspend":true}}`},
		{"a source's spec.url", testbed.GitRepositoryGVR, `{"spec":{"url":"https://example.invalid/other.git"}}`},
		{"a label", testbed.KustomizationGVR, `{"metadata":{"labels":{"team":"other"}}}`},
		{"another annotation", testbed.KustomizationGVR, `{"metadata":{"annotations":{"kustomize.toolkit.fluxcd.io/reconcile":"disabled"}}}`},
		{"the request and another annotation", testbed.GitRepositoryGVR, `{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"x","other":"y"}}}`},
		{"the other field managers (stripped)", testbed.KustomizationGVR, `{"metadata":{"managedFields":[{}],"annotations":{"reconcile.fluxcd.io/requestedAt":"y"}}}`},
	}
	for _, r := range refused {
		err := patch(r.gvr, r.body)
		if err == nil || !strings.Contains(err.Error(), policyRefusal) {
			t.Errorf("changing %s: %v, want the policy's refusal", r.what, err)
		}
	}
	for _, gvr := range []schema.GroupVersionResource{testbed.GitRepositoryGVR, testbed.KustomizationGVR} {
		// Someone ran `flux reconcile` before (field manager flux, an update): app-status
		// takes the annotation over, and that entry goes with it.
		byHand := `{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"` + time.Now().UTC().Format(time.RFC3339Nano) + `"}}}`
		if _, err := c.Dynamic.Resource(gvr).Namespace("flux-system").Patch(ctx, name, types.MergePatchType, []byte(byHand), metav1.PatchOptions{FieldManager: "flux"}); err != nil {
			t.Fatal(err)
		}
		if err := patch(gvr, `{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"`+time.Now().UTC().Format(time.RFC3339Nano)+`"}}}`); err != nil {
			t.Errorf("the reconcile request on %s after a flux reconcile: %v, want it to pass", gvr.Resource, err)
		}
	}
	// And nothing else: the read-only role and this one give no delete.
	if err := dyn.Resource(testbed.KustomizationGVR).Namespace("flux-system").Delete(ctx, name, metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("delete: %v, want forbidden", err)
	}
}

// TestReconcileRun (issue 21): a run with reconcile, as app-status's ServiceAccount under the
// shipped role and policy, asks the source and the Kustomization to reconcile (with its own
// field manager), asks the source again while it does not have the expected revision (the
// commit is published 12 s after the run started), and is Current, with where its time went;
// a suspended object is never touched; credentials that may not patch leave a note and the
// verdict as it is.
func TestReconcileRun(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	applyRBAC(ctx, t, c, "app-status.yaml", "app-status-reconcile.yaml")
	target, _ := saTarget(ctx, t, c, "flux-system", "app-status")
	ns := c.Namespace(t)
	name := ns + "-rec"
	cleanUpFlux(t, c, name)
	dir := appDir(t, "web")
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: name, TargetNamespace: ns}, dir, commitA); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", name, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}

	req := verify.Request{Targets: []verify.Target{target}, Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, commitB),
		Timeout: 2 * time.Minute, Workloads: true, Reconcile: verify.ReconcileOn}
	during := startRun(ctx, req)
	// The source is asked at once, and again 10 to 15 s later while it does not have B.
	var tokens []string
	deadline := time.Now().Add(17 * time.Second)
	for time.Now().Before(deadline) {
		if v, _ := requestedAt(ctx, t, c, testbed.GitRepositoryGVR, name); v != "" && !slices.Contains(tokens, v) {
			tokens = append(tokens, v)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(tokens) < 2 {
		t.Errorf("the source was asked %d times in 17s without the revision, want it asked again (tokens %q)", len(tokens), tokens)
	}
	published := time.Now()
	if _, err := c.PublishGit(ctx, "flux-system", name, dir, commitB); err != nil {
		t.Fatal(err)
	}
	got := (<-during).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("reconcile run: verdict %s (%s), want Current", got.Verdict, got.Message)
	}
	t.Logf("Current %s after commit B was published; reconcile: %+v", time.Since(published).Round(time.Millisecond), got.Reconcile)
	r := got.Reconcile
	if r == nil {
		t.Fatal("no reconcile report in the result")
	}
	// (The test bed's source serves B at once and kustomize-controller applies it on its own:
	// the verdict may come before the requests reach the Kustomization, which they never hold
	// up. The next run shows that request.)
	inFlight := func(n string) bool { return strings.Contains(n, "may have been sent as the cluster's verdict came") }
	if !slices.Contains(r.Requested, "GitRepository/flux-system/"+name) || slices.ContainsFunc(r.Notes, func(n string) bool { return !inFlight(n) }) {
		t.Errorf("requested %q notes %q, want the GitRepository and no notes (but a request in flight at the verdict)", r.Requested, r.Notes)
	}
	if r.RequestedMs == nil || r.AppliedMs == nil || *r.RequestedMs > *r.AppliedMs || *r.AppliedMs > got.DurationMs {
		t.Errorf("timeline requested %v, applied %v, verdict %d: want each moment, in order", r.RequestedMs, r.AppliedMs, got.DurationMs)
	}
	if v, manager := requestedAt(ctx, t, c, testbed.GitRepositoryGVR, name); v == "" || manager != verify.FieldManager {
		t.Errorf("GitRepository: requestedAt %q set by %q, want a token set by %q", v, manager, verify.FieldManager)
	}

	// A rollout that takes a while (pods that are not ready yet): the source has the revision,
	// so the Kustomization itself is asked, then the run waits on.
	slow := ns + "-slow"
	cleanUpFlux(t, c, slow)
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: slow, TargetNamespace: ns + "-slow"}, appDir(t, "fail-never-ready"), commitA); err != nil {
		t.Fatal(err)
	}
	req.Resources, req.Revision, req.Timeout = []flux.Ref{ks(slow)}, mustRevision(t, commitA), 15*time.Second
	got = verify.Run(ctx, req).Results[0]
	r = got.Reconcile
	want := []string{"GitRepository/flux-system/" + slow, "Kustomization/flux-system/" + slow}
	if got.Verdict != result.VerdictTimeout || r == nil || !slices.Equal(r.Requested, want) || len(r.Notes) != 0 {
		t.Fatalf("slow rollout: verdict %s, reconcile %+v; want Timeout and %q requested", got.Verdict, r, want)
	}
	if r.RequestedMs == nil || r.SourceReadyMs == nil || *r.RequestedMs > *r.SourceReadyMs {
		t.Errorf("slow rollout timeline: requested %v, source %v: want both, in order", r.RequestedMs, r.SourceReadyMs)
	}
	for _, gvr := range []schema.GroupVersionResource{testbed.GitRepositoryGVR, testbed.KustomizationGVR} {
		if v, manager := requestedAt(ctx, t, c, gvr, slow); v == "" || manager != verify.FieldManager {
			t.Errorf("%s: requestedAt %q set by %q, want a token set by %q", gvr.Resource, v, manager, verify.FieldManager)
		}
	}

	// A suspended Kustomization: not touched, its source neither; the verdict is Suspended.
	suspended := ns + "-suspended"
	cleanUpFlux(t, c, suspended)
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: suspended, TargetNamespace: ns, Suspend: true}, dir, commitA); err != nil {
		t.Fatal(err)
	}
	req.Resources, req.Revision, req.Timeout = []flux.Ref{ks(suspended)}, mustRevision(t, commitA), 30*time.Second
	got = verify.Run(ctx, req).Results[0]
	// (The verdict may come before the requests have read the object: a note is not promised.)
	if got.Verdict != result.VerdictSuspended || got.Reconcile == nil || len(got.Reconcile.Requested) != 0 {
		t.Errorf("suspended: verdict %s, reconcile %+v; want Suspended and nothing requested", got.Verdict, got.Reconcile)
	}
	for _, gvr := range []schema.GroupVersionResource{testbed.GitRepositoryGVR, testbed.KustomizationGVR} {
		if v, _ := requestedAt(ctx, t, c, gvr, suspended); v != "" {
			t.Errorf("suspended: %s was asked to reconcile (%q)", gvr.Resource, v)
		}
	}

	// Credentials that may read but not patch: the request is a note, the verdict stands. The
	// run gives no revision, so its verdict waits for its own requests (awaitsHandling) and
	// the refusal is in before it; with the revision the cluster is already at, the verdict
	// may come first, and the note then says the request may have been sent as it came.
	readOnly, err := c.TokenKubeconfig(ctx, "flux-system", ns+"-ro", leastPrivilegeRules(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(readOnly)
	if err != nil {
		t.Fatal(err)
	}
	req.Targets, req.Resources, req.Revision = []verify.Target{{Name: c.Name, Config: cfg}}, []flux.Ref{ks(name)}, flux.Revision{}
	got = verify.Run(ctx, req).Results[0]
	if got.Verdict != result.VerdictCurrent || got.Reconcile == nil ||
		!slices.ContainsFunc(got.Reconcile.Notes, func(n string) bool { return strings.Contains(n, "may not patch GitRepository/flux-system/"+name) }) {
		t.Errorf("read-only credentials: verdict %s, reconcile %+v; want Current and a note that it may not patch", got.Verdict, got.Reconcile)
	}
	// The same credentials, and a revision the cluster does not have: the refusal is a note,
	// and the cluster is not Current for it.
	req.Revision, req.Timeout = mustRevision(t, "0123456789abcdef0123456789abcdef01234567"), 8*time.Second
	got = verify.Run(ctx, req).Results[0]
	if got.Verdict != result.VerdictTimeout || got.Reconcile == nil ||
		!slices.ContainsFunc(got.Reconcile.Notes, func(n string) bool { return strings.Contains(n, "may not patch GitRepository/flux-system/"+name) }) {
		t.Errorf("read-only credentials, a revision not there: verdict %s, reconcile %+v; want Timeout and a note that it may not patch", got.Verdict, got.Reconcile)
	}
}

// leastPrivilegeRules are the rules of deploy/rbac/app-status.yaml's read-only ClusterRole.
func leastPrivilegeRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	_, role := leastPrivilegeRole(t)
	return role.Rules
}

// TestReconcileMergeToVerdict (issue 21): with the real source-controller and its sources at
// a 10-minute interval, a revision pushed (as `flux push artifact` does) is verified on every
// cluster within seconds by a run with reconcile, while the same run without it times out;
// a revision pushed 6 s after the step started still verifies (the source is asked again).
func TestReconcileMergeToVerdict(t *testing.T) {
	b := realBed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	name := strings.ToLower(t.Name())
	reg := b.Registry
	push := func(commit string) time.Time {
		t.Helper()
		if _, err := reg.PushArtifact(ctx, name, "latest", appDir(t, "web"), "main@sha1:"+commit); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}
	push(commitA)
	var targets []verify.Target
	for _, c := range b.Clusters {
		ns := c.Namespace(t)
		if err := c.EnsureNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		if err := c.ApplyObject(ctx, "flux-system", reg.OCIRepository(name, name, "latest", "10m")); err != nil {
			t.Fatal(err)
		}
		k := testbed.Kustomization{Name: name, TargetNamespace: ns, SourceKind: "OCIRepository"}
		if err := c.ApplyObject(ctx, "flux-system", k.Manifest()); err != nil {
			t.Fatal(err)
		}
		targets = append(targets, verify.Target{Name: c.Name, Config: c.Config})
	}
	req := verify.Request{Targets: targets, Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, commitA), Timeout: 2 * time.Minute, Workloads: true}
	if run := verify.Run(ctx, req); run.Status != result.RunSuccess {
		t.Fatalf("first revision: %s: %+v", run.Status, run.Condition)
	}

	// Merged: B is pushed. The sources fetch every 10 minutes: without reconcile, no verdict.
	push(commitB)
	req.Revision, req.Timeout = mustRevision(t, commitB), 15*time.Second
	for _, c := range verify.Run(ctx, req).Results {
		if c.Verdict != result.VerdictTimeout {
			t.Errorf("%s without reconcile: %s (%s), want Timeout (the source fetches at its 10m interval)", c.Name, c.Verdict, c.Message)
		}
	}
	start := time.Now()
	req.Reconcile, req.Timeout = verify.ReconcileOn, 2*time.Minute
	run := verify.Run(ctx, req)
	took := time.Since(start)
	if run.Status != result.RunSuccess {
		t.Fatalf("with reconcile: %s: %+v", run.Status, run.Condition)
	}
	for _, c := range run.Results {
		r := c.Reconcile
		if r == nil || r.RequestedMs == nil || r.SourceReadyMs == nil || r.AppliedMs == nil {
			t.Errorf("%s: reconcile %+v, want every moment", c.Name, r)
			continue
		}
		t.Logf("%s: requested +%dms, source had B +%dms, applied +%dms, Current +%dms", c.Name, *r.RequestedMs, *r.SourceReadyMs, *r.AppliedMs, c.DurationMs)
	}
	t.Logf("merge to verdict with reconcile on %d clusters: %s", len(run.Results), took.Round(time.Millisecond))
	if took > time.Minute {
		t.Errorf("with reconcile: %s, want seconds", took)
	}

	// A run that starts before the revision is pushed: the source is asked again.
	req.Revision = mustRevision(t, commitC)
	during := startRun(ctx, req)
	time.Sleep(6 * time.Second)
	pushed := push(commitC)
	run = <-during
	if run.Status != result.RunSuccess {
		t.Fatalf("revision pushed after the step started: %s: %+v", run.Status, run.Condition)
	}
	t.Logf("revision pushed 6s after the step started: Current on every cluster %s after the push", time.Since(pushed).Round(time.Millisecond))
}

// TestReconcileGitMergeToVerdict (issue 21): one commit, two resources of one Git repository
// whose sources fetch every 10 minutes, with the real source-controller cloning from a Git
// server over smart HTTP: a Kustomization of ./apps/web, and a HelmRelease of the chart
// ./charts/web that source-controller builds from the repository (spec.chart: a HelmChart
// per commit, reconcileStrategy Revision, also at 10m). The commit SHA, as a workflow has it
// (${{ github.sha }}), is the expected revision of both. Merged, the commit is verified on
// every cluster within seconds with reconcile (the shared GitRepository asked once per run,
// then the HelmChart), and not at all without it.
func TestReconcileGitMergeToVerdict(t *testing.T) {
	b := realBed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const name = "gitmerge"
	git := b.Git
	tree := map[string]string{"apps/web": appDir(t, "web"), "charts/web": testbed.Testdata(t, "charts", "web")}
	commit := func(message string) string {
		t.Helper()
		sha, err := git.Commit(ctx, name, tree, message)
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	first := commit("first")
	var targets []verify.Target
	for _, c := range b.Clusters {
		ns := c.Namespace(t)
		for _, n := range []string{ns, ns + "-helm"} {
			if err := c.EnsureNamespace(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		objects := []*unstructured.Unstructured{
			git.GitRepository(name, name, "10m"),
			testbed.Kustomization{Name: name, Path: "./apps/web", TargetNamespace: ns}.Manifest(),
			testbed.HelmRelease{Name: name, Namespace: "flux-system", TargetNamespace: ns + "-helm",
				GitChart: &testbed.GitChart{Source: name, Path: "./charts/web", ReconcileStrategy: "Revision"}}.Manifest(),
		}
		for _, obj := range objects {
			if err := c.ApplyObject(ctx, "flux-system", obj); err != nil {
				t.Fatal(err)
			}
		}
		targets = append(targets, verify.Target{Name: c.Name, Config: c.Config})
	}
	resources := []flux.Ref{ks(name), hr("flux-system", name)}
	req := verify.Request{Targets: targets, Resources: resources, Revision: mustRevision(t, first), Timeout: 3 * time.Minute, Workloads: true}
	if run := verify.Run(ctx, req); run.Status != result.RunSuccess {
		t.Fatalf("first commit: %s: %+v", run.Status, run.Condition)
	}

	merged := commit("merged")
	req.Revision, req.Timeout = mustRevision(t, merged), 15*time.Second
	for _, c := range verify.Run(ctx, req).Results {
		if c.Verdict != result.VerdictTimeout {
			t.Errorf("%s without reconcile: %s (%s), want Timeout (the sources fetch at their 10m interval)", c.Name, c.Verdict, c.Message)
		}
	}
	start := time.Now()
	req.Reconcile, req.Timeout = verify.ReconcileOn, 2*time.Minute
	run := verify.Run(ctx, req)
	took := time.Since(start)
	if run.Status != result.RunSuccess {
		t.Fatalf("with reconcile: %s: %+v", run.Status, run.Condition)
	}
	for _, c := range run.Results {
		r := c.Reconcile
		if r == nil || r.RequestedMs == nil || r.SourceReadyMs == nil {
			t.Errorf("%s: reconcile %+v, want when the requests went and when the sources had the commit", c.Name, r)
			continue
		}
		gitRequests := 0
		for _, id := range r.Requested {
			if id == "GitRepository/flux-system/"+name {
				gitRequests++
			}
		}
		if gitRequests != 1 || !slices.Contains(r.Requested, "HelmChart/flux-system/flux-system-"+name) || len(r.Notes) != 0 {
			t.Errorf("%s: requested %q, notes %q: want the shared GitRepository once, the HelmChart, no notes", c.Name, r.Requested, r.Notes)
		}
		t.Logf("%s: requested +%dms, sources had the commit +%dms, Current +%dms (requested %q)", c.Name, *r.RequestedMs, *r.SourceReadyMs, c.DurationMs, r.Requested)
	}
	t.Logf("merge to verdict with reconcile, Git source and a chart built from it, on %d clusters: %s", len(run.Results), took.Round(time.Millisecond))
	if took > time.Minute {
		t.Errorf("with reconcile: %s, want seconds", took)
	}
}
