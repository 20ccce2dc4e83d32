package core

import (
	"slices"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// Failing the calls pending on the extension connection that Chrome will
// never answer: a tab or its sessions gone, a Stop, the connection's end.

// failTab fails every client command pending on tab id: the tab is gone or
// detached, its sessions have ended (the client has been told), and Chrome
// will never answer them.
func (x *ExtConn) FailTab(tabID int64) {
	x.FailWhere(func(pc PendingCall) bool { return pc.TabID == tabID }, CodeNoSession, msgNoSession)
}

// failSessions fails every client command pending on one of ss: child
// sessions that detached, whose commands Chrome will not answer.
func (x *ExtConn) failSessions(ss []*Session) {
	if len(ss) == 0 {
		return
	}
	x.FailWhere(func(pc PendingCall) bool {
		for _, s := range ss {
			if pc.ReplyTo == s || pc.Via == s {
				return true
			}
		}
		return false
	}, CodeNoSession, msgNoSession)
}

// Chrome's words for a command that ran when the debugger went, and for an
// evaluation whose context ended.
const (
	MsgDetachedWhile = "Detached while handling command."
	msgContextGone   = "Execution context was destroyed."
)

// msgNoSession is Chrome's answer to a command for a session that is gone.
// Clients ignore it for a session they know has ended (Playwright does so
// by its code).
const msgNoSession = "Session with given id not found."

// goneError is the error of a client command whose session ended before
// Chrome answered: Chrome's, for a command on a session; a command sent at
// the root names no session, and gets rootMsg.
func goneError(pc PendingCall, rootMsg string) (int64, string) {
	if pc.ReplyTo == nil {
		return CodeServerError, rootMsg
	}
	return CodeNoSession, msgNoSession
}

// failWhere fails the client commands pending that match, in the order
// they were sent, and reports how many.
func (x *ExtConn) FailWhere(match func(PendingCall) bool, code int64, why string) int {
	var ids []int64
	x.Mu.Lock()
	for id, pc := range x.Pending {
		if pc.Kind == CallClient && match(pc) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	failed := make([]PendingCall, len(ids))
	for i, id := range ids {
		failed[i] = x.Pending[id]
		delete(x.Pending, id)
	}
	x.Mu.Unlock()
	for _, pc := range failed {
		pc.Client.Inflight.Add(-1)
		code, why := code, why
		if code == CodeNoSession {
			code, why = goneError(pc, "Target closed")
		}
		if why == MsgDetachedWhile && strings.HasPrefix(pc.M.Name, "Runtime.") {
			// As Chrome's own answer reads (extread.go): the context's end.
			why = msgContextGone
		}
		if why == api.MsgStopped && IsScript(pc.M.Name) {
			// Said as the script's own exception, so that the client
			// reports the person's stop, not a context that ended.
			buf := link.GetBuf()
			*buf = wire.AppendResult(*buf, pc.ClientID, SessionToken(pc.ReplyTo), thrown(why))
			pc.Client.Deliver(buf)
			continue
		}
		pc.Client.ReplyError(pc.ClientID, pc.ReplyTo, code, why)
	}
	return len(failed)
}

// end marks the connection gone and fails everything pending.
func (x *ExtConn) end() {
	x.Mu.Lock()
	x.gone = true
	x.over.Store(true)
	pending := x.Pending
	x.Pending = map[int64]PendingCall{}
	x.Mu.Unlock()
	for _, pc := range pending {
		switch pc.Kind {
		case callFire:
			if pc.then != nil {
				pc.then(nil)
			}
		case callRelay:
			pc.done <- callResult{err: ErrExtGone}
		case CallClient:
			// The tabs' sessions have ended before: the client has been
			// told, and only the root's commands get a word of their own.
			pc.Client.Inflight.Add(-1)
			code, why := goneError(pc, "Extension disconnected")
			pc.Client.ReplyError(pc.ClientID, pc.ReplyTo, code, why)
		}
	}
}
