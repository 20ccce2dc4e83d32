package core

import (
	"runtime/debug"
	"sync"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/relay/internal/gid"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// tasks is an instance's background work. Every goroutine an instance
// starts (an attach, an emulated command that waits for the extension, the
// handshake) starts through spawn, which tracks it, so that Server.Close
// waits for it, and recovers a panic in it: the panic is logged once with
// its stack, counted (cdprelay_relay_panics_total), and ends this
// instance's sockets with a reason. Another person's instance carries on.
type tasks struct {
	in *Instance // static
	wg sync.WaitGroup
}

func (ts *tasks) init(in *Instance) { ts.in = in }

// Spawn runs fn on its own goroutine; name says what it is, for the log.
func (ts *tasks) Spawn(name string, fn func()) {
	ts.wg.Add(1)
	go func() {
		defer ts.wg.Done()
		defer ts.in.recoverPanic(name)
		fn()
	}()
}

// Wait waits for every task.
func (ts *tasks) Wait() { ts.wg.Wait() }

// msgInternal is the close reason of the sockets of an instance whose code
// panicked (the writer of a socket says the same when it panics).
const msgInternal = link.ReasonInternal

// recoverPanic, deferred at the top of an instance's goroutine, turns a
// panic into the end of that instance's sockets.
func (in *Instance) recoverPanic(where string) {
	if r := recover(); r != nil {
		in.Panicked(where, r)
	}
}

// Panicked reports and contains a recovered panic.
//
// Code that panics while it holds the instance's lock leaves it held: the
// instance's state may be half changed, and nothing may use it again. Then
// the instance is wedged: its sockets are closed, it is out of the
// server's lists, and what asks it anything is refused at once rather than
// left waiting (a restart brings its guid back). Other instances go on.
//
// Whether this goroutine holds the lock is known, not guessed: lock
// records its holder and unlock clears it (Instance.holder), and the
// recovery runs on the panicking goroutine, whose stack is still the
// panic's. A deferred unlock that ran as the panic unwound has released
// it. When another goroutine holds the lock it is waited for: no critical
// section waits for anything (the extension's commands go out after the
// release, package outbox). A holder whose panic was recovered elsewhere (an
// HTTP handler's, by net/http) keeps it for good, and this waits with
// every other lock.
func (in *Instance) Panicked(where string, r any) {
	in.Log.Error("panic; closing this instance's connections", "in", where, "panic", r, "stack", string(debug.Stack()))
	in.Srv.Cfg.Metrics.Panics.Inc()
	if !in.HoldsLock() {
		in.closeSockets(websocket.CloseInternalServerErr, msgInternal)
		return
	}
	in.Wedged.Store(true)
	in.Log.Error("the panic left this instance unusable; restart the relay to use it again")
	// The lock is this goroutine's (the panicking code took it): the state
	// is ours to read.
	x, c := in.St.Ext, in.St.Client
	if c != nil {
		c.Close(websocket.CloseInternalServerErr, msgInternal)
	}
	if x != nil {
		x.Shutdown(websocket.CloseInternalServerErr, msgInternal)
	}
}

// HoldsLock reports whether the calling goroutine holds the instance's
// lock.
func (in *Instance) HoldsLock() bool { return in.holder.Load() == gid.Current() }

// closeSockets closes the instance's client and extension sockets with a
// reason, leaving the instance itself in place: the extension reconnects
// to it, and so may a client.
func (in *Instance) closeSockets(code int, reason string) {
	st := in.Lock()
	x, c := st.Ext, st.Client
	in.Unlock()
	if c != nil {
		c.Close(code, reason)
	}
	if x != nil {
		x.Shutdown(code, reason)
	}
}
