package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// ProgressLine is one line of live progress for a person: the time since the start, a mark
// ("…" while the cluster is still going, "·" for an internal step of the run, shown on
// request, its verdict's mark once final), the cluster and what it is doing or its verdict's
// message, cleaned to one line and cut to maxTextRunes. It ends in a newline.
func ProgressLine(elapsed time.Duration, cluster string, v result.Verdict, final, step bool, message string) string {
	mark := "…"
	switch {
	case final:
		mark = verdictMark(v)
	case step:
		mark = "·"
	}
	return fmt.Sprintf("[%6.1fs] %s %s: %s\n", elapsed.Seconds(), mark, sanitize.Line(cluster), sanitize.Truncate(sanitize.Compact(message), maxTextRunes))
}

// TallyLine is the one-line state of a fleet for the log: "[  12.0s] 612/1000 Current,
// 3 Failed, 385 waiting", the verdicts that are not Current counted by verdict.
func TallyLine(elapsed time.Duration, total int, verdicts map[string]result.Verdict) string {
	counts := map[result.Verdict]int{}
	for _, v := range verdicts {
		counts[v]++
	}
	current := counts[result.VerdictCurrent]
	parts := []string{fmt.Sprintf("%d/%d Current", current, total)}
	var others []result.Verdict
	for v := range counts {
		if v != result.VerdictCurrent {
			others = append(others, v)
		}
	}
	slices.Sort(others)
	for _, v := range others {
		parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
	}
	if waiting := total - len(verdicts); waiting > 0 {
		parts = append(parts, fmt.Sprintf("%d waiting", waiting))
	}
	return fmt.Sprintf("[%6.1fs] %s\n", elapsed.Seconds(), strings.Join(parts, ", "))
}
