package report

import (
	"fmt"
	"strings"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// mdItem is one piece of a cluster's details: the line of a Flux object, which is always
// shown, or an object that is not Current, which is rendered and shown while it fits.
type mdItem struct {
	text   string         // the Flux object's line
	object *result.Object // or the object
	depth  int
}

// clusterDetails renders the collapsed details of a cluster that is not Current in at most
// limit bytes. Its Flux objects are always shown; its objects that are not Current are added
// in tree order until one does not fit, and omitted counts the ones left out. ok is false
// when not even the Flux objects fit.
func clusterDetails(c result.Cluster, limit int, rowless bool) (block string, omitted int, ok bool) {
	// The row of the table has the code and a short reason: the summary line names the
	// cluster, the body has the full text, once.
	open := fmt.Sprintf("<details><summary>%s <b>%s</b>: %s</summary>\n\n", verdictSymbol(c.Verdict),
		htmlText(c.Name, maxNameRunes), htmlText(verdictCode(c.Verdict, c.Code), maxSummaryRunes))
	const closing = "\n</details>\n\n"

	items := mdTreeItems(buildTree(c))
	if full := fullMessage(c, rowless); full != "" {
		items = append([]mdItem{{text: mdText(full, maxTextRunes) + "\n\n"}}, items...)
	}
	if len(items) == 0 {
		items = []mdItem{{text: "_No Flux object was read from this cluster._\n"}}
	}
	size := len(open) + len(closing) + omittedLineReserve
	for _, it := range items {
		size += len(it.text)
	}
	if size > limit {
		return "", 0, false
	}

	var b strings.Builder
	b.WriteString(open)
	for _, it := range items {
		if it.object == nil {
			b.WriteString(it.text)
			continue
		}
		if omitted > 0 {
			omitted++
			continue
		}
		text := mdObject(it.object, it.depth)
		if size+len(text) > limit {
			omitted++
			continue
		}
		b.WriteString(text)
		size += len(text)
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "\n_%s not shown here._\n", notCurrent(omitted))
	}
	b.WriteString(closing)
	return b.String(), omitted, true
}

// fullMessage is the cluster's message when its table row could not show it whole (or it has
// no row: rowless) and the objects below do not carry it (a failure's row names the failing
// object, whose evidence follows).
func fullMessage(c result.Cluster, rowless bool) string {
	full := reason(c)
	if rowless && full != "" && (failingObjectID(c) == "" || c.Code == "") {
		return full // no row of its own (a group's row names it): its message is here alone
	}
	if full == "" || rowReason(c) == sanitize.Truncate(sanitize.Line(full), shortReasonRunes) && len([]rune(sanitize.Line(full))) <= shortReasonRunes {
		return ""
	}
	if failingObjectID(c) != "" && c.Code != "" {
		return ""
	}
	return full
}

// needsDetails reports whether a cluster's details would show more than its table row: its
// Flux objects, or a message the row had to cut.
func needsDetails(c result.Cluster, rowless bool) bool {
	return rowless || len(c.Flux) > 0 || len(c.Objects) > 0 || fullMessage(c, false) != ""
}

// notCurrent is "1 more object that is not Current is" or "N more objects that are not
// Current are".
func notCurrent(n int) string {
	if n == 1 {
		return "1 more object that is not Current is"
	}
	return fmt.Sprintf("%d more objects that are not Current are", n)
}

// mdTreeItems lays the tree out as a nested markdown list.
func mdTreeItems(t tree) []mdItem {
	var items []mdItem
	var walk func(n *node, depth int)
	walk = func(n *node, depth int) {
		items = append(items, mdItem{text: mdFluxLine(n, depth)})
		for _, e := range n.entries {
			if e.node != nil {
				walk(e.node, depth+1)
			} else {
				items = append(items, mdItem{object: e.object, depth: depth + 1})
			}
		}
	}
	for _, n := range t.roots {
		walk(n, 0)
	}
	for i := range t.orphans {
		items = append(items, mdItem{object: &t.orphans[i]})
	}
	return items
}

// mdFluxLine is a Flux object as a list item: "✅ **Kind/ns/name** · Ready=True · applied …".
func mdFluxLine(n *node, depth int) string {
	facts, message := fluxFacts(n)
	parts := []string{verdictSymbol(n.flux.Verdict) + " **" + mdText(n.flux.ID, maxNameRunes) + "**"}
	for _, f := range facts {
		parts = append(parts, mdText(f, maxCellRunes))
	}
	if message != "" {
		parts = append(parts, mdText(message, maxTextRunes))
	}
	return strings.Repeat("  ", depth) + "- " + strings.Join(parts, " · ") + "\n"
}

// mdObject is an object that is not Current as a list item, with the evidence of its failure
// as sub-items and its logs in a fenced code block.
func mdObject(o *result.Object, depth int) string {
	indent := strings.Repeat("  ", depth)
	sub := indent + "  - "
	var b strings.Builder
	b.WriteString(indent + "- **" + mdText(o.ID, maxNameRunes) + "** · " + mdText(string(o.Status), maxCellRunes))
	if s := objectSummary(o); s != "" {
		b.WriteString(" · " + mdText(s, maxTextRunes))
	}
	b.WriteString("\n")
	if m := statusMessage(o); m != "" {
		b.WriteString(sub + "status: " + mdText(m, maxTextRunes) + "\n")
	}
	f := o.Failure
	if f == nil {
		return b.String()
	}
	if f.Pod != "" || f.Container != "" {
		b.WriteString(sub + joinNonEmpty(" · ", prefixed("pod ", mdCode(f.Pod, maxNameRunes)),
			prefixed("container ", mdCode(f.Container, maxNameRunes)), fmt.Sprintf("restarts %d", f.RestartCount)) + "\n")
	}
	for _, e := range f.Events {
		fmt.Fprintf(&b, "%sevent %s %s%s\n", sub, mdText(e.Object, maxNameRunes),
			mdText(joinNonEmpty(": ", e.Reason, e.Message), maxTextRunes), eventCount(e, "×"))
	}
	if f.LogsError != "" {
		b.WriteString(sub + "logs unavailable: " + mdText(f.LogsError, maxTextRunes) + "\n")
	}
	if lines, total := logTail(f.Logs, logLinesShown, logLineRunes); len(lines) > 0 {
		header := "logs:"
		if total > len(lines) {
			header = fmt.Sprintf("last %d of %d log lines:", len(lines), total)
		}
		writeCodeBlock(&b, sub+header+"\n", indent+"    ", lines)
	}
	return b.String()
}

// writeCodeBlock writes a list item's header and then the lines in a fenced code block
// indented to the item's content, with a fence the lines cannot close.
func writeCodeBlock(b *strings.Builder, header, indent string, lines []string) {
	f := fence(strings.Join(lines, "\n"))
	b.WriteString(header)
	b.WriteString(indent + f + "\n")
	for _, l := range lines {
		if l != "" {
			b.WriteString(indent + l)
		}
		b.WriteString("\n")
	}
	b.WriteString(indent + f + "\n")
}
