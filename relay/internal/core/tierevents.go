package core

import (
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/access"
)

// FrameGuard (tiers.FrameGuard): not even the live view sees a blind
// tab, or a blind frame's pixels.
func (in *Instance) FrameGuard(e *EventMsg) bool {
	return e.Sid != nil || (e.Tab.Acc.Level != AccessBlind && !e.State.hasBlindChild(e.Tab))
}

// ChildFrames (tiers.ChildFrames): where a child session's frames are.
func (in *Instance) ChildFrames(e *EventMsg) bool {
	cs, st, t, params := e.child, e.State, e.Tab, e.Params
	if cs == nil {
		return true
	}
	switch string(e.Method) {
	case "Page.frameNavigated":
		// The child's own frame carries its parent's id: it is known
		// by being the child's target.
		if f := wire.Field(params, "frame"); f != nil {
			if id := string(wire.StringField(f, "id")); id == cs.targetID {
				// Committed: where it is now decides. A blind
				// one's entry stays, for the late events of its
				// navigation on its parent's session.
				if n, ok := t.BlindFrames[id]; ok && n.acc.Level != AccessBlind || ok && st.childAccess(string(wire.StringField(f, "url"))).Level != AccessBlind {
					st.frameCommitted(t, id)
				}
				st.setChildURL(cs, string(wire.StringField(f, "url"))+string(wire.StringField(f, "urlFragment")))
			} else {
				// A frame in the child's process: the child's
				// session reaches into it, so the child is as
				// strict as it.
				st.frameCommitted(t, id)
				st.setChildFrame(cs, id, string(wire.StringField(f, "url")))
			}
		}
	case "Page.frameDetached":
		if id := string(wire.StringField(params, "frameId")); id != cs.targetID {
			st.frameRemoved(t, id, params)
			st.setChildFrame(cs, id, "")
		}
	case "Page.frameStartedNavigating", "Page.frameRequestedNavigation":
		if id := string(wire.StringField(params, "frameId")); id == cs.targetID {
			st.setChildNav(cs, string(wire.StringField(params, "url")))
		} else {
			st.noteFrameNav(t, id, string(wire.StringField(params, "url")), "")
		}
	}
	return true
}

// Requests (tiers.Requests): the requests on their way, and which of them
// go to a blind site.
func (in *Instance) Requests(e *EventMsg) bool {
	e.State.noteRequest(e.Tab, e.child, e.Method, e.Params)
	if in.HasTiers() {
		e.State.noteBlindRequest(e.Tab, e.Method, e.Params)
	}
	return true
}

// BlindSources (tiers.BlindSources): a blind site's script or style
// sheet, in a page that loaded it.
func (in *Instance) BlindSources(e *EventMsg) bool {
	return !in.HasTiers() || !e.State.noteBlindSource(e.Tab, string(e.Sid), e.Method, e.Params)
}

// BlindEvent (tiers.Blind): whether anything the client knows of may see
// the event; the rows after read it.
func (in *Instance) BlindEvent(e *EventMsg) bool {
	t, st, method, params := e.Tab, e.State, e.Method, e.Params
	e.blind = t.Acc.Level == AccessBlind || (e.child != nil && e.child.Acc.Level == AccessBlind) ||
		((len(t.BlindFrames) > 0 || len(t.blindReqs) > 0 || bytesHasPrefix(method, "Target.")) && st.Inst.HasTiers() &&
			(st.aboutBlindFrame(t, method, params) ||
				((bytesHasPrefix(method, "Network.") || bytesHasPrefix(method, "Fetch.")) && t.blindRequest(method, params)) ||
				(string(method) == "Debugger.paused" && t.pausedInBlind(string(e.Sid), params))))
	return true
}

// GuardWorld (tiers.Guard): the read-only guard goes into a client's new
// isolated world before the client hears of the world.
func (in *Instance) GuardWorld(e *EventMsg) bool {
	if e.isolated != 0 && e.Tab.guard != nil {
		_, src := access.GuardFrom(*e.Tab.guard)
		e.State.Fire(e.Tab.Id, string(e.Sid), "Runtime.evaluate", map[string]any{"expression": src, "contextId": e.isolated, "silent": true})
	}
	return true
}

// ChildPage (tiers.ChildPage): with tiers, follow where an out-of-process
// frame goes.
func (in *Instance) ChildPage(e *EventMsg) bool {
	if e.newChild != nil && string(childType(e)) == "iframe" && in.HasTiers() {
		e.State.Fire(e.Tab.Id, e.newChild.Id, "Page.enable", nil)
	}
	return true
}

// BlindChild (tiers.BlindChild): the client does not hear of a frame it
// may not see, and nobody else resumes it.
func (in *Instance) BlindChild(e *EventMsg) bool {
	if e.newChild != nil && e.newChild.Acc.Level == AccessBlind {
		if e.waiting {
			e.fx.resume = e.newChild.Id
		}
		return false
	}
	return true
}

// Withhold (tiers.Withhold): a blind event goes no further.
func (in *Instance) Withhold(e *EventMsg) bool { return !e.blind }
