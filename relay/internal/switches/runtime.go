package switches

import (
	"slices"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// The switch is answered beside the client's read loop (Blocking), once
// the commands the client sent on the session before it that tell it of
// the page's frames have been answered (settle): Chrome answers those
// before it, and a client reads the contexts Runtime.enable reports by the
// frames it learnt from them (Playwright drops a context of a frame it
// does not know yet, and then waits for that world for good).

// runtimeSwitch answers a client's Runtime.enable or Runtime.disable on a
// tab session.
func runtimeSwitch(c *core.ClientConn, k core.Call) {
	settle(c, k.Sess)
	on := k.Method == "Runtime.enable"
	s := k.Sess
	st := c.Inst.Lock()
	if !st.Live(s) {
		c.Inst.Unlock()
		c.Fail(k, core.CodeNoSession, "Session with given id not found.")
		return
	}
	t, sid := s.Tab, ""
	if s.Child {
		sid = s.Id
	}
	was := s.RuntimeOn()
	if s.Child {
		s.ChildRuntime = on
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
		replayContexts(st, t, sid, s)
	}
	c.Inst.Unlock()
	c.Reply(k, struct{}{})
}

// ResyncContexts tells every client session with Runtime on of its tab's
// contexts as they are now, after a Stop froze its view (the core's
// contextsFrozen): that the ones it knew are gone
// (Runtime.executionContextsCleared), and then each context
// (replayContexts). A session whose tab is not attached again yet is told
// that its contexts went, if they did; the new ones are announced as
// Chrome reports them. Called by Resume with the lock held.
func ResyncContexts(st *core.State) {
	if st.Client == nil {
		return
	}
	for _, s := range st.Sessions {
		owed := s.ClearedOwed
		s.ClearedOwed = false
		t := s.Tab
		if t == nil || !st.Live(s) || !s.RuntimeOn() {
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
			replayContexts(st, t, sid, s)
		}
	}
}

// replayContexts tells client session s of the contexts of t's session
// sid, as Chrome does when Runtime is enabled: oldest first, none of the
// relay's own, none of a tab or frame the client may not see.
func replayContexts(st *core.State, t *core.Tab, sid string, s *core.Session) {
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
// the page's frames (core.WaitingOn) and were waiting for Chrome when it
// was called have been answered; it waits no longer than settleWait, so
// that a tab that does not answer does not hold the switch up for good.
func settle(c *core.ClientConn, s *core.Session) {
	x := c.Ext()
	if x == nil || s == nil {
		return
	}
	since := time.Now()
	deadline := since.Add(settleWait)
	for core.WaitingOn(x, c, s, since) && time.Now().Before(deadline) {
		select {
		case <-c.Ctx.Done():
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// settleWait bounds how long settle waits.
const settleWait = time.Second
