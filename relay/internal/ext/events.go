package ext

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/attach"
	"github.com/cdprelay/cdprelay/relay/internal/away"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// Extension events: tabs offered, updated, removed and detached, the
// handshake, and chrome.debugger.onEvent (the core's events table). They
// are handled on the extension's read loop, which must never wait for the
// extension: whatever needs a call runs as a task.

// handleEvent dispatches one event from the extension.
func (x *Conn) handleEvent(m *wire.ExtMessage) {
	in := x.Inst
	switch string(m.Method) {
	case "chrome.debugger.onEvent":
		in.RouteEvent(x, m.Params, &x.ev)
	case "chrome.debugger.onDetach":
		x.OnDetach(m.Params)
	case "chrome.tabs.onCreated":
		x.onTabCreated(m.Params)
	case "chrome.tabs.onUpdated":
		x.onTabUpdated(m.Params)
	case "chrome.tabs.onRemoved":
		x.OnTabRemoved(m.Params)
	case "extension.info":
		x.onInfo(m.Params)
	case "extension.initialized":
		// The stock extension names neither the browser nor its tabs'
		// targets: learn them first, so that the first client already sees
		// what a Chrome would show it.
		in.Tasks.Spawn("handshake", func() {
			x.learnBeforeReady()
			// A client that came first, or stayed while the extension
			// restarted: its fence goes in before its commands go through.
			// Whether there is one is decided under the lock that makes the
			// extension ready (attachClient decides under it too).
			fenced := false
			for {
				st := in.Lock()
				if !x.isCurrent(st) || x.IsReady() {
					in.Unlock()
					break
				}
				if st.Client != nil && !fenced {
					in.Unlock()
					in.ClientArriving(context.Background(), x)
					fenced = true
					continue
				}
				x.SetReady()
				st.Notify()
				in.Unlock()
				break
			}
			rememberBrowser(in)
			in.Log.Info("extension ready")
			// Tabs whose sessions waited for the extension and that it did
			// not offer again: closed meanwhile, or on a page never shared.
			away.NotOfferedBack(in, x)
		})
	case "extension.keepalive":
	default:
		in.Log.Debug("unknown extension event", "method", string(m.Method))
	}
}

func (x *Conn) onInfo(params []byte) {
	in := x.Inst
	var args [1][]byte
	if wire.Args(params, args[:]) < 1 {
		return
	}
	var bi core.BrowserInfo
	if json.Unmarshal(args[0], &bi) != nil {
		return
	}
	var f struct {
		Features []string `json:"features"`
	}
	json.Unmarshal(args[0], &f)
	st := in.Lock()
	if x.isCurrent(st) {
		st.Info = bi
		st.Features = FeaturesOf(f.Features)
		// Only our extension says who it is, and it also reports tab
		// updates (chrome.tabs.onUpdated).
		st.TabUpdates = true
	}
	batches := x.isCurrent(st) && st.Features[featureBatches]
	in.Unlock()
	if batches {
		x.UseBatches()
	}
}

func (x *Conn) onTabCreated(params []byte) {
	in := x.Inst
	var args [1][]byte
	var et core.ExtTab
	if wire.Args(params, args[:]) < 1 || json.Unmarshal(args[0], &et) != nil || et.ID == 0 {
		in.Log.Warn("malformed chrome.tabs.onCreated")
		return
	}
	if et.Offer == "restricted" {
		x.restrictedPopup(et)
		return
	}
	st := in.Lock()
	if !x.isCurrent(st) {
		in.Unlock()
		return
	}
	// A new tab opened from a shared one: the automation's, or the
	// person's (popups.go)?
	_, known := st.Tabs[et.ID]
	_, fromShared := st.Tabs[et.OpenerTabID]
	judge := !known && et.OpenerTabID != 0 && fromShared && (et.Offer == "popup" || !st.TabUpdates)
	in.Unlock()
	if judge && !x.judgeOpened(et, et.Offer == "popup") {
		return
	}
	st = in.Lock()
	if !x.isCurrent(st) {
		in.Unlock()
		return
	}
	if _, known := st.Tabs[et.ID]; !known && !st.TabRoom("tab "+strconv.FormatInt(et.ID, 10)) {
		in.Unlock()
		return
	}
	t, isNew := st.UpsertTab(et)
	if away.OfferedBack(st, t, x) {
		// Its client's sessions wait for it (package away).
		in.Unlock()
		in.Tasks.Spawn("resume", func() { away.ResumeAway(in, x, t) })
		return
	}
	c := st.Client
	autoAttach := c != nil && c.AutoAttach && t.Session == nil
	// A tab offered again after a target_closed detach: the live view
	// watching it needs the debugger back.
	reattach := !autoAttach && !isNew && len(t.Handles) > 0 && t.State == core.TabDetached
	// A tab offered without its target id (the stock extension) becomes a
	// target once the relay has learnt the id; until then nobody can name
	// it. Before the handshake ends, learnBeforeReady does it.
	learn := t.TargetID == "" && x.IsReady()
	if c != nil && isNew && t.TargetID != "" {
		st.TargetCreated(t)
	}
	hs := t.Handles
	in.Unlock()
	switch {
	case autoAttach:
		in.Tasks.Spawn("auto-attach", func() {
			x.attachAndAnnounce(c, t, learn)
			if !isNew && len(hs) > 0 {
				core.NotifyHandles(hs, api.TabEvent{Method: api.EventAttached})
			}
		})
	case learn:
		in.Tasks.Spawn("learn target", func() { x.learnTarget(t) })
	}
	if reattach {
		in.Tasks.Spawn("re-attach", func() {
			if err := attach.Tab(context.Background(), in, x, t); err == nil {
				core.NotifyHandles(hs, api.TabEvent{Method: api.EventAttached})
			}
		})
	}
}

