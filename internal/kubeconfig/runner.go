package kubeconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
)

// The folders the GitHub runner mounts into a container action (actions/runner,
// ContainerActionHandler): the workspace at containerWorkspace, and from runner v2.331 its
// temporary folder (RUNNER_TEMP, _work/_temp on the host) at containerRunnerTemp. The runner
// rewrites each value of the step's environment that starts with the host path of one of them
// to the container's path (ContainerInfo.TranslateToContainerPath), the value as a whole: a
// KUBECONFIG of one file there reaches the action as the container's path, but the second
// file of a list keeps its host path.
const (
	containerWorkspace  = "/github/workspace"
	containerRunnerTemp = "/github/runner_temp"
)

// runnerFolder is a folder of the runner that the action can read.
type runnerFolder struct {
	// name says which folder it is, in messages.
	name string
	// host is its path on the runner, "" when not known; container is its path here.
	host, container string
}

// runnerFolders are the folders of the runner the action can read files in, the workspace
// first. In the runner's container (GITHUB_WORKSPACE is containerWorkspace) their host paths
// are those of the runner's work folder (TrackingConfig): _work/_temp is RUNNER_TEMP, and
// _work/<repo>/<repo> the workspace, <repo> being the name of GITHUB_REPOSITORY and
// _work/<repo> the job's folder, RUNNER_WORKSPACE, which no mount covers and so keeps its
// host path. Runners before v2.331 do not mount RUNNER_TEMP: it keeps its host path there.
// Run elsewhere (the binary on a host), the paths are the host's.
func runnerFolders(getenv func(string) string, workspace string) []runnerFolder {
	temp := getenv("RUNNER_TEMP")
	if workspace != containerWorkspace {
		folders := []runnerFolder{{name: "the workspace", host: workspace, container: workspace}}
		if filepath.IsAbs(temp) {
			folders = append(folders, runnerFolder{name: "RUNNER_TEMP", host: temp, container: temp})
		}
		return folders
	}
	var hostWorkspace, hostTemp string
	if job := getenv("RUNNER_WORKSPACE"); filepath.IsAbs(job) && !strings.HasPrefix(job, "/github/") && filepath.Dir(job) != job {
		hostTemp = filepath.Join(filepath.Dir(job), "_temp")
		if _, repo, ok := strings.Cut(getenv("GITHUB_REPOSITORY"), "/"); ok && repoName.MatchString(repo) {
			hostWorkspace = filepath.Join(job, repo)
		}
	}
	folders := []runnerFolder{{name: "the workspace", host: hostWorkspace, container: containerWorkspace}}
	if temp == containerRunnerTemp {
		folders = append(folders, runnerFolder{name: "RUNNER_TEMP", host: hostTemp, container: containerRunnerTemp})
	}
	return folders
}

// repoName is the name part of a repository's OWNER/NAME.
var repoName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// containerPath is the path here of one file of KUBECONFIG, as the runner maps a host path
// into the container, and the folder that holds it; ok is false when none does. A relative
// path starts at the workspace, the step's working folder.
func containerPath(path string, folders []runnerFolder) (string, runnerFolder, bool) {
	if len(folders) == 0 {
		return "", runnerFolder{}, false
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(folders[0].container, path)
	}
	path = filepath.Clean(path)
	for _, f := range folders {
		if rest, ok := under(path, f.container); ok {
			return filepath.Join(f.container, rest), f, true
		}
		if rest, ok := under(path, f.host); ok && f.host != "" {
			return filepath.Join(f.container, rest), f, true
		}
	}
	return "", runnerFolder{}, false
}

