package safefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCreate: a file the program names itself is written as a new file of its own. A symbolic
// link at its path, as a repository can commit one (here to an executable), is refused and
// what it leads to is left unchanged; a regular file there, executable, is replaced by a new
// file of the mode asked for; a pipe or a folder is refused.
func TestCreate(t *testing.T) {
	t.Parallel()
	write := func(w io.Writer) error {
		_, err := io.WriteString(w, "# summary\n")
		return err
	}
	dir := t.TempDir()
	executable := filepath.Join(dir, "deploy.sh")
	const script = "#!/bin/sh\necho deploying\n"
	if err := os.WriteFile(executable, []byte(script), 0o755); err != nil { //nolint:gosec // an executable, as a repository holds one
		t.Fatal(err)
	}
	t.Run("a committed link to an executable", func(t *testing.T) {
		t.Parallel()
		link := filepath.Join(dir, "app-status-summary.md")
		if err := os.Symlink("deploy.sh", link); err != nil {
			t.Fatal(err)
		}
		err := Create(link, 0o644, write)
		if !errors.Is(err, ErrLink) || !strings.Contains(err.Error(), "is never written through one") {
			t.Errorf("Create() through a link = %v, want it refused", err)
		}
		data, err := os.ReadFile(executable)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(executable)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != script || fi.Mode().Perm() != 0o755 {
			t.Errorf("the link's target is now %q, mode %v; want it unchanged", data, fi.Mode().Perm())
		}
		if target, err := os.Readlink(link); err != nil || target != "deploy.sh" {
			t.Errorf("the link is now %q (%v), want it left as it was", target, err)
		}
	})
	t.Run("an executable file in its place", func(t *testing.T) {
		t.Parallel()
		name := filepath.Join(dir, "app-status-junit.xml")
		if err := os.WriteFile(name, []byte(script), 0o755); err != nil { //nolint:gosec // an executable, as a repository holds one
			t.Fatal(err)
		}
		if err := os.Chmod(name, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := Create(name, 0o644, write); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(name)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != "# summary\n" || fi.Mode().Perm()&0o111 != 0 || !fi.Mode().IsRegular() {
			t.Errorf("the file holds %q with mode %v, want the summary, not executable", data, fi.Mode())
		}
	})
	t.Run("a pipe or a folder", func(t *testing.T) {
		t.Parallel()
		fifo := filepath.Join(dir, "app-status.env")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Create(fifo, 0o644, write); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Create() on a pipe = %v, want it refused", err)
		}
		if err := Create(t.TempDir(), 0o644, write); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Create() on a folder = %v, want it refused", err)
		}
	})
	t.Run("a failed write leaves nothing", func(t *testing.T) {
		t.Parallel()
		sub := t.TempDir()
		name := filepath.Join(sub, "report.json")
		if err := Create(name, 0o644, func(io.Writer) error { return errors.New("cancelled") }); err == nil {
			t.Fatal("Create() = nil, want the write's error")
		}
		if entries, _ := os.ReadDir(sub); len(entries) != 0 {
			t.Errorf("a failed write left %d files", len(entries))
		}
	})
}
