package lines

import "github.com/cdprelay/cdprelay/relay/internal/core"

// The client's commands for a tab whose sessions are suspended
// (relay/internal/away) wait in the tab's line (lines.go) until the tab is
// back: the client's other tabs, and what the relay answers itself, go on
// meanwhile. A task holds the head of the line while the tab is away;
// when the resume ends it lets the line go on, and each command is judged
// from the running stage on, as if it had just arrived (Stop, the policy
// and the tab's access as they are then). When the tab does not come back,
// the commands are answered with the reason before the sessions end.

// forTabLocked keeps k, a command for tab t, in t's line while t's
// sessions are suspended. It reports whether k was kept (answered later);
// a command already taken off a line, or the relay's own, is not.
// Called with the lock held.
func forTabLocked(c *core.ClientConn, st *core.State, k *core.Cmd, t *core.Tab) bool {
	if k.Held != nil || k.Own || t.Resuming == nil {
		return false
	}
	in := c.Inst
	key := core.LineKey{C: c, Tab: t}
	ls := linesOf(st)
	l := ls[key]
	if l == nil {
		l = &line{}
		ls[key] = l
		c.LineCount.Add(1)
		// The head stands for the resume: never answered, never judged
		// (Running), not a command in flight.
		head := &core.HeldCmd{Key: key, Stage: core.HoldProbing, Running: true}
		l.q = append(l.q, head)
		done := t.Resuming
		in.ResumeWaits.Add(1)
		c.Wg.Add(1)
		in.Tasks.Spawn("wait for the tab", func() {
			defer c.Wg.Done()
			defer in.ResumeWaits.Add(-1)
			tabBack(c, head, done)
		})
	}
	h := &core.HeldCmd{Key: key, Cmd: copyCmd(k), Method: k.M.Name, Stage: core.HoldWaiting}
	l.q = append(l.q, h)
	c.Inflight.Add(1)
	k.Out.Kind = core.OutHeld
	return true
}

// tabBack waits until the resume that head stands for ends, then lets the
// commands behind it go on. A line dropped meanwhile (Stop, the client
// gone, the tab not back: FailFor) has been answered already.
func tabBack(c *core.ClientConn, head *core.HeldCmd, done <-chan struct{}) {
	select {
	case <-done:
	case <-c.Ctx.Done():
		return
	}
	in := c.Inst
	st := in.Lock()
	defer in.Unlock()
	ls := linesOf(st)
	l := ls[head.Key]
	if l == nil || len(l.q) == 0 || l.q[0] != head {
		return
	}
	l.q = l.q[1:]
	if len(l.q) == 0 {
		delete(ls, head.Key)
		c.LineCount.Add(-1)
		return
	}
	if x := st.Ext; x != nil && x.IsReady() {
		// The tab came back through a restarted extension: the client's
		// commands go to it (its read loop learns it with its next
		// message).
		c.SetExt(x)
	}
	StartDrain(in, st, head.Key)
}

// FailFor answers the client's commands waiting for t with msg: t's
// sessions end without it coming back.
func FailFor(st *core.State, t *core.Tab, msg string) {
	c := st.Client
	if c == nil {
		return
	}
	key := core.LineKey{C: c, Tab: t}
	ls := linesOf(st)
	l := ls[key]
	if l == nil || len(l.q) == 0 || l.q[0].Cmd.Env.HasID || !l.q[0].Running {
		// No line, or one whose head is a command of its own (held for a
		// person): its commands are judged again in turn, and find the
		// sessions gone.
		return
	}
	for _, h := range l.q[1:] {
		if h.Running {
			continue // its task answers it
		}
		c.Inflight.Add(-1)
		c.ReplyErrorRaw(h.Cmd.Env.ID, h.Cmd.Env.SessionID, core.CodeServerError, msg)
	}
	delete(ls, key)
	c.LineCount.Add(-1)
}
