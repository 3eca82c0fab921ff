package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// Text writes the human report of the CLI, in the spirit of `kubectl get` and `flux get`: a
// table with one row per cluster and a short reason, the clusters that are not Current first,
// the aggregated Ready condition with the count of clusters per verdict and code, then for
// each cluster that is not Current its full message, the tree of its Flux objects with the
// objects that are not Current under them, and the evidence of each failure (pod, events,
// logs). Each message appears once. The output is plain text: control characters and
// terminal escape sequences from the clusters are removed.
func Text(w io.Writer, run result.Run) error { return TextWith(w, run, TextOptions{}) }

// TextOptions tunes Text.
type TextOptions struct {
	// OnlyFailed leaves the Current clusters out of the table (they are counted).
	OnlyFailed bool
}

// TextWith is Text with options.
func TextWith(w io.Writer, run result.Run, opts TextOptions) error {
	var b bytes.Buffer
	var failing, current []result.Cluster
	for _, c := range run.Results {
		if c.Ready() {
			current = append(current, c)
		} else {
			failing = append(failing, c)
		}
	}
	sortByRollup(failing)
	rows := failing
	if !opts.OnlyFailed {
		rows = append(rows, current...)
	}
	if len(rows) > 0 {
		if err := writeTextTable(&b, rows); err != nil {
			return err
		}
	}
	if opts.OnlyFailed && len(current) > 0 {
		fmt.Fprintf(&b, "(%s Current not listed: --only-failed)\n", plural(len(current), "cluster"))
	}
	writeTextCondition(&b, run)
	if !opts.OnlyFailed {
		for _, c := range current {
			if c.Reconcile != nil {
				// Where its time went, as the summary's table says.
				b.WriteByte('\n')
				writeTextLine(&b, 0, c.Name+": "+reconcileLine(c.Reconcile))
			}
			if hasPreflightWarning(c) {
				b.WriteByte('\n')
				writeTextLine(&b, 0, c.Name+": "+preflightLine(c.Preflight))
			}
		}
	}
	for _, c := range failing {
		b.WriteByte('\n')
		writeTextCluster(&b, c)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write text report: %w", err)
	}
	return nil
}

// textVerdict is "Failed(image-pull)", or the bare verdict when there is no code.
func textVerdict(c result.Cluster) string {
	if c.Code == "" {
		return string(c.Verdict)
	}
	return fmt.Sprintf("%s(%s)", c.Verdict, c.Code)
}

func writeTextTable(b *bytes.Buffer, clusters []result.Cluster) error {
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tVERDICT\tREVISION\tREADY\tDURATION\tREASON")
	for _, c := range clusters {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cell(c.Name), cell(textVerdict(c)),
			cell(appliedRevision(c)), readyObjects(c), formatDuration(c.DurationMs), cell(shortReason(c)))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("align text table: %w", err)
	}
	// tabwriter pads the cell before an empty last column; drop that trailing space.
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		if line == "" {
			continue
		}
		b.WriteString(strings.TrimRight(line, " \n"))
		b.WriteByte('\n')
	}
	return nil
}

// maxReasonRunes bounds the REASON column: a Kubernetes or Flux reason, not a message.
const maxReasonRunes = 40

// shortReason is the programmatic reason of a cluster's verdict (ImagePullBackOff,
// HealthCheckFailed, DependencyNotReady...), or "" when the verdict says it all.
func shortReason(c result.Cluster) string {
	if c.Ready() || c.Reason == string(c.Verdict) {
		return ""
	}
	return sanitize.Truncate(c.Reason, maxReasonRunes)
}

// cell cleans text for a table cell: one line, no tab to break the columns.
func cell(s string) string { return sanitize.Compact(s) }

// writeTextCondition writes the aggregated Ready condition, naming the clusters that are not
// Current; their messages follow, once each, in their details.
func writeTextCondition(b *bytes.Buffer, run result.Run) {
	c := run.Condition
	fmt.Fprintf(b, "\n%s=%s (%s): ", cell(c.Type), cell(c.Status), cell(c.Reason))
	switch {
	case len(run.Results) == 0:
		b.WriteString(cell(c.Message))
	case len(run.FailedClusters) == 0:
		b.WriteString("all clusters are Current")
	default:
		// The count per verdict and code; each group's clusters named (a few of them at scale).
		var parts []string
		groups := result.Rollup(run.Results)
		for _, g := range groups {
			part := fmt.Sprintf("%d %s", len(g.Clusters), g.Label())
			if g.Verdict != result.VerdictCurrent {
				names := g.Names(len(g.Clusters))
				if len(run.FailedClusters) > groupAbove {
					names = g.Names(namesShown)
				}
				part += ": " + cell(names)
			}
			parts = append(parts, part)
		}
		fmt.Fprintf(b, "%d of %s not Current: %s", len(run.FailedClusters), plural(len(run.Results), "cluster"), strings.Join(parts, "; "))
	}
	b.WriteByte('\n')
}

