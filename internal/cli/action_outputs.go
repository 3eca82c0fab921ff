package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"

	"github.com/sethvargo/go-githubactions"

	"github.com/org/app-status-action/internal/filecommand"
	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// Limits that keep a job's step outputs under GitHub's 1 MB: the JSON outputs are cut to these
// sizes (saying so with truncated: true; the report file keeps everything), and the message
// output to a length a person reads.
const (
	maxResultsBytes = 400 << 10
	maxReportBytes  = 440 << 10
	maxMessageRunes = 4000
)

// containerWorkspace is GITHUB_WORKSPACE inside a container action, where the runner mounts
// RUNNER_TEMP (its host path stays in the variable) at containerRunnerTemp.
const (
	containerWorkspace  = "/github/workspace"
	containerRunnerTemp = "/github/runner_temp"
)

// actionOutputs are the step outputs action.yml declares, in its order. Each is one line.
func actionOutputs(run result.Run, reportFile string) []filecommand.Output {
	fittedResults, _ := report.Fit(run, maxResultsBytes)
	results, err := report.ResultsJSON(fittedResults)
	if err != nil {
		results = []byte("[]")
	}
	fittedReport, _ := report.Fit(run, maxReportBytes)
	full, err := report.CompactJSON(fittedReport)
	if err != nil {
		full = []byte("{}")
	}
	return []filecommand.Output{
		{Name: "status", Value: string(run.Status)},
		{Name: "results", Value: string(results)},
		{Name: "report", Value: string(full)},
		{Name: "report-file", Value: reportFile},
		{Name: "ready-clusters", Value: string(report.ClusterNamesJSON(run.ReadyClusters))},
		{Name: "failed-clusters", Value: string(report.ClusterNamesJSON(run.FailedClusters))},
		{Name: "duration", Value: formatSeconds(run.DurationMs)},
		{Name: "message", Value: sanitize.Truncate(sanitize.Compact(run.Condition.Message), maxMessageRunes)},
	}
}

// writeActionResults writes the full report file, the step outputs, the job summary and the
// error annotations, and says on stdout how the run ended. Without GITHUB_OUTPUT,
// GITHUB_STEP_SUMMARY or RUNNER_TEMP (a local run) the matching file is skipped. Every write
// is tried; the error joins those that failed.
func writeActionResults(gha *githubactions.Action, stdout io.Writer, env Env, run result.Run, summary bool, badInput string) error {
	var errs []error
	reportFile, err := writeReportFile(env, run)
	if err != nil {
		errs = append(errs, err)
	}
	if path := env.Getenv("GITHUB_OUTPUT"); path != "" {
		if err := filecommand.WriteOutputs(path, actionOutputs(run, reportFile)); err != nil {
			errs = append(errs, fmt.Errorf("write the step outputs (GITHUB_OUTPUT): %w", err))
		}
	}
	if path := env.Getenv("GITHUB_STEP_SUMMARY"); summary && path != "" {
		md := report.Markdown(run, report.MarkdownOptions{BadInput: badInput})
		if err := filecommand.AppendSummary(path, md); err != nil {
			errs = append(errs, fmt.Errorf("write the job summary (GITHUB_STEP_SUMMARY): %w", err))
		}
	}
	for _, a := range report.Annotations(run) {
		gha.WithFieldsMap(map[string]string{"title": a.Title}).Errorf("%s", a.Message)
	}
	if badInput != "" {
		fmt.Fprintln(stdout, "failure: bad input, no cluster was contacted")
	} else {
		fmt.Fprintf(stdout, "%s: %d of %d clusters ready (%s)\n", run.Status, len(run.ReadyClusters), len(run.Results), formatSeconds(run.DurationMs))
	}
	return errors.Join(errs...)
}

// notFileName is what a step id may hold that a file name should not.
var notFileName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// writeReportFile writes the whole run, never cut, as indented JSON to a file under the
// runner's temporary folder, which later steps of the job read and the runner removes at its
// end (nothing is left in the workspace, where a later git add could pick it up). It returns
// the file's path as later steps see it, or "" outside a runner.
func writeReportFile(env Env, run result.Run) (string, error) {
	runnerTemp := env.Getenv("RUNNER_TEMP")
	if runnerTemp == "" || env.WriteFile == nil {
		return "", nil
	}
	name := "app-status-" + notFileName.ReplaceAllString(cmp.Or(env.Getenv("GITHUB_ACTION"), "report"), "_") + ".json"
	local := filepath.Join(runnerTemp, name)
	if env.Getenv("GITHUB_WORKSPACE") == containerWorkspace {
		// In the action's container RUNNER_TEMP names the host's folder, mounted here.
		local = filepath.Join(containerRunnerTemp, name)
	}
	data, err := report.JSON(run)
	if err != nil {
		return "", err
	}
	if err := env.WriteFile(local, data); err != nil {
		return "", fmt.Errorf("write the full report (report-file): %w", err)
	}
	return filepath.Join(runnerTemp, name), nil
}

func formatSeconds(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
}

// lockedWriter serialises writes to the log: progress lines, masks registered from the
// clusters' goroutines and annotations never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
