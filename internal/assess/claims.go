package assess

import (
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// storageClassesKey is the list of the cluster's StorageClasses: whether a claim's class binds
// it only once a pod uses it.
var storageClassesKey = ListKey{GVR: schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}}

// selectedNodeAnnotation is where the scheduler names the node of the first pod that uses a
// claim whose class waits for one; the provisioner then creates the volume there.
const selectedNodeAnnotation = "volume.kubernetes.io/selected-node"

// judgeClaimObject judges a PersistentVolumeClaim. One whose StorageClass binds it only when a
// pod that uses it is scheduled (volumeBindingMode: WaitForFirstConsumer, the default class of
// most managed clusters), and that no scheduled pod uses yet, stays Pending, and kstatus
// InProgress, until one does: a claim for a CronJob, or for a workload scaled to zero, would
// be waited for to the timeout. Such a claim is reported as not verified, neither waited for
// nor failed; a workload of the app that mounts it waits for its binding itself. Any other
// claim, or one kustomize-controller skips or the team's annotation says to ignore, is judged
// as a workload.
func judgeClaimObject(a *assessor, e *Assessment, v objectVisit, now time.Time) *flux.Ref {
	if kustomizeSkip(v) == flux.NotSkipped && !v.memo.ignoreReadiness {
		if note := a.awaitsFirstConsumer(&v); note != "" {
			v.ro.Message = joinMessage(v.ro.Message, note)
			e.AwaitingConsumer++
			e.Objects = append(e.Objects, v.ro)
			return nil
		}
	}
	a.judgeWorkload(e, &v, now)
	return nil
}

// awaitsFirstConsumer says why v's claim is not bound when its class waits for a pod that uses
// it and none is scheduled; "" when it is bound, another class's, or the classes cannot be
// read (the claim is then waited for, as kstatus says, and its message says why when the
// credentials may not list them).
func (a *assessor) awaitsFirstConsumer(v *objectVisit) string {
	if v.u == nil || v.ro.Status != result.ObjectInProgress {
		return ""
	}
	phase, _, _ := unstructured.NestedString(v.u.Object, "status", "phase")
	class, _, _ := unstructured.NestedString(v.u.Object, "spec", "storageClassName")
	// A claim that names its volume is bound to it at once, whatever its class (Kubernetes
	// v1.36.3's pv_controller.go syncUnboundClaim): Pending, its volume is missing.
	volume, _, _ := unstructured.NestedString(v.u.Object, "spec", "volumeName")
	if _, selected := v.u.GetAnnotations()[selectedNodeAnnotation]; phase != "Pending" || class == "" || volume != "" || selected {
		return ""
	}
	l := a.list(storageClassesKey)
	if !l.Synced() {
		if err := l.Err(); err != nil && apierrors.IsForbidden(err) {
			v.ro.Message = joinMessage(v.ro.Message, "the credentials may not list storageclasses (403): grant get, list and watch on them to tell a claim bound on first use from one stuck")
		}
		return ""
	}
	a.consistent(storageClassesKey, l, v.owner.Object.ID)
	obj, ok := l.Object("", class)
	if !ok {
		return ""
	}
	sc, ok := AsUnstructured(obj, storageClassesKey.GVR.GroupVersion().WithKind("StorageClass"))
	if !ok {
		return ""
	}
	if mode, _, _ := unstructured.NestedString(sc.Object, "volumeBindingMode"); mode != "WaitForFirstConsumer" {
		return ""
	}
	return "not verified: its StorageClass " + sanitize.Compact(class) + " binds it when a pod that uses it is scheduled (volumeBindingMode: WaitForFirstConsumer), and none is yet"
}