func writeTextCluster(b *bytes.Buffer, c result.Cluster) {
	writeTextLine(b, 0, joinNonEmpty(": ", c.Name, verdictCode(c.Verdict, c.Code), explanation(c)))
	if c.Reconcile != nil {
		writeTextLine(b, 1, reconcileLine(c.Reconcile))
	}
	if hasPreflightWarning(c) {
		writeTextLine(b, 1, preflightLine(c.Preflight))
	}
	t := buildTree(c)
	for _, n := range t.roots {
		writeTextNode(b, n, 1)
	}
	for i := range t.orphans {
		writeTextObject(b, &t.orphans[i], 1)
	}
}

func writeTextNode(b *bytes.Buffer, n *node, depth int) {
	facts, message := fluxFacts(n)
	parts := append([]string{n.flux.ID}, facts...)
	writeTextLine(b, depth, joinNonEmpty("  ", append(parts, message)...))
	for _, e := range n.entries {
		if e.node != nil {
			writeTextNode(b, e.node, depth+1)
		} else {
			writeTextObject(b, e.object, depth+1)
		}
	}
}

func writeTextObject(b *bytes.Buffer, o *result.Object, depth int) {
	writeTextLine(b, depth, joinNonEmpty("  ", o.ID, string(o.Status), objectSummary(o)))
	if m := statusMessage(o); m != "" {
		writeTextLine(b, depth+1, "status: "+m)
	}
	f := o.Failure
	if f == nil {
		return
	}
	if f.Pod != "" || f.Container != "" {
		pod := joinNonEmpty(" ", prefixed("pod ", f.Pod), prefixed("container ", f.Container))
		writeTextLine(b, depth+1, fmt.Sprintf("%s, restarts %d", pod, f.RestartCount))
	}
	for _, e := range f.Events {
		writeTextLine(b, depth+1, fmt.Sprintf("event %s %s%s", e.Object, joinNonEmpty(": ", e.Reason, e.Message), eventCount(e, "x")))
	}
	if f.LogsError != "" {
		writeTextLine(b, depth+1, "logs unavailable: "+f.LogsError)
	}
	if lines, _ := logTail(f.Logs, math.MaxInt, math.MaxInt); len(lines) > 0 {
		writeTextLine(b, depth+1, "logs:")
		for _, l := range lines {
			if l == "" {
				b.WriteByte('\n')
				continue
			}
			b.WriteString(strings.Repeat("  ", depth+2))
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
}

// writeTextLine writes s cleaned to one line, indented two spaces per depth.
func writeTextLine(b *bytes.Buffer, depth int, s string) {
	b.WriteString(strings.Repeat("  ", depth))
	b.WriteString(sanitize.Line(s))
	b.WriteByte('\n')
}

// prefixed is prefix+s, or "" when s is empty.
func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

// LogGroup is the detail of one cluster that is not Current, for a collapsible section of a
// CI log (GitHub's ::group::): a one-line title and the text output's lines for it.
type LogGroup struct {
	Title string
	Lines []string
}

// Limits of LogGroups: a fleet's log stays a few hundred lines; the summary and the report
// file hold the rest.
const (
	maxLogGroups     = 50
	maxLogGroupLines = 100
)

// LogGroups are the details of the clusters that are not Current, in the summary's order
// (rollup: verdict and code, then name), at most 50, each at most 100 lines; more says how
// many clusters were left out. Titles and lines are one line each and cleaned, not yet safe
// from runner commands (the caller breaks them for its CI).
func LogGroups(run result.Run) (groups []LogGroup, more int) {
	var failing []result.Cluster
	for _, c := range run.Results {
		if !c.Ready() {
			failing = append(failing, c)
		}
	}
	sortByRollup(failing)
	for i, c := range failing {
		if i == maxLogGroups {
			return groups, len(failing) - i
		}
		var b bytes.Buffer
		writeTextCluster(&b, c)
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		title := lines[0]
		lines = lines[1:]
		if len(lines) > maxLogGroupLines {
			left := len(lines) - maxLogGroupLines
			lines = append(lines[:maxLogGroupLines:maxLogGroupLines], fmt.Sprintf("(%s more in the summary and the report file)", plural(left, "line")))
		}
		groups = append(groups, LogGroup{Title: sanitize.Line(title), Lines: lines})
	}
	return groups, 0
}
