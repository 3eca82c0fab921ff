package assess

import (
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// staleReleaseView is a view whose read of a Helm storage secret failed at a read that began
// 10 s before now (a hung API server: the read's own 10 s timeout), so the answer's RetryAt,
// the read's start and storageRetry, is already past when it arrives.
type staleReleaseView struct {
	*fixtureView
	stored StoredRelease
}

func (v staleReleaseView) Release(string) (StoredRelease, bool) { return v.stored, true }

// TestNoRecheckInThePast: a failed read's answer whose RetryAt is past is read again (a need),
// and the end of that read wakes the loop; the assessment asks for no recheck in the past,
// which would make pass after pass until the read ends (up to its timeout against a hung
// server).
func TestNoRecheckInThePast(t *testing.T) {
	t.Parallel()
	hr := strings.Replace(hrWith(""), "  inventory:\n    entries: []", "", 1)
	docs := []string{ks("app", "GitRepository", "app", "", revB, "shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "shop_web-values__ConfigMap"),
		gitRepo(), hr, ociRepo(), valuesConfigMap("2026-11-01T11:00:00Z")}
	failed := Finding{Verdict: result.VerdictInProgress, Reason: "ReadFailed",
		Message: "HelmRelease/shop/web: reading the Helm storage secret shop/sh.helm.release.v1.web.v2: context deadline exceeded"}
	rev, _ := flux.ParseRevision(revB)
	spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}}, Revision: rev, Workloads: true,
		Health: fluxhealth.New(t.Context())}
	for _, tt := range []struct {
		name        string
		retryAt     time.Time
		wantRecheck time.Time
		wantNeed    bool
	}{
		{name: "retry time to come: a recheck then", retryAt: fixtureNow.Add(2 * time.Second), wantRecheck: fixtureNow.Add(2 * time.Second)},
		{name: "retry time past: read again, no recheck in the past", retryAt: fixtureNow.Add(-8 * time.Second), wantNeed: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			view := staleReleaseView{fixtureView: newFixtureView(t, strings.Join(docs, "\n---\n"), fixtureReads...),
				stored: StoredRelease{RetryAt: tt.retryAt, Finding: failed}}
			e := Assess(view, NewMemory(), spec, fixtureNow)
			if e.Pending == nil || e.Pending.Reason != "ReadFailed" {
				t.Fatalf("pending %+v fatal %+v, want the read's failure", e.Pending, e.Fatal)
			}
			if !e.Recheck.IsZero() && e.Recheck.Before(fixtureNow) {
				t.Errorf("recheck at %s, %s before now", e.Recheck.Format(time.RFC3339), fixtureNow.Sub(e.Recheck))
			}
			if !tt.wantRecheck.IsZero() && e.Recheck.After(tt.wantRecheck) {
				t.Errorf("recheck at %s, want %s at the latest", e.Recheck.Format(time.RFC3339), tt.wantRecheck.Format(time.RFC3339))
			}
			if got := len(e.Needs.Releases) > 0; got != tt.wantNeed {
				t.Errorf("read again: %t, want %t", got, tt.wantNeed)
			}
		})
	}
}
