package verify

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// TestTemplateWrittenOf: a cached Deployment's or DaemonSet's facts say when its pod template
// was last written, from the managedFields entries that own spec.template (kustomize-controller's
// apply, kubectl edit), never from one that owns only the replicas (Flagger scaling the target)
// nor from an annotation the cluster holds.
func TestTemplateWrittenOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		want      string
	}{
		{name: "the apply that wrote the template, not Flagger's later scale",
			doc: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  managedFields:
  - {manager: kustomize-controller, operation: Apply, time: "2026-11-01T11:50:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {}}}}}
  - {manager: flagger, operation: Update, time: "2026-11-01T11:58:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:replicas": {}}}}
  - {manager: kube-controller-manager, operation: Update, subresource: status, time: "2026-11-01T11:59:00Z", fieldsType: FieldsV1, fieldsV1: {"f:status": {}}}`,
			want: "2026-11-01T11:50:00Z"},
		{name: "the latest of two writers of the template",
			doc: `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  managedFields:
  - {manager: kustomize-controller, operation: Apply, time: "2026-11-01T11:50:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {}}}}
  - {manager: kubectl-edit, operation: Update, time: "2026-11-01T11:52:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {"f:metadata": {}}}}}`,
			want: "2026-11-01T11:52:00Z"},
		{name: "not Flagger's scale-to-zero node selector on a DaemonSet it rolled back",
			doc: `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  managedFields:
  - {manager: kustomize-controller, operation: Apply, time: "2026-11-01T11:50:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {"f:spec": {}}}}}
  - {manager: flagger, operation: Update, time: "2026-11-01T11:51:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {"f:spec": {"f:nodeSelector": {".": {}, "f:flagger.app/scale-to-zero": {}}}}}}}`,
			want: "2026-11-01T11:50:00Z"},
		{name: "a writer of the node selector that also wrote another field",
			doc: `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  managedFields:
  - {manager: kustomize-controller, operation: Apply, time: "2026-11-01T11:50:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {"f:spec": {}}}}}
  - {manager: kubectl-edit, operation: Update, time: "2026-11-01T11:51:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {"f:spec": {"f:nodeSelector": {"f:flagger.app/scale-to-zero": {}, "f:zone": {}}}}}}}`,
			want: "2026-11-01T11:51:00Z"},
		{name: "an annotation the cluster holds is never taken",
			doc: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {"app-status.internal/template-written": "2030-01-01T00:00:00Z"}`,
			want: ""},
		{name: "not a Deployment or DaemonSet",
			doc: `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  annotations: {"app-status.internal/template-written": "2030-01-01T00:00:00Z"}
  managedFields:
  - {manager: kustomize-controller, operation: Apply, time: "2026-11-01T11:50:00Z", fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {}}}}`,
			want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tt.doc), &u.Object); err != nil {
				t.Fatal(err)
			}
			_, facts, err := stripManagedFields(u)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if !facts.TemplateWritten.IsZero() {
				got = facts.TemplateWritten.UTC().Format(time.RFC3339)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("TemplateWritten (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKeepSpecWriters: a cached ResourceSet keeps, of its managedFields, the entries that own
// fields of its spec, with their time, so that its Ready can be dated against the spec's last
// write (flux.ResourceSetReadyBeforeSpec); the status writer's entry is dropped.
func TestKeepSpecWriters(t *testing.T) {
	t.Parallel()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata:
  name: tenants
  generation: 3
  managedFields:
  - {manager: kustomize-controller, operation: Apply, time: "2026-11-01T11:50:00Z", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {}}, "f:spec": {"f:inputs": {}}}}
  - {manager: flux-operator, operation: Update, subresource: status, time: "2026-11-01T11:59:00Z", fieldsType: FieldsV1, fieldsV1: {"f:status": {}}}
status:
  history:
  - {lastReconciled: "2026-11-01T11:49:59Z", lastReconciledDuration: 5s}
  conditions: [{type: Ready, status: "True", observedGeneration: 3}]`), &u.Object); err != nil {
		t.Fatal(err)
	}
	obj, _, err := keepSpecWriters(u)
	if err != nil {
		t.Fatal(err)
	}
	kept := obj.(*unstructured.Unstructured)
	var got []string
	for _, f := range kept.GetManagedFields() {
		got = append(got, f.Manager+" "+f.Time.UTC().Format("15:04:05")+" "+f.FieldsV1.GetRawString())
	}
	if diff := cmp.Diff([]string{`kustomize-controller 11:50:00 {"f:spec":{}}`}, got); diff != "" {
		t.Errorf("managedFields kept (-want +got):\n%s", diff)
	}
	if _, _, stale := flux.ResourceSetReadyBeforeSpec(kept); !stale {
		t.Error("ResourceSetReadyBeforeSpec on the cached object: not stale, want the reconcile dated before the spec's write")
	}
}

// TestCanaryOfFailure: the evidence of a workload's canary-failed is read from the Canary its
// message names, in the workload's namespace only.
func TestCanaryOfFailure(t *testing.T) {
	t.Parallel()
	failure := func(code result.Code, msg string) *result.Failure {
		return &result.Failure{Code: code, Message: msg}
	}
	tests := []struct {
		name string
		o    result.Object
		want string
	}{
		{name: "a Deployment judged by its Canary",
			o:    result.Object{Kind: "Deployment", Namespace: "shop", Name: "web", Failure: failure(result.CodeCanaryFailed, "Canary/shop/web-canary Failed: Canary analysis failed")},
			want: "web-canary"},
		{name: "the Canary itself (its own events are read anyway)",
			o: result.Object{Kind: "Canary", Namespace: "shop", Name: "web", Failure: failure(result.CodeCanaryFailed, "Canary/shop/web Failed")}},
		{name: "a Canary of another namespace is not read",
			o: result.Object{Kind: "Deployment", Namespace: "shop", Name: "web", Failure: failure(result.CodeCanaryFailed, "Canary/other/web Failed")}},
		{name: "another failure",
			o: result.Object{Kind: "Deployment", Namespace: "shop", Name: "web", Failure: failure(result.CodeCrashLoop, "Canary/shop/web Failed")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := canaryOf(tt.o); got != tt.want {
				t.Errorf("canaryOf(%+v) = %q, want %q", tt.o, got, tt.want)
			}
		})
	}
}
