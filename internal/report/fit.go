package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// Bounds of the text Fit keeps when a run does not fit as it is: every message of a cluster,
// a Flux object, an object, a failure or an event is cut to fieldRunes first, and a cluster's
// own message and its Flux objects' to shortRunes when nothing else is left to cut.
const (
	fieldRunes   = 1000
	shortRunes   = 300
	minimalRunes = 120
)

// Fit returns a copy of run whose JSON (report.JSON's document, compact) takes at most
// maxBytes, and whether anything had to be left out. It leaves out the least useful first:
// every message beyond fieldRunes (a Flux object's too, so one huge message cannot push
// whole clusters out), logs and events beyond the first lines, then the objects that are
// Current, then every object, then the end of the aggregated condition's message, then the
// Flux objects nested in others and the end of long messages, then every Flux object (each
// cluster keeps its name, verdict, code, reason and a short message), and last whole
// clusters from the end of the list, with an entry that says how many (their names stay in
// readyClusters and failedClusters). Every cluster and the run that lost something say so
// (truncated: true). The verdicts, codes and statuses are never changed.
//
// The document is encoded once: each cluster's size is the sum of its parts' sizes, and a step
// re-encodes only the parts it changed, so fitting a fleet of thousands of clusters costs
// about one encoding of it.
func Fit(run result.Run, maxBytes int) (result.Run, bool) {
	out := copyRun(run)
	sizes := measureRun(&out)
	if sizes.total() <= maxBytes {
		return run, false
	}
	out.Truncated = true
	sizes.envelope = encodedSize(envelope(out))
	// eachCluster makes a step of a cut applied to every cluster, re-measuring those it cut.
	eachCluster := func(cut func(c *result.Cluster, s *clusterSize) bool) func() {
		return func() {
			for i := range out.Results {
				if cut(&out.Results[i], &sizes.clusters[i]) {
					out.Results[i].Truncated = true
					sizes.clusters[i].skeleton = encodedSize(skeleton(out.Results[i]))
				}
			}
		}
	}
	steps := []func(){
		eachCluster(func(c *result.Cluster, s *clusterSize) bool { return boundText(c, s, fieldRunes) }),
		eachCluster(func(c *result.Cluster, s *clusterSize) bool { return eachFailure(c, s, trimEvidence(5, 3)) }),
		eachCluster(func(c *result.Cluster, s *clusterSize) bool { return eachFailure(c, s, trimEvidence(0, 1)) }),
		eachCluster(func(c *result.Cluster, s *clusterSize) bool {
			return keepObjects(c, s, func(o result.Object) bool { return o.Status != result.ObjectCurrent })
		}),
		eachCluster(func(c *result.Cluster, s *clusterSize) bool {
			return keepObjects(c, s, func(result.Object) bool { return false })
		}),
		// The aggregated message repeats every failing cluster's: keep its beginning, before
		// any cluster loses more.
		func() {
			out.Condition.Message = sanitize.Truncate(out.Condition.Message, maxConditionRunes)
			sizes.envelope = encodedSize(envelope(out))
		},
		// The Flux objects found nested in others go; the requested ones stay, and every
		// message is cut short.
		eachCluster(func(c *result.Cluster, s *clusterSize) bool {
			flux, fluxSizes := c.Flux[:0:0], s.flux[:0:0]
			for j, f := range c.Flux {
				if f.Owner == "" {
					flux, fluxSizes = append(flux, f), append(fluxSizes, s.flux[j])
				}
			}
			cut := len(flux) != len(c.Flux)
			c.Flux, s.flux = flux, fluxSizes
			return boundText(c, s, shortRunes) || cut
		}),
		// Last, each cluster as its name, verdict, code, reason and a short message: a fleet
		// loses whole clusters only when even these do not fit.
		eachCluster(func(c *result.Cluster, s *clusterSize) bool {
			cut := len(c.Flux) > 0
			c.Flux, s.flux = []result.FluxObject{}, nil
			return boundText(c, s, minimalRunes) || cut
		}),
	}
	for _, step := range steps {
		if step(); sizes.total() <= maxBytes {
			return out, true
		}
	}
	// Still too large: keep as many clusters as fit with, last, an entry that says how many
	// were left out. prefix[k] is the size of the first k clusters with their commas.
	all := out.Results
	prefix := make([]int, len(all)+1)
	for i, c := range sizes.clusters {
		prefix[i+1] = prefix[i] + c.total() + 1
	}
	for kept := len(all) - 1; kept >= 0; kept-- {
		marker := leftOut(all[kept:])
		if sizes.envelope+prefix[kept]+encodedSize(normalise(result.Run{Results: []result.Cluster{marker}}).Results[0]) <= maxBytes {
			out.Results = append(all[:kept:kept], marker)
			return out, true
		}
	}
	out.Results = []result.Cluster{}
	return out, true
}

