package verify_test

import (
	"context"
	"encoding/json"
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
	"k8s.io/client-go/rest"
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

// saTarget is a run's target authenticating as the ServiceAccount flux-system/name (where
// deploy/rbac binds the action's accounts), and a dynamic client with its rights.
func saTarget(ctx context.Context, t *testing.T, c *testbed.Cluster, name string) (verify.Target, dynamic.Interface) {
	t.Helper()
	data, err := c.ServiceAccountKubeconfig(ctx, "flux-system", name)
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

const policyRefusal = "may only request a reconciliation"

// impersonated is a dynamic client of the cluster's admin impersonating user: a second
// identity, of another name than app-status's ServiceAccount, as an EKS access entry's
// session, a GKE e-mail or an Entra object id would be.
func impersonated(t *testing.T, c *testbed.Cluster, user string) (*rest.Config, dynamic.Interface) {
	t.Helper()
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, dyn
}

// bindUser binds the ClusterRole role to user, until the test ends.
func bindUser(ctx context.Context, t *testing.T, c *testbed.Cluster, user, role string) {
	t.Helper()
	name := "test-" + strings.NewReplacer("@", "-", ".", "-").Replace(user) + "-" + role
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}},
	}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// heldRelease is a HelmRelease flux-system/name that helm-controller leaves alone
