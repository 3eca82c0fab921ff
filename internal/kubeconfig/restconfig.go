package kubeconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/org/app-status-action/internal/cloudauth"
)

//nolint:gosec // G101: advice on how to get a token, not a credential
const tokenAdvice = "pass a kubeconfig with a token instead, e.g. a ServiceAccount token (kubectl create token ...) or a short-lived token your workflow fetched in an earlier step"

// restConfig builds the rest.Config of one context of d. When the context cannot be used
// from here (a credential plugin, a file that is not here, a broken entry) it returns a nil
// config and a message saying why and what to do instead.
//
// Only the context's own cluster and user reach clientcmd, with every referenced file read
// through Env.ReadFile and inlined first, and no overrides: client-go reads neither the
// runner's files nor its environment (KUBERNETES_MASTER, ~/.kube).
func (l *loader) restConfig(d *doc, contextName string) (*rest.Config, string) {
	kctx := d.cfg.Contexts[contextName]
	if msg := l.recordContext(d, kctx); msg != "" {
		return nil, msg
	}
	if kctx.Cluster == "" {
		return nil, fmt.Sprintf("context %q names no cluster: set its cluster (kubectl config set-context %s --cluster=CLUSTER)", contextName, contextName)
	}
	cluster, ok := d.cfg.Clusters[kctx.Cluster]
	if !ok || cluster == nil {
		return nil, fmt.Sprintf("context %q refers to cluster %q, which %s does not define", contextName, kctx.Cluster, d.origin)
	}
	if cluster.Server == "" {
		return nil, fmt.Sprintf("the kubeconfig's cluster %q has no server: set server: https://HOST:PORT", kctx.Cluster)
	}
	cluster = cluster.DeepCopy()
	user := clientcmdapi.NewAuthInfo()
	if kctx.AuthInfo != "" {
		u, ok := d.cfg.AuthInfos[kctx.AuthInfo]
		if !ok || u == nil {
			return nil, fmt.Sprintf("context %q refers to user %q, which %s does not define", contextName, kctx.AuthInfo, d.origin)
		}
		user = u.DeepCopy()
	}
	if user.AuthProvider != nil {
		return nil, authProviderProblem(kctx.AuthInfo, user.AuthProvider.Name)
	}
	var builtin *cloudauth.Source
	if user.Exec != nil {
		var msg string
		if builtin, msg = l.execCredentials(d, kctx.AuthInfo, user.Exec); msg != "" {
			return nil, msg
		}
		if builtin != nil {
			user.Exec = nil // the built-in provider's transport sets the bearer token
			if d.repo {
				if msg := l.checkRoute(d, kctx.Cluster, cluster, builtin); msg != "" {
					return nil, msg
				}
			}
		}
	}
	if msg := l.inlineFiles(d, kctx.Cluster, cluster, kctx.AuthInfo, user); msg != "" {
		return nil, msg
	}
	if builtin != nil && d.repo {
		// The cloud's own API says where the cluster is and what its CA is; the source
		// checks the server and the CA against it before any request (trust.go), also for a
		// server the workflow allows: the list says where a token may go, never which
		// cluster the file may have it signed for. Where the cloud cannot be asked for want
		// of a setting (AKS's subscription), a server the workflow allows or a pinned CA
		// stands in, and without either the cluster is refused, saying what is missing;
		// where it is not asked, the workflow may pin the CA.
		allow, pin := "the allowed-servers input", "the pinned-ca input"
		if l.in.CLI {
			allow, pin = "--allowed-server", "--pinned-ca"
		}
		entry := cloudauth.Entry{Cluster: kctx.Cluster, User: kctx.AuthInfo}
		allowed := l.allowedServer(cluster.Server)
		if allowed {
			entry.ListedIn = allow
		}
		located, err := builtin.RequireEndpoint(entry, cluster.Server, cluster.CertificateAuthorityData)
		switch {
		case err != nil && cloudauth.CannotLocate(err) && len(l.pinned) == 0 && !allowed:
			return nil, fmt.Sprintf("the kubeconfig's cluster %q: %v; or list its server in %s, or pin its CA with %s", kctx.Cluster, err, allow, pin)
		case err != nil && !cloudauth.CannotLocate(err):
			return nil, fmt.Sprintf("the kubeconfig's cluster %q: %v", kctx.Cluster, err)
		}
		if !located {
			if msg := l.pinCA(d, kctx.Cluster, cluster.CertificateAuthorityData, builtin); msg != "" {
				return nil, msg
			}
		}
	}

	one := clientcmdapi.NewConfig()
	one.Clusters[kctx.Cluster] = cluster
	one.AuthInfos[kctx.AuthInfo] = user
	one.Contexts[contextName] = kctx.DeepCopy()
	one.CurrentContext = contextName
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*one, contextName, nil, nil).ClientConfig()
	if err != nil {
		return nil, "the kubeconfig cannot be used: " + err.Error()
	}
	if builtin != nil {
		cfg.WrapTransport = builtin.WrapTransportFor(cluster.Server)
	}
	return cfg, ""
}

