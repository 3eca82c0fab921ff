package testbed

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGitServer: a commit is served over smart HTTP, and the next commit holds its tree alone.
func TestGitServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g, err := startGitServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	write := func(dir, name, text string) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	first, err := g.Commit(ctx, "app", map[string]string{
		"apps/web": write(t.TempDir(), "a.yaml", "a: 1\n"),
		"charts/x": write(t.TempDir(), "Chart.yaml", "name: x\n"),
	}, "first")
	if err != nil {
		t.Fatal(err)
	}
	second, err := g.Commit(ctx, "app", map[string]string{"apps/web": write(t.TempDir(), "b.yaml", "b: 2\n")}, "second")
	if err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.CommandContext(ctx, g.git, "clone", "--quiet", "--branch", "main", g.URL("app"), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone %s: %v: %s", g.URL("app"), err, out)
	}
	head, err := g.run(ctx, clone, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	files, err := g.run(ctx, clone, "ls-files")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(head) != second || second == first || len(second) != 40 {
		t.Errorf("clone's HEAD %q, want the second commit %q (first %q)", strings.TrimSpace(head), second, first)
	}
	if strings.TrimSpace(files) != "apps/web/b.yaml" {
		t.Errorf("the second commit holds %q, want apps/web/b.yaml alone", files)
	}
}
