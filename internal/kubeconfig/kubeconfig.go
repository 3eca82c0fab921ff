// Package kubeconfig turns the clusters and kubeconfig inputs (or the CLI's flags) into one
// named rest.Config per cluster, and collects every secret in them so nothing secret is ever
// printed.
//
// Bad input (a malformed line, a missing variable, an unreadable or unparsable kubeconfig,
// an unknown context) is an error, reported before any cluster is contacted. A kubeconfig
// that parses but cannot be used from here (a credential plugin, a certificate file that is
// not here) is data: that cluster gets an Invalid message and the others load.
package kubeconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/cloudauth"
)

// Env is the outside world Load may see. Nothing else is read: not the process's
// environment, not ~/.kube, not KUBERNETES_MASTER.
type Env struct {
	// Getenv reads an environment variable (env: sources, and KUBECONFIG in CLI mode).
	Getenv func(string) string
	// ReadFile reads kubeconfigs, the clusters file and the files kubeconfigs refer to.
	ReadFile func(string) ([]byte, error)
	// LookPath finds an exec credential plugin's command. Nil means none can run (the
	// action's container): the plugins a built-in provider knows (EKS, GKE, AKS; see
	// internal/cloudauth) are replaced by it, users of other plugins get an Invalid cluster.
	LookPath func(string) (string, error)
	// BuiltinAuth replaces the plugins a built-in provider knows even when LookPath finds
	// them (the CLI's --builtin-auth).
	BuiltinAuth bool
	// CI says the run is a CI job (the action; the CLI in GitLab, GitHub Actions, Azure
	// Pipelines, Jenkins, a Tekton Task or any CI that sets CI), whose file: kubeconfigs may
	// be a pull request's: a built-in provider serves the plugins it knows, and no other exec
	// plugin of theirs runs unless AllowExec (see repoExecRefused).
	CI bool
	// AllowExec lets the exec plugin of a file: kubeconfig run in CI (--allow-exec, the
	// allow-exec input): one LookPath finds outside the workspace and the kubeconfig's
	// folder, never a shell, an interpreter or a relative path.
	AllowExec bool
	// CloudAuth tunes the built-in providers (token lifetimes, the HTTP client of token
	// requests); Load sets its Getenv, ReadFile and OnSecret. The secrets the providers read
	// or obtain, also while verifying, go to the Secrets Load returns (see Secrets.OnAdd).
	CloudAuth cloudauth.Options
	// Workspace is the folder relative paths start at: GITHUB_WORKSPACE, or the CLI's
	// working directory.
	Workspace string
	// Home is the user's home folder, for ~/.kube/config and ~/ paths.
	Home string
	// Note, when set, is told what a run on a workstation goes on without, where a CI job
	// fails: a file of $KUBECONFIG that does not exist. One line each, quoting no kubeconfig.
	Note func(string)
}

