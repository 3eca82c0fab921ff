// Package safefile reads the files a run is pointed at (kubeconfigs, the clusters file,
// certificates, token and credential files) from paths that may come from a repository, so
// from a pull request: only regular files, never one under /proc, /sys or /dev (a symbolic link
// to /proc/self/environ would hand the process's environment to whoever reads the file, one to
// /dev/zero would never end), never a pipe (which blocks until someone writes), and never more
// than a bound.
package safefile

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// MaxBytes is the largest file Read reads: kubeconfigs and credential files are kilobytes.
const MaxBytes = 4 << 20

// ErrNotRegular is wrapped by the error for a path that is not a regular file of its own.
var ErrNotRegular = errors.New("not a regular file")

// specialTrees are the folders whose files are the kernel's views of processes, devices and
// the system, not files anybody wrote.
var specialTrees = []string{"/proc", "/sys", "/dev"}

// Read reads the regular file at name, following symbolic links, and refuses anything else:
// a file under /proc, /sys or /dev (wherever a link points from), a device, a pipe, a socket,
// a folder, or a file of more than MaxBytes. Its errors name the path and say what is wrong;
// a missing file's error wraps fs.ErrNotExist.
func Read(name string) ([]byte, error) {
	return read(name, MaxBytes, "a kubeconfig or credential file")
}

// ReadReport reads a run's report (app-status merge's input) as Read reads any file, up to
// limit bytes: a shard's report of hundreds of clusters is tens of MiB.
func ReadReport(name string, limit int64) ([]byte, error) {
	return read(name, limit, "a report")
}

// read reads the regular file at name, of at most limit bytes; what names what the file is,
// for the error.
func read(name string, limit int64, what string) ([]byte, error) {
	resolved, err := filepath.EvalSymlinks(name)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(resolved); err == nil {
		resolved = abs
	}
	for _, tree := range specialTrees {
		if resolved == tree || strings.HasPrefix(resolved, tree+"/") {
			return nil, fmt.Errorf("read %s: %w: it is the system's %s (%s), which holds no file to read here", name, ErrNotRegular, tree, resolved)
		}
	}
	// Opened without blocking, so that a pipe is refused rather than waited on.
	f, err := os.OpenFile(resolved, os.O_RDONLY|openNonBlocking, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: %w (%s)", name, ErrNotRegular, kind(info.Mode()))
	}
	if info.Size() > limit {
		return nil, &TooLargeError{Name: name, Size: info.Size(), Limit: limit, What: what}
	}
	// Read into room for the size the file has, not into a buffer grown by doubling to it
	// (a report of a large fleet is hundreds of MB).
	buf := bytes.NewBuffer(make([]byte, 0, info.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	data := buf.Bytes()
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Name: name, Size: -1, Limit: limit, What: what}
	}
	return data, nil
}

// TooLargeError is a file larger than a read allows.
type TooLargeError struct {
	Name        string
	Size, Limit int64 // Size -1: it grew past Limit while it was read
	What        string
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("read %s: more than the %d MiB %s may have", e.Name, e.Limit>>20, e.What)
	}
	return fmt.Sprintf("read %s: %d bytes is more than the %d MiB %s may have", e.Name, e.Size, e.Limit>>20, e.What)
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&os.ModeNamedPipe != 0:
		return "a pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// Write writes a report file at name through write, whole or not at all: into a temporary
// file beside it, renamed over name once complete, so a run killed midway (a cancelled job, a
// timeout) leaves the previous file or none, never a cut one that a later step would read.
// (A process killed outright may leave the temporary file, named after name, beside it.) A new
// file gets perm less the umask, as os.WriteFile gives; a file that exists keeps its mode.
// What cannot be replaced is written in place, truncated first, as os.WriteFile would: a name
// that is not a regular file of its own (a device such as /dev/stdout, a pipe, a symbolic
// link, which may lead to one, a file with other names), a file in a folder where no new file
// may be created, and one that cannot be replaced (mounted on its own, another user's in a
// sticky folder); write is then called again, so it must write the whole file each time.
func Write(name string, perm os.FileMode, write func(io.Writer) error) error {
	_, err := writeFile(name, perm, write)
	return err
}

