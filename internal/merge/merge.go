// Package merge joins the reports of the legs of one run (shards of a fleet, or one job per
// private network) into the run a single job over every cluster would have made. It checks
// that they belong together, and never lets a missing report pass: a shard that is missing
// or given twice makes its clusters Unknown, and the run fails.
package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
	"github.com/org/app-status-action/internal/shard"
)

// MaxReportBytes bounds one report file. A cluster of 200 objects takes about 59 KB of a
// report (590 MB for 10,000 of them in one process, make bench-shards), so this is room for
// a leg of about 18,000 such clusters, more than one runner verifies in a job; a merge of
// such reports takes about one and a half times their size in memory (the files and what they
// decode to: 834 MiB for 590 MB in make bench-shards on fb2e62f), and of any reports at most
// what MaxValues allows.
const MaxReportBytes int64 = 1 << 30

// TooLargeHint is what to do about a report larger than MaxReportBytes.
const TooLargeHint = "is it a report of app-status? A leg that large is better split into shards (input shard, or verify --shard I/N)"

// Report is one leg's report file.
type Report struct {
	Path string
	Run  result.Run
}

// Parse reads a report file's content: the JSON document of `app-status verify -o json` or of
// the action's report-file, within the limits of a merge of this report alone (Limits).
func Parse(path string, data []byte) (Report, error) { return NewLimits().Parse(path, data) }

// parse is Parse once the document's size and shape are known to be within bounds.
func parse(path string, data []byte) (Report, error) {
	if int64(len(data)) > MaxReportBytes {
		return Report{}, fmt.Errorf("%s is %d bytes, more than the %d MiB a report may have: %s", path, len(data), MaxReportBytes>>20, TooLargeHint)
	}
	// A UTF-8 byte order mark, as some editors and shells write one, is no content.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if bytes.HasPrefix(data, []byte("\xff\xfe")) || bytes.HasPrefix(data, []byte("\xfe\xff")) {
		return Report{}, fmt.Errorf("%s is UTF-16 text, and a report is UTF-8 JSON (Windows PowerShell's > writes UTF-16): write it with verify --json-file FILE, or pipe it through Out-File -Encoding utf8", path)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Report{}, fmt.Errorf("%s is empty: the leg that wrote it stopped before its report (its log says why: verify -o json prints no report on bad input)", path)
	}
	var run result.Run
	// Unmarshal, not a Decoder, which would copy the whole document into a buffer of its own.
	if err := json.Unmarshal(data, &run); err != nil {
		return Report{}, fmt.Errorf("%s is not a report of app-status (the JSON of report-file or verify -o json): %w", path, err)
	}
	switch {
	case run.SchemaVersion != result.SchemaVersion:
		return Report{}, fmt.Errorf("%s has schema version %d (app-status %s); this app-status reads version %d: run the legs and the merge with the same app-status",
			path, run.SchemaVersion, orUnknown(run.Version), result.SchemaVersion)
	case run.Resources == nil || run.Results == nil || run.ReadyClusters == nil || run.FailedClusters == nil:
		return Report{}, fmt.Errorf("%s is not a report of app-status: it has no resources, results, readyClusters or failedClusters", path)
	case !sameClusters(run):
		// A report output cut to GitHub's size limit can leave whole clusters out of its
		// results (with an entry that says how many, or none when even that does not fit)
		// while its readyClusters and failedClusters still name them all. A report cut
		// without leaving a cluster out (the report-file of a leg whose job was cancelled,
		// written at once with each cluster's verdict and without its objects) merges, and
		// the merged run says what was cut.
		if run.Truncated {
			return Report{}, fmt.Errorf("%s is a cut document with clusters left out (the report output, cut to GitHub's size limit): merge the file the report-file output names, which is whole", path)
		}
		return Report{}, fmt.Errorf("%s: its results do not match its readyClusters and failedClusters (each cluster once, Current in the one, not in the other): the report was changed after it was written", path)
	case len(run.Resources) == 0:
		// Every run names at least one resource; a leg that stopped on bad input names none.
		return Report{}, fmt.Errorf("%s is the report of a leg that stopped on bad input before verifying anything (a kubeconfig it could not read, an input it could not parse): its step's log says what is wrong; fix it and run that leg again", path)
	}
	if s := run.Shard; s != nil {
		if s.Count < 1 || s.Count > shard.MaxCount || s.Index < 1 || s.Index > s.Count {
			return Report{}, fmt.Errorf("%s says it is shard %d/%d, which is no shard", path, s.Index, s.Count)
		}
		if shard.ListHash(s.Clusters) != s.ClustersHash {
			return Report{}, fmt.Errorf("%s: its list of the fleet's clusters does not match its clustersHash: the report was changed after it was written", path)
		}
	}
	return Report{Path: path, Run: run}, nil
}