// under returns path relative to folder, when path is folder or in it.
func under(path, folder string) (string, bool) {
	if folder == "" {
		return "", false
	}
	rel, err := filepath.Rel(folder, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// runnerKubeconfig reads the kubeconfig an earlier step exported as KUBECONFIG (list), for an
// action given no clusters: one file, in a folder of the runner the action can read
// (runnerFolders), whose links lead nowhere else. It is read as a file: source's kubeconfig
// is, under a repository's rules (see trust.go): the workspace holds the clone, which a pull
// request can change.
func (l *loader) runnerKubeconfig(list string) (*doc, error) {
	folders := runnerFolders(l.env.Getenv, l.env.Workspace)
	var files, paths []string
	var holders []runnerFolder
	for _, p := range filepath.SplitList(list) {
		if strings.TrimSpace(p) == "" {
			continue
		}
		path, folder, ok := containerPath(p, folders)
		if !ok {
			return nil, fmt.Errorf("no clusters, and KUBECONFIG names %q, a file on the runner that this container action cannot read: the runner mounts only %s into it; "+
				"run the CLI on the runner instead (uses: %s, then run: app-status verify ...), write the kubeconfig into the workspace, "+
				"or set the clusters input (one name=source per line, e.g. prod=env:PROD_KUBECONFIG) or the kubeconfig input",
				p, mounted(folders), setupAction(l.env.Getenv))
		}
		files, paths, holders = append(files, p), append(paths, path), append(holders, folder)
	}
	switch {
	case len(files) == 0:
		return nil, errors.New("no clusters: KUBECONFIG names no file; set the clusters input (one name=source per line, e.g. prod=env:PROD_KUBECONFIG) or the kubeconfig input")
	case len(files) > 1:
		lines := make([]string, len(paths))
		for i, p := range paths {
			if rel, ok := under(p, folders[0].container); ok {
				p = rel
			}
			lines[i] = fmt.Sprintf("NAME%d=file:%s", i+1, p)
		}
		return nil, fmt.Errorf("no clusters, and KUBECONFIG names %d files (%s): the action reads one kubeconfig; export one file, or name a cluster per file in the clusters input (%s)",
			len(files), strings.Join(quoted(files), ", "), strings.Join(lines, ", "))
	}
	file, path, folder := files[0], paths[0], holders[0]
	shown := fmt.Sprintf("%q", file)
	if path != file {
		shown = fmt.Sprintf("%q (%s here)", file, path)
	}
	target, refused := confineTo(folder.container, path)
	if refused != "" {
		return nil, fmt.Errorf("no clusters, and KUBECONFIG %s is not read: %s %s (%s); write the kubeconfig itself there", shown, refused, folder.name, folder.container)
	}
	data, err := l.env.ReadFile(target)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no clusters, and KUBECONFIG %s does not exist: did the step that exported it write it there?", shown)
		}
		return nil, fmt.Errorf("KUBECONFIG %s: cannot read it: %w", shown, err)
	}
	d, err := l.decodeDoc(data, "KUBECONFIG "+shown, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("KUBECONFIG %s: %w", shown, err)
	}
	d.repo = true
	return d, nil
}

// confineTo returns file with its links resolved, or why it is refused: it leads out of
// folder. A file that does not exist is returned as named: reading it fails.
func confineTo(folder, file string) (string, string) {
	base, target := folder, file
	resolved, err := filepath.EvalSymlinks(file)
	switch {
	case err == nil:
		target = resolved
		if b, err := filepath.EvalSymlinks(folder); err == nil {
			base = b
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", "its links cannot be followed in"
	}
	if _, ok := under(target, base); !ok {
		return "", "it links to a file outside"
	}
	return target, ""
}

// mounted names the folders in messages: "the workspace (/github/workspace) and RUNNER_TEMP
// (/github/runner_temp)".
func mounted(folders []runnerFolder) string {
	names := make([]string, len(folders))
	for i, f := range folders {
		names[i] = fmt.Sprintf("%s (%s)", f.name, f.container)
	}
	s := strings.Join(names, " and ")
	if len(folders) == 1 && folders[0].container == containerWorkspace {
		s += "; runners before v2.331 do not mount RUNNER_TEMP"
	}
	return s
}

// repository is a repository's OWNER/NAME.
var repository = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// releaseTag is a ref the setup action installs a release of.
var releaseTag = regexp.MustCompile(`^v[0-9]+(\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?)?$`)

// setupAction is the setup action beside this action: of its repository and release tag
// (GITHUB_ACTION_REPOSITORY, GITHUB_ACTION_REF), or its documented form when they are not
// known (a local or docker:// action, a branch).
func setupAction(getenv func(string) string) string {
	repo, ref := "<owner>/app-status-action", "v1"
	if r := getenv("GITHUB_ACTION_REPOSITORY"); repository.MatchString(r) {
		repo = r
	}
	if r := getenv("GITHUB_ACTION_REF"); releaseTag.MatchString(r) {
		ref = r
	}
	return repo + "/setup@" + ref
}

func quoted(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
