// Package gid identifies the calling goroutine. Go gives no goroutine
// identity on purpose; the instance lock needs one for a single question,
// whether the code that panicked holds it (core.Instance.HoldsLock), and
// asks it on every lock, where runtime.Stack would cost microseconds and
// an allocation.
//
// The answer stays the same while the goroutine lives and is never that of
// another live goroutine; 0 is never an answer. On amd64 and arm64 it is
// the address of the runtime's record of the goroutine, read from the
// register or thread-local slot the runtime keeps it in; elsewhere the
// number runtime.Stack prints, slower but as exact.
package gid
