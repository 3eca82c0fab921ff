package assess

import (
	"strings"
	"testing"

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
  currentReplicas: 2
  updatedReplicas: ` + updated + `
  currentRevision: db-old
  updateRevision: db-new`
}

// TestHeldRollouts: a workload whose new revision waits for a person is named as not rolled
// out, counted, and fails the cluster as a suspended object under fail-on-suspended, as an
// object kustomize-controller pauses is (TestVerdicts); once its pods are all updated, or
// while its controller has not seen the spec or Flux has not applied the revision, it is
// judged as any other.
func TestHeldRollouts(t *testing.T) {
	t.Parallel()
	const sts = "StatefulSet/shop/db"
	stsID := "shop_db_apps_StatefulSet"
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
	})
}
