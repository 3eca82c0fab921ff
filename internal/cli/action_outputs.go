package cli

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/sethvargo/go-githubactions"

	"github.com/org/app-status-action/internal/filecommand"
	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/safefile"
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

// Folders the runner mounts into a container action (actions/runner, ContainerActionHandler):
// GITHUB_WORKSPACE is containerWorkspace there; runners from v2.331 mount RUNNER_TEMP at
// containerRunnerTemp, older ones only its _github_home folder, at containerHome (HOME).
const (
	containerWorkspace  = "/github/workspace"
	containerRunnerTemp = "/github/runner_temp"
	containerHome       = "/github/home"
)

// actionOutputs are the step outputs action.yml declares, in its order. Each is one line.
func actionOutputs(run result.Run, reportFile, junitFile string) []filecommand.Output {
	// The results are cut from the report as fitted: a fleet's run is measured once.
	fittedReport, _ := report.Fit(run, maxReportBytes)
	fittedResults, _ := report.Fit(fittedReport, maxResultsBytes)
	results, err := report.ResultsJSON(fittedResults)
	if err != nil {
		results = []byte("[]")
	}
	full, err := report.CompactJSON(fittedReport)
	if err != nil {
		full = []byte("{}")
	}
	return []filecommand.Output{
		{Name: "status", Value: string(run.Status)},
		{Name: "results", Value: string(results)},
		{Name: "report", Value: string(full)},
		{Name: "report-file", Value: reportFile},
		{Name: "junit-file", Value: junitFile},
		{Name: "ready-clusters", Value: string(report.ClusterNamesJSON(run.ReadyClusters))},
		{Name: "failed-clusters", Value: string(report.ClusterNamesJSON(run.FailedClusters))},
		{Name: "duration", Value: formatSeconds(run.DurationMs)},
		{Name: "message", Value: sanitize.Truncate(sanitize.Compact(run.Condition.Message), maxMessageRunes)},
	}
}

// writeActionResults writes the full report file, the step outputs, the job summary and the
// error annotations, and says on stdout how the run ended. Without GITHUB_OUTPUT,
// GITHUB_STEP_SUMMARY or RUNNER_TEMP (a local run) the matching file is skipped. Every write
// is tried; the error joins those that failed. Once hurry reports true (the job was cancelled
// a while ago), what is still to be written keeps every cluster's verdict and leaves out its
// objects (report.Essentials).
func writeActionResults(gha *githubactions.Action, stdout io.Writer, env Env, run result.Run, summary string, badInput string, githubNotes []string, hurry func() bool) error {
	var errs []error
	hurried := false
	keepToEssentials := func() {
		if !hurried && hurry() {
			run, hurried = report.Essentials(run), true
		}
	}
	keepToEssentials()
	base := legFileBase(env, run)
	reportFile, err := writeReportFile(env, run, base)
	if err != nil {
		errs = append(errs, err)
	}
	junitFile, err := writeJUnitFile(env, run, base)
	if err != nil {
		errs = append(errs, err)
	}
	keepToEssentials()
	if path := env.Getenv("GITHUB_OUTPUT"); path != "" {
		if err := filecommand.WriteOutputs(path, actionOutputs(run, reportFile, junitFile)); err != nil {
			errs = append(errs, fmt.Errorf("write the step outputs (GITHUB_OUTPUT): %w", err))
		}
	}
	keepToEssentials()
	if path := env.Getenv("GITHUB_STEP_SUMMARY"); summary != "false" && path != "" {
		md := report.Markdown(run, report.MarkdownOptions{BadInput: badInput, GitHubNotes: githubNotes})
		if summary == "compact" && badInput == "" {
			md = report.CompactSummary(run)
		}
		if err := filecommand.AppendSummary(path, md); err != nil {
			errs = append(errs, fmt.Errorf("write the job summary (GITHUB_STEP_SUMMARY): %w", err))
		}
	}
	writeLogGroups(gha, stdout, run)
	for _, a := range report.Annotations(run) {
		gha.WithFieldsMap(map[string]string{"title": sanitize.Commands(a.Title)}).Errorf("%s", sanitize.Commands(a.Message))
	}
	for _, a := range report.PreflightWarnings(run) {
		gha.WithFieldsMap(map[string]string{"title": sanitize.Commands(a.Title)}).Warningf("%s", sanitize.Commands(a.Message))
	}
	if badInput != "" {
		fmt.Fprintln(stdout, "failure: bad input, no cluster was contacted")
	} else {
		fmt.Fprintf(stdout, "%s: %d of %d clusters ready (%s)\n", run.Status, len(run.ReadyClusters), len(run.Results), formatSeconds(run.DurationMs))
	}
	return errors.Join(errs...)
}

// writeLogGroups prints the detail of each cluster that is not Current in a collapsed section
// of the job's log, at most 50 of them. The group commands are the step's own (gha, which
// escapes the title as command data); the title and every line come from clusters and have
// their runner commands broken (sanitize.Commands), so none can end the group early or make a
// command of its own; the lines go through log, which breaks them again.
func writeLogGroups(gha *githubactions.Action, log io.Writer, run result.Run) {
	groups, more := report.LogGroups(run)
	for _, g := range groups {
		gha.Group(sanitize.Commands(g.Title))
		for _, line := range g.Lines {
			fmt.Fprintln(log, sanitize.Commands(sanitize.Line(line)))
		}
		gha.EndGroup()
	}
	if more > 0 {
		fmt.Fprintf(log, "%d more clusters are not Current: the job summary and report-file list them all\n", more)
	}
}

