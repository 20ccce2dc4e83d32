package core

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// Sending on the extension connection: the relay's own calls and commands,
// waited for or fired, and a client's commands forwarded to their tab.

// push queues the frame of registered call id, waiting for room. When the
// connection has ended it forgets the call and reports false. The fires
// that critical sections released before it go first (outbox).
func (x *ExtConn) push(id int64, buf *[]byte) bool {
	if o := &x.Inst.out; o.pending.Load() != 0 {
		o.flush()
	}
	return x.pushNow(id, buf)
}

// pushNow is push without the outbox: the outbox's own pushes.
func (x *ExtConn) pushNow(id int64, buf *[]byte) bool {
	if x.P.Send(buf) {
		return true
	}
	x.Forget(id)
	return false
}

// Call sends a command of the relay's own and waits for its result.
func (x *ExtConn) Call(ctx context.Context, method string, args ...any) ([]byte, error) {
	return x.CallThen(ctx, nil, method, args...)
}

// callThen is call with then (when non-nil) run on the read loop with a
// successful result. then has run exactly when callThen returns a nil error.
func (x *ExtConn) CallThen(ctx context.Context, then func([]byte), method string, args ...any) ([]byte, error) {
	params, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	done := make(chan callResult, 1)
	id, ok := x.register(PendingCall{Kind: callRelay, done: done, then: then})
	if !ok {
		return nil, ErrExtGone
	}
	buf := link.GetBuf()
	*buf = wire.AppendCall(*buf, id, method, params)
	if !x.push(id, buf) {
		return nil, ErrExtGone
	}
	select {
	case r := <-done:
		return r.result, r.err
	case <-ctx.Done():
		if !x.Forget(id) {
			// The reply (or the end) took the call first and is on its way;
			// its outcome, then included, is the one to report.
			r := <-done
			return r.result, r.err
		}
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	case <-x.P.Done():
		if !x.Forget(id) {
			r := <-done
			return r.result, r.err
		}
		return nil, ErrExtGone
	}
}

// SendCommand sends a CDP command of the relay's own to tab tabID (child
// session sid, "" for the tab's own) and waits for its result.
func (x *ExtConn) SendCommand(ctx context.Context, tabID int64, sid, method string, params any) ([]byte, error) {
	if params == nil {
		return x.Call(ctx, "chrome.debugger.sendCommand", Debuggee(tabID, sid), method)
	}
	return x.Call(ctx, "chrome.debugger.sendCommand", Debuggee(tabID, sid), method, params)
}

// Fire sends a CDP command of the relay's own without waiting for its
// reply: the navigation backstop runs on the extension's read loop, where
// waiting for a reply would deadlock. Waiting for room in the queue does
// not (the writer drains it on its own), and a fence command must never be
// dropped.
func (x *ExtConn) Fire(tabID int64, sid, method string, params any) {
	x.fireThen(tabID, sid, method, params, nil)
}

// fireThen is fire with then (when non-nil) run once the command is over:
// on the read loop when its reply comes, whether it failed or not, or
// when the connection ends. It must not wait for the extension.
func (x *ExtConn) fireThen(tabID int64, sid, method string, params any, then func()) {
	x.sendFire(tabID, sid, method, params, then, false)
}

// sendFire is fireThen; queued says the outbox is pushing it, in its order.
func (x *ExtConn) sendFire(tabID int64, sid, method string, params any, then func(), queued bool) {
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
	pc := PendingCall{Kind: callFire}
	if then != nil {
		pc.then = func([]byte) { then() }
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

// fireCall sends an extension call of the relay's own without waiting for
// its reply.
func (x *ExtConn) FireCall(method string, args ...any) {
	params, err := json.Marshal(args)
	if err != nil {
		return
	}
	id, ok := x.register(PendingCall{Kind: callFire})
	if !ok {
		return
	}
	buf := link.GetBuf()
	*buf = wire.AppendCall(*buf, id, method, params)
	x.push(id, buf)
}

func Debuggee(tabID int64, sid string) map[string]any {
	d := map[string]any{"tabId": tabID}
	if sid != "" {
		d["sessionId"] = sid
	}
	return d
}

// forward sends a client's command to its tab as
// chrome.debugger.sendCommand on session via, with params as given (the
// client's original bytes unless a stage rewrote them). replyTo is the
// session the reply names. It blocks while the extension's queue is full.
func (x *ExtConn) forward(c *ClientConn, id int64, m *MethodInfo, method, params []byte, via, replyTo *Session) error {
	return x.forwardTap(c, id, m, method, params, via, replyTo, nil)
}

// forwardTap is forward with tap (nil: none) reading the successful
// result before the client gets it.
func (x *ExtConn) forwardTap(c *ClientConn, id int64, m *MethodInfo, method, params []byte, via, replyTo *Session, tap func([]byte)) error {
	t := via.Tab
	now := time.Now()
	if m.opens {
		t.LastCommand.Store(now.UnixNano())
	}
	pc := PendingCall{Kind: CallClient, Client: c, ClientID: id, ReplyTo: replyTo, Via: via, TabID: t.Id, Tab: t, epoch: t.blindEpoch.Load(), M: m, Start: now, then: tap}
	if m.Name == "Page.addScriptToEvaluateOnNewDocument" && !InitRunsNothing(params) {
		kept := append([]byte(nil), params...)
		pc.Keep = &kept
	}
	cid, err := x.registerCall(pc)
	if err != nil {
		return err
	}
	var session []byte
	if via.Child {
		session = via.idJSON
	}
	buf := link.GetBuf()
	*buf = wire.AppendSendCommand(*buf, cid, via.Tab.Id, session, method, params)
	if !x.push(cid, buf) {
		return errSendGone
	}
	return nil
}
