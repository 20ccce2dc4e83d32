package core

import (
	"errors"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// The calls pending on the extension connection: each command sent to the
// extension is registered under an id of its own until its reply, or its
// failure, takes it.

// callKind says who waits for a call's reply.
type callKind uint8

// PendingCall is a command sent to the extension and waiting for its reply.
type PendingCall struct {
	Kind callKind

	// callClient.
	Client   *ClientConn
	ClientID int64
	ReplyTo  *Session // the session the reply names; nil for the root
	Via      *Session // the session that carried it; nil for the relay's own
	TabID    int64
	Tab      *Tab        // via's tab
	epoch    uint32      // the tab's blind epoch when it was forwarded
	M        *MethodInfo // the command's method
	Start    time.Time   // when it was forwarded

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
	Keep *[]byte
}

type callResult struct {
	result []byte
	err    error
}

// register records pc under a fresh id. It reports false once the
// connection has ended. Every call to the extension goes through register
// and then push.
func (x *ExtConn) register(pc PendingCall) (int64, bool) {
	id, err := x.registerCall(pc)
	return id, err == nil
}

// Why the extension connection did not take a call.
var (
	errSendGone    = errors.New("the extension connection has ended")
	errSendStopped = errors.New(api.MsgStopped)
)

// registerCall is register, saying why not. A client's command is not
// taken while a person has stopped the automation: Stop sets the flag
// before it fails the pending calls under x.mu, so a command the
// pipeline let through just before a Stop is either failed by it or
// refused here.
func (x *ExtConn) registerCall(pc PendingCall) (int64, error) {
	x.Mu.Lock()
	defer x.Mu.Unlock()
	if x.gone {
		return 0, errSendGone
	}
	if pc.Kind == CallClient && x.Inst.IsStopped.Load() {
		return 0, errSendStopped
	}
	x.NextID++
	x.Pending[x.NextID] = pc
	if pc.Kind == CallClient {
		pc.Client.Inflight.Add(1)
	}
	return x.NextID, nil
}

// Forget drops the call waiting for id. It reports false when the call was
// no longer pending: its result has been or is being delivered.
func (x *ExtConn) Forget(id int64) bool {
	pc, ok := x.takePending(id)
	if ok && pc.Kind == CallClient {
		pc.Client.Inflight.Add(-1)
	}
	return ok
}

// takePending removes and returns the call waiting for id.
func (x *ExtConn) takePending(id int64) (PendingCall, bool) {
	var pc PendingCall
	ok := x.takePendingInto(id, &pc)
	return pc, ok
}

// takePendingInto is takePending into *pc, which it leaves alone when no
// call waits for id.
func (x *ExtConn) takePendingInto(id int64, pc *PendingCall) bool {
	x.Mu.Lock()
	v, ok := x.Pending[id]
	if ok {
		*pc = v
		delete(x.Pending, id)
	}
	x.Mu.Unlock()
	return ok
}

// BusyOn reports whether a client command that can open a tab (input,
// script) has been waiting for tab id since no longer than busyWindow: a
// command that never ends (a promise that never settles) does not claim
// every tab the person opens from the tab for ever.
func (x *ExtConn) BusyOn(tabID int64, now time.Time) bool {
	x.Mu.Lock()
	defer x.Mu.Unlock()
	for _, pc := range x.Pending {
		if pc.Kind == CallClient && pc.TabID == tabID && pc.M != nil && pc.M.opens && now.Sub(pc.Start) < busyWindow {
			return true
		}
	}
	return false
}

// waitingOn reports whether a command of client c on session s that tells
// the client of the page's frames (framesCommand), sent to Chrome before
// since, is waiting for Chrome's answer.
func (x *ExtConn) waitingOn(c *ClientConn, s *Session, since time.Time) bool {
	x.Mu.Lock()
	defer x.Mu.Unlock()
	for _, pc := range x.Pending {
		if pc.Kind == CallClient && pc.Client == c && pc.Via == s && !pc.Start.After(since) && framesCommand(pc.M) {
			return true
		}
	}
	return false
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
