package viewer

import "syscall"

// setReceiveBuffer sets a socket's receive buffer before it connects.
func setReceiveBuffer(fd uintptr, n int) {
	_ = syscall.SetsockoptInt(syscall.Handle(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
}
