package report

import (
	"fmt"
	"strings"

	"github.com/org/app-status-action/internal/result"
)

// reconcileMoment is a moment of a cluster's reconcile requests, "+1.2s" from its start, or
// "—" when it did not come.
func reconcileMoment(ms *int64) string {
	if ms == nil {
		return "—"
	}
	return "+" + formatDuration(*ms)
}

// reconcileLine says, in one line, where a cluster's time went after its reconcile requests.
func reconcileLine(r *result.Reconcile) string {
	line := fmt.Sprintf("reconcile: requested %s, source had the revision %s, applied %s",
		reconcileMoment(r.RequestedMs), reconcileMoment(r.SourceReadyMs), reconcileMoment(r.AppliedMs))
	if len(r.Notes) > 0 {
		line += "; " + strings.Join(r.Notes, "; ")
	}
	return line
}

// writeReconcile writes, when the run asked Flux to reconcile, where each cluster's time went:
// when the request was sent, when the source had the revision, when Flux applied it and the
// verdict, while the rows fit in budget.
func writeReconcile(b *strings.Builder, clusters []result.Cluster, budget int) {
	var rows []result.Cluster
	for _, c := range clusters {
		if c.Reconcile != nil {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return
	}
	const header = "<details><summary>Reconcile requests: where the time went</summary>\n\n" +
		"| Cluster | Requested | Source had the revision | Applied | Verdict | Notes |\n| :-- | --: | --: | --: | --: | :-- |\n"
	const closing = "\n</details>\n\n"
	if b.Len()+len(header)+len(closing) > budget {
		return
	}
	b.WriteString(header)
	for i, c := range rows {
		r := c.Reconcile
		row := fmt.Sprintf("| %s | %s | %s | %s | %s %s | %s |\n", mdText(c.Name, maxNameRunes),
			reconcileMoment(r.RequestedMs), reconcileMoment(r.SourceReadyMs), reconcileMoment(r.AppliedMs),
			verdictSymbol(c.Verdict), "+"+formatDuration(c.DurationMs), mdText(strings.Join(r.Notes, "; "), maxCellRunes))
		if b.Len()+len(row)+len(closing) > budget {
			fmt.Fprintf(b, "\n_%s not in this table._\n", plural(len(rows)-i, "more cluster"))
			break
		}
		b.WriteString(row)
	}
	b.WriteString(closing)
}
