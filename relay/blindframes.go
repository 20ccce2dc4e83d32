package relay

import "github.com/cdprelay/cdprelay/internal/wire"

// Frames on their way to a blind site.
//
// A sub-frame's navigation is reported on the session of the frame that
// holds it (its Document request, Page.frameStartedNavigating) before the
// frame commits, and before Chrome knows whether the frame will share its
// parent's process (then the tab's own session reaches into it, and the
// tab is as strict as the frame from its commit on: access.go) or get a
// process and a session of its own (then the frame is judged on that
// session). Either way nothing of a blind page may reach the client: from
// the first event that says a frame is on its way to a blind site, the
// events about it (its frame id, its navigation's request id, its target)
// are withheld, and a session Chrome attaches for it is blind from the
// start, so that the client is never told of it.

// blindNav is a sub-frame's navigation to a blind site.
type blindNav struct {
	url string
	req string // the navigation's request id: its Network events name no frame
}

// noteFrameNav records that sub-frame id of t is on its way to url, with
// request req ("" when the event has none).
func (st *state) noteFrameNav(t *tab, id, url, req string) {
	if id == "" || url == "" || !st.in.hasTiers() {
		return
	}
	if n, ok := t.blindFrames[id]; ok {
		// Once blind, blind until it commits; a redirect names the same
		// request.
		if req != "" && n.req == "" {
			n.req = req
			t.blindFrames[id] = n
		}
		return
	}
	a := st.navAccess(url)
	if a.level != accessBlind {
		return
	}
	if t.blindFrames == nil {
		t.blindFrames = make(map[string]blindNav)
	}
	t.blindFrames[id] = blindNav{url: url, req: req}
	st.observe(Event{Actor: ActorRelay, Kind: KindAccess, Target: t.targetID, Rule: a.rule, Outcome: OutcomeOK,
		Detail: "a frame is on its way to " + origin(url) + ": blind"})
}

// frameCommitted forgets sub-frame id's pending navigation: where it is
// now decides (setFrame, or its own session's access).
func (t *tab) frameCommitted(id string) {
	delete(t.blindFrames, id)
}

// blindNavOf is a sub-frame's pending navigation, for the session Chrome
// attached for it. The entry stays: the navigation's request goes on being
// reported on the session that started it.
func (t *tab) blindNavOf(targetID string) string {
	return t.blindFrames[targetID].url
}

// aboutBlindFrame reports whether an event of t is about a frame the
// client may not see: one on its way to a blind site, or one with a blind
// session of its own.
func (st *state) aboutBlindFrame(t *tab, method, params []byte) bool {
	switch {
	case bytesHasPrefix(method, "Target."):
		id := wire.StringField(wire.Field(params, "targetInfo"), "targetId")
		if id == nil {
			id = wire.StringField(params, "targetId")
		}
		if len(id) == 0 {
			return false
		}
		if _, ok := t.blindFrames[string(id)]; ok {
			return true
		}
		for _, s := range st.sessions {
			if s.child && s.tab == t && s.targetID == string(id) && s.acc.level == accessBlind {
				return true
			}
		}
		return false
	case len(t.blindFrames) == 0:
		return false
	case bytesHasPrefix(method, "Network."):
		if req := wire.StringField(params, "requestId"); len(req) > 0 {
			for _, n := range t.blindFrames {
				if n.req == string(req) {
					return true
				}
			}
		}
	case !bytesHasPrefix(method, "Page."):
		return false
	}
	if f := wire.StringField(params, "frameId"); len(f) > 0 {
		_, ok := t.blindFrames[string(f)]
		return ok
	}
	return false
}
