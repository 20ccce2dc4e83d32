package core

import (
	"bytes"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// Reply is Chrome's answer to a client's command on its way through the
// replies table (order.go), on the extension's read loop, without the
// lock. The read loop owns it (ext.Conn.rep) and reuses it for every
// reply, so that routing one allocates nothing.
type Reply struct {
	Pc      PendingCall
	M       *wire.ExtMessage // Result and Error alias the read buffer
	Session []byte           // the client's session the reply names (JSON); nil: the root
	// buf is what the client gets, written by the row that finishes the
	// reply (the first that reports false).
	Buf *[]byte
}

// The rows of the replies table (order.go). Each reports whether the reply
// goes on to the next row; the first that reports false has written what
// the client gets. The rows that take note of Chrome's own answer (the
// tiers' kept script, the resume's tap, a stream's end) come first, so
// that a reply another row withholds or rewrites is noted all the same.

// TapScript (core.TapScript): the resume's tap reads Chrome's identifier
// of a client's init script, to be set again by a resume and taken out by
// the client's removal (resume.go), whatever the client is then told.
func (in *Instance) TapScript(r *Reply) bool {
	if r.Pc.Then != nil && !r.M.HasError {
		r.Pc.Then(r.M.Result)
	}
	return true
}

// Withheld: the tab went blind while the command ran: it may have run in
// the page the automation may not see. An empty result (an input event's,
// a setting's) says nothing of any page.
func Withheld(r *Reply) bool {
	return r.Pc.Tab.blindEpoch.Load() != r.Pc.Epoch && (r.M.HasError || !emptyResult(r.M.Result))
}

// ReplyError (core.Error): Chrome's error, as the client's.
func (in *Instance) ReplyError(r *Reply) bool {
	if !r.M.HasError {
		return true
	}
	e := cdp.ParseExtError(r.M.Error)
	if cause := cdp.PolicyCauseOf(r.Pc.M.Name, e.Message); cause != "" {
		e.Message = cdp.ExplainPolicy(r.Pc.M.Name, e.Message)
		in.notePolicyError(r.Pc.Tab, cause)
	}
	if e.Message == MsgDetachedWhile && in.IsStopped.Load() {
		// Sent as the person stopped the automation, and ended by the
		// Stop's detach (person's stopundo.go): the person's stop is why, said as
		// every other command under way is told it.
		if IsScript(r.Pc.M.Name) {
			*r.Buf = wire.AppendResult(*r.Buf, r.Pc.ClientID, r.Session, cdp.Thrown(api.MsgStopped))
			return false
		}
		e = &cdp.ExtError{Code: CodeServerError, Message: api.MsgStopped}
	}
	if e.Message == MsgDetachedWhile && strings.HasPrefix(r.Pc.M.Name, "Runtime.") {
		// Chrome detached the tab while the command ran: the objects of
		// its context died with the debugger session. The client's word
		// for that is a context's end, which it retries in the same page
		// if the tab's sessions are resumed (resume.go).
		e = &cdp.ExtError{Code: CodeServerError, Message: msgContextGone}
	}
	*r.Buf = wire.AppendError(*r.Buf, r.Pc.ClientID, r.Session, e.Code, e.Message)
	return false
}

// ReplyResult (core.Result): the client gets the result as Chrome gave
// it.
func (in *Instance) ReplyResult(r *Reply) bool {
	*r.Buf = wire.AppendResult(*r.Buf, r.Pc.ClientID, r.Session, r.M.Result)
	return false
}

// emptyResult reports whether a command's result is {}.
func emptyResult(r []byte) bool {
	r = bytes.TrimSpace(r)
	return len(r) == 2 && r[0] == '{' && r[1] == '}'
}

const MsgWentBlind = "cdprelay: blind: the tab went to a page automation may not see while this command ran; its result is withheld"

// CDP error codes, as Chrome uses them (cdp/codes.go).
const (
	codeParseError     = cdp.CodeParseError
	codeInvalidRequest = cdp.CodeInvalidRequest
	CodeMethodNotFound = cdp.CodeMethodNotFound
	CodeInvalidParams  = cdp.CodeInvalidParams
	CodeServerError    = cdp.CodeServerError
	CodeNoSession      = cdp.CodeNoSession
)
