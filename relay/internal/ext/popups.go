package ext

import (
	"strconv"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/attach"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// Tabs opened from a shared tab. A popup the automation opened (a
// window.open in its script, a click it sent on a target=_blank link) is
// the automation's to drive; a tab the person opened from a shared tab
// (a middle click, "open in new tab") is the person's, and sharing it
// would hand the automation a tab nobody offered. Chrome gives both the
// same openerTabId, so the relay tells them apart by what the automation
// was doing: a tab opened while the automation had a command that can
// open one (input, script) running on its opener, or had just sent one
// (popupWindow), is the automation's. What only reads the tab (a
// screenshot, the DOM, the targets) opens nothing, so an automation that
// watches a tab does not take the tabs the person opens from it.
// In "pick" mode our extension asks (an offer marked "popup") and shares
// the tab only on the relay's yes; the stock extension shares such tabs
// itself, and the relay simply does not take those the person opened.

// popupWindow is how long after a command on a tab a new tab it opens
// still counts as the automation's: a click's popup opens within a few
// hundred milliseconds of the click, even on a loaded machine.
const popupWindow = 2 * time.Second

// openedByAutomation reports whether a tab opened from opener now is the
// automation's.
func (x *Conn) openedByAutomation(opener *core.Tab, now time.Time) bool {
	if opener == nil {
		return false
	}
	if last := opener.LastCommand.Load(); last != 0 && now.Sub(time.Unix(0, last)) < popupWindow {
		return true
	}
	return core.BusyOn(x, opener.Id, now)
}

// judgeOpened decides a tab offered because a shared tab opened it. It
// runs outside the lock (it looks at pending commands) and reports
// whether the relay takes the tab; our extension is told either way.
func (x *Conn) judgeOpened(et core.ExtTab, marked bool) bool {
	in := x.Inst
	st := in.Lock()
	opener := st.Tabs[et.OpenerTabID]
	driven := st.Client != nil
	in.Unlock()
	yes := driven && x.openedByAutomation(opener, time.Now())
	if marked {
		x.FireCall("extension.sharePopup", et.ID, yes)
	}
	if !yes {
		in.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindAttach, Outcome: api.OutcomeDenied, Detail: "a tab the person opened from a shared tab is not shared"})
	}
	return yes
}

// restrictedPopup tells the client of a popup the automation opened onto
// a page that is never shared (another extension's page, a browser page),
// which our extension reports without sharing it (an offer marked
// "restricted"). Chrome's own port would hand the client that popup; the
// relay cannot attach it, so it announces it and lets it go at once, with
// the reason: a client waiting for its popup gets it, closed, instead of
// waiting for ever. The tab is not kept: it is the person's.
func (x *Conn) restrictedPopup(et core.ExtTab) {
	in := x.Inst
	st := in.Lock()
	opener, c := st.Tabs[et.OpenerTabID], st.Client
	ok := x.isCurrent(st) && c != nil && opener != nil && opener.Session != nil && et.TargetID != "" && st.Tabs[et.ID] == nil
	in.Unlock()
	if !ok || !x.openedByAutomation(opener, time.Now()) {
		return
	}
	url := et.URL
	if url == "" {
		url = et.PendingURL
	}
	why := cdp.DetachCause{Cause: cdp.CauseRestrictedURL}.Text()
	st = in.Lock()
	defer in.Unlock()
	if st.Client != c {
		return
	}
	ti := core.TargetInfo{TargetID: et.TargetID, Type: "page", URL: api.Origin(url), OpenerID: opener.TargetID, BrowserContextID: st.BrowserCtx}
	if opener.BrowserCtx != "" {
		ti.BrowserContextID = opener.BrowserCtx
	}
	st.TargetEvent("Target.targetCreated", struct {
		TargetInfo core.TargetInfo `json:"targetInfo"`
	}{ti})
	letGoPopup(st, c, ti, why)
	st.TargetEvent("Target.targetDestroyed", struct {
		TargetID string `json:"targetId"`
	}{ti.TargetID})
}

// letGoPopup announces to an auto-attaching client a popup it cannot have
// and ends it at once, with why: a session of the relay's own that is
// never in the table, so that the client's commands on it are answered as
// a gone session's.
func letGoPopup(st *core.State, c *core.ClientConn, ti core.TargetInfo, why string) {
	if !c.AutoAttach {
		return
	}
	st.NextSession++
	id := "pw-tab-" + strconv.Itoa(st.NextSession)
	ti.Attached = true
	c.Event("Target.attachedToTarget", nil, core.AttachedParams{SessionID: id, TargetInfo: ti})
	c.Event("Target.detachedFromTarget", nil, core.DetachedParams{SessionID: id, TargetID: ti.TargetID, Reason: why})
	st.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindDetach, Target: ti.TargetID, Outcome: api.OutcomeOK, Detail: "a popup to " + ti.URL + " was announced and let go: " + why})
}

// unattachablePopup is the same for a popup shared like any tab that
// Chrome refused to attach (it went on from about:blank to a page never
// shared): the client that waits for it hears of it.
func unattachablePopup(in *core.Instance, c *core.ClientConn, t *core.Tab, err error) {
	if attach.TabGone(err) || c.Ctx.Err() != nil {
		return
	}
	st := in.Lock()
	defer in.Unlock()
	opener := st.Tabs[t.OpenerTabID]
	if st.Client != c || !c.AutoAttach || t.Session != nil || t.TargetID == "" || t.OpenerTabID == 0 || opener == nil || opener.Session == nil {
		return
	}
	ti := st.TargetInfo(t)
	ti.URL, ti.Title = api.Origin(t.Url), ""
	letGoPopup(st, c, ti, cdp.DetachCause{Cause: cdp.CauseRestrictedURL}.Text())
}
