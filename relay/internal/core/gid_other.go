//go:build !amd64 && !arm64

package core

import "runtime"

// curG identifies the calling goroutine by the number runtime.Stack
// prints (gid.go says why). Slower than the two instructions of amd64 and
// arm64, but as exact; 0 is never an answer.
func curG() uintptr {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	const prefix = "goroutine "
	var id uintptr
	for _, c := range b[len(prefix):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uintptr(c-'0')
	}
	return id
}
