package core

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/link"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
)

// Upstream is the connection an instance reaches its browser by: today
// the extension's (package ext). The core decides what goes up and what a
// reply means; the upstream carries it, keeps the calls pending on it
// under ids of its own, and hands each reply and event back to the core
// (Instance.DeliverReply, Instance.RouteEvent and the core's operations on tabs).
//
// An instance has at most one at a time (State.Ext); a restarted
// extension's new connection replaces the old one (AcceptExtension).
type Upstream interface {
	// Forward sends client c's command id to its tab, on session via,
	// with params as given (the client's original bytes unless a stage
	// rewrote them). replyTo is the session the reply names; tap, when
	// not nil, reads a successful result before the client gets it. It
	// blocks while the connection's queue is full. ErrSendGone: the
	// connection has ended; ErrSendStopped: a person stopped the
	// automation before the command was taken.
	Forward(c *ClientConn, id int64, m *MethodInfo, method, params []byte, via, replyTo *Session, tap func([]byte)) error
	// Ended reports whether the connection has ended: one atomic load,
	// read for every client command.
	Ended() bool

	// Call sends a call of the relay's own and waits for its result.
	Call(ctx context.Context, method string, args ...any) ([]byte, error)
	// CallThen is Call with then (when not nil) run on the read loop with
	// a successful result before the next message is read. then has run
	// exactly when CallThen returns a nil error.
	CallThen(ctx context.Context, then func([]byte), method string, args ...any) ([]byte, error)
	// SendCommand sends a CDP command of the relay's own to tab tabID
	// (child session sid, "" for the tab's own) and waits for its result.
	SendCommand(ctx context.Context, tabID int64, sid, method string, params any) ([]byte, error)
	// Fire sends a CDP command of the relay's own without waiting for its
	// reply; it may run on the read loop, where waiting would deadlock.
	// It waits for room in the queue: a fence command is never dropped.
	Fire(tabID int64, sid, method string, params any)
	// FireQueued is Fire with then (when not nil) run once the command is
	// over, whether it failed or not, or the connection ended; it does
	// not flush the outbox first, being the outbox's own push.
	FireQueued(tabID int64, sid, method string, params any, then func())
	// FireCall sends a call of the relay's own without waiting for its
	// reply.
	FireCall(method string, args ...any)

	// Pending calls each with the client commands pending, under the
	// connection's lock, until it returns false. each only reads: it must
	// not block, take the instance's lock or call the upstream.
	Pending(each func(PendingCall) bool)
	// TakeWhere removes the client commands pending that match (match as
	// each above), and returns them in the order they were sent.
	TakeWhere(match func(PendingCall) bool) []PendingCall
	// End marks the connection gone: no new call is taken, the relay's
	// own calls pending fail with ErrExtGone, and the client commands
	// pending are removed and returned (EndUpstream answers them).
	End() []PendingCall

	// BrowserInfo learns what the browser is, for when the connection's
	// handshake did not say (the stock extension does not).
	BrowserInfo(ctx context.Context) (BrowserInfo, error)

	// Ready is closed once the handshake has ended (SetReady).
	Ready() <-chan struct{}
	IsReady() bool
	SetReady()
	// UseBatches starts batch frames both ways, once the extension has
	// said it takes them. Called on the read loop.
	UseBatches()
	// Done is closed once the connection is over.
	Done() <-chan struct{}
	// Shutdown closes the connection with a close code and reason.
	Shutdown(code int, reason string)
}

// callKind says who waits for a call's reply.
type callKind uint8

const (
	CallClient callKind = iota // a client's command: the reply goes to the client
	CallRelay                  // the relay's own: the reply goes to Done
	CallFire                   // the relay's own, and nobody waits
)

// PendingCall is a command sent upstream and waiting for its reply.
type PendingCall struct {
	Kind callKind

	// CallClient.
	Client   *ClientConn
	ClientID int64
	ReplyTo  *Session // the session the reply names; nil for the root
	Via      *Session // the session that carried it; nil for the relay's own
	TabID    int64
	Tab      *Tab        // via's tab
	Epoch    uint32      // the tab's blind epoch when it was forwarded
	M        *MethodInfo // the command's method
	Start    time.Time   // when it was forwarded

	// CallRelay.
	Done chan CallResult
	// Then runs on the read loop with a successful result before the next
	// message is read, so that what it sends the client precedes whatever
	// that message causes. A client command may have one too, which reads
	// the result before the client gets it (resume.go).
	Then func(result []byte)

	// Keep: a client's Page.addScriptToEvaluateOnNewDocument under tiers,
	// its params (initscripts.go). A pointer: the pending map keeps its
	// values inline only while they are small.
	Keep *[]byte
}

// CallResult is the outcome of a call of the relay's own.
type CallResult struct {
	Result []byte
	Err    error
}

// NewClientCall is the pending call of client c's command id forwarded on
// via, as Forward registers it.
func NewClientCall(c *ClientConn, id int64, m *MethodInfo, params []byte, via, replyTo *Session, tap func([]byte)) PendingCall {
	t := via.Tab
	now := time.Now()
	if m.Opens {
		t.LastCommand.Store(now.UnixNano())
	}
	pc := PendingCall{Kind: CallClient, Client: c, ClientID: id, ReplyTo: replyTo, Via: via, TabID: t.Id, Tab: t, Epoch: t.blindEpoch.Load(), M: m, Start: now, Then: tap}
	if m.Name == "Page.addScriptToEvaluateOnNewDocument" && !InitRunsNothing(params) {
		kept := append([]byte(nil), params...)
		pc.Keep = &kept
	}
	return pc
}