// Input says which clusters to load, from the action's inputs or from the CLI's flags.
type Input struct {
	// CLI selects the CLI's flags (ClustersFile, KubeconfigPath, Contexts) over the
	// action's inputs (Clusters, Kubeconfig).
	CLI bool

	// Clusters is the action's clusters input: one name=source per line. Empty means every
	// context of Kubeconfig, in sorted order.
	Clusters string
	// Kubeconfig is the action's kubeconfig input, plain YAML or base64.
	Kubeconfig string

	// ClusterLines are the --cluster flags, each a name=source line of a clusters list (an
	// oidc: cluster needs no file at all); their relative paths start at Env.Workspace.
	ClusterLines []string
	// ClustersFile is --clusters-file: a clusters list whose relative file: paths start at
	// its folder, or at ClustersBase.
	ClustersFile string
	// ClustersBase, when set, is where the relative file: paths of ClustersFile start: a CI
	// template that writes its clusters input to a temporary file means the job's folder.
	ClustersBase string
	// KubeconfigPath is --kubeconfig. Empty means the files of $KUBECONFIG merged as kubectl
	// merges them, else ~/.kube/config, read only when a cluster needs it.
	KubeconfigPath string
	// Contexts are the --context flags, each a cluster named by the context. None (and no
	// ClustersFile) means the kubeconfig's current-context, or every context with AllContexts.
	Contexts []string
	// AllContexts is --all-contexts: every context of the kubeconfig is a cluster, in sorted
	// order.
	AllContexts bool
	// KubeconfigDir is --kubeconfig-dir: a folder of kubeconfig files, each a cluster named
	// after its file (less a .yaml or .yml extension), such as a Secret mounted as a volume or
	// a Tekton workspace. Names starting with '.' (a volume's ..data) are skipped.
	KubeconfigDir string
	// NamesClusters says, in the messages about a context that cannot name its cluster, where
	// clusters are named explicitly. Empty: "the clusters input", or "a --clusters-file" in CLI
	// mode.
	NamesClusters string

	// Keep, when set, says which clusters this run verifies (a shard's share). The others
	// are listed, Elsewhere: their env: variables and file: kubeconfigs are not read, nor
	// their secrets recorded, so a shard of a large fleet pays for its own clusters alone.
	// What every shard reads all the same: the list itself, whole (a line that does not
	// parse, or a name given twice, is the same error in every shard, and then every env:
	// and file: line's kubeconfig is read, only to mask it); the kubeconfig input or
	// --kubeconfig when given (one document, parsed whole, the secrets of the shard's own
	// contexts recorded), and the default kubeconfig when a context: line of the shard's own
	// needs it. A kubeconfig that cannot be read is the error of the shard whose cluster needs
	// it.
	Keep func(name string) bool

	// Words are the words the run prints besides the clusters' names (result.Vocabulary, the
	// namespace, the revision, the resources' kinds, namespaces and names): a credential equal
	// to one, or to a part of one, cannot be masked without blanking it, so its context is
	// Invalid (recordContext), and no secret's form that is one is ever given to the runner to
	// mask (Secrets.Values, OnAdd).
	Words []string

	// AllowedServers are API servers, besides the cloud's own endpoints, that a kubeconfig of a
	// file: source (from the repository) may have a built-in provider's token sent to: https://
	// URLs or HOST[:PORT], compared by host and port (the allowed-servers input, the CLI's
	// --allowed-server). The cloud is still asked that such a server is the cluster's
	// endpoint. See checkRoute.
	AllowedServers []string

	// PinnedCA is a PEM bundle of CA certificates (the pinned-ca input), PinnedCAFile a file
	// of one (the CLI's --pinned-ca). When either is given, a kubeconfig of a file: source
	// whose built-in provider's cluster the cloud cannot be asked about (AKS without
	// AZURE_SUBSCRIPTION_ID) must give a certificate-authority-data
	// of these CAs only. See pinCA.
	PinnedCA     string
	PinnedCAFile string
}

// Cluster is one cluster to verify: it becomes a verify.Target{Name, Config, Invalid}.
type Cluster struct {
	Name string
	// Source is where its kubeconfig came from, as written: "env:KUBECONFIGS#prod-eu",
	// "file:kubeconfigs/prod.yaml", "context:prod", or its server for an oidc: source,
	// "oidc:https://prod.example.com:6443".
	Source string
	// Context is the kubeconfig context used.
	Context string
	// Config connects to the cluster; nil when Invalid says why it cannot.
	Config  *rest.Config
	Invalid string
	// Elsewhere is set for a cluster Input.Keep did not keep: only its Name and Source are
	// known, and it is not to be verified here.
	Elsewhere bool
}

// Load reads every cluster's kubeconfig and returns the clusters, in the order listed (or
// sorted, when every context is used), and the secrets seen. The secrets are returned even
// with an error, to be masked before the error is printed; errors and Invalid messages never
// contain them.
func Load(in Input, env Env) ([]Cluster, *Secrets, error) {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.ReadFile == nil {
		env.ReadFile = func(name string) ([]byte, error) { return nil, fmt.Errorf("read %s: no file access", name) }
	}
	l := &loader{in: in, env: env, secrets: &Secrets{}, docs: map[string]loaded{}}
	if note := env.Note; note != nil {
		l.env.Note = func(msg string) { note(l.secrets.Redact(msg)) }
	}
	clusters, err := l.load()
	if err != nil {
		return nil, l.secrets, redacted{err: err, msg: l.secrets.Redact(err.Error())}
	}
	for i := range clusters {
		clusters[i].Invalid = l.secrets.Redact(clusters[i].Invalid)
	}
	return clusters, l.secrets, nil
}

