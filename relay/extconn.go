package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

const (
	// extPingPeriod keeps a path with idle NAT or proxies open and lets the
	// read deadline notice a vanished extension.
	extPingPeriod = 20 * time.Second
	// extReadTimeout: the extension sends a keepalive every 20 s and
	// answers pings, so this much silence means it is gone.
	extReadTimeout = 75 * time.Second
	// extQueue bounds commands queued for the extension; senders wait for
	// room, which slows the client that sends them and nobody else.
	extQueue = 1024
)

// errExtGone is the error of calls that were pending when the extension
// connection ended.
var errExtGone = errors.New("extension disconnected")

// extConn is the relay side of one extension WebSocket (protocol v2,
// docs/EXTENSION-PROTOCOL.md).
type extConn struct {
	inst *Instance    // static
	p    *link.Peer   // static
	log  *slog.Logger // static

	mu      sync.Mutex // guards nextID, pending and gone
	nextID  int64
	pending map[int64]pendingCall
	gone    bool // the connection ended; no new calls
	// over mirrors gone for readers that must not take mu.
	over atomic.Bool

	ready chan struct{} // closed on extension.initialized, once learnt what the relay needs

	// rd is the read loop (extread.go); it knows whether batches are on.
	// Set by serve, then owned by the read loop.
	rd link.ExtReader
	// ev is the event the read loop routes (events.go), rep the reply
	// (replies.go). Owned by the read loop.
	ev  event
	rep reply
}

// callKind says who waits for a call's reply.
type callKind uint8

const (
	callClient callKind = iota // a client's command: the reply goes to the client
	callRelay                  // the relay's own: the reply goes to done
	callFire                   // the relay's own, and nobody waits
)

// pendingCall is a command sent to the extension and waiting for its reply.
type pendingCall struct {
	kind callKind

	// callClient.
	client   *clientConn
	clientID int64
	replyTo  *session // the session the reply names; nil for the root
	via      *session // the session that carried it; nil for the relay's own
	tabID    int64
	tab      *tab        // via's tab
	epoch    uint32      // the tab's blind epoch when it was forwarded
	m        *methodInfo // the command's method
	start    time.Time   // when it was forwarded

	// callRelay.
	done chan callResult
	// then runs on the read loop with a successful result before the next
	// message is read, so that what it sends the client precedes whatever
	// that message causes. A client command may have one too, which reads
	// the result before the client gets it (resume.go).
	then func(result []byte)

	// keep: a client's Page.addScriptToEvaluateOnNewDocument under tiers,
	// its params (initscripts.go). A pointer: the pending map keeps its
	// values inline only while they are small.
	keep *[]byte
}

type callResult struct {
	result []byte
	err    error
}

// ExtError is an error reply from the extension. Chrome's CDP errors come
// through as their code and message.
type ExtError struct {
	Code    int64
	Message string
}

func (e *ExtError) Error() string { return e.Message }

func newExtConn(inst *Instance, conn *websocket.Conn, log *slog.Logger) *extConn {
	return &extConn{
		inst:    inst,
		p:       link.NewPeer(conn, extQueue, inst.srv.cfg.ClientQueueBytes),
		log:     log,
		pending: make(map[int64]pendingCall),
		ready:   make(chan struct{}),
	}
}

// register records pc under a fresh id. It reports false once the
// connection has ended. Every call to the extension goes through register
// and then push.
func (x *extConn) register(pc pendingCall) (int64, bool) {
	id, err := x.registerCall(pc)
	return id, err == nil
}

// Why the extension connection did not take a call.
var (
	errSendGone    = errors.New("the extension connection has ended")
	errSendStopped = errors.New(msgStopped)
)

// registerCall is register, saying why not. A client's command is not
// taken while a person has stopped the automation: Stop sets the flag
// before it fails the pending calls under x.mu, so a command the
// pipeline let through just before a Stop is either failed by it or
// refused here.
func (x *extConn) registerCall(pc pendingCall) (int64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.gone {
		return 0, errSendGone
	}
	if pc.kind == callClient && x.inst.stopped.Load() {
		return 0, errSendStopped
	}
	x.nextID++
	x.pending[x.nextID] = pc
	if pc.kind == callClient {
		pc.client.inflight.Add(1)
	}
	return x.nextID, nil
}

// push queues the frame of registered call id, waiting for room. When the
// connection has ended it forgets the call and reports false. The fires
// that critical sections released before it go first (outbox).
func (x *extConn) push(id int64, buf *[]byte) bool {
	if o := &x.inst.out; o.pending.Load() != 0 {
		o.flush()
	}
	return x.pushNow(id, buf)
}

// pushNow is push without the outbox: the outbox's own pushes.
func (x *extConn) pushNow(id int64, buf *[]byte) bool {
	if x.p.Send(buf) {
		return true
	}
	x.forget(id)
	return false
}

// forget drops the call waiting for id. It reports false when the call was
// no longer pending: its result has been or is being delivered.
func (x *extConn) forget(id int64) bool {
	pc, ok := x.takePending(id)
	if ok && pc.kind == callClient {
		pc.client.inflight.Add(-1)
	}
	return ok
}