// inlineFiles replaces the files the cluster and user refer to by their contents, read with
// Env.ReadFile, and records the secret ones. A file that is not here makes the cluster
// invalid: the kubeconfig must carry the data itself.
func (l *loader) inlineFiles(d *doc, clusterName string, c *clientcmdapi.Cluster, userName string, u *clientcmdapi.AuthInfo) string {
	type fileRef struct {
		owner, field, dataField string
		path                    *string
		data                    *[]byte
		secret                  bool
	}
	refs := []fileRef{
		{fmt.Sprintf("cluster %q", clusterName), "certificate-authority", "certificate-authority-data", &c.CertificateAuthority, &c.CertificateAuthorityData, false},
		{fmt.Sprintf("user %q", userName), "client-certificate", "client-certificate-data", &u.ClientCertificate, &u.ClientCertificateData, false},
		{fmt.Sprintf("user %q", userName), "client-key", "client-key-data", &u.ClientKey, &u.ClientKeyData, true},
	}
	for _, r := range refs {
		path := *r.path
		*r.path = ""
		if path == "" || len(*r.data) > 0 { // the data wins over the file, as in kubectl
			continue
		}
		data, msg := l.readReferenced(d, r.owner, r.field, r.dataField, path)
		if msg != "" {
			return msg
		}
		if r.secret {
			if why := l.secrets.unmaskable(string(data)); why != "" {
				return fmt.Sprintf("the kubeconfig's %s has a %s file that cannot be masked safely: %s; %s", r.owner, r.field, why, maskAdvice)
			}
			l.secrets.add(string(data))
		}
		*r.data = data
	}
	if u.TokenFile == "" {
		return ""
	}
	if u.Token != "" { // the token wins over the file, as in kubectl
		u.TokenFile = ""
		return ""
	}
	data, msg := l.readReferenced(d, fmt.Sprintf("user %q", userName), "tokenFile", "token", u.TokenFile)
	if msg != "" {
		return msg
	}
	u.Token = strings.TrimSpace(string(data))
	if u.Token == "" {
		return fmt.Sprintf("the kubeconfig's user %q has an empty tokenFile %s: put the token in it, or set token: instead", userName, u.TokenFile)
	}
	if why := l.secrets.unmaskable(u.Token); why != "" {
		return fmt.Sprintf("the kubeconfig's user %q has a token in its tokenFile that cannot be masked safely: %s; %s", userName, why, maskAdvice)
	}
	l.secrets.add(u.Token)
	// Kept so that client-go rereads a rotated token; clientcmd does not read it again since
	// the token is set. Not for a repository kubeconfig: its file is read once, where it was
	// checked, and a file of the repository is not rotated.
	u.TokenFile = l.resolve(d.dir, u.TokenFile)
	if d.repo {
		u.TokenFile = ""
	}
	return ""
}

// readReferenced reads a file a kubeconfig refers to, relative to the kubeconfig's folder. A
// repository kubeconfig's file must be in its folder (confine): one that is not is never read.
func (l *loader) readReferenced(d *doc, owner, field, dataField, path string) ([]byte, string) {
	fix := fmt.Sprintf("embed the data instead (%s), e.g. with kubectl config view --minify --flatten --raw, or --embed-certs when setting it", dataField)
	if field == "tokenFile" {
		fix = "put the token itself in the kubeconfig instead (token:)"
	}
	shown, looksSecret := path, hasCredentialRun(path) || strings.ContainsAny(path, "\n\r")
	if looksSecret {
		shown = "(not shown)" // a token pasted where a path belongs: never quote it
	}
	file := l.resolve(d.dir, path)
	if d.repo {
		var refused string
		if file, refused = confine(d.dir, path, file); refused != "" {
			return nil, fmt.Sprintf("the kubeconfig's %s refers to the file %s: %s, which is not read: %s, and a kubeconfig from the repository (%s) may refer "+
				"only to files in its own folder, so that a pull request cannot send another file as a credential: move the file next to the kubeconfig, or %s",
				owner, field, shown, refused, d.origin, fix)
		}
	}
	data, err := l.env.ReadFile(file)
	if err == nil {
		return data, ""
	}
	why := "cannot be read here"
	if errors.Is(err, fs.ErrNotExist) {
		why = "does not exist here"
	}
	if looksSecret {
		why = "looks like a credential rather than a path, and " + why
	}
	return nil, fmt.Sprintf("the kubeconfig's %s refers to the file %s: %s, which %s: %s", owner, field, shown, why, fix)
}

// resolve makes path absolute: relative paths start at dir, ~/ at the home folder.
func (l *loader) resolve(dir, path string) string {
	switch {
	case filepath.IsAbs(path):
		return path
	case strings.HasPrefix(path, "~/") && l.env.Home != "":
		return filepath.Join(l.env.Home, path[2:])
	}
	return filepath.Join(dir, path)
}

