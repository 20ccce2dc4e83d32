package core

import (
	"encoding/json"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
)

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

// blindNav is a sub-frame's navigation to a site that is not full (the
// map keeps read-only ones too: the tab's scripts for new documents are
// out of Chrome while one is pending, initscripts.go).
type blindNav struct {
	url string
	req string // the navigation's request id: its Network events name no frame
	Acc TabAccess
}

// maxPendingFrames bounds the frames followed on their way to a site that
// is not full; a page with more than that is blind until its next
// document (computeAccess).
const MaxPendingFrames = 4096

// NoteFrameNav records that sub-frame id of t is on its way to url, with
// request req ("" when the event has none).
func (st *State) NoteFrameNav(t *Tab, id, url, req string) {
	if id == "" || url == "" || !st.Inst.HasTiers() {
		return
	}
	// A frame of an extension's page is blind as a frame that shows one.
	a := st.ChildAccess(url)
	n, ok := t.BlindFrames[id]
	if ok {
		// As strict as the strictest place it is on its way to, until it
		// commits; a redirect names the same request.
		if req != "" && n.req == "" {
			n.req = req
		}
		if a.Level > n.Acc.Level {
			n.Acc, n.url = a, url
		}
		t.BlindFrames[id] = n
		st.syncScripts(t)
		return
	}
	if a.Level == api.Full {
		return
	}
	if len(t.BlindFrames) >= MaxPendingFrames {
		st.Inst.Srv.Cfg.Metrics.Limited[metrics.LimitFrames].Inc()
		return // blind until its next document already; no more kept (bounds.go)
	}
	if t.BlindFrames == nil {
		t.BlindFrames = make(map[string]blindNav)
	}
	t.BlindFrames[id] = blindNav{url: url, req: req, Acc: a}
	st.Observe(Event{Actor: api.ActorRelay, Kind: api.KindAccess, Target: t.TargetID, Rule: a.Rule, Outcome: api.OutcomeOK,
		Detail: "a frame is on its way to " + api.Origin(url) + ": " + a.Level.String()})
	if len(t.BlindFrames) >= MaxPendingFrames {
		if was, changed := st.UpdateAccess(t); changed {
			st.AccessChanged(t, was)
		}
	}
	st.syncScripts(t)
}

// FrameCommitted forgets sub-frame id's pending navigation: where it is
// now decides (setFrame, or its own session's access).
func (st *State) FrameCommitted(t *Tab, id string) {
	if _, ok := t.BlindFrames[id]; ok {
		delete(t.BlindFrames, id)
		st.syncScripts(t)
	}
}

// pendingBlind reports whether a frame of t is on its way to a blind site.
func (t *Tab) pendingBlind() bool {
	for _, n := range t.BlindFrames {
		if n.Acc.Level == api.Blind {
			return true
		}
	}
	return false
}

// blindNavOf is a sub-frame's pending navigation, for the session Chrome
// attached for it. The entry stays: the navigation's request goes on being
// reported on the session that started it.
func (t *Tab) blindNavOf(targetID string) (string, TabAccess) {
	n := t.BlindFrames[targetID]
	return n.url, n.Acc
}

// AboutBlindFrame reports whether an event of t is about a frame the
// client may not see: one on its way to a blind site, or one with a blind
// session of its own.
func (st *State) AboutBlindFrame(t *Tab, method, params []byte) bool {
	switch {
	case BytesHasPrefix(method, "Target."):
		id := wire.StringField(wire.Field(params, "targetInfo"), "targetId")
		if id == nil {
			id = wire.StringField(params, "targetId")
		}
		if len(id) == 0 {
			return false
		}
		if n, ok := t.BlindFrames[string(id)]; ok && n.Acc.Level == api.Blind {
			return true
		}
		for _, s := range st.Sessions {
			if s.Child && s.Tab == t && s.TargetID == string(id) && s.Acc.Level == api.Blind {
				return true
			}
		}
		return false
	case len(t.BlindFrames) == 0:
		return false
	case BytesHasPrefix(method, "Network."), BytesHasPrefix(method, "Fetch."):
		// A Fetch pause names the Network request as networkId.
		req := wire.StringField(params, "requestId")
		if BytesHasPrefix(method, "Fetch.") {
			req = wire.StringField(params, "networkId")
		}
		if len(req) > 0 {
			for _, n := range t.BlindFrames {
				if n.req == string(req) && n.Acc.Level == api.Blind {
					return true
				}
			}
		}
	case !BytesHasPrefix(method, "Page."):
		return false
	}
	if f := wire.StringField(params, "frameId"); len(f) > 0 {
		n, ok := t.BlindFrames[string(f)]
		return ok && n.Acc.Level == api.Blind
	}
	return false
}

// FrameRemoved forgets sub-frame id of t when the page removed it (not
// when it moved to a process of its own: its session, which may attach
// after, is judged by where it was going).
func (st *State) FrameRemoved(t *Tab, id string, params []byte) {
	if string(wire.StringField(params, "reason")) == "remove" {
		st.FrameCommitted(t, id)
	}
}

