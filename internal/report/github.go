package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// MaxDeploymentDescription is the length GitHub accepts for a deployment status description,
// in characters.
const MaxDeploymentDescription = 140

// DeploymentState is the GitHub deployment status state a cluster's verdict is shown as:
// success when Current, failure when the rollout failed or its Flux object does not exist,
// inactive when the run was cancelled, error when the run could not tell (the cluster could
// not be reached or read, the time ran out, the object is suspended and not verified, or it
// applies to another cluster without Flux's wait: Unverified).
func DeploymentState(v result.Verdict) string {
	switch v {
	case result.VerdictCurrent:
		return "success"
	case result.VerdictFailed, result.VerdictNotFound:
		return "failure"
	case result.VerdictCancelled:
		return "inactive"
	case result.VerdictInProgress:
		return "in_progress"
	}
	return "error"
}

// DeploymentDescription describes a cluster's verdict in one line of at most 140 characters:
// "crash-loop: Deployment/api" for a failure, the verdict and its reason otherwise.
func DeploymentDescription(c result.Cluster) string {
	text := string(c.Verdict)
	if c.Verdict == result.VerdictFailed && c.Code != "" {
		text = string(c.Code)
		if obj := failingObject(c); obj != "" {
			text += ": " + obj
		}
	} else if s := explanation(c); s != "" {
		text += ": " + s
	}
	return descriptionText(text)
}

// ProgressDescription describes a cluster while it is verified: "waiting: <message>".
func ProgressDescription(message string) string {
	if message == "" {
		return "verifying"
	}
	return descriptionText("waiting: " + message)
}

// FleetDescription describes the verdicts of a group of clusters in one line of at most 140
// characters: "998/1000 Current; failed: eu-3, us-7 and 1 more". Clusters still waiting are
// counted ("12 waiting") when final is false.
func FleetDescription(verdicts map[string]result.Verdict, final bool) string {
	names := sortedKeys(verdicts)
	current, waiting := 0, 0
	var failed []string
	for _, n := range names {
		switch verdicts[n] {
		case result.VerdictCurrent:
			current++
		case result.VerdictInProgress, "":
			if !final {
				waiting++
				continue
			}
			failed = append(failed, n)
		default:
			failed = append(failed, n)
		}
	}
	text := fmt.Sprintf("%d/%d Current", current, len(names))
	if waiting > 0 {
		text += fmt.Sprintf(", %d waiting", waiting)
	}
	if len(failed) == 0 {
		return descriptionText(text)
	}
	text += "; not Current: "
	for i, n := range failed {
		part := sanitize.Line(n)
		if i > 0 {
			part = ", " + part
		}
		rest := fmt.Sprintf(" and %d more", len(failed)-i)
		if len([]rune(text+part)) > MaxDeploymentDescription-len(rest) {
			text += rest
			break
		}
		text += part
	}
	return descriptionText(text)
}

// descriptionText makes text one line of at most 140 characters.
func descriptionText(text string) string {
	text = sanitize.Line(text)
	if len([]rune(text)) <= MaxDeploymentDescription {
		return text
	}
	return string([]rune(text)[:MaxDeploymentDescription-1]) + "…"
}

// failingObject is Kind/name of the first object whose failure gives the cluster its code.
func failingObject(c result.Cluster) string {
	for _, o := range c.Objects {
		if o.Failure != nil && o.Failure.Code == c.Code {
			return o.Kind + "/" + o.Name
		}
	}
	for _, o := range c.Objects {
		if o.Failure != nil {
			return o.Kind + "/" + o.Name
		}
	}
	return ""
}

func sortedKeys(m map[string]result.Verdict) []string {
	return slices.Sorted(maps.Keys(m))
}

// CommentOptions tunes Comment.
type CommentOptions struct {
	// Marker is the hidden line that finds the comment again on the next run.
	Marker string
	// RunURL links to the workflow run.
	RunURL string
	// MaxBytes bounds the comment; MaxCommentBytes when zero.
	MaxBytes int
	// Now is when the comment is written.
	Now time.Time
}

// MaxCommentBytes keeps a pull-request comment well under the 65,536 characters GitHub
// accepts.
const MaxCommentBytes = 60 << 10

// CommentMarker is the hidden HTML comment that names what a sticky comment is about (the
// workflow, the key that tells its jobs and steps apart, none when empty, and the
// resources): text that cannot close the HTML comment early.
func CommentMarker(workflow, key string, resources []string) string {
	clean := func(s string) string {
		s = sanitize.Line(s)
		return strings.NewReplacer("--", "- -", ">", "&gt;", "<", "&lt;").Replace(s)
	}
	if key != "" {
		key = " key=" + clean(key)
	}
	return fmt.Sprintf("<!-- app-status: workflow=%s%s resources=%s -->", clean(workflow), key, clean(strings.Join(resources, ",")))
}

// Comment renders the fleet's verdict as a pull-request comment: the marker, the headline,
// a table with the clusters that are not Current first, the revision and a link to the run,
// under opts.MaxBytes however many clusters there are.
func Comment(run result.Run, opts CommentOptions) string {
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = MaxCommentBytes
	}
	var b strings.Builder
	b.WriteString(opts.Marker + "\n")
	var head strings.Builder
	writeHeadline(&head, run)
	b.WriteString("#" + head.String())
	var footer strings.Builder
	if run.ExpectedRevision != "" {
		fmt.Fprintf(&footer, "Revision %s", mdCode(flux.ShortRevision(run.ExpectedRevision), maxCellRunes))
	}
	if opts.RunURL != "" {
		if footer.Len() > 0 {
			footer.WriteString(" · ")
		}
		fmt.Fprintf(&footer, "[workflow run](%s)", strings.NewReplacer("(", "%28", ")", "%29", " ", "%20").Replace(sanitize.Line(opts.RunURL)))
	}
	if !opts.Now.IsZero() {
		if footer.Len() > 0 {
			footer.WriteString(" · ")
		}
		fmt.Fprintf(&footer, "updated %s", opts.Now.UTC().Format("2006-01-02 15:04 UTC"))
	}
	end := "\n" + footer.String() + "\n"
	ordered := make([]result.Cluster, 0, len(run.Results))
	for _, c := range run.Results {
		if !c.Ready() {
			ordered = append(ordered, c)
		}
	}
	for _, c := range run.Results {
		if c.Ready() {
			ordered = append(ordered, c)
		}
	}
	const header = "| Cluster | Verdict | Reason |\n| :-- | :-- | :-- |\n"
	budget := limit - len(end) - 128
	if len(ordered) > 0 && b.Len()+len(header) <= budget {
		b.WriteString(header)
		for i, c := range ordered {
			row := fmt.Sprintf("| %s | %s %s | %s |\n", mdText(c.Name, maxNameRunes), verdictSymbol(c.Verdict),
				mdText(string(c.Verdict), maxCellRunes), mdText(reason(c), maxCellRunes))
			if b.Len()+len(row) > budget {
				fmt.Fprintf(&b, "\n_%s more in the workflow run's summary._\n", plural(len(ordered)-i, "cluster"))
				break
			}
			b.WriteString(row)
		}
	}
	b.WriteString(end)
	return b.String()
}
