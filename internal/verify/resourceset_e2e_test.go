package verify_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// The Flux Operator cannot be built here (its module lacks the web UI it embeds, and it starts
// only in FIPS mode), so these tests play it: they write a ResourceSet, the objects it
// generates and its status as flux-operator v0.59.0 does (internal/controller/
// resourceset_controller.go reconcile and apply), against the operator's own CRD, while the
// real kustomize-controller reconciles what it generated.

var resourceSetGVR = schema.GroupVersionResource{Group: "fluxcd.controlplane.io", Version: "v1", Resource: "resourcesets"}

// The owner labels flux-operator puts on what a ResourceSet generates (fluxcd/pkg/ssa
// SetOwnerLabels with the group resourceset.fluxcd.controlplane.io), and its field manager.
const (
	rsetOwnerName      = "resourceset.fluxcd.controlplane.io/name"
	rsetOwnerNamespace = "resourceset.fluxcd.controlplane.io/namespace"
	operatorManager    = "flux-operator"
)

func rset(name string) flux.Ref {
	return flux.Ref{Kind: flux.KindResourceSet, Namespace: "flux-system", Name: name}
}

// playResourceSet plays flux-operator reconciling ResourceSet flux-system/name, without
// spec.wait, into the Kustomizations: it applies the ResourceSet (as its user does), then each
// generated Kustomization with the operator's field manager and owner labels, then the
// ResourceSet's status as a reconcile that succeeded leaves it: Ready True at its generation,
// the inventory of what it applied, the digest of it as lastAppliedRevision.
func playResourceSet(ctx context.Context, t *testing.T, c *testbed.Cluster, name string, generated ...testbed.Kustomization) {
	t.Helper()
	var inputs []any
	for _, k := range generated {
		inputs = append(inputs, map[string]any{"tenant": k.Name, "namespace": k.TargetNamespace})
	}
	rs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "fluxcd.controlplane.io/v1", "kind": "ResourceSet",
		"metadata": map[string]any{"name": name, "namespace": "flux-system"},
		"spec": map[string]any{
			"inputs": inputs,
			"resourcesTemplate": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: << inputs.tenant >>
  namespace: flux-system
spec:
  interval: 10m
  path: ./
  prune: true
  targetNamespace: << inputs.namespace >>
  sourceRef:
    kind: GitRepository
    name: << inputs.tenant >>
`,
		},
	}}
	if err := c.ApplyObject(ctx, "flux-system", rs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Dynamic.Resource(resourceSetGVR).Namespace("flux-system").Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	started := time.Now()
	var entries []any
	var applied []byte
	for _, k := range generated {
		obj := k.Manifest()
		obj.SetLabels(map[string]string{rsetOwnerName: name, rsetOwnerNamespace: "flux-system"})
		data, err := obj.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		force := true
		if _, err := c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system").Patch(ctx, k.Name, types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: operatorManager, Force: &force}); err != nil {
			t.Fatal(err)
		}
		applied = append(applied, data...)
		entries = append(entries, map[string]any{"id": "flux-system_" + k.Name + "_kustomize.toolkit.fluxcd.io_Kustomization", "v": "v1"})
	}
	writeResourceSetStatus(ctx, t, c, name, func(obj *unstructured.Unstructured) {
		ready := map[string]any{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
			"message":            fmt.Sprintf("Reconciliation finished in %s", time.Since(started).Round(time.Millisecond)),
			"observedGeneration": obj.GetGeneration(), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
		_ = unstructured.SetNestedSlice(obj.Object, []any{ready}, "status", "conditions")
		_ = unstructured.SetNestedMap(obj.Object, map[string]any{"entries": entries}, "status", "inventory")
		_ = unstructured.SetNestedField(obj.Object, fmt.Sprintf("sha256:%x", sha256.Sum256(applied)), "status", "lastAppliedRevision")
	})
}

// writeResourceSetStatus reads the ResourceSet, lets edit change it and writes its status, as
// flux-operator patches it, again while the object changed in between.
func writeResourceSetStatus(ctx context.Context, t *testing.T, c *testbed.Cluster, name string, edit func(obj *unstructured.Unstructured)) {
	t.Helper()
	rsets := c.Dynamic.Resource(resourceSetGVR).Namespace("flux-system")
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		obj, err := rsets.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err
			return false, nil
		}
		edit(obj)
		_, last = rsets.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: operatorManager})
		return last == nil, nil
	}); err != nil {
		t.Fatalf("write the status of ResourceSet %s: %v (%v)", name, err, last)
	}
}

// publishTenant publishes dir as commitA of the GitRepository flux-system/name and returns the
// Kustomization a ResourceSet generates for it, into a namespace of its own.
func publishTenant(ctx context.Context, t *testing.T, c *testbed.Cluster, name, dir string) testbed.Kustomization {
	t.Helper()
	k := testbed.Kustomization{Name: name, TargetNamespace: c.Namespace(t)}
	if _, err := c.PublishGit(ctx, "flux-system", name, dir, commitA); err != nil {
		t.Fatal(err)
	}
	cleanUpFlux(t, c, name)
	return k
}

// TestResourceSetGeneratedKustomizations: a ResourceSet generating two Kustomizations that the
// real kustomize-controller reconciles is verified as a Kustomization is: one broken fails the
// run with that Kustomization's own code, named, within seconds of kustomize-controller's
// Ready=False; both healthy are Current with what each applied.
func TestResourceSetGeneratedKustomizations(t *testing.T) {
	t.Parallel()
	b := bed.Get(t)
	c := b.Clusters[1]
	tests := []struct {
		name    string
		app     string // the second tenant's
		verdict result.Verdict
		code    result.Code
	}{
		{name: "one broken", app: "fail-build", verdict: result.VerdictFailed, code: result.CodeFluxBuildFailed},
		{name: "both healthy", app: "web", verdict: result.VerdictCurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			ns := c.Namespace(t)
			first := publishTenant(ctx, t, c, ns+"-a", appDir(t, "web"))
			second := publishTenant(ctx, t, c, ns+"-b", appDir(t, tt.app))
			failed := watchState(ctx, t, c, second.Name, kustomizationState("Ready=False BuildFailed", readyFalse("BuildFailed")))

			var mu sync.Mutex
			var verdictAt time.Time
			done := startRun(ctx, verify.Request{
				Targets:   targetsOf(c),
				Resources: []flux.Ref{rset(ns)},
				Revision:  mustRevision(t, commitA),
				Timeout:   2 * time.Minute,
				Workloads: true,
				Progress: func(p verify.Progress) {
					if p.Final {
						mu.Lock()
						verdictAt = time.Now()
						mu.Unlock()
					}
				},
			})
			playResourceSet(ctx, t, c, ns, first, second)
			got := (<-done).Results[0]

			if got.Verdict != tt.verdict || got.Code != tt.code {
				t.Fatalf("verdict %s (%s): %s; want %s (%s)", got.Verdict, got.Code, got.Message, tt.verdict, tt.code)
			}
			var fluxIDs []string
			for _, fo := range got.Flux {
				fluxIDs = append(fluxIDs, fo.ID)
			}
			for _, id := range []string{"ResourceSet/flux-system/" + ns, "Kustomization/flux-system/" + first.Name, "Kustomization/flux-system/" + second.Name} {
				if !slices.Contains(fluxIDs, id) {
					t.Errorf("Flux objects %q: want %s among them", fluxIDs, id)
				}
			}
			if tt.verdict == result.VerdictCurrent {
				var ids []string
				for _, o := range got.Objects {
					ids = append(ids, o.ID)
				}
				for _, k := range []testbed.Kustomization{first, second} {
					if id := "Deployment/" + k.TargetNamespace + "/web"; !slices.Contains(ids, id) {
						t.Errorf("objects %q: want %s, applied by %s", ids, id, k.Name)
					}
				}
				return
			}
			if !strings.Contains(got.Message, "Kustomization/flux-system/"+second.Name) {
				t.Errorf("message %q: want it to name the broken generated Kustomization/flux-system/%s", got.Message, second.Name)
			}
			from, ok := failed.wait(ctx, 5*time.Second)
			mu.Lock()
			verdict := verdictAt
			mu.Unlock()
			if !ok || verdict.IsZero() {
				t.Fatalf("kustomize-controller's Ready=False seen %t, a final verdict %t", ok, !verdict.IsZero())
			}
			latency := verdict.Sub(from)
			t.Logf("latency code=%s state->verdict=%dms (generated Kustomization Ready=False BuildFailed)", got.Code, latency.Milliseconds())
			if latency > 10*time.Second {
				t.Errorf("the verdict came %s after kustomize-controller's Ready=False: want it within seconds", latency)
			}
		})
	}
}

// TestResourceSetReconcile: with reconcile and the shipped RBAC (deploy/rbac: the reader, the
// reconciler and its admission policy), a run asks a ResourceSet to reconcile as
// `flux-operator reconcile resourceset` does (reconcile.fluxcd.io/requestedAt) and, with no
// revision to gate on, is Current only once the operator has handled that request
// (status.lastHandledReconcileAt, written here as the operator writes it). The same
// credentials may not change the ResourceSet's spec.
func TestResourceSetReconcile(t *testing.T) {
	t.Parallel()
	b := bed.Get(t)
	c := b.Clusters[2]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	applyRBAC(ctx, t, c, "base/app-status.yaml", "reconcile/app-status-reconcile.yaml", "reconcile/app-status-reconcile-binding.yaml")
	target, sa := saTarget(ctx, t, c, "app-status")
	ns := c.Namespace(t)
	tenant := publishTenant(ctx, t, c, ns+"-a", appDir(t, "web"))
	playResourceSet(ctx, t, c, ns, tenant)
	if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", tenant.Name, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}

	// The admission policy holds the reconciler to the request annotation on ResourceSets too
	// (it may take a moment to be in force after it is applied).
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, last = sa.Resource(resourceSetGVR).Namespace("flux-system").Patch(ctx, ns, types.MergePatchType,
			[]byte(`{"spec":{"inputs":[{"tenant":"other"}]}}`), metav1.PatchOptions{FieldManager: verify.FieldManager})
		return last != nil && strings.Contains(last.Error(), policyRefusal), nil
	}); err != nil {
		t.Fatalf("the reconciler changed a ResourceSet's spec: %v (last answer: %v)", err, last)
	}

	start := time.Now()
	done := startRun(ctx, verify.Request{Targets: []verify.Target{target}, Resources: []flux.Ref{rset(ns)},
		Timeout: 2 * time.Minute, Workloads: true, Reconcile: verify.ReconcileOn})
	var token, manager string
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		token, manager = requestedAt(ctx, t, c, resourceSetGVR, ns)
		return token != "", nil
	}); err != nil {
		t.Fatalf("the run never asked ResourceSet %s to reconcile: %v", ns, err)
	}
	if manager != verify.FieldManager {
		t.Errorf("requestedAt %q set by %q, want %q", token, manager, verify.FieldManager)
	}
	// Until the operator has handled the request, the state before it must not pass.
	select {
	case run := <-done:
		t.Fatalf("the run ended before the ResourceSet handled its request: %+v", run.Results[0])
	case <-time.After(2 * time.Second):
	}
	handled := time.Now()
	writeResourceSetStatus(ctx, t, c, ns, func(obj *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(obj.Object, token, "status", "lastHandledReconcileAt")
	})
	got := (<-done).Results[0]
	if got.Verdict != result.VerdictCurrent {
		t.Fatalf("verdict %s (%s): %s; want Current once the request was handled", got.Verdict, got.Code, got.Message)
	}
	t.Logf("Current %s after the operator handled the request (%s after the start)", time.Since(handled).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if r := got.Reconcile; r == nil || !slices.Contains(r.Requested, "ResourceSet/flux-system/"+ns) {
		t.Errorf("reconcile %+v: want ResourceSet/flux-system/%s requested", got.Reconcile, ns)
	}
	// The reader may list FluxReports (none here) and the Deployments of flux-system.
	if p := got.Preflight; p != nil {
		for _, n := range p.Notes {
			if strings.Contains(n, "could not read") {
				t.Errorf("preflight note %q: the shipped reader may read what the preflight reads", n)
			}
		}
	}
	body, _ := json.Marshal(got.Preflight)
	t.Logf("preflight: %s", body)
}
