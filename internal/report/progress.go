package report

import (
	"fmt"
	"time"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// ProgressLine is one line of live progress for a person: the time since the start, a mark
// ("…" while the cluster is still going, its verdict's mark once final), the cluster and
// what it is doing or its verdict's message, cleaned to one line and cut to maxTextRunes. It ends in a newline.
func ProgressLine(elapsed time.Duration, cluster string, v result.Verdict, final bool, message string) string {
	mark := "…"
	if final {
		mark = verdictMark(v)
	}
	return fmt.Sprintf("[%6.1fs] %s %s: %s\n", elapsed.Seconds(), mark, sanitize.Line(cluster), sanitize.Truncate(sanitize.Compact(message), maxTextRunes))
}
