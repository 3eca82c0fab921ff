package verify

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

var jobKind = schema.GroupKind{Group: "batch", Kind: "Job"}

// objectStatus computes an inventory object's status with kstatus, except that a Job is
// Current only once it has completed. kstatus calls a Job Current as soon as it has started,
// which would pass a migration that is about to fail; Flux's own health checks wait for Jobs
// to complete the same way (fluxcd/pkg/runtime statusreaders.NewCustomJobStatusReader).
func objectStatus(u *unstructured.Unstructured) (*status.Result, error) {
	res, err := status.Compute(u)
	if err != nil || res.Status != status.CurrentStatus || u.GroupVersionKind().GroupKind() != jobKind {
		return res, err
	}
	if suspended, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend"); suspended {
		return res, nil
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Complete" && m["status"] == string(corev1.ConditionTrue) {
			return res, nil
		}
	}
	count := func(field string) int64 {
		n, _, _ := unstructured.NestedInt64(u.Object, "status", field)
		return n
	}
	return &status.Result{
		Status:  status.InProgressStatus,
		Message: fmt.Sprintf("Job in progress: %d active, %d succeeded, %d failed", count("active"), count("succeeded"), count("failed")),
	}, nil
}
