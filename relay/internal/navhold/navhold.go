package navhold

import (
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/replay"
)

// liftHoldTimeout bounds how long a paused request waits for the lifts
// before it: Chrome answers in milliseconds, so past this the extension
// is gone or stuck, and the request is failed rather than let go with
// what may not act where it goes.
const liftHoldTimeout = 10 * time.Second

// owner returns the settings the request goes with: its session's.
func owner(h *core.HeldRequest) (ls *core.LiftState, kept []replay.Cmd, level core.Access) {
	if h.Child != nil {
		return &h.Child.Lift, h.Child.Kept, h.Child.Acc.Level
	}
	return &h.Tab.Lift, h.Tab.Replay.Cmds, core.SiteLevel(h.Tab.Acc)
}

func sid(h *core.HeldRequest) string {
	if h.Child != nil {
		return h.Child.Id
	}
	return ""
}

// requestLevel is the access of the page the request goes to, for its
// headers: its destination's, and for a frame inside the session's, the
// session's if that is stricter (its settings are the session's).
func requestLevel(st *core.State, h *core.HeldRequest) core.Access {
	lv := st.UrlAccess(h.URL).Level
	if h.Child != nil && h.MainFrame {
		lv = st.ChildAccess(h.URL).Level
	}
	if !h.MainFrame {
		if _, _, own := owner(h); own > lv {
			lv = own
		}
	}
	return lv
}

// Document decides, for a document request the navigation backstop
// (the rules stage's) lets through on t's session sid, whether the relay
// holds it or lets it go on with other headers, and does so
// (core.State.Fire).
// wants: the client's own Fetch patterns ask for the pause. It reports
// false when the request is the backstop's ordinary business.
func Document(st *core.State, t *core.Tab, sid string, p *api.PausedRequest, wants bool) bool {
	in := st.Inst
	if !in.HasTiers() && !in.AsksNavigation() {
		return false
	}
	h := &core.HeldRequest{Tab: t, RequestID: p.RequestID, URL: p.Request.URL, Headers: p.Request.Headers, Fragment: p.Request.Fragment, FrameID: p.FrameID,
		Body: p.Request.HasPostData || (p.Request.Method != "" && p.Request.Method != "GET")}
	if sid != "" {
		cs := st.Sessions[sid]
		if cs == nil || cs.Tab != t || !cs.Child {
			return false
		}
		h.Child = cs
		h.MainFrame = p.FrameID == cs.TargetID
	} else {
		h.MainFrame = p.FrameID == t.TargetID
	}
	if h.MainFrame && h.Child == nil && st.AskNavigationLocked(h) {
		return true // held until the person answers
	}
	ls, kept, _ := owner(h)
	lv := requestLevel(st, h)
	if h.MainFrame && lv != api.Full && mustWait(h, ls) {
		sendAgain(st, h, ls)
		return true
	}
	if fix, ok := headerFix(st, kept, lv, h.Headers); ok && (lv != api.Full || !wants) {
		st.Fire(t.Id, sid, "Fetch.continueRequest", map[string]any{"requestId": h.RequestID, "headers": fix})
		return true
	}
	return false
}

// mustWait reports whether h's page may not commit before ls's lifts are
// answered: none may, for a navigation that can be sent again; for a
// form's post, only what acts on the site or tells it anything must be
// out before (how the page is shown follows a moment after its commit).
func mustWait(h *core.HeldRequest, ls *core.LiftState) bool {
	if h.Body {
		return ls.Critical > 0
	}
	return ls.Pending > 0
}

// sendAgain cancels h's navigation, and starts it again once ls's lifts
// are answered (or drops it after liftHoldTimeout).
func sendAgain(st *core.State, h *core.HeldRequest, ls *core.LiftState) {
	h.Done = true // the request itself is over: failed as aborted
	st.Fire(h.Tab.Id, sid(h), "Fetch.failRequest", map[string]string{"requestId": h.RequestID, "errorReason": "Aborted"})
	if h.Body {
		d := core.Decision{Verdict: core.Deny, Rule: access.RuleSetting, Message: "a form's post to a page where the automation's settings are lifted is not sent again"}
		st.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindNavigate, Target: h.Tab.TargetID, Rule: d.Rule, Outcome: api.OutcomeDenied, Detail: st.Inst.ScrubString(h.URL) + ": " + d.Message})
		st.Inst.Srv.Cfg.Metrics.CountRefusal(d)
		return
	}
	ls.Held = append(ls.Held, h)
	in := st.Inst
	h.Timer = time.AfterFunc(liftHoldTimeout, func() {
		in.Lock()
		defer in.Unlock()
		for i, o := range ls.Held {
			if o == h {
				ls.Held = append(ls.Held[:i:i], ls.Held[i+1:]...)
				in.Log.Warn("the browser did not confirm that the automation's settings were lifted; a navigation was not sent again", "tab", h.Tab.Id)
				return
			}
		}
	})
}

