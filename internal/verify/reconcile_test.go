package verify

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/flux"
)

// TestUnhandled: without a revision to gate on (or with force), the verdict waits until the
// requests are sent and Flux has handled one at least as recent as the run's; a later token
// (another run's) counts too.
func TestUnhandled(t *testing.T) {
	t.Parallel()
	root := func(handled string) string {
		return kustomization(`  lastHandledReconcileAt: "` + handled + `"
` + readyOnB)
	}
	sent := fixtureNow.Add(-time.Second)
	tests := []struct {
		name     string
		handled  string
		finished bool
		want     string // a part of the message, "" for none
	}{
		{name: "requests not sent yet", handled: "2026-11-01T11:00:00Z", want: "sending the reconcile requests"},
		{name: "an older request handled", handled: "2026-11-01T11:00:00Z", finished: true, want: "waiting for Flux to handle the reconcile request sent at 2026-11-01T11:59:59Z"},
		{name: "the run's own request handled", handled: sent.Format(time.RFC3339Nano), finished: true},
		{name: "a later request handled (another run's)", handled: fixtureNow.Format(time.RFC3339Nano), finished: true},
		{name: "a token that is not a time", handled: "by-hand", finished: true, want: "waiting for Flux"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newFakeState(t, "", root(tt.handled))
			s.req.Reconcile = ReconcileOn
			if !s.awaitsHandling() {
				t.Fatal("no revision: the verdict must wait for the request to be handled")
			}
			trig := &trigger{}
			trig.sentRoot(flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}.ID(), rootRequest{token: sent})
			if tt.finished {
				trig.finish()
			}
			got := s.unhandled(trig)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("unhandled = %q, want %q", got, tt.want)
			}
		})
	}
	s := newFakeState(t, revB, root("x"))
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
