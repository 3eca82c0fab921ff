package assess

import (
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/result"
)

// listing is the Kustomization flux-system/app with its status, listing the objects of
// inventory ids.
func listing(status string, ids ...string) string {
	var entries strings.Builder
	for _, id := range ids {
		entries.WriteString("    - {id: " + id + ", v: v1}\n")
	}
	return strings.Replace(kustomization(status), "    - {id: shop_web_apps_Deployment, v: v1}\n    - {id: shop_web__Service, v: v1}\n", entries.String(), 1)
}

// statefulSetOnDelete is the StatefulSet shop/db (two replicas, updateStrategy OnDelete) at
// generation 3, which the merge's template change made, with updated of its pods on the
// update revision. Under OnDelete the controller never moves currentRevision
// (completeRollingUpdate is for RollingUpdate only), so it stays db-old whatever the pods run.
func statefulSetOnDelete(observed, updated string) string {
	return `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop, generation: 3, uid: sts-db}
spec: {replicas: 2, updateStrategy: {type: OnDelete}}
status:
  observedGeneration: ` + observed + `
  replicas: 2
  readyReplicas: 2
  availableReplicas: 2
  currentReplicas: 2
  updatedReplicas: ` + updated + `
  currentRevision: db-old
  updateRevision: db-new`
}

// daemonSetOnDelete is the DaemonSet shop/agent (updateStrategy OnDelete, on two nodes) at
// generation 3, which the merge's template change made, with updated of its pods on the new
// template and available of them available (and ready).
func daemonSetOnDelete(updated, available string) string {
	return `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: shop, generation: 3, uid: ds-agent}
spec: {updateStrategy: {type: OnDelete}}
status:
  observedGeneration: 3
  desiredNumberScheduled: 2
  currentNumberScheduled: 2
  updatedNumberScheduled: ` + updated + `
  numberAvailable: ` + available + `
  numberReady: ` + available
}

