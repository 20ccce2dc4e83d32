package tiers

import (
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// FrameGuard (tiers.FrameGuard): not even the live view sees a blind
// tab, or a blind frame's pixels.
func FrameGuard(in *core.Instance, e *core.EventMsg) bool {
	return e.Sid != nil || (e.Tab.Acc.Level != api.Blind && !hasBlindChild(e.State, e.Tab))
}

// Frames (tiers.Frames): where the sub-frames of a tab's document
// (tabframes.go) and of a child session's are.
func Frames(in *core.Instance, e *core.EventMsg) bool {
	cs, st, t, params := e.Child, e.State, e.Tab, e.Params
	if e.Sid == nil {
		tabFrames(st, t, e.Method, params)
		return true
	}
	if cs == nil {
		return true
	}
	switch string(e.Method) {
	case "Page.frameNavigated":
		// The child's own frame carries its parent's id: it is known
		// by being the child's target.
		if f := wire.Field(params, "frame"); f != nil {
			if id := string(wire.StringField(f, "id")); id == cs.TargetID {
				// Committed: where it is now decides. A blind
				// one's entry stays, for the late events of its
				// navigation on its parent's session.
				if n, ok := t.BlindFrames[id]; ok && n.Acc.Level != api.Blind || ok && st.ChildAccess(string(wire.StringField(f, "url"))).Level != api.Blind {
					frameCommitted(st, t, id)
				}
				setChildURL(st, cs, string(wire.StringField(f, "url"))+string(wire.StringField(f, "urlFragment")))
			} else {
				// A frame in the child's process: the child's
				// session reaches into it, so the child is as
				// strict as it.
				frameCommitted(st, t, id)
				setChildFrame(st, cs, id, string(wire.StringField(f, "url")))
			}
		}
	case "Page.frameDetached":
		if id := string(wire.StringField(params, "frameId")); id != cs.TargetID {
			frameRemoved(st, t, id, params)
			setChildFrame(st, cs, id, "")
		}
	case "Page.frameStartedNavigating", "Page.frameRequestedNavigation":
		if id := string(wire.StringField(params, "frameId")); id == cs.TargetID {
			setChildNav(st, cs, string(wire.StringField(params, "url")))
		} else {
			noteFrameNav(st, t, id, string(wire.StringField(params, "url")), "")
		}
	}
	return true
}

// Requests (tiers.Requests): the requests on their way, and which of them
// go to a blind site.
func Requests(in *core.Instance, e *core.EventMsg) bool {
	noteRequest(e.State, e.Tab, e.Child, e.Method, e.Params)
	if in.HasTiers() {
		noteBlindRequest(e.State, e.Tab, e.Method, e.Params)
	}
	return true
}

// BlindSources (tiers.BlindSources): a blind site's script or style
// sheet, in a page that loaded it.
func BlindSources(in *core.Instance, e *core.EventMsg) bool {
	return !in.HasTiers() || !noteBlindSource(e.State, e.Tab, string(e.Sid), e.Method, e.Params)
}

// BlindEvent (tiers.Blind): whether anything the client knows of may see
// the event; the rows after read it.
func BlindEvent(in *core.Instance, e *core.EventMsg) bool {
	t, st, method, params := e.Tab, e.State, e.Method, e.Params
	e.Blind = t.Acc.Level == api.Blind || (e.Child != nil && e.Child.Acc.Level == api.Blind) ||
		((len(t.BlindFrames) > 0 || len(t.BlindReqs) > 0 || core.BytesHasPrefix(method, "Target.")) && st.Inst.HasTiers() &&
			(aboutBlindFrame(st, t, method, params) ||
				((core.BytesHasPrefix(method, "Network.") || core.BytesHasPrefix(method, "Fetch.")) && blindRequest(t, method, params)) ||
				(string(method) == "Debugger.paused" && pausedInBlind(t, string(e.Sid), params))))
	return true
}

// GuardWorld (tiers.Guard): the read-only guard goes into a client's new
// isolated world before the client hears of the world.
func GuardWorld(in *core.Instance, e *core.EventMsg) bool {
	if e.Isolated == 0 {
		return true
	}
	if g := tabSlot.Of(e.Tab).guard; g != nil {
		_, src := access.GuardFrom(*g)
		e.State.Fire(e.Tab.Id, string(e.Sid), "Runtime.evaluate", map[string]any{"expression": src, "contextId": e.Isolated, "silent": true})
	}
	return true
}

// ChildPage (tiers.ChildPage): with tiers, follow where an out-of-process
// frame goes.
func ChildPage(in *core.Instance, e *core.EventMsg) bool {
	if e.NewChild != nil && string(core.ChildType(e)) == "iframe" && in.HasTiers() {
		e.State.Fire(e.Tab.Id, e.NewChild.Id, "Page.enable", nil)
	}
	return true
}

// BlindChild (tiers.BlindChild): the client does not hear of a frame it
// may not see, and nobody else resumes it.
func BlindChild(in *core.Instance, e *core.EventMsg) bool {
	if e.NewChild != nil && e.NewChild.Acc.Level == api.Blind {
		if e.Waiting {
			e.Fx.Resume = e.NewChild.Id
		}
		return false
	}
	return true
}

// Withhold (tiers.Withhold): a blind event goes no further.
func Withhold(in *core.Instance, e *core.EventMsg) bool { return !e.Blind }