// attachAndAnnounce attaches t for an auto-attaching client and announces
// it. Failures are logged: a tab Chrome refuses to debug (chrome://, the
// Web Store) is simply not a target. unnamed: the tab came without a
// target id, so the attach is also when it becomes a target, announced as
// created before it is attached.
func (x *Conn) attachAndAnnounce(c *core.ClientConn, t *core.Tab, unnamed bool) {
	in := x.Inst
	if err := attach.Tab(c.Ctx, in, x, t); err != nil {
		in.Log.Info("auto-attach failed", "tab", t.Id, "err", err)
		unattachablePopup(in, c, t, err)
		return
	}
	st := in.Lock()
	if unnamed && st.Client == c && st.Shared(t) && t.TargetID != "" {
		st.TargetCreated(t)
	}
	if st.Client == c && c.AutoAttach && st.Shared(t) {
		st.Announce(c, t)
	}
	in.Unlock()
}

func (x *Conn) onTabUpdated(params []byte) {
	in := x.Inst
	var args [3][]byte
	if wire.Args(params, args[:]) < 3 {
		return
	}
	var et core.ExtTab
	if json.Unmarshal(args[2], &et) != nil {
		return
	}
	st := in.Lock()
	defer in.Unlock()
	t := st.Tabs[et.ID]
	if t == nil || !x.isCurrent(st) {
		return
	}
	url := et.URL
	if url == "" {
		url = t.Url
	}
	st.SetTargetInfo(t, url, et.Title)
}

// removedInfo is chrome.tabs.onRemoved's second argument, with what our
// extension adds: a tab no longer shared (unshared), an offer taken back
// because Chrome refused to attach the tab (withdrawn, with the cause), a
// discarded tab that came back under a new id (replacedBy).
type removedInfo struct {
	Unshared   bool   `json:"unshared"`
	Withdrawn  bool   `json:"withdrawn"`
	Cause      string `json:"cause"`
	ReplacedBy int64  `json:"replacedBy"`
}

func (x *Conn) OnTabRemoved(params []byte) {
	in := x.Inst
	var args [2][]byte
	if wire.Args(params, args[:]) < 1 {
		return
	}
	id, ok := wire.Int(args[0])
	if !ok {
		return
	}
	var info removedInfo
	if len(args[1]) > 0 && json.Unmarshal(args[1], &info) != nil {
		info = removedInfo{}
	}
	st := in.Lock()
	t := st.Tabs[id]
	if t == nil || !x.isCurrent(st) {
		in.Unlock()
		return
	}
	if info.Withdrawn && away.Withdrawn(t) {
		// Its sessions wait for the tab: they go on waiting for its next
		// offer (package away).
		in.Unlock()
		return
	}
	c := st.Client
	if info.Withdrawn {
		st.NoteRefusal(t.Id, info.Cause, st.TargetInfo(t).URL)
	}
	why, status := "", "tab no longer shared"
	switch {
	case info.ReplacedBy != 0:
		why = cdp.DetachCause{Cause: cdp.CauseDiscarded}.Text()
		status = why
	case info.Withdrawn:
		why = cdp.DetachCause{Cause: info.Cause}.Text()
		if why == "" {
			why = cdp.DetachCause{Cause: cdp.CauseUnknown}.Text()
		}
		status = why
	}
	target := t.TargetID
	hs := st.RemoveTab(t, why)
	// A tab withdrawn or replaced comes back: the client is not left alone.
	lastGone := len(st.Tabs) == 0 && !t.ClosingByClient && !info.Withdrawn && info.ReplacedBy == 0
	in.Unlock()
	if why != "" {
		in.Observe(core.Event{Actor: api.ActorExtension, Kind: api.KindDetach, Target: target, Outcome: api.OutcomeOK, Detail: "the tab is not offered for now: " + why})
	}
	core.NotifyHandles(hs, api.TabEvent{Method: api.EventDetached, Params: core.JSONObj("reason", status)})
	core.FailTab(x, id)
	if lastGone && c != nil {
		c.Close(websocket.CloseNormalClosure, core.ReasonAllTabsDetached)
	}
}

