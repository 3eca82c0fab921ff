package flux

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestMayStillCreate: a Kustomization or a ResourceSet may still create a missing object
// while its controller is at work, waits for its dependencies or its source, or has not
// started its spec or its source's newest revision; once it applied them, failed them,
// stalled or is suspended, it will not.
func TestMayStillCreate(t *testing.T) {
	t.Parallel()
	rsKind := KindResourceSet
	tests := []struct {
		name    string
		kind    Kind
		fixture string
		// artifact is its source's artifact revision; "" when the source was not read.
		artifact string
		deleted  bool   // it has a deletionTimestamp
		want     string // what it says it is doing; "" when it will not create anything
	}{
		{"applied what its source offers", KindKustomization, "ks-ready.yaml", "main@sha1:" + newSHA, false, ""},
		{"applied, source not read", KindKustomization, "ks-ready.yaml", "", false, ""},
		{"its source offers a newer revision", KindKustomization, "ks-ready.yaml", "main@sha1:" + newerSHA, false, "has not applied main@sha1:1d47386 of GitRepository/flux-system/flux-system yet"},
		{"building", KindKustomization, "ks-building.yaml", "main@sha1:" + newSHA, false, "is applying main@sha1:c2a6b03"},
		{"health-checking", KindKustomization, "ks-reconciling.yaml", "main@sha1:" + newSHA, false, "is applying main@sha1:c2a6b03"},
		{"being deleted", KindKustomization, "ks-reconciling.yaml", "main@sha1:" + newSHA, true, ""},
		{"never reconciled", KindKustomization, "ks-new.yaml", "", false, "has not reconciled yet"},
		{"waiting for a dependency", KindKustomization, "ks-dependency.yaml", "main@sha1:" + newSHA, false, "waits for its dependencies"},
		{"a new generation", KindKustomization, "ks-generation.yaml", "main@sha1:" + newSHA, false, "has not reconciled generation 3 yet"},
		{"build failed", KindKustomization, "ks-build-failed.yaml", "main@sha1:" + newSHA, false, ""},
		{"build failed on a substituteFrom Secret not there yet", KindKustomization, "ks-substitute-missing.yaml", "main@sha1:" + newSHA, false,
			`retries a build that failed on what may still come (post build failed for 'Deployment.v1.apps/podinfo': substitute from 'Secret/cluster-secrets' error`},
		{"apply refused", KindKustomization, "ks-reconciliation-failed.yaml", "main@sha1:" + newSHA, false, ""},
		{"apply failed on a CRD not served yet", KindKustomization, "ks-crd-missing.yaml", "main@sha1:" + newSHA, false,
			`retries an apply that failed on what may still come (ServiceMonitor/apps/podinfo dry-run failed: no matches for kind "ServiceMonitor"`},
		{"a remote one waiting for its kubeconfig Secret applies elsewhere", KindKustomization, "ks-kubeconfig-missing.yaml", "main@sha1:" + newSHA, false, ""},
		{"path missing in the revision", KindKustomization, "ks-artifact-failed.yaml", "main@sha1:" + oldSHA, false, ""},
		{"stalled", KindKustomization, "ks-stalled.yaml", "main@sha1:" + newSHA, false, ""},
		{"suspended", KindKustomization, "ks-suspended.yaml", "main@sha1:" + newerSHA, false, ""},
		{"ResourceSet reconciling", rsKind, "rset-progressing.yaml", "", false, "is reconciling"},
		{"ResourceSet waiting for a dependency", rsKind, "rset-dependency.yaml", "", false, "waits for its dependencies"},
		{"ResourceSet at a new generation", rsKind, "rset-generation.yaml", "", false, "has not reconciled generation 3 yet"},
		{"ResourceSet ready", rsKind, "rset-ready.yaml", "", false, ""},
		{"ResourceSet disabled", rsKind, "rset-disabled.yaml", "", false, ""},
		{"ResourceSet created disabled", rsKind, "rset-created-disabled.yaml", "", false, ""},
		{"ResourceSet failed", rsKind, "rset-apply-failed.yaml", "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := loadFixture(t, tt.fixture)
			if tt.deleted {
				obj.SetDeletionTimestamp(&metav1.Time{Time: time.Date(2025, 9, 18, 10, 5, 0, 0, time.UTC)})
			}
			var src *Source
			if tt.artifact != "" {
				src = &Source{Ref: SourceOf(tt.kind, obj), Revision: tt.artifact}
			}
			got := MayStillCreate(tt.kind, obj, src)
			if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
				t.Errorf("MayStillCreate(%s) = %q, want %q", tt.fixture, got, tt.want)
			}
		})
	}
}

