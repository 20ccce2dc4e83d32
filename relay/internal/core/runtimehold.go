package core

import (
	"slices"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// The relay's own Runtime.
//
// The relay places every context a command names in its view of the
// tab's contexts (relay/internal/contexts), which only Chrome's Runtime events keep
// true. So it keeps Runtime enabled on every session of the tabs it
// attaches — the tab's own from the attach, a child's (a frame, a worker)
// from the moment Chrome announces it — and a client's Runtime switch on
// a tab session is the relay's to answer:
//
//   - Runtime.disable is answered and not sent: Chrome goes on telling the
//     relay of contexts, and the client hears no Runtime event on that
//     session until it enables Runtime again;
//   - Runtime.enable is answered as Chrome would: a
//     Runtime.executionContextCreated for each context the session has
//     (none of the relay's own worlds, nothing of a blind tab), then the
//     reply.
//
// Runtime.bindingCalled comes whatever the switch, as from Chrome. What
// Chrome stored for a late Runtime.enable (console messages from before it)
// is not replayed.

// holdRuntime turns Runtime on in Chrome for t's session sid, once. It
// goes out as the lock is released, before any later command for the
// session.
func (st *State) holdRuntime(t *Tab, sid string) {
	sc := t.Ctxs.Of(sid)
	if sc.Held {
		return
	}
	sc.Held = true
	st.Fire(t.Id, sid, "Runtime.enable", nil)
}

// runtimeOn reports whether the client has Runtime on on s.
func (s *Session) runtimeOn() bool {
	if s.Child {
		return s.runtime
	}
	return s.Enabled["Runtime"]
}

// runtimeWanted reports whether client session s gets a Runtime event of
// t's session sid: when the client has Runtime on there, or when the relay
// does not hold it (then Chrome sends only what the client asked for).
func (st *State) runtimeWanted(t *Tab, sid string, s *Session, method []byte) bool {
	if string(method) == "Runtime.bindingCalled" {
		return true
	}
	if sc := t.Ctxs.Get(sid); sc == nil || !sc.Held {
		return true
	}
	return s.runtimeOn() && !st.contextsFrozen(method)
}

// contextsFrozen reports whether an event of method is withheld from the
// client because the automation is stopped: while it is, the client's
// view of a tab's execution contexts stays as it was, and Resume brings it
// up to date (ResyncContexts). A Stop ends the relay's debugger session
// on the tab (person's stopundo.go), and a client told then that its
// contexts are gone takes a script it had just sent for a navigation
// ("Execution context was destroyed") rather than for the person's Stop,
// which every command meets while stopped.
func (st *State) contextsFrozen(method []byte) bool {
	return st.StoppedBy != "" && BytesHasPrefix(method, "Runtime.executionContext")
}

// ResyncContexts tells every client session with Runtime on of its tab's
// contexts as they are now, after a Stop froze its view: that the ones it
// knew are gone (Runtime.executionContextsCleared), and then each context
// (replayContexts). A session whose tab is not attached again yet is told
// that its contexts went, if they did; the new ones are announced as
// Chrome reports them. Called by Resume with the lock held.
func (st *State) ResyncContexts() {
	if st.Client == nil {
		return
	}
	for _, s := range st.Sessions {
		owed := s.clearedOwed
		s.clearedOwed = false
		t := s.Tab
		if t == nil || !st.Live(s) || !s.runtimeOn() {
			continue
		}
		sid := ""
		if s.Child {
			sid = s.Id
		}
		sc := t.Ctxs.Get(sid)
		held := sc != nil && sc.Held
		if held || owed {
			st.Client.EventRaw("Runtime.executionContextsCleared", s, []byte("{}"))
		}
		if held {
			st.replayContexts(t, sid, s)
		}
	}
}

// The switch is answered beside the client's read loop (Blocking), once
// the commands the client sent on the session before it that tell it of
// the page's frames have been answered (settle): Chrome answers those
// before it, and a client reads the contexts Runtime.enable reports by the
// frames it learnt from them (Playwright drops a context of a frame it
// does not know yet, and then waits for that world for good).
var emRuntimeSwitch = Emulation{Fn: (*ClientConn).runtimeSwitch, Blocking: true}

// runtimeSwitch answers a client's Runtime.enable or Runtime.disable on a
// tab session.
func (c *ClientConn) runtimeSwitch(k Call) {
	c.settle(k.Sess)
	on := k.Method == "Runtime.enable"
	s := k.Sess
	st := c.Inst.Lock()
	if !st.Live(s) {
		c.Inst.Unlock()
		c.Fail(k, CodeNoSession, "Session with given id not found.")
		return
	}
	t, sid := s.Tab, ""
	if s.Child {
		sid = s.Id
	}
	was := s.runtimeOn()
	if s.Child {
		s.runtime = on
	} else {
		st.SwitchDomain(s, "Runtime", on)
	}
	sc := t.Ctxs.Of(sid)
	if !sc.Held {
		// Chrome's switch is the client's (a tab the relay did not attach
		// itself): an enable makes it the relay's too.
		sc.Held = on
		c.Inst.Unlock()
		c.ForwardCall(k)
		return
	}
	if on && !was {
		st.replayContexts(t, sid, s)
	}
	c.Inst.Unlock()
	c.Reply(k, struct{}{})
}

// replayContexts tells client session s of the contexts of t's session
// sid, as Chrome does when Runtime is enabled: oldest first, none of the
// relay's own, none of a tab or frame the client may not see.
func (st *State) replayContexts(t *Tab, sid string, s *Session) {
	c := st.Client
	sc := t.Ctxs.Get(sid)
	if c == nil || sc == nil {
		return
	}
	acc := t.Acc
	if s.Child {
		acc = api.Stricter(acc, s.Acc)
	}
	if acc.Level == api.Blind {
		return
	}
	ids := make([]int64, 0, len(sc.ByID))
	for id, x := range sc.ByID {
		if !x.Relay && x.Raw != nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		x := sc.ByID[id]
		if n, ok := t.BlindFrames[x.Frame]; ok && n.Acc.Level == api.Blind {
			continue
		}
		params := make([]byte, 0, len(x.Raw)+12)
		params = append(params, `{"context":`...)
		params = append(params, x.Raw...)
		params = append(params, '}')
		c.EventRaw("Runtime.executionContextCreated", s, params)
	}
}

// settle waits until the client's commands on session s that tell it of
// the page's frames (framesCommand) and were waiting for Chrome when it
// was called have been answered; it waits no longer than settleWait, so
// that a tab that does not answer does not hold the switch up for good.
func (c *ClientConn) settle(s *Session) {
	x := c.Ext()
	if x == nil || s == nil {
		return
	}
	since := time.Now()
	deadline := since.Add(settleWait)
	for waitingOn(x, c, s, since) && time.Now().Before(deadline) {
		select {
		case <-c.Ctx.Done():
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// settleWait bounds how long settle waits.
const settleWait = time.Second
