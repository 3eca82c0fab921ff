package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// DefaultMaxBytes is the size Markdown stays under when MarkdownOptions.MaxBytes is not set:
// half of the 1 MiB GitHub accepts for a step summary.
const DefaultMaxBytes = 512 << 10

// MarkdownOptions tunes Markdown.
type MarkdownOptions struct {
	// MaxBytes is the size the summary stays under, DefaultMaxBytes when zero or less.
	MaxBytes int
	// BadInput, when set, is why no cluster was contacted (several errors a line each): it
	// opens the summary, escaped like any other text.
	BadInput string
	// GitHubNotes say what the run could not post to GitHub (deployments, the pull-request
	// comment): a short list after the table, escaped, at most maxGitHubNotes.
	GitHubNotes []string
}

// maxGitHubNotes bounds the notes about GitHub the summary lists.
const maxGitHubNotes = 10

// Limits on what the summary shows, so that one cluster or one message cannot crowd out the
// rest. Text is cut to a number of runes before it is escaped.
const (
	noteReserve        = 1024     // bytes kept for the closing note and the table's overflow line
	minClusterShare    = 16 << 10 // room a cluster's details may take even when many clusters follow
	maxNameRunes       = 120      // cluster names and object IDs
	maxCellRunes       = 200      // table cells and facts
	maxSummaryRunes    = 300      // the <summary> line of a cluster's details
	maxTextRunes       = 1000     // messages in a cluster's details
	maxConditionRunes  = 2000     // the aggregated condition message
	maxHeadlineApps    = 5        // resources named in the headline
	logLinesShown      = 20       // a log is cut to its last lines
	logLineRunes       = 500      // and each line to this many runes
	omittedLineReserve = 128      // bytes kept in a cluster's details for its "not shown" line
)

// Markdown renders the job summary as GitHub-flavoured markdown, for a person who should see
// the counts and what failed without scrolling:
//
//   - the headline with the overall verdict;
//   - the Ready condition's status and a rollup by verdict and code
//     (880 ✅ Current · 20 ❌ Failed (not-progressing) · 100 🔌 Unreachable);
//   - the clusters that are not Current first, one row each with the code and a short reason,
//     or, above groupAbove of them, one row per verdict and code with its clusters listed;
//     with several resources, one column per resource;
//   - a collapsed <details> block per cluster that is not Current with its Flux objects and
//     the objects that are not Current, with their evidence: the full text, shown once (a few
//     clusters per group when grouped);
//   - the Current clusters: in the same table when they are few, else collapsed in one block.
//
// The summary stays under opts.MaxBytes whatever the number of clusters and objects: what
// needs action comes first, details are added cluster by cluster while they fit, logs are cut
// to their last lines, and when anything is left out a closing note says how much and points
// to the JSON output. A cluster that is not Current is never left out silently.
func Markdown(run result.Run, opts MarkdownOptions) string {
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	budget := limit - noteReserve

	var b strings.Builder
	if opts.BadInput != "" {
		writeBadInput(&b, opts.BadInput)
		run.Condition.Message = "no cluster was contacted" // the error is said once, above
	}
	writeHeadline(&b, run)
	writeRollup(&b, run)
	writeGitHubNotes(&b, opts.GitHubNotes, budget)
	var failing, current []result.Cluster
	for _, c := range run.Results {
		if c.Ready() {
			current = append(current, c)
		} else {
			failing = append(failing, c)
		}
	}
	sortByRollup(failing)
	allCurrent := current
	cols := resourceColumns(run)
	var cut cuts
	grouped := len(failing) > groupAbove
	if grouped {
		cut.tableClusters = writeGroupTable(&b, failing, budget)
	} else {
		rows := failing
		if len(current) <= currentRowsInline {
			rows = append(rows, current...)
			current = nil
		}
		cut.tableClusters = writeTable(&b, rows, cols, budget)
	}
	writeReconcile(&b, run.Results, budget)
	writePreflight(&b, run.Results, budget)
	writeTimeline(&b, failing, allCurrent, grouped, budget)
	writeDetails(&b, detailed(failing, grouped), grouped, budget, &cut)
	cut.tableClusters += writeCurrent(&b, current, cols, budget)
	writeNote(&b, cut, limit)
	// Only a limit too small for the headline itself gets here with more than it allows.
	return sanitize.CutUTF8(strings.TrimRight(b.String(), "\n")+"\n", limit)
}