// TestRetriedFailure: the failure a Kustomization retries on what may still come is timed by
// its end and retryInterval, and says what it lacks and, from status.history, since when it
// fails so; any other state is not such a failure.
func TestRetriedFailure(t *testing.T) {
	t.Parallel()
	failedAt := time.Date(2025, 9, 18, 10, 4, 12, 0, time.UTC)
	tests := []struct {
		kind    Kind
		fixture string
		want    RetriedApply
		ok      bool
	}{
		{KindKustomization, "ks-crd-missing.yaml", RetriedApply{FailedAt: failedAt, AttemptStarted: failedAt.Add(-time.Minute),
			Every: 2 * time.Minute, Groups: []string{"monitoring.coreos.com"}}, true},
		{KindKustomization, "ks-namespace-missing.yaml", RetriedApply{FailedAt: failedAt, AttemptStarted: failedAt.Add(-2200 * time.Millisecond),
			Every: 10 * time.Minute, FailingSince: time.Date(2025, 9, 17, 8, 0, 3, 0, time.UTC), Namespaces: []string{"shop"}}, true},
		{KindKustomization, "ks-reconciliation-failed.yaml", RetriedApply{}, false},
		{KindKustomization, "ks-build-failed.yaml", RetriedApply{}, false},
		// Its words name no namespace or CRD: the engine's rule for words that name nothing.
		{KindKustomization, "ks-substitute-missing.yaml", RetriedApply{FailedAt: failedAt, AttemptStarted: failedAt.Add(-time.Minute), Every: 2 * time.Minute}, true},
		{KindKustomization, "ks-reconciling.yaml", RetriedApply{}, false},
		{KindResourceSet, "rset-apply-failed.yaml", RetriedApply{}, false},
	}
	for _, tt := range tests {
		got, ok := RetriedFailure(tt.kind, loadFixture(t, tt.fixture))
		if ok != tt.ok {
			t.Errorf("RetriedFailure(%s) ok = %t, want %t", tt.fixture, ok, tt.ok)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("RetriedFailure(%s) (-want +got):\n%s", tt.fixture, diff)
		}
	}
}