// LeftOutName is the name of the entry that ends a results list cut to fit, standing for the
// clusters left out: no cluster can have it (cluster names are DNS labels).
const LeftOutName = "(clusters left out)"

// leftOut is the entry standing for the clusters left out: its verdict is the first that is
// not Current among them (Current when all are), so a step that looks for failures still sees
// one; its message says how many and where they are.
func leftOut(clusters []result.Cluster) result.Cluster {
	verdict := result.VerdictCurrent
	for _, c := range clusters {
		if !c.Ready() {
			verdict = c.Verdict
			break
		}
	}
	return result.Cluster{SchemaVersion: result.SchemaVersion, Name: LeftOutName, Verdict: verdict, Truncated: true,
		Message: fmt.Sprintf("%d more clusters left out to keep the outputs under GitHub's limit: readyClusters and failedClusters name every cluster, the report file has them all", len(clusters))}
}

// runSize is the size of a run's compact JSON, in parts: everything but its clusters, and
// each cluster.
type runSize struct {
	envelope int
	clusters []clusterSize
}

func (r runSize) total() int {
	n := r.envelope + max(len(r.clusters)-1, 0)
	for _, c := range r.clusters {
		n += c.total()
	}
	return n
}

// clusterSize is the size of a cluster's compact JSON: the cluster without its Flux objects
// and objects, and each of those.
type clusterSize struct {
	skeleton int
	flux     []int
	objects  []int
}

func (c clusterSize) total() int {
	return c.skeleton + listSize(c.flux) + listSize(c.objects)
}

// listSize is what a list's elements add to its empty "[]": their sizes and the commas.
func listSize(sizes []int) int {
	n := max(len(sizes)-1, 0)
	for _, s := range sizes {
		n += s
	}
	return n
}

func measureRun(run *result.Run) runSize {
	r := runSize{envelope: encodedSize(envelope(*run)), clusters: make([]clusterSize, len(run.Results))}
	for i, c := range run.Results {
		s := clusterSize{skeleton: encodedSize(skeleton(c)), flux: make([]int, len(c.Flux)), objects: make([]int, len(c.Objects))}
		for j, f := range c.Flux {
			s.flux[j] = encodedSize(f)
		}
		for j, o := range c.Objects {
			s.objects[j] = encodedSize(o)
		}
		r.clusters[i] = s
	}
	return r
}

// envelope is the run without its clusters, skeleton a cluster without its Flux objects and
// objects, as normalise encodes them.
func envelope(run result.Run) result.Run {
	run.Results = nil
	return normalise(run)
}

func skeleton(c result.Cluster) result.Cluster {
	c.Flux, c.Objects = nil, nil
	return normalise(result.Run{Results: []result.Cluster{c}}).Results[0]
}

// encodedSize is the length of v's compact JSON, as encodeJSON writes it without the newline.
func encodedSize(v any) int {
	var n countingWriter
	enc := json.NewEncoder(&n)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return 0
	}
	return int(n) - 1
}

// countingWriter counts what is written to it.
type countingWriter int

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// size is the length of the run's compact JSON.
func size(run result.Run) int {
	return encodedSize(normalise(run))
}