// WriteAndRead is Write, then, when the file was written whole into a file of its own and
// renamed over name, gives read that very file, from its start: reopened, and only if name is
// still the file written (not one put there since). It reports whether read was called; a
// file written in place (a device, a pipe, a symbolic link, a file mounted on its own) is not
// read back, nor is one that could not be written. Where the document must also go to a
// second place (stdout), it is thus encoded once, and is whole in the file before the second
// place is written at all: a reader of stdout that stops early (SIGPIPE) cannot cut the file.
func WriteAndRead(name string, perm os.FileMode, write func(io.Writer) error, read func(io.Reader) error) (bool, error) {
	written, err := writeFile(name, perm, write)
	if err != nil || written == nil {
		return false, err
	}
	// Opened without blocking: a pipe put at name since would otherwise be waited on.
	f, err := os.OpenFile(name, os.O_RDONLY|openNonBlocking, 0)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !os.SameFile(fi, written) {
		return false, nil
	}
	return true, read(f)
}

// ErrLink is wrapped by the error for a file the program names itself found to be a symbolic
// link (Create).
var ErrLink = errors.New("a symbolic link")

// Create writes a file whose path the program chose itself (a default report file in a
// workspace, which a repository's files can occupy) whole or not at all, and always as a new
// file of its own: never through a symbolic link, and never taking over what is there. A link
// at name (committed in a repository, it could lead to any file the job may write) is refused,
// wrapping ErrLink, and so is anything else that is not a regular file (a folder, a pipe, a
// device); the file the link leads to is left as it is. A regular file at name is replaced by
// a new one of perm less the umask: its mode (an executable bit), its owner and its other
// names (hard links) are not kept. A link put at name meanwhile is replaced, not followed.
func Create(name string, perm os.FileMode, write func(io.Writer) error) error {
	if fi, err := os.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("write %s: it is %w, and a report file the program names itself is never written through one (a link in a repository could lead anywhere): remove it, or name the file", name, ErrLink)
		}
		return fmt.Errorf("write %s: %w (%s)", name, ErrNotRegular, kind(fi.Mode()))
	}
	tmp, err := createBeside(name, perm)
	if err != nil {
		return err
	}
	if err := write(tmp); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	// rename(2) replaces the name itself, whatever it is by now: it follows no link.
	if err := os.Rename(tmp.Name(), name); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}

// writeFile is Write; it returns the file written when it was renamed over name (nil when it
// was written in place).
func writeFile(name string, perm os.FileMode, write func(io.Writer) error) (os.FileInfo, error) {
	fi, err := os.Lstat(name)
	exists := err == nil
	if exists && (!fi.Mode().IsRegular() || hardLinked(fi)) {
		return nil, writeInPlace(name, perm, write, os.O_CREATE)
	}
	mode := perm
	if exists {
		mode = fi.Mode().Perm()
	}
	tmp, err := createBeside(name, mode)
	if err != nil {
		if exists && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)) {
			return nil, writeInPlace(name, perm, write, 0)
		}
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return nil, err
	}
	if exists {
		// The umask may have taken bits the file had; its owner (the runner's user, where
		// the step runs as root) keeps it, where this process may give it.
		keepOwner(tmp, fi)
		if err := tmp.Chmod(mode); err != nil {
			return nil, err
		}
	}
	// (nil when it cannot be read: the file is then written, just not read back.)
	written, _ := tmp.Stat()
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	done = true
	if err := os.Rename(tmp.Name(), name); err != nil {
		_ = os.Remove(tmp.Name())
		if errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.EXDEV) || errors.Is(err, fs.ErrPermission) {
			// A file mounted on its own (a bind mount, a subPath), or another user's in a
			// sticky folder: it can be written, not replaced.
			return nil, writeInPlace(name, perm, write, 0)
		}
		return nil, err
	}
	return written, nil
}

// createBeside creates a new file of mode (less the umask) in name's folder, named after it.
func createBeside(name string, mode os.FileMode) (*os.File, error) {
	dir, base := filepath.Dir(name), filepath.Base(name)
	if len(base) > 64 {
		base = strings.ToValidUTF8(base[:64], "") // a name has at most 255 bytes
	}
	for {
		f, err := os.OpenFile(filepath.Join(dir, "."+base+"."+rand.Text()+".tmp"), os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			// Named after the file asked for: the temporary name means nothing to the user.
			err = &fs.PathError{Op: "create", Path: name, Err: pe.Err}
		}
		return f, err
	}
}

// writeInPlace truncates and writes the file at name; create is os.O_CREATE where it may not
// exist yet (a dangling link), 0 where it does (a file of another user in a sticky folder may
// be written, but not opened to be created, under Linux's protected_regular).
func writeInPlace(name string, perm os.FileMode, write func(io.Writer) error, create int) error {
	f, err := os.OpenFile(name, os.O_WRONLY|create|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	err = write(f)
	return errors.Join(err, f.Close())
}
