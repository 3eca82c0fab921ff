package assess

import (
	"slices"
	"strings"
	"testing"

	"github.com/org/app-status-action/internal/result"
)

// TestHelmCRDsNotCreated: helm-controller v1.6.4 lists every CRD of a chart's crds/ directory
// in the HelmRelease's inventory, but creates none when the policy of the action that made the
// release is Skip. Such a CRD, not found, is not verified and holds nothing: the run waited
// for it to the timeout. Under any other policy, or one that exists, it is judged as any other.
func TestHelmCRDsNotCreated(t *testing.T) {
	t.Parallel()
	const (
		entry = "_widgets.example.com_apiextensions.k8s.io_CustomResourceDefinition"
		crdID = "CustomResourceDefinition/widgets.example.com"
	)
	docs := func(spec, action string, more ...string) []string {
		hr := strings.Replace(hrWith(spec, entry), "lastAttemptedReleaseAction: upgrade", "lastAttemptedReleaseAction: "+action, 1)
		return append([]string{ks("app", "GitRepository", "app", "", revB, "shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "shop_web-values__ConfigMap"),
			gitRepo(), hr, ociRepo(), valuesConfigMap("2026-11-01T11:00:00Z")}, more...)
	}
	reads := append(slices.Clone(fixtureReads), "customresourcedefinitions")
	objects := func(crd result.ObjectStatus) map[string]result.ObjectStatus {
		return map[string]result.ObjectStatus{"HelmRelease/shop/web": result.ObjectCurrent, "ConfigMap/shop/web-values": result.ObjectCurrent, crdID: crd}
	}
	notCreated := func(policy string) expected {
		return expected{Outcome: current, Objects: objects(result.ObjectNotFound),
			ObjectSays: map[string]string{crdID: "not verified: not created by helm-controller: " + policy}}
	}
	waits := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "NotFound"}, Says: []string{crdID + " not found"}}
	crd := createdAt("CustomResourceDefinition", "widgets.example.com", "2026-01-01T00:00:00Z") +
		"\nstatus: {conditions: [{type: NamesAccepted, status: 'True'}, {type: Established, status: 'True'}]}"
	runFixtureCases(t, []fixtureCase{
		{name: "released by an upgrade whose policy is Skip: not verified", reads: reads,
			looks: []fixtureLook{{docs: docs("  upgrade: {crds: Skip}\n", "upgrade"), want: notCreated("spec.upgrade.crds: Skip")}}},
		{name: "released by an install whose policy is Skip: not verified", reads: reads,
			looks: []fixtureLook{{docs: docs("  install: {crds: Skip}\n", "install"), want: notCreated("spec.install.crds: Skip")}}},
		{name: "the action not recorded, both policies Skip: not verified", reads: reads,
			looks: []fixtureLook{{docs: docs("  install: {crds: Skip}\n  upgrade: {crds: Skip}\n", "''"),
				want: notCreated("spec.install.crds and spec.upgrade.crds: Skip")}}},
		{name: "an upgrade with no policy creates it (Create): waited for", reads: reads,
			looks: []fixtureLook{{docs: docs("", "upgrade"), want: waits}}},
		{name: "an upgrade with Create: waited for", reads: reads,
			looks: []fixtureLook{{docs: docs("  upgrade: {crds: Create}\n", "upgrade"), want: waits}}},
		{name: "released by an upgrade, only the install's policy Skip: waited for", reads: reads,
			looks: []fixtureLook{{docs: docs("  install: {crds: Skip}\n", "upgrade"), want: waits}}},
		{name: "the action not recorded, only the upgrade's policy Skip: waited for", reads: reads,
			looks: []fixtureLook{{docs: docs("  upgrade: {crds: Skip}\n", "''"), want: waits}}},
		{name: "a CRD that exists, the policy Skip: Current", reads: reads,
			looks: []fixtureLook{{docs: docs("  upgrade: {crds: Skip}\n", "upgrade", crd),
				want: expected{Outcome: current, Objects: objects(result.ObjectCurrent)}}}},
	})
}

// TestCurrentMessageCountsCRDsNotCreated: the Current message counts a CRD helm-controller does
// not create apart from the objects the credentials may not read.
func TestCurrentMessageCountsCRDsNotCreated(t *testing.T) {
	t.Parallel()
	e := &Assessment{Objects: []result.Object{{Status: result.ObjectCurrent}, {Status: result.ObjectNotFound}}, CRDsNotCreated: 1}
	const want = "1 objects Current, 1 not verified (CRDs helm-controller does not create: crds: Skip)"
	if got := CurrentMessage(e); got != want {
		t.Errorf("CurrentMessage = %q, want %q", got, want)
	}
}
