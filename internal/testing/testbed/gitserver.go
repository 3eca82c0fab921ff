package testbed

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// GitServer serves Git repositories over smart HTTP on 127.0.0.1, with git's own
// http-backend behind a CGI handler: the protocol source-controller speaks to a Git host.
// A repository is created on its first commit, with the branch main.
type GitServer struct {
	// Host is host:port.
	Host string

	git    string // the git binary
	root   string // GIT_PROJECT_ROOT: one bare repository per name, NAME.git
	server *http.Server
	mu     sync.Mutex // one commit at a time
}

func startGitServer(workdir string) (*GitServer, error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("testbed: the Git server needs git (its http-backend serves the repositories): install git: %w", err)
	}
	out, err := exec.Command(git, "--exec-path").Output()
	if err != nil {
		return nil, fmt.Errorf("testbed: git --exec-path: %w", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		return nil, fmt.Errorf("testbed: the Git server needs git-http-backend, part of git: %w", err)
	}
	root := filepath.Join(workdir, "git")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("testbed: git server: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testbed: git server: %w", err)
	}
	handler := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	g := &GitServer{Host: l.Addr().String(), git: git, root: root,
		server: &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = g.server.Serve(l) }()
	return g, nil
}

// Close stops the server.
func (g *GitServer) Close() { _ = g.server.Close() }

// URL is the clone URL of the repository name.
func (g *GitServer) URL(name string) string { return "http://" + g.Host + "/" + name + ".git" }

// Commit makes the branch main of the repository name hold exactly tree (a folder of the
// repository, e.g. "apps/web", to the local folder whose files it holds), as one new commit,
// and returns the commit's SHA. The repository is created on its first commit.
func (g *GitServer) Commit(ctx context.Context, name string, tree map[string]string, message string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	bare := filepath.Join(g.root, name+".git")
	if _, err := os.Stat(bare); os.IsNotExist(err) {
		if _, err := g.run(ctx, "", "init", "--quiet", "--bare", "--initial-branch=main", bare); err != nil {
			return "", err
		}
	}
	work, err := os.MkdirTemp("", "testbed-git-")
	if err != nil {
		return "", fmt.Errorf("testbed: git work tree: %w", err)
	}
	defer os.RemoveAll(work)
	for to, from := range tree {
		if err := os.CopyFS(filepath.Join(work, filepath.FromSlash(to)), os.DirFS(from)); err != nil {
			return "", fmt.Errorf("testbed: git work tree: copy %s: %w", from, err)
		}
	}
	gitIn := []string{"--git-dir=" + bare, "--work-tree=" + work}
	for _, args := range [][]string{
		{"read-tree", "--empty"}, // the commit holds tree alone, whatever the last one held
		{"add", "--all", "."},
		{"commit", "--quiet", "--allow-empty", "--message", message},
	} {
		if _, err := g.run(ctx, work, append(gitIn, args...)...); err != nil {
			return "", err
		}
	}
	sha, err := g.run(ctx, work, append(gitIn, "rev-parse", "HEAD")...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(sha), nil
}

func (g *GitServer) run(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, g.git, args...)
	cmd.Dir = dir
	// A commit of its own, whatever the machine's git configuration says.
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=test bed", "GIT_AUTHOR_EMAIL=bed@example.invalid",
		"GIT_COMMITTER_NAME=test bed", "GIT_COMMITTER_EMAIL=bed@example.invalid")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("testbed: git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// GitRepository renders a GitRepository the real source-controller clones from the server:
// the branch main of the repository repo, every interval.
func (g *GitServer) GitRepository(name, repo, interval string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "source.toolkit.fluxcd.io/v1",
		"kind":       "GitRepository",
		"metadata":   map[string]any{"name": name, "namespace": "flux-system"},
		"spec": map[string]any{
			"interval": interval,
			"url":      g.URL(repo),
			"ref":      map[string]any{"branch": "main"},
		},
	}}
}
