package verify

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/flux"
)

// TestUnhandled: without a revision to gate on (or with force), the verdict waits until the
// requests are sent and Flux has handled the run's own request, proven by the handled value
// moving to its token, or, in a later version of the object, to the token requested after it
// (another run's). A token is never compared with a clock: one "in the future" already there
// must not pass, nor the late handling of a request sent before the run's.
func TestUnhandled(t *testing.T) {
	t.Parallel()
	const (
		ours   = "2026-11-01T11:59:59Z"
		before = "2026-11-01T11:00:00Z"
		future = "2099-01-01T00:00:00Z"
		theirs = "2026-11-01T11:59:58Z" // another run's, written after ours by a clock behind
	)
	// root is the Kustomization at resourceVersion rv, with the request annotations and the
	// handled values of its status ("" for none).
	root := func(rv, requested, handled, forceRequested, forceHandled string) string {
		meta := `resourceVersion: "` + rv + `", annotations: {"reconcile.fluxcd.io/requestedAt": "` + requested + `", "reconcile.fluxcd.io/forceAt": "` + forceRequested + `"}`
		status := ""
		if handled != "" {
			status += `  lastHandledReconcileAt: "` + handled + "\"\n"
		}
		if forceHandled != "" {
			status += `  lastHandledForceAt: "` + forceHandled + "\"\n"
		}
		return strings.Replace(kustomization(status+readyOnB), `resourceVersion: "7"`, meta, 1)
	}
	// The run's request was accepted at resourceVersion 10.
	sent := func(handledBefore, forceBefore string, forced bool) flux.ReconcileRequest {
		return flux.ReconcileRequest{Token: ours, Forced: forced, ResourceVersion: "10",
			Before: map[string]string{"lastHandledReconcileAt": handledBefore, "lastHandledForceAt": forceBefore}}
	}
	tests := []struct {
		name     string
		obj      string
		req      flux.ReconcileRequest
		finished bool
		want     string // a part of the message, "" for none
		// after is set when what the run reads is no longer the state before its request:
		// a failure then is the verdict (assess.ReconcileWait.Before).
		after bool
		// forced is set when a failure of Helm's action read now is the state before a
		// forced request, with or without a revision (assess.ReconcileWait.Forced).
		forced bool
	}{
		{name: "requests not sent yet", obj: root("10", ours, before, "", ""), req: sent(before, "", false),
			want: "sending the reconcile requests"},
		{name: "not handled yet", obj: root("10", ours, before, "", ""), req: sent(before, "", false), finished: true,
			want: "waiting for Flux to handle the reconcile request " + ours + " (status.lastHandledReconcileAt)"},
		{name: "the run's own request handled", obj: root("11", ours, ours, "", ""), req: sent(before, "", false), finished: true},
		{name: "a token in the future already handled before the request", obj: root("10", ours, future, "", ""), req: sent(future, "", false), finished: true,
			want: "waiting for Flux"},
		{name: "a token in the future, the watch behind the request", obj: root("9", future, future, "", ""), req: sent(future, "", false), finished: true,
			want: "waiting for Flux"},
		{name: "a token in the future, then the run's handled", obj: root("11", ours, ours, "", ""), req: sent(future, "", false), finished: true},
		{name: "a request sent before the run's, handled after it", obj: root("11", ours, "earlier", "", ""), req: sent(before, "", false), finished: true,
			want: "waiting for Flux"},
		{name: "the watch behind the request, an earlier request handled", obj: root("9", "earlier", "earlier", "", ""), req: sent(before, "", false), finished: true,
			want: "waiting for Flux"},
		{name: "a later request handled (another run's)", obj: root("12", theirs, theirs, "", ""), req: sent(before, "", false), finished: true},
		{name: "a later request not handled yet", obj: root("12", theirs, ours, "", ""), req: sent(before, "", false), finished: true},
		{name: "a later request, an earlier one handled", obj: root("12", theirs, "earlier", "", ""), req: sent(before, "", false), finished: true,
			want: "waiting for Flux"},
		{name: "resource versions that are not numbers", obj: strings.Replace(root("12", theirs, theirs, "", ""), `"12"`, `"b"`, 1), req: sent(before, "", false), finished: true,
			want: "waiting for Flux"},
		{name: "a token that is not a time, handled", obj: root("11", "by-hand", "by-hand", "", ""), req: flux.ReconcileRequest{Token: "by-hand", ResourceVersion: "10"}, finished: true},
		{name: "forced: the reconcile handled, not the force", obj: root("11", ours, ours, ours, future), req: sent(before, future, true), finished: true,
			want: "(status.lastHandledForceAt)", after: true},
		{name: "forced: neither handled", obj: root("10", ours, before, ours, future), req: sent(before, future, true), finished: true,
			want: "(status.lastHandledReconcileAt)", forced: true},
		{name: "forced: both handled", obj: root("11", ours, ours, ours, ours), req: sent(before, future, true), finished: true},
		{name: "not forced: the force is not waited for", obj: root("11", ours, ours, "", future), req: sent(before, future, false), finished: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newFakeState(t, "", tt.obj)
			s.req.Reconcile = ReconcileOn
			if !s.awaitsHandling() {
				t.Fatal("no revision: the verdict must wait for the request to be handled")
			}
			trig := &trigger{}
			trig.sentRoot(flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}.ID(), tt.req)
			if tt.finished {
				trig.finish()
			}
			got := ""
			wait := s.unhandled(trig)
			if wait != nil {
				// (Worded as the verdict words it.)
				got = assess.Conclude(&assess.Assessment{}, assess.Facts{Reconcile: wait}).Pending.Message
				if wait.Before != !tt.after || wait.Forced != tt.forced {
					t.Errorf("Before, Forced = %t, %t: want %t, %t", wait.Before, wait.Forced, !tt.after, tt.forced)
				}
			}
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("unhandled = %q, want %q", got, tt.want)
			}
			// With a revision, the revision gate tells the states apart: nothing is held.
			rev, err := flux.ParseRevision(revB)
			if err != nil {
				t.Fatal(err)
			}
			s.req.Revision, s.req.Reconcile = rev, ReconcileForce
			if wait := s.unhandled(trig); wait != nil && (wait.Before || wait.Forced != tt.forced) {
				t.Errorf("with a revision, unhandled = %+v: want Before false, Forced %t", wait, tt.forced)
			}
		})
	}
	s := newFakeState(t, revB, root("7", "", "x", "", ""))
	s.req.Reconcile = ReconcileOn
	if s.awaitsHandling() {
		t.Error("with a revision, the revision gate decides: the run must not wait for its own token")
	}
	s.req.Reconcile = ReconcileForce
	if !s.awaitsHandling() {
		t.Error("force reruns Helm releases: the verdict must wait for them")
	}
}

