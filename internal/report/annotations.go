package report

import (
	"fmt"
	"strings"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

const (
	// maxAnnotations is how many annotations a run gives at most, so a failure across a
	// fleet does not bury the job page (GitHub shows 10 error annotations per step).
	maxAnnotations = 10
	// maxCombinedBytes bounds the message of the annotation that combines the clusters past
	// the first nine.
	maxCombinedBytes = 4096
)

// Annotation is one error annotation for the job page: a title and a one-line message.
type Annotation struct {
	Title   string
	Message string
}

// Annotations gives one annotation per cluster that is not Current, titled with the cluster's
// name, with the message "<Verdict>: <code>: <summary>", those that need action first (as
// the rollup orders them). GitHub shows 10 error annotations per step: past that, the first 9
// stay and the 10th, titled "N more clusters are not Current", counts the rest by verdict and
// code, naming a few of each. It is nil when every cluster is Current.
func Annotations(run result.Run) []Annotation {
	var failing []result.Cluster
	for _, c := range run.Results {
		if !c.Ready() {
			failing = append(failing, c)
		}
	}
	if len(failing) == 0 {
		return nil
	}
	sortByRollup(failing)
	all := make([]Annotation, len(failing))
	for i, c := range failing {
		all[i] = Annotation{Title: sanitize.Line(c.Name), Message: annotationMessage(c)}
	}
	if len(all) <= maxAnnotations {
		return all
	}
	kept, rest := all[:maxAnnotations-1:maxAnnotations-1], failing[maxAnnotations-1:]
	var b strings.Builder
	groups := result.Rollup(rest)
	for i, g := range groups {
		part := fmt.Sprintf("%s: %d (%s)", g.Label(), len(g.Clusters), sanitize.Line(g.Names(namesShown)))
		if i > 0 {
			part = "; " + part
		}
		if b.Len()+len(part) > maxCombinedBytes {
			fmt.Fprintf(&b, "; and %d more groups", len(groups)-i)
			break
		}
		b.WriteString(part)
	}
	b.WriteString(". GitHub shows 10 annotations per step: the job summary lists every cluster")
	return append(kept, Annotation{Title: fmt.Sprintf("%d more clusters are not Current", len(rest)), Message: b.String()})
}

func annotationMessage(c result.Cluster) string {
	return sanitize.Truncate(sanitize.Line(joinNonEmpty(": ", string(c.Verdict), string(c.Code), explanation(c))), maxTextRunes)
}
