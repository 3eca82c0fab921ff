package safefile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	regular := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(regular, []byte("apiVersion: v1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, MaxBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, wantErr string
	}{
		{name: "regular file", path: regular},
		{name: "link to a regular file", path: link("ok", regular)},
		{name: "missing", path: filepath.Join(dir, "none"), wantErr: "no such file"},
		{name: "the process's environment", path: "/proc/self/environ", wantErr: "not a regular file: it is the system's /proc"},
		{name: "a link to it", path: link("environ", "/proc/self/environ"), wantErr: "it is the system's /proc"},
		{name: "a link to /dev/zero", path: link("zero", "/dev/zero"), wantErr: "it is the system's /dev"},
		{name: "/dev/stdin", path: "/dev/stdin", wantErr: "not a regular file"},
		{name: "a pipe nobody writes to", path: fifo, wantErr: "not a regular file (a pipe)"},
		{name: "a folder", path: dir, wantErr: "not a regular file (a folder)"},
		{name: "too large", path: big, wantErr: "is more than the 4 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan struct{})
			var data []byte
			var err error
			go func() {
				defer close(done)
				data, err = Read(tt.path)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("Read(%s) blocked", tt.path)
			}
			if tt.wantErr == "" {
				if err != nil || len(data) == 0 {
					t.Fatalf("Read(%s) = %q, %v", tt.path, data, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Read(%s) error = %v, want it to say %q", tt.path, err, tt.wantErr)
			}
			if tt.name == "missing" && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a missing file's error %v does not wrap fs.ErrNotExist", err)
			}
		})
	}
}

// TestReadReport: a report is read up to its own bound, far above a kubeconfig's, with the
// same refusals.
func TestReadReport(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shard-1.json")
	if err := os.WriteFile(path, make([]byte, 5<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); err == nil {
		t.Errorf("a 5 MiB kubeconfig was read")
	}
	if data, err := ReadReport(path, 512<<20); err != nil || len(data) != 5<<20 {
		t.Errorf("a 5 MiB report: %d bytes, %v", len(data), err)
	}
	var tooLarge *TooLargeError
	if _, err := ReadReport(path, 1<<20); !errors.As(err, &tooLarge) || !strings.Contains(err.Error(), "more than the 1 MiB a report may have") {
		t.Errorf("a report above its bound: %v", err)
	}
	if _, err := ReadReport("/proc/self/environ", 512<<20); err == nil {
		t.Errorf("/proc/self/environ read as a report")
	}
}

// TestWrite: a report file is written whole or not at all: a write that fails midway (a run
// killed while writing) leaves the previous file and no temporary one; a device or a link is
// written in place.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "report.json")
	write := func(text string, fail bool) error {
		return Write(name, 0o644, func(w io.Writer) error {
			if _, err := io.WriteString(w, text); err != nil {
				return err
			}
			if fail {
				return errors.New("killed midway")
			}
			return nil
		})
	}
	entries := func() []string {
		var names []string
		list, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list {
			names = append(names, e.Name())
		}
		return names
	}
	if err := write("first", false); err != nil {
		t.Fatal(err)
	}
	if err := write("second, cut", true); err == nil || !strings.Contains(err.Error(), "killed midway") {
		t.Fatalf("Write() = %v, want the writer's error", err)
	}
	if b, err := os.ReadFile(name); err != nil || string(b) != "first" {
		t.Errorf("after a failed write the file holds %q (%v), want the previous one whole", b, err)
	}
	if got := entries(); len(got) != 1 {
		t.Errorf("the folder holds %q, want only the report (no temporary file left)", got)
	}
	if err := write("third", false); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(name)
	if b, _ := os.ReadFile(name); err != nil || string(b) != "third" || fi.Mode().Perm() != 0o644 {
		t.Errorf("the file holds %q with mode %v, want \"third\" with 0644", b, fi.Mode())
	}

	// A symbolic link (as /dev/stdout is one) is written through, not replaced.
	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("the link's target holds %q, want \"new\"", b)
	}
	// A dangling link's target is created, as os.WriteFile would.
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "created"), dangling); err != nil {
		t.Fatal(err)
	}
	if err := Write(dangling, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, "made"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "created")); string(b) != "made" {
		t.Errorf("the dangling link's target holds %q, want \"made\"", b)
	}
	// A device is written in place.
	if err := Write(os.DevNull, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Errorf("Write(%s) = %v", os.DevNull, err)
	}
	// A folder that does not exist is an error naming the file asked for, not a temporary one.
	missing := filepath.Join(dir, "missing", "r.json")
	if err := Write(missing, 0o644, func(io.Writer) error { return nil }); err == nil || !strings.Contains(err.Error(), "missing") ||
		!strings.Contains(err.Error(), missing+":") || strings.Contains(err.Error(), ".tmp") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Write() in a missing folder = %v, want an error naming %s that wraps fs.ErrNotExist", err, missing)
	}
}

