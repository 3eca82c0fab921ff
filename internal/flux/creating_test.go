package flux

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		{"apply refused", KindKustomization, "ks-reconciliation-failed.yaml", "main@sha1:" + newSHA, false, ""},
		{"apply failed on a CRD not served yet", KindKustomization, "ks-crd-missing.yaml", "main@sha1:" + newSHA, false,
			`retries an apply that failed on what may still come (ServiceMonitor/apps/podinfo dry-run failed: no matches for kind "ServiceMonitor"`},
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
// its end and retryInterval; any other state is not such a failure.
func TestRetriedFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind    Kind
		fixture string
		every   time.Duration
		ok      bool
	}{
		{KindKustomization, "ks-crd-missing.yaml", 2 * time.Minute, true},
		{KindKustomization, "ks-reconciliation-failed.yaml", 0, false},
		{KindKustomization, "ks-build-failed.yaml", 0, false},
		{KindKustomization, "ks-reconciling.yaml", 0, false},
		{KindResourceSet, "rset-apply-failed.yaml", 0, false},
	}
	for _, tt := range tests {
		at, every, ok := RetriedFailure(tt.kind, loadFixture(t, tt.fixture))
		wantAt := time.Time{}
		if tt.ok {
			wantAt = time.Date(2025, 9, 18, 10, 4, 12, 0, time.UTC)
		}
		if ok != tt.ok || every != tt.every || !at.Equal(wantAt) {
			t.Errorf("RetriedFailure(%s) = %s, %s, %t, want %s, %s, %t", tt.fixture, at, every, ok, wantAt, tt.every, tt.ok)
		}
	}
}
