package core

import (
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/replay"
)

// The navigation backstop's hold: a document request is where a
// navigation ends up, whichever way it got there (a command, a link, a
// script, a form, a redirect of any kind, a Refresh header or a meta
// refresh, the person), and the backstop pauses every one (the rules stage's
// backstop.go).
// While the policy has tiers or asks about hosts, a paused document
// request of a tab's frame is
//
//   - held while a person is asked whether the tab may go there (the
//     person's stage: Authority.AskNavigationLocked);
//   - sent again, when the commands that lift the client's settings for
//     where it goes are not answered yet (lifts.go): Chrome keeps every
//     command for the page back while a navigation is under way, so the
//     new document would commit with the settings and take them in. The
//     relay cancels the navigation (no error page), and once Chrome has
//     lifted them, starts it again to the same address, with the same
//     referrer. A navigation that carries a body (a form's post) cannot
//     be sent again: it is refused while what acts on the site or tells
//     it anything (and scripts for new documents) is still to be lifted,
//     and goes on, to have how the page is shown lifted a moment after it
//     commits, otherwise;
//   - let go with the headers it should have: Chrome puts the client's
//     headers and user agent into a navigation's request when it starts
//     it and keeps them through its redirects, so a request to a page
//     where they are lifted goes on without them (and one to a page where
//     they are back, with them).

// HeldRequest is a paused document request the relay holds. Guarded by
// the instance's mutex.
type HeldRequest struct {
	t         *Tab
	cs        *Session // the child session it was paused on; nil for the tab's own
	requestID string
	url       string
	headers   map[string]string
	fragment  string // the address's fragment, which its request does not carry
	frameID   string
	body      bool // the request carries a body: it cannot be sent again
	mainFrame bool // of the frame the session runs, not a frame inside it
	timer     *time.Timer
	// done: let go or failed; nothing more to do.
	done bool
}

// Tab is the tab whose navigation h is.
func (h *HeldRequest) Tab() *Tab { return h.t }

// URL is where h goes.
func (h *HeldRequest) URL() string { return h.url }

// owner returns the settings the request goes with: its session's.
func (h *HeldRequest) owner() (ls *LiftState, kept []replay.Cmd, level Access) {
	if h.cs != nil {
		return &h.cs.Lift, h.cs.Kept, h.cs.Acc.Level
	}
	return &h.t.Lift, h.t.Replay.Cmds, SiteLevel(h.t.Acc)
}

func (h *HeldRequest) sid() string {
	if h.cs != nil {
		return h.cs.Id
	}
	return ""
}

// requestLevel is the access of the page the request goes to, for its
// headers: its destination's, and for a frame inside the session's, the
// session's if that is stricter (its settings are the session's).
func (st *State) requestLevel(h *HeldRequest) Access {
	lv := st.UrlAccess(h.url).Level
	if h.cs != nil && h.mainFrame {
		lv = st.ChildAccess(h.url).Level
	}
	if !h.mainFrame {
		if _, _, own := h.owner(); own > lv {
			lv = own
		}
	}
	return lv
}

// HoldDocument decides, for a document request the navigation backstop
// (the rules stage's) lets through on t's session sid, whether the relay
// holds it or lets it go on with other headers, and does so (State.Fire).
// wants: the client's own Fetch patterns ask for the pause. It reports
// false when the request is the backstop's ordinary business.
func (st *State) HoldDocument(t *Tab, sid string, p *api.PausedRequest, wants bool) bool {
	in := st.Inst
	if !in.HasTiers() && !in.AsksNavigation() {
		return false
	}
	h := &HeldRequest{t: t, requestID: p.RequestID, url: p.Request.URL, headers: p.Request.Headers, fragment: p.Request.Fragment, frameID: p.FrameID,
		body: p.Request.HasPostData || (p.Request.Method != "" && p.Request.Method != "GET")}
	if sid != "" {
		cs := st.Sessions[sid]
		if cs == nil || cs.Tab != t || !cs.Child {
			return false
		}
		h.cs = cs
		h.mainFrame = p.FrameID == cs.TargetID
	} else {
		h.mainFrame = p.FrameID == t.TargetID
	}
	if h.mainFrame && h.cs == nil && authority.AskNavigationLocked(st, h) {
		return true // held until the person answers
	}
	ls, kept, _ := h.owner()
	lv := st.requestLevel(h)
	if h.mainFrame && lv != api.Full && st.mustWait(h, ls) {
		st.sendAgain(h, ls)
		return true
	}
	if fix, ok := st.HeaderFix(kept, lv, h.headers); ok && (lv != api.Full || !wants) {
		st.Fire(t.Id, sid, "Fetch.continueRequest", map[string]any{"requestId": h.requestID, "headers": fix})
		return true
	}
	return false
}

