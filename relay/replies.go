package relay

import (
	"bytes"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// reply is Chrome's answer to a client's command on its way through the
// replies table (order.go), on the extension's read loop, without the
// lock. The read loop owns it (extConn.rep) and reuses it for every
// reply, so that routing one allocates nothing.
type reply struct {
	pc      pendingCall
	m       *wire.ExtMessage // Result and Error alias the read buffer
	session []byte           // the client's session the reply names (JSON); nil: the root
	// buf is what the client gets, written by the row that finishes the
	// reply (the first that reports false).
	buf *[]byte
}

// The rows of the replies table (order.go). Each reports whether the reply
// goes on to the next row; the first that reports false has written what
// the client gets. Today's order (the first rewriting row wins) keeps the
// resume's tap in the last row, so a reply another row finishes skips it.

// keepScriptReply (tiers.KeepScript): a client's init script under tiers
// is kept with the identifier Chrome gave it (initscripts.go).
func (x *extConn) keepScriptReply(r *reply) bool {
	if r.pc.keep != nil && !r.m.HasError {
		x.inst.keepScript(&r.pc, r.m.Result)
	}
	return true
}

// wentBlind (tiers.WentBlind): the tab went blind while the command ran:
// it may have run in the page the automation may not see. An empty result
// (an input event's, a setting's) says nothing of any page.
func (x *extConn) wentBlind(r *reply) bool {
	if r.pc.tab.blindEpoch.Load() != r.pc.epoch && (r.m.HasError || !emptyResult(r.m.Result)) {
		*r.buf = wire.AppendError(*r.buf, r.pc.clientID, r.session, codeServerError, msgWentBlind)
		return false
	}
	return true
}

// streamError (creds.StreamError): a stream the client failed to read is
// forgotten (streams.go).
func (x *extConn) streamError(r *reply) bool {
	if r.m.HasError {
		x.inst.streams.forget(r.pc.clientID, "")
	}
	return true
}

// replyError (core.Error): Chrome's error, as the client's.
func (x *extConn) replyError(r *reply) bool {
	if !r.m.HasError {
		return true
	}
	e := parseExtError(r.m.Error)
	if e.Message == msgDetachedWhile && strings.HasPrefix(r.pc.m.name, "Runtime.") {
		// Chrome detached the tab while the command ran: the objects of
		// its context died with the debugger session. The client's word
		// for that is a context's end, which it retries in the same page
		// if the tab's sessions are resumed (resume.go).
		e = &ExtError{Code: codeServerError, Message: msgContextGone}
	}
	*r.buf = wire.AppendError(*r.buf, r.pc.clientID, r.session, e.Code, e.Message)
	return false
}

// scopes (tiers.Scopes): on a read-only tab a function's [[Scopes]] do
// not reach the client (they lead to the guard's closures).
func (x *extConn) scopes(r *reply) bool {
	if !r.pc.tab.readOnly.Load() {
		return true
	}
	*r.buf = wire.AppendResult(*r.buf, r.pc.clientID, r.session, withoutScopes(r.m.Result))
	return false
}

// history (tiers.History): a tab's history says nothing of the pages
// automation may not see.
func (x *extConn) history(r *reply) bool {
	if !x.inst.hasTiers() {
		return true
	}
	*r.buf = wire.AppendResult(*r.buf, r.pc.clientID, r.session, x.inst.blindHistory(r.m.Result))
	return false
}

// sideEffect (tiers.SideEffect): a read-only tab's refused side effect,
// explained.
func (x *extConn) sideEffect(r *reply) bool {
	if !r.pc.tab.readOnly.Load() || !bytes.Contains(r.m.Result, sideEffectText) {
		return true
	}
	*r.buf = wire.AppendResult(*r.buf, r.pc.clientID, r.session, bytes.ReplaceAll(r.m.Result, sideEffectText, sideEffectExplained))
	return false
}

// credentialResult (creds.Results): credentials in a result go out
// redacted (credentials.go).
func (x *extConn) credentialResult(r *reply) bool {
	red := wire.Redactor{Sensitive: x.inst.srv.creds().has}
	b := getBuf()
	*b = red.Redact(*b, r.m.Result)
	*r.buf = wire.AppendResult(*r.buf, r.pc.clientID, r.session, *b)
	putBuf(b)
	return false
}

// streamPiece (creds.StreamPiece): while a secret is hidden, a piece of a
// stream: its end waits for the next (streams.go).
func (x *extConn) streamPiece(r *reply) bool {
	locked := x.inst.locked.Load()
	if locked == nil {
		return true
	}
	res := r.m.Result
	if out, ok := x.inst.streams.piece(r.pc.clientID, r.m.Result, locked); ok {
		res = out
	}
	*r.buf = wire.AppendResult(*r.buf, r.pc.clientID, r.session, res)
	return false
}

// replyResult (core.Result): the resume's tap reads the result (resume.go),
// then the client gets it as Chrome gave it.
func (x *extConn) replyResult(r *reply) bool {
	if r.pc.then != nil {
		r.pc.then(r.m.Result)
	}
	*r.buf = wire.AppendResult(*r.buf, r.pc.clientID, r.session, r.m.Result)
	return false
}