// Layout thresholds of the summary.
const (
	// groupAbove is how many clusters that are not Current get a row each; above it, one row
	// per verdict and code.
	groupAbove = 20
	// examplesPerGroup is how many clusters of a group show their details when grouped.
	examplesPerGroup = 3
	// currentRowsInline is how many Current clusters share the table with the others; more
	// are collapsed in a block of their own.
	currentRowsInline = 10
	// namesShown is how many clusters a group's row or the rollup names before "and N more".
	namesShown = 3
	// shortReasonRunes bounds the reason a table row gives; the details have the full text.
	shortReasonRunes = 100
)

// sortByRollup orders clusters as the rollup does: what needs action first, then by name.
func sortByRollup(clusters []result.Cluster) {
	rank := map[[2]string]int{}
	for i, g := range result.Rollup(clusters) {
		rank[[2]string{string(g.Verdict), string(g.Code)}] = i
	}
	slices.SortStableFunc(clusters, func(a, b result.Cluster) int {
		return cmp.Or(cmp.Compare(rank[[2]string{string(a.Verdict), string(a.Code)}], rank[[2]string{string(b.Verdict), string(b.Code)}]),
			strings.Compare(a.Name, b.Name))
	})
}

// writeRollup writes the Ready condition's status and the count of clusters per verdict and
// code, in one line.
func writeRollup(b *strings.Builder, run result.Run) {
	c := run.Condition
	fmt.Fprintf(b, "**%s=%s**", mdText(c.Type, maxCellRunes), mdText(c.Status, maxCellRunes))
	groups := result.Rollup(run.Results)
	if len(groups) == 0 {
		if c.Message != "" {
			b.WriteString(" — " + mdText(c.Message, maxConditionRunes))
		}
		b.WriteString("\n\n")
		return
	}
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		parts = append(parts, fmt.Sprintf("%d %s&nbsp;%s", len(g.Clusters), verdictSymbol(g.Verdict), mdText(g.Label(), maxCellRunes)))
	}
	b.WriteString(" — " + strings.Join(parts, " · ") + "\n\n")
}

// resourceColumns are the requested resources when there are several: the table then has
// one column per resource.
func resourceColumns(run result.Run) []string {
	if len(run.Resources) < 2 {
		return nil
	}
	return run.Resources
}

// resourceCell is a cluster's verdict for one requested resource.
func resourceCell(c result.Cluster, id string) string {
	for _, f := range c.Flux {
		if strings.EqualFold(f.ID, id) {
			return verdictSymbol(f.Verdict) + "&nbsp;" + mdText(string(f.Verdict), maxCellRunes)
		}
	}
	return "-"
}

// writeTable writes one row per cluster while the rows fit in budget and returns how many
// clusters were left out.
func writeTable(b *strings.Builder, clusters []result.Cluster, cols []string, budget int) (left int) {
	if len(clusters) == 0 {
		return 0
	}
	header := "| Cluster | Verdict |"
	align := "| :-- | :-- |"
	for _, id := range cols {
		header += " " + mdText(shortResource(id), maxNameRunes) + " |"
		align += " :-- |"
	}
	header += " Revision | Ready | Time | Reason |\n"
	align += " :-- | --: | --: | :-- |\n"
	if b.Len()+len(header)+len(align) > budget {
		return len(clusters)
	}
	b.WriteString(header + align)
	for i, c := range clusters {
		cells := ""
		for _, id := range cols {
			cells += " " + resourceCell(c, id) + " |"
		}
		row := fmt.Sprintf("| %s | %s&nbsp;%s |%s %s | %s | %s | %s |\n",
			mdText(c.Name, maxNameRunes), verdictSymbol(c.Verdict), mdText(string(c.Verdict), maxCellRunes), cells,
			mdText(appliedRevision(c), maxCellRunes), readyObjects(c), formatDuration(c.DurationMs),
			mdText(rowReason(c), shortReasonRunes+20))
		if b.Len()+len(row) > budget {
			left = len(clusters) - i
			fmt.Fprintf(b, "\n_%s not in this table._\n", plural(left, "more cluster"))
			break
		}
		b.WriteString(row)
	}
	b.WriteString("\n")
	return left
}

// shortResource is Kind/name of a resource Kind/namespace/name, for a column header.
func shortResource(id string) string {
	parts := strings.Split(id, "/")
	if len(parts) == 3 {
		return parts[0] + "/" + parts[2]
	}
	return id
}

// rowReason is the reason a table row gives: the code and the object that fails, or the
// start of the cluster's message; the details have the rest.
func rowReason(c result.Cluster) string {
	if c.Ready() {
		return ""
	}
	if obj := failingObjectID(c); obj != "" && c.Code != "" {
		return string(c.Code) + ": " + obj
	}
	return sanitize.Truncate(sanitize.Line(reason(c)), shortReasonRunes)
}