// execCredentials decides who serves the user's exec credential plugin. The plugin itself,
// run by client-go, when Env.LookPath finds it (the CLI on a workstation), unless
// Env.BuiltinAuth prefers the built-in provider; a built-in provider (internal/cloudauth)
// when one knows the plugin; else nobody, and the message says why and what to do instead.
// A repository kubeconfig's plugin runs only as repoExecRefused and repoProgramRefused allow;
// in CI a built-in provider serves the plugins it knows, whatever is installed.
func (l *loader) execCredentials(d *doc, userName string, exec *clientcmdapi.ExecConfig) (*cloudauth.Source, string) {
	command := exec.Command
	if command == "" {
		return nil, fmt.Sprintf("the kubeconfig's user %q has an exec credential plugin without a command: %s", userName, tokenAdvice)
	}
	plugin := cloudauth.Recognise(exec)
	// A built-in provider serves a plugin it knows when asked to, and in CI for a repository
	// kubeconfig; otherwise the plugin runs when it is installed.
	builtinFirst := plugin != nil && (l.env.BuiltinAuth || d.repo && l.env.CI)
	run := l.env.LookPath != nil && !builtinFirst
	var refused string
	if d.repo && (run || plugin == nil) {
		refused = l.repoExecRefused(d, userName, exec)
	}
	if run && refused == "" {
		if strings.ContainsRune(command, filepath.Separator) {
			command = l.resolve(d.dir, command)
		}
		if path, err := l.env.LookPath(command); err == nil {
			if d.repo {
				refused = l.repoProgramRefused(d, userName, path)
			}
			if refused == "" {
				// The program found is the one client-go runs: a relative command starts at
				// the kubeconfig's folder, as kubectl has it, not at the working folder.
				exec.Command = command
				return nil, ""
			}
		}
	}
	if plugin != nil {
		opts := l.env.CloudAuth
		opts.Getenv, opts.ReadFile, opts.OnSecret = l.env.Getenv, l.env.ReadFile, l.secrets.Add
		opts.Repository = d.repo
		src, err := plugin.NewSource(opts)
		if err != nil {
			return nil, fmt.Sprintf("the kubeconfig's user %q: %v", userName, err)
		}
		return src, ""
	}
	if refused != "" {
		return nil, refused
	}
	return nil, execProblem(userName, exec, l.env.LookPath != nil)
}

// execProblem says why a plugin no built-in provider knows cannot run here.
func execProblem(userName string, exec *clientcmdapi.ExecConfig, lookPath bool) string {
	where := "which this container does not have"
	if lookPath {
		where = "which is not installed here (not found in PATH)"
	}
	name := filepath.Base(exec.Command)
	what := fmt.Sprintf("%q", name)
	if summary := execSummary(name, exec.Args); summary != name {
		what += " (" + summary + ")"
	}
	return fmt.Sprintf("the kubeconfig's user %q needs the exec credential plugin %s, %s and no built-in provider replaces (see %s): %s (%s)",
		userName, what, where, cloudauth.DocsURL, tokenAdvice, execHint(name, exec.Args))
}

// execSummary is the command and its subcommands ("aws eks get-token"), as far as they are
// the plugins' own words (execWords): an argument that is not one of them, or a flag's value,
// may name an account or be a secret (kubelogin --client-secret VALUE), so it is never shown.
func execSummary(name string, args []string) string {
	words := []string{name}
	skipValue := false
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "-"):
			skipValue = !strings.Contains(a, "=")
			continue
		case skipValue:
			skipValue = false
			continue
		case !execWords[a] || len(words) == 3:
			return strings.Join(words, " ")
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// execHint says how to get a token the plugin would have produced.
func execHint(name string, args []string) string {
	switch name {
	case "aws", "aws-iam-authenticator":
		return "aws eks get-token --cluster-name NAME | jq -r .status.token"
	case "gke-gcloud-auth-plugin", "gcloud":
		return "gcloud auth print-access-token"
	case "kubelogin":
		return "az account get-access-token --resource 6dae42f8-4368-4678-94ff-3960e28e3630 --query accessToken -o tsv"
	case "doctl":
		return "doctl kubernetes cluster kubeconfig exec-credential --version=v1beta1 CLUSTER_ID | jq -r .status.token"
	}
	return execSummary(name, args) + " ... | jq -r .status.token"
}

// authProviderProblem says why an auth-provider user cannot be used: client-go dropped the
// gcp and azure providers, and this tool does not link the oidc one.
func authProviderProblem(userName, provider string) string {
	hint := "a token from your identity provider"
	switch provider {
	case "gcp":
		hint = "gcloud auth print-access-token"
	case "azure":
		hint = "az account get-access-token --resource 6dae42f8-4368-4678-94ff-3960e28e3630 --query accessToken -o tsv"
	case "oidc":
		hint = "the id-token your identity provider issued"
	}
	return fmt.Sprintf("the kubeconfig's user %q needs the auth-provider %q, which this tool does not support: %s (%s)", userName, provider, tokenAdvice, hint)
}
