package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/safefile"
	"github.com/org/app-status-action/internal/sanitize"
)

// reportFiles are the files the CLI writes besides its output: the reports a CI reads after the
// step (--summary-file, --junit-file, --dotenv-file, --json-file, --tekton-results). They are
// written in every case, once the flags naming them are read: a failed rollout, a timeout, a
// bad input (then with no cluster and the error as the message), and one that cannot be
// written does not keep the others from being written.
type reportFiles struct {
	summary, junit, dotenv, json, tekton string
	// gitlabDefaults are the files chosen for a GitLab job because the command line named
	// none: failing to write one is a warning (a read-only folder), not a failed step.
	gitlabDefaults map[string]bool
	// chosen are the other files whose path the program chose (Azure's summary): like the
	// GitLab ones, they are written as new files of their own, never through a link
	// (safefile.Create).
	chosen map[string]bool
	// inClone: the CLI runs in a CI job whose folders a repository's files can occupy
	// (inCIClone), so every file it writes there is one of its own too.
	inClone bool
	// workspaces are the folders of the job's clone (workspaceRoots): an absolute path under
	// one of them gets the folder checks a relative one gets (createOwn).
	workspaces []string
	// jsonCopy, when set, is given the --json-file document once the file is written whole:
	// -o json prints the very same document, which is then encoded once (a fleet's is tens of
	// MiB).
	jsonCopy *fileCopy
}

// fileCopy is a second destination of a report file, copied from the file once it is written.
type fileCopy struct {
	w io.Writer
	// copied is set once the file was copied to w (not when it was written in place or could
	// not be written: w still needs the document then); err is the copy's failure (w's, or
	// reading the file back).
	copied bool
	err    error
}

func newReportFiles(o cliOptions, summaryFile string, env Env) reportFiles {
	return reportFiles{summary: summaryFile, junit: o.junitFile, dotenv: o.dotenvFile, json: o.jsonFile, tekton: o.tektonResults,
		inClone: o.inCI(env), workspaces: workspaceRoots(env, o.tektonResults != "")}
}

// workspaceRoots are the folders a CI job's clone may be in: the working folder, and the
// clone's folder as each CI names it (GitHub's GITHUB_WORKSPACE, GitLab's CI_PROJECT_DIR,
// Azure's BUILD_SOURCESDIRECTORY, Jenkins's WORKSPACE), and, for a Tekton Task, /workspace,
// where its workspaces are mounted. A report path under one of them, however written, may
// pass through a folder link a repository committed.
func workspaceRoots(env Env, tekton bool) []string {
	var roots []string
	if wd, err := os.Getwd(); err == nil {
		roots = append(roots, wd)
	}
	for _, v := range []string{"GITHUB_WORKSPACE", "CI_PROJECT_DIR", "BUILD_SOURCESDIRECTORY", "WORKSPACE"} {
		if dir := env.Getenv(v); filepath.IsAbs(dir) {
			roots = append(roots, dir)
		}
	}
	if tekton {
		roots = append(roots, "/workspace")
	}
	return roots
}

// inCI reports whether the CLI runs in a CI job (inCIClone) or as the Tekton Task's step
// (--tekton-results), whose workspaces a pipeline may have filled from a repository.
func (o cliOptions) inCI(env Env) bool { return inCIClone(env) || o.tektonResults != "" }

// inCIClone reports whether the CLI runs in a CI job whose working folder is the repository's
// clone, which a pull request's files occupy (a committed symbolic link to an executable
// script, to a file the job reads later): GitLab, GitHub Actions, Azure Pipelines, Jenkins,
// the CIs that set no CI variable (ciMarkers), or any CI that sets CI to anything but false
// or 0. A Tekton Task
// (--tekton-results) counts too: its report workspace is often the one the source was cloned
// into.
func inCIClone(env Env) bool {
	if inGitLabCI(env) || inAzurePipelines(env) || env.Getenv("GITHUB_ACTIONS") == "true" {
		return true
	}
	// Most CIs set CI=true; some name themselves (CI=woodpecker). Only an explicit "no" is not.
	if ci := strings.ToLower(strings.TrimSpace(env.Getenv("CI"))); ci != "" && ci != "false" && ci != "0" {
		return true
	}
	return slices.ContainsFunc(ciMarkers, func(name string) bool { return env.Getenv(name) != "" })
}

// ciMarkers are variables that CIs which do not set CI always set in a job: Jenkins, AWS
// CodeBuild, TeamCity and Bamboo (which prefixes its variables with bamboo_).
var ciMarkers = []string{"JENKINS_URL", "CODEBUILD_BUILD_ID", "TEAMCITY_VERSION", "bamboo_buildKey"}

