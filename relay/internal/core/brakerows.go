package core

import "github.com/cdprelay/cdprelay/internal/wire"

// The brake's rows of the order (relay/order.go): its commands and
// events, and what a Stop lets go on.

// WantsBrake: the commands the brake has a word in (brake.go).
func WantsBrake(m *MethodInfo) bool { return m.Brake }

// BrakeStage (core.Brake): brake.go.
func (c *ClientConn) BrakeStage(k *Cmd) bool { return !c.brakeCommand(k) }

// BrakePause (core.BrakePause): a pause of the relay's own debugger
// (brake.go).
func (in *Instance) BrakePause(e *EventMsg) bool {
	if unpause, ours := in.pausedLocked(e.Tab.Id, string(e.Sid)); ours {
		e.Fx.unpause = unpause
		return false
	}
	return true
}

// LetGoOn (core.LetGoOn): what nobody the client knows of may answer
// (a blind tab's, and everything while the automation is stopped) goes on
// as the page made it.
func (in *Instance) LetGoOn(e *EventMsg) bool {
	off := e.Blind || in.stopped.Load()
	switch string(e.Method) {
	case "Fetch.requestPaused":
		if !e.Fx.paused.handled() && off {
			e.Fx.paused = pausedAction{kind: pausedContinue, requestID: string(wire.StringField(e.Params, "requestId"))}
		}
		return !e.Fx.paused.handled()
	case "Fetch.authRequired":
		if off {
			e.Fx.paused = pausedAction{kind: pausedAuthDefault, requestID: string(wire.StringField(e.Params, "requestId"))}
			return false
		}
	case "Debugger.paused":
		// A breakpoint or pause-on-exceptions set while the tab was on a
		// full site would freeze the person's page: the client may not
		// see the pause or resume it, so the relay resumes it.
		if off {
			e.Fx.unpause = true
			return false
		}
	}
	return true
}

// BrakeChild (core.BrakeChild): a new frame or worker gets the relay's
// Debugger (brake.go).
func (in *Instance) BrakeChild(e *EventMsg) bool {
	if e.NewChild != nil && brakesChild(ChildType(e)) {
		e.Fx.brakeChild = e.NewChild.Id
	}
	return true
}

// ResumeWaiting (core.ResumeWaiting): nobody the client knows of will
// resume a child that waits for a debugger: the page must not hang for
// being blind, or for the automation being stopped.
func (in *Instance) ResumeWaiting(e *EventMsg) bool {
	if e.NewChild != nil && e.Waiting && (e.Blind || in.stopped.Load()) {
		e.Fx.Resume = e.NewChild.Id
	}
	return true
}

// OwnDebugger (core.OwnDebugger): the relay's own Debugger (brake.go).
// A pause of a session that did not enable it (a client's DOMDebugger
// breakpoint or Debugger.pause on the relay's Debugger) has nobody to
// resume it.
func (in *Instance) OwnDebugger(e *EventMsg) bool {
	if !e.s.enabled["Debugger"] {
		e.Fx.unpause = string(e.Method) == "Debugger.paused"
		return false
	}
	return true
}