// failingObjectID is the ID of the first object whose failure gives the cluster its code.
func failingObjectID(c result.Cluster) string {
	for _, o := range c.Objects {
		if o.Failure != nil && o.Failure.Code == c.Code {
			return o.ID
		}
	}
	return ""
}

// writeGroupTable writes one row per verdict and code, each with its clusters (the first
// ones named, all of them in a collapsed list), and returns how many clusters it could not
// name within budget.
func writeGroupTable(b *strings.Builder, clusters []result.Cluster, budget int) (left int) {
	const header = "| Verdict | Clusters | Which |\n| :-- | --: | :-- |\n"
	groups := result.Rollup(clusters)
	if b.Len()+len(header) > budget {
		return len(clusters)
	}
	b.WriteString(header)
	for i, g := range groups {
		label := fmt.Sprintf("| %s&nbsp;%s | %d | ", verdictSymbol(g.Verdict), mdText(g.Label(), maxCellRunes), len(g.Clusters))
		names := make([]string, len(g.Clusters))
		for j, n := range g.Clusters {
			names[j] = mdText(n, maxNameRunes)
		}
		first := strings.Join(names[:min(namesShown, len(names))], ", ")
		// Room for the row: the names that fit in half of what is left (the other half is for
		// the details of the examples) are listed, the others counted as left out.
		room := (budget-b.Len())/2 - len(label) - len(first) - 128
		if room < 0 {
			for _, rest := range groups[i:] {
				left += len(rest.Clusters)
			}
			fmt.Fprintf(b, "\n_%s not in this table._\n", plural(len(groups)-i, "more group"))
			break
		}
		which := first
		if len(names) > namesShown {
			var list strings.Builder
			shown := 0
			for _, n := range names {
				if list.Len()+len(n)+2 > room {
					break
				}
				if shown > 0 {
					list.WriteString(", ")
				}
				list.WriteString(n)
				shown++
			}
			shown = max(shown, min(namesShown, len(names)))
			if shown < len(names) {
				fmt.Fprintf(&list, " and %d more", len(names)-shown)
				left += len(names) - shown
			}
			which = fmt.Sprintf("<details><summary>%s and %d more</summary>%s</details>", first, len(names)-namesShown, list.String())
		}
		b.WriteString(label + which + " |\n")
	}
	if len(groups) > 0 {
		fmt.Fprintf(b, "\nThe details of %d clusters per group follow; the `results` output and `report-file` have every cluster.\n", examplesPerGroup)
	}
	b.WriteString("\n")
	return left
}

// detailed is the clusters whose details the summary shows: every one that is not Current,
// or, when grouped, the first examplesPerGroup of each group.
func detailed(failing []result.Cluster, grouped bool) []result.Cluster {
	if !grouped {
		return failing
	}
	seen := map[[2]string]int{}
	var out []result.Cluster
	for _, c := range failing {
		key := [2]string{string(c.Verdict), string(c.Code)}
		if seen[key] < examplesPerGroup {
			out = append(out, c)
		}
		seen[key]++
	}
	return out
}

// writeCurrent writes the Current clusters left out of the main table, collapsed in one
// block, while they fit in budget, and returns how many did not.
func writeCurrent(b *strings.Builder, clusters []result.Cluster, cols []string, budget int) (left int) {
	if len(clusters) == 0 {
		return 0
	}
	open := fmt.Sprintf("<details><summary>%s %s Current</summary>\n\n", verdictSymbol(result.VerdictCurrent), plural(len(clusters), "cluster"))
	const closing = "\n</details>\n\n"
	if b.Len()+len(open)+len(closing)+256 > budget {
		return len(clusters)
	}
	b.WriteString(open)
	left = writeTable(b, clusters, cols, budget-len(closing))
	b.WriteString(closing)
	return left
}

// writeGitHubNotes lists what could not be posted to GitHub; the verdict does not depend on it.
func writeGitHubNotes(b *strings.Builder, notes []string, budget int) {
	if len(notes) == 0 {
		return
	}
	var section strings.Builder
	section.WriteString("**Not posted to GitHub** (the verdict stands):\n\n")
	for i, n := range notes {
		if i == maxGitHubNotes {
			fmt.Fprintf(&section, "- and %d more\n", len(notes)-i)
			break
		}
		fmt.Fprintf(&section, "- %s\n", mdText(n, maxCellRunes*2))
	}
	section.WriteString("\n")
	if b.Len()+section.Len() <= budget {
		b.WriteString(section.String())
	}
}

// cuts counts what the summary left out.
type cuts struct {
	tableClusters  int // clusters without a row in the table
	detailClusters int // clusters that are not Current without details
	objects        int // objects that are not Current and are not listed
}

