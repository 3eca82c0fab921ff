package verify

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// TestStoppedOnHeldFailureGathersEvidence: a run that reaches its deadline while a failure is
// held for its own reconcile request (the state before it, which Flux never handled) ends
// Timeout with that failure's code and reason, and its failing object carries the evidence a
// Failed verdict gathers (its pod's Warning events, its container's log), read although the
// run's context has ended. A timeout on a mere wait, or a cancelled run, gathers none.
func TestStoppedOnHeldFailureGathersEvidence(t *testing.T) {
	t.Parallel()
	before := &assess.ReconcileWait{ID: "Kustomization/flux-system/app", Token: "t1", Field: "lastHandledReconcileAt", Before: true}
	pulling := &assess.Finding{Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "ImagePullBackOff", Message: "Deployment/shop/web: image pull"}
	waiting := &assess.Finding{Verdict: result.VerdictInProgress, Code: result.CodeNeverReady, Reason: "Progressing", Message: "Deployment/shop/web: 0/1 ready"}
	pullEvent := []result.Event{{Object: "Pod/shop/web-7d9f-abcde", Reason: "Failed", Message: `Failed to pull image "web:2"`, Count: 1}}
	tests := []struct {
		name    string
		fatal   *assess.Finding
		pending *assess.Finding
		cause   error
		want    verdictReason
		// events and logs are the evidence the failing object carries then.
		events []result.Event
		logs   string
	}{
		{name: "timed out on a held failure", fatal: pulling, cause: errTimeout,
			want: verdictReason{Verdict: result.VerdictTimeout, Code: result.CodeImagePull, Reason: "ImagePullBackOff"},
			// (The fake clientset's log of any container.)
			events: pullEvent, logs: "fake logs"},
		{name: "timed out waiting", pending: waiting, cause: errTimeout,
			want: verdictReason{Verdict: result.VerdictTimeout, Code: result.CodeNeverReady, Reason: "Progressing"}},
		{name: "cancelled on a held failure", fatal: pulling, cause: context.Canceled,
			want: verdictReason{Verdict: result.VerdictCancelled, Code: result.CodeImagePull, Reason: "Cancelled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			event := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web-7d9f-abcde.1", Namespace: "shop"},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "web-7d9f-abcde"},
				Type:           corev1.EventTypeWarning, Reason: "Failed", Message: `Failed to pull image "web:2"`, Count: 1}
			s := &clusterState{core: fake.NewClientset(event).CoreV1(), req: Request{Timeout: 5 * time.Minute},
				throttled: &throttleRecorder{clock: time.Now}}
			failure := &result.Failure{Code: result.CodeImagePull, Reason: "ImagePullBackOff", Pod: "web-7d9f-abcde", Container: "web"}
			last := &assess.Assessment{Fatal: tt.fatal, Pending: tt.pending,
				Objects: []result.Object{{Kind: "Deployment", Namespace: "shop", Name: "web", Status: result.ObjectFailed, Failure: failure}}}
			ctx, cancel := context.WithCancelCause(t.Context())
			cancel(tt.cause)
			got := s.stopped(ctx, last, assess.Facts{Reconcile: before})
			got.Message = ""
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stopped (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.events, failure.Events); diff != "" || failure.Logs != tt.logs {
				t.Errorf("evidence (-want +got):\n%s\nlogs %q, want %q (events error %q, logs error %q)", diff, failure.Logs, tt.logs, failure.EventsError, failure.LogsError)
			}
		})
	}
}

// TestHeldEvidenceBounded: the evidence of a failure held at the deadline is read past the
// run's timeout, but from an API server that never answers it costs heldEvidenceGrace, not
// gatherEvidence's own 15 s: the run's timeout stays the bound a job's step can rely on,
// give or take a few seconds.
func TestHeldEvidenceBounded(t *testing.T) {
	t.Parallel()
	hung := fakeapi.Start(fakeapi.Options{Behaviour: fakeapi.Hang})
	t.Cleanup(hung.Close)
	core, err := corev1client.NewForConfig(insecureConfig(hung))
	if err != nil {
		t.Fatal(err)
	}
	s := &clusterState{core: core, req: Request{Timeout: 5 * time.Minute}, throttled: &throttleRecorder{clock: time.Now}}
	before := &assess.ReconcileWait{ID: "Kustomization/flux-system/app", Token: "t1", Field: "lastHandledReconcileAt", Before: true}
	failure := &result.Failure{Code: result.CodeImagePull, Reason: "ImagePullBackOff", Pod: "web-7d9f-abcde", Container: "web"}
	last := &assess.Assessment{Fatal: &assess.Finding{Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "ImagePullBackOff", Message: "Deployment/shop/web: image pull"},
		Objects: []result.Object{{Kind: "Deployment", Namespace: "shop", Name: "web", Status: result.ObjectFailed, Failure: failure}}}
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errTimeout)
	start := time.Now()
	got := s.stopped(ctx, last, assess.Facts{Reconcile: before})
	took := time.Since(start)
	if got.Verdict != result.VerdictTimeout || failure.EventsError == "" {
		t.Errorf("stopped = %s, events error %q; want Timeout, and the events' read given up", got.Verdict, failure.EventsError)
	}
	if took > 10*time.Second {
		t.Errorf("the held failure's evidence took %s past the deadline, want at most heldEvidenceGrace (%s)", took, heldEvidenceGrace)
	}
}