// write writes every file named, and returns what could not be written; a default GitLab file
// that cannot be written is reported to warn instead.
func (f reportFiles) write(run result.Run, badInput string, warn io.Writer) error {
	type file struct {
		path  string
		write func(string, result.Run) error
	}
	files := []file{
		{f.summary, func(p string, r result.Run) error { return writeSummaryFile(f.put(p), p, r, badInput) }},
		{f.junit, func(p string, r result.Run) error { return writeJUnit(f.put(p), p, r) }},
		{f.dotenv, func(p string, r result.Run) error { return writeDotenv(f.put(p), p, r) }},
		{f.json, func(p string, r result.Run) error { return writeJSONFile(f.ownPut(p), p, r, f.jsonCopy) }},
		{f.tekton, writeTektonResults},
	}
	var errs []error
	for _, file := range files {
		if file.path == "" {
			continue
		}
		err := file.write(file.path, run)
		switch {
		case err == nil:
		case f.gitlabDefaults[file.path]:
			fmt.Fprintf(warn, "warning: %v (a GitLab job's default report; name another path with its flag)\n", err)
		default:
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// putFile writes a file whole or not at all: safefile.Write for a path the user named (which
// may be a device such as /dev/stdout, or a link on purpose), createOwn for one the program
// chose, or any in a folder a repository's files can occupy (never through a link, never
// keeping a file's mode).
type putFile func(name string, perm os.FileMode, write func(io.Writer) error) error

// own reports whether the file at path is written as a new file of its own (createOwn): when
// the program chose its path, or in a CI job's clone (ownFile).
func (f reportFiles) own(path string) bool {
	return f.gitlabDefaults[path] || f.chosen[path] || ownFile(f.inClone, path)
}

// put is how the file at path is written (own).
func (f reportFiles) put(path string) putFile {
	if put := f.ownPut(path); put != nil {
		return put
	}
	return safefile.Write
}

// ownPut is createOwn in the job's workspaces when the file at path is written as a new file of
// its own (own), else nil.
func (f reportFiles) ownPut(path string) putFile {
	if !f.own(path) {
		return nil
	}
	return createOwn(f.workspaces)
}

// ownFile reports whether a report file the user named is written as a new file of its own:
// in a CI job whose folders the repository's files occupy (inClone), never through a link,
// unless it is a device (/dev/stdout). Elsewhere (a user's own machine) it is written as
// named (safefile.Write), links included.
func ownFile(inClone bool, path string) bool {
	return inClone && !strings.HasPrefix(filepath.Clean(path), "/dev/")
}

// reportPut is how a report file the user named is written (ownFile), workspaces being the
// job's (workspaceRoots).
func reportPut(inClone bool, workspaces []string, path string) putFile {
	if ownFile(inClone, path) {
		return createOwn(workspaces)
	}
	return safefile.Write
}

// createOwn returns safefile.Create, refusing as well a path whose folders in the job's clone
// hold a symbolic link (reports/summary.md where reports, committed, links to another
// folder): every folder of a relative path, and of an absolute one those below the workspace
// it is in ($CI_PROJECT_DIR/reports/summary.md), the workspace itself being where the CI put
// it. An absolute path in no workspace is written as safefile.Create writes it.
func createOwn(workspaces []string) putFile {
	return func(name string, perm os.FileMode, write func(io.Writer) error) error {
		if dir := linkedFolder(name, workspaces); dir != "" {
			return fmt.Errorf("write %s: its folder %s is %w, and a report file in a CI job's clone is never written through one (a link in a repository could lead anywhere): remove it, or name another file", name, dir, safefile.ErrLink)
		}
		return safefile.Create(name, perm, write)
	}
}

// linkedFolder returns the first folder of name's path, below the working folder (a relative
// name) or the workspace name is in (an absolute one), that is a symbolic link, or "".
func linkedFolder(name string, workspaces []string) string {
	name = filepath.Clean(name)
	base, rel := "", name
	if filepath.IsAbs(name) {
		rel = ""
		for _, ws := range workspaceForms(workspaces) {
			if r, ok := strings.CutPrefix(name, ws+string(filepath.Separator)); ok && ws != string(filepath.Separator) {
				base, rel = ws, r
				break
			}
		}
		if rel == "" {
			return ""
		}
	}
	dir := base
	for _, elem := range strings.Split(filepath.Dir(rel), string(filepath.Separator)) {
		dir = filepath.Join(dir, elem)
		if elem == "." || elem == ".." {
			continue
		}
		if fi, err := os.Lstat(dir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return dir
		}
	}
	return ""
}

// workspaceForms are the workspaces as given and with their own links resolved (a path may
// name a workspace either way), cleaned, deepest first: a path is checked below the deepest
// workspace it is in.
func workspaceForms(workspaces []string) []string {
	var forms []string
	for _, ws := range workspaces {
		forms = append(forms, filepath.Clean(ws))
		if real, err := filepath.EvalSymlinks(ws); err == nil {
			forms = append(forms, real)
		}
	}
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(forms)
}

// writeWhole writes a report file (markdown, XML, dotenv, JSON) whole or not at all (put): a
// run killed midway leaves no cut file for a later step to read. The report quotes clusters,
// and a later step may print it (or the file may be /dev/stdout): its runner commands are
// broken as on stdout (sanitize.CommandsText; a no-op on JSON already broken by
// sanitize.CommandsJSONText, which keeps its meaning).
func writeWhole(put putFile, path string, data []byte) error {
	text := sanitize.CommandsText(string(data))
	return put(path, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	})
}

// writeSummaryFile writes the markdown summary to path (--summary-file).
func writeSummaryFile(put putFile, path string, run result.Run, badInput string) error {
	md := report.Markdown(run, report.MarkdownOptions{BadInput: badInput})
	if err := writeWhole(put, path, []byte(md)); err != nil {
		return fmt.Errorf("write --summary-file: %w", err)
	}
	return nil
}

// badInputRun is the run reported when the input is bad: no cluster was contacted, the run
// failed, and the error is its message. The resources and the revision are left out: they
// may be what was wrong (a secret given to the wrong flag).
func badInputRun(message string) result.Run {
	run := result.NewRun(nil, "", nil, 0)
	run.Condition.Message = message
	return run
}
