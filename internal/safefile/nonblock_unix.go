//go:build unix

package safefile

import "syscall"

// openNonBlocking opens a pipe without waiting for a writer.
const openNonBlocking = syscall.O_NONBLOCK
