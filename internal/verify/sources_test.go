package verify

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/assess"
)

// TestStoreRemembersDeletedJobs: a Job deleted by a watch event, or missing from a new list,
// is remembered with its last state.
func TestStoreRemembersDeletedJobs(t *testing.T) {
	t.Parallel()
	job := func(name, condition string) *unstructured.Unstructured {
		var m map[string]any
		doc := `apiVersion: batch/v1
kind: Job
metadata: {name: ` + name + `, namespace: shop}
spec: {ttlSecondsAfterFinished: 1}
status: {conditions: [{type: ` + condition + `, status: "True"}]}`
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	now := fixtureNow
	n := &notifyingStore{transform: transformFor(assess.ListKey{GVR: assess.JobsGVR}), onChange: func() {}, keepGone: true,
		clock: func() time.Time { return now }}
	w := &watch{store: n}
	if err := n.Replace([]any{job("migrate", "Complete"), job("seed", "Failed"), job("old", "Complete"), job("again", "Complete")}, "1"); err != nil {
		t.Fatal(err)
	}
	if err := n.Delete(job("old", "Complete")); err != nil { // before the owner applied
		t.Fatal(err)
	}
	applied := now.Add(time.Second)
	now = applied.Add(time.Second)
	if err := n.Delete(job("migrate", "Complete")); err != nil {
		t.Fatal(err)
	}
	if err := n.Delete(job("again", "Complete")); err != nil {
		t.Fatal(err)
	}
	if err := n.Add(job("again", "Complete")); err != nil { // created again
		t.Fatal(err)
	}
	if err := n.Replace([]any{job("again", "Complete")}, "2"); err != nil { // seed vanished while the watch was down
		t.Fatal(err)
	}
	// What the store remembers (assess's jobGone judges it: TestJobGone there).
	gone := func(name string) (string, bool) {
		last, at, ok := w.Gone("shop", name)
		if !ok {
			return "", false
		}
		job, _ := last.(*batchv1.Job)
		if job == nil || len(job.Status.Conditions) == 0 {
			t.Fatalf("%s: last state %T, want the Job with its conditions", name, last)
		}
		return string(job.Status.Conditions[0].Type) + " at " + at.Sub(applied).String(), true
	}
	for name, want := range map[string]string{"migrate": "Complete at 1s", "seed": "Failed at 1s", "old": "Complete at -1s"} {
		if got, ok := gone(name); !ok || got != want {
			t.Errorf("%s: gone %q (%t), want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"other", "again"} {
		if got, ok := gone(name); ok {
			t.Errorf("%s (never seen, created again): gone %q, want not gone", name, got)
		}
	}
}
