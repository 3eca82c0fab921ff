package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/org/app-status-action/internal/result"
)

// Bounds of the summary's timeline: a picture of where the time went for the clusters a
// person looks at (those that are not Current, then the slow ones), never a wall.
const (
	timelineClusters     = 5
	timelineSlowClusters = 2
	timelineRows         = 6
	timelineBarWidth     = 20
	// timelineSlowMs is how long a Current cluster must have taken to be shown as slow.
	timelineSlowMs = 60_000
)

// timelineEvent is one row of a cluster's timeline: what happened, when (ms from the
// cluster's start) and how much it matters when rows must be left out (lower first).
type timelineEvent struct {
	what     string
	at       int64
	priority int
}

// writeTimeline writes the timeline of the failing and slow clusters: a row per moment
// (Flux applied the revision, an object failed, turned Current or was still waiting, the
// verdict) with a bar to scale, the longest cluster shown filling it. Clusters without
// moments (a run from an older version, one never reached) are not shown; without any, the
// section is left out.
func writeTimeline(b *strings.Builder, failing, current []result.Cluster, grouped bool, budget int) {
	clusters := timelineClustersOf(failing, current, grouped)
	if len(clusters) == 0 {
		return
	}
	longest := int64(1)
	for _, c := range clusters {
		longest = max(longest, c.DurationMs)
	}
	var t strings.Builder
	fmt.Fprintf(&t, "**Timeline** of the clusters that are not Current or were slow, from each cluster's start (a full bar is %s):\n\n", formatDuration(longest))
	t.WriteString("| Cluster | Moment | | At |\n| :-- | :-- | :-- | --: |\n")
	for _, c := range clusters {
		for i, e := range timelineEvents(c) {
			name := ""
			if i == 0 {
				name = verdictSymbol(c.Verdict) + " " + mdText(c.Name, maxNameRunes)
			}
			fmt.Fprintf(&t, "| %s | %s | `%s` | %s |\n", name, e.what, timelineBar(e.at, longest), formatDuration(e.at))
		}
	}
	t.WriteString("\n")
	if b.Len()+t.Len() <= budget {
		b.WriteString(t.String())
	}
}

// timelineClustersOf picks the clusters to draw: those that are not Current, in the summary's
// order (when grouped, the first of each verdict and code: the others of a group look the
// same), then the slowest Current ones, each with at least one moment recorded.
func timelineClustersOf(failing, current []result.Cluster, grouped bool) []result.Cluster {
	var out []result.Cluster
	drawn := map[string]bool{}
	for _, c := range failing {
		if len(out) == timelineClusters {
			return out
		}
		group := string(c.Verdict) + "/" + string(c.Code)
		if hasMoments(c) && (!grouped || !drawn[group]) {
			out = append(out, c)
			drawn[group] = true
		}
	}
	slow := slices.Clone(current)
	slices.SortStableFunc(slow, func(a, b result.Cluster) int {
		return cmp.Or(cmp.Compare(b.DurationMs, a.DurationMs), strings.Compare(a.Name, b.Name))
	})
	for i, c := range slow {
		if i == timelineSlowClusters || len(out) == timelineClusters || c.DurationMs < timelineSlowMs {
			break
		}
		if hasMoments(c) {
			out = append(out, c)
		}
	}
	return out
}

func hasMoments(c result.Cluster) bool {
	if c.AppliedMs != nil {
		return true
	}
	for _, o := range c.Objects {
		if o.SinceMs != nil {
			return true
		}
	}
	for _, f := range c.Flux {
		if f.SinceMs != nil {
			return true
		}
	}
	return false
}

// timelineEvents are a cluster's rows, in time order: the verdict always, and by priority
// the failures, Flux applying the revision, what was still waiting at the end and the last
// objects to turn Current, at most timelineRows in all.
func timelineEvents(c result.Cluster) []timelineEvent {
	var events []timelineEvent
	for _, f := range c.Flux {
		if f.SinceMs != nil && f.Verdict != result.VerdictCurrent && f.Verdict != result.VerdictInProgress {
			events = append(events, timelineEvent{what: verdictSymbol(f.Verdict) + " " + mdText(f.ID, maxNameRunes) + " " + verdictCode(f.Verdict, f.Code), at: *f.SinceMs, priority: 1})
		}
	}
	var currents []result.Object
	for _, o := range c.Objects {
		switch {
		case o.SinceMs == nil:
		case o.Status == result.ObjectFailed:
			code := ""
			if o.Failure != nil {
				code = " (" + string(o.Failure.Code) + ")"
			}
			events = append(events, timelineEvent{what: "❌ " + mdText(o.ID, maxNameRunes) + " Failed" + mdText(code, maxNameRunes), at: *o.SinceMs, priority: 1})
		case o.Status == result.ObjectCurrent:
			currents = append(currents, o)
		case !c.Ready():
			events = append(events, timelineEvent{what: "⏳ " + mdText(o.ID, maxNameRunes) + " still " + string(o.Status), at: c.DurationMs, priority: 3})
		}
	}
	if c.AppliedMs != nil {
		events = append(events, timelineEvent{what: "📦 Flux applied the revision", at: *c.AppliedMs, priority: 2})
	}
	// The last objects to turn Current say what the cluster waited for.
	slices.SortStableFunc(currents, func(a, b result.Object) int { return cmp.Compare(*b.SinceMs, *a.SinceMs) })
	for i, o := range currents {
		if i == 2 {
			break
		}
		events = append(events, timelineEvent{what: "✅ " + mdText(o.ID, maxNameRunes) + " Current", at: *o.SinceMs, priority: 4})
	}
	slices.SortStableFunc(events, func(a, b timelineEvent) int { return cmp.Compare(a.priority, b.priority) })
	if len(events) > timelineRows-1 {
		events = events[:timelineRows-1]
	}
	events = append(events, timelineEvent{what: "**verdict: " + verdictCode(c.Verdict, c.Code) + "**", at: c.DurationMs})
	slices.SortStableFunc(events, func(a, b timelineEvent) int { return cmp.Compare(a.at, b.at) })
	return events
}

// timelineBar is at on a bar of timelineBarWidth cells where longest fills it.
func timelineBar(at, longest int64) string {
	filled := int((at*timelineBarWidth + longest/2) / longest)
	filled = min(max(filled, 0), timelineBarWidth)
	if filled == 0 && at > 0 {
		filled = 1
	}
	return strings.Repeat("█", filled) + strings.Repeat("░", timelineBarWidth-filled)
}
