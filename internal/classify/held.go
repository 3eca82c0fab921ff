package classify

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// HeldRollout says why the rollout of workload u waits for a person, "" when it does not: its
// controller has seen the latest spec and keeps pods of a previous template, on purpose, until
// someone acts. A StatefulSet whose updateStrategy is OnDelete updates no pod: the controller
// creates a missing pod from the update revision, but recreates one of an older revision only
// once it is deleted (k8s.io/kubernetes v1.36.3, pkg/controller/statefulset:
// stateful_set_control.go's updateStatefulSet returns before any update under OnDelete, and
// completeRollingUpdate never moves currentRevision under it, so only updatedReplicas below
// replicas says pods are pending). kstatus calls such a StatefulSet Current at once.
//
// It reads the object as the cache holds it, never converted: it runs once per state of
// every workload.
func HeldRollout(u *unstructured.Unstructured) string {
	if u == nil || u.GroupVersionKind().Group != appsv1.GroupName {
		return ""
	}
	obj := u.Object
	observed, _ := intField(obj, "status", "observedGeneration")
	if stale(u.GetGeneration(), observed) {
		return ""
	}
	switch u.GetKind() {
	case "StatefulSet":
		if strategy, _, _ := unstructured.NestedString(obj, "spec", "updateStrategy", "type"); strategy != string(appsv1.OnDeleteStatefulSetStrategyType) {
			return ""
		}
		want, ok := intField(obj, "spec", "replicas")
		if !ok {
			want = 1 // the API's default
		}
		pods, _ := intField(obj, "status", "replicas")
		updated, _ := intField(obj, "status", "updatedReplicas")
		if updated >= pods {
			return ""
		}
		return onDelete(updated, want)
	}
	return ""
}

// onDelete is what holds a set whose updateStrategy is OnDelete, updated of want pods on the
// update revision.
func onDelete(updated, want int64) string {
	return fmt.Sprintf("updateStrategy OnDelete, its pods change only when deleted (%d of %d updated)", updated, want)
}

// intField reads an integer of obj at path, as the API's JSON decodes it (int64) or as a
// YAML or JSON decoder into any gives it (float64).
func intField(obj map[string]any, path ...string) (int64, bool) {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, path...)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}
