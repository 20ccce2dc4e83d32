package relay

import (
	"runtime/debug"
	"sync"

	"github.com/gorilla/websocket"
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

// spawn runs fn on its own goroutine; name says what it is, for the log.
func (ts *tasks) spawn(name string, fn func()) {
	ts.wg.Add(1)
	go func() {
		defer ts.wg.Done()
		defer ts.in.recoverPanic(name)
		fn()
	}()
}

// wait waits for every task.
func (ts *tasks) wait() { ts.wg.Wait() }

// msgInternal is the close reason of the sockets of an instance whose code
// panicked.
const msgInternal = "cdprelay: internal error (see the relay's log)"

// recoverPanic, deferred at the top of an instance's goroutine, turns a
// panic into the end of that instance's sockets.
func (in *Instance) recoverPanic(where string) {
	if r := recover(); r != nil {
		in.panicked(where, r)
	}
}

// panicked reports and contains a recovered panic.
func (in *Instance) panicked(where string, r any) {
	in.log.Error("panic; closing this instance's connections", "in", where, "panic", r, "stack", string(debug.Stack()))
	in.srv.cfg.Metrics.panics.Inc()
	in.closeSockets(websocket.CloseInternalServerErr, msgInternal)
}

// closeSockets closes the instance's client and extension sockets with a
// reason, leaving the instance itself in place: the extension reconnects
// to it, and so may a client.
func (in *Instance) closeSockets(code int, reason string) {
	st := in.lock()
	x, c := st.ext, st.client
	in.unlock()
	if c != nil {
		c.close(code, reason)
	}
	if x != nil {
		x.p.shutdown(code, reason)
	}
}