// boundText cuts every message of the cluster to at most runes runes, re-measuring the parts
// it changed (the cluster's own size is measured by the caller).
func boundText(c *result.Cluster, s *clusterSize, runes int) bool {
	cut := bound(&c.Message, runes)
	if bound(&c.Reason, runes) {
		cut = true
	}
	if r := c.Reconcile; r != nil {
		for k := range r.Notes {
			if bound(&r.Notes[k], runes) {
				cut = true
			}
		}
	}
	if p := c.Preflight; p != nil {
		for _, texts := range [][]string{p.Warnings, p.Notes} {
			for k := range texts {
				if bound(&texts[k], runes) {
					cut = true
				}
			}
		}
	}
	for j := range c.Flux {
		f := &c.Flux[j]
		if bound(&f.Message, runes) {
			s.flux[j], cut = encodedSize(*f), true
		}
	}
	for j := range c.Objects {
		o := &c.Objects[j]
		changed := bound(&o.Message, runes)
		if f := o.Failure; f != nil {
			for _, text := range []*string{&f.Message, &f.LogsError, &f.EventsError} {
				if bound(text, runes) {
					changed = true
				}
			}
			if lines, total := logTail(f.Logs, logLinesShown, logLineRunes); total > logLinesShown || longestLine(f.Logs) > logLineRunes {
				f.Logs, changed = strings.Join(lines, "\n"), true
			}
			for k := range f.Events {
				if bound(&f.Events[k].Message, runes) {
					changed = true
				}
			}
		}
		if changed {
			s.objects[j], cut = encodedSize(*o), true
		}
	}
	return cut
}

// longestLine is the length of the longest line of text, in runes.
func longestLine(text string) int {
	longest := 0
	for line := range strings.Lines(text) {
		longest = max(longest, utf8.RuneCountInString(strings.TrimSuffix(line, "\n")))
	}
	return longest
}

// bound cuts *text to at most runes runes and reports whether it did.
func bound(text *string, runes int) bool {
	cut := sanitize.Truncate(*text, runes)
	if cut == *text {
		return false
	}
	*text = cut
	return true
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

// eachFailure applies fn to every failure of the cluster, re-measuring the objects it changed.
func eachFailure(c *result.Cluster, s *clusterSize, fn func(f *result.Failure) bool) bool {
	cut := false
	for j := range c.Objects {
		if f := c.Objects[j].Failure; f != nil && fn(f) {
			s.objects[j], cut = encodedSize(c.Objects[j]), true
		}
	}
	return cut
}

// keepObjects keeps the objects for which keep is true, with their sizes.
func keepObjects(c *result.Cluster, s *clusterSize, keep func(result.Object) bool) bool {
	objects, sizes := c.Objects[:0:0], s.objects[:0:0]
	for j, o := range c.Objects {
		if keep(o) {
			objects, sizes = append(objects, o), append(sizes, s.objects[j])
		}
	}
	cut := len(objects) != len(c.Objects)
	c.Objects, s.objects = objects, sizes
	return cut
}

// copyRun copies what Fit changes: the clusters, their Flux objects and objects, their
// reconcile and preflight notes, and the failures and their events.
func copyRun(run result.Run) result.Run {
	out := run
	out.Results = slices.Clone(run.Results)
	for i := range out.Results {
		c := &out.Results[i]
		c.Flux = slices.Clone(c.Flux)
		c.Objects = slices.Clone(c.Objects)
		if r := c.Reconcile; r != nil {
			copied := *r
			copied.Requested, copied.Notes = slices.Clone(r.Requested), slices.Clone(r.Notes)
			c.Reconcile = &copied
		}
		if p := c.Preflight; p != nil {
			copied := *p
			copied.Warnings, copied.Notes = slices.Clone(p.Warnings), slices.Clone(p.Notes)
			c.Preflight = &copied
		}
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

// Essentials returns run with every cluster cut to what its verdict needs (EssentialCluster),
// for a run that must be written at once: the job was cancelled and the runner kills the
// process a few seconds later.
func Essentials(run result.Run) result.Run {
	out := run
	out.Results = make([]result.Cluster, len(run.Results))
	for i, c := range run.Results {
		out.Results[i] = EssentialCluster(c)
		if out.Results[i].Truncated {
			out.Truncated = true
		}
	}
	return out
}

// EssentialCluster returns c without its objects and without the Flux objects found nested in
// others: its name, verdict, code, reason and message and the requested Flux objects stay.
// It cuts no text, so it may come before secrets are redacted (a cut secret would no longer
// be recognised); what was left out is said (truncated: true).
func EssentialCluster(c result.Cluster) result.Cluster {
	requested := slices.DeleteFunc(slices.Clone(c.Flux), func(f result.FluxObject) bool { return f.Owner != "" })
	if len(c.Objects) > 0 || len(requested) != len(c.Flux) {
		c.Truncated = true
	}
	c.Flux, c.Objects = requested, []result.Object{}
	return c
}