// TestRetriedFailureHistory: the history entry is the latest attempt's only when it is a
// failure that ended with it, of the revision last attempted; an object applied to another
// cluster names no lack of this one; a ResourceSet's next attempt waits out the back-off its
// failures reached.
func TestRetriedFailureHistory(t *testing.T) {
	t.Parallel()
	failedAt := time.Date(2025, 9, 18, 10, 4, 12, 0, time.UTC)
	tests := []struct {
		name string
		edit func(obj *unstructured.Unstructured)
		want func(r *RetriedApply)
	}{
		{name: "the latest attempt's entry", edit: func(*unstructured.Unstructured) {}, want: func(*RetriedApply) {}},
		{name: "an entry of another revision",
			edit: func(obj *unstructured.Unstructured) {
				setHistory(t, obj, "metadata", map[string]any{"revision": "main@sha1:c00dbbc9"})
			},
			want: func(r *RetriedApply) { r.FailingSince, r.AttemptStarted = time.Time{}, failedAt.Add(-time.Minute) }},
		{name: "an entry of an earlier attempt",
			edit: func(obj *unstructured.Unstructured) { setHistory(t, obj, "lastReconciled", "2025-09-18T09:54:12Z") },
			want: func(r *RetriedApply) { r.FailingSince, r.AttemptStarted = time.Time{}, failedAt.Add(-time.Minute) }},
		{name: "a success entry",
			edit: func(obj *unstructured.Unstructured) {
				setHistory(t, obj, "lastReconciledStatus", "ReconciliationSucceeded")
			},
			want: func(r *RetriedApply) { r.FailingSince, r.AttemptStarted = time.Time{}, failedAt.Add(-time.Minute) }},
		{name: "applied to another cluster",
			edit: func(obj *unstructured.Unstructured) {
				if err := unstructured.SetNestedField(obj.Object, map[string]any{"secretRef": map[string]any{"name": "remote"}}, "spec", "kubeConfig"); err != nil {
					t.Fatal(err)
				}
			},
			want: func(r *RetriedApply) { r.Namespaces = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := loadFixture(t, "ks-namespace-missing.yaml")
			tt.edit(obj)
			want := RetriedApply{FailedAt: failedAt, AttemptStarted: failedAt.Add(-2200 * time.Millisecond), Every: 10 * time.Minute,
				FailingSince: time.Date(2025, 9, 17, 8, 0, 3, 0, time.UTC), Namespaces: []string{"shop"}}
			tt.want(&want)
			got, ok := RetriedFailure(KindKustomization, obj)
			if !ok {
				t.Fatal("RetriedFailure() ok = false, want true")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("RetriedFailure() (-want +got):\n%s", diff)
			}
		})
	}
}

// setHistory sets field of the first status.history entry of obj to value.
func setHistory(t *testing.T, obj *unstructured.Unstructured, field string, value any) {
	t.Helper()
	history, _, err := unstructured.NestedSlice(obj.Object, "status", "history")
	if err != nil || len(history) == 0 {
		t.Fatalf("no status.history: %v", err)
	}
	history[0].(map[string]any)[field] = value
	if err := unstructured.SetNestedSlice(obj.Object, history, "status", "history"); err != nil {
		t.Fatal(err)
	}
}

// TestLackedKindWords: apimachinery's NoKindMatchError in its three forms names the group.
func TestLackedKindWords(t *testing.T) {
	t.Parallel()
	for words, want := range map[string]string{
		`ServiceMonitor/apps/web dry-run failed: no matches for kind "ServiceMonitor" in version "monitoring.coreos.com/v1"`: "monitoring.coreos.com",
		`no matches for kind "Certificate" in versions ["cert-manager.io/v1" "cert-manager.io/v1beta1"]`:                     "cert-manager.io",
		`no matches for kind "Widget" in group "example.com"`:                                                                "example.com",
		`no matches for kind "Foo" in version "v1"`:                                                                          "",
	} {
		got := ""
		if m := lackedKindWords.FindStringSubmatch(words); m != nil {
			got = m[1] + m[2]
		}
		if got != want {
			t.Errorf("group of %q = %q, want %q", words, got, want)
		}
	}
}

// TestBackoffAfter: controller-runtime's delay doubles from 750ms after each failure, up to
// 15m; with the count unknown, 15m.
func TestBackoffAfter(t *testing.T) {
	t.Parallel()
	for failures, want := range map[int]time.Duration{0: 15 * time.Minute, 1: 750 * time.Millisecond, 2: 1500 * time.Millisecond,
		11: 768 * time.Second, 12: 15 * time.Minute, 64: 15 * time.Minute} {
		if got := backoffAfter(failures); got != want {
			t.Errorf("backoffAfter(%d) = %s, want %s", failures, got, want)
		}
	}
}

// TestNextAttempt: the controller has surely tried again a tenth and 30s past its interval;
// with no interval known there is no such moment.
func TestNextAttempt(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 9, 18, 10, 4, 12, 0, time.UTC)
	if got, want := (RetriedApply{FailedAt: at, Every: 10 * time.Minute}).NextAttempt(), at.Add(11*time.Minute+30*time.Second); !got.Equal(want) {
		t.Errorf("NextAttempt() = %s, want %s", got, want)
	}
	if got := (RetriedApply{FailedAt: at}).NextAttempt(); !got.IsZero() {
		t.Errorf("NextAttempt() with no interval = %s, want zero", got)
	}
}