// (suspended): a target for the force request.
func heldRelease(ctx context.Context, t *testing.T, c *testbed.Cluster, name string) {
	t.Helper()
	hr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
		"metadata": map[string]any{"name": name, "namespace": "flux-system"},
		"spec": map[string]any{"interval": "10m", "suspend": true,
			"chart": map[string]any{"spec": map[string]any{"chart": "none", "sourceRef": map[string]any{"kind": "HelmRepository", "name": "none"}}}},
	}}
	if err := c.ApplyObject(ctx, "flux-system", hr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Dynamic.Resource(testbed.HelmReleaseGVR).Namespace("flux-system").Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// coOwning is a merge patch that sets the reconcile request and hands the run's field
// manager the ownership of spec.path besides, in the managed fields of the object as read
// (in its entry when it has one, as the old policy let through).
func coOwning(ctx context.Context, t *testing.T, c *testbed.Cluster, name string) string {
	t.Helper()
	obj, err := c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	entries := []any{}
	if mf, ok := obj.Object["metadata"].(map[string]any)["managedFields"].([]any); ok {
		entries = mf
	}
	path := map[string]any{"f:path": map[string]any{}}
	owned := false
	for _, e := range entries {
		if e, ok := e.(map[string]any); ok && e["manager"] == verify.FieldManager && e["operation"] == "Update" {
			if fields, ok := e["fieldsV1"].(map[string]any); ok {
				fields["f:spec"], owned = path, true
			}
		}
	}
	if !owned {
		entries = append(entries, map[string]any{"manager": verify.FieldManager, "operation": "Update", "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{"f:reconcile.fluxcd.io/requestedAt": map[string]any{}}}, "f:spec": path}})
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"managedFields": entries,
		"annotations": map[string]any{"reconcile.fluxcd.io/requestedAt": time.Now().UTC().Format(time.RFC3339Nano)}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestReconcilePolicy: deploy/rbac/reconcile/app-status-reconcile.yaml limits every identity that may
// patch Flux objects but not update them, whatever its name: app-status's ServiceAccount
// (bound by app-status-reconcile-binding.yaml) and a second identity, a user of another name
// bound to the same role, may each set the reconcile request annotation and nothing else:
// spec.path, spec.suspend, a source's spec.url, a label, another annotation, the ownership of
// a spec field and reconcile.fluxcd.io/forceAt are refused with the policy's message;
// forceAt passes on a HelmRelease once app-status-reconcile-force.yaml's verb is held, and
// still nowhere else. A run as the second identity reconciles, and waits for Flux to handle
// its own request although a token of 2099 was handled before, and asks the Kustomization only
// once the source has handled the run's request.
func TestReconcilePolicy(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	applyRBAC(ctx, t, c, "base/app-status.yaml", "reconcile/app-status-reconcile.yaml", "reconcile/app-status-reconcile-binding.yaml")
	_, sa := saTarget(ctx, t, c, "app-status")
	ns := c.Namespace(t)
	user := ns + "@example.com"
	bindUser(ctx, t, c, user, "app-status-reconciler")
	userCfg, other := impersonated(t, c, user)
	name := ns + "-policy"
	cleanUpFlux(t, c, name)
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: name, TargetNamespace: ns}, appDir(t, "web"), commitA); err != nil {
		t.Fatal(err)
	}
	heldRelease(ctx, t, c, name)
	patch := func(dyn dynamic.Interface, gvr schema.GroupVersionResource, body string) error {
		_, err := dyn.Resource(gvr).Namespace("flux-system").Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: verify.FieldManager})
		return err
	}
	request := func(annotation string) string {
		return `{"metadata":{"annotations":{"` + annotation + `":"` + time.Now().UTC().Format(time.RFC3339Nano) + `"}}}`
	}
	// The policy takes effect once the API server has loaded it. (Each probe changes the
	// label anew: one that passed before it did would make the next a no-op, which the policy
	// rightly lets through. A label of the suspended HelmRelease, so one that passed changes
	// nothing Flux does.)
	var last error
	probe := 0
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		probe++
		last = patch(sa, testbed.HelmReleaseGVR, fmt.Sprintf(`{"metadata":{"labels":{"probe":"%d"}}}`, probe))
		return last != nil && strings.Contains(last.Error(), policyRefusal), nil
	}); err != nil {
		t.Fatalf("the admission policy never refused a change of a label: %v (last answer: %v)", err, last)
	}
	fixed := func(body string) func() string { return func() string { return body } }
	refused := []struct {
		what string
		gvr  schema.GroupVersionResource
		body func() string
	}{
		{"spec.path", testbed.KustomizationGVR, fixed(`{"spec":{"path":"./other"}}`)},
		{"spec.suspend", testbed.KustomizationGVR, fixed(`{"spec":{"suspend":true}}`)},
		{"a HelmRelease's spec", testbed.HelmReleaseGVR, fixed(`{"spec":{"suspend":false}}`)},
		{"a source's spec.url", testbed.GitRepositoryGVR, fixed(`{"spec":{"url":"https://example.invalid/other.git"}}`)},
		{"a label", testbed.KustomizationGVR, fixed(`{"metadata":{"labels":{"team":"other"}}}`)},
		{"a finalizer", testbed.KustomizationGVR, fixed(`{"metadata":{"finalizers":["example.com/hold"]}}`)},
		{"another annotation", testbed.KustomizationGVR, fixed(`{"metadata":{"annotations":{"kustomize.toolkit.fluxcd.io/reconcile":"disabled"}}}`)},
		{"the request and another annotation", testbed.GitRepositoryGVR, fixed(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"x","other":"y"}}}`)},
		{"the other field managers (stripped)", testbed.KustomizationGVR, fixed(`{"metadata":{"managedFields":[{}],"annotations":{"reconcile.fluxcd.io/requestedAt":"y"}}}`)},
		{"the ownership of spec.path", testbed.KustomizationGVR, func() string { return coOwning(ctx, t, c, name) }},
		{"forceAt on a HelmRelease (without the force file)", testbed.HelmReleaseGVR, fixed(request("reconcile.fluxcd.io/forceAt"))},
		{"forceAt on a Kustomization", testbed.KustomizationGVR, fixed(request("reconcile.fluxcd.io/forceAt"))},
	}
	identities := []struct {
		name string
		dyn  dynamic.Interface
	}{{"app-status's ServiceAccount", sa}, {"a user of another name (" + user + ")", other}}
	for _, id := range identities {
		for _, r := range refused {
			err := patch(id.dyn, r.gvr, r.body())
			if err == nil || !strings.Contains(err.Error(), policyRefusal) {
				t.Errorf("%s changing %s: %v, want the policy's refusal", id.name, r.what, err)
			}
		}
		for _, gvr := range []schema.GroupVersionResource{testbed.GitRepositoryGVR, testbed.KustomizationGVR, testbed.HelmReleaseGVR} {
			if err := patch(id.dyn, gvr, request("reconcile.fluxcd.io/requestedAt")); err != nil {
				t.Errorf("%s: the reconcile request on %s: %v, want it to pass", id.name, gvr.Resource, err)
			}
		}
		// And nothing else: the role gives no delete.
		if err := id.dyn.Resource(testbed.KustomizationGVR).Namespace("flux-system").Delete(ctx, name, metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("%s: delete: %v, want forbidden", id.name, err)
		}
	}
	for _, gvr := range []schema.GroupVersionResource{testbed.GitRepositoryGVR, testbed.KustomizationGVR} {
		// Someone ran `flux reconcile` before (field manager flux, an update): app-status
		// takes the annotation over, and that entry goes with it.
		if _, err := c.Dynamic.Resource(gvr).Namespace("flux-system").Patch(ctx, name, types.MergePatchType, []byte(request("reconcile.fluxcd.io/requestedAt")), metav1.PatchOptions{FieldManager: "flux"}); err != nil {
			t.Fatal(err)
		}
		if err := patch(other, gvr, request("reconcile.fluxcd.io/requestedAt")); err != nil {
			t.Errorf("the reconcile request on %s after a flux reconcile: %v, want it to pass", gvr.Resource, err)
		}
	}

	// The force file: forceAt on HelmReleases, for who holds its verb.
	applyRBAC(ctx, t, c, "force/app-status-reconcile-force.yaml")
	t.Cleanup(func() {
		_ = c.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), "app-status-reconciler-force", metav1.DeleteOptions{})
	})
	bindUser(ctx, t, c, user, "app-status-reconciler-force")
	for _, id := range identities {
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			last = patch(id.dyn, testbed.HelmReleaseGVR, request("reconcile.fluxcd.io/forceAt"))
			return last == nil, nil
		}); err != nil {
			t.Errorf("%s with the force file: forceAt on a HelmRelease: %v, want it to pass", id.name, last)
		}
		for _, r := range refused[:len(refused)-2] {
			if err := patch(id.dyn, r.gvr, r.body()); err == nil || !strings.Contains(err.Error(), policyRefusal) {
				t.Errorf("%s with the force file, changing %s: %v, want the policy's refusal", id.name, r.what, err)
			}
		}
		if err := patch(id.dyn, testbed.KustomizationGVR, request("reconcile.fluxcd.io/forceAt")); err == nil || !strings.Contains(err.Error(), policyRefusal) {
			t.Errorf("%s with the force file: forceAt on a Kustomization: %v, want the policy's refusal", id.name, err)
		}
	}

	// A run as the second identity, with no revision: its verdict waits until Flux has handled
	// its own request. A token of 2099 was handled before: it must not end the wait at once.
	const future = "2099-01-01T00:00:00Z"
	if _, err := c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system").Patch(ctx, name, types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"`+future+`"}}}`), metav1.PatchOptions{FieldManager: "flux"}); err != nil {
		t.Fatal(err)
	}
	handled := func() string {
		obj, err := c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v, _, _ := unstructured.NestedString(obj.Object, "status", "lastHandledReconcileAt")
		return v
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return handled() == future, nil
	}); err != nil {
		t.Fatalf("kustomize-controller never handled the token %s: %v", future, err)
	}
	bindUser(ctx, t, c, user, "app-status-reader")
	req := verify.Request{Targets: []verify.Target{{Name: c.Name, Config: userCfg}}, Resources: []flux.Ref{ks(name)},
		Timeout: time.Minute, Workloads: true, Reconcile: verify.ReconcileOn}
	earlier, _ := requestedAt(ctx, t, c, testbed.GitRepositoryGVR, name)
	done := startRun(ctx, req)
	// The Kustomization is asked once the source has handled the run's request: this bed has
	// no source-controller, so the test writes the handled value as it would.
	var token, manager string
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		token, manager = requestedAt(ctx, t, c, testbed.GitRepositoryGVR, name)
		return token != earlier && manager == verify.FieldManager, nil
	}); err != nil {
		t.Fatalf("the run never asked GitRepository %s to reconcile: %v", name, err)
	}
	time.Sleep(2 * time.Second)
	if v, _ := requestedAt(ctx, t, c, testbed.KustomizationGVR, name); v != future {
		t.Errorf("the Kustomization was asked (%q) before the source handled the run's request", v)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		obj, err := c.Dynamic.Resource(testbed.GitRepositoryGVR).Namespace("flux-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_ = unstructured.SetNestedField(obj.Object, token, "status", "lastHandledReconcileAt")
		_, err = c.Dynamic.Resource(testbed.GitRepositoryGVR).Namespace("flux-system").UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("writing the GitRepository's handled request: %v", err)
	}
	got := (<-done).Results[0]
	after := handled()
	if got.Verdict != result.VerdictCurrent || got.Reconcile == nil || len(got.Reconcile.Notes) != 0 ||
		!slices.Contains(got.Reconcile.Requested, "Kustomization/flux-system/"+name) {
		t.Errorf("a run as %s: verdict %s (%s), reconcile %+v; want Current, the Kustomization requested, no notes", user, got.Verdict, got.Message, got.Reconcile)
	}
	if v, manager := requestedAt(ctx, t, c, testbed.KustomizationGVR, name); after == future || after != v || manager != verify.FieldManager {
		t.Errorf("after the run: handled %q, requested %q by %q; want the run's own token handled before its verdict", after, v, manager)
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
	applyRBAC(ctx, t, c, "base/app-status.yaml", "reconcile/app-status-reconcile.yaml", "reconcile/app-status-reconcile-binding.yaml")
	target, _ := saTarget(ctx, t, c, "app-status")
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

// leastPrivilegeRules are the rules of deploy/rbac/base/app-status.yaml's read-only ClusterRole.
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

// TestReconcileGitNoRevision: without a revision, the run must not be Current on the commit
// the source had before the merge. With the real source-controller and kustomize-controller
// and a GitRepository fetching every 10 minutes, a new commit is pushed: asked at once after
// its source, kustomize-controller would apply the old artifact within a second and handle the
// request the verdict waits for; asked once source-controller has handled the source's
// request, it applies the new commit, which the Current verdict must rest on.
func TestReconcileGitNoRevision(t *testing.T) {
	b := realBed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const name = "gitnorev"
	git := b.Git
	tree := map[string]string{"apps/web": appDir(t, "web")}
	commit := func(message string) string {
		t.Helper()
		sha, err := git.Commit(ctx, name, tree, message)
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	first := commit("first")
	targets := gitAppOnEveryCluster(ctx, t, b, name)
	req := verify.Request{Targets: targets, Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, first), Timeout: 2 * time.Minute, Workloads: true}
	if run := verify.Run(ctx, req); run.Status != result.RunSuccess {
		t.Fatalf("first commit: %s: %+v", run.Status, run.Condition)
	}

	merged := commit("merged")
	req.Revision, req.Reconcile = flux.Revision{}, verify.ReconcileOn
	start := time.Now()
	run := verify.Run(ctx, req)
	took := time.Since(start)
	if run.Status != result.RunSuccess {
		t.Fatalf("reconcile without a revision: %s: %+v", run.Status, run.Condition)
	}
	for _, c := range run.Results {
		applied := ""
		for _, fo := range c.Flux {
			if fo.ID == ks(name).ID() {
				applied = fo.LastAppliedRevision
			}
		}
		if !mustRevision(t, merged).Matches(applied) {
			t.Errorf("%s: Current with the Kustomization at %q, want the merged commit %s (the source's request handled first)", c.Name, applied, merged)
		}
		if r := c.Reconcile; r == nil || !slices.Contains(r.Requested, "GitRepository/flux-system/"+name) || !slices.Contains(r.Requested, ks(name).ID()) {
			t.Errorf("%s: reconcile %+v, want the GitRepository and the Kustomization asked", c.Name, r)
		}
	}
	t.Logf("reconcile without a revision: Current on %d clusters in %s", len(run.Results), took.Round(time.Millisecond))
}

// TestReconcileNoRevisionFixesABuildFailure: the commit before the merge left the
// Kustomization failing its build (a resource its kustomization.yaml lists is not there), and
// the merge fixes it. With reconcile and no revision, the run asks the source and waits for
// source-controller to fetch before it asks the Kustomization; all that while the Kustomization
// shows the old failure, which is the state before the run's own request: the cluster is
// Current on the merged commit, never Failed on the old one.
func TestReconcileNoRevisionFixesABuildFailure(t *testing.T) {
	b := realBed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const name = "buildfix"
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "kustomization.yaml"), []byte("resources: [missing.yaml]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	git := b.Git
	first, err := git.Commit(ctx, name, map[string]string{"apps/web": broken}, "broken")
	if err != nil {
		t.Fatal(err)
	}
	targets := gitAppOnEveryCluster(ctx, t, b, name)
	req := verify.Request{Targets: targets, Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, first), Timeout: 2 * time.Minute, Workloads: true}
	if run := verify.Run(ctx, req); run.Status != result.RunFailure {
		t.Fatalf("the broken commit: %s, want the build failure: %+v", run.Status, run.Results)
	}

	merged, err := git.Commit(ctx, name, map[string]string{"apps/web": appDir(t, "web")}, "fixed")
	if err != nil {
		t.Fatal(err)
	}
	req.Revision, req.Reconcile = flux.Revision{}, verify.ReconcileOn
	start := time.Now()
	run := verify.Run(ctx, req)
	if run.Status != result.RunSuccess {
		t.Fatalf("reconcile without a revision after the fix: %s, want success (the old build failure held until the request was handled): %+v", run.Status, run.Results)
	}
	for _, c := range run.Results {
		for _, fo := range c.Flux {
			if fo.ID == ks(name).ID() && !mustRevision(t, merged).Matches(fo.LastAppliedRevision) {
				t.Errorf("%s: Current with the Kustomization at %q, want the merged commit %s", c.Name, fo.LastAppliedRevision, merged)
			}
		}
	}
	t.Logf("reconcile without a revision after a build failure: Current on %d clusters in %s", len(run.Results), time.Since(start).Round(time.Millisecond))
}

// gitAppOnEveryCluster applies, on every cluster of b, GitRepository name of the bed's Git
// server (fetching every 10m) and Kustomization name applying its ./apps/web to a namespace of
// the test's own, and returns the clusters as targets.
func gitAppOnEveryCluster(ctx context.Context, t *testing.T, b *testbed.Bed, name string) []verify.Target {
	t.Helper()
	var targets []verify.Target
	for _, c := range b.Clusters {
		ns := c.Namespace(t)
		if err := c.EnsureNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		for _, obj := range []*unstructured.Unstructured{
			b.Git.GitRepository(name, name, "10m"),
			testbed.Kustomization{Name: name, Path: "./apps/web", TargetNamespace: ns}.Manifest(),
		} {
			if err := c.ApplyObject(ctx, "flux-system", obj); err != nil {
				t.Fatal(err)
			}
		}
		targets = append(targets, verify.Target{Name: c.Name, Config: c.Config})
	}
	return targets
}
