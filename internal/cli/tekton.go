package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/org/app-status-action/internal/result"
)

// maxTektonFailedBytes bounds the failed-clusters result: Tekton carries a step's results in
// its container's termination message, 4,096 bytes for all of them with their JSON framing,
// and fails the TaskRun above that. The other results are short.
const maxTektonFailedBytes = 3000

// tektonResults are the Task's results (deploy/tekton/task.yaml), file name and value: the
// verdict and the counts, and the failed clusters as a JSON array cut to fit (the counts stay
// whole; the full report goes to a workspace file).
func tektonResults(run result.Run) [][2]string {
	failed, _ := namesWithin(run.FailedClusters, maxTektonFailedBytes)
	return [][2]string{
		{"status", oneWord(string(run.Status))},
		{"ready-count", strconv.Itoa(len(run.ReadyClusters))},
		{"failed-count", strconv.Itoa(len(run.FailedClusters))},
		{"failed-clusters", failed},
		{"duration", formatSeconds(run.DurationMs)},
	}
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
