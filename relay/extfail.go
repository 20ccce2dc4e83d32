package relay

import (
	"slices"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// Failing the calls pending on the extension connection that Chrome will
// never answer: a tab or its sessions gone, a Stop, the connection's end.

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
