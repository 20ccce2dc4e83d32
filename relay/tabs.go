package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wire"
)

type tabState int

const (
	tabDetached tabState = iota
	tabAttaching
	tabAttached
	tabDetaching
)

// tab is one tab the extension shares. All fields are guarded by the
// instance's mu.
type tab struct {
	id          int64
	targetID    string // Chrome's targetId; "" until known
	url, title  string
	openerTabID int64
	browserCtx  string // from Chrome's TargetInfo, when it gives one

	state     tabState
	stateWait chan struct{} // closed when an attaching or detaching state ends
	attachErr error

	session *session // the client's first top-level session; nil when not announced
	// extra are further top-level sessions of the client on the tab
	// (Target.attachToTarget to a tab that already has one), oldest first.
	// Entries no longer in the instance's sessions are stale: a client that
	// leaves clears the sessions map, not every tab.
	extra           []*session
	closingByClient bool // Target.closeTarget is removing it
	// releaseAfterAttach: the client that started the attach left
	// meanwhile, so the attach, once Chrome has done it, is undone.
	releaseAfterAttach bool

	// handles are the relay's own users of the tab (the live view). The
	// slice is replaced, never modified in place, so a copy of the header
	// taken under mu can be read after unlocking.
	handles []*TabHandle
	// clientScreencast: the CDP client runs a screencast of its own, so
	// frames go to the client (and a copy to handles).
	clientScreencast bool
	// detachReason is why the browser last detached the debugger while
	// the tab stayed shared; cleared on the next attach.
	detachReason string
	// fetch is the Fetch configuration of the tab's sessions ("" for the
	// tab's own, else a child's id), for the navigation backstop. Chrome
	// forgets it on detach, and so does setState.
	fetch map[string]*fetchState
	// control names the person who took control of the tab from the live
	// view; while set, the client's input and navigation are refused.
	control string
}

// setState moves t to state, waking whoever waits on the previous
// transition. Called with the instance's mu held.
func (t *tab) setState(s tabState, err error) {
	if t.stateWait != nil {
		close(t.stateWait)
		t.stateWait = nil
	}
	t.state, t.attachErr = s, err
	if s == tabDetached {
		t.fetch = nil
	}
	if s == tabAttaching || s == tabDetaching {
		t.stateWait = make(chan struct{})
	}
}

// session is a client-visible CDP session: a tab's top-level session,
// minted by the relay, a child session (frame, worker) that keeps Chrome's
// id, or a browser session (tab nil) whose commands behave like the root's.
type session struct {
	id string
	// idJSON is id as a JSON string token, written into every message of
	// the session. It is nil for a page endpoint's own session: a client of
	// /devtools/page/<targetId> talks to its page without sessionIds.
	idJSON   []byte
	tab      *tab // nil for a browser session
	child    bool
	targetID string   // a child's own target, for its detach event
	parent   *session // the session a child was announced on; nil for a tab's own
	// owner is the session whose Target.attachToTarget made this one; nil
	// for the root. Chrome tells the asking session of the attach and of the
	// detach, and clients (Playwright's CDPSession) listen there.
	owner *session

	// Guarded by the instance's mu.
	enabled  map[string]bool // domains this top-level session enabled and has not disabled
	discover bool            // Target.setDiscoverTargets on this session
}

func newSession(id string, t *tab, child bool) *session {
	return &session{id: id, idJSON: wire.AppendString(nil, id), tab: t, child: child}
}

// extTab is the subset of chrome.tabs.Tab the relay reads, plus the
// targetId our extension adds.
type extTab struct {
	ID          int64  `json:"id"`
	URL         string `json:"url"`
	PendingURL  string `json:"pendingUrl"`
	Title       string `json:"title"`
	OpenerTabID int64  `json:"openerTabId"`
	TargetID    string `json:"targetId"`
}

// TargetInfo is CDP's Target.TargetInfo as the relay reports it.
type TargetInfo struct {
	TargetID         string `json:"targetId"`
	Type             string `json:"type"`
	Title            string `json:"title"`
	URL              string `json:"url"`
	Attached         bool   `json:"attached"`
	OpenerID         string `json:"openerId,omitempty"`
	CanAccessOpener  bool   `json:"canAccessOpener"`
	BrowserContextID string `json:"browserContextId,omitempty"`
}

