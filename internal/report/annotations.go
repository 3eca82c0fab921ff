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
// name, with the message "<Verdict>: <code>: <summary>". There are at most 10: past that, the
// first 9 stay and the 10th, titled "N more clusters", combines the rest as
// "name: message; name: message". It is nil when every cluster is Current.
func Annotations(run result.Run) []Annotation {
	var all []Annotation
	for _, c := range run.Results {
		if c.Ready() {
			continue
		}
		all = append(all, Annotation{Title: sanitize.Line(c.Name), Message: annotationMessage(c)})
	}
	if len(all) <= maxAnnotations {
		return all
	}
	kept, rest := all[:maxAnnotations-1:maxAnnotations-1], all[maxAnnotations-1:]
	var b strings.Builder
	for i, a := range rest {
		part := a.Title + ": " + a.Message
		if i > 0 {
			part = "; " + part
		}
		if i == 0 && len(part) > maxCombinedBytes {
			b.WriteString(sanitize.Truncate(part, maxCombinedBytes/4))
			continue
		}
		if b.Len()+len(part) > maxCombinedBytes {
			fmt.Fprintf(&b, "; and %d more", len(rest)-i)
			break
		}
		b.WriteString(part)
	}
	return append(kept, Annotation{Title: fmt.Sprintf("%d more clusters", len(rest)), Message: b.String()})
}

func annotationMessage(c result.Cluster) string {
	return sanitize.Truncate(sanitize.Line(joinNonEmpty(": ", string(c.Verdict), string(c.Code), explanation(c))), maxTextRunes)
}