// deploymentPaused is the Deployment shop/web (one replica) at generation 4, which the
// merge's template change made, paused by kubectl rollout pause (spec.paused, not in Git, is
// kept by Flux's apply): the controller made no ReplicaSet of the new template (updated of
// its pods are) and wrote Progressing=Unknown DeploymentPaused.
func deploymentPaused(updated, available string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, generation: 4, uid: dep-web, annotations: {deployment.kubernetes.io/revision: "3"}}
spec: {replicas: 1, paused: true, progressDeadlineSeconds: 600}
status:
  observedGeneration: 4
  replicas: 1
  updatedReplicas: ` + updated + `
  readyReplicas: ` + available + `
  availableReplicas: ` + available + `
  conditions:
  - {type: Available, status: "True"}
  - {type: Progressing, status: Unknown, reason: DeploymentPaused, message: Deployment is paused}`
}

// TestHeldRollouts: a workload whose new revision waits for a person is named as not rolled
// out, counted, and fails the cluster as a suspended object under fail-on-suspended, as an
// object kustomize-controller pauses is (TestVerdicts); once its pods are all updated, or
// while its controller has not seen the spec or Flux has not applied the revision, it is
// judged as any other.
func TestHeldRollouts(t *testing.T) {
	t.Parallel()
	const (
		sts = "StatefulSet/shop/db"
		ds  = "DaemonSet/shop/agent"
		dep = "Deployment/shop/web"
	)
	stsID, dsID, depID := "shop_db_apps_StatefulSet", "shop_agent_apps_DaemonSet", "shop_web_apps_Deployment"
	onDelete := "not rolled out: updateStrategy OnDelete, its pods change only when deleted (0 of 2 updated)"
	suspended := outcome{Verdict: result.VerdictSuspended, Code: result.CodeFluxSuspended, Reason: "Suspended"}
	runFixtureCases(t, []fixtureCase{
		// kstatus calls an OnDelete StatefulSet Current at once: both pods run db-old.
		{name: "StatefulSet OnDelete, no pod updated: Current, named as not rolled out",
			looks: []fixtureLook{{docs: []string{listing(readyOnB, stsID), statefulSetOnDelete("3", "0")},
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{sts: result.ObjectCurrent}, ObjectSays: map[string]string{sts: onDelete}}}}},
		{name: "StatefulSet OnDelete, no pod updated, under fail-on-suspended: fails as suspended", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{listing(readyOnB, stsID), statefulSetOnDelete("3", "0")},
				want: expected{Outcome: suspended, Says: []string{sts + ": " + onDelete}}}}},
		{name: "StatefulSet OnDelete, one pod deleted and recreated: one of two updated", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{listing(readyOnB, stsID), statefulSetOnDelete("3", "1")},
				want: expected{Outcome: suspended, Says: []string{"(1 of 2 updated)"}}}}},
		{name: "StatefulSet OnDelete, every pod updated (currentRevision left behind): Current", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{listing(readyOnB, stsID), statefulSetOnDelete("3", "2")},
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{sts: result.ObjectCurrent}}}}},
		{name: "StatefulSet OnDelete, its controller has not seen the spec: waited for", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{listing(readyOnB, stsID), statefulSetOnDelete("2", "0")},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "InProgress"}}}}},
		{name: "StatefulSet OnDelete, the revision not applied yet: the Kustomization waited for", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{listing(buildingB, stsID), statefulSetOnDelete("3", "0")},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "Progressing"}}}}},
		// kstatus waits on "Updated: 0/2" for ever: the DaemonSet controller updates no pod
		// under OnDelete. An hour later, the run has not waited.
		{name: "DaemonSet OnDelete, no pod updated: Current, named as not rolled out",
			looks: []fixtureLook{{docs: []string{listing(readyOnB, dsID), daemonSetOnDelete("0", "2")}, at: fixtureNow.Add(time.Hour),
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{ds: result.ObjectCurrent}, ObjectSays: map[string]string{ds: onDelete}}}}},
		{name: "DaemonSet OnDelete, no pod updated, under fail-on-suspended: fails as suspended", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{listing(readyOnB, dsID), daemonSetOnDelete("0", "2")},
				want: expected{Outcome: suspended, Says: []string{ds + ": " + onDelete}}}}},
		{name: "DaemonSet OnDelete, no pod updated, one not available: not verified",
			looks: []fixtureLook{{docs: []string{listing(readyOnB, dsID), daemonSetOnDelete("0", "1")},
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{ds: result.ObjectInProgress},
					ObjectSays: map[string]string{ds: "not verified: updateStrategy OnDelete, its pods change only when deleted (0 of 2 updated)"}}}}},
		{name: "DaemonSet OnDelete, every pod updated: Current", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{listing(readyOnB, dsID), daemonSetOnDelete("2", "2")},
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{ds: result.ObjectCurrent}}}}},
		{name: "DaemonSet OnDelete, every pod updated, one not available yet: waited for", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{listing(readyOnB, dsID), daemonSetOnDelete("2", "1")},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "InProgress"}}}}},
		// kstatus waits on "Updated: 0/1" for ever, and the controller skips the progress
		// deadline while paused: an hour later, the run has not waited.
		{name: "Deployment paused, its new template not rolled out: Current, named as not rolled out",
			looks: []fixtureLook{{docs: []string{listing(readyOnB, depID), deploymentPaused("0", "1")}, at: fixtureNow.Add(time.Hour),
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{dep: result.ObjectCurrent},
					ObjectSays: map[string]string{dep: "not rolled out: spec.paused (kubectl rollout resume)"}}}}},
		{name: "Deployment paused, under fail-on-suspended: fails as suspended", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{listing(readyOnB, depID), deploymentPaused("0", "1")},
				want: expected{Outcome: suspended, Says: []string{dep + ": not rolled out: spec.paused (kubectl rollout resume)"}}}}},
		{name: "Deployment paused, its previous pod not available: not verified",
			looks: []fixtureLook{{docs: []string{listing(readyOnB, depID), deploymentPaused("0", "0")},
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{dep: result.ObjectInProgress},
					ObjectSays: map[string]string{dep: "not verified: spec.paused (kubectl rollout resume)"}}}}},
		// Paused once its rollout was done: nothing waits for a person. The controller skips
		// the deadline and writes Progressing=Unknown while paused, which kstatus, reading the
		// API's default progressDeadlineSeconds, would wait on for ever: it is judged without
		// the deadline.
		{name: "Deployment paused, its pods all of the new template: Current", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{listing(readyOnB, depID), deploymentPaused("1", "1")},
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{dep: result.ObjectCurrent}}}}},
		{name: "Deployment paused, its pods all of the new template, one not available: waited for", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{listing(readyOnB, depID), strings.Replace(deploymentPaused("1", "1"), "{type: Available, status: \"True\"}", "{type: Available, status: \"False\"}", 1)},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "InProgress"}, Says: []string{"Deployment not Available"}}}}},
	})
}
