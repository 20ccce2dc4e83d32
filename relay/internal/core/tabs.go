package core

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/contexts"
)

// The tab table: the tabs the extension shares, keyed by Chrome's tab id,
// each with its attach state (package attach moves it), its client sessions and
// the relay's own handles.

type tabState int

const (
	TabDetached tabState = iota
	TabAttaching
	TabAttached
	TabDetaching
)

// Tab is one tab the extension shares. Every field is guarded by the
// instance's mutex (it is part of the state), but for the atomics, which
// say who reads them without it.
//
// The fields declared here are the core's own: the tab as a target, its
// attach state, its sessions and the relay's own users of it. What each
// concern keeps of the tab is its slot, embedded below, declared beside
// that concern's code:
//
//   - tierTab (tierslots.go): what a tab's access is decided from and
//     what the core holds a navigation for: the document's frames and
//     requests on their way to blind sites, where it is on its way to, the
//     client's init scripts, the lifted settings, and the reply path's
//     blind epoch;
//   - resumeTab (resumeslots.go): what the tab's sessions need to come
//     through a detach or a time away: the resume under way, what it sets
//     again, the wait for the debugger.
//
// A stage package keeps what it has of a tab in a slot (slots.go): the
// credentials the real headers of the paused requests and the typed
// secrets of the tab's fields; the tiers the read-only guard, its mirror
// for the reply path, the client's world names and the settings a blind
// tab deferred; the rules the Fetch setup of the tab's sessions; the
// person the tab's dialog. The browser stage keeps nothing per tab:
// the downloads are the state's, and what tells one the automation started is
// the core's lastCommand.
type Tab struct {
	Id         int64
	TargetID   string // Chrome's targetId; "" until known
	Url, title string // what discovery reports: the address bar's URL and the title
	// DocURL is the URL of the document the tab shows, as its own Page
	// events and frame tree say: what its access is decided by. The
	// extension's tab updates report the address bar's instead, which on
	// an error page is the URL that failed.
	DocURL      string
	OpenerTabID int64  // the tab that opened it (ext/popups.go); 0: none known
	BrowserCtx  string // from Chrome's TargetInfo, when it gives one

	State     tabState
	stateWait chan struct{} // closed when an attaching or detaching state ends
	AttachErr error         // why the last attach failed, for whoever waited on it

	Session *Session // the client's first top-level session; nil when not announced
	// extra are further top-level sessions of the client on the tab
	// (Target.attachToTarget to a tab that already has one), oldest first.
	// The slice is replaced, never changed in place.
	extra           []*Session
	ClosingByClient bool // Target.closeTarget is removing it
	// ReleaseAfterAttach: the client that started the attach left
	// meanwhile, so the attach, once Chrome has done it, is undone.
	ReleaseAfterAttach bool

	// Handles are the relay's own users of the tab (the live view: package
	// handles). The slice is replaced, never modified in place, so a copy
	// of the header taken under the lock can be read after unlocking.
	Handles []*TabHandle
	// ClientScreencast: the CDP client runs a screencast of its own, so
	// frames go to the client (and a copy to handles: package handles'
	// screencast.go). Guarded by the instance's mutex.
	ClientScreencast bool
	// detachReason is why the browser last detached the debugger while
	// the tab stayed shared; cleared on the next attach.
	DetachReason string
	// Acc is what automation may do with the tab (access.go), decided
	// again whenever url, control or the policy changes. The tiers decide
	// it; every concern reads it.
	Acc TabAccess
	// OpenedByClient: the client's Target.createTarget opened the tab.
	OpenedByClient bool
	// Ctxs are the execution contexts of the tab's sessions: the relay's
	// view of them (relay/internal/contexts), kept from the events.
	Ctxs contexts.Tab
	// lastCommand is when a client command that can open a tab (input,
	// script: methods.Info.Opens) was last forwarded to the tab (unix
	// nanoseconds), for telling a popup or a download the automation
	// started from one the person did (ext/popups.go, package browser). Written on
	// the hot path, unlocked.
	LastCommand atomic.Int64

	// Control names the person who took control of the tab from the live
	// view; while set, the tab is read-only for automation (person's control.go,
	// access.go). NavApproved is the host of a navigation a person
	// approved, not to be asked again until a document commits (the person's asking.go).
	Control     string
	NavApproved string

	// The concerns' slots (above).
	tierTab
	resumeTab
	slots []any // the stages' own (slots.go), guarded by the instance's mutex
}