// A full page may load a blind site's resources itself (an image, a
// script, a style sheet, a fetch): the page's own script cannot read them
// across origins, but DevTools could (a response body, a resource's
// content). Their requests are followed like a blind frame's: their
// events are withheld and their bodies refused.

// NoteBlindRequest records the request of a Network.requestWillBeSent or
// Fetch.requestPaused of t when it goes to a blind site.
func (st *State) NoteBlindRequest(t *Tab, method, params []byte) {
	u := wire.StringField(wire.Field(params, "request"), "url")
	if len(u) == 0 || st.UrlAccess(string(u)).Level != api.Blind {
		return
	}
	id := wire.StringField(params, "requestId")
	if string(method) == "Fetch.requestPaused" {
		id = wire.StringField(params, "networkId")
	}
	if len(id) == 0 {
		return
	}
	if t.BlindReqs == nil {
		t.BlindReqs = make(map[string]bool)
	}
	if !t.BlindReqs[string(id)] {
		if len(t.BlindReqs) >= MaxPendingFrames {
			st.Inst.Srv.Cfg.Metrics.Limited[metrics.LimitFrames].Inc()
			return // blind until its next document already; no more kept
		}
		t.BlindReqs[string(id)] = true
		if len(t.BlindReqs) >= MaxPendingFrames {
			if was, changed := st.UpdateAccess(t); changed {
				st.AccessChanged(t, was)
			}
		}
	}
}

// BlindRequest reports whether a Network or Fetch event of t is about a
// request to a blind site.
func (t *Tab) BlindRequest(method, params []byte) bool {
	if len(t.BlindReqs) == 0 {
		return false
	}
	key := "requestId"
	if BytesHasPrefix(method, "Fetch.") {
		key = "networkId"
	}
	id := wire.StringField(params, key)
	return len(id) > 0 && t.BlindReqs[string(id)]
}

// NoteBlindSource records a script (Debugger.scriptParsed) or a style
// sheet (CSS.styleSheetAdded) of t's session sid that a blind site
// served, and reports whether the event is about one: the client hears
// nothing of it, and may not read it by its id.
func (st *State) NoteBlindSource(t *Tab, sid string, method, params []byte) bool {
	var key, u []byte
	switch string(method) {
	case "Debugger.scriptParsed", "Debugger.scriptFailedToParse":
		key, u = wire.StringField(params, "scriptId"), wire.StringField(params, "url")
		key = append([]byte("script\x00"+sid+"\x00"), key...)
	case "CSS.styleSheetAdded":
		h := wire.Field(params, "header")
		key, u = wire.StringField(h, "styleSheetId"), wire.StringField(h, "sourceURL")
		key = append([]byte("sheet\x00"+sid+"\x00"), key...)
	default:
		return false
	}
	if len(u) == 0 || st.UrlAccess(string(u)).Level != api.Blind {
		return false
	}
	if t.BlindReqs == nil {
		t.BlindReqs = make(map[string]bool)
	}
	if len(t.BlindReqs) >= MaxPendingFrames && !t.BlindReqs[string(key)] {
		st.Inst.Srv.Cfg.Metrics.Limited[metrics.LimitFrames].Inc()
		return true // blind until its next document already; no more kept
	}
	t.BlindReqs[string(key)] = true
	if len(t.BlindReqs) >= MaxPendingFrames {
		if was, changed := st.UpdateAccess(t); changed {
			st.AccessChanged(t, was)
		}
	}
	return true
}

// PausedInBlind reports whether a Debugger.paused of t's session sid
// stops in a blind site's script: one of its call frames is in one. Such
// a pause is withheld (its frames show the script's functions and scopes)
// and resumed by the relay.
func (t *Tab) PausedInBlind(sid string, params []byte) bool {
	if len(t.BlindReqs) == 0 {
		return false
	}
	var p struct {
		CallFrames []struct {
			Location struct {
				ScriptID string `json:"scriptId"`
			} `json:"location"`
		} `json:"callFrames"`
	}
	if json.Unmarshal(params, &p) != nil {
		return true // unreadable: as strict as can be
	}
	for _, f := range p.CallFrames {
		if t.BlindReqs["script\x00"+sid+"\x00"+f.Location.ScriptID] {
			return true
		}
	}
	return false
}

// BlindSource reports whether a Debugger or CSS command of t's session
// sid names a script or style sheet of a blind site.
func (t *Tab) BlindSource(sid, method string, params []byte) bool {
	if len(t.BlindReqs) == 0 {
		return false
	}
	switch {
	case strings.HasPrefix(method, "Debugger."):
		id, _, err := ExactString(params, "scriptId")
		return err != nil || t.BlindReqs["script\x00"+sid+"\x00"+id]
	case strings.HasPrefix(method, "CSS."):
		id, _, err := ExactString(params, "styleSheetId")
		return err != nil || t.BlindReqs["sheet\x00"+sid+"\x00"+id]
	}
	return false
}