// sameClusters reports whether the run's results are exactly the clusters its ready and
// failed lists name, each once, the ready ones Current and the failed ones not: what
// result.NewRun makes them, and nothing after it changes.
func sameClusters(run result.Run) bool {
	ready := map[string]bool{} // name -> listed as ready (else as failed)
	for _, list := range []struct {
		names []string
		ready bool
	}{{run.ReadyClusters, true}, {run.FailedClusters, false}} {
		for _, name := range list.names {
			if _, twice := ready[name]; twice {
				return false
			}
			ready[name] = list.ready
		}
	}
	if len(ready) != len(run.Results) {
		return false
	}
	for _, c := range run.Results {
		isReady, listed := ready[c.Name]
		if !listed || isReady != (c.Verdict == result.VerdictCurrent) {
			return false
		}
		delete(ready, c.Name) // a cluster twice in the results
	}
	return true
}

func orUnknown(s string) string {
	if s == "" {
		return "of unknown version"
	}
	return s
}

// Expect is what the merge step itself knows of the run whose reports it merges: a report
// that disagrees is refused, named, with the reason.
type Expect struct {
	// Origin is the merge's own CI run (nil outside one): a report written in another run, or
	// outside any, is refused unless AllowForeign is set.
	Origin       *result.Origin
	AllowForeign bool
	// Resources are the merge step's own (Kind/namespace/name), nil when it was given none;
	// Revision likewise, "" when it was given none. A report of others is refused.
	Resources []string
	Revision  string
	// Clusters is the fleet by name, nil when not given (the legs split by network, where no
	// shard says what is missing): a cluster no report has a verdict for is Unknown, and one
	// no leg was asked for is added as the reports have it.
	Clusters []string
}

// ForeignHint says how to merge reports of other runs on purpose.
const ForeignHint = "set merge-foreign-reports: true on the merge step (app-status merge --allow-foreign-reports) to merge reports of other runs on purpose"

// check refuses a report of another run, of a later attempt of it than the merge's own, or of
// other resources or another revision than the merge step's own.
func (e Expect) check(r Report) error {
	if !e.AllowForeign && !e.Origin.SameRun(r.Run.Origin) {
		return fmt.Errorf("%s is a report of another run: it was written %s, and this merge runs %s. A merge takes the reports of its own run alone (not an old folder a self-hosted runner kept, nor the artifacts of another run): download them into an empty folder, or %s",
			r.Path, describe(r.Run.Origin), describe(e.Origin), ForeignHint)
	}
	if !e.AllowForeign && e.Origin != nil && e.Origin.Attempt > 0 && r.Run.Origin != nil && r.Run.Origin.Attempt > e.Origin.Attempt {
		// A leg runs before its merge, in the merge's attempt or an earlier one: a later
		// attempt's report is forged, and would override the real one's verdicts (newest).
		return fmt.Errorf("%s claims a later attempt than this merge's: it was written %s, and this merge runs %s. A leg's report is of this attempt or an earlier one; this one cannot be trusted: download the reports of this run into an empty folder",
			r.Path, describe(r.Run.Origin), describe(e.Origin))
	}
	if e.Resources != nil {
		got, want := slices.Sorted(slices.Values(r.Run.Resources)), slices.Sorted(slices.Values(e.Resources))
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s is a report of other resources: it verifies %s, and this merge step's resource input names %s: give the merge step the resources its legs verify",
				r.Path, reported(strings.Join(got, ", ")), strings.Join(want, ", "))
		}
	}
	if e.Revision != "" && r.Run.ExpectedRevision != e.Revision {
		return fmt.Errorf("%s is a report of another revision: it verifies %q, and this merge step's revision input is %q: give the merge step the revision its legs were given",
			r.Path, reported(r.Run.ExpectedRevision), e.Revision)
	}
	return nil
}

