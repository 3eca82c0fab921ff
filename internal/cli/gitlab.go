package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/org/app-status-action/internal/result"
)

// inGitLabCI reports whether the CLI runs in a GitLab CI/CD job (the runner sets GITLAB_CI).
func inGitLabCI(env Env) bool { return env.Getenv("GITLAB_CI") == "true" }

// The files a GitLab job writes when the command line names none, relative to the job's
// working directory (the project's clone, where artifacts:paths and artifacts:reports look).
const (
	gitlabDotenvFile  = "app-status.env"
	gitlabJUnitFile   = "app-status-junit.xml"
	gitlabSummaryFile = "app-status-summary.md"
)

// maxDotenvBytes bounds the dotenv report: GitLab's limit (plan_limits.dotenv_size, 5 KiB on
// every plan) less one byte, as its parser accepts a file strictly smaller than the limit; a
// bigger file fails the job's artifact upload.
const maxDotenvBytes = 5<<10 - 1

// dotenvReport is the run as a GitLab dotenv report (artifacts:reports:dotenv): variables that
// later jobs of the pipeline get (APP_STATUS == "failure" in their rules). GitLab reads one
// KEY=VALUE per line, keeps quotes and strips blanks around the value, and refuses comments,
// empty lines, multi-line values and a file over 5 KiB. Every value here is a verdict, a
// number, a duration or a JSON array of cluster names (letters, digits, '.', '_', '-', as the
// clusters input allows), so no value can hold a line break or a quote of its own. The lists
// are cut to fit: the failed clusters keep their place first, the counts stay whole, and
// APP_STATUS_TRUNCATED says whether a list was cut.
func dotenvReport(run result.Run) string {
	head := []string{
		"APP_STATUS=" + oneWord(string(run.Status)),
		"APP_STATUS_READY_COUNT=" + strconv.Itoa(len(run.ReadyClusters)),
		"APP_STATUS_FAILED_COUNT=" + strconv.Itoa(len(run.FailedClusters)),
		"APP_STATUS_DURATION=" + formatSeconds(run.DurationMs),
	}
	const failedKey, readyKey, truncatedKey = "APP_STATUS_FAILED=", "APP_STATUS_READY=", "APP_STATUS_TRUNCATED="
	size := 0
	for _, l := range head {
		size += len(l) + 1
	}
	// The room the lists may take: the file, less the fixed lines, the two keys with their
	// newlines and the longest truncated line.
	room := maxDotenvBytes - size - len(failedKey) - len(readyKey) - 2 - len(truncatedKey+"false") - 1
	// The failed clusters come first; the ready list keeps at least its "[]".
	failed, failedCut := namesWithin(run.FailedClusters, room-len("[]"), plainSize)
	ready, readyCut := namesWithin(run.ReadyClusters, room-len(failed), plainSize)
	lines := append(head, failedKey+failed, readyKey+ready, truncatedKey+strconv.FormatBool(failedCut || readyCut))
	return strings.Join(lines, "\n") + "\n"
}

// namesWithin is names as a JSON array of at most room bytes as size measures them (the file's
// bytes, or the bytes once a carrier escapes them again), keeping the first names that fit, and
// whether some were left out. Cluster names need no escaping, but any other character is
// escaped by the encoder and counted.
func namesWithin(names []string, room int, size func(string) int) (string, bool) {
	var b strings.Builder
	b.WriteByte('[')
	used := size("[]")
	for i, n := range names {
		quoted, err := json.Marshal(oneWord(n))
		if err != nil {
			continue
		}
		extra := size(string(quoted))
		if i > 0 {
			extra += size(",")
		}
		if used+extra > room {
			b.WriteByte(']')
			return b.String(), true
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(quoted)
		used += extra
	}
	b.WriteByte(']')
	return b.String(), false
}

// plainSize is a text's size in bytes, as a file holds it.
func plainSize(s string) int { return len(s) }

// oneWord keeps a value on its line of the dotenv file: no control character, quote, blank or
// backslash survives (a verdict or a validated cluster name has none).
func oneWord(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x21 || r == 0x7f || r == '"' || r == '\'' || r == '\\' || r == '$' || r == '`' || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 {
			return '_'
		}
		return r
	}, s)
}

// gitlabDefaults fills the files a GitLab job reports through: the dotenv report, the JUnit
// report and the markdown summary, each unless the command line named one. It returns the
// paths it chose.
func gitlabDefaults(o *cliOptions) map[string]bool {
	chosen := map[string]bool{}
	for _, f := range []struct {
		path *string
		def  string
	}{{&o.dotenvFile, gitlabDotenvFile}, {&o.junitFile, gitlabJUnitFile}, {&o.summaryFile, gitlabSummaryFile}} {
		if *f.path == "" {
			*f.path = f.def
			chosen[f.def] = true
		}
	}
	return chosen
}

// writeDotenv writes the dotenv report to path (--dotenv-file).
func writeDotenv(put putFile, path string, run result.Run) error {
	if err := writeWhole(put, path, []byte(dotenvReport(run))); err != nil {
		return fmt.Errorf("write --dotenv-file: %w", err)
	}
	return nil
}
