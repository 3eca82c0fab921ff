package report

import (
	"fmt"
	"strings"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// maxPreflightRows is how many clusters the summary's list of Flux controller findings names
// at most; the JSON results hold them all.
const maxPreflightRows = 20

// hasPreflight says whether the check of the Flux controllers found something on c that did
// not decide its verdict.
func hasPreflight(c result.Cluster) bool {
	return c.Preflight != nil && len(c.Preflight.Warnings)+len(c.Preflight.Notes) > 0
}

// preflightLine says in one line what the check of the Flux controllers found on a cluster.
func preflightLine(p *result.Preflight) string { return "Flux controllers: " + preflightFindings(p) }

// preflightFindings are the warnings of the check of the Flux controllers (a controller the
// app does not need is down), then its notes (what it could not read), joined by "; ".
func preflightFindings(p *result.Preflight) string {
	parts := make([]string, 0, len(p.Warnings)+len(p.Notes))
	for _, w := range p.Warnings {
		parts = append(parts, "warning: "+w)
	}
	for _, n := range p.Notes {
		parts = append(parts, "note: "+n)
	}
	return strings.Join(parts, "; ")
}

// writePreflight lists, after the table, the clusters whose check of the Flux controllers
// found something that did not decide the verdict, those with warnings first, while the list
// fits in budget. A controller that must act and is down is a failure (flux-unhealthy) and
// shows in the table instead.
func writePreflight(b *strings.Builder, clusters []result.Cluster, budget int) {
	var warned, noted []result.Cluster
	for _, c := range clusters {
		switch {
		case !hasPreflight(c):
		case len(c.Preflight.Warnings) > 0:
			warned = append(warned, c)
		default:
			noted = append(noted, c)
		}
	}
	rows := append(warned, noted...)
	if len(rows) == 0 {
		return
	}
	const header = "**Flux controllers**, checked before waiting (these do not change the verdicts):\n\n"
	const closing = "\n"
	if b.Len()+len(header)+len(closing) > budget {
		return
	}
	b.WriteString(header)
	for i, c := range rows {
		mark := ""
		if len(c.Preflight.Warnings) > 0 {
			mark = "⚠️ "
		}
		row := fmt.Sprintf("- %s%s: %s\n", mark, mdText(c.Name, maxNameRunes), mdText(preflightFindings(c.Preflight), maxCellRunes))
		if i == maxPreflightRows || b.Len()+len(row)+len(closing) > budget {
			fmt.Fprintf(b, "- _%s not listed here: the JSON results name them._\n", plural(len(rows)-i, "more cluster"))
			break
		}
		b.WriteString(row)
	}
	b.WriteString(closing)
}

// PreflightWarnings gives one warning annotation per cluster where a Flux controller the app
// does not need is down, titled with the cluster's name; past ten, the tenth counts the rest.
// Such a controller never changes the verdict, but a team wants to hear of it.
func PreflightWarnings(run result.Run) []Annotation {
	var warned []result.Cluster
	for _, c := range run.Results {
		if c.Preflight != nil && len(c.Preflight.Warnings) > 0 {
			warned = append(warned, c)
		}
	}
	shown := warned
	if len(warned) > maxAnnotations {
		shown = warned[:maxAnnotations-1]
	}
	out := make([]Annotation, 0, maxAnnotations)
	for _, c := range shown {
		out = append(out, Annotation{
			Title:   sanitize.Line(c.Name) + ": a Flux controller is down",
			Message: sanitize.Truncate(sanitize.Line(strings.Join(c.Preflight.Warnings, "; ")), maxTextRunes),
		})
	}
	if rest := warned[len(shown):]; len(rest) > 0 {
		names := make([]string, len(rest))
		for i, c := range rest {
			names[i] = c.Name
		}
		out = append(out, Annotation{
			Title: fmt.Sprintf("%d more clusters have a Flux controller down", len(rest)),
			Message: sanitize.Truncate(sanitize.Line(strings.Join(names, ", ")), maxTextRunes) +
				": the job summary and the JSON results name the controllers",
		})
	}
	return out
}
