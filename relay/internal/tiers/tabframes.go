package tiers

import (
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
)

// The sub-frames of a tab's document, followed from the tab's own
// session's Page events (tabFrames, in the tiers.Frames row), from its
// Document requests (blindframes.go) and from a child session's events
// (events.go) while the policy has tiers: those that share its process, whose sites make the
// tab as strict as they are (core.Tab.Frames), and those on their way to
// a site that is not full (core.Tab.BlindFrames).
//
// A sub-frame's navigation is reported on the session of the frame that
// holds it (its Document request, Page.frameStartedNavigating) before the
// frame commits, and before Chrome knows whether the frame will share its
// parent's process (then the tab's own session reaches into it, and the
// tab is as strict as the frame from its commit on) or get a process and
// a session of its own (then the frame is judged on that session). Either
// way nothing of a blind page may reach the client: from the first event
// that says a frame is on its way to a blind site, the events about it
// (its frame id, its navigation's request id, its target) are withheld
// (blindframes.go), and a session Chrome attaches for it is blind from the
// start, so that the client is never told of it.
//
// The main frame is the core's to follow (where the tab is, and is on its
// way to: core.State.SetNavTo); a new document forgets the frames of the
// one before.

// tabFrames follows t's sub-frames from an event of its own session.
func tabFrames(st *core.State, t *core.Tab, method, params []byte) {
	switch string(method) {
	case "Page.frameStartedNavigating":
		if id := string(wire.StringField(params, "frameId")); id != t.TargetID {
			noteFrameNav(st, t, id, string(wire.StringField(params, "url")), "")
		}
	case "Page.frameRequestedNavigation":
		if string(wire.StringField(params, "disposition")) != "currentTab" {
			return
		}
		if id := string(wire.StringField(params, "frameId")); id != t.TargetID {
			noteFrameNav(st, t, id, string(wire.StringField(params, "url")), "")
		}
	case "Page.frameNavigated":
		f := wire.Field(params, "frame")
		if f == nil || wire.Field(f, "parentId") == nil {
			return // the main frame: the core's
		}
		id := string(wire.StringField(f, "id"))
		frameCommitted(st, t, id)
		setFrame(st, t, id, string(wire.StringField(f, "url")))
	case "Page.frameDetached":
		id := string(wire.StringField(params, "frameId"))
		frameRemoved(st, t, id, params)
		if t.Frames[id].Url != "" {
			// Removed, or swapped into a process of its own (and so a
			// session of its own, judged by itself).
			setFrame(st, t, id, "")
		}
	}
}

// setFrame records that t's in-process sub-frame id is now at url (""
// when it is gone), when the policy has tiers, and decides the tab's
// access again (core.Tiers.SetFrameLocked).
func setFrame(st *core.State, t *core.Tab, id, url string) {
	if id == "" || (url != "" && !st.Inst.HasTiers()) {
		return
	}
	if url == "" {
		delete(t.Frames, id)
	} else {
		t.Frames = putFrame(st, t.Frames, id, url)
	}
	if was, changed := st.UpdateAccess(t); changed {
		st.AccessChanged(t, was)
	}
}

// putFrame records in frames (a tab's document's, or a child session's
// process's) that frame id is at url, with the access its site gives,
// and returns the map. Past MaxPendingFrames a new frame is not kept: it
// stands as one that is no web page (core.TooManyFrames), which makes its
// owner blind until its next document (the core's bounds.go).
func putFrame(st *core.State, frames map[string]core.FrameAt, id, url string) map[string]core.FrameAt {
	if frames == nil {
		frames = make(map[string]core.FrameAt)
	}
	if _, known := frames[id]; !known && len(frames) >= core.MaxPendingFrames {
		st.Inst.Srv.Cfg.Metrics.Limited[metrics.LimitFrames].Inc()
		id, url = core.TooManyFrames, core.TooManyFrames
	}
	frames[id] = core.FrameAt{Url: url, Acc: st.ChildAccess(url), Gen: st.Inst.Srv.AccessGen.Load()}
	return frames
}

// noteFrameNav records that sub-frame id of t is on its way to url, with
// request req ("" when the event has none).
func noteFrameNav(st *core.State, t *core.Tab, id, url, req string) {
	if id == "" || url == "" || !st.Inst.HasTiers() {
		return
	}
	// A frame of an extension's page is blind as a frame that shows one.
	a := st.ChildAccess(url)
	n, ok := t.BlindFrames[id]
	if ok {
		// As strict as the strictest place it is on its way to, until it
		// commits; a redirect names the same request.
		if req != "" && n.Req == "" {
			n.Req = req
		}
		if a.Level > n.Acc.Level {
			n.Acc, n.Url = a, url
		}
		t.BlindFrames[id] = n
		st.SyncScripts(t)
		return
	}
	if a.Level == api.Full {
		return
	}
	if len(t.BlindFrames) >= core.MaxPendingFrames {
		st.Inst.Srv.Cfg.Metrics.Limited[metrics.LimitFrames].Inc()
		return // blind until its next document already; no more kept (the core's bounds.go)
	}
	if t.BlindFrames == nil {
		t.BlindFrames = make(map[string]core.BlindNav)
	}
	t.BlindFrames[id] = core.BlindNav{Url: url, Req: req, Acc: a}
	st.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindAccess, Target: t.TargetID, Rule: a.Rule, Outcome: api.OutcomeOK,
		Detail: "a frame is on its way to " + api.Origin(url) + ": " + a.Level.String()})
	if len(t.BlindFrames) >= core.MaxPendingFrames {
		if was, changed := st.UpdateAccess(t); changed {
			st.AccessChanged(t, was)
		}
	}
	st.SyncScripts(t)
}

// frameCommitted forgets sub-frame id's pending navigation: where it is
// now decides (setFrame, or its own session's access).
func frameCommitted(st *core.State, t *core.Tab, id string) {
	if _, ok := t.BlindFrames[id]; ok {
		delete(t.BlindFrames, id)
		st.SyncScripts(t)
	}
}

// frameRemoved forgets sub-frame id of t when the page removed it (not
// when it moved to a process of its own: its session, which may attach
// after, is judged by where it was going).
func frameRemoved(st *core.State, t *core.Tab, id string, params []byte) {
	if string(wire.StringField(params, "reason")) == "remove" {
		frameCommitted(st, t, id)
	}
}

// pendingBlind reports whether a frame of t is on its way to a blind site.
func pendingBlind(t *core.Tab) bool {
	for _, n := range t.BlindFrames {
		if n.Acc.Level == api.Blind {
			return true
		}
	}
	return false
}
