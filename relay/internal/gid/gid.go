//go:build amd64 || arm64

package gid

// Current is the address of the runtime's record of the calling goroutine
// (gid_amd64.s, gid_arm64.s): two instructions.
func Current() uintptr
