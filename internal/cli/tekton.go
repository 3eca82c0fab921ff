package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// maxTektonFailedBytes bounds the failed-clusters result as Tekton carries it: the step's
// results travel in its container's termination message, a JSON array of {key, value, type}
// entries (the step's StartedAt among them) of at most 4,096 bytes, and the TaskRun fails above
// that. Each value is a JSON string there, so the array's quotes count twice; the bound is of
// that escaped size, and leaves the other results and the framing some 1,000 bytes.
const maxTektonFailedBytes = 3000

// tektonResults are the Task's results (deploy/tekton/task.yaml), file name and value: the
// verdict and the counts, and the failed clusters as a JSON array cut to fit (the counts stay
// whole; the full report goes to a workspace file).
func tektonResults(run result.Run) [][2]string {
	failed, _ := namesWithin(run.FailedClusters, maxTektonFailedBytes, escapedSize)
	return [][2]string{
		{"status", oneWord(string(run.Status))},
		{"ready-count", strconv.Itoa(len(run.ReadyClusters))},
		{"failed-count", strconv.Itoa(len(run.FailedClusters))},
		{"failed-clusters", failed},
		{"duration", formatSeconds(run.DurationMs)},
	}
}

// escapedSize is a text's size inside a JSON string, as Tekton's termination message holds a
// result's value (the quotes of the array's names become \").
func escapedSize(s string) int {
	b, err := json.Marshal(s)
	if err != nil {
		return len(s) * 6
	}
	return len(b) - 2
}

// writeTektonResults writes each result to its file in dir (--tekton-results: the step's
// /tekton/results), without a trailing newline, as Tekton reads them.
func writeTektonResults(dir string, run result.Run) error {
	var errs []error
	for _, r := range tektonResults(run) {
		if err := os.WriteFile(filepath.Join(dir, r[0]), []byte(r[1]), 0o644); err != nil { //nolint:gosec // results for the CI to read
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("write --tekton-results: %w", err)
	}
	return nil
}

// exitFunc runs exit once the command line is parsed: the file given as argument in args, or
// the parse error. It returns the exit code.
type exitFunc func(args []string, parseErr error) int

// newExitCommand is `app-status exit`, which run runs.
func newExitCommand(code *int, run exitFunc) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "exit FILE",
		Short:   "Exit with the code FILE holds (the Tekton Task's last step)",
		GroupID: groupCI,
		Long: `Exit with the exit code FILE holds: the Tekton Task's last step, after a verify step that
runs with onError: continue (so that Tekton keeps its results whatever the verdict) and writes
its exit code to FILE. The TaskRun then fails as verify would have, with verify's exit code. A
FILE that cannot be read or holds no exit code (a step ended by a signal) exits 1.`,
		Example: `  # The Tekton Task's last step (args of a step whose command is app-status)
  app-status exit $(steps.step-verify.exitCode.path)`,
		Args: cobra.ArbitraryArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			*code = run(args, nil)
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		*code = run(nil, err)
		return errReported
	})
	cmd.SetUsageFunc(groupedUsage)
	return cmd
}

// runExit is `app-status exit FILE`, the Tekton Task's last step: it ends with the exit code
// FILE holds. The verify step runs with onError: continue, so that Tekton keeps it a success and
// its results whatever the verdict, and writes its exit code to a file
// ($(steps.step-verify.exitCode.path)); this step then fails the TaskRun as verify would have,
// with verify's exit code. A file that cannot be read or holds no exit code (a step ended by a
// signal: -1) fails it too. parseErr is the error of a command line that did not parse.
func runExit(args []string, env Env, parseErr error) int {
	switch {
	case parseErr != nil:
		return badUsage(env, "exit", parseErr)
	case len(args) != 1:
		return badUsage(env, "exit", fmt.Errorf("give one FILE, the exit code file of the Tekton Task's verify step, not %d arguments", len(args)))
	}
	data, err := env.ReadFile(args[0])
	if err != nil {
		fmt.Fprintf(env.Stderr, "app-status exit: the verify step's exit code: %s\n", sanitize.Line(err.Error()))
		return 1
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(data)))
	switch {
	case err != nil || code < 0 || code > 255:
		fmt.Fprintf(env.Stderr, "app-status exit: %s holds no exit code: the verify step did not end by itself; its log says why\n", sanitize.Line(args[0]))
		return 1
	case code != 0:
		fmt.Fprintf(env.Stderr, "app-status exit: the verify step exited with %d; its log and the results say why\n", code)
	}
	return code
}
