package kubeconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
)

// envDoc reads the kubeconfig of an env: source; an empty variable is an error that
// quotes the line and says how to map the secret. A line of a clusters file in CI, which can
// come from the repository and so from a pull request, may name a variable the pull request
// writes (a commit's title, CI_COMMIT_TITLE, BUILD_SOURCEVERSIONMESSAGE, CHANGE_TITLE): its
// kubeconfig is then a repository one, as a file: kubeconfig is (doc.repo), its files in the
// workspace, its plugins refused and a built-in provider's token routed by the cloud.
func (l *loader) envDoc(e entry, origin string) (*doc, error) {
	value := l.env.Getenv(e.ref)
	if strings.TrimSpace(value) == "" {
		hint := fmt.Sprintf("map the secret in the step's env: (env: %s: ${{ secrets.%s }})", e.ref, e.ref)
		if l.in.CLI {
			hint = fmt.Sprintf("export %s (a kubeconfig, plain or base64) before running the command", e.ref)
		}
		return nil, fmt.Errorf("%s: environment variable %s is empty or not set; %s", lineRef(origin, e), e.ref, hint)
	}
	repo := l.clustersFromFile() && l.env.CI
	key := e.source()
	if repo {
		key = "repository " + key
	}
	d, err := l.cached(key, func() (*doc, error) {
		d, err := l.decodeDoc([]byte(value), e.source(), l.env.Workspace)
		if d != nil {
			d.repo = repo
		}
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s line %d: %s: %w", origin, e.line, e.source(), err)
	}
	return d, nil
}

// fileLineRefused says why the file a file: line of a clusters file names is not read in CI:
// the clusters file can come from the repository, so from a pull request, which would have the
// job verify, with whatever credentials the file holds, a kubeconfig of the runner's (a k3s
// config, ~/.kube/config) that the pipeline never listed. So, as the token=file: and ca= files
// of its oidc: lines, the file must be in the folder its relative paths start at (confine).
// Empty means it may be read.
func (l *loader) fileLineRefused(e entry, origin, dir string) string {
	if !l.clustersFromFile() || !l.env.CI {
		return ""
	}
	if folderLinksOut(l.env.Workspace, dir) {
		return fmt.Sprintf("%s line %d: %s is not read: the folder its relative paths start at (%s) is in the workspace but links out of it, "+
			"and in a CI job a line of a clusters file, which can come from the repository and so from a pull request, may refer only to files in that folder: "+
			"name a folder that is not a link (--clusters-dir), or put the line in the pipeline itself (--cluster in the job's script)", origin, e.line, e.source(), dir)
	}
	_, refused := confine(dir, e.ref, l.resolve(dir, e.ref))
	if refused == "" {
		return ""
	}
	return fmt.Sprintf("%s line %d: %s is not read: %s, and in a CI job a line of a clusters file, which can come from the repository and so from a pull request, "+
		"may refer only to files in the folder its relative paths start at (%s): move the file there, or put the line in the pipeline itself (--cluster in the job's script)",
		origin, e.line, e.source(), strings.ReplaceAll(refused, "the kubeconfig's folder", "that folder"), dir)
}

// folderLinksOut reports whether dir, named inside the workspace, resolves outside it: a pull
// request can turn a folder of the clone (--clusters-dir kubeconfigs) into a link to "/", and
// every file: line would then stay "in the folder". A folder named outside the workspace is the
// pipeline's own (a mounted Secret), not the clone's.
func folderLinksOut(workspace, dir string) bool {
	if workspace == "" {
		return false
	}
	rel, err := filepath.Rel(workspace, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return false
	}
	_, refused := confine(workspace, rel, dir)
	return refused != ""
}

// fileDoc reads the kubeconfig of a file: source; its relative paths start at its folder.
func (l *loader) fileDoc(e entry, dir string) (*doc, error) {
	path := l.resolve(dir, e.ref)
	return l.cached("file:"+path, func() (*doc, error) {
		data, err := l.env.ReadFile(path)
		if err != nil {
			where := "the workspace, GITHUB_WORKSPACE; is the repository checked out?"
			switch {
			case len(l.in.ClusterLines) > 0:
				where = "the working directory, for a --cluster line"
			case l.in.CLI && l.in.ClustersBase != "":
				where = "--clusters-dir " + l.in.ClustersBase
			case l.in.CLI:
				where = "the clusters file's folder"
			}
			return nil, fmt.Errorf("cannot read %s (relative paths start at %s): %w", path, where, err)
		}
		d, err := l.decodeDoc(data, e.source(), filepath.Dir(path))
		if d != nil {
			d.repo = true
		}
		return d, err
	})
}

// kubeconfig reads the kubeconfig input, or the CLI's kubeconfig file. It returns nil
// without an error when the action has no kubeconfig input.
func (l *loader) kubeconfig() (*doc, error) {
	if !l.in.CLI {
		if strings.TrimSpace(l.in.Kubeconfig) == "" {
			return nil, nil
		}
		return l.cached("kubeconfig", func() (*doc, error) {
			d, err := l.decodeDoc([]byte(l.in.Kubeconfig), "input kubeconfig", l.env.Workspace)
			if err != nil {
				return nil, fmt.Errorf("input kubeconfig: %w", err)
			}
			return d, nil
		})
	}
	return l.cached("kubeconfig", func() (*doc, error) {
		if l.in.KubeconfigPath == "" {
			if paths := l.kubeconfigList(); len(paths) > 0 {
				return l.mergedKubeconfig(paths)
			}
		}
		path, how, err := l.kubeconfigPath()
		if err != nil {
			return nil, err
		}
		data, err := l.env.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s (%s): cannot read it: %w", path, how, err)
		}
		d, err := l.decodeDoc(data, "kubeconfig "+path, filepath.Dir(path))
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s (%s): %w", path, how, err)
		}
		return d, nil
	})
}

