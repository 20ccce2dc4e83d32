package relay

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/creds"
)

// The tab table: the tabs the extension shares, keyed by Chrome's tab id,
// each with its attach state (attach.go moves it), its client sessions and
// the relay's own handles.

type tabState int

const (
	tabDetached tabState = iota
	tabAttaching
	tabAttached
	tabDetaching
)

// tab is one tab the extension shares. Every field is guarded by the
// instance's mutex: it is part of the state.
type tab struct {
	id         int64
	targetID   string // Chrome's targetId; "" until known
	url, title string // what discovery reports: the address bar's URL and the title
	// docURL is the URL of the document the tab shows, as its own Page
	// events and frame tree say: what its access is decided by. The
	// extension's tab updates report the address bar's instead, which on
	// an error page is the URL that failed.
	docURL string
	// loaderID is Chrome's id of that document ("" when not known): a
	// resume tells by it whether the tab shows another one (awaydoc.go).
	loaderID string
	// frames are the sub-frames of the tab's document that share its
	// process (frame id to URL), followed while the policy has tiers: what
	// automation may do with the tab is the strictest of theirs and the
	// document's, since the tab's own session reaches into them.
	frames map[string]string
	// blindFrames are its sub-frames on their way to a blind site, until
	// they commit (blindframes.go).
	blindFrames map[string]blindNav
	// blindReqs are the page's requests to blind sites (blindframes.go).
	blindReqs map[string]bool
	// scripts are the client's scripts for new documents, kept while the
	// policy has tiers (initscripts.go).
	scripts []*initScript
	// worldNames are the isolated worlds the client asked for on the tab
	// (a few): a tab that goes blind shows it stand-ins of them.
	worldNames []string
	// deferred are settings a blind tab acknowledged, to apply once it is
	// on a full site (initscripts.go).
	deferred []deferredSet
	// lift is where the client's settings of the tab stand in Chrome
	// (lifts.go).
	lift liftState
	// navApproved is the host of a navigation a person approved, not to
	// be asked again until a document commits (navask.go).
	navApproved string
	// navTo is where the tab's main frame is on its way to, from the first
	// event that says so (Page.frameStartedNavigating or
	// frameRequestedNavigation, a Document request or its redirect) until a
	// document commits: the tab is as strict as that destination from then
	// on, so that nothing of a page on a blind site — not even its URL in a
	// request event — reaches the client before it commits. A navigation
	// that never commits leaves the tab that strict until the next one does.
	navTo string
	// dialog is the JavaScript dialog the tab shows (dialogs.go).
	dialog      *dialog
	openerTabID int64
	browserCtx  string // from Chrome's TargetInfo, when it gives one

	state     tabState
	stateWait chan struct{} // closed when an attaching or detaching state ends
	attachErr error

	session *session // the client's first top-level session; nil when not announced
	// extra are further top-level sessions of the client on the tab
	// (Target.attachToTarget to a tab that already has one), oldest first.
	// The slice is replaced, never changed in place.
	extra           []*session
	closingByClient bool // Target.closeTarget is removing it
	// releaseAfterAttach: the client that started the attach left
	// meanwhile, so the attach, once Chrome has done it, is undone.
	releaseAfterAttach bool

	// handles are the relay's own users of the tab (the live view). The
	// slice is replaced, never modified in place, so a copy of the header
	// taken under the lock can be read after unlocking.
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
	// view; while set, the tab is read-only for automation.
	control string
	// acc is what automation may do with the tab (access.go), decided
	// again whenever url, control or the policy changes.
	acc tabAccess
	// blindEpoch moves on each time the tab goes blind. A command records
	// it when forwarded; a reply that finds it moved is withheld. Read
	// without the lock, on the reply path.
	blindEpoch atomic.Uint32
	// openedByClient: the client's Target.createTarget opened the tab.
	openedByClient bool
	// ctxs are the execution contexts of the tab's sessions, by session
	// ("" for the tab's own): the relay's view of them (contexts.go).
	// relayCtxs counts those of the relay's own worlds among them; read
	// without the lock on the command path.
	ctxs      map[string]*sessionContexts
	relayCtxs atomic.Int32
	// guard is the read-only guard installed in the tab's isolated worlds,
	// while it is read-only.
	guard *guardLayer
	// readOnly mirrors acc.level == accessReadOnly for the reply path,
	// which reads it without the lock.
	readOnly atomic.Bool
	// paused are the real credential headers of the tab's paused requests,
	// by session and request id, for the client's continue (credentials.go).
	paused map[string]*creds.KeptRequest
	// resuming is closed when a resume of the tab's sessions ends
	// (resume.go); nil when none is under way. replay is what the
	// sessions set that a resume sets again, in order; nextScript numbers
	// its init scripts; scriptIDs maps the client's init script
	// identifiers to Chrome's after a resume.
	resuming chan struct{}
	// away is set while the sessions wait for Chrome to let the tab be
	// debugged again: a browser page, the extension away (away.go).
	away        *awayTab
	resumes     []time.Time // when the tab was last resumed
	replay      []replayed
	replayBytes int // of replay's params
	nextScript  int
	scriptIDs   map[string]string
	// secretField is what the tab's fields hold of typed secrets
	// (secretfield.go).
	secretField secretField
	// lastCommand is when a client command that can open a tab (input,
	// script: methodInfo.opens) was last forwarded to the tab (unix
	// nanoseconds), for telling a popup the automation opened from one the
	// person did (popups.go). Written on the hot path, unlocked.
	lastCommand atomic.Int64
}

