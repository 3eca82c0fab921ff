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

// hasPreflightWarning says whether the check of the Flux controllers found, on c, a controller
// the app does not need that is down. Its notes (what it could not read, a controller it did
// not find, one it gives a grace) stay in the JSON results: they depend on when the run looked
// and on where Flux runs, and would repeat on every cluster of a fleet that installs Flux its
// own way.
func hasPreflightWarning(c result.Cluster) bool {
	return c.Preflight != nil && len(c.Preflight.Warnings) > 0
}

// preflightLine says in one line which Flux controllers the app does not need are down.
func preflightLine(p *result.Preflight) string {
	return "Flux controllers: " + strings.Join(p.Warnings, "; ")
}

// writePreflight lists, after the table, the clusters where a Flux controller the app does not
// need is down, while the list fits in budget. A controller that must act and is down is a
// failure (flux-unhealthy) and shows in the table instead.
func writePreflight(b *strings.Builder, clusters []result.Cluster, budget int) {
	var rows []result.Cluster
	for _, c := range clusters {
		if hasPreflightWarning(c) {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return
	}
	const header = "**Flux controllers** the app does not need that are down (they do not change the verdicts):\n\n"
	const closing = "\n"
	if b.Len()+len(header)+len(closing) > budget {
		return
	}
	b.WriteString(header)
	for i, c := range rows {
		row := fmt.Sprintf("- ⚠️ %s: %s\n", mdText(c.Name, maxNameRunes), mdText(strings.Join(c.Preflight.Warnings, "; "), maxCellRunes))
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
