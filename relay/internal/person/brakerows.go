package person

import (
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// The brake's rows of the order (relay/order.go): its commands and
// events, and what a Stop lets go on; and what it hears of a client's
// Debugger (BrakeLifecycle).

// WantsBrake reports whether the brake has a word in m (brake.go).
func WantsBrake(m *core.MethodInfo) bool { return m.Brake }

// BrakeStage (person.Brake): brake.go.
func BrakeStage(c *core.ClientConn, k *core.Cmd) bool { return !brakeCommand(c, k) }

// BrakePause (person.BrakePause): a pause of the relay's own debugger
// (brake.go).
func BrakePause(in *core.Instance, e *core.EventMsg) bool {
	if unpause, ours := pausedLocked(in, e.Tab.Id, string(e.Sid)); ours {
		e.Fx.Unpause = unpause
		return false
	}
	return true
}

// LetGoOn (person.LetGoOn): what nobody the client knows of may answer
// (a blind tab's, and everything while the automation is stopped) goes on
// as the page made it. What it sends goes once the lock is released.
func LetGoOn(in *core.Instance, e *core.EventMsg) bool {
	off := e.Blind || in.IsStopped.Load()
	switch string(e.Method) {
	case "Fetch.requestPaused":
		// (What the navigation backstop answered does not come this far.)
		if off {
			e.State.Fire(e.Tab.Id, string(e.Sid), "Fetch.continueRequest", map[string]string{"requestId": string(wire.StringField(e.Params, "requestId"))})
			return false
		}
	case "Fetch.authRequired":
		if off {
			e.State.Fire(e.Tab.Id, string(e.Sid), "Fetch.continueWithAuth", map[string]any{
				"requestId":             string(wire.StringField(e.Params, "requestId")),
				"authChallengeResponse": map[string]string{"response": "Default"},
			})
			return false
		}
	case "Debugger.paused":
		// A breakpoint or pause-on-exceptions set while the tab was on a
		// full site would freeze the person's page: the client may not
		// see the pause or resume it, so the relay resumes it.
		if off {
			e.Fx.Unpause = true
			return false
		}
	}
	return true
}

// BrakeChild (person.BrakeChild): a new frame or worker gets the relay's
// Debugger (brake.go).
func BrakeChild(in *core.Instance, e *core.EventMsg) bool {
	if e.NewChild != nil && brakesChild(core.ChildType(e)) {
		e.Fx.BrakeChild = e.NewChild.Id
	}
	return true
}

// ResumeWaiting (person.ResumeWaiting): nobody the client knows of will
// resume a child that waits for a debugger: the page must not hang for
// being blind, or for the automation being stopped.
func ResumeWaiting(in *core.Instance, e *core.EventMsg) bool {
	if e.NewChild != nil && e.Waiting && (e.Blind || in.IsStopped.Load()) {
		e.Fx.Resume = e.NewChild.Id
	}
	return true
}

// OwnDebugger (person.OwnDebugger): the relay's own Debugger (brake.go).
// A pause of a session that did not enable it (a client's DOMDebugger
// breakpoint or Debugger.pause on the relay's Debugger) has nobody to
// resume it.
func OwnDebugger(in *core.Instance, e *core.EventMsg) bool {
	if !e.Sess.Enabled["Debugger"] {
		e.Fx.Unpause = string(e.Method) == "Debugger.paused"
		return false
	}
	return true
}

// BrakeLifecycle is what the brake hears of a client's domains
// (core.AddLifecycle): its Debugger switched on or off on a tab's own
// session.
func BrakeLifecycle() core.Lifecycle {
	return core.Lifecycle{Switched: func(c *core.ClientConn, s *core.Session, domain string, on bool) {
		if domain == "Debugger" {
			debuggerSwitched(c, s, on)
		}
	}}
}

// debuggerSwitched is the domain switch's share for a tab's own session: the
// client's Debugger.enable starts from a fresh Debugger; its disable,
// answered by the relay, gives the relay's own back.
func debuggerSwitched(c *core.ClientConn, s *core.Session, on bool) {
	if s == nil || s.Tab == nil {
		return
	}
	if on {
		c.Ext().Fire(s.Tab.Id, "", "Debugger.disable", nil)
		return
	}
	c.Inst.Lock()
	other := c.Inst.St.DomainWanted(s.Tab, s, "Debugger")
	c.Inst.Unlock()
	if !other {
		brakeReset(c.Ext(), s.Tab.Id, "")
	}
}
