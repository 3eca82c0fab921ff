package flagger

import (
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/result"
)

// TestSuspendedCanaryNotCurrentByTimer: a suspended Canary whose target has no primary to
// compare (its state older than a tracked config's change) is never Current after the pickup
// timer, since Flagger does not pick anything up.
func TestSuspendedCanaryNotCurrentByTimer(t *testing.T) {
	t.Parallel()
	written := time.Date(2026, 11, 1, 11, 50, 0, 0, time.UTC)
	c := Canary{ID: "Canary/shop/web", Phase: "Succeeded", Applied: "h", Promoted: "h", Since: written.Add(-time.Hour), Interval: time.Minute, TargetKind: "Service", TargetName: "web"}
	tgt := Target{Written: written}
	if got := Judge(c, tgt, time.Hour); got.Status != result.ObjectCurrent {
		t.Fatalf("Judge(not suspended) = %+v, want Current after the pickup", got)
	}
	c.Suspended = true
	got := Judge(c, tgt, time.Hour)
	if got.Status != result.ObjectInProgress || !strings.Contains(got.Message, "is suspended (spec.suspend)") {
		t.Errorf("Judge(suspended) = %+v, want InProgress saying suspended", got)
	}
}

// TestCanaryClockMargin: a Canary state Flagger wrote (its clock) within the clocks' margin of
// the target's last change (the API server's) is not taken as written after it.
func TestCanaryClockMargin(t *testing.T) {
	t.Parallel()
	written := time.Date(2026, 11, 1, 11, 50, 0, 0, time.UTC)
	c := Canary{ID: "Canary/shop/web", Phase: "Succeeded", Applied: "h", Promoted: "h", Interval: time.Minute, TargetKind: "Service", TargetName: "web"}
	tgt := Target{Written: written}
	for _, tt := range []struct {
		since time.Duration
		want  result.ObjectStatus
	}{
		{since: time.Second, want: result.ObjectInProgress},
		{since: 2 * time.Second, want: result.ObjectInProgress},
		{since: 3 * time.Second, want: result.ObjectCurrent},
	} {
		c.Since = written.Add(tt.since)
		if got := Judge(c, tgt, 0); got.Status != tt.want {
			t.Errorf("Judge(Succeeded %s after the change) = %+v, want %s", tt.since, got, tt.want)
		}
	}
}