// reported is a report's own text in an error: cut, as a report may hold anything.
func reported(s string) string { return sanitize.Truncate(s, 200) }

// describe says which CI run an origin is, for an error.
func describe(o *result.Origin) string {
	if o == nil {
		return "outside a CI run that names itself (on a workstation, in Tekton, or by a version of app-status whose reports did not name their run)"
	}
	attempt := ""
	if o.Attempt > 0 {
		attempt = fmt.Sprintf(" (attempt %d)", o.Attempt)
	}
	return fmt.Sprintf("in %s run %s%s of %s", reported(o.CI), reported(o.RunID), attempt, reported(o.Repository))
}

// Merge joins the reports into one run, the run a single job over every cluster would have
// made. A report the merge step's own run, resources or revision refuse is an error (Expect),
// and so are reports of different runs among themselves (other resources, another revision,
// another fleet or number of shards, sharded and not). Within one run, a shard with no report,
// or with two of one attempt, makes its clusters Unknown with the reason; so does a cluster
// that two unsharded reports of one attempt both verified. Of reports of different attempts
// of one CI run (a leg run again), the newest attempt's is taken.
func Merge(reports []Report, want Expect) (result.Run, error) {
	if len(reports) == 0 {
		return result.Run{}, errors.New("no report to merge: check that every leg uploaded its report-file and that the merge downloaded them (actions/download-artifact with pattern and merge-multiple: true)")
	}
	for _, r := range reports {
		if err := want.check(r); err != nil {
			return result.Run{}, err
		}
	}
	first := reports[0]
	resources := slices.Sorted(slices.Values(first.Run.Resources))
	sharded := first.Run.Shard != nil
	for _, r := range reports[1:] {
		if got := slices.Sorted(slices.Values(r.Run.Resources)); !slices.Equal(got, resources) || r.Run.ExpectedRevision != first.Run.ExpectedRevision {
			return result.Run{}, fmt.Errorf("the reports are of different runs: %s verifies %s at revision %q, %s verifies %s at revision %q",
				first.Path, reported(strings.Join(resources, ", ")), reported(first.Run.ExpectedRevision), r.Path, reported(strings.Join(got, ", ")), reported(r.Run.ExpectedRevision))
		}
		if (r.Run.Shard != nil) != sharded {
			return result.Run{}, fmt.Errorf("%s and %s: one is a shard and the other is not; merge the shards of one run (or the reports of one job per network) alone", first.Path, r.Path)
		}
		if sharded && (r.Run.Shard.Count != first.Run.Shard.Count || r.Run.Shard.ClustersHash != first.Run.Shard.ClustersHash) {
			return result.Run{}, fmt.Errorf("the reports are of different runs: %s is shard %d/%d of a fleet %s, %s is shard %d/%d of a fleet %s",
				first.Path, first.Run.Shard.Index, first.Run.Shard.Count, short(first.Run.Shard.ClustersHash),
				r.Path, r.Run.Shard.Index, r.Run.Shard.Count, short(r.Run.Shard.ClustersHash))
		}
	}
	var clusters []result.Cluster
	var used []Report // the reports a verdict was taken from
	if sharded {
		clusters, used = mergeShards(reports)
	} else {
		clusters, used = mergeLegs(reports)
	}
	have := map[string]bool{}
	for _, c := range clusters {
		have[c.Name] = true
	}
	for _, name := range slices.Sorted(slices.Values(want.Clusters)) {
		if !have[name] {
			have[name] = true
			clusters = append(clusters, unknown(name, "ClusterMissing", "no report has a verdict for it: its leg may have failed before it uploaded its report, or it was not given this cluster"))
		}
	}
	if len(used) == 0 {
		used = reports // every shard missing or duplicated: the run's span is still theirs
	}
	run := result.NewRun(first.Run.Resources, first.Run.ExpectedRevision, clusters, span(used))
	started, ended := bounds(used)
	if !started.IsZero() {
		run.StartedAt, run.EndedAt = started.Format(time.RFC3339Nano), ended.Format(time.RFC3339Nano)
	}
	for _, r := range used {
		run.Truncated = run.Truncated || r.Run.Truncated
	}
	for _, r := range reports {
		run.Merged = append(run.Merged, r.Path)
	}
	slices.Sort(run.Merged)
	run.Origin = want.Origin
	return run, nil
}

