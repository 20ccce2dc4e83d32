//go:build amd64 || arm64

package core

// CurG identifies the calling goroutine: the address of the runtime's
// record of it, which stays the same while the goroutine lives and is never
// that of another live goroutine (gid_amd64.s, gid_arm64.s). Go gives no
// goroutine identity on purpose; the instance lock needs one for a single
// question, whether the code that panicked holds it (Instance.holder), and
// two instructions answer it on the hot path where runtime.Stack would cost
// microseconds and an allocation. 0 is never an answer.
func CurG() uintptr
