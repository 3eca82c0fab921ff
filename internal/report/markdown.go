package report

import (
	"fmt"
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
	// BadInput, when set, is why no cluster was contacted: it opens the summary, escaped like
	// any other text.
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

// Markdown renders the job summary as GitHub-flavoured markdown: a headline with the overall
// verdict, the aggregated Ready condition, a table with one row per cluster, then a collapsed
// <details> block for every cluster that is not Current with its Flux objects and the objects
// that are not Current, with their evidence.
//
// The summary stays under opts.MaxBytes whatever the number of clusters and objects: the
// headline and table come first, details are added cluster by cluster while they fit, logs
// are cut to their last lines, and when anything is left out a closing note says how much and
// points to the JSON output.
func Markdown(run result.Run, opts MarkdownOptions) string {
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	budget := limit - noteReserve

	var b strings.Builder
	if opts.BadInput != "" {
		fmt.Fprintf(&b, "**Bad input:** %s\n\n", mdText(opts.BadInput, maxConditionRunes))
	}
	writeHeadline(&b, run)
	writeCondition(&b, run.Condition)
	var cut cuts
	cut.tableClusters = writeTable(&b, run.Results, budget)
	writeReconcile(&b, run.Results, budget)
	writeGitHubNotes(&b, opts.GitHubNotes, budget)
	writeDetails(&b, run.Results, budget, &cut)
	writeNote(&b, cut, limit)
	// Only a limit too small for the headline itself gets here with more than it allows.
	return sanitize.CutUTF8(strings.TrimRight(b.String(), "\n")+"\n", limit)
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

func writeCondition(b *strings.Builder, c result.Condition) {
	fmt.Fprintf(b, "**%s=%s**", mdText(c.Type, maxCellRunes), mdText(c.Status, maxCellRunes))
	if c.Message != "" {
		b.WriteString(" — " + mdText(c.Message, maxConditionRunes))
	}
	b.WriteString("\n\n")
}

// writeTable writes one row per cluster while the rows fit in budget and returns how many
// clusters were left out.
func writeTable(b *strings.Builder, clusters []result.Cluster, budget int) (left int) {
	if len(clusters) == 0 {
		return 0
	}
	const header = "| Cluster | Verdict | Revision | Ready | Time | Reason |\n| :-- | :-- | :-- | --: | --: | :-- |\n"
	if b.Len()+len(header) > budget {
		return len(clusters)
	}
	b.WriteString(header)
	for i, c := range clusters {
		row := fmt.Sprintf("| %s | %s %s | %s | %s | %s | %s |\n",
			mdText(c.Name, maxNameRunes), verdictSymbol(c.Verdict), mdText(string(c.Verdict), maxCellRunes),
			mdText(appliedRevision(c), maxCellRunes), readyObjects(c), formatDuration(c.DurationMs),
			mdText(reason(c), maxCellRunes))
		if b.Len()+len(row) > budget {
			left = len(clusters) - i
			if left == 1 {
				b.WriteString("\n_1 more cluster is not in this table._\n")
			} else {
				fmt.Fprintf(b, "\n_%d more clusters are not in this table._\n", left)
			}
			break
		}
		b.WriteString(row)
	}
	b.WriteString("\n")
	return left
}

// writeDetails writes the details of every cluster that is not Current, in order, while they
// fit in budget. Each cluster may take its share of the room left, and at least
// minClusterShare, so that the first clusters show enough to act on.
func writeDetails(b *strings.Builder, clusters []result.Cluster, budget int, cut *cuts) {
	var failing []result.Cluster
	for _, c := range clusters {
		if !c.Ready() {
			failing = append(failing, c)
		}
	}
	for i, c := range failing {
		remaining := budget - b.Len()
		share := min(max(remaining/(len(failing)-i), minClusterShare), remaining)
		block, omitted, ok := clusterDetails(c, share)
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
