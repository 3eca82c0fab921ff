//go:build unix

package safefile

import (
	"os"
	"syscall"
)

// openNonBlocking opens a pipe without waiting for a writer.
const openNonBlocking = syscall.O_NONBLOCK

// hardLinked reports whether a file has other names, which replacing it would part from it.
func hardLinked(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1
}

// keepOwner gives f the owner of the file it replaces, as far as this process may.
func keepOwner(f *os.File, was os.FileInfo) {
	if st, ok := was.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}