// navigateAgain starts h's navigation again, now that its lifts are in.
func navigateAgain(st *core.State, h *core.HeldRequest) {
	if h.Timer != nil {
		h.Timer.Stop()
	}
	p := map[string]any{"url": h.URL + h.Fragment}
	for k, v := range h.Headers {
		if strings.EqualFold(k, "Referer") {
			p["referrer"] = v
		}
	}
	if h.FrameID != "" && h.FrameID != h.Tab.TargetID {
		p["frameId"] = h.FrameID
	}
	st.Fire(h.Tab.Id, sid(h), "Page.navigate", p)
}

// Release lets h go on after a person approved it: with the
// headers it should have, or sent again if lifts are still under way.
// Called with the lock held.
func Release(st *core.State, h *core.HeldRequest) {
	if h.Done {
		return
	}
	ls, kept, _ := owner(h)
	lv := requestLevel(st, h)
	if h.MainFrame && lv != api.Full && mustWait(h, ls) {
		sendAgain(st, h, ls)
		return
	}
	h.Done = true
	if h.Timer != nil {
		h.Timer.Stop()
	}
	p := map[string]any{"requestId": h.RequestID}
	if fix, ok := headerFix(st, kept, lv, h.Headers); ok {
		p["headers"] = fix
	}
	st.Fire(h.Tab.Id, sid(h), "Fetch.continueRequest", p)
}

// Fail ends h for d: the navigation does not happen, and the tab
// stays on the page it was on (no error page). Called with the lock held.
func Fail(st *core.State, h *core.HeldRequest, d core.Decision) {
	if h.Done {
		return
	}
	h.Done = true
	if h.Timer != nil {
		h.Timer.Stop()
	}
	st.Fire(h.Tab.Id, sid(h), "Fetch.failRequest", map[string]string{"requestId": h.RequestID, "errorReason": "Aborted"})
	st.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindNavigate, Target: h.Tab.TargetID, Rule: d.Rule, Outcome: api.OutcomeDenied, Detail: st.Inst.ScrubString(h.URL) + ": " + d.Message})
	st.Inst.Srv.Cfg.Metrics.CountRefusal(d)
}

// Ask is what stands for h, a navigation, among the commands a person
// is asked about (Authority.AskNavigationLocked): it waits in no line.
func Ask(h *core.HeldRequest, d core.Decision) *core.HeldCmd {
	return &core.HeldCmd{Key: core.LineKey{Tab: h.Tab}, Method: "navigation", Decision: d}
}

// LiftOver counts one of ls's commands as answered; the navigations held
// for them are sent again once none is left.
func LiftOver(st *core.State, ls *core.LiftState, critical bool) {
	if ls.Pending > 0 {
		ls.Pending--
	}
	if critical && ls.Critical > 0 {
		ls.Critical--
	}
	if ls.Pending > 0 || len(ls.Held) == 0 {
		return
	}
	held := ls.Held
	ls.Held = nil
	for _, h := range held {
		navigateAgain(st, h)
	}
}

// headerFix returns the headers a paused document request should go on
// with to a page of access lv, when the ones it has are not those
// (access.HeaderFix says when): kept are the client's settings of its
// owner, tab or frame. ok is false when its own are right.
func headerFix(st *core.State, kept []replay.Cmd, lv core.Access, hdrs map[string]string) (fixed []access.Header, ok bool) {
	return access.HeaderFix(kept, func(r replay.Cmd) (string, []byte) { return r.Method, r.Params }, lv, hdrs, st.Info.UserAgent)
}
