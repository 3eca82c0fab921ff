package assess

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/result"
)

// claim is the PersistentVolumeClaim shop/data of class, in phase, with extra metadata
// (annotations) when set.
func claim(class, phase, metadata string) string {
	return `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: shop` + metadata + `}
spec: {storageClassName: ` + class + `, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
status: {phase: ` + phase + `}`
}

// storageClass is the StorageClass gp3, binding its claims in mode.
func storageClass(mode string) string {
	return `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: gp3}
provisioner: ebs.csi.aws.com
volumeBindingMode: ` + mode
}

// TestClaimsBoundOnFirstUse: a claim whose StorageClass binds it only once a pod that uses it
// is scheduled (WaitForFirstConsumer), and no pod is yet, is not verified and holds nothing: a
// claim for a CronJob waited to the timeout. Any other Pending claim is waited for, as kstatus
// says: one of an Immediate class (provisioning), one a pod was scheduled with (the scheduler
// named its node), one whose class cannot be read.
func TestClaimsBoundOnFirstUse(t *testing.T) {
	t.Parallel()
	app := ks("app", "GitRepository", "app", "", revB, "shop_data__PersistentVolumeClaim")
	const claimID = "PersistentVolumeClaim/shop/data"
	notVerified := expected{Outcome: current,
		Objects:    map[string]result.ObjectStatus{claimID: result.ObjectInProgress},
		ObjectSays: map[string]string{claimID: "not verified: its StorageClass gp3 binds it when a pod that uses it is scheduled"}}
	waits := expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: string(result.ObjectInProgress)},
		Says: []string{claimID, "PVC is not Bound"}}
	forbiddenWait := waits
	forbiddenWait.ObjectSays = map[string]string{claimID: "the credentials may not list storageclasses (403)"}
	runFixtureCases(t, []fixtureCase{
		{name: "a class that waits for the first consumer, no pod scheduled: not verified",
			looks: []fixtureLook{{docs: []string{app, gitRepo(), claim("gp3", "Pending", ""), storageClass("WaitForFirstConsumer")}, want: notVerified}}},
		{name: "the same claim once bound: Current",
			looks: []fixtureLook{{docs: []string{app, gitRepo(), claim("gp3", "Bound", ""), storageClass("WaitForFirstConsumer")},
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{claimID: result.ObjectCurrent}}}}},
		{name: "a pod was scheduled with it: provisioning, waited for",
			looks: []fixtureLook{{docs: []string{app, gitRepo(), claim("gp3", "Pending", ", annotations: {volume.kubernetes.io/selected-node: node-1}"),
				storageClass("WaitForFirstConsumer")}, want: waits}}},
		{name: "a claim that names its volume: the volume is missing, waited for",
			looks: []fixtureLook{{docs: []string{app, gitRepo(), strings.Replace(claim("gp3", "Pending", ""), "spec: {", "spec: {volumeName: pv-gone, ", 1),
				storageClass("WaitForFirstConsumer")}, want: waits}}},
		{name: "an Immediate class: provisioning, waited for",
			looks: []fixtureLook{{docs: []string{app, gitRepo(), claim("gp3", "Pending", ""), storageClass("Immediate")}, want: waits}}},
		{name: "its class not there: waited for",
			looks: []fixtureLook{{docs: []string{app, gitRepo(), claim("gp2", "Pending", ""), storageClass("WaitForFirstConsumer")}, want: waits}}},
		{name: "the classes may not be listed: waited for, and it says why",
			forbidden: []schema.GroupResource{storageClassesKey.GVR.GroupResource()},
			looks:     []fixtureLook{{docs: []string{app, gitRepo(), claim("gp3", "Pending", ""), storageClass("WaitForFirstConsumer")}, want: forbiddenWait}}},
		{name: "the team's annotation still rules it",
			looks: []fixtureLook{{docs: []string{app, gitRepo(), claim("gp3", "Pending", ", annotations: {app-status.io/ignore-readiness: 'true'}"),
				storageClass("WaitForFirstConsumer")},
				want: expected{Outcome: current, ObjectSays: map[string]string{claimID: IgnoredReadiness}}}}},
	})
}

// TestCurrentMessageCountsUnboundClaims: the Current message counts a claim not verified for
// its class apart from those the credentials may not read.
func TestCurrentMessageCountsUnboundClaims(t *testing.T) {
	t.Parallel()
	e := &Assessment{Objects: []result.Object{{Status: result.ObjectCurrent}, {Status: result.ObjectInProgress}}, AwaitingConsumer: 1}
	const want = "1 objects Current, 1 not verified (claims bound when a pod that uses them is scheduled)"
	if got := CurrentMessage(e); got != want {
		t.Errorf("CurrentMessage = %q, want %q", got, want)
	}
}
