package gid

import "runtime"

// fromStack identifies the calling goroutine by the number runtime.Stack
// prints: Current's answer where no register holds the goroutine's record
// (gid_other.go), and tested everywhere.
func fromStack() uintptr {
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
