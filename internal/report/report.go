// Package report turns a result.Run into markdown, text and JSON; it knows nothing of GitHub
// and does no I/O other than writing to a given io.Writer.
//
// Every renderer is deterministic: the same Run gives the same bytes, so the output can be
// compared with golden files. Text taken from clusters (messages, events, logs) is treated as
// hostile: it is cleaned of control characters and escaped for the format it goes into.
package report

import (
	"fmt"
	"strings"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// verdictMark and verdictSymbol are the one place that maps a verdict to a symbol: a text
// mark for the terminal (progress lines), an emoji for the markdown summary.
func verdictMark(v result.Verdict) string {
	switch v {
	case result.VerdictCurrent:
		return "✔"
	case result.VerdictTimeout:
		return "⏱"
	default:
		return "✖"
	}
}

// verdictSymbol maps a verdict to the symbol the markdown shows.
func verdictSymbol(v result.Verdict) string {
	switch v {
	case result.VerdictCurrent:
		return "✅"
	case result.VerdictInProgress:
		return "⏳"
	case result.VerdictFailed:
		return "❌"
	case result.VerdictTimeout:
		return "⏱️"
	case result.VerdictSuspended:
		return "⏸️"
	case result.VerdictNotFound:
		return "❓"
	case result.VerdictUnreachable:
		return "🔌"
	case result.VerdictThrottled:
		return "🐢"
	case result.VerdictUnauthorized, result.VerdictForbidden:
		return "🔒"
	case result.VerdictInvalidConfig:
		return "⚠️"
	case result.VerdictUnverified:
		return "🔭"
	case result.VerdictCancelled:
		return "🚫"
	case result.VerdictUnknown:
		return "⁉️"
	default:
		return "❔"
	}
}

// statusSymbol maps the overall status to the symbol of the verdict it stands for.
func statusSymbol(s result.RunStatus) string {
	switch s {
	case result.RunSuccess:
		return verdictSymbol(result.VerdictCurrent)
	case result.RunTimeout:
		return verdictSymbol(result.VerdictTimeout)
	default:
		return verdictSymbol(result.VerdictFailed)
	}
}

// verdictCode is "Failed (image-pull)", or the bare verdict when there is no code.
func verdictCode(v result.Verdict, code result.Code) string {
	if code == "" {
		return string(v)
	}
	return fmt.Sprintf("%s (%s)", v, code)
}

// explanation is the cluster's Summary, or "" when it would only repeat the verdict.
func explanation(c result.Cluster) string {
	if s := c.Summary(); s != string(c.Verdict) {
		return s
	}
	return ""
}

// reason is the short reason of a cluster's verdict: its code, then its summary.
func reason(c result.Cluster) string {
	return joinNonEmpty(": ", string(c.Code), explanation(c))
}

// appliedRevision is the shortened revision applied by the cluster's first Flux object.
func appliedRevision(c result.Cluster) string {
	if len(c.Flux) == 0 || c.Flux[0].LastAppliedRevision == "" {
		return "-"
	}
	return flux.ShortRevision(c.Flux[0].LastAppliedRevision)
}

// readyObjects is "k/n": the objects that are Current over all objects, or "-" when the
// cluster reported neither Flux objects nor objects (it was never read).
func readyObjects(c result.Cluster) string {
	if len(c.Flux) == 0 && len(c.Objects) == 0 {
		return "-"
	}
	ready := 0
	for _, o := range c.Objects {
		if o.Status == result.ObjectCurrent {
			ready++
		}
	}
	return fmt.Sprintf("%d/%d", ready, len(c.Objects))
}

// formatDuration prints milliseconds as 12.3s below a minute, 1m02s below an hour and
// 1h02m03s above.
func formatDuration(ms int64) string {
	if ms < 0 {
		ms = 0
	}
	if ms < 59_950 {
		tenths := (ms + 50) / 100
		return fmt.Sprintf("%d.%ds", tenths/10, tenths%10)
	}
	s := (ms + 500) / 1000
	if s < 3600 {
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm%02ds", s/3600, s%3600/60, s%60)
}

// plural is "1 cluster" or "3 clusters".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func joinNonEmpty(sep string, parts ...string) string {
	kept := parts[:0:0]
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}
