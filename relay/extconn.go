package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wire"
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

// extConn is the relay side of one extension WebSocket (protocol v2).
type extConn struct {
	inst *Instance    // static
	p    *peer        // static
	log  *slog.Logger // static

	mu      sync.Mutex // guards nextID and pending
	nextID  int64
	pending map[int64]pendingCall
	gone    bool // set when the connection ended; no new calls

	ready chan struct{} // closed by the read loop on extension.initialized
}

// pendingCall is a command sent to the extension and waiting for its reply:
// either a client's command (client != nil) or the relay's own (done != nil).
type pendingCall struct {
	client   *clientConn
	clientID int64
	sess     *session // the client's session; nil for a root command
	tabID    int64
	fire     bool      // the relay's own command whose reply nobody waits for
	domain   int       // the command's domain, for the reply's count
	start    time.Time // when a client's command was forwarded
	done     chan callResult
	// then, for the relay's own call, runs on the read loop with a
	// successful result before the next message is read, so that what it
	// sends the client precedes whatever that message causes.
	then func(result []byte)
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
		p:       newPeer(conn, extQueue, inst.srv.cfg.ClientQueueBytes),
		log:     log,
		pending: make(map[int64]pendingCall),
		ready:   make(chan struct{}),
	}
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
	x.mu.Lock()
	if x.gone {
		x.mu.Unlock()
		return nil, errExtGone
	}
	x.nextID++
	id := x.nextID
	x.pending[id] = pendingCall{done: done, then: then}
	x.mu.Unlock()

	buf := getBuf()
	b := append(*buf, `{"id":`...)
	b = wire.AppendInt(b, id)
	b = append(b, `,"method":`...)
	b = wire.AppendString(b, method)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	b = append(b, '}')
	*buf = b
	if !x.p.send(buf) {
		x.forget(id)
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
	case <-x.p.done:
		if !x.forget(id) {
			r := <-done
			return r.result, r.err
		}
		return nil, errExtGone
	}
}

// forget drops the call waiting for id. It reports false when the call was
// no longer pending: its result has been or is being delivered.
func (x *extConn) forget(id int64) bool {
	x.mu.Lock()
	_, ok := x.pending[id]
	delete(x.pending, id)
	x.mu.Unlock()
	return ok
}

// forward sends a client's command to its tab as
// chrome.debugger.sendCommand, with params as their original bytes. It
// blocks while the extension's queue is full.
func (x *extConn) forward(c *clientConn, env *wire.Envelope, sess *session) bool {
	var replyTo *session
	if env.SessionID != nil {
		replyTo = sess
	}
	return x.forwardAs(c, env, sess, replyTo)
}

