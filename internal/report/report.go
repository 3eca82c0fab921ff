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

	"github.com/org/app-status-action/internal/result"
)

// verdictSymbol is the one place that maps a verdict to the symbol the markdown shows.
func verdictSymbol(v result.Verdict) string {
	switch v {
	case result.Current:
		return "✅"
	case result.InProgress:
		return "⏳"
	case result.Failed:
		return "❌"
	case result.Timeout:
		return "⏱️"
	case result.Suspended:
		return "⏸️"
	case result.NotFound:
		return "❓"
	case result.Unreachable:
		return "🔌"
	case result.Unauthorized, result.Forbidden:
		return "🔒"
	case result.InvalidConfig:
		return "⚠️"
	case result.Cancelled:
		return "🚫"
	default:
		return "❔"
	}
}

// statusSymbol maps the overall status to the symbol of the verdict it stands for.
func statusSymbol(s result.Status) string {
	switch s {
	case result.StatusSuccess:
		return verdictSymbol(result.Current)
	case result.StatusTimeout:
		return verdictSymbol(result.Timeout)
	default:
		return verdictSymbol(result.Failed)
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
	return shortRevision(c.Flux[0].LastAppliedRevision)
}

// readyObjects is "k/n": the objects that are Current over all objects, or "-" when the
// cluster reported neither Flux objects nor objects (it was never read).
func readyObjects(c result.Cluster) string {
	if len(c.Flux) == 0 && len(c.Objects) == 0 {
		return "-"
	}
	ready := 0
	for _, o := range c.Objects {
		if o.Status == result.StatusCurrent {
			ready++
		}
	}
	return fmt.Sprintf("%d/%d", ready, len(c.Objects))
}

// shortRevision shortens the digest of a Flux revision: a 40-hex sha1 to 7 characters
// (main@sha1:abcdef1) and a sha256, sha384 or sha512 digest to 12. A revision it does not
// recognise, like a chart version, is returned as it is.
func shortRevision(rev string) string {
	prefix, digest := "", rev
	if i := strings.LastIndexByte(rev, '@'); i >= 0 {
		prefix, digest = rev[:i+1], rev[i+1:]
	}
	algo, hex, found := strings.Cut(digest, ":")
	if !found {
		// A bare commit, or the legacy "branch/<sha>" form.
		i := strings.LastIndexByte(digest, '/')
		if sha := digest[i+1:]; len(sha) == 40 && isHex(sha) {
			return prefix + digest[:i+1] + sha[:7]
		}
		return rev
	}
	if !isHex(hex) {
		return rev
	}
	switch {
	case algo == "sha1" && len(hex) == 40:
		return prefix + algo + ":" + hex[:7]
	case algo == "sha256" && len(hex) == 64,
		algo == "sha384" && len(hex) == 96,
		algo == "sha512" && len(hex) == 128:
		return prefix + algo + ":" + hex[:12]
	}
	return rev
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return s != ""
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
