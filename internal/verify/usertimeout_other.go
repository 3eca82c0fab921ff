//go:build !linux

package verify

import "syscall"

// setUserTimeout does nothing where the kernel cannot be told (TCP_USER_TIMEOUT is Linux's):
// keepalive alone finds a broken connection there.
func setUserTimeout(string, string, syscall.RawConn) error { return nil }
