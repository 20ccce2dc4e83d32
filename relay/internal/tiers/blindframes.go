package tiers

import (
	"encoding/json"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
)

// Frames and resources on their way to a blind site: whether an event or
// a command of a tab is about one. The frames are followed in
// tabframes.go; the requests and sources are noted here, in the tab's tier
// slots.

// aboutBlindFrame reports whether an event of t is about a frame the
// client may not see: one on its way to a blind site, or one with a blind
// session of its own.
func aboutBlindFrame(st *core.State, t *core.Tab, method, params []byte) bool {
	switch {
	case core.BytesHasPrefix(method, "Target."):
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
	case core.BytesHasPrefix(method, "Network."), core.BytesHasPrefix(method, "Fetch."):
		// A Fetch pause names the Network request as networkId.
		req := wire.StringField(params, "requestId")
		if core.BytesHasPrefix(method, "Fetch.") {
			req = wire.StringField(params, "networkId")
		}
		if len(req) > 0 {
			for _, n := range t.BlindFrames {
				if n.Req == string(req) && n.Acc.Level == api.Blind {
					return true
				}
			}
		}
	case !core.BytesHasPrefix(method, "Page."):
		return false
	}
	if f := wire.StringField(params, "frameId"); len(f) > 0 {
		n, ok := t.BlindFrames[string(f)]
		return ok && n.Acc.Level == api.Blind
	}
	return false
}

// A full page may load a blind site's resources itself (an image, a
// script, a style sheet, a fetch): the page's own script cannot read them
// across origins, but DevTools could (a response body, a resource's
// content). Their requests are followed like a blind frame's: their
// events are withheld and their bodies refused.

// noteBlindRequest records the request of a Network.requestWillBeSent or
// Fetch.requestPaused of t when it goes to a blind site.
func noteBlindRequest(st *core.State, t *core.Tab, method, params []byte) {
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
		if len(t.BlindReqs) >= core.MaxPendingFrames {
			st.Inst.Srv.Cfg.Metrics.Limited[metrics.LimitFrames].Inc()
			return // blind until its next document already; no more kept
		}
		t.BlindReqs[string(id)] = true
		if len(t.BlindReqs) >= core.MaxPendingFrames {
			if was, changed := st.UpdateAccess(t); changed {
				st.AccessChanged(t, was)
			}
		}
	}
}

// blindRequest reports whether a Network or Fetch event of t is about a
// request to a blind site.
func blindRequest(t *core.Tab, method, params []byte) bool {
	if len(t.BlindReqs) == 0 {
		return false
	}
	key := "requestId"
	if core.BytesHasPrefix(method, "Fetch.") {
		key = "networkId"
	}
	id := wire.StringField(params, key)
	return len(id) > 0 && t.BlindReqs[string(id)]
}

// noteBlindSource records a script (Debugger.scriptParsed) or a style
// sheet (CSS.styleSheetAdded) of t's session sid that a blind site
// served, and reports whether the event is about one: the client hears
// nothing of it, and may not read it by its id.
func noteBlindSource(st *core.State, t *core.Tab, sid string, method, params []byte) bool {
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
	if len(t.BlindReqs) >= core.MaxPendingFrames && !t.BlindReqs[string(key)] {
		st.Inst.Srv.Cfg.Metrics.Limited[metrics.LimitFrames].Inc()
		return true // blind until its next document already; no more kept
	}
	t.BlindReqs[string(key)] = true
	if len(t.BlindReqs) >= core.MaxPendingFrames {
		if was, changed := st.UpdateAccess(t); changed {
			st.AccessChanged(t, was)
		}
	}
	return true
}

// pausedInBlind reports whether a Debugger.paused of t's session sid
// stops in a blind site's script: one of its call frames is in one. Such
// a pause is withheld (its frames show the script's functions and scopes)
// and resumed by the relay.
func pausedInBlind(t *core.Tab, sid string, params []byte) bool {
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

// blindSource reports whether a Debugger or CSS command of t's session
// sid names a script or style sheet of a blind site.
func blindSource(t *core.Tab, sid, method string, params []byte) bool {
	if len(t.BlindReqs) == 0 {
		return false
	}
	switch {
	case strings.HasPrefix(method, "Debugger."):
		id, _, err := core.ExactString(params, "scriptId")
		return err != nil || t.BlindReqs["script\x00"+sid+"\x00"+id]
	case strings.HasPrefix(method, "CSS."):
		id, _, err := core.ExactString(params, "styleSheetId")
		return err != nil || t.BlindReqs["sheet\x00"+sid+"\x00"+id]
	}
	return false
}

// noteRequest looks at a request event of t's (on child session cs, nil
// for the tab's own) for a navigation: a Document request of the frame
// the session runs, or its redirect, says where it is going before any
// page event does.
func noteRequest(st *core.State, t *core.Tab, cs *core.Session, method, params []byte) {
	if !st.Inst.HasTiers() {
		return
	}
	var kind, frame, url []byte
	switch string(method) {
	case "Network.requestWillBeSent":
		kind, frame = wire.StringField(params, "type"), wire.StringField(params, "frameId")
		url = wire.StringField(wire.Field(params, "request"), "url")
	case "Fetch.requestPaused":
		kind, frame = wire.StringField(params, "resourceType"), wire.StringField(params, "frameId")
		url = wire.StringField(wire.Field(params, "request"), "url")
	default:
		return
	}
	if string(kind) != "Document" || len(url) == 0 {
		return
	}
	switch {
	case cs == nil && string(frame) == t.TargetID:
		st.SetNavTo(t, string(url))
	case cs != nil && string(frame) == cs.TargetID:
		setChildNav(st, cs, string(url))
	default:
		noteFrameNav(st, t, string(frame), string(url), string(wire.StringField(params, "requestId")))
	}
}
