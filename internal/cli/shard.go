package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/kubeconfig"
	"github.com/org/app-status-action/internal/merge"
	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/safefile"
	"github.com/org/app-status-action/internal/sanitize"
	"github.com/org/app-status-action/internal/shard"
	"github.com/org/app-status-action/internal/verify"
)

// applyShard keeps in req only the clusters of shard s, and returns the whole fleet's names
// (nil when not sharded).
func applyShard(req *verify.Request, s shard.Shard) []string {
	if s.IsZero() {
		return nil
	}
	fleet := make([]string, 0, len(req.Targets))
	kept := req.Targets[:0:0]
	for _, t := range req.Targets {
		fleet = append(fleet, t.Name)
		if s.Has(t.Name) {
			kept = append(kept, t)
		}
	}
	req.Targets = kept
	slices.Sort(fleet)
	return fleet
}

// clusterCount says how many clusters the run verifies: "3 clusters", or for a shard "48 of
// the fleet's 1000 clusters (shard 1/20)".
func clusterCount(n int, s shard.Shard, fleet []string) string {
	if s.IsZero() {
		return fmt.Sprintf("%d clusters", n)
	}
	return fmt.Sprintf("%d of the fleet's %d clusters (shard %s)", n, len(fleet), s)
}

// runShard verifies the request; a shard that holds none of the fleet's clusters has nothing
// to verify, and says so, without failing its leg (the merge judges the fleet). The engine's
// counts go to the file APP_STATUS_STATS names, if it names one (writeStats).
func runShard(ctx context.Context, req verify.Request, s shard.Shard, fleet []string, env Env) result.Run {
	req.Stats = &verify.Stats{}
	defer writeStats(env, req.Stats)
	if s.IsZero() || len(req.Targets) > 0 {
		return verify.Run(ctx, req)
	}
	run := result.NewRun(resourceIDs(req), req.Revision.String(), nil, 0)
	run.Status = result.RunSuccess
	run.Condition = result.Condition{Type: "Ready", Status: "True", Reason: "EmptyShard",
		Message: fmt.Sprintf("shard %s holds none of the fleet's %d clusters", s, len(fleet))}
	return run
}

// stampRun adds what a merge needs to the run's report: when it ran, the tool's version, the
// CI run it ran in (origin) and, for a shard, which one it is of which fleet.
func stampRun(run result.Run, start, end time.Time, origin *result.Origin, s shard.Shard, fleet []string) result.Run {
	run.StartedAt, run.EndedAt, run.Version = start.UTC().Format(time.RFC3339Nano), end.UTC().Format(time.RFC3339Nano), programVersion()
	run.Origin = origin
	if !s.IsZero() {
		run.Shard = &result.Shard{Index: s.Index, Count: s.Count, Clusters: fleet, ClustersHash: shard.ListHash(fleet)}
	}
	return run
}

// readReports reads the report files the patterns match (as the shell expands them, relative
// to the working folder).
func readReports(patterns []string) ([]merge.Report, error) {
	var paths []string
	for _, p := range patterns {
		matches, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("%q is not a file pattern: %w", p, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("%q matches no file: did every leg upload its report-file, and the merge job download them (actions/download-artifact with pattern and merge-multiple: true)?", p)
		}
		for _, m := range matches {
			if !slices.Contains(paths, m) {
				paths = append(paths, m)
			}
		}
	}
	slices.Sort(paths)
	reports := make([]merge.Report, 0, len(paths))
	// The reports' bytes and JSON values, in all: what a merge decodes, and so its memory.
	limits := merge.NewLimits()
	for _, p := range paths {
		// Not env.ReadFile, which is for kubeconfigs and credentials (a few MiB at most): a
		// shard's report of 500 clusters of 200 objects is about 30 MB.
		limit := limits.ReadLimit()
		data, err := safefile.ReadReport(p, limit)
		if tooLarge := (*safefile.TooLargeError)(nil); errors.As(err, &tooLarge) {
			if limit < merge.MaxReportBytes {
				return nil, fmt.Errorf("%s: the reports hold more than the %d MiB a merge reads in all: %s", p, merge.MaxTotalBytes>>20, merge.TotalHint)
			}
			return nil, fmt.Errorf("%w: %s", err, merge.TooLargeHint)
		}
		if err != nil {
			return nil, fmt.Errorf("read report %s: %w", p, err)
		}
		r, err := limits.Parse(p, data)
		if err != nil {
			return nil, err
		}
		reports = append(reports, r)
	}
	return reports, nil
}

// mergeSettings are what a merge step is told of the run whose reports it merges: the
// resources and the revision its legs verify (none: whatever the reports agree on), the fleet
// by name, and whether reports of other runs may be merged on purpose.
type mergeSettings struct {
	resources    []string
	namespace    string
	revision     string
	allowForeign bool
}

// expect reads the settings into what the merge checks each report against, with the
// revision the deployments and the comment are posted for: the merge step's own, never a
// report's. names says which input (or flag) is at fault.
func (m mergeSettings) expect(env Env, names inputNames) (merge.Expect, flux.Revision, error) {
	want := merge.Expect{Origin: runOrigin(env), AllowForeign: m.allowForeign}
	ns := cmp.Or(m.namespace, defaultSettings().namespace)
	for i, r := range m.resources {
		ref, err := flux.ParseResource(r, ns)
		if err != nil {
			if len(m.resources) == 1 {
				return want, flux.Revision{}, fmt.Errorf("%s: %w", names.resource, err)
			}
			return want, flux.Revision{}, fmt.Errorf("%s (%s %d): %w", names.resource, names.resourceItem, i+1, err)
		}
		if !slices.Contains(want.Resources, ref.ID()) {
			want.Resources = append(want.Resources, ref.ID())
		}
	}
	rev, err := flux.ParseRevision(m.revision)
	if err != nil {
		return want, flux.Revision{}, fmt.Errorf("%s: %w", names.revision, err)
	}
	want.Revision = rev.String()
	return want, rev, nil
}

