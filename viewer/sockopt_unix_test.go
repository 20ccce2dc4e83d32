//go:build unix

package viewer

import "syscall"

// setReceiveBuffer sets a socket's receive buffer before it connects.
func setReceiveBuffer(fd uintptr, n int) {
	_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
}
