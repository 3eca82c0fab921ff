package report

import (
	"slices"
	"strings"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// Fit returns a copy of run whose JSON (report.JSON's document, compact) takes at most
// maxBytes, and whether anything had to be left out. It leaves out the least useful first:
// logs and events beyond the first lines, then the objects that are Current, then every
// object, then the Flux objects nested in others and long messages, then the end of the
// aggregated condition's message, and last whole clusters from the end of the list (their
// names stay in readyClusters and failedClusters). Every
// cluster and the run that lost something say so (truncated: true). The verdicts, codes and
// statuses are never changed.
func Fit(run result.Run, maxBytes int) (result.Run, bool) {
	if size(run) <= maxBytes {
		return run, false
	}
	steps := []func(c *result.Cluster) bool{
		func(c *result.Cluster) bool { return eachFailure(c, trimEvidence(5, 3)) },
		func(c *result.Cluster) bool { return eachFailure(c, trimEvidence(0, 1)) },
		func(c *result.Cluster) bool {
			n := len(c.Objects)
			c.Objects = slices.DeleteFunc(slices.Clone(c.Objects), func(o result.Object) bool { return o.Status == result.ObjectCurrent })
			return len(c.Objects) != n
		},
		func(c *result.Cluster) bool {
			cut := len(c.Objects) > 0
			c.Objects = []result.Object{}
			return cut
		},
		func(c *result.Cluster) bool {
			cut := false
			if len(c.Flux) > 1 {
				c.Flux, cut = c.Flux[:1:1], true
			}
			if m := sanitize.Truncate(c.Message, 500); m != c.Message {
				c.Message, cut = m, true
			}
			return cut
		},
	}
	out := copyRun(run)
	out.Truncated = true
	for _, step := range steps {
		for i := range out.Results {
			if step(&out.Results[i]) {
				out.Results[i].Truncated = true
			}
		}
		if size(out) <= maxBytes {
			return out, true
		}
	}
	// The aggregated message repeats every failing cluster's: keep its beginning.
	out.Condition.Message = sanitize.Truncate(out.Condition.Message, maxConditionRunes)
	if size(out) <= maxBytes {
		return out, true
	}
	// Still too large: keep as many clusters as fit, found by bisection.
	all := out.Results
	lo, hi := 0, len(all)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		out.Results = all[:mid]
		if size(out) <= maxBytes {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	out.Results = all[:lo]
	return out, true
}

// size is the length of the run's compact JSON.
func size(run result.Run) int {
	b, err := encodeJSON(normalise(run), "")
	if err != nil {
		return 0
	}
	return len(b)
}

// trimEvidence keeps the last logLines lines of a failure's log and its first events.
func trimEvidence(logLines, events int) func(f *result.Failure) bool {
	return func(f *result.Failure) bool {
		cut := false
		if lines, total := logTail(f.Logs, logLines, logLineRunes); total > logLines {
			f.Logs, cut = strings.Join(lines, "\n"), true
		}
		if len(f.Events) > events {
			f.Events, cut = f.Events[:events:events], true
		}
		return cut
	}
}

func eachFailure(c *result.Cluster, fn func(f *result.Failure) bool) bool {
	cut := false
	for i := range c.Objects {
		if f := c.Objects[i].Failure; f != nil {
			if fn(f) {
				cut = true
			}
		}
	}
	return cut
}

// copyRun copies what Fit changes: the clusters, their objects and the failures.
func copyRun(run result.Run) result.Run {
	out := run
	out.Results = slices.Clone(run.Results)
	for i := range out.Results {
		c := &out.Results[i]
		c.Flux = slices.Clone(c.Flux)
		c.Objects = slices.Clone(c.Objects)
		for j := range c.Objects {
			if f := c.Objects[j].Failure; f != nil {
				copied := *f
				copied.Events = slices.Clone(f.Events)
				c.Objects[j].Failure = &copied
			}
		}
	}
	return out
}