// notFileName is what a step id may hold that a file name should not.
var notFileName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// legFileBase is the name of the run's files under RUNNER_TEMP, less its extension: after the
// step's id, the run's shard if any ("app-status-verify-shard-2-of-5-…"), and a hash of what
// the run was (its resources, revision and clusters) and of when it wrote them. The legs of a
// matrix share the step's id, and download-artifact's merge-multiple extracts every leg's
// artifact into one folder, where files of one name overwrite, even corrupt, each other: two
// legs never share a name, not even two of the same share (a shard run twice, the same
// clusters for two resources, two legs that stopped on bad input), so that the merge sees
// them all and judges them, as different runs or duplicates.
func legFileBase(env Env, run result.Run) string {
	base := "app-status-" + notFileName.ReplaceAllString(cmp.Or(env.Getenv("GITHUB_ACTION"), "report"), "_")
	if s := run.Shard; s != nil {
		base += fmt.Sprintf("-shard-%d-of-%d", s.Index, s.Count)
	}
	h := sha256.New()
	for _, r := range run.Resources {
		fmt.Fprintf(h, "%s\n", r)
	}
	fmt.Fprintf(h, "\x00%s\x00", run.ExpectedRevision)
	for _, c := range run.Results {
		fmt.Fprintf(h, "%s\n", c.Name)
	}
	if env.Clock != nil {
		fmt.Fprintf(h, "\x00%d", env.Clock().UnixNano())
	}
	return base + "-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// writeReportFile writes the whole run, never cut, as indented JSON to a file under the
// runner's temporary folder, which later steps of the job read and the runner removes at its
// end (nothing is left in the workspace, where a later git add could pick it up). It returns
// the file's path as later steps see it, or "" outside a runner.
func writeReportFile(env Env, run result.Run, base string) (string, error) {
	runnerTemp := env.Getenv("RUNNER_TEMP")
	if runnerTemp == "" || env.WriteFile == nil {
		return "", nil
	}
	local, host := reportFilePaths(env, runnerTemp, base+".json")
	if err := writeReportJSON(local, run); err != nil {
		return "", fmt.Errorf("write the full report (report-file): %w", err)
	}
	return host, nil
}

// writeReportJSON writes the run's JSON document to path, creating its folder, streamed (a
// fleet's document is hundreds of megabytes) and whole or not at all, as --json-file is
// (writeCleanJSON); the program chose the path, so as a new file of its own, never through a
// link (safefile.Create).
func writeReportJSON(path string, run result.Run) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return safefile.Create(path, 0o644, func(w io.Writer) error { return writeCleanJSON(w, run) })
}

// writeJUnitFile writes the run as a JUnit XML report beside the report file, for a test
// report step (a JUnit action, or an upload to another CI). It returns the file's path as
// later steps see it, or "" outside a runner.
func writeJUnitFile(env Env, run result.Run, base string) (string, error) {
	runnerTemp := env.Getenv("RUNNER_TEMP")
	if runnerTemp == "" || env.WriteFile == nil {
		return "", nil
	}
	local, host := reportFilePaths(env, runnerTemp, base+".junit.xml")
	var b bytes.Buffer
	if err := report.JUnit(&b, run); err != nil {
		return "", err
	}
	if err := env.WriteFile(local, b.Bytes()); err != nil {
		return "", fmt.Errorf("write the JUnit report (junit-file): %w", err)
	}
	return host, nil
}

// reportFilePaths returns where the report file named name is written and the path the job's
// later steps, on the runner's host, read it at. They differ in the action's container
// (GITHUB_WORKSPACE is containerWorkspace), where the runner has rewritten every host path of
// the environment that lies in a folder it mounts into the container's path:
//   - runners from v2.331 mount RUNNER_TEMP at containerRunnerTemp and set RUNNER_TEMP to it.
//     The host's folder is then _temp in the runner's work folder, the folder that also holds
//     RUNNER_WORKSPACE (the job's folder), which no mount covers, so it keeps its host path.
//     Without it, the container's path is the best there is;
//   - older runners leave RUNNER_TEMP as the host's path and do not mount it, but mount its
//     _github_home folder at containerHome.
func reportFilePaths(env Env, runnerTemp, name string) (local, host string) {
	if env.Getenv("GITHUB_WORKSPACE") != containerWorkspace {
		return filepath.Join(runnerTemp, name), filepath.Join(runnerTemp, name)
	}
	if runnerTemp != containerRunnerTemp {
		return filepath.Join(containerHome, name), filepath.Join(runnerTemp, "_github_home", name)
	}
	local = filepath.Join(containerRunnerTemp, name)
	jobFolder := env.Getenv("RUNNER_WORKSPACE")
	if !filepath.IsAbs(jobFolder) || strings.HasPrefix(jobFolder, "/github/") || filepath.Dir(jobFolder) == jobFolder {
		return local, local
	}
	return local, filepath.Join(filepath.Dir(jobFolder), "_temp", name)
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
