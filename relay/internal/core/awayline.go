package core

// The client's commands for a tab whose sessions are suspended (away.go,
// relay/internal/away) wait in the tab's line (lines.go) until the tab is back:
// the client's other tabs, and what the relay answers itself, go on
// meanwhile. A task holds the head of the line while the tab is away;
// when the resume ends it lets the line go on, and each command is judged
// from the running stage on, as if it had just arrived (Stop, the policy
// and the tab's access as they are then). When the tab does not come back,
// the commands are answered with the reason before the sessions end.

// holdForTab keeps k, a command for tab t, in t's line while t's
// sessions are suspended. It reports whether k was kept (answered later);
// a command already taken off a line, or the relay's own, is not.
// Called with the lock held.
func (c *ClientConn) holdForTab(st *State, k *Cmd, t *Tab) bool {
	if k.Held != nil || k.Own || t.Resuming == nil {
		return false
	}
	in := c.Inst
	key := lineKey{c, t}
	l := st.Lines[key]
	if l == nil {
		l = &line{}
		st.Lines[key] = l
		c.lines.Add(1)
		// The head stands for the resume: never answered, never judged
		// (running), not a command in flight.
		head := &HeldCmd{Key: key, Stage: HoldProbing, running: true}
		l.q = append(l.q, head)
		done := t.Resuming
		in.ResumeWaits.Add(1)
		c.Wg.Add(1)
		in.Tasks.Spawn("wait for the tab", func() {
			defer c.Wg.Done()
			defer in.ResumeWaits.Add(-1)
			c.tabBack(head, done)
		})
	}
	h := &HeldCmd{Key: key, Cmd: copyCmd(k), Method: k.M.Name, Stage: HoldWaiting}
	l.q = append(l.q, h)
	c.Inflight.Add(1)
	k.Out.Kind = OutHeld
	return true
}

// tabBack waits until the resume that head stands for ends, then lets the
// commands behind it go on. A line dropped meanwhile (Stop, the client
// gone, the tab not back: FailHeldFor) has been answered already.
func (c *ClientConn) tabBack(head *HeldCmd, done <-chan struct{}) {
	select {
	case <-done:
	case <-c.Ctx.Done():
		return
	}
	in := c.Inst
	st := in.Lock()
	defer in.Unlock()
	l := st.Lines[head.Key]
	if l == nil || len(l.q) == 0 || l.q[0] != head {
		return
	}
	l.q = l.q[1:]
	if len(l.q) == 0 {
		delete(st.Lines, head.Key)
		c.lines.Add(-1)
		return
	}
	if x := st.Ext; x != nil && x.IsReady() {
		// The tab came back through a restarted extension: the client's
		// commands go to it (its read loop learns it with its next
		// message).
		c.SetExt(x)
	}
	in.StartDrain(st, head.Key)
}

// FailHeldFor answers the client's commands waiting for t with msg: t's
// sessions end without it coming back.
func (st *State) FailHeldFor(t *Tab, msg string) {
	c := st.Client
	if c == nil {
		return
	}
	key := lineKey{c, t}
	l := st.Lines[key]
	if l == nil || len(l.q) == 0 || l.q[0].Cmd.Env.HasID || !l.q[0].running {
		// No line, or one whose head is a command of its own (held for a
		// person): its commands are judged again in turn, and find the
		// sessions gone.
		return
	}
	for _, h := range l.q[1:] {
		if h.running {
			continue // its task answers it
		}
		c.Inflight.Add(-1)
		c.replyErrorRaw(h.Cmd.Env.ID, h.Cmd.Env.SessionID, CodeServerError, msg)
	}
	delete(st.Lines, key)
	c.lines.Add(-1)
}
