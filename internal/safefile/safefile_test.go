package safefile

import (
	"errors"
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
	if _, err := ReadReport(path, 1<<20); err == nil || !strings.Contains(err.Error(), "more than the 1 MiB a report may have") {
		t.Errorf("a report above its bound: %v", err)
	}
	if _, err := ReadReport("/proc/self/environ", 512<<20); err == nil {
		t.Errorf("/proc/self/environ read as a report")
	}
}