func TestTriggerNotes(t *testing.T) {
	t.Parallel()
	trig := &trigger{}
	for range 3 {
		trig.note("reconciliation not requested: %s is suspended", "GitRepository/flux-system/app")
	}
	for i := range maxNotes + 5 {
		trig.note("note %d", i)
	}
	r := trig.report(time.Time{})
	if len(r.Notes) != maxNotes || r.Notes[0] != "reconciliation not requested: GitRepository/flux-system/app is suspended" || r.Notes[maxNotes-1] != "(more notes left out)" {
		t.Errorf("notes %q: want the same note once, and at most %d", r.Notes, maxNotes)
	}
}

// TestTriggerReport: the moments from the cluster's start; a verdict that came before the
// requests read the source again gives the source's moment as the apply's, at the latest.
func TestTriggerReport(t *testing.T) {
	t.Parallel()
	trig := &trigger{start: fixtureNow}
	trig.sent("OCIRepository/flux-system/app", fixtureNow.Add(100*time.Millisecond))
	trig.sent("Kustomization/flux-system/app", fixtureNow.Add(900*time.Millisecond))
	r := trig.report(fixtureNow.Add(700 * time.Millisecond))
	if r.RequestedMs == nil || *r.RequestedMs != 100 || r.SourceReadyMs == nil || *r.SourceReadyMs != 700 || r.AppliedMs == nil || *r.AppliedMs != 700 {
		t.Errorf("report %+v: want requested 100, source 700 (at the latest), applied 700", r)
	}
	if want := []string{"Kustomization/flux-system/app", "OCIRepository/flux-system/app"}; !slices.Equal(r.Requested, want) {
		t.Errorf("requested %q, want %q (sorted)", r.Requested, want)
	}
	trig.sourceReady(fixtureNow.Add(300 * time.Millisecond))
	if r := trig.report(time.Time{}); *r.SourceReadyMs != 300 || r.AppliedMs != nil {
		t.Errorf("report %+v: want source 300 and no apply", r)
	}
}