// VersionsNote says which versions of app-status wrote the reports when they are more than
// one ("" when they are one, or do not say). Reports of one schema merge whatever their
// versions, but a leg run by another version may judge a layout otherwise: worth a warning.
// The versions are the reports' own text: the caller escapes them.
func VersionsNote(reports []Report) string {
	byVersion := map[string][]string{}
	for _, r := range reports {
		v := "an unknown version"
		if r.Run.Version != "" {
			v = sanitize.Truncate(r.Run.Version, 80)
		}
		byVersion[v] = append(byVersion[v], r.Path)
	}
	if len(byVersion) < 2 {
		return ""
	}
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(byVersion)) {
		parts = append(parts, fmt.Sprintf("%s (%s)", v, strings.Join(byVersion[v], ", ")))
	}
	return "the reports were written by different versions of app-status: " + strings.Join(parts, "; ") + ": run every leg and the merge with one version (pin the action to a commit or a full version tag)"
}

func short(hash string) string {
	if len(hash) > 19 {
		return hash[:19]
	}
	return hash
}

func unknown(name, reason, message string) result.Cluster {
	return result.Cluster{SchemaVersion: result.SchemaVersion, Name: name, Verdict: result.VerdictUnknown, Reason: reason, Message: message,
		Flux: []result.FluxObject{}, Objects: []result.Object{}}
}

// mergeShards takes each shard's clusters from its one report, or from its newest attempt's;
// a shard with no report, or with two of one attempt, has its clusters Unknown. It returns
// the reports it took verdicts from too.
func mergeShards(reports []Report) ([]result.Cluster, []Report) {
	s := reports[0].Run.Shard
	byIndex := map[int][]Report{}
	for _, r := range reports {
		byIndex[r.Run.Shard.Index] = append(byIndex[r.Run.Shard.Index], r)
	}
	var clusters []result.Cluster
	var used []Report
	for index := 1; index <= s.Count; index++ {
		legs := byIndex[index]
		want := map[string]bool{}
		for _, name := range s.Clusters {
			if shard.Of(name, s.Count) == index {
				want[name] = true
			}
		}
		label := fmt.Sprintf("%d/%d", index, s.Count)
		if latest, ok := newest(legs); ok {
			legs = []Report{latest}
		}
		switch len(legs) {
		case 0:
			for _, name := range slices.Sorted(mapKeys(want)) {
				clusters = append(clusters, unknown(name, "ShardMissing",
					fmt.Sprintf("shard %s has no report: its job may have failed before it uploaded one, or its artifact was not downloaded", label)))
			}
			continue
		case 1:
		default:
			var paths []string
			for _, l := range legs {
				paths = append(paths, l.Path)
			}
			for _, name := range slices.Sorted(mapKeys(want)) {
				clusters = append(clusters, unknown(name, "ShardDuplicated",
					fmt.Sprintf("shard %s has %d reports of one attempt (%s): which one holds its verdicts cannot be told", label, len(legs), strings.Join(paths, ", "))))
			}
			continue
		}
		used = append(used, legs[0])
		seen := map[string]bool{}
		for _, c := range legs[0].Run.Results {
			if !want[c.Name] || seen[c.Name] {
				continue // not this shard's (or twice): the fleet's list decides what is in it
			}
			seen[c.Name] = true
			clusters = append(clusters, c)
		}
		for _, name := range slices.Sorted(mapKeys(want)) {
			if !seen[name] {
				clusters = append(clusters, unknown(name, "ClusterMissing", fmt.Sprintf("shard %s's report (%s) has no verdict for it", label, legs[0].Path)))
			}
		}
	}
	return clusters, used
}

