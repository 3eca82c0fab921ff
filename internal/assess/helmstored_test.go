package assess

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// storageSecret is Helm's storage secret of release web version in shop, its release field
// holding release (as Helm's secret driver stores it, not gzipped: base64 of the JSON; raw when
// it is not a map).
func storageSecret(t *testing.T, version string, release any) string {
	t.Helper()
	data, ok := release.(string)
	if !ok {
		b, err := json.Marshal(release)
		if err != nil {
			t.Fatal(err)
		}
		data = base64.StdEncoding.EncodeToString(b)
	}
	return `apiVersion: v1
kind: Secret
metadata: {name: sh.helm.release.v1.web.v` + version + `, namespace: shop}
type: helm.sh/release.v1
data: {release: ` + base64.StdEncoding.EncodeToString([]byte(data)) + `}`
}

// TestUndecodableHelmRelease: a HelmRelease without an inventory (helm-controller older than
// 1.5) whose latest release's storage secret does not decode is Unverified at once
// (helm-release-undecodable), in words that quote nothing of the secret: Helm writes a release
// version once, and the run waited for it to the timeout. Before the HelmRelease has applied
// the expected revision, the next release may decode: it waits. Another release version is
// read for itself.
func TestUndecodableHelmRelease(t *testing.T) {
	t.Parallel()
	noInventory := func(hr string) string {
		return strings.Replace(hr, "  inventory:\n    entries: []", "", 1)
	}
	hr := noInventory(hrWith(""))
	docs := func(hr string, more ...string) []string {
		return append([]string{ks("app", "GitRepository", "app", "", revB, "shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "shop_web-values__ConfigMap"),
			gitRepo(), hr, ociRepo(), valuesConfigMap("2026-11-01T11:00:00Z")}, more...)
	}
	good := map[string]any{"name": "web", "namespace": "shop", "version": 2,
		"manifest": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-values\n"}
	// A release whose manifest is no Kubernetes object: helmstorage's error names the release.
	notObjects := map[string]any{"name": "hunter2-release", "namespace": "shop", "version": 2, "manifest": "- hunter2\n"}
	unverified := expected{Outcome: outcome{Verdict: result.VerdictUnverified, Code: result.CodeHelmReleaseUndecodable, Reason: "InvalidRelease"},
		Says: []string{"HelmRelease/shop/web has no .status.inventory", "the Helm storage secret shop/sh.helm.release.v1.web.v2 of its latest release holds nothing that decodes as a Helm release"}}
	// Version 3 of the release, its chart the same.
	v3 := strings.Replace(hr, "version: 2, status: deployed", "version: 3, status: deployed", 1)
	good3 := map[string]any{"name": "web", "namespace": "shop", "version": 3, "manifest": good["manifest"]}
	// The source serves a newer chart the HelmRelease has not released yet.
	newer := strings.Replace(ociRepo(), "1.0.0@sha256:"+dig1, "1.1.0@sha256:"+dig2, 1)
	runFixtureCases(t, []fixtureCase{
		{name: "a release that decodes: its objects are judged",
			looks: []fixtureLook{{docs: docs(hr, storageSecret(t, "2", good)),
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{"HelmRelease/shop/web": result.ObjectCurrent, "ConfigMap/shop/web-values": result.ObjectCurrent}}}}},
		{name: "not base64: Unverified at once",
			looks: []fixtureLook{{docs: docs(hr, storageSecret(t, "2", "%%% not base64")), want: unverified}}},
		{name: "a manifest of no Kubernetes object: Unverified at once",
			looks: []fixtureLook{{docs: docs(hr, storageSecret(t, "2", notObjects)), want: unverified}}},
		{name: "a newer release version that decodes is read for itself",
			looks: []fixtureLook{{docs: docs(v3, storageSecret(t, "2", "%%% not base64"), storageSecret(t, "3", good3)),
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{"HelmRelease/shop/web": result.ObjectCurrent, "ConfigMap/shop/web-values": result.ObjectCurrent}}}}},
		{name: "the expected chart not released yet: waits",
			looks: []fixtureLook{{docs: []string{ks("app", "GitRepository", "app", "", revB, "shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "shop_web-values__ConfigMap"),
				gitRepo(), hr, newer, valuesConfigMap("2026-11-01T11:00:00Z"), storageSecret(t, "2", "%%% not base64")},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "UpgradeSucceeded"}, Says: []string{"waiting for 1.1.0"}}}}},
	})
	// Nothing of the secret is quoted.
	view := newFixtureView(t, strings.Join(docs(hr, storageSecret(t, "2", notObjects)), "\n---\n"), fixtureReads...)
	rev, err := flux.ParseRevision(revB)
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}}, Revision: rev, Workloads: true,
		Health: fluxhealth.New(t.Context())}
	if e := Assess(view, NewMemory(), spec, fixtureNow); e.Fatal == nil || strings.Contains(e.Fatal.Message, "hunter2") {
		t.Errorf("the verdict quotes the secret, or there is none: %+v", e.Fatal)
	}
}
