package lines

import (
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// line is the commands of one core.LineKey held up behind a held one, the
// held one first.
type line struct {
	q        []*core.HeldCmd
	draining bool // a task is taking commands off the line
}

// lineState is what the lines keep of an instance: its lines, by client
// and tab. Guarded by the instance's mutex.
type lineState struct {
	m map[core.LineKey]*line
}

var stateSlot = core.NewStateSlot[lineState]()

// linesOf is st's lines. Called with the lock held.
func linesOf(st *core.State) map[core.LineKey]*line {
	ls := stateSlot.Of(st)
	if ls.m == nil {
		ls.m = make(map[core.LineKey]*line)
	}
	return ls.m
}

// copyCmd copies k's envelope into bytes of its own, for a command that
// outlives the read buffer.
func copyCmd(k *core.Cmd) core.Cmd {
	e := k.Env
	b := make([]byte, 0, len(e.Method)+len(e.SessionID)+len(e.Params))
	b = append(b, e.Method...)
	method := b[:len(e.Method):len(e.Method)]
	var sid, params []byte
	if e.SessionID != nil {
		b = append(b, e.SessionID...)
		sid = b[len(method):len(b):len(b)]
	}
	if e.Params != nil {
		n := len(b)
		b = append(b, e.Params...)
		params = b[n:len(b):len(b)]
	}
	return core.Cmd{Env: wire.Envelope{ID: e.ID, HasID: e.HasID, Method: method, SessionID: sid, Params: params}, M: k.M}
}

// InLine (core.Line) is the stage after route: a command for a tab that
// has a line waits at its end.
func InLine(c *core.ClientConn, k *core.Cmd) bool {
	if k.Held != nil || c.LineCount.Load() == 0 {
		return true // taken off the line, or no line at all
	}
	in := c.Inst
	st := in.Lock()
	l := linesOf(st)[core.LineKey{C: c, Tab: k.Route.Tab}]
	if l == nil || len(l.q) == 0 {
		in.Unlock()
		return true
	}
	h := &core.HeldCmd{Key: core.LineKey{C: c, Tab: k.Route.Tab}, Cmd: copyCmd(k), Method: k.M.Name, Stage: core.HoldWaiting}
	l.q = append(l.q, h)
	c.Inflight.Add(1)
	in.Unlock()
	k.Out.Kind = core.OutHeld
	return false
}

// StartDrain starts taking commands off key's line, unless a task does
// already.
func StartDrain(in *core.Instance, st *core.State, key core.LineKey) {
	l := linesOf(st)[key]
	if l == nil || l.draining {
		return
	}
	l.draining = true
	c := key.C
	c.Wg.Add(1)
	in.Tasks.Spawn("take commands off a line", func() {
		defer c.Wg.Done()
		drain(c, key)
	})
}

// drain takes the commands off key's line in order, until the line is
// empty or its first command waits for a person.
func drain(c *core.ClientConn, key core.LineKey) {
	in := c.Inst
	for {
		st := in.Lock()
		l := linesOf(st)[key]
		if l == nil {
			in.Unlock()
			return
		}
		if len(l.q) == 0 {
			delete(linesOf(st), key)
			c.LineCount.Add(-1)
			in.Unlock()
			return
		}
		h := l.q[0]
		if h.Stage == core.HoldAsked || h.Stage == core.HoldProbing {
			l.draining = false
			in.Unlock()
			return
		}
		stage, denial := h.Stage, h.Denial
		h.Running = true
		in.Unlock()
		k := &h.Cmd
		// heldAgain: judged again, the command was held again (for another
		// question, or while the page is looked at): it is not done.
		heldAgain := false
		switch {
		case in.IsStopped.Load():
			c.ReplyStopped(k.Env.ID, k.Env.SessionID, h.Method)
		case stage == core.HoldDenied:
			c.ReplyErrorRaw(k.Env.ID, k.Env.SessionID, core.CodeServerError, denial)
		default:
			k.Held = h
			c.Judge(k)
			heldAgain = k.Out.Kind == core.OutHeld
		}
		st = in.Lock()
		h.Running = false
		if linesOf(st)[key] != l {
			// The line was dropped meanwhile (Stop, the client left), and
			// Take left h to this task.
			dropRunning(c, st, h, heldAgain)
			return
		}
		switch {
		case len(l.q) == 0 || l.q[0] != h:
			// Carried out by a task that took it off the line itself (a
			// secret typed): on with the commands behind it.
			in.Unlock()
			continue
		case h.Stage == core.HoldAsked || h.Stage == core.HoldProbing:
			// Held again, and still waiting: whoever answers it starts the
			// line again (StartDrain), once this task is off it.
			l.draining = false
			in.Unlock()
			return
		case heldAgain:
			// Held again, and answered already (a look at the page that
			// ended before this task got here, whose StartDrain found the
			// line drained): it goes on from its new stage.
			in.Unlock()
			continue
		}
		l.q = l.q[1:]
		h.Off = true
		c.Inflight.Add(-1)
		in.Unlock()
	}
}

// dropRunning is drain's share of a line dropped while h was being
// judged, which Take leaves to the task that judges it: h is answered
// when it was held again (it would wait for good), and counts in flight no
// more. Called with the lock held; it releases it.
func dropRunning(c *core.ClientConn, st *core.State, h *core.HeldCmd, heldAgain bool) {
	in := c.Inst
	if h.Off {
		in.Unlock()
		return // taken off its line by the task that carried it out
	}
	h.Off = true
	if !heldAgain {
		in.Unlock()
		c.Inflight.Add(-1)
		return
	}
	if h.Stage == core.HoldAsked {
		st.UnaskLocked(h)
		st.Notify()
	}
	h.Stage = core.HoldDenied // its task, if any, finds it gone
	h.TargetID = core.TargetOf(h.Key.Tab)
	why := Gone
	if in.IsStopped.Load() {
		why = Stopped
	}
	in.Unlock()
	Answer(h, why, "")
}

// Occupy puts k at the head of its tab's line while the relay carries
// it out itself (a secret being typed): the client's later commands for
// the tab wait behind it. Release ends that.
func Occupy(c *core.ClientConn, k *core.Cmd) *core.HeldCmd {
	in := c.Inst
	st := in.Lock()
	defer in.Unlock()
	h := k.Held
	if h == nil {
		h = &core.HeldCmd{Key: core.LineKey{C: c, Tab: k.Route.Tab}, Method: k.M.Name}
		l := linesOf(st)[h.Key]
		if l == nil {
			l = &line{}
			linesOf(st)[h.Key] = l
			c.LineCount.Add(1)
		}
		l.q = append(l.q, h)
		c.Inflight.Add(1)
	}
	h.Stage = core.HoldProbing
	return h
}

// Release takes h, which the relay has carried out, off the head of
// its line, and lets the commands behind it go on.
func Release(c *core.ClientConn, h *core.HeldCmd) {
	in := c.Inst
	st := in.Lock()
	defer in.Unlock()
	l := linesOf(st)[h.Key]
	if l == nil || len(l.q) == 0 || l.q[0] != h {
		return // the line was dropped meanwhile
	}
	l.q = l.q[1:]
	h.Off = true
	c.Inflight.Add(-1)
	if len(l.q) == 0 {
		delete(linesOf(st), h.Key)
		c.LineCount.Add(-1)
		return
	}
	StartDrain(in, st, h.Key)
}

// Take takes every line of client c (nil: of every client) off the
// instance and returns their commands, for the caller to answer (Answer)
// once the lock is released. The navigations waiting for a person are
// the person's to fail first (core.Authority.TakeNavAsksLocked).
func Take(st *core.State, c *core.ClientConn) []*core.HeldCmd {
	var out []*core.HeldCmd
	ls := linesOf(st)
	for key, l := range ls {
		if c != nil && key.C != c {
			continue
		}
		for _, h := range l.q {
			if h.Running {
				continue // its task answers it
			}
			if h.Stage == core.HoldAsked {
				st.UnaskLocked(h)
			}
			h.TargetID = core.TargetOf(h.Key.Tab) // for Answer, without the lock
			h.Off = true
			out = append(out, h)
		}
		delete(ls, key)
		key.C.LineCount.Add(-1)
	}
	if len(out) > 0 {
		st.Notify()
	}
	return out
}

// Why a held command is answered without a person's answer: the
// automation was stopped, or its client left.
const (
	Stopped = iota
	Gone
)

// Answer answers h, taken off its line by Take, for why. Called without
// the lock.
func Answer(h *core.HeldCmd, why int, by string) {
	c := h.Key.C
	c.Inflight.Add(-1)
	asked := h.Stage == core.HoldAsked
	if why == Stopped && h.Cmd.M != nil {
		// (A line the relay occupies for a command it carries out itself,
		// Occupy, holds no copy of it: the task carrying it out answers
		// it.)
		c.ReplyStopped(h.Cmd.Env.ID, h.Cmd.Env.SessionID, h.Method)
	}
	if asked {
		answer := api.AnswerStopped
		if why == Gone {
			answer = api.AnswerGone
		}
		in := c.Inst
		in.Srv.Cfg.Metrics.Approvals[answer].Inc()
		in.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindApproval, Method: h.Method, Target: h.TargetID, Rule: h.Decision.Rule, Outcome: api.OutcomeDenied, Detail: answer + ": " + h.What})
	}
}

// Hold returns k's place in its tab's line: the one it holds already
// (judged again off its line), or a new one at the line's end. Called
// with the lock held.
func Hold(st *core.State, c *core.ClientConn, k *core.Cmd) *core.HeldCmd {
	if k.Held != nil {
		return k.Held
	}
	h := &core.HeldCmd{Key: core.LineKey{C: c, Tab: k.Route.Tab}, Cmd: copyCmd(k), Method: k.M.Name}
	ls := linesOf(st)
	l := ls[h.Key]
	if l == nil {
		l = &line{}
		ls[h.Key] = l
		c.LineCount.Add(1)
	}
	l.q = append(l.q, h)
	c.Inflight.Add(1)
	return h
}

// Live reports whether key's line is still on the instance: a task that
// looked at the page for the command at its head finds it gone when a
// Stop or the client leaving took it. Called with the lock held.
func Live(st *core.State, key core.LineKey) bool {
	return linesOf(st)[key] != nil
}
