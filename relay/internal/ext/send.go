package ext

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// Sending on the extension connection: the relay's own calls and commands,
// waited for or fired, and a client's commands forwarded to their tab.

// push queues the frame of registered call id, waiting for room. When the
// connection has ended it forgets the call and reports false. The fires
// that critical sections released before it go first (the core's outbox).
func (x *Conn) push(id int64, buf *[]byte) bool {
	x.Inst.FlushOutbox()
	return x.pushNow(id, buf)
}

// pushNow is push without the outbox: the outbox's own pushes.
func (x *Conn) pushNow(id int64, buf *[]byte) bool {
	if x.P.Send(buf) {
		return true
	}
	x.Forget(id)
	return false
}

// Call sends a command of the relay's own and waits for its result.
func (x *Conn) Call(ctx context.Context, method string, args ...any) ([]byte, error) {
	return x.CallThen(ctx, nil, method, args...)
}

// CallThen is Call with then (when non-nil) run on the read loop with a
// successful result. then has run exactly when CallThen returns a nil
// error.
func (x *Conn) CallThen(ctx context.Context, then func([]byte), method string, args ...any) ([]byte, error) {
	params, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	done := make(chan core.CallResult, 1)
	id, ok := x.register(core.PendingCall{Kind: core.CallRelay, Done: done, Then: then})
	if !ok {
		return nil, core.ErrExtGone
	}
	buf := link.GetBuf()
	*buf = wire.AppendCall(*buf, id, method, params)
	if !x.push(id, buf) {
		return nil, core.ErrExtGone
	}
	select {
	case r := <-done:
		return r.Result, r.Err
	case <-ctx.Done():
		if !x.Forget(id) {
			// The reply (or the end) took the call first and is on its way;
			// its outcome, then included, is the one to report.
			r := <-done
			return r.Result, r.Err
		}
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	case <-x.P.Done():
		if !x.Forget(id) {
			r := <-done
			return r.Result, r.Err
		}
		return nil, core.ErrExtGone
	}
}

// SendCommand sends a CDP command of the relay's own to tab tabID (child
// session sid, "" for the tab's own) and waits for its result.
func (x *Conn) SendCommand(ctx context.Context, tabID int64, sid, method string, params any) ([]byte, error) {
	if params == nil {
		return x.Call(ctx, "chrome.debugger.sendCommand", cdp.Debuggee(tabID, sid), method)
	}
	return x.Call(ctx, "chrome.debugger.sendCommand", cdp.Debuggee(tabID, sid), method, params)
}

// Fire sends a CDP command of the relay's own without waiting for its
// reply: what an event decides runs on the extension's read loop, where
// waiting for a reply would deadlock. Waiting for room in the queue does
// not (the writer drains it on its own), and a fence command must never be
// dropped.
func (x *Conn) Fire(tabID int64, sid, method string, params any) {
	x.sendFire(tabID, sid, method, params, nil, false)
}

// FireQueued is Fire with then (when non-nil) run once the command is
// over: on the read loop when its reply comes, whether it failed or not,
// or when the connection ends. It is the outbox's push, in its order: it
// does not flush the outbox first.
func (x *Conn) FireQueued(tabID int64, sid, method string, params any, then func()) {
	x.sendFire(tabID, sid, method, params, then, true)
}

// sendFire is Fire with then; queued says the outbox is pushing it.
func (x *Conn) sendFire(tabID int64, sid, method string, params any, then func(), queued bool) {
	var p []byte
	if params != nil {
		var err error
		if p, err = json.Marshal(params); err != nil {
			if then != nil {
				x.Inst.Tasks.Spawn("relay command over", then)
			}
			return
		}
	}
	pc := core.PendingCall{Kind: core.CallFire}
	if then != nil {
		pc.Then = func([]byte) { then() }
	}
	id, ok := x.register(pc)
	if !ok {
		if then != nil {
			// The caller may hold the instance's lock, or the outbox's:
			// not on its stack.
			x.Inst.Tasks.Spawn("relay command over", then)
		}
		return
	}
	var session []byte
	if sid != "" {
		session = wire.AppendString(nil, sid)
	}
	buf := link.GetBuf()
	*buf = wire.AppendSendCommand(*buf, id, tabID, session, method, p)
	if queued {
		x.pushNow(id, buf)
		return
	}
	x.push(id, buf)
}

// FireCall sends an extension call of the relay's own without waiting for
// its reply.
func (x *Conn) FireCall(method string, args ...any) {
	params, err := json.Marshal(args)
	if err != nil {
		return
	}
	id, ok := x.register(core.PendingCall{Kind: core.CallFire})
	if !ok {
		return
	}
	buf := link.GetBuf()
	*buf = wire.AppendCall(*buf, id, method, params)
	x.push(id, buf)
}

// Forward sends a client's command to its tab as
// chrome.debugger.sendCommand on session via, with params as given (the
// client's original bytes unless a stage rewrote them). replyTo is the
// session the reply names; tap (nil: none) reads the successful result
// before the client gets it. It blocks while the extension's queue is
// full.
func (x *Conn) Forward(c *core.ClientConn, id int64, m *core.MethodInfo, method, params []byte, via, replyTo *core.Session, tap func([]byte)) error {
	cid, err := x.registerCall(core.NewClientCall(c, id, m, params, via, replyTo, tap))
	if err != nil {
		return err
	}
	var session []byte
	if via.Child {
		session = core.SessionToken(via)
	}
	buf := link.GetBuf()
	*buf = wire.AppendSendCommand(*buf, cid, via.Tab.Id, session, method, params)
	if !x.push(cid, buf) {
		return core.ErrSendGone
	}
	return nil
}