// forwardAs is forward with the session the reply names given apart from
// the tab session that carries the command: a browser session's command
// goes to a tab and is answered on the browser session.
func (x *extConn) forwardAs(c *clientConn, env *wire.Envelope, sess, replyTo *session) bool {
	x.mu.Lock()
	if x.gone {
		x.mu.Unlock()
		return false
	}
	x.nextID++
	id := x.nextID
	x.pending[id] = pendingCall{client: c, clientID: env.ID, sess: replyTo, tabID: sess.tab.id, domain: domainIdx(env.Method), start: time.Now()}
	c.inflight.Add(1)
	x.mu.Unlock()

	buf := getBuf()
	b := append(*buf, `{"id":`...)
	b = wire.AppendInt(b, id)
	b = append(b, `,"method":"chrome.debugger.sendCommand","params":[{"tabId":`...)
	b = wire.AppendInt(b, sess.tab.id)
	if sess.child {
		b = append(b, `,"sessionId":`...)
		b = append(b, sess.idJSON...)
	}
	b = append(b, "},"...)
	b = wire.AppendBytesString(b, env.Method)
	if env.Params != nil {
		b = append(b, ',')
		b = append(b, env.Params...)
	}
	b = append(b, "]}"...)
	*buf = b
	if !x.p.send(buf) {
		if x.forget(id) {
			c.inflight.Add(-1)
		}
		return false
	}
	return true
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

// failTab fails every client command pending on tab id: the tab is gone and
// Chrome will never answer them.
func (x *extConn) failTab(tabID int64, why string) {
	var failed []pendingCall
	x.mu.Lock()
	for id, pc := range x.pending {
		if pc.client != nil && pc.tabID == tabID {
			failed = append(failed, pc)
			delete(x.pending, id)
		}
	}
	x.mu.Unlock()
	for _, pc := range failed {
		pc.client.inflight.Add(-1)
		pc.client.replyError(pc.clientID, pc.sess, codeServerError, why)
	}
}

// end marks the connection gone and fails everything pending.
func (x *extConn) end() {
	x.mu.Lock()
	x.gone = true
	pending := x.pending
	x.pending = map[int64]pendingCall{}
	x.mu.Unlock()
	for _, pc := range pending {
		if pc.done != nil {
			pc.done <- callResult{err: errExtGone}
		} else if pc.client != nil {
			pc.client.inflight.Add(-1)
			pc.client.replyError(pc.clientID, pc.sess, codeServerError, "Extension disconnected")
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

// serve runs the read loop until the connection ends. It is the only
// reader of the socket.
func (x *extConn) serve(maxMessage int64) error {
	conn := x.p.conn
	conn.SetReadLimit(maxMessage)
	_ = conn.SetReadDeadline(time.Now().Add(extReadTimeout))
	conn.SetPongHandler(func(string) error {
		return conn.SetReadDeadline(time.Now().Add(extReadTimeout))
	})
	var buf []byte
	var m wire.ExtMessage
	for {
		mt, frame, err := readFrame(conn, &buf)
		if err != nil {
			return err
		}
		_ = conn.SetReadDeadline(time.Now().Add(extReadTimeout))
		if mt != websocket.TextMessage {
			x.log.Warn("extension sent a binary frame; ignored")
			continue
		}
		if err := wire.DecodeExt(frame, &m); err != nil {
			// One bad message must not cost the person their session, but
			// it is worth a line: our extension never sends one.
			x.log.Warn("extension sent a malformed message; ignored", "err", err)
			continue
		}
		if m.HasID {
			x.handleReply(&m)
			continue
		}
		x.inst.handleExtEvent(x, &m)
	}
}

func (x *extConn) handleReply(m *wire.ExtMessage) {
	pc, ok := x.takePending(m.ID)
	if !ok {
		return // a reply to a call that timed out or was failed already
	}
	if pc.fire {
		if m.HasError {
			x.log.Debug("relay command failed", "err", string(m.Error))
		}
		return
	}
	if pc.done != nil {
		if m.HasError {
			pc.done <- callResult{err: parseExtError(m.Error)}
		} else {
			// The frame buffer is reused by the next read: copy.
			res := append([]byte(nil), m.Result...)
			if pc.then != nil {
				pc.then(res)
			}
			pc.done <- callResult{result: res}
		}
		return
	}
	met := x.inst.srv.cfg.Metrics
	met.observeLatency(pc.start)
	met.messages[dirReply][pc.domain].Inc()
	met.bytes[dirReply].Add(float64(len(m.Result) + len(m.Error)))
	c := pc.client
	c.inflight.Add(-1)
	buf := getBuf()
	b := append(*buf, `{"id":`...)
	b = wire.AppendInt(b, pc.clientID)
	if pc.sess != nil {
		b = append(b, `,"sessionId":`...)
		b = append(b, pc.sess.idJSON...)
	}
	if m.HasError {
		e := parseExtError(m.Error)
		b = appendErrorObject(b, e.Code, e.Message)
	} else {
		b = append(b, `,"result":`...)
		b = append(b, m.Result...)
	}
	b = append(b, '}')
	*buf = b
	c.deliver(buf)
}

// parseExtError reads an extension error string. chrome.debugger reports a
// CDP error as the JSON text of {code, message}; anything else is a plain
// message.
func parseExtError(msg []byte) *ExtError {
	if len(msg) > 0 && msg[0] == '{' && wire.Valid(msg) == nil {
		code, okc := wire.Int(wire.Field(msg, "code"))
		text := wire.StringField(msg, "message")
		if okc && text != nil {
			return &ExtError{Code: code, Message: string(text)}
		}
	}
	return &ExtError{Code: codeServerError, Message: string(msg)}
}

// CDP error codes, as Chrome uses them.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeServerError    = -32000
	codeNoSession      = -32001
)

func appendErrorObject(b []byte, code int64, msg string) []byte {
	b = append(b, `,"error":{"code":`...)
	b = wire.AppendInt(b, code)
	b = append(b, `,"message":`...)
	b = wire.AppendString(b, msg)
	return append(b, '}')
}

// failSessions fails every client command pending on one of ss: child
// sessions that detached, whose commands Chrome will not answer.
func (x *extConn) failSessions(ss []*session) {
	if len(ss) == 0 {
		return
	}
	var failed []pendingCall
	x.mu.Lock()
	for id, pc := range x.pending {
		if pc.client == nil || pc.sess == nil {
			continue
		}
		for _, s := range ss {
			if pc.sess == s {
				failed = append(failed, pc)
				delete(x.pending, id)
				break
			}
		}
	}
	x.mu.Unlock()
	for _, pc := range failed {
		pc.client.inflight.Add(-1)
		pc.client.replyError(pc.clientID, pc.sess, codeNoSession, "Session with given id not found.")
	}
}
