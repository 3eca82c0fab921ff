package verify

import (
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/classify"
)

// TestRelistKeepsGoneJobAsStored: a Job that a new list no longer holds (deleted while the
// watch was down) is kept as the store held it, not transformed again: its annotations that
// Flux applied stay (a second vetting, with its managedFields already dropped, would take
// them for the cluster's own), and the store's object is not written while a pass may read it
// (run with -race: the relist and a conversion of the stored Job at once).
func TestRelistKeepsGoneJobAsStored(t *testing.T) {
	t.Parallel()
	key := assess.ListKey{GVR: assess.JobsGVR, Namespace: "shop"}
	n := &notifyingStore{transform: transformFor(key), onChange: func() {}, keepGone: true, clock: time.Now}
	ignore := classify.AnnotationPrefix + "ignore-readiness"
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate", Namespace: "shop", ResourceVersion: "1",
		Annotations: map[string]string{ignore: "true"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kustomize-controller", Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:` + ignore + `":{}}}}`)}}}}
	if err := n.Replace([]any{job}, "1"); err != nil {
		t.Fatal(err)
	}
	stored := n.List()[0].(runtime.Object)
	if got := stored.(*batchv1.Job).Annotations[ignore]; got != "true" {
		t.Fatalf("stored Job's %s = %q, want the annotation Flux applied kept", ignore, got)
	}
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = runtime.DefaultUnstructuredConverter.ToUnstructured(stored) })
	if err := n.Replace(nil, "2"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	last, _, gone := n.gone("shop/migrate")
	if !gone {
		t.Fatal("the Job the new list no longer holds is not kept as gone")
	}
	if got := last.(*batchv1.Job).Annotations[ignore]; got != "true" {
		t.Errorf("gone Job's %s = %q, want the annotation Flux applied kept (not vetted again)", ignore, got)
	}
}
