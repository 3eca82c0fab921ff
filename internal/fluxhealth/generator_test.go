package fluxhealth_test

import (
	"testing"

	swapi "github.com/fluxcd/source-watcher/api/v2/v1beta1"

	"github.com/org/app-status-action/internal/flux"
)

// TestObservedSourcesDigestIsSourceWatchers: flux.ObservedSourcesDigest, which the pure
// decision compares with an ArtifactGenerator's status.observedSourcesDigest, is
// source-watcher's own HashObservedSources (its package imports controller-runtime, which
// internal/flux never does; this package's tests may), whatever the sources, their number and
// their order; a change of any field, or of an alias, changes it.
func TestObservedSourcesDigestIsSourceWatchers(t *testing.T) {
	t.Parallel()
	git := swapi.ObservedSource{Digest: "sha256:1111", Revision: "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
		OriginRevision: "ignored", URL: "http://source-controller.flux-system.svc/gitrepository/flux-system/app/a1b2c3d4.tar.gz"}
	oci := swapi.ObservedSource{Digest: "sha256:2222", Revision: "latest@sha256:2222", URL: "http://source-controller/ocirepository/apps/web/2222.tar.gz"}
	tests := []map[string]swapi.ObservedSource{
		{},
		{"app": git},
		{"app": git, "web": oci},
		{"web": git, "app": oci},
		{"z-last": oci, "a-first": git, "m|id=[x]": {}},
		{"app": {Digest: git.Digest, Revision: git.Revision}},
	}
	seen := map[string]int{}
	for i, sources := range tests {
		ours := map[string]flux.ObservedSource{}
		for alias, s := range sources {
			ours[alias] = flux.ObservedSource{Digest: s.Digest, Revision: s.Revision, URL: s.URL}
		}
		got, want := flux.ObservedSourcesDigest(ours), swapi.HashObservedSources(sources)
		if got != want {
			t.Errorf("case %d: ObservedSourcesDigest(%v) = %s, want source-watcher's %s", i, sources, got, want)
		}
		if j, ok := seen[got]; ok {
			t.Errorf("cases %d and %d have the same digest %s", j, i, got)
		}
		seen[got] = i
	}
}