// kubeconfigList is $KUBECONFIG's files, as kubectl reads them: split at the path-list
// separator, empty entries dropped, relative paths from the working directory.
func (l *loader) kubeconfigList() []string {
	var paths []string
	for _, p := range filepath.SplitList(l.env.Getenv("KUBECONFIG")) {
		if p != "" {
			paths = append(paths, l.resolve(l.env.Workspace, p))
		}
	}
	return paths
}

// mergedKubeconfig reads the files of $KUBECONFIG as kubectl does: client-go's loading rules
// merge them (the first file to set a context, cluster or user, or the current-context, wins).
// A missing file is skipped with a note (Env.Note) on a workstation, as kubectl skips it; in CI
// it is an error, as the file left out (a secret's mount that failed) may be the one that
// names the clusters to verify. Each file is first read and parsed here (env.ReadFile: regular
// files only, bounded), so that a bad one is an error that quotes none of it; one file alone is
// used as it is, plain or base64.
func (l *loader) mergedKubeconfig(paths []string) (*doc, error) {
	list := strings.Join(paths, string(filepath.ListSeparator))
	var found, missing []string
	var first *doc
	for _, path := range paths {
		data, err := l.env.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, path)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s (in KUBECONFIG): cannot read it: %w", path, err)
		}
		d, err := l.decodeDoc(data, "kubeconfig "+path, filepath.Dir(path))
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s (in KUBECONFIG): %w", path, err)
		}
		if _, encoded, _ := decode(data); encoded && len(paths) > 1 {
			return nil, fmt.Errorf("kubeconfig %s (in KUBECONFIG) is base64, which kubectl cannot merge: decode it (base64 -d), or pass it alone with --kubeconfig", path)
		}
		found = append(found, path)
		if first == nil {
			first = d
		}
	}
	switch {
	case len(found) == 0:
		return nil, fmt.Errorf("KUBECONFIG %s: none of its files exists; set KUBECONFIG to your kubeconfig files, or pass --kubeconfig PATH", list)
	case len(missing) > 0 && l.env.CI:
		verb := "does"
		if len(missing) > 1 {
			verb = "do"
		}
		return nil, fmt.Errorf("KUBECONFIG %s: %s %s not exist, and a CI job does not go on without a file it lists (a secret's mount that failed): mount it, or leave it out of KUBECONFIG", list, strings.Join(missing, ", "), verb)
	}
	for _, path := range missing {
		if l.env.Note != nil {
			l.env.Note(fmt.Sprintf("KUBECONFIG lists %s, which does not exist: skipped, as kubectl skips it", path))
		}
	}
	switch len(found) {
	case 1:
		return first, nil
	}
	rules := clientcmd.ClientConfigLoadingRules{Precedence: found}
	cfg, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("KUBECONFIG %s: its files cannot be merged: %w", list, err)
	}
	l.secrets.addWords(runWords(cfg)...)
	return &doc{origin: "KUBECONFIG " + list, dir: filepath.Dir(found[0]), cfg: cfg, public: publicNames(cfg, l.names)}, nil
}

// kubeconfigPath is --kubeconfig, else ~/.kube/config, and how it was chosen, for messages.
func (l *loader) kubeconfigPath() (path, how string, err error) {
	if l.in.KubeconfigPath != "" {
		return l.resolve(l.env.Workspace, l.in.KubeconfigPath), "--kubeconfig", nil
	}
	if l.env.Home == "" {
		return "", "", errors.New("no kubeconfig: pass --kubeconfig PATH or set KUBECONFIG")
	}
	return filepath.Join(l.env.Home, ".kube", "config"), "the default; pass --kubeconfig or set KUBECONFIG to use another", nil
}

// decodeDoc parses a kubeconfig and records the text itself when it is base64 (the encoded
// kubeconfig is a secret as a whole). The secrets of its users are recorded as its contexts
// are used (recordContext), those of no other user.
func (l *loader) decodeDoc(raw []byte, origin, dir string) (*doc, error) {
	cfg, encoded, err := decode(raw)
	if encoded {
		l.secrets.add(string(raw))
	}
	if err != nil {
		return nil, err
	}
	l.secrets.addWords(runWords(cfg)...)
	return &doc{origin: origin, dir: dir, cfg: cfg, public: publicNames(cfg, l.names)}, nil
}

// cached runs read once per key.
func (l *loader) cached(key string, read func() (*doc, error)) (*doc, error) {
	if r, ok := l.docs[key]; ok {
		return r.doc, r.err
	}
	d, err := read()
	l.docs[key] = loaded{doc: d, err: err}
	return d, err
}