// setState moves t to s, waking whoever waits on the previous transition.
func (t *tab) setState(s tabState, err error) {
	if t.stateWait != nil {
		close(t.stateWait)
		t.stateWait = nil
	}
	t.state, t.attachErr = s, err
	if s == tabDetached {
		t.fetch = nil
		t.paused = nil
		t.ctxs = nil
		t.relayCtxs.Store(0)
	}
	if s == tabAttaching || s == tabDetaching {
		t.stateWait = make(chan struct{})
	}
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
	// Offer is "popup" for a tab our extension offers because a shared tab
	// opened it, in "pick" mode: the relay decides whether to share it.
	Offer string `json:"cdprelayOffer"`
}

// TargetInfo is CDP's Target.TargetInfo as the relay reports it.
type TargetInfo = api.TargetInfo

// targetInfo describes t as a CDP target. Of a blind tab it says its
// origin and nothing more.
func (st *state) targetInfo(t *tab) TargetInfo {
	ti := TargetInfo{
		TargetID:         t.targetID,
		Type:             "page",
		Title:            t.title,
		URL:              t.url,
		Attached:         t.session != nil,
		BrowserContextID: st.browserCtx,
	}
	if t.acc.level == accessBlind || st.hidesURL(t.url) {
		ti.URL, ti.Title = origin(t.url), ""
	}
	if t.browserCtx != "" {
		ti.BrowserContextID = t.browserCtx
	}
	if o := st.tabs[t.openerTabID]; o != nil && t.openerTabID != 0 {
		ti.OpenerID = o.targetID
	}
	return ti
}

func (st *state) browserTargetInfo() TargetInfo {
	return TargetInfo{TargetID: st.in.browserTID, Type: "browser", Attached: true}
}

func (st *state) sortedTabs() []*tab {
	ts := make([]*tab, 0, len(st.tabs))
	for _, t := range st.tabs {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *tab) int { return int(a.id - b.id) })
	return ts
}

func (st *state) tabByTarget(targetID string) *tab {
	if targetID == "" {
		return nil
	}
	for _, t := range st.tabs {
		if t.targetID == targetID {
			return t
		}
	}
	return nil
}

// shared reports whether t is still the tab the table holds for its id.
func (st *state) shared(t *tab) bool { return st.tabs[t.id] == t }

// upsertTab records a tab the extension offers or created.
func (st *state) upsertTab(et extTab) (t *tab, isNew bool) {
	t = st.tabs[et.ID]
	if t == nil {
		t = &tab{id: et.ID}
		st.tabs[et.ID] = t
		isNew = true
	}
	t.url = et.URL
	if t.url == "" {
		t.url = et.PendingURL
	}
	if t.url == "" {
		t.url = "about:blank"
	}
	if t.state != tabAttached {
		// Until the tab's own events say otherwise.
		t.docURL = t.url
	}
	t.title = et.Title
	if et.OpenerTabID != 0 {
		t.openerTabID = et.OpenerTabID
	}
	if et.TargetID != "" {
		t.targetID = et.TargetID
	}
	st.updateAccess(t)
	return t, isNew
}

// rootTab picks the tab that browser-wide commands without a browser-level
// equivalent (Storage.getCookies at the root, say) are sent to: the
// lowest-numbered one with a client session, one the automation has full
// use of if there is one. A tab-level session answers them for the whole
// profile.
func (st *state) rootTab() *tab {
	var best *tab
	for _, t := range st.tabs {
		if t.session == nil {
			continue
		}
		switch {
		case best == nil,
			// One whose sessions wait for the debugger (away.go) only when
			// every one does.
			best.resuming != nil && t.resuming == nil,
			(best.resuming == nil) == (t.resuming == nil) && t.acc.level < best.acc.level,
			(best.resuming == nil) == (t.resuming == nil) && t.acc.level == best.acc.level && t.id < best.id:
			best = t
		}
	}
	return best
}

// knownContext reports whether id is a browser context the relay reports.
func (st *state) knownContext(id string) bool {
	if id == st.browserCtx {
		return true
	}
	for _, t := range st.tabs {
		if t.browserCtx == id {
			return true
		}
	}
	return false
}

// removeTab forgets t: it closed or is no longer shared. why says why its
// sessions end, when the client did not end them ("" for a closed tab, as
// Chrome says nothing more). It returns the handles to tell, outside the
// lock.
func (st *state) removeTab(t *tab, why string) []*TabHandle {
	st.endAway(t)
	st.dropSessions(t, why)
	delete(st.tabs, t.id)
	hs := t.handles
	t.handles = nil
	t.setState(tabDetached, fmt.Errorf("tab %d is no longer shared", t.id))
	if st.client != nil && t.targetID != "" {
		st.targetEvent("Target.targetDestroyed", struct {
			TargetID string `json:"targetId"`
		}{t.targetID})
	}
	return hs
}

// browserDetached records that the browser detached the debugger from t
// while the tab stays shared (a frame navigated where the debugger cannot
// follow): the client's sessions on it end, told why; the extension offers
// it again. reason is what the live view shows.
func (st *state) browserDetached(t *tab, reason, why string) {
	st.dropSessions(t, why)
	t.forgetClientSetup() // the client's sessions on it end
	t.setState(tabDetached, nil)
	t.clientScreencast = false
	t.detachReason = reason
}