// mustWait reports whether h's page may not commit before ls's lifts are
// answered: none may, for a navigation that can be sent again; for a
// form's post, only what acts on the site or tells it anything must be
// out before (how the page is shown follows a moment after its commit).
func (st *State) mustWait(h *HeldRequest, ls *LiftState) bool {
	if h.body {
		return ls.Critical > 0
	}
	return ls.Pending > 0
}

// sendAgain cancels h's navigation, and starts it again once ls's lifts
// are answered (or drops it after liftHoldTimeout).
func (st *State) sendAgain(h *HeldRequest, ls *LiftState) {
	h.done = true // the request itself is over: failed as aborted
	st.Fire(h.t.Id, h.sid(), "Fetch.failRequest", map[string]string{"requestId": h.requestID, "errorReason": "Aborted"})
	if h.body {
		d := Decision{Verdict: Deny, Rule: ruleTierSetting, Message: "a form's post to a page where the automation's settings are lifted is not sent again"}
		st.Observe(Event{Actor: api.ActorRelay, Kind: api.KindNavigate, Target: h.t.TargetID, Rule: d.Rule, Outcome: api.OutcomeDenied, Detail: st.Inst.ScrubString(h.url) + ": " + d.Message})
		st.Inst.Srv.Cfg.Metrics.CountRefusal(d)
		return
	}
	ls.held = append(ls.held, h)
	in := st.Inst
	h.timer = time.AfterFunc(liftHoldTimeout, func() {
		in.Lock()
		defer in.Unlock()
		for i, o := range ls.held {
			if o == h {
				ls.held = append(ls.held[:i:i], ls.held[i+1:]...)
				in.Log.Warn("the browser did not confirm that the automation's settings were lifted; a navigation was not sent again", "tab", h.t.Id)
				return
			}
		}
	})
}

// navigateAgain starts h's navigation again, now that its lifts are in.
func (st *State) navigateAgain(h *HeldRequest) {
	if h.timer != nil {
		h.timer.Stop()
	}
	p := map[string]any{"url": h.url + h.fragment}
	for k, v := range h.headers {
		if strings.EqualFold(k, "Referer") {
			p["referrer"] = v
		}
	}
	if h.frameID != "" && h.frameID != h.t.TargetID {
		p["frameId"] = h.frameID
	}
	st.Fire(h.t.Id, h.sid(), "Page.navigate", p)
}

// ReleaseRequest lets h go on after a person approved it: with the
// headers it should have, or sent again if lifts are still under way.
// Called with the lock held.
func (st *State) ReleaseRequest(h *HeldRequest) {
	if h.done {
		return
	}
	ls, kept, _ := h.owner()
	lv := st.requestLevel(h)
	if h.mainFrame && lv != api.Full && st.mustWait(h, ls) {
		st.sendAgain(h, ls)
		return
	}
	h.done = true
	if h.timer != nil {
		h.timer.Stop()
	}
	p := map[string]any{"requestId": h.requestID}
	if fix, ok := st.HeaderFix(kept, lv, h.headers); ok {
		p["headers"] = fix
	}
	st.Fire(h.t.Id, h.sid(), "Fetch.continueRequest", p)
}

// FailRequest ends h for d: the navigation does not happen, and the tab
// stays on the page it was on (no error page). Called with the lock held.
func (st *State) FailRequest(h *HeldRequest, d Decision) {
	if h.done {
		return
	}
	h.done = true
	if h.timer != nil {
		h.timer.Stop()
	}
	st.Fire(h.t.Id, h.sid(), "Fetch.failRequest", map[string]string{"requestId": h.requestID, "errorReason": "Aborted"})
	st.Observe(Event{Actor: api.ActorRelay, Kind: api.KindNavigate, Target: h.t.TargetID, Rule: d.Rule, Outcome: api.OutcomeDenied, Detail: st.Inst.ScrubString(h.url) + ": " + d.Message})
	st.Inst.Srv.Cfg.Metrics.CountRefusal(d)
}

// NavAsk is what stands for h, a navigation, among the commands a person
// is asked about (Authority.AskNavigationLocked): it waits in no line.
func NavAsk(h *HeldRequest, d Decision) *HeldCmd {
	return &HeldCmd{Key: LineKey{Tab: h.t}, Method: "navigation", Decision: d}
}
