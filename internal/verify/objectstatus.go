package verify

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/org/app-status-action/internal/result"
)

var jobGroupKind = schema.GroupKind{Group: "batch", Kind: "Job"}

// objectStatus computes an inventory object's status with kstatus, and a message saying
// what it waits for, except that a Job is Current only once it has completed. kstatus calls a Job Current as soon as it has started,
// which would pass a migration that is about to fail; Flux's own health checks wait for Jobs
// to complete the same way (fluxcd/pkg/runtime statusreaders.NewCustomJobStatusReader).
func objectStatus(u *unstructured.Unstructured) (result.ObjectStatus, string, error) {
	res, err := status.Compute(u)
	if err != nil {
		return result.ObjectUnknown, "", fmt.Errorf("compute status: %w", err)
	}
	computed := result.ObjectStatus(res.Status.String())
	if res.Status != status.CurrentStatus || u.GroupVersionKind().GroupKind() != jobGroupKind {
		return computed, res.Message, nil
	}
	if suspended, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend"); suspended {
		return computed, res.Message, nil
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Complete" && m["status"] == string(corev1.ConditionTrue) {
			return computed, res.Message, nil
		}
	}
	count := func(field string) int64 {
		n, _, _ := unstructured.NestedInt64(u.Object, "status", field)
		return n
	}
	return result.ObjectInProgress, fmt.Sprintf("Job in progress: %d active, %d succeeded, %d failed", count("active"), count("succeeded"), count("failed")), nil
}
