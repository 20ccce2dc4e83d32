package core

import (
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// Lines: the order of a client's commands for a tab around a held one.
//
// Order is kept per tab: the client's later commands for a tab with a held
// command wait in line behind it and go on, in order, once it is answered;
// commands for other tabs go on meanwhile. Held and waiting commands count
// toward the client's commands in flight. Stop denies them all at once.
//
// The asking of the person, which holds a command at the head of its line,
// is the person's stage's (relay/internal/person: asking.go).

// lineKey names a line of commands kept in order: one client's commands
// for one tab (nil: commands that reach no tab).
type lineKey struct {
	c   *ClientConn
	Tab *Tab
}

// line is the commands of one lineKey held up behind a held one, the held
// one first.
type line struct {
	q        []*HeldCmd
	draining bool // a task is taking commands off the line
}

type holdStage uint8

const (
	HoldWaiting  holdStage = iota // behind another: judged when its turn comes
	HoldProbing                   // the relay looks at the page, to describe or judge it
	HoldAsked                     // shown to a person, waiting for their answer
	HoldApproved                  // approved: judged again, the question not asked again
	HoldDenied                    // denied: its error is due
)

// SeenTarget is what the relay saw where a command acts when it asked a
// person about it: looked at again when the person approves.
type SeenTarget struct {
	OK     bool // the page could be looked at
	Target api.PointTarget
	Node   int64 // Chrome's backendNodeId of the element; 0 if unknown
	Via    *Session
}

// HeldCmd is a command in a line. Its fields are guarded by the
// instance's mutex; Cmd belongs to whoever takes it off the line.
type HeldCmd struct {
	Key    lineKey
	Cmd    Cmd
	Method string // k's, for records while k is being judged
	Stage  holdStage
	// running: a line's task is judging k now, and answers it.
	running bool
	// Approved: a person approved the command once; nothing more is asked.
	Approved bool
	// pixelsSeen: the relay looked at the page's fields holding a secret
	// before this screenshot (package creds); not again.
	PixelsSeen bool

	// While asked: the approval's id (the person's stage numbers and
	// answers them: Authority.Answer), why and what it is asked about.
	AskID    int64
	Decision Decision // the asking decision
	What     string
	// Once denied: the error for the client.
	Denial string
	// target is the tab's target id, noted under the lock when h is taken
	// off its line (takeHeld), for the audit record answer makes.
	target string

	// Seen is what the relay saw where the command acts when it asked;
	// byPerson: a person approved it; checked: the page was looked at
	// again since (the person's stage: recheck.go).
	Seen     SeenTarget
	ByPerson bool
	Checked  bool
	// off: taken off its line, and no longer counted in flight for it.
	off bool
}

// copyCmd copies k's envelope into bytes of its own, for a command that
// outlives the read buffer.
func copyCmd(k *Cmd) Cmd {
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
	return Cmd{Env: wire.Envelope{ID: e.ID, HasID: e.HasID, Method: method, SessionID: sid, Params: params}, M: k.M}
}

// InLine is the stage after route: a command for a tab that has a line
// waits at its end.
func (c *ClientConn) InLine(k *Cmd) bool {
	if k.Held != nil || c.lines.Load() == 0 {
		return true // taken off the line, or no line at all
	}
	in := c.Inst
	st := in.Lock()
	l := st.Lines[lineKey{c, k.Route.Tab}]
	if l == nil || len(l.q) == 0 {
		in.Unlock()
		return true
	}
	h := &HeldCmd{Key: lineKey{c, k.Route.Tab}, Cmd: copyCmd(k), Method: k.M.Name, Stage: HoldWaiting}
	l.q = append(l.q, h)
	c.Inflight.Add(1)
	in.Unlock()
	k.Out.Kind = OutHeld
	return false
}

// StartDrain starts taking commands off key's line, unless a task does
// already.
func (in *Instance) StartDrain(st *State, key lineKey) {
	l := st.Lines[key]
	if l == nil || l.draining {
		return
	}
	l.draining = true
	c := key.c
	c.Wg.Add(1)
	in.Tasks.Spawn("take commands off a line", func() {
		defer c.Wg.Done()
		c.drain(key)
	})
}

// drain takes the commands off key's line in order, until the line is
// empty or its first command waits for a person.
func (c *ClientConn) drain(key lineKey) {
	in := c.Inst
	for {
		st := in.Lock()
		l := st.Lines[key]
		if l == nil {
			in.Unlock()
			return
		}
		if len(l.q) == 0 {
			delete(st.Lines, key)
			c.lines.Add(-1)
			in.Unlock()
			return
		}
		h := l.q[0]
		if h.Stage == HoldAsked || h.Stage == HoldProbing {
			l.draining = false
			in.Unlock()
			return
		}
		stage, denial := h.Stage, h.Denial
		h.running = true
		in.Unlock()
		k := &h.Cmd
		// heldAgain: judged again, the command was held again (for another
		// question, or while the page is looked at): it is not done.
		heldAgain := false
		switch {
		case in.IsStopped.Load():
			c.replyStopped(k.Env.ID, k.Env.SessionID, h.Method)
		case stage == HoldDenied:
			c.replyErrorRaw(k.Env.ID, k.Env.SessionID, CodeServerError, denial)
		default:
			k.Held = h
			c.judge(k)
			heldAgain = k.Out.Kind == OutHeld
		}
		st = in.Lock()
		h.running = false
		if st.Lines[key] != l {
			// The line was dropped meanwhile (Stop, the client left), and
			// takeHeld left h to this task.
			c.dropRunning(st, h, heldAgain)
			return
		}
		switch {
		case len(l.q) == 0 || l.q[0] != h:
			// Carried out by a task that took it off the line itself (a
			// secret typed): on with the commands behind it.
			in.Unlock()
			continue
		case h.Stage == HoldAsked || h.Stage == HoldProbing:
			// Held again, and still waiting: whoever answers it starts the
			// line again (startDrain), once this task is off it.
			l.draining = false
			in.Unlock()
			return
		case heldAgain:
			// Held again, and answered already (a look at the page that
			// ended before this task got here, whose startDrain found the
			// line drained): it goes on from its new stage.
			in.Unlock()
			continue
		}
		l.q = l.q[1:]
		h.off = true
		c.Inflight.Add(-1)
		in.Unlock()
	}
}

// dropRunning is drain's share of a line dropped while h was being
// judged, which takeHeld leaves to the task that judges it: h is answered
// when it was held again (it would wait for good), and counts in flight no
// more. Called with the lock held; it releases it.
func (c *ClientConn) dropRunning(st *State, h *HeldCmd, heldAgain bool) {
	in := c.Inst
	if h.off {
		in.Unlock()
		return // taken off its line by the task that carried it out
	}
	h.off = true
	if !heldAgain {
		in.Unlock()
		c.Inflight.Add(-1)
		return
	}
	if h.Stage == HoldAsked {
		authority.UnaskLocked(st, h)
		st.Notify()
	}
	h.Stage = HoldDenied // its task, if any, finds it gone
	h.target = TargetOf(h.Key.Tab)
	why := heldGone
	if in.IsStopped.Load() {
		why = HeldStopped
	}
	in.Unlock()
	h.Answer(why, "")
}

// OccupyLine puts k at the head of its tab's line while the relay carries
// it out itself (a secret being typed): the client's later commands for
// the tab wait behind it. releaseLine ends that.
func (c *ClientConn) OccupyLine(k *Cmd) *HeldCmd {
	in := c.Inst
	st := in.Lock()
	defer in.Unlock()
	h := k.Held
	if h == nil {
		h = &HeldCmd{Key: lineKey{c, k.Route.Tab}, Method: k.M.Name}
		l := st.Lines[h.Key]
		if l == nil {
			l = &line{}
			st.Lines[h.Key] = l
			c.lines.Add(1)
		}
		l.q = append(l.q, h)
		c.Inflight.Add(1)
	}
	h.Stage = HoldProbing
	return h
}

// ReleaseLine takes h, which the relay has carried out, off the head of
// its line, and lets the commands behind it go on.
func (c *ClientConn) ReleaseLine(h *HeldCmd) {
	in := c.Inst
	st := in.Lock()
	defer in.Unlock()
	l := st.Lines[h.Key]
	if l == nil || len(l.q) == 0 || l.q[0] != h {
		return // the line was dropped meanwhile
	}
	l.q = l.q[1:]
	h.off = true
	c.Inflight.Add(-1)
	if len(l.q) == 0 {
		delete(st.Lines, h.Key)
		c.lines.Add(-1)
		return
	}
	in.StartDrain(st, h.Key)
}

// takeHeld takes every line of client c (nil: of every client) off the
// instance and returns their commands, for the caller to answer.
func (st *State) TakeHeld(c *ClientConn) []*HeldCmd {
	// The navigations waiting for a person are failed: for a Stop (c
	// nil) or the client leaving.
	switch {
	case c == nil:
		authority.TakeNavAsksLocked(st, api.AnswerStopped)
	case c == st.Client:
		authority.TakeNavAsksLocked(st, api.AnswerGone)
	}
	var out []*HeldCmd
	for key, l := range st.Lines {
		if c != nil && key.c != c {
			continue
		}
		for _, h := range l.q {
			if h.running {
				continue // its task answers it
			}
			if h.Stage == HoldAsked {
				authority.UnaskLocked(st, h)
			}
			h.target = TargetOf(h.Key.Tab) // for answer, without the lock
			h.off = true
			out = append(out, h)
		}
		delete(st.Lines, key)
		key.c.lines.Add(-1)
	}
	if len(out) > 0 {
		st.Notify()
	}
	return out
}

// heldStopped and heldGone are why a held command is answered without a
// person's answer.
const (
	HeldStopped = iota
	heldGone
)

// answer answers h taken off its line by takeHeld.
func (h *HeldCmd) Answer(why int, by string) {
	c := h.Key.c
	c.Inflight.Add(-1)
	asked := h.Stage == HoldAsked
	if why == HeldStopped && h.Cmd.M != nil {
		// (A line the relay occupies for a command it carries out itself,
		// OccupyLine, holds no copy of it: the task carrying it out
		// answers it.)
		c.replyStopped(h.Cmd.Env.ID, h.Cmd.Env.SessionID, h.Method)
	}
	if asked {
		answer := api.AnswerStopped
		if why == heldGone {
			answer = api.AnswerGone
		}
		in := c.Inst
		in.Srv.Cfg.Metrics.Approvals[answer].Inc()
		in.Observe(Event{Actor: api.ActorRelay, Kind: api.KindApproval, Method: h.Method, Target: h.target, Rule: h.Decision.Rule, Outcome: api.OutcomeDenied, Detail: answer + ": " + h.What})
	}
}

// HeldInLine returns k's place in its tab's line: the one it holds
// already (judged again off its line), or a new one at the line's end.
// Called with the lock held.
func (st *State) HeldInLine(c *ClientConn, k *Cmd) *HeldCmd {
	if k.Held != nil {
		return k.Held
	}
	h := &HeldCmd{Key: lineKey{c, k.Route.Tab}, Cmd: copyCmd(k), Method: k.M.Name}
	l := st.Lines[h.Key]
	if l == nil {
		l = &line{}
		st.Lines[h.Key] = l
		c.lines.Add(1)
	}
	l.q = append(l.q, h)
	c.Inflight.Add(1)
	return h
}