// redacted is an error whose message went through Secrets.Redact: a last guard, as every
// message is built not to quote kubeconfig contents in the first place.
type redacted struct {
	err error
	msg string
}

func (r redacted) Error() string { return r.msg }
func (r redacted) Unwrap() error { return r.err }

type loader struct {
	in      Input
	env     Env
	secrets *Secrets
	docs    map[string]loaded // by source, so a kubeconfig used by several lines is read once
	allowed servers           // Input.AllowedServers
	pinned  [][]byte          // the DER of Input.PinnedCA's (or PinnedCAFile's) certificates
	names   map[string]bool   // the clusters' names the list gives, never masked (addKubeconfig)
}

type loaded struct {
	doc *doc
	err error
}

func (l *loader) load() ([]Cluster, error) {
	if err := l.in.check(); err != nil {
		return nil, err
	}
	origin := "input allowed-servers"
	if l.in.CLI {
		origin = "--allowed-server"
	}
	allowed, err := parseServers(l.in.AllowedServers, origin)
	if err != nil {
		return nil, err
	}
	l.allowed = allowed
	if l.pinned, err = l.pinnedCAs(); err != nil {
		return nil, err
	}
	list, origin, dir, err := l.list()
	if err != nil {
		return nil, err
	}
	entries, parseErr := parseClusters(list, origin)
	l.names = map[string]bool{}
	l.secrets.addWords(l.in.Words...)
	for _, e := range entries {
		l.names[e.name] = true
		l.secrets.addWords(e.name)
	}
	if len(entries) == 0 && parseErr == nil && l.in.CLI && l.in.ClustersFile != "" {
		return nil, fmt.Errorf("%s lists no clusters: add one name=source line per cluster, e.g. prod=context:prod", origin)
	}
	needKubeconfig := l.in.Kubeconfig != "" || l.in.KubeconfigPath != "" || (len(entries) == 0 && parseErr == nil)
	for _, e := range entries {
		// A context of another shard's cluster is not read here: nor is the kubeconfig for it.
		needKubeconfig = needKubeconfig || (e.kind == sourceContext && l.keep(e.name))
	}
	var kube *doc
	if needKubeconfig {
		if kube, err = l.kubeconfig(); err != nil {
			return nil, errors.Join(parseErr, err)
		}
	}
	if parseErr != nil {
		// Read the lines that parse all the same, only so that their secrets are known and
		// masked: the error is printed, and nothing may leak while it is.
		for _, e := range entries {
			_, _ = l.fromEntry(e, kube, origin, dir)
		}
		return nil, parseErr
	}
	if len(entries) == 0 {
		if list := l.env.Getenv("KUBECONFIG"); kube == nil && !l.in.CLI && list != "" {
			// A step before (azure/k8s-set-context, get-gke-credentials...) exported a
			// kubeconfig file: the action reads it when the runner mounts its folder.
			if kube, err = l.runnerKubeconfig(list); err != nil {
				return nil, err
			}
		}
		return l.fromContexts(kube)
	}
	clusters := make([]Cluster, 0, len(entries))
	var errs []error
	for _, e := range entries {
		if !l.keep(e.name) {
			clusters = append(clusters, Cluster{Name: e.name, Source: e.written(), Elsewhere: true})
			continue
		}
		c, err := l.fromEntry(e, kube, origin, dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		clusters = append(clusters, c)
	}
	return clusters, errors.Join(errs...)
}

// keep says whether the cluster is verified by this run (Input.Keep).
func (l *loader) keep(name string) bool { return l.in.Keep == nil || l.in.Keep(name) }

// check rejects flags of the other mode (a wiring mistake) and flags that cannot combine.
func (in Input) check() error {
	switch {
	case !in.CLI && (in.ClustersFile != "" || in.KubeconfigPath != "" || len(in.Contexts) > 0 || in.KubeconfigDir != "" || in.AllContexts || len(in.ClusterLines) > 0):
		return errors.New("kubeconfig: ClustersFile, ClusterLines, KubeconfigPath, Contexts, AllContexts and KubeconfigDir are CLI flags: set Input.CLI")
	case in.AllContexts && len(in.Contexts) > 0:
		return errors.New("--all-contexts and --context cannot be combined: give --all-contexts for every context, or --context NAME for each one to verify")
	case in.AllContexts && (in.ClustersFile != "" || in.KubeconfigDir != "" || len(in.ClusterLines) > 0):
		return errors.New("--all-contexts cannot be combined with --clusters-file, --kubeconfig-dir or --cluster: they name the clusters themselves")
	case len(in.ClusterLines) > 0 && (in.ClustersFile != "" || len(in.Contexts) > 0 || in.KubeconfigDir != ""):
		return errors.New("--cluster cannot be combined with --clusters-file, --context or --kubeconfig-dir: give every cluster as --cluster NAME=SOURCE (NAME=context:CONTEXT for a context), or put the lines in the clusters file")
	case in.KubeconfigDir != "" && (in.ClustersFile != "" || in.KubeconfigPath != "" || len(in.Contexts) > 0):
		return errors.New("--kubeconfig-dir cannot be combined with --clusters-file, --kubeconfig or --context: each file of the folder is a cluster")
	case in.CLI && (in.Clusters != "" || in.Kubeconfig != ""):
		return errors.New("kubeconfig: Clusters and Kubeconfig are action inputs: unset Input.CLI")
	case in.ClustersFile != "" && len(in.Contexts) > 0:
		return errors.New("--context and --clusters-file cannot be combined: list the contexts in the clusters file as name=context:CONTEXT")
	}
	return nil
}

// list returns the clusters list, the name of where it came from, and the folder its
// relative file: paths start at.
func (l *loader) list() (list, origin, dir string, err error) {
	if !l.in.CLI {
		return l.in.Clusters, "input clusters", l.env.Workspace, nil
	}
	if l.in.KubeconfigDir != "" {
		return l.dirList()
	}
	if len(l.in.ClusterLines) > 0 {
		return strings.Join(l.in.ClusterLines, "\n"), "--cluster", l.env.Workspace, nil
	}
	if l.in.ClustersFile == "" {
		return "", "", "", nil
	}
	path := l.resolve(l.env.Workspace, l.in.ClustersFile)
	data, err := l.env.ReadFile(path)
	if err != nil {
		return "", "", "", fmt.Errorf("--clusters-file %s: cannot read it: %w", l.in.ClustersFile, err)
	}
	if l.in.ClustersBase != "" {
		return string(data), l.in.ClustersFile, l.resolve(l.env.Workspace, l.in.ClustersBase), nil
	}
	return string(data), l.in.ClustersFile, filepath.Dir(path), nil
}

// dirList is the clusters list of --kubeconfig-dir: a name=file:FILE line per file, the name
// being the file's less one .yaml or .yml. Folders (and links to them) and the entries whose
// names start with ".." (the atomic writer of a mounted Secret keeps its data there) are not
// clusters; any other file is one, so that no cluster is left out unnoticed: a name that cannot
// be a cluster's (a hidden ".prod" too), two files naming one cluster and, in CI, a link to a
// file outside the folder are bad input.
func (l *loader) dirList() (list, origin, dir string, err error) {
	dir = l.resolve(l.env.Workspace, l.in.KubeconfigDir)
	if l.env.CI && folderLinksOut(l.env.Workspace, dir) {
		// The folder of the clone itself a pull request's link (to ~/.kube): every file in it
		// would be "in the folder".
		return "", "", "", fmt.Errorf("--kubeconfig-dir %s is not read in a CI job: it is in the workspace but links out of it; name a folder that is not a link", l.in.KubeconfigDir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", "", "", fmt.Errorf("--kubeconfig-dir %s: cannot read the folder: %w", l.in.KubeconfigDir, err)
	}
	var b strings.Builder
	files := map[string]string{} // cluster name -> file
	for _, e := range entries {
		file := e.Name()
		if strings.HasPrefix(file, "..") {
			continue
		}
		info, err := os.Stat(filepath.Join(dir, file))
		if err != nil {
			return "", "", "", fmt.Errorf("--kubeconfig-dir %s: cannot read %q: %w", l.in.KubeconfigDir, file, err)
		}
		if info.IsDir() {
			continue
		}
		if _, refused := confine(dir, file, filepath.Join(dir, file)); refused != "" && l.env.CI {
			// A folder of the clone, a pull request's: a link to the runner's own kubeconfig
			// would have the job verify a cluster the pipeline never listed. A mounted Secret's
			// links stay in its folder.
			return "", "", "", fmt.Errorf("--kubeconfig-dir %s: %q is not read in a CI job: %s; put the file itself in the folder",
				l.in.KubeconfigDir, file, strings.ReplaceAll(refused, "the kubeconfig's folder", "the folder"))
		}
		name, found := strings.CutSuffix(file, ".yaml")
		if !found {
			name = strings.TrimSuffix(file, ".yml")
		}
		if !clusterName.MatchString(name) {
			return "", "", "", fmt.Errorf("--kubeconfig-dir %s: the file %q cannot name a cluster: rename it to letters, digits, '.', '_' or '-' (at most 63, starting with a letter or digit, with or without .yaml), or move it out of the folder", l.in.KubeconfigDir, file)
		}
		if first, dup := files[name]; dup {
			return "", "", "", fmt.Errorf("--kubeconfig-dir %s: the files %q and %q both name the cluster %q: keep one of them", l.in.KubeconfigDir, first, file, name)
		}
		files[name] = file
		fmt.Fprintf(&b, "%s=file:%s\n", name, file)
	}
	if b.Len() == 0 {
		return "", "", "", fmt.Errorf("--kubeconfig-dir %s: no kubeconfig file in the folder: put one file per cluster there, named after it", l.in.KubeconfigDir)
	}
	return b.String(), "--kubeconfig-dir", dir, nil
}

// fromEntry loads the cluster of one clusters line.
func (l *loader) fromEntry(e entry, kube *doc, origin, dir string) (Cluster, error) {
	var d *doc
	var err error
	want := e.context
	switch e.kind {
	case sourceEnv:
		d, err = l.envDoc(e, origin)
	case sourceFile:
		if refused := l.fileLineRefused(e, origin, dir); refused != "" {
			return Cluster{Name: e.name, Source: e.written(), Invalid: refused}, nil
		}
		if d, err = l.fileDoc(e, dir); err != nil {
			err = fmt.Errorf("%s line %d: %s: %w", origin, e.line, e.source(), err)
		}
	case sourceOIDC:
		return l.oidcCluster(e, origin, dir)
	case sourceContext:
		if l.clustersFromFile() && l.env.CI {
			return Cluster{Name: e.name, Source: e.written(), Invalid: fmt.Sprintf("%s line %d: %s: in a CI job a clusters file, which can come from the repository and so from a pull request, does not choose among the pipeline's kubeconfig contexts: "+
				"it could verify, and with reconcile write to, a cluster the pipeline never listed: name the context in the pipeline itself (--context %s, or --cluster '%s=context:%s' in the job's script, or the GitLab component's clusters input)",
				origin, e.line, e.source(), e.ref, e.name, e.ref)}, nil
		}
		if kube == nil {
			return Cluster{}, fmt.Errorf("%s line %d: %s needs the kubeconfig input", origin, e.line, e.source())
		}
		d, want = kube, e.ref
	}
	if err != nil {
		return Cluster{}, err
	}
	name, err := d.pick(want)
	if err != nil {
		return Cluster{}, fmt.Errorf("%s line %d: %w", origin, e.line, err)
	}
	cfg, invalid := l.restConfig(d, name)
	return Cluster{Name: e.name, Source: e.written(), Context: name, Config: cfg, Invalid: invalid}, nil
}

// fromContexts makes a cluster of each --context, of the current context (the CLI without
// --context or --all-contexts) or of every context, named by it, or by its agent for a context the GitLab agent for Kubernetes wrote (contextClusterName).
func (l *loader) fromContexts(kube *doc) ([]Cluster, error) {
	if kube == nil {
		return nil, errors.New("no clusters: set the clusters input (one name=source per line, e.g. prod=env:PROD_KUBECONFIG) or the kubeconfig input")
	}
	names, explicit := l.in.Contexts, len(l.in.Contexts) > 0
	current := l.in.CLI && !explicit && !l.in.AllContexts
	switch {
	case current && kube.cfg.CurrentContext == "":
		return nil, fmt.Errorf("%s has no current-context: name the context to verify with --context NAME (repeat for several), or verify every context with --all-contexts", kube.origin)
	case current:
		// As kubectl: the current context alone, unless told otherwise. A kubeconfig of
		// several contexts says so, as a script that verified every one of them now verifies
		// one; a CI job must name the clusters it verifies.
		names = []string{kube.cfg.CurrentContext}
		if n := len(kube.cfg.Contexts); n > 1 && kube.cfg.Contexts[kube.cfg.CurrentContext] != nil && l.in.KubeconfigDir == "" && l.in.ClustersFile == "" && len(l.in.ClusterLines) == 0 {
			narrowed := fmt.Sprintf("verifying the current context %s only (%d contexts in the kubeconfig): --all-contexts verifies every one, --context NAME one of them", kube.cfg.CurrentContext, n)
			if l.env.CI {
				return nil, errors.New(narrowed)
			}
			if l.env.Note != nil {
				l.env.Note(narrowed)
			}
		}
	case !explicit:
		if names = kube.contexts(); len(names) == 0 {
			return nil, fmt.Errorf("%s has no contexts; add one (kubectl config set-context NAME --cluster=CLUSTER --user=USER)", kube.origin)
		}
	}
	namesClusters := l.in.NamesClusters
	switch {
	case namesClusters != "":
	case l.in.CLI:
		namesClusters = "a --clusters-file"
	default:
		namesClusters = "the clusters input"
	}
	var clusters []Cluster
	var errs []error
	seen := map[string]bool{}
	contextOf := map[string]string{} // cluster name -> the context that named it first
	for _, name := range names {
		where := fmt.Sprintf("context %q of %s", name, kube.origin)
		switch {
		case explicit:
			where = fmt.Sprintf("--context %q", name)
		case current:
			where = fmt.Sprintf("the current-context %q (pass --context NAME or --all-contexts to verify others)", name)
		}
		if seen[name] {
			errs = append(errs, fmt.Errorf("%s is given twice", where))
			continue
		}
		seen[name] = true
		if _, err := kube.pick(name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		cluster := contextClusterName(name)
		if err := checkName(cluster); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w; name it in %s: NAME=context:%s", where, err, namesClusters, name))
			continue
		}
		if first, dup := contextOf[cluster]; dup {
			errs = append(errs, fmt.Errorf("the contexts %q and %q of %s both name the cluster %q (a GitLab agent's context, PROJECT:AGENT, is named after its agent): name them in %s, a NAME=context:CONTEXT line each, e.g. %s-1=context:%s and %s-2=context:%s",
				first, name, kube.origin, cluster, namesClusters, cluster, first, cluster, name))
			continue
		}
		contextOf[cluster] = name
		if !l.keep(cluster) {
			clusters = append(clusters, Cluster{Name: cluster, Source: sourceContext + ":" + name, Context: name, Elsewhere: true})
			continue
		}
		cfg, invalid := l.restConfig(kube, name)
		clusters = append(clusters, Cluster{Name: cluster, Source: sourceContext + ":" + name, Context: name, Config: cfg, Invalid: invalid})
	}
	return clusters, errors.Join(errs...)
}