// takePending removes and returns the call waiting for id.
func (x *extConn) takePending(id int64) (pendingCall, bool) {
	x.mu.Lock()
	pc, ok := x.pending[id]
	if ok {
		delete(x.pending, id)
	}
	x.mu.Unlock()
	return pc, ok
}

// call sends a command of the relay's own and waits for its result.
func (x *extConn) call(ctx context.Context, method string, args ...any) ([]byte, error) {
	return x.callThen(ctx, nil, method, args...)
}

// callThen is call with then (when non-nil) run on the read loop with a
// successful result. then has run exactly when callThen returns a nil error.
func (x *extConn) callThen(ctx context.Context, then func([]byte), method string, args ...any) ([]byte, error) {
	params, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	done := make(chan callResult, 1)
	id, ok := x.register(pendingCall{kind: callRelay, done: done, then: then})
	if !ok {
		return nil, errExtGone
	}
	buf := link.GetBuf()
	*buf = wire.AppendCall(*buf, id, method, params)
	if !x.push(id, buf) {
		return nil, errExtGone
	}
	select {
	case r := <-done:
		return r.result, r.err
	case <-ctx.Done():
		if !x.forget(id) {
			// The reply (or the end) took the call first and is on its way;
			// its outcome, then included, is the one to report.
			r := <-done
			return r.result, r.err
		}
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	case <-x.p.Done():
		if !x.forget(id) {
			r := <-done
			return r.result, r.err
		}
		return nil, errExtGone
	}
}

// sendCommand sends a CDP command of the relay's own to tab tabID (child
// session sid, "" for the tab's own) and waits for its result.
func (x *extConn) sendCommand(ctx context.Context, tabID int64, sid, method string, params any) ([]byte, error) {
	if params == nil {
		return x.call(ctx, "chrome.debugger.sendCommand", debuggee(tabID, sid), method)
	}
	return x.call(ctx, "chrome.debugger.sendCommand", debuggee(tabID, sid), method, params)
}

// fire sends a CDP command of the relay's own without waiting for its
// reply: the navigation backstop runs on the extension's read loop, where
// waiting for a reply would deadlock. Waiting for room in the queue does
// not (the writer drains it on its own), and a fence command must never be
// dropped.
func (x *extConn) fire(tabID int64, sid, method string, params any) {
	x.fireThen(tabID, sid, method, params, nil)
}

// fireThen is fire with then (when non-nil) run once the command is over:
// on the read loop when its reply comes, whether it failed or not, or
// when the connection ends. It must not wait for the extension.
func (x *extConn) fireThen(tabID int64, sid, method string, params any, then func()) {
	x.sendFire(tabID, sid, method, params, then, false)
}

