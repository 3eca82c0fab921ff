package flux

import (
	"strings"
	"testing"
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
		want     string // what it says it is doing; "" when it will not create anything
	}{
		{"applied what its source offers", KindKustomization, "ks-ready.yaml", "main@sha1:" + newSHA, ""},
		{"applied, source not read", KindKustomization, "ks-ready.yaml", "", ""},
		{"its source offers a newer revision", KindKustomization, "ks-ready.yaml", "main@sha1:" + newerSHA, "has not applied main@sha1:1d47386 of GitRepository/flux-system/flux-system yet"},
		{"building", KindKustomization, "ks-building.yaml", "main@sha1:" + newSHA, "is applying main@sha1:c2a6b03"},
		{"health-checking", KindKustomization, "ks-reconciling.yaml", "main@sha1:" + newSHA, "is applying main@sha1:c2a6b03"},
		{"never reconciled", KindKustomization, "ks-new.yaml", "", "has not reconciled yet"},
		{"waiting for a dependency", KindKustomization, "ks-dependency.yaml", "main@sha1:" + newSHA, "waits for its dependencies"},
		{"a new generation", KindKustomization, "ks-generation.yaml", "main@sha1:" + newSHA, "has not reconciled generation 3 yet"},
		{"build failed", KindKustomization, "ks-build-failed.yaml", "main@sha1:" + newSHA, ""},
		{"path missing in the revision", KindKustomization, "ks-artifact-failed.yaml", "main@sha1:" + oldSHA, ""},
		{"stalled", KindKustomization, "ks-stalled.yaml", "main@sha1:" + newSHA, ""},
		{"suspended", KindKustomization, "ks-suspended.yaml", "main@sha1:" + newerSHA, ""},
		{"ResourceSet reconciling", rsKind, "rset-progressing.yaml", "", "is reconciling"},
		{"ResourceSet waiting for a dependency", rsKind, "rset-dependency.yaml", "", "waits for its dependencies"},
		{"ResourceSet at a new generation", rsKind, "rset-generation.yaml", "", "has not reconciled generation 3 yet"},
		{"ResourceSet ready", rsKind, "rset-ready.yaml", "", ""},
		{"ResourceSet disabled", rsKind, "rset-disabled.yaml", "", ""},
		{"ResourceSet created disabled", rsKind, "rset-created-disabled.yaml", "", ""},
		{"ResourceSet failed", rsKind, "rset-apply-failed.yaml", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := loadFixture(t, tt.fixture)
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