func writeHeadline(b *strings.Builder, run result.Run) {
	apps := run.Resources
	more := ""
	if len(apps) > maxHeadlineApps {
		apps, more = apps[:maxHeadlineApps], fmt.Sprintf(" and %d more", len(apps)-maxHeadlineApps)
	}
	escaped := make([]string, len(apps))
	for i, a := range apps {
		escaped[i] = mdText(a, maxNameRunes)
	}
	app := strings.Join(escaped, ", ") + more
	if app == "" {
		app = "no app"
	}
	revision := "any revision"
	if run.ExpectedRevision != "" {
		revision = mdCode(flux.ShortRevision(run.ExpectedRevision), maxCellRunes)
	}
	ready := 0
	for _, c := range run.Results {
		if c.Ready() {
			ready++
		}
	}
	fmt.Fprintf(b, "## %s %s: %s at %s — %d of %s ready\n\n", statusSymbol(run.Status),
		mdText(string(run.Status), maxCellRunes), app, revision, ready, plural(len(run.Results), "cluster"))
}

// writeDetails writes the details of every cluster that is not Current, in order, while they
// fit in budget. Each cluster may take its share of the room left, and at least
// minClusterShare, so that the first clusters show enough to act on.
func writeDetails(b *strings.Builder, clusters []result.Cluster, rowless bool, budget int, cut *cuts) {
	var failing []result.Cluster
	for _, c := range clusters {
		if !c.Ready() && needsDetails(c, rowless) {
			failing = append(failing, c)
		}
	}
	for i, c := range failing {
		remaining := budget - b.Len()
		share := min(max(remaining/(len(failing)-i), minClusterShare), remaining)
		block, omitted, ok := clusterDetails(c, share, rowless)
		if !ok {
			for _, rest := range failing[i:] {
				cut.detailClusters++
				cut.objects += buildTree(rest).listed()
			}
			return
		}
		b.WriteString(block)
		cut.objects += omitted
	}
}

func writeNote(b *strings.Builder, cut cuts, limit int) {
	var parts []string
	if cut.tableClusters > 0 {
		parts = append(parts, plural(cut.tableClusters, "cluster")+" in the table")
	}
	if cut.detailClusters > 0 {
		parts = append(parts, "the details of "+plural(cut.detailClusters, "cluster"))
	}
	if cut.objects > 0 {
		parts = append(parts, plural(cut.objects, "object")+" that are not Current")
	}
	if len(parts) == 0 {
		return
	}
	size := fmt.Sprintf("%d bytes", limit)
	if limit%1024 == 0 {
		size = fmt.Sprintf("%d KiB", limit/1024)
	}
	list := parts[0]
	if n := len(parts); n > 1 {
		list = strings.Join(parts[:n-1], ", ") + " and " + parts[n-1]
	}
	fmt.Fprintf(b, "✂️ **This summary was cut to stay under %s.** Not shown: %s. "+
		"Run `app-status verify -o json` or read the `results` output for everything.\n", size, list)
}

// CompactSummary is the one-line summary of one leg of a merged run (summary: compact): the
// merge writes the fleet's.
func CompactSummary(run result.Run) string {
	leg := "this leg"
	if run.Shard != nil {
		leg = fmt.Sprintf("shard %d/%d", run.Shard.Index, run.Shard.Count)
	}
	ready := 0
	for _, c := range run.Results {
		if c.Ready() {
			ready++
		}
	}
	revision := "any revision"
	if run.ExpectedRevision != "" {
		revision = mdCode(flux.ShortRevision(run.ExpectedRevision), maxCellRunes)
	}
	return fmt.Sprintf("%s %s of %s at %s: %d of %s ready (the merge has the fleet's summary)\n", statusSymbol(run.Status),
		leg, mdText(strings.Join(run.Resources, ", "), maxConditionRunes), revision, ready, plural(len(run.Results), "cluster"))
}

// writeBadInput opens the summary with why no cluster was contacted: one error on the line of
// its heading, several (the bad lines of a clusters input, one per line of text) a list item
// each, the first maxBadInputItems of them.
func writeBadInput(b *strings.Builder, text string) {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) <= 1 {
		fmt.Fprintf(b, "**Bad input:** %s\n\n", mdText(text, maxConditionRunes))
		return
	}
	b.WriteString("**Bad input:**\n\n")
	for i, l := range lines {
		if i == maxBadInputItems {
			fmt.Fprintf(b, "- and %d more\n", len(lines)-i)
			break
		}
		fmt.Fprintf(b, "- %s\n", mdText(l, maxCellRunes*2))
	}
	b.WriteString("\n")
}

// maxBadInputItems is how many errors of a bad input the summary lists.
const maxBadInputItems = 20