// runMergeAction is the action's merge mode: the reports of the legs become the job summary,
// the outputs, the annotations and the exit code of one run over every cluster; deployments
// and the pull-request comment, when asked, are posted here, once.
// typed are the inputs' values as read: the report file, the JUnit report and the outputs of
// a bad input hold none of them (reportedText), as in verify mode.
func runMergeAction(ctx context.Context, gha *githubactions.Action, log *sanitize.CommandsWriter, env Env, s actionConfig, typed []string) int {
	start := env.Clock()
	hurry, stopHurry := hurryOnceCancelled(ctx, cancelGrace)
	defer stopHurry()
	var run result.Run
	var badInput string
	var notes []string
	ms := mergeSettings{resources: s.resources, namespace: s.namespace, revision: s.revision, allowForeign: s.mergeForeign}
	want, rev, err := ms.expect(env, inputNames{resource: "input resource", resourceItem: "line", revision: "input revision"})
	if err == nil {
		want.Clusters, err = kubeconfig.Names(s.clusters.Clusters, "input clusters")
	}
	var reports []merge.Report
	if err == nil {
		reports, err = readReports(s.merge)
	}
	if err == nil {
		run, err = merge.Merge(reports, want)
	}
	if err != nil {
		badInput = sanitize.Line(err.Error())
		gha.WithFieldsMap(map[string]string{"title": "app-status bad input"}).Errorf("%s", sanitize.Commands(badInput))
		run = result.NewRun(nil, "", nil, env.Clock().Sub(start))
		run.Condition.Message = reportedText(badInput, typed, inputNamed)
	} else {
		fmt.Fprintf(log, "Merged %d reports: %d clusters (%s)\n", len(reports), len(run.Results), strings.Join(run.Merged, ", "))
		if note := merge.VersionsNote(reports); note != "" {
			gha.WithFieldsMap(map[string]string{"title": "app-status legs of several versions"}).Warningf("%s", sanitize.Commands(sanitize.Line(note)))
		}
		run.Version = programVersion()
		run = report.KeepEvidence(run, s.evidence)
		notes = publishMerged(ctx, gha, env, s, want.Resources, rev, run, hurry)
	}
	if err := writeActionResults(gha, log, env, run, s.summary, badInput, notes, hurry); err != nil {
		gha.WithFieldsMap(map[string]string{"title": "app-status could not write its results"}).Errorf("%s", sanitize.Commands(sanitize.Line(err.Error())))
		return 1
	}
	if run.Status == result.RunSuccess {
		return 0
	}
	return 1
}

// runMerge is `app-status merge [flags] REPORT...`: the reports of the legs as one run, with
// the flags newMergeFlagSet parsed into o. parseErr is the error of a command line that did
// not parse: the run then only reports it.
func runMerge(o *mergeOptions, args []string, env Env, parseErr error) int {
	if parseErr != nil {
		return badUsage(env, "merge", parseErr)
	}
	stderr := sanitize.NewCommandsWriter(env.Stderr)
	defer func() { _ = stderr.Flush() }()
	env.Stderr = stderr
	output, summaryFile, onlyFailed, ms, evidence := o.output, o.summaryFile, o.onlyFailed, o.mergeSettings, o.evidence
	if output != "text" && output != "json" && output != "markdown" && output != "junit" {
		fmt.Fprintf(env.Stderr, "app-status merge: -o must be text, json, markdown or junit, not %q\n", output)
		return 2
	}
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, "app-status merge: name the report files, e.g. app-status merge reports/*.json")
		return 2
	}
	want, _, err := ms.expect(env, inputNames{resource: "--resource", resourceItem: "#", revision: "--revision"})
	var reports []merge.Report
	if err == nil {
		reports, err = readReports(args)
	}
	var run result.Run
	if err == nil {
		run, err = merge.Merge(reports, want)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "app-status merge: %s\n", sanitize.Line(err.Error()))
		return 2
	}
	if note := merge.VersionsNote(reports); note != "" {
		fmt.Fprintf(env.Stderr, "app-status merge: warning: %s\n", sanitize.Line(note))
	}
	run.Version = programVersion()
	run = report.KeepEvidence(run, evidence)
	stdout := sanitize.NewCommandsWriter(env.Stdout)
	if output == "json" {
		stdout = sanitize.NewJSONCommandsWriter(env.Stdout)
	}
	env.Stdout = stdout
	err = writeCLIOutput(env, output, onlyFailed, run)
	if err == nil && summaryFile != "" {
		err = writeSummaryFile(reportPut(inCIClone(env), workspaceRoots(env, false), summaryFile), summaryFile, run, "")
	}
	if flushErr := stdout.Flush(); err == nil && flushErr != nil {
		err = fmt.Errorf("write output: %w", flushErr)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "app-status merge: %v\n", err)
		return 1
	}
	if run.Status == result.RunSuccess {
		return 0
	}
	return 1
}
