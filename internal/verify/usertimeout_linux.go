package verify

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// setUserTimeout is a net.Dialer's Control: a TCP connection whose sent data stays
// unacknowledged for userTimeout is closed by the kernel (TCP_USER_TIMEOUT), where it would
// otherwise retransmit for up to 15 minutes. Best effort, as Go's own keepalive settings: a
// kernel or sandbox without the option still gets its connection.
func setUserTimeout(network, _ string, c syscall.RawConn) error {
	if network != "tcp" && network != "tcp4" && network != "tcp6" {
		return nil
	}
	_ = c.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(userTimeout.Milliseconds()))
	})
	return nil
}
