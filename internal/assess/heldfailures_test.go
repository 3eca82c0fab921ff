package assess

import (
	"strings"
	"testing"

	"github.com/org/app-status-action/internal/result"
)

// TestHeldRolloutFailuresStand: a rollout that waits for a person (a paused Deployment, an
// OnDelete DaemonSet) is judged by its pods of the new template first: one that cannot pull
// its image fails the rollout as it would unpaused, and is never passed as held.
func TestHeldRolloutFailuresStand(t *testing.T) {
	t.Parallel()
	// 2 replicas wanted: 2 old pods + 1 new (maxSurge) that cannot pull, then paused.
	mid := strings.Replace(deploymentPulling, "spec: {replicas: 1}\nstatus:\n  observedGeneration: 3\n  replicas: 2\n  updatedReplicas: 1",
		"spec: {replicas: 2, paused: true}\nstatus:\n  observedGeneration: 3\n  replicas: 3\n  updatedReplicas: 1\n  readyReplicas: 2\n  availableReplicas: 2", 1)
	if mid == deploymentPulling {
		t.Fatal("no replace")
	}
	notPaused := strings.Replace(mid, ", paused: true", "", 1)
	deadline := strings.Replace(mid, "{type: Progressing, status: \"True\", reason: ReplicaSetUpdated}", "{type: Progressing, status: \"False\", reason: ProgressDeadlineExceeded}", 1)
	deadline = strings.Replace(deadline, "paused: true", "paused: true, progressDeadlineSeconds: 600", 1)
	deadlineNotPaused := strings.Replace(deadline, "paused: true, ", "", 1)
	fail := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "ErrImagePull"}}
	runFixtureCases(t, []fixtureCase{
		{name: "control: not paused, new pod cannot pull: fails",
			looks: []fixtureLook{{docs: []string{heldListing(), notPaused}, want: fail}}},
		{name: "paused mid-rollout, new pod cannot pull: fails",
			looks: []fixtureLook{{docs: []string{heldListing(), mid}, want: fail}}},
		{name: "control: deadline exceeded not paused",
			looks: []fixtureLook{{docs: []string{heldListing(), deadlineNotPaused}, want: fail}}},
		{name: "paused after deadline exceeded: fails",
			looks: []fixtureLook{{docs: []string{heldListing(), deadline}, want: fail}}},
	})
}

// heldListing is the Kustomization flux-system/app Ready on revB, listing the Deployment
// shop/web alone.
func heldListing() string {
	return strings.Replace(kustomization(readyOnB), "    - {id: shop_web__Service, v: v1}\n", "", 1)
}

// heldDaemonSetPulling is the OnDelete DaemonSet shop/agent on two nodes, one pod recreated
// from the new template (its ControllerRevision abc) that cannot pull its image.
var heldDaemonSetPulling = daemonSetOnDelete("1", "1") + `
---
apiVersion: apps/v1
kind: ControllerRevision
metadata:
  name: agent-abc
  namespace: shop
  uid: cr-agent-abc
  labels: {controller-revision-hash: abc}
  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: ds-agent, controller: true}]
revision: 2
---
apiVersion: v1
kind: Pod
metadata:
  name: agent-x
  namespace: shop
  labels: {controller-revision-hash: abc}
  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: ds-agent, controller: true}]
spec: {containers: [{name: agent, image: "agent:nope"}]}
status:
  phase: Pending
  containerStatuses:
  - {name: agent, image: "agent:nope", imageID: "", ready: false, restartCount: 0, state: {waiting: {reason: ErrImagePull, message: "agent:nope: not found"}}}`

// TestHeldDaemonSetFailureStands: an OnDelete DaemonSet whose pod recreated from the new
// template cannot pull its image fails, as a RollingUpdate one does.
func TestHeldDaemonSetFailureStands(t *testing.T) {
	t.Parallel()
	ls := strings.Replace(kustomization(readyOnB), "    - {id: shop_web_apps_Deployment, v: v1}\n    - {id: shop_web__Service, v: v1}\n", "    - {id: shop_agent_apps_DaemonSet, v: v1}\n", 1)
	reads := append(append([]string{}, fixtureReads...), "controllerrevisions")
	fail := expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "ErrImagePull"}}
	runFixtureCases(t, []fixtureCase{
		{name: "control: RollingUpdate DaemonSet, new pod cannot pull", reads: reads,
			looks: []fixtureLook{{docs: []string{ls, strings.Replace(heldDaemonSetPulling, "OnDelete", "RollingUpdate", 1)}, want: fail}}},
		{name: "OnDelete DaemonSet, a recreated pod of the new template cannot pull: fails", reads: reads,
			looks: []fixtureLook{{docs: []string{ls, heldDaemonSetPulling}, want: fail}}},
	})
}

// TestHeldStatefulSetNotReady: an OnDelete StatefulSet with no pod ready is not verified, not
// passed as Current and not rolled out.
func TestHeldStatefulSetNotReady(t *testing.T) {
	t.Parallel()
	sts := strings.Replace(statefulSetOnDelete("3", "1"), "readyReplicas: 2", "readyReplicas: 0", 1)
	runFixtureCases(t, []fixtureCase{
		{name: "OnDelete StatefulSet, 1 of 2 updated, no pod ready: not verified",
			looks: []fixtureLook{{docs: []string{listing(readyOnB, "shop_db_apps_StatefulSet"), sts},
				want: expected{Outcome: current, ObjectSays: map[string]string{"StatefulSet/shop/db": "not verified"}}}}},
	})
}

// TestHeldPausedBeforeTheTemplate: a Deployment paused before its template changed has no
// ReplicaSet of the new template: its revision names the previous ReplicaSet, whose pod
// cannot pull its image. Nothing of the rollout runs to fail: it is held, not verified,
// never failed on the previous template's pod.
func TestHeldPausedBeforeTheTemplate(t *testing.T) {
	t.Parallel()
	previous := strings.NewReplacer(
		`deployment.kubernetes.io/revision: "3"}}`, `deployment.kubernetes.io/revision: "2"}}`,
		"spec: {replicas: 1}\nstatus:\n  observedGeneration: 3\n  replicas: 2\n  updatedReplicas: 1",
		"spec: {replicas: 1, paused: true}\nstatus:\n  observedGeneration: 3\n  replicas: 1\n  updatedReplicas: 0",
		"{type: Progressing, status: \"True\", reason: ReplicaSetUpdated}", "{type: Progressing, status: Unknown, reason: DeploymentPaused}",
		`annotations: {deployment.kubernetes.io/revision: "3"}`+"\n  ownerReferences", `annotations: {deployment.kubernetes.io/revision: "2"}`+"\n  ownerReferences",
	).Replace(strings.ReplaceAll(deploymentPulling, "web-3", "web-2"))
	deadline := strings.Replace(previous, "{type: Progressing, status: Unknown, reason: DeploymentPaused}",
		"{type: Progressing, status: \"False\", reason: ProgressDeadlineExceeded}", 1)
	held := expected{Outcome: current, ObjectSays: map[string]string{"Deployment/shop/web": "not verified: spec.paused (kubectl rollout resume)"}}
	runFixtureCases(t, []fixtureCase{
		{name: "the previous template's pod cannot pull", looks: []fixtureLook{{docs: []string{heldListing(), previous}, want: held}}},
		{name: "the previous rollout's deadline exceeded, kept while paused", looks: []fixtureLook{{docs: []string{heldListing(), deadline}, want: held}}},
	})
}
