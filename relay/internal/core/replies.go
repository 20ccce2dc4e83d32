package core

import (
	"bytes"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/link"
	"github.com/cdprelay/cdprelay/relay/internal/rules"
	tier "github.com/cdprelay/cdprelay/relay/internal/tiers"
)

// reply is Chrome's answer to a client's command on its way through the
// replies table (order.go), on the extension's read loop, without the
// lock. The read loop owns it (extConn.rep) and reuses it for every
// reply, so that routing one allocates nothing.
type Reply struct {
	pc      PendingCall
	m       *wire.ExtMessage // Result and Error alias the read buffer
	session []byte           // the client's session the reply names (JSON); nil: the root
	// buf is what the client gets, written by the row that finishes the
	// reply (the first that reports false).
	buf *[]byte
}

// The rows of the replies table (order.go). Each reports whether the reply
// goes on to the next row; the first that reports false has written what
// the client gets. The rows that take note of Chrome's own answer (the
// tiers' kept script, the resume's tap, a stream's end) come first, so
// that a reply another row withholds or rewrites is noted all the same.

// KeepScriptReply (tiers.KeepScript): a client's init script under tiers
// is kept with the identifier Chrome gave it (initscripts.go).
func (x *ExtConn) KeepScriptReply(r *Reply) bool {
	if r.pc.keep != nil && !r.m.HasError {
		x.Inst.keepScript(&r.pc, r.m.Result)
	}
	return true
}

// TapScript (core.TapScript): the resume's tap reads Chrome's identifier
// of a client's init script, to be set again by a resume and taken out by
// the client's removal (resume.go), whatever the client is then told.
func (x *ExtConn) TapScript(r *Reply) bool {
	if r.pc.then != nil && !r.m.HasError {
		r.pc.then(r.m.Result)
	}
	return true
}

// StreamForget (creds.StreamForget): a stream read whose reply does not
// reach the client as a piece (an error, or withheld) is forgotten
// (creds.Streams), or its entry would stay for good.
func (x *ExtConn) StreamForget(r *Reply) bool {
	if r.m.HasError || withheld(r) {
		x.Inst.Streams.Forget(r.pc.ClientID, "")
	}
	return true
}

// withheld: the tab went blind while the command ran: it may have run in
// the page the automation may not see. An empty result (an input event's,
// a setting's) says nothing of any page.
func withheld(r *Reply) bool {
	return r.pc.Tab.blindEpoch.Load() != r.pc.epoch && (r.m.HasError || !emptyResult(r.m.Result))
}

// WentBlind (tiers.WentBlind): a reply from a page the tab went blind on
// is withheld, whatever it is.
func (x *ExtConn) WentBlind(r *Reply) bool {
	if withheld(r) {
		*r.buf = wire.AppendError(*r.buf, r.pc.ClientID, r.session, CodeServerError, MsgWentBlind)
		return false
	}
	return true
}

// ReplyError (core.Error): Chrome's error, as the client's.
func (x *ExtConn) ReplyError(r *Reply) bool {
	if !r.m.HasError {
		return true
	}
	e := parseExtError(r.m.Error)
	if cause := rules.PolicyCauseOf(r.pc.M.Name, e.Message); cause != "" {
		e.Message = rules.ExplainPolicy(r.pc.M.Name, e.Message)
		x.Inst.notePolicyError(r.pc.Tab, cause)
	}
	if e.Message == MsgDetachedWhile && x.Inst.stopped.Load() {
		// Sent as the person stopped the automation, and ended by the
		// Stop's detach (stopundo.go): the person's stop is why, said as
		// every other command under way is told it.
		if isScript(r.pc.M.Name) {
			*r.buf = wire.AppendResult(*r.buf, r.pc.ClientID, r.session, thrown(MsgStopped))
			return false
		}
		e = &ExtError{Code: CodeServerError, Message: MsgStopped}
	}
	if e.Message == MsgDetachedWhile && strings.HasPrefix(r.pc.M.Name, "Runtime.") {
		// Chrome detached the tab while the command ran: the objects of
		// its context died with the debugger session. The client's word
		// for that is a context's end, which it retries in the same page
		// if the tab's sessions are resumed (resume.go).
		e = &ExtError{Code: CodeServerError, Message: msgContextGone}
	}
	*r.buf = wire.AppendError(*r.buf, r.pc.ClientID, r.session, e.Code, e.Message)
	return false
}

// Scopes (tiers.Scopes): on a read-only tab a function's [[Scopes]] do
// not reach the client (they lead to the guard's closures).
func (x *ExtConn) Scopes(r *Reply) bool {
	if !r.pc.Tab.readOnly.Load() {
		return true
	}
	*r.buf = wire.AppendResult(*r.buf, r.pc.ClientID, r.session, tier.WithoutScopes(r.m.Result))
	return false
}

// History (tiers.History): a tab's history says nothing of the pages
// automation may not see.
func (x *ExtConn) History(r *Reply) bool {
	if !x.Inst.hasTiers() {
		return true
	}
	*r.buf = wire.AppendResult(*r.buf, r.pc.ClientID, r.session, x.Inst.blindHistory(r.m.Result))
	return false
}

// SideEffect (tiers.SideEffect): a read-only tab's refused side effect,
// explained.
func (x *ExtConn) SideEffect(r *Reply) bool {
	if !r.pc.Tab.readOnly.Load() || !bytes.Contains(r.m.Result, tier.SideEffectText) {
		return true
	}
	*r.buf = wire.AppendResult(*r.buf, r.pc.ClientID, r.session, bytes.ReplaceAll(r.m.Result, tier.SideEffectText, tier.SideEffectExplained))
	return false
}

// CredentialResult (creds.Results): credentials in a result go out
// redacted (credentials.go).
func (x *ExtConn) CredentialResult(r *Reply) bool {
	red := wire.Redactor{Sensitive: x.Inst.Srv.creds().Has}
	b := link.GetBuf()
	*b = red.Redact(*b, r.m.Result)
	*r.buf = wire.AppendResult(*r.buf, r.pc.ClientID, r.session, *b)
	link.PutBuf(b)
	return false
}

// StreamPiece (creds.StreamPiece): while a secret is hidden, a piece of a
// stream: its end waits for the next (creds.Streams).
func (x *ExtConn) StreamPiece(r *Reply) bool {
	locked := x.Inst.Locked.Load()
	if locked == nil {
		return true
	}
	res := r.m.Result
	if out, ok := x.Inst.Streams.Piece(r.pc.ClientID, r.m.Result, locked); ok {
		res = out
	}
	*r.buf = wire.AppendResult(*r.buf, r.pc.ClientID, r.session, res)
	return false
}

// ReplyResult (core.Result): the client gets the result as Chrome gave
// it.
func (x *ExtConn) ReplyResult(r *Reply) bool {
	*r.buf = wire.AppendResult(*r.buf, r.pc.ClientID, r.session, r.m.Result)
	return false
}
