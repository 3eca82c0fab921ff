package report

import (
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/result"
)

func TestProgressLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		elapsed time.Duration
		verdict result.Verdict
		final   bool
		step    bool
		message string
		want    string
	}{
		{"waiting", 700 * time.Millisecond, result.VerdictInProgress, false, false, "waiting for Deployment/shop/web: Available: 0/2", "[   0.7s] … prod: waiting for Deployment/shop/web: Available: 0/2\n"},
		{"step", 700 * time.Millisecond, result.VerdictInProgress, false, true, "connecting", "[   0.7s] · prod: connecting\n"},
		{"current", 12340 * time.Millisecond, result.VerdictCurrent, true, false, "3 objects Current", "[  12.3s] ✔ prod: 3 objects Current\n"},
		{"timeout", time.Minute, result.VerdictTimeout, true, false, "timed out", "[  60.0s] ⏱ prod: timed out\n"},
		{"failed", time.Second, result.VerdictFailed, true, false, "pull\nfailed", "[   1.0s] ✖ prod: pull failed\n"},
		{"hostile message", time.Second, result.VerdictFailed, true, false, "x\r\n::set-output name=status::success\x1b[2J", "[   1.0s] ✖ prod: x ::set-output name=status::success\n"},
		// A message is cut to 1000 characters, the last one an ellipsis, whatever its bytes.
		{"long message", time.Second, result.VerdictFailed, true, false, strings.Repeat("x", 1500), "[   1.0s] ✖ prod: " + strings.Repeat("x", 999) + "…\n"},
		{"long message of multi-byte characters", time.Second, result.VerdictFailed, true, false, strings.Repeat("é", 1001), "[   1.0s] ✖ prod: " + strings.Repeat("é", 999) + "…\n"},
		{"message of 1000 characters", time.Second, result.VerdictFailed, true, false, strings.Repeat("é", 1000), "[   1.0s] ✖ prod: " + strings.Repeat("é", 1000) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ProgressLine(tt.elapsed, "prod", tt.verdict, tt.final, tt.step, tt.message); got != tt.want {
				t.Errorf("ProgressLine() = %q, want %q", got, tt.want)
			}
		})
	}
}