// setState moves t to s, waking whoever waits on the previous transition.
func (t *Tab) SetState(s tabState, err error) {
	if t.stateWait != nil {
		close(t.stateWait)
		t.stateWait = nil
	}
	t.State, t.AttachErr = s, err
	if s == TabDetached {
		detachedLocked(t)
		t.Ctxs.Reset()
	}
	if s == TabAttaching || s == TabDetaching {
		t.stateWait = make(chan struct{})
	}
}

// StateWait is closed when t's attaching or detaching state ends (nil in
// any other state): who finds a transition under way waits on it, without
// the lock, and decides again (package attach).
func (t *Tab) StateWait() <-chan struct{} { return t.stateWait }

// Attached records what Chrome said of t as it attached: its target info
// and the URL of the document its main frame shows.
func (st *State) Attached(t *Tab, ti TargetInfo, docURL string) {
	if ti.TargetID != "" {
		t.TargetID = ti.TargetID
	}
	if ti.URL != "" {
		t.Url = ti.URL
	}
	t.DocURL = docURL
	if t.DocURL == "" {
		t.DocURL = t.Url
	}
	t.title = ti.Title
	st.UpdateAccess(t)
	t.BrowserCtx = ti.BrowserContextID
	if ti.BrowserContextID != "" {
		// Every tab of a profile is in the same default context: report
		// Chrome's id for tabs not attached yet too.
		st.BrowserCtx = ti.BrowserContextID
	}
}

// ExtTab is the subset of chrome.tabs.Tab the relay reads, plus the
// targetId our extension adds.
type ExtTab struct {
	ID          int64  `json:"id"`
	URL         string `json:"url"`
	PendingURL  string `json:"pendingUrl"`
	Title       string `json:"title"`
	OpenerTabID int64  `json:"openerTabId"`
	TargetID    string `json:"targetId"`
	// Offer is "popup" for a tab our extension offers because a shared tab
	// opened it, in "pick" mode: the relay decides whether to share it.
	Offer string `json:"cdprelayOffer"`
}

// TargetInfo is CDP's Target.TargetInfo as the relay reports it.
type TargetInfo = api.TargetInfo

// TargetInfo describes t as a CDP target. Of a blind tab it says its
// origin and nothing more.
func (st *State) TargetInfo(t *Tab) TargetInfo {
	ti := TargetInfo{
		TargetID:         t.TargetID,
		Type:             "page",
		Title:            t.title,
		URL:              t.Url,
		Attached:         t.Session != nil,
		BrowserContextID: st.BrowserCtx,
	}
	if t.Acc.Level == api.Blind || st.hidesURL(t.Url) {
		ti.URL, ti.Title = api.Origin(t.Url), ""
	}
	if t.BrowserCtx != "" {
		ti.BrowserContextID = t.BrowserCtx
	}
	if o := st.Tabs[t.OpenerTabID]; o != nil && t.OpenerTabID != 0 {
		ti.OpenerID = o.TargetID
	}
	return ti
}

func (st *State) BrowserTargetInfo() TargetInfo {
	return TargetInfo{TargetID: st.Inst.BrowserTID, Type: "browser", Attached: true}
}

func (st *State) SortedTabs() []*Tab {
	ts := make([]*Tab, 0, len(st.Tabs))
	for _, t := range st.Tabs {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *Tab) int { return int(a.Id - b.Id) })
	return ts
}

