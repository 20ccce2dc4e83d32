package core

import (
	"bytes"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/link"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
)

// The extension connection's read side: its loop (link.ExtReader, which
// opens batches), and the replies to the commands sent.

// Run runs the read loop until the connection ends. A panic in it ends
// this instance's sockets, not the relay.
func (x *ExtConn) Run(maxMessage int64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			x.Inst.Panicked("extension read loop", r)
			err = errPanicked
		}
	}()
	return x.serve(maxMessage)
}

// serve runs the read loop (link.ExtReader) until the connection ends. It
// is the only reader of the socket.
func (x *ExtConn) serve(maxMessage int64) error {
	met := x.Inst.Srv.Cfg.Metrics
	x.rd = link.ExtReader{
		Peer:       x.P,
		Log:        x.Log,
		Timeout:    extReadTimeout,
		MaxMessage: maxMessage,
		Handle:     x.handle,
		TooBig:     met.Limited[metrics.LimitSize],
		BatchesIn:  met.BatchesIn,
	}
	return x.rd.Run()
}

// handle handles one message from the extension.
func (x *ExtConn) handle(m *wire.ExtMessage) {
	if m.HasID {
		x.HandleReply(m)
		return
	}
	x.Inst.HandleExtEvent(x, m)
}

// useBatches starts batch frames both ways, once the extension has said
// it takes them: the relay's writer batches from now on, and
// extension.acceptBatches tells the extension that it may batch too. Run
// on the read loop.
func (x *ExtConn) useBatches() {
	if x.rd.StartBatches() {
		x.FireCall(MethodAcceptBatches)
	}
}

// featureBatches is extension.info's feature for batch frames.
const (
	featureBatches      = "batches"
	MethodAcceptBatches = "extension.acceptBatches"
)

func (x *ExtConn) HandleReply(m *wire.ExtMessage) {
	// The call is taken straight into the read loop's reused Reply: a
	// client's reply copies it once.
	r := &x.rep
	if !x.takePendingInto(m.ID, &r.Pc) {
		return // a reply to a call that timed out or was failed already
	}
	pc := &r.Pc
	switch pc.Kind {
	case callFire, callRelay:
		call := *pc
		r.Pc = PendingCall{}
		x.handleOwnReply(call, m)
		return
	}
	met := x.Inst.Srv.Cfg.Metrics
	met.ObserveLatency(pc.Start)
	met.Count(metrics.DirReply, pc.M.Domain, len(m.Result)+len(m.Error))
	c := pc.Client
	c.Inflight.Add(-1)
	r.Session = nil
	if pc.ReplyTo != nil {
		r.Session = pc.ReplyTo.idJSON
	}
	r.M, r.Buf = m, link.GetBuf()
	x.runReply(r)
	c.Deliver(r.Buf)
	*r = Reply{}
}

// handleOwnReply ends the relay's own call pc with Chrome's answer m.
func (x *ExtConn) handleOwnReply(pc PendingCall, m *wire.ExtMessage) {
	if pc.Kind == callFire {
		if m.HasError {
			x.Log.Debug("relay command failed", "err", string(m.Error))
		}
		if pc.then != nil {
			pc.then(nil)
		}
		return
	}
	if m.HasError {
		pc.done <- callResult{err: parseExtError(m.Error)}
		return
	}
	// The frame buffer is reused by the next read: copy.
	res := append([]byte(nil), m.Result...)
	if pc.then != nil {
		pc.then(res)
	}
	pc.done <- callResult{result: res}
}

// emptyResult reports whether a command's result is {}.
func emptyResult(r []byte) bool {
	r = bytes.TrimSpace(r)
	return len(r) == 2 && r[0] == '{' && r[1] == '}'
}

const MsgWentBlind = "cdprelay: blind: the tab went to a page automation may not see while this command ran; its result is withheld"

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
	return &ExtError{Code: CodeServerError, Message: string(msg)}
}

// CDP error codes, as Chrome uses them (cdp/codes.go).
const (
	codeParseError     = cdp.CodeParseError
	codeInvalidRequest = cdp.CodeInvalidRequest
	CodeMethodNotFound = cdp.CodeMethodNotFound
	CodeInvalidParams  = cdp.CodeInvalidParams
	CodeServerError    = cdp.CodeServerError
	CodeNoSession      = cdp.CodeNoSession
)