// targetInfoLocked describes t as a CDP target.
func (in *Instance) targetInfoLocked(t *tab) TargetInfo {
	ti := TargetInfo{
		TargetID:         t.targetID,
		Type:             "page",
		Title:            t.title,
		URL:              t.url,
		Attached:         t.session != nil,
		BrowserContextID: in.browserCtx,
	}
	if t.browserCtx != "" {
		ti.BrowserContextID = t.browserCtx
	}
	if o := in.tabs[t.openerTabID]; o != nil && t.openerTabID != 0 {
		ti.OpenerID = o.targetID
	}
	return ti
}

func (in *Instance) sortedTabsLocked() []*tab {
	ts := make([]*tab, 0, len(in.tabs))
	for _, t := range in.tabs {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *tab) int { return int(a.id - b.id) })
	return ts
}

func (in *Instance) tabByTargetLocked(targetID string) *tab {
	if targetID == "" {
		return nil
	}
	for _, t := range in.tabs {
		if t.targetID == targetID {
			return t
		}
	}
	return nil
}

// upsertTabLocked records a tab the extension offers or created.
func (in *Instance) upsertTabLocked(et extTab) (t *tab, isNew bool) {
	t = in.tabs[et.ID]
	if t == nil {
		t = &tab{id: et.ID}
		in.tabs[et.ID] = t
		isNew = true
	}
	t.url = et.URL
	if t.url == "" {
		t.url = et.PendingURL
	}
	if t.url == "" {
		t.url = "about:blank"
	}
	t.title = et.Title
	if et.OpenerTabID != 0 {
		t.openerTabID = et.OpenerTabID
	}
	if et.TargetID != "" {
		t.targetID = et.TargetID
	}
	return t, isNew
}

// attachTab attaches the debugger to t through x and learns its target
// info. Concurrent callers share one attempt.
func (in *Instance) attachTab(ctx context.Context, x *extConn, t *tab) error {
	for {
		in.mu.Lock()
		if in.tabs[t.id] != t {
			in.mu.Unlock()
			return fmt.Errorf("tab %d is no longer shared", t.id)
		}
		switch t.state {
		case tabAttached:
			in.mu.Unlock()
			return nil
		case tabAttaching, tabDetaching:
			w := t.stateWait
			in.mu.Unlock()
			select {
			case <-w:
			case <-ctx.Done():
				return ctx.Err()
			}
			in.mu.Lock()
			st, err := t.state, t.attachErr
			in.mu.Unlock()
			if st == tabAttached {
				return nil
			}
			if st == tabDetached && err != nil {
				return err
			}
			continue // a detach finished: attach anew
		}
		// Checked under mu: a client that has not left by now leaves after
		// its clientGone can see the attaching state.
		if err := ctx.Err(); err != nil {
			in.mu.Unlock()
			return err
		}
		t.setState(tabAttaching, nil)
		in.mu.Unlock()
		break
	}

	// Once asked, Chrome attaches whether or not the caller still waits:
	// the calls run to their end so that the tab's state stays Chrome's.
	ti, fenced, err := in.attachCalls(context.WithoutCancel(ctx), x, t.id)
	in.mu.Lock()
	release := t.releaseAfterAttach
	t.releaseAfterAttach = false
	if err != nil {
		t.setState(tabDetached, err)
		in.mu.Unlock()
		return err
	}
	if t.state != tabAttaching { // detached or reset meanwhile
		in.mu.Unlock()
		return fmt.Errorf("tab %d detached while attaching", t.id)
	}
	if ti.TargetID != "" {
		t.targetID = ti.TargetID
	}
	if ti.URL != "" {
		t.url = ti.URL
	}
	t.title = ti.Title
	t.browserCtx = ti.BrowserContextID
	if ti.BrowserContextID != "" {
		// Every tab of a profile is in the same default context: report
		// Chrome's id for tabs not attached yet too.
		in.browserCtx = ti.BrowserContextID
	}
	if release {
		// Undo what the leaving client may have switched on. A caller that
		// still wants the tab (the live view; the client's own context is
		// cancelled) attaches anew.
		t.setState(tabDetaching, nil)
		in.mu.Unlock()
		in.finishDetach(x, t)
		return in.attachTab(ctx, x, t)
	}
	t.setState(tabAttached, nil)
	t.detachReason = ""
	if fenced {
		t.fetchOf("").fence = true
	}
	in.mu.Unlock()
	return nil
}

