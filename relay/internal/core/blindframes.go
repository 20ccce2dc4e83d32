package core

import (
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
	Req string // the navigation's request id: its Network events name no frame
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
		if req != "" && n.Req == "" {
			n.Req = req
		}
		if a.Level > n.Acc.Level {
			n.Acc, n.url = a, url
		}
		t.BlindFrames[id] = n
		st.SyncScripts(t)
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
	t.BlindFrames[id] = blindNav{url: url, Req: req, Acc: a}
	st.Observe(Event{Actor: api.ActorRelay, Kind: api.KindAccess, Target: t.TargetID, Rule: a.Rule, Outcome: api.OutcomeOK,
		Detail: "a frame is on its way to " + api.Origin(url) + ": " + a.Level.String()})
	if len(t.BlindFrames) >= MaxPendingFrames {
		if was, changed := st.UpdateAccess(t); changed {
			st.AccessChanged(t, was)
		}
	}
	st.SyncScripts(t)
}

// FrameCommitted forgets sub-frame id's pending navigation: where it is
// now decides (SetFrame, or its own session's access).
func (st *State) FrameCommitted(t *Tab, id string) {
	if _, ok := t.BlindFrames[id]; ok {
		delete(t.BlindFrames, id)
		st.SyncScripts(t)
	}
}

// PendingBlind reports whether a frame of t is on its way to a blind site.
func (t *Tab) PendingBlind() bool {
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

// FrameRemoved forgets sub-frame id of t when the page removed it (not
// when it moved to a process of its own: its session, which may attach
// after, is judged by where it was going).
func (st *State) FrameRemoved(t *Tab, id string, params []byte) {
	if string(wire.StringField(params, "reason")) == "remove" {
		st.FrameCommitted(t, id)
	}
}