func (st *State) TabByTarget(targetID string) *Tab {
	if targetID == "" {
		return nil
	}
	for _, t := range st.Tabs {
		if t.TargetID == targetID {
			return t
		}
	}
	return nil
}

// shared reports whether t is still the tab the table holds for its id.
func (st *State) Shared(t *Tab) bool { return st.Tabs[t.Id] == t }

// UpsertTab records a tab the extension offers or created.
func (st *State) UpsertTab(et ExtTab) (t *Tab, isNew bool) {
	t = st.Tabs[et.ID]
	if t == nil {
		t = &Tab{Id: et.ID, slots: tabSlots.make()}
		st.Tabs[et.ID] = t
		isNew = true
	}
	t.Url = et.URL
	if t.Url == "" {
		t.Url = et.PendingURL
	}
	if t.Url == "" {
		t.Url = "about:blank"
	}
	if t.State != TabAttached {
		// Until the tab's own events say otherwise.
		t.DocURL = t.Url
	}
	t.title = et.Title
	if et.OpenerTabID != 0 {
		t.OpenerTabID = et.OpenerTabID
	}
	if et.TargetID != "" {
		t.TargetID = et.TargetID
	}
	st.UpdateAccess(t)
	return t, isNew
}

// rootTab picks the tab that browser-wide commands without a browser-level
// equivalent (Storage.getCookies at the root, say) are sent to: the
// lowest-numbered one with a client session, one the automation has full
// use of if there is one. A tab-level session answers them for the whole
// profile.
func (st *State) rootTab() *Tab {
	var best *Tab
	for _, t := range st.Tabs {
		if t.Session == nil {
			continue
		}
		switch {
		case best == nil,
			// One whose sessions wait for the debugger (away.go, relay/internal/away) only when
			// every one does.
			best.Resuming != nil && t.Resuming == nil,
			(best.Resuming == nil) == (t.Resuming == nil) && t.Acc.Level < best.Acc.Level,
			(best.Resuming == nil) == (t.Resuming == nil) && t.Acc.Level == best.Acc.Level && t.Id < best.Id:
			best = t
		}
	}
	return best
}

// KnownContext reports whether id is a browser context the relay reports.
func (st *State) KnownContext(id string) bool {
	if id == st.BrowserCtx {
		return true
	}
	for _, t := range st.Tabs {
		if t.BrowserCtx == id {
			return true
		}
	}
	return false
}

// RemoveTab forgets t: it closed or is no longer shared. why says why its
// sessions end, when the client did not end them ("" for a closed tab, as
// Chrome says nothing more). It returns the handles to tell, outside the
// lock.
func (st *State) RemoveTab(t *Tab, why string) []*TabHandle {
	st.EndAway(t)
	st.DropSessions(t, why)
	delete(st.Tabs, t.Id)
	hs := t.Handles
	t.Handles = nil
	t.SetState(TabDetached, fmt.Errorf("tab %d is no longer shared", t.Id))
	if st.Client != nil && t.TargetID != "" {
		st.TargetEvent("Target.targetDestroyed", struct {
			TargetID string `json:"targetId"`
		}{t.TargetID})
	}
	return hs
}

// BrowserDetached records that the browser detached the debugger from t
// while the tab stays shared (a frame navigated where the debugger cannot
// follow): the client's sessions on it end, told why; the extension offers
// it again. reason is what the live view shows.
func (st *State) BrowserDetached(t *Tab, reason, why string) {
	st.DropSessions(t, why)
	t.ForgetClientSetup() // the client's sessions on it end
	t.SetState(TabDetached, nil)
	t.ClientScreencast = false
	t.DetachReason = reason
}

// TargetOf is t's target id; "" for no tab.
func TargetOf(t *Tab) string {
	if t == nil {
		return ""
	}
	return t.TargetID
}