func (x *Conn) OnDetach(params []byte) {
	in := x.Inst
	var args [3][]byte
	if wire.Args(params, args[:]) < 2 {
		return
	}
	src, ok := wire.DecodeSource(args[0])
	if !ok {
		return
	}
	reason, _ := wire.Unquote(args[1])
	d := cdp.ParseDetachCause(args[2])
	if d.Cause == "" && string(reason) == "canceled_by_user" {
		d.Cause = cdp.CauseCanceledByUser
	}
	st := in.Lock()
	t := st.Tabs[src.TabID]
	if t == nil || !x.isCurrent(st) {
		in.Unlock()
		return
	}
	c := st.Client
	in.Log.Info("tab detached by the browser", "tab", t.Id, "reason", string(reason), "cause", d.Cause)
	st.NoteRefusal(t.Id, d.Cause, st.TargetInfo(t).URL)
	why := d.Text()
	// The frame guard removed the frame: the tab can be attached at once,
	// and the client's sessions carry on (package away: resume.go), unless the other
	// extension keeps putting its frame back.
	resumable := d.Cause == cdp.CauseExtensionFrame && d.Cleared && t.Resuming == nil && t.Session != nil && c != nil
	if resumable && !away.MayResume(t, time.Now()) {
		resumable, why = false, core.WhyFrameLoop
	}
	status := why
	if status == "" {
		status = string(reason)
	}
	lastGone := false
	// The stock extension says neither why nor whether the tab is still
	// there (it sends no chrome.tabs.onRemoved): the relay finds out.
	probe, resume := false, false
	var hs []*core.TabHandle
	switch {
	case t.Resuming != nil && d.Cause != cdp.CauseCanceledByUser:
		// Detached again while being resumed: the resume tries again.
		t.SetState(core.TabDetached, nil)
		in.Unlock()
		return
	case resumable:
		st.Suspend(t, core.WhyResuming)
		resume = true
	case d.Cause == cdp.CauseCanceledByUser:
		// The person cancelled the debugging bar: the tab is theirs again.
		hs = st.RemoveTab(t, why)
		lastGone = len(st.Tabs) == 0
	case d.Cause == cdp.CauseTabClosed:
		// onRemoved follows; Chrome says nothing more of a closed tab.
		st.BrowserDetached(t, status, "")
	case away.WaitOnDetach(st, t, d):
		// The tab comes back by itself: the client's sessions wait for it
		// (package away).
		target := t.TargetID
		in.Unlock()
		in.Observe(core.Event{Actor: api.ActorExtension, Kind: api.KindDetach, Target: target, Outcome: api.OutcomeOK, Detail: "detached by the browser: " + d.Short()})
		core.FailDetached(x, map[int64]bool{src.TabID: true})
		return
	default:
		// A frame or the tab went where the debugger cannot follow; our
		// extension offers the tab again once it can be attached.
		if cdp.IsPolicyCause(d.Cause) {
			// The commands under way hear the policy before the client
			// hears of the sessions' end: a navigation there fails with
			// the reason, not as a closed page's.
			core.FailWhere(x, func(pc core.PendingCall) bool { return pc.TabID == src.TabID }, core.CodeServerError, why)
		}
		st.BrowserDetached(t, status, why)
		probe = !st.Features[core.FeatureDetachCause]
	}
	target := t.TargetID
	in.Unlock()
	if d.Cause != "" {
		in.Observe(core.Event{Actor: api.ActorExtension, Kind: api.KindDetach, Target: target, Outcome: api.OutcomeOK, Detail: "detached by the browser: " + d.Short()})
	}
	if resume {
		in.Tasks.Spawn("resume", func() { away.ResumeTab(in, x, t) })
		return
	}
	core.NotifyHandles(hs, api.TabEvent{Method: api.EventDetached, Params: core.JSONObj("reason", "tab no longer shared")})
	core.FailTab(x, src.TabID)
	if lastGone && c != nil {
		c.Close(websocket.CloseNormalClosure, core.ReasonAllTabsDetached)
	}
	if probe {
		in.Tasks.Spawn("is the tab there", func() { x.probeDetached(t) })
	}
}

// FeaturesOf reads the features an extension.info lists.
func FeaturesOf(list []string) map[string]bool {
	m := map[string]bool{}
	for _, f := range slices.Compact(slices.Sorted(slices.Values(list))) {
		m[f] = true
	}
	return m
}

// featureBatches is extension.info's feature for batch frames, and
// MethodAcceptBatches the call that tells the extension it may batch too
// (Upstream.UseBatches).
const (
	featureBatches      = "batches"
	MethodAcceptBatches = "extension.acceptBatches"
)