// TestProvidersMayGenerate: a ResourceSet fed by input providers may generate an object of a
// kind and namespace its resources or its template name (or leave to the inputs); one with
// inline inputs, disabled, or being deleted will not.
func TestProvidersMayGenerate(t *testing.T) {
	t.Parallel()
	rset := func(spec string, metadata ...string) *unstructured.Unstructured {
		t.Helper()
		md := "{name: previews, namespace: flux-system}"
		if len(metadata) > 0 {
			md = metadata[0]
		}
		return parseObject(t, "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSet\nmetadata: "+md+"\nspec:\n"+spec)
	}
	const fed = "  inputsFrom: [{kind: ResourceSetInputProvider, name: pull-requests}]\n"
	app := Ref{Kind: KindKustomization, Namespace: "apps", Name: "app"}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		ref  Ref
		want bool
	}{
		{"resources of that kind and namespace", rset(fed + "  resources: [{apiVersion: v1, kind: Kustomization, metadata: {name: app, namespace: apps}}]"), app, true},
		{"resources of that kind, another namespace", rset(fed + "  resources: [{apiVersion: v1, kind: Kustomization, metadata: {name: app, namespace: shop}}]"), app, false},
		{"resources of that kind, a templated namespace", rset(fed + "  resources: [{apiVersion: v1, kind: Kustomization, metadata: {name: app, namespace: \"pr-<< inputs.id >>\"}}]"), app, true},
		{"resources of that kind, no namespace", rset(fed + "  resources: [{apiVersion: v1, kind: Kustomization, metadata: {name: app}}]"), app, true},
		{"resources of that kind and namespace, another name", rset(fed + "  resources: [{apiVersion: v1, kind: Kustomization, metadata: {name: web, namespace: apps}}]"), app, false},
		{"resources of that kind and namespace, a templated name", rset(fed + "  resources: [{apiVersion: v1, kind: Kustomization, metadata: {name: \"app-<< inputs.id >>\", namespace: apps}}]"), app, true},
		{"resources of another kind", rset(fed + "  resources: [{apiVersion: v1, kind: HelmRelease, metadata: {name: app, namespace: apps}}]"), app, false},
		{"a template of that kind", rset(fed + "  resourcesTemplate: |\n    kind: Kustomization\n    metadata: {name: app}\n"), app, true},
		{"a template of a quoted kind", rset(fed + "  resourcesTemplate: |\n    kind: \"Kustomization\"\n"), app, true},
		{"a template of a templated kind", rset(fed + "  resourcesTemplate: |\n    kind: << inputs.kind >>\n"), app, true},
		{"a template of another kind", rset(fed + "  resourcesTemplate: |\n    kind: HelmRelease\n"), app, false},
		{"inline inputs", rset("  inputs: [{id: \"1\"}]\n  resources: [{apiVersion: v1, kind: Kustomization, metadata: {name: app}}]"), app, false},
		{"disabled", rset(fed+"  resources: [{apiVersion: v1, kind: Kustomization, metadata: {name: app}}]",
			"{name: previews, namespace: flux-system, annotations: {fluxcd.controlplane.io/reconcile: disabled}}"), app, false},
		{"being deleted", rset(fed+"  resources: [{apiVersion: v1, kind: Kustomization, metadata: {name: app}}]",
			"{name: previews, namespace: flux-system, deletionTimestamp: \"2026-11-01T12:00:00Z\", finalizers: [x]}"), app, false},
	}
	for _, tt := range tests {
		if got := ProvidersMayGenerate(tt.obj, tt.ref); got != tt.want {
			t.Errorf("%s: ProvidersMayGenerate(%s) = %t, want %t", tt.name, tt.ref.ID(), got, tt.want)
		}
	}
}
