package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/replay"
)

// The acting rows of the commands table (order.go): what the relay does
// itself with a command the judges let through (types a secret, answers
// it, sends it as the fence has it), and what a command that goes to the
// tab does on its way.

// WantsEmulate: the methods emulated answers for some session: the
// browser's and the targets' (at any level), a history entry, and the
// domain switches of a tab's sessions.
func WantsEmulate(m *MethodInfo) bool {
	return m.Domain == cdp.DomainBrowser || m.Domain == cdp.DomainTarget || m.Enable || m.Disable ||
		m.Name == "Page.navigateToHistoryEntry" || m.Name == "Page.setDownloadBehavior"
}

// 11. emulate (core.Emulate): what the relay answers itself.
func (c *ClientConn) Emulate(k *Cmd) bool {
	h := Emulated(k.M, k.Route.Sess)
	if h == nil {
		return true
	}
	k.Out.Kind = OutEmulated
	cl := Call{Id: k.Env.ID, Method: k.M.Name, Sess: k.Route.Sess, Args: k.Args, Acc: k.Route.Acc, Via: k.Route.Via, ReplyTo: k.Route.ReplyTo, Stop: c.Inst.StopMark(), Approved: k.Held != nil && k.Held.Approved}
	if k.Env.Params != nil {
		cl.Params = append([]byte(nil), k.Env.Params...)
	}
	if !h.Blocking {
		h.Fn(c, cl)
		return false
	}
	// Handlers that wait for the extension run beside the read loop, so a
	// slow attach does not hold up the client's other traffic.
	c.Wg.Add(1)
	c.Inst.Tasks.Spawn("emulate "+cl.Method, func() {
		defer c.Wg.Done()
		h.Fn(c, cl)
	})
	return false
}

// 12. forward: what goes to the tab, row by row.

// NeedsPage (core.NeedsPage): a command for a tab needs one.
func (c *ClientConn) NeedsPage(k *Cmd) bool {
	if k.Route.Via == nil {
		return c.Failed(k, CodeServerError, "cdprelay: "+k.M.Name+" needs a page, and no tab is attached")
	}
	return true
}

// SendStage (core.Send): the command goes to its tab; one whose effect a
// resume sets again is kept for that (resume.go).
func (c *ClientConn) SendStage(k *Cmd) bool {
	if k.M.Replay != replay.None {
		if k.Route.Top {
			c.sendKept(k)
			return true
		}
		c.keepFrameSetting(k)
	}
	c.Send(k)
	return true
}