// sendFire is fireThen; queued says the outbox is pushing it, in its order.
func (x *extConn) sendFire(tabID int64, sid, method string, params any, then func(), queued bool) {
	var p []byte
	if params != nil {
		var err error
		if p, err = json.Marshal(params); err != nil {
			if then != nil {
				x.inst.tasks.spawn("relay command over", then)
			}
			return
		}
	}
	pc := pendingCall{kind: callFire}
	if then != nil {
		pc.then = func([]byte) { then() }
	}
	id, ok := x.register(pc)
	if !ok {
		if then != nil {
			// The caller may hold the instance's lock, or the outbox's:
			// not on its stack.
			x.inst.tasks.spawn("relay command over", then)
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
func (x *extConn) fireCall(method string, args ...any) {
	params, err := json.Marshal(args)
	if err != nil {
		return
	}
	id, ok := x.register(pendingCall{kind: callFire})
	if !ok {
		return
	}
	buf := link.GetBuf()
	*buf = wire.AppendCall(*buf, id, method, params)
	x.push(id, buf)
}

func debuggee(tabID int64, sid string) map[string]any {
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
func (x *extConn) forward(c *clientConn, id int64, m *methodInfo, method, params []byte, via, replyTo *session) error {
	return x.forwardTap(c, id, m, method, params, via, replyTo, nil)
}

// forwardTap is forward with tap (nil: none) reading the successful
// result before the client gets it.
func (x *extConn) forwardTap(c *clientConn, id int64, m *methodInfo, method, params []byte, via, replyTo *session, tap func([]byte)) error {
	t := via.tab
	now := time.Now()
	if m.opens {
		t.lastCommand.Store(now.UnixNano())
	}
	pc := pendingCall{kind: callClient, client: c, clientID: id, replyTo: replyTo, via: via, tabID: t.id, tab: t, epoch: t.blindEpoch.Load(), m: m, start: now, then: tap}
	if m.name == "Page.addScriptToEvaluateOnNewDocument" && !initRunsNothing(params) {
		kept := append([]byte(nil), params...)
		pc.keep = &kept
	}
	cid, err := x.registerCall(pc)
	if err != nil {
		return err
	}
	var session []byte
	if via.child {
		session = via.idJSON
	}
	buf := link.GetBuf()
	*buf = wire.AppendSendCommand(*buf, cid, via.tab.id, session, method, params)
	if !x.push(cid, buf) {
		return errSendGone
	}
	return nil
}

// busyOn reports whether a client command that can open a tab (input,
// script) has been waiting for tab id since no longer than busyWindow: a
// command that never ends (a promise that never settles) does not claim
// every tab the person opens from the tab for ever.
func (x *extConn) busyOn(tabID int64, now time.Time) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, pc := range x.pending {
		if pc.kind == callClient && pc.tabID == tabID && pc.m != nil && pc.m.opens && now.Sub(pc.start) < busyWindow {
			return true
		}
	}
	return false
}

// failTab fails every client command pending on tab id: the tab is gone or
// detached, its sessions have ended (the client has been told), and Chrome
// will never answer them.
func (x *extConn) failTab(tabID int64) {
	x.failWhere(func(pc pendingCall) bool { return pc.tabID == tabID }, codeNoSession, msgNoSession)
}

// failSessions fails every client command pending on one of ss: child
// sessions that detached, whose commands Chrome will not answer.
func (x *extConn) failSessions(ss []*session) {
	if len(ss) == 0 {
		return
	}
	x.failWhere(func(pc pendingCall) bool {
		for _, s := range ss {
			if pc.replyTo == s || pc.via == s {
				return true
			}
		}
		return false
	}, codeNoSession, msgNoSession)
}

// Chrome's words for a command that ran when the debugger went, and for an
// evaluation whose context ended.
const (
	msgDetachedWhile = "Detached while handling command."
	msgContextGone   = "Execution context was destroyed."
)

// msgNoSession is Chrome's answer to a command for a session that is gone.
// Clients ignore it for a session they know has ended (Playwright does so
// by its code).
const msgNoSession = "Session with given id not found."

// goneError is the error of a client command whose session ended before
// Chrome answered: Chrome's, for a command on a session; a command sent at
// the root names no session, and gets rootMsg.
func goneError(pc pendingCall, rootMsg string) (int64, string) {
	if pc.replyTo == nil {
		return codeServerError, rootMsg
	}
	return codeNoSession, msgNoSession
}

// failWhere fails the client commands pending that match, in the order
// they were sent, and reports how many.
func (x *extConn) failWhere(match func(pendingCall) bool, code int64, why string) int {
	var ids []int64
	x.mu.Lock()
	for id, pc := range x.pending {
		if pc.kind == callClient && match(pc) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	failed := make([]pendingCall, len(ids))
	for i, id := range ids {
		failed[i] = x.pending[id]
		delete(x.pending, id)
	}
	x.mu.Unlock()
	for _, pc := range failed {
		pc.client.inflight.Add(-1)
		code, why := code, why
		if code == codeNoSession {
			code, why = goneError(pc, "Target closed")
		}
		if why == msgDetachedWhile && strings.HasPrefix(pc.m.name, "Runtime.") {
			// As Chrome's own answer reads (extread.go): the context's end.
			why = msgContextGone
		}
		if why == msgStopped && isScript(pc.m.name) {
			// Said as the script's own exception, so that the client
			// reports the person's stop, not a context that ended.
			buf := link.GetBuf()
			*buf = wire.AppendResult(*buf, pc.clientID, sessionToken(pc.replyTo), thrown(why))
			pc.client.deliver(buf)
			continue
		}
		pc.client.replyError(pc.clientID, pc.replyTo, code, why)
	}
	return len(failed)
}

// end marks the connection gone and fails everything pending.
func (x *extConn) end() {
	x.mu.Lock()
	x.gone = true
	x.over.Store(true)
	pending := x.pending
	x.pending = map[int64]pendingCall{}
	x.mu.Unlock()
	for _, pc := range pending {
		switch pc.kind {
		case callFire:
			if pc.then != nil {
				pc.then(nil)
			}
		case callRelay:
			pc.done <- callResult{err: errExtGone}
		case callClient:
			// The tabs' sessions have ended before: the client has been
			// told, and only the root's commands get a word of their own.
			pc.client.inflight.Add(-1)
			code, why := goneError(pc, "Extension disconnected")
			pc.client.replyError(pc.clientID, pc.replyTo, code, why)
		}
	}
}

// ended reports whether the connection has ended. It is read for every
// client command: one atomic load.
func (x *extConn) ended() bool { return x.over.Load() }

// keepalive sends extension.keepalive every ExtensionKeepalive until the
// connection ends: a message keeps the extension's service worker running
// where a ping does not. Our extension answers {}; the stock one an error
// for a method it does not know, which is all the same.
func (x *extConn) keepalive() {
	t := time.NewTicker(x.inst.srv.cfg.ExtensionKeepalive)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			x.fireCall("extension.keepalive")
		case <-x.p.Done():
			return
		}
	}
}

// isReady reports whether the handshake has ended.
func (x *extConn) isReady() bool {
	select {
	case <-x.ready:
		return true
	default:
		return false
	}
}
