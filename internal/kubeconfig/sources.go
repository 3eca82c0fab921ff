package kubeconfig

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// envDoc reads the kubeconfig of an env: source; an empty variable is an error that
// quotes the line and says how to map the secret.
func (l *loader) envDoc(e entry, origin string) (*doc, error) {
	value := l.env.Getenv(e.ref)
	if strings.TrimSpace(value) == "" {
		hint := fmt.Sprintf("map the secret in the step's env: (env: %s: ${{ secrets.%s }})", e.ref, e.ref)
		if l.in.CLI {
			hint = fmt.Sprintf("export %s (a kubeconfig, plain or base64) before running the command", e.ref)
		}
		return nil, fmt.Errorf("%s: environment variable %s is empty or not set; %s", lineRef(origin, e), e.ref, hint)
	}
	d, err := l.cached(e.source(), func() (*doc, error) {
		return l.decodeDoc([]byte(value), e.source(), l.env.Workspace)
	})
	if err != nil {
		return nil, fmt.Errorf("%s line %d: %s: %w", origin, e.line, e.source(), err)
	}
	return d, nil
}

// fileDoc reads the kubeconfig of a file: source; its relative paths start at its folder.
func (l *loader) fileDoc(e entry, dir string) (*doc, error) {
	path := l.resolve(dir, e.ref)
	return l.cached("file:"+path, func() (*doc, error) {
		data, err := l.env.ReadFile(path)
		if err != nil {
			where := "the workspace, GITHUB_WORKSPACE; is the repository checked out?"
			switch {
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

// kubeconfigPath is --kubeconfig, else $KUBECONFIG's first file, else ~/.kube/config, and
// how it was chosen, for messages.
func (l *loader) kubeconfigPath() (path, how string, err error) {
	if l.in.KubeconfigPath != "" {
		return l.resolve(l.env.Workspace, l.in.KubeconfigPath), "--kubeconfig", nil
	}
	for _, p := range filepath.SplitList(l.env.Getenv("KUBECONFIG")) {
		if p != "" {
			return l.resolve(l.env.Workspace, p), "the first file of KUBECONFIG; pass --kubeconfig to use another", nil
		}
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