// TestWriteModesAndPlaces: a new file gets the mode os.WriteFile gives it (the umask applies), a
// file that exists keeps its own, and a name without a folder is written in the working folder
// (its temporary file too: not in /tmp, which a scratch image lacks and which may be another
// file system).
func TestWriteModesAndPlaces(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	// As in a scratch image: no temporary folder.
	t.Setenv("TMPDIR", filepath.Join(dir, "no-such-folder"))
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := os.WriteFile("reference", nil, 0o666); err != nil {
		t.Fatal(err)
	}
	reference, err := os.Stat("reference")
	if err != nil {
		t.Fatal(err)
	}
	if err := Write("app-status.env", 0o666, text("a=b\n")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "app-status.env"))
	if err != nil {
		t.Fatalf("the bare name was not written in the working folder: %v", err)
	}
	if fi.Mode().Perm() != reference.Mode().Perm() {
		t.Errorf("new file mode %v, want %v as os.WriteFile gives", fi.Mode().Perm(), reference.Mode().Perm())
	}
	if err := os.Chmod("app-status.env", 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write("app-status.env", 0o644, text("c=d\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat("app-status.env"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("an existing 0600 file became %v (%v), want it kept 0600", fi.Mode().Perm(), err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("the folder holds %d entries, want the reference and the report only", len(entries))
	}
}

// TestWriteKeepsLinksAndOwner: a file with another name is written in place, so both names
// read the new report; a file replaced keeps its owner (the runner's user, when the step runs
// as root).
func TestWriteKeepsLinksAndOwner(t *testing.T) {
	dir := t.TempDir()
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	name, other := filepath.Join(dir, "report.json"), filepath.Join(dir, "other-name.json")
	if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(name, other); err != nil {
		t.Fatal(err)
	}
	if err := Write(name, 0o644, text("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(other); string(b) != "new" {
		t.Errorf("the other name reads %q, want \"new\": the link was broken", b)
	}

	if os.Geteuid() != 0 {
		t.Log("not root: a file of another owner cannot be made to check that it is kept")
		return
	}
	owned := filepath.Join(dir, "owned.json")
	if err := os.WriteFile(owned, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(owned, 1001, 127); err != nil {
		t.Fatal(err)
	}
	if err := Write(owned, 0o644, text("new")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(owned)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 1001 || st.Gid != 127 {
		t.Errorf("owner %d:%d, want 1001:127 kept", st.Uid, st.Gid)
	}
}

// TestWriteAndRead: a file written whole and renamed into place is given back to read, the
// very bytes written; one written in place (a symbolic link, a device) or not written is not.
func TestWriteAndRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	regular := filepath.Join(dir, "report.json")
	target, link := filepath.Join(dir, "target.json"), filepath.Join(dir, "link.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		wantRead   bool
		wantErr    bool
	}{
		{name: "new regular file", path: regular, wantRead: true},
		{name: "existing regular file", path: regular, wantRead: true},
		{name: "symbolic link", path: link},
		{name: "device", path: os.DevNull},
		{name: "missing folder", path: filepath.Join(dir, "missing", "report.json"), wantErr: true},
	} {
		var got bytes.Buffer
		read, err := WriteAndRead(tt.path, 0o644, func(w io.Writer) error {
			_, err := io.WriteString(w, "the document "+tt.name)
			return err
		}, func(r io.Reader) error {
			_, err := io.Copy(&got, r)
			return err
		})
		if (err != nil) != tt.wantErr || read != tt.wantRead {
			t.Errorf("%s: WriteAndRead() = %v, %v; want read %v, error %v", tt.name, read, err, tt.wantRead, tt.wantErr)
		}
		if want := map[bool]string{true: "the document " + tt.name}[tt.wantRead]; got.String() != want {
			t.Errorf("%s: read %q, want %q", tt.name, got.String(), want)
		}
	}
	if data, err := os.ReadFile(target); err != nil || string(data) != "the document symbolic link" {
		t.Errorf("the link's target holds %q (%v), want the document written through it", data, err)
	}
}