// newest is the report of the latest attempt of reports of one CI run (a leg run again), and
// whether there is one: not for reports of different runs, or outside a CI, nor when two
// have that attempt (or the CI numbers none), whose verdicts cannot be told apart.
func newest(legs []Report) (Report, bool) {
	if len(legs) < 2 || legs[0].Run.Origin == nil {
		return Report{}, false
	}
	latest, tie := legs[0], false
	for _, l := range legs[1:] {
		if !l.Run.Origin.SameRun(legs[0].Run.Origin) {
			return Report{}, false
		}
		switch a, b := l.Run.Origin.Attempt, latest.Run.Origin.Attempt; {
		case a > b:
			latest, tie = l, false
		case a == b:
			tie = true
		}
	}
	return latest, !tie
}

// mergeLegs joins the reports of jobs that each verified their own clusters; a cluster two
// reports verified is the newest attempt's (a leg run again), or Unknown. It returns the
// reports it took verdicts from too.
func mergeLegs(reports []Report) ([]result.Cluster, []Report) {
	from := map[string][]int{}                 // cluster -> the reports (index) with a verdict for it
	at := make([]map[string]int, len(reports)) // report -> cluster -> its place in the results
	for i, r := range reports {
		at[i] = make(map[string]int, len(r.Run.Results))
		for j, c := range r.Run.Results {
			if _, twice := at[i][c.Name]; !twice {
				from[c.Name] = append(from[c.Name], i)
			}
			at[i][c.Name] = j
		}
	}
	var clusters []result.Cluster
	usedAt := map[int]bool{}
	for _, name := range slices.Sorted(mapKeys(from)) {
		legs := make([]Report, len(from[name]))
		for j, i := range from[name] {
			legs[j] = reports[i]
		}
		pick := -1
		if len(legs) == 1 {
			pick = from[name][0]
		} else if latest, ok := newest(legs); ok {
			pick = from[name][slices.IndexFunc(legs, func(r Report) bool { return r.Path == latest.Path })]
		}
		if pick < 0 {
			var paths []string
			for _, l := range legs {
				paths = append(paths, l.Path)
			}
			clusters = append(clusters, unknown(name, "ClusterDuplicated",
				fmt.Sprintf("%d reports of one attempt verified it (%s): which one holds its verdict cannot be told", len(paths), strings.Join(paths, ", "))))
			continue
		}
		usedAt[pick] = true
		clusters = append(clusters, reports[pick].Run.Results[at[pick][name]])
	}
	var used []Report
	for i, r := range reports {
		if usedAt[i] {
			used = append(used, r)
		}
	}
	return clusters, used
}

func mapKeys[V any](m map[string]V) iter.Seq[string] { return maps.Keys(m) }

// bounds are the earliest start and the latest end of the reports, zero when they do not say.
func bounds(reports []Report) (started, ended time.Time) {
	for _, r := range reports {
		s, err1 := time.Parse(time.RFC3339Nano, r.Run.StartedAt)
		e, err2 := time.Parse(time.RFC3339Nano, r.Run.EndedAt)
		if err1 != nil || err2 != nil {
			return time.Time{}, time.Time{}
		}
		if started.IsZero() || s.Before(started) {
			started = s
		}
		if e.After(ended) {
			ended = e
		}
	}
	return started, ended
}

// span is how long the merged run took: from the first start to the last end, or the
// longest leg when the reports do not say when they ran.
func span(reports []Report) time.Duration {
	if started, ended := bounds(reports); !started.IsZero() {
		return ended.Sub(started)
	}
	var longest int64
	for _, r := range reports {
		longest = max(longest, r.Run.DurationMs)
	}
	return time.Duration(longest) * time.Millisecond
}