func (in *Instance) attachCalls(ctx context.Context, x *extConn, tabID int64) (_ TargetInfo, fenced bool, _ error) {
	ctx, cancel := context.WithTimeout(ctx, in.srv.cfg.CallTimeout)
	defer cancel()
	debuggee := map[string]int64{"tabId": tabID}
	if _, err := x.call(ctx, "chrome.debugger.attach", debuggee, "1.3"); err != nil {
		return TargetInfo{}, false, fmt.Errorf("attach tab %d: %w", tabID, err)
	}
	res, err := x.call(ctx, "chrome.debugger.sendCommand", debuggee, "Target.getTargetInfo")
	if err != nil {
		return TargetInfo{}, false, fmt.Errorf("target info of tab %d: %w", tabID, err)
	}
	var r struct {
		TargetInfo TargetInfo `json:"targetInfo"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return TargetInfo{}, false, fmt.Errorf("target info of tab %d: %w", tabID, err)
	}
	if in.fencing() {
		// The backstop is in place before anything else, the wait for a
		// popup's first commit included.
		if _, err := x.call(ctx, "chrome.debugger.sendCommand", debuggee, "Fetch.enable", fetchParams(true, nil)); err != nil {
			return TargetInfo{}, false, fmt.Errorf("navigation fence on tab %d: %w", tabID, err)
		}
		fenced = true
	}
	in.awaitFirstCommit(ctx, x, debuggee)
	return r.TargetInfo, fenced, nil
}

// firstCommitWait bounds how long a new tab's first navigation is awaited.
const firstCommitWait = 2 * time.Second

// awaitFirstCommit waits, briefly, until the tab's main frame has left its
// initial empty document. A popup is attached only after Chrome has started
// it (the extension cannot hold it paused the way waitForDebuggerOnStart
// does), and a client that finds the initial empty document ignores the
// lifecycle events Chrome replays when they are enabled — so the popup's
// "load" could be lost if it were announced in that state.
func (in *Instance) awaitFirstCommit(ctx context.Context, x *extConn, debuggee map[string]int64) {
	deadline := time.Now().Add(firstCommitWait)
	for delay := 5 * time.Millisecond; ; delay = min(delay*2, 100*time.Millisecond) {
		res, err := x.call(ctx, "chrome.debugger.sendCommand", debuggee, "Page.getFrameTree")
		if err != nil {
			return
		}
		var ft struct {
			FrameTree struct {
				Frame struct {
					URL *string `json:"url"`
				} `json:"frame"`
			} `json:"frameTree"`
		}
		if json.Unmarshal(res, &ft) != nil || ft.FrameTree.Frame.URL == nil {
			return
		}
		if u := *ft.FrameTree.Frame.URL; u != "" && u != ":" {
			return
		}
		if time.Now().After(deadline) {
			return
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return
		}
	}
}

// detachTab releases the debugger from t, if attached.
func (in *Instance) detachTab(x *extConn, t *tab) {
	in.mu.Lock()
	if t.state == tabAttaching {
		w := t.stateWait
		in.mu.Unlock()
		<-w
		in.mu.Lock()
	}
	// Re-checked under mu: a client may have announced the tab since the
	// caller decided it was unused.
	if t.state != tabAttached || t.session != nil {
		in.mu.Unlock()
		return
	}
	t.setState(tabDetaching, nil)
	in.mu.Unlock()
	in.finishDetach(x, t)
}

// finishDetach detaches t, which its caller has moved to tabDetaching.
func (in *Instance) finishDetach(x *extConn, t *tab) {
	ctx, cancel := context.WithTimeout(context.Background(), in.srv.cfg.CallTimeout)
	_, err := x.call(ctx, "chrome.debugger.detach", map[string]int64{"tabId": t.id})
	cancel()
	if err != nil {
		in.log.Debug("detach", "tab", t.id, "err", err)
	}
	in.mu.Lock()
	if t.state == tabDetaching {
		t.setState(tabDetached, nil)
	}
	hs := t.handles
	shared := in.tabs[t.id] == t
	in.mu.Unlock()
	if len(hs) > 0 && shared {
		// The detach cleared what the client had switched on; the live view
		// still watches, so attach again and let it restart its screencast.
		if err := in.attachTab(context.Background(), x, t); err != nil {
			in.log.Info("re-attach for the live view failed", "tab", t.id, "err", err)
			notifyHandles(hs, TabEvent{Method: EventDetached, Params: jsonObj("reason", err.Error())})
			return
		}
		notifyHandles(hs, TabEvent{Method: EventAttached})
	}
}

// announceLocked gives t a client session at the root and tells c with
// Target.attachedToTarget. A tab that has a session keeps it.
func (in *Instance) announceLocked(c *clientConn, t *tab) *session {
	if t.session != nil {
		return t.session
	}
	return in.mintSessionLocked(c, t, nil)
}

// dropSessionsLocked removes every client session of t, children
// included, and tells c (when non-nil) that t's top-level sessions
// detached. A page endpoint whose page this was is closed, as Chrome closes
// a page's socket when its target goes.
func (in *Instance) dropSessionsLocked(c *clientConn, t *tab) {
	tops := in.topSessionsLocked(t)
	for id, cs := range in.sessions {
		if cs.tab == t {
			delete(in.sessions, id)
		}
	}
	t.session, t.extra = nil, nil
	for _, s := range tops {
		in.observe(Event{Actor: ActorClient, Kind: KindDetach, Target: t.targetID, Outcome: OutcomeOK, Detail: s.id})
		// Owners are checked after the deletions: a session attached from
		// another session of this tab goes without a word, with its owner.
		in.tellDetachedLocked(c, s)
	}
	if c != nil && c.emu.page != nil && c.emu.page.tab == t {
		c.close(websocket.CloseNormalClosure, "Target closed")
	}
}

// removeTabLocked forgets t: it closed or is no longer shared. Its
// handles are told, outside the lock, through the returned func.
func (in *Instance) removeTabLocked(c *clientConn, t *tab) (notify func()) {
	in.dropSessionsLocked(c, t)
	delete(in.tabs, t.id)
	hs := t.handles
	t.handles = nil
	notify = func() {
		notifyHandles(hs, TabEvent{Method: EventDetached, Params: jsonObj("reason", "tab no longer shared")})
	}
	t.setState(tabDetached, fmt.Errorf("tab %d is no longer shared", t.id))
	if c != nil && t.targetID != "" {
		in.targetEventLocked(c, "Target.targetDestroyed", struct {
			TargetID string `json:"targetId"`
		}{t.targetID})
	}
	return notify
}

// handleExtEvent dispatches one event from the extension. It runs on the
// extension's read loop and must not block on the extension.
func (in *Instance) handleExtEvent(x *extConn, m *wire.ExtMessage) {
	switch string(m.Method) {
	case "chrome.debugger.onEvent":
		in.routeEvent(x, m.Params)
	case "chrome.debugger.onDetach":
		in.onDetach(x, m.Params)
	case "chrome.tabs.onCreated":
		in.onTabCreated(x, m.Params)
	case "chrome.tabs.onUpdated":
		in.onTabUpdated(m.Params)
	case "chrome.tabs.onRemoved":
		in.onTabRemoved(x, m.Params)
	case "extension.info":
		var args [1][]byte
		if wire.Args(m.Params, args[:]) >= 1 {
			var bi BrowserInfo
			if json.Unmarshal(args[0], &bi) == nil {
				in.mu.Lock()
				in.info = bi
				// Only our extension says who it is, and it also reports
				// tab updates (chrome.tabs.onUpdated).
				in.emu.tabUpdates = true
				in.mu.Unlock()
			}
		}
	case "extension.initialized":
		// The stock extension names neither the browser nor its tabs'
		// targets: learn them first, so that the first client already sees
		// what a Chrome would show it.
		go func() {
			in.learnBeforeReady(x)
			in.mu.Lock()
			if in.ext == x && !x.isReady() {
				close(x.ready)
				in.notifyLocked()
			}
			in.mu.Unlock()
			in.log.Info("extension ready")
		}()
	case "extension.keepalive":
	default:
		in.log.Debug("unknown extension event", "method", string(m.Method))
	}
}

func (in *Instance) onTabCreated(x *extConn, params []byte) {
	var args [1][]byte
	var et extTab
	if wire.Args(params, args[:]) < 1 || json.Unmarshal(args[0], &et) != nil || et.ID == 0 {
		in.log.Warn("malformed chrome.tabs.onCreated")
		return
	}
	in.mu.Lock()
	if in.ext != x {
		in.mu.Unlock()
		return
	}
	t, isNew := in.upsertTabLocked(et)
	c := in.client
	attach := c != nil && c.autoAttach && t.session == nil
	// A tab offered again after a target_closed detach: the live view
	// watching it needs the debugger back.
	reattach := !attach && !isNew && len(t.handles) > 0 && t.state == tabDetached
	// A tab offered without its target id (the stock extension) becomes a
	// target once the relay has learnt the id; until then nobody can name
	// it. Before the handshake ends, learnBeforeReady does it.
	learn := t.targetID == "" && x.isReady()
	if c != nil && isNew && t.targetID != "" {
		in.targetEventLocked(c, "Target.targetCreated", struct {
			TargetInfo TargetInfo `json:"targetInfo"`
		}{in.targetInfoLocked(t)})
	}
	hs := t.handles
	in.mu.Unlock()
	if learn && !attach {
		go in.learnTarget(x, t)
	}
	if attach {
		go func() {
			in.attachAndAnnounce(c, x, t, learn)
			if !isNew && len(hs) > 0 {
				notifyHandles(hs, TabEvent{Method: EventAttached})
			}
		}()
	}
	if reattach {
		go func() {
			if err := in.attachTab(context.Background(), x, t); err == nil {
				notifyHandles(hs, TabEvent{Method: EventAttached})
			}
		}()
	}
}

// attachAndAnnounce attaches t for an auto-attaching client and announces
// it. Failures are logged: a tab Chrome refuses to debug (chrome://, the
// Web Store) is simply not a target.
// unnamed: the tab came without a target id, so the attach is also when it
// becomes a target, announced as created before it is attached.
func (in *Instance) attachAndAnnounce(c *clientConn, x *extConn, t *tab, unnamed bool) {
	if err := in.attachTab(c.ctx, x, t); err != nil {
		in.log.Info("auto-attach failed", "tab", t.id, "err", err)
		return
	}
	in.mu.Lock()
	if unnamed && in.client == c && in.tabs[t.id] == t && t.targetID != "" {
		in.targetEventLocked(c, "Target.targetCreated", struct {
			TargetInfo TargetInfo `json:"targetInfo"`
		}{in.targetInfoLocked(t)})
	}
	if in.client == c && c.autoAttach && in.tabs[t.id] == t {
		in.announceLocked(c, t)
	}
	in.mu.Unlock()
}

func (in *Instance) onTabUpdated(params []byte) {
	var args [3][]byte
	if wire.Args(params, args[:]) < 3 {
		return
	}
	var et extTab
	if json.Unmarshal(args[2], &et) != nil {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	t := in.tabs[et.ID]
	if t == nil {
		return
	}
	url := et.URL
	if url == "" {
		url = t.url
	}
	in.setTargetInfoLocked(t, url, et.Title)
}

func (in *Instance) onTabRemoved(x *extConn, params []byte) {
	var args [1][]byte
	if wire.Args(params, args[:]) < 1 {
		return
	}
	id, ok := wire.Int(args[0])
	if !ok {
		return
	}
	in.mu.Lock()
	t := in.tabs[id]
	if t == nil || in.ext != x {
		in.mu.Unlock()
		return
	}
	c := in.client
	notify := in.removeTabLocked(c, t)
	lastGone := len(in.tabs) == 0 && !t.closingByClient
	in.mu.Unlock()
	notify()
	x.failTab(id, "Target closed")
	if lastGone && c != nil {
		c.close(websocket.CloseNormalClosure, reasonAllTabsDetached)
	}
}

func (in *Instance) onDetach(x *extConn, params []byte) {
	var args [2][]byte
	if wire.Args(params, args[:]) < 2 {
		return
	}
	src, ok := wire.DecodeSource(args[0])
	if !ok {
		return
	}
	reason, _ := wire.Unquote(args[1])
	in.mu.Lock()
	t := in.tabs[src.TabID]
	if t == nil || in.ext != x {
		in.mu.Unlock()
		return
	}
	c := in.client
	in.log.Info("tab detached by the browser", "tab", t.id, "reason", string(reason))
	lastGone := false
	notify := func() {}
	if string(reason) == "canceled_by_user" {
		// The person cancelled the debugging bar: the tab is theirs again.
		notify = in.removeTabLocked(c, t)
		lastGone = len(in.tabs) == 0
	} else {
		// target_closed: the tab closed (onRemoved follows) or one of its
		// frames navigated somewhere the debugger cannot follow, in which
		// case the extension offers the tab again.
		in.dropSessionsLocked(c, t)
		t.setState(tabDetached, nil)
		t.clientScreencast = false
		t.detachReason = string(reason)
	}
	in.mu.Unlock()
	notify()
	x.failTab(src.TabID, "Target detached: "+string(reason))
	if lastGone && c != nil {
		c.close(websocket.CloseNormalClosure, reasonAllTabsDetached)
	}
}
