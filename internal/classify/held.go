package classify

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// HeldRollout says why the rollout of workload u waits for a person, "" when it does not: its
// controller has seen the latest spec and keeps pods of a previous template, on purpose, until
// someone acts. serving says whether what it runs meanwhile is all there, available and
// ready, as kstatus would call it Current but for the pending update; started whether a pod
// of the new template runs at all (a Deployment paused before its template changed has no
// ReplicaSet of it: its revision, its deadline and its pods are the previous template's).
//
// Under updateStrategy OnDelete the controller creates a missing pod from the new template
// but recreates one of an older template only once it is deleted (k8s.io/kubernetes v1.36.3,
// pkg/controller). A StatefulSet's updateStatefulSet returns before any update, and
// completeRollingUpdate never moves currentRevision under OnDelete, so only updatedReplicas
// below replicas says pods are pending; kstatus calls it Current at once. A DaemonSet's
// updateDaemonSet does nothing for OnDelete (daemon_controller.go), and kstatus waits on
// "Updated: 0/N" for ever. A paused Deployment (spec.paused, kubectl rollout pause) is only
// synced: no new ReplicaSet, no deadline, Progressing=Unknown DeploymentPaused
// (deployment_controller.go syncDeployment, sync.go sync and checkPausedConditions), and
// kstatus waits on "Updated: 0/N" for ever.
//
// It reads the object as the cache holds it, never converted: it runs once per state of
// every workload.
func HeldRollout(u *unstructured.Unstructured) (why string, serving, started bool) {
	if u == nil || u.GroupVersionKind().Group != appsv1.GroupName {
		return "", false, false
	}
	obj := u.Object
	observed, _ := intField(obj, "status", "observedGeneration")
	if stale(u.GetGeneration(), observed) {
		return "", false, false
	}
	switch u.GetKind() {
	case "StatefulSet":
		return heldStatefulSet(obj)
	case "DaemonSet":
		return heldDaemonSet(obj)
	case "Deployment":
		return heldDeployment(obj)
	}
	return "", false, false
}

// heldStatefulSet is HeldRollout for a StatefulSet: held while a pod runs an older revision
// (updatedReplicas below replicas), serving when it runs the pods it wants, all of them
// available and ready (kstatus calls one under OnDelete Current whatever its pods).
func heldStatefulSet(obj map[string]any) (why string, serving, started bool) {
	if strategy, _, _ := unstructured.NestedString(obj, "spec", "updateStrategy", "type"); strategy != string(appsv1.OnDeleteStatefulSetStrategyType) {
		return "", false, false
	}
	want, ok := intField(obj, "spec", "replicas")
	if !ok {
		want = 1 // the API's default
	}
	pods, _ := intField(obj, "status", "replicas")
	updated, _ := intField(obj, "status", "updatedReplicas")
	if updated >= pods {
		return "", false, false
	}
	available, _ := intField(obj, "status", "availableReplicas")
	ready, _ := intField(obj, "status", "readyReplicas")
	return onDelete(updated, want), pods == want && available >= want && ready >= want, updated > 0
}

// heldDaemonSet is HeldRollout for a DaemonSet: held while a node runs a pod of an older
// template (updatedNumberScheduled below currentNumberScheduled), serving when every node
// that should runs one, available and ready (kstatus's other rules).
func heldDaemonSet(obj map[string]any) (why string, serving, started bool) {
	if strategy, _, _ := unstructured.NestedString(obj, "spec", "updateStrategy", "type"); strategy != string(appsv1.OnDeleteDaemonSetStrategyType) {
		return "", false, false
	}
	desired, _ := intField(obj, "status", "desiredNumberScheduled")
	scheduled, _ := intField(obj, "status", "currentNumberScheduled")
	updated, _ := intField(obj, "status", "updatedNumberScheduled")
	if updated >= scheduled {
		return "", false, false
	}
	available, _ := intField(obj, "status", "numberAvailable")
	ready, _ := intField(obj, "status", "numberReady")
	return onDelete(updated, desired), scheduled >= desired && available >= desired && ready >= desired, updated > 0
}

// heldDeployment is HeldRollout for a Deployment: held while it is paused with fewer pods of
// its template than it wants (updatedReplicas below spec.replicas), serving when it runs no
// more pods than it wants, all of them available and ready.
func heldDeployment(obj map[string]any) (why string, serving, started bool) {
	if paused, _, _ := unstructured.NestedBool(obj, "spec", "paused"); !paused {
		return "", false, false
	}
	want, ok := intField(obj, "spec", "replicas")
	if !ok {
		want = 1 // the API's default
	}
	updated, _ := intField(obj, "status", "updatedReplicas")
	if updated >= want {
		return "", false, false
	}
	pods, _ := intField(obj, "status", "replicas")
	available, _ := intField(obj, "status", "availableReplicas")
	ready, _ := intField(obj, "status", "readyReplicas")
	return "spec.paused (kubectl rollout resume)", pods <= want && available >= want && ready >= want, updated > 0
}

// onDelete is what holds a set whose updateStrategy is OnDelete, updated of want pods on the
// update revision.
func onDelete(updated, want int64) string {
	return fmt.Sprintf("updateStrategy OnDelete, its pods change only when deleted (%d of %d updated)", updated, want)
}

// intField reads an integer of obj at path as the API's JSON decodes it (int64), as
// GetGeneration does; false when it is not there.
func intField(obj map[string]any, path ...string) (int64, bool) {
	n, ok, err := unstructured.NestedInt64(obj, path...)
	return n, ok && err == nil
}