// Why an upstream did not take a call, and the error of calls that were
// pending when it ended.
var (
	ErrExtGone     = errors.New("extension disconnected")
	ErrSendGone    = errors.New("the extension connection has ended")
	ErrSendStopped = errors.New(api.MsgStopped)
)

// DeliverReply ends client command r.Pc, taken from the upstream's
// pending calls, with Chrome's answer m: the replies table writes what the
// client gets (order.go), and the client gets it. r is the read loop's,
// reused: it is reset.
func (in *Instance) DeliverReply(r *Reply, m *wire.ExtMessage) {
	pc := &r.Pc
	met := in.Srv.Cfg.Metrics
	met.ObserveLatency(pc.Start)
	met.Count(metrics.DirReply, pc.M.Domain, len(m.Result)+len(m.Error))
	r.Session = nil
	if pc.ReplyTo != nil {
		r.Session = pc.ReplyTo.idJSON
	}
	r.M, r.Buf = m, link.GetBuf()
	in.runReply(r)
	pc.Client.Deliver(r.Buf)
	*r = Reply{}
}

// Failing the calls pending upstream that Chrome will never answer: a tab
// or its sessions gone, a Stop, the connection's end.

// FailTab fails every client command pending on tab id: the tab is gone or
// detached, its sessions have ended (the client has been told), and Chrome
// will never answer them.
func FailTab(x Upstream, tabID int64) {
	FailWhere(x, func(pc PendingCall) bool { return pc.TabID == tabID }, CodeNoSession, msgNoSession)
}

// failSessions fails every client command pending on one of ss: child
// sessions that detached, whose commands Chrome will not answer.
func failSessions(x Upstream, ss []*Session) {
	if len(ss) == 0 {
		return
	}
	FailWhere(x, func(pc PendingCall) bool {
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
func goneError(pc *PendingCall, rootMsg string) (int64, string) {
	if pc.ReplyTo == nil {
		return CodeServerError, rootMsg
	}
	return CodeNoSession, msgNoSession
}

// FailWhere fails the client commands pending on x that match, in the
// order they were sent, and reports how many.
func FailWhere(x Upstream, match func(PendingCall) bool, code int64, why string) int {
	failed := x.TakeWhere(match)
	for i := range failed {
		pc := &failed[i]
		code, why := code, why
		if code == CodeNoSession {
			code, why = goneError(pc, "Target closed")
		}
		if why == MsgDetachedWhile && strings.HasPrefix(pc.M.Name, "Runtime.") {
			// As Chrome's own answer reads: the context's end.
			why = msgContextGone
		}
		if why == api.MsgStopped && IsScript(pc.M.Name) {
			// Said as the script's own exception, so that the client
			// reports the person's stop, not a context that ended.
			buf := link.GetBuf()
			*buf = wire.AppendResult(*buf, pc.ClientID, SessionToken(pc.ReplyTo), cdp.Thrown(why))
			pc.Client.Deliver(buf)
			continue
		}
		pc.Client.ReplyError(pc.ClientID, pc.ReplyTo, code, why)
	}
	return len(failed)
}

// EndUpstream marks x gone and answers the client commands that were
// pending on it. The tabs' sessions have ended before: the client has
// been told, and only the root's commands get a word of their own.
func EndUpstream(x Upstream) {
	for _, pc := range x.End() {
		code, why := goneError(&pc, "Extension disconnected")
		pc.Client.ReplyError(pc.ClientID, pc.ReplyTo, code, why)
	}
}

// SortByID returns the calls of ids in the order of their ids: the order
// they were sent in.
func SortByID(ids []int64, calls map[int64]PendingCall) []PendingCall {
	slices.Sort(ids)
	out := make([]PendingCall, len(ids))
	for i, id := range ids {
		out[i] = calls[id]
	}
	return out
}

// busyWindow is how long a command still running on a tab (a script that
// awaits something) counts as the automation's doing for the tabs opened
// from it.
const busyWindow = 30 * time.Second

// BusyOn reports whether a client command that can open a tab (input,
// script) has been waiting for tab id since no longer than busyWindow: a
// command that never ends (a promise that never settles) does not claim
// every tab the person opens from the tab for ever.
func BusyOn(x Upstream, tabID int64, now time.Time) bool {
	busy := false
	x.Pending(func(pc PendingCall) bool {
		busy = pc.TabID == tabID && pc.M != nil && pc.M.Opens && now.Sub(pc.Start) < busyWindow
		return !busy
	})
	return busy
}

// WaitingOn reports whether a command of client c on session s that tells
// the client of the page's frames (framesCommand), sent to Chrome before
// since, is waiting for Chrome's answer.
func WaitingOn(x Upstream, c *ClientConn, s *Session, since time.Time) bool {
	waiting := false
	x.Pending(func(pc PendingCall) bool {
		waiting = pc.Client == c && pc.Via == s && !pc.Start.After(since) && framesCommand(pc.M)
		return !waiting
	})
	return waiting
}

// framesCommand reports whether m's answer tells a client of the page's
// frames, by which it reads the execution contexts Runtime.enable reports.
// What takes long by nature (a navigation, a script awaiting a promise) is
// not one of them: Chrome answers Runtime.enable before it too.
func framesCommand(m *MethodInfo) bool {
	switch m.Name {
	case "Page.enable", "Page.getFrameTree", "Page.getResourceTree":
		return true
	}
	return false
}

// FlushOutbox pushes the fires critical sections released before, when
// there are any: every push upstream calls it first (package outbox).
func (in *Instance) FlushOutbox() {
	if in.out.Pending() {
		in.out.Flush()
	}
}
