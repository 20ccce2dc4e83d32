package core

import (
	"strconv"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
)

// The session table: every session the client can name, by id.
//
// A tab's top-level sessions are minted by the relay ("pw-tab-N", never
// reused). Child sessions (out-of-process frames, workers) keep Chrome's
// ids, learnt from Target.attachedToTarget on the tab, and are routed to
// their tab. Browser sessions (Target.attachToBrowserTarget) behave like
// the root.
//
// Several top-level sessions on one tab. Chrome gives every
// Target.attachToTarget its own session with its own state; Playwright's
// context.newCDPSession(page) and Puppeteer's page.createCDPSession() rely
// on that while the page's own session goes on. Through the extension there
// is one chrome.debugger session per tab, so the relay multiplexes: every
// top-level session sends its commands to the same debuggee and gets its
// own replies, and events are shared out this way:
//
//   - the tab's first session (the one auto-attach announced, or the first
//     attachToTarget) receives every event of the tab;
//   - a further session receives the events of the domains it enabled itself
//     (X.enable, until X.disable), and Inspector.* — roughly what Chrome
//     would send a fresh session.
//
// The first session keeps everything because it is the one a client's page
// object is built on: filtering it by domain could only lose events the
// client relies on (Target.attachedToTarget of its frames, lifecycle events
// Chrome replays) for the sake of a session the client added later.
//
// The domains are the tab's, not a session's: X.disable from one session is
// answered by the relay and not sent to Chrome while another session of the
// tab still has X enabled, so a helper session's clean-up cannot switch off
// the page session's Runtime or Network.

// Session is a client-visible CDP session: a tab's top-level session, a
// child session (frame, worker) or a browser session (tab nil). What the
// tiers keep of a child session is their slot, tierSession
// (tierslots.go).
type Session struct {
	Id string
	// idJSON is id as a JSON string token, written into every message of
	// the session. It is nil for a page endpoint's own session: a client of
	// /devtools/page/<targetId> talks to its page without sessionIds.
	idJSON   []byte
	Tab      *Tab // nil for a browser session
	Child    bool
	TargetID string   // a child's own target, for its detach event
	parent   *Session // the session a child was announced on; nil for a tab's own
	// owner is the session whose Target.attachToTarget made this one; nil
	// for the root. Chrome tells the asking session of the attach and of the
	// detach, and clients (Playwright's CDPSession) listen there.
	owner *Session

	// Guarded by the instance's mutex.
	Enabled  map[string]bool // domains this top-level session enabled and has not disabled
	Discover bool            // Target.setDiscoverTargets on this session
	// A child's own page and what automation may do with it: a frame on a
	// blind site is blind on its own session (access.go).
	Url string
	Acc TabAccess
	// ChildRuntime: the client has Runtime on on this child session (a
	// top-level session's is Enabled["Runtime"]); the relay keeps it on in
	// Chrome either way (runtimehold.go).
	ChildRuntime bool
	// ClearedOwed: the session's contexts went while the automation was
	// stopped, and the client is told so at Resume (package switches'
	// ResyncContexts).
	ClearedOwed bool

	tierSession // the tiers' slot (tierslots.go)
}

func NewSession(id string, t *Tab, child bool) *Session {
	return &Session{Id: id, idJSON: wire.AppendString(nil, id), Tab: t, Child: child}
}

// AttachedParams are Target.attachedToTarget's.
type AttachedParams struct {
	SessionID          string     `json:"sessionId"`
	TargetInfo         TargetInfo `json:"targetInfo"`
	WaitingForDebugger bool       `json:"waitingForDebugger"`
}

type DetachedParams struct {
	SessionID string `json:"sessionId"`
	TargetID  string `json:"targetId"`
	// Reason is the relay's: why a session ended that the client did not
	// end (detach.go). Chrome's event has no such field; clients ignore it.
	Reason string `json:"reason,omitempty"`
}

// maxSessions bounds the sessions of an instance that a client can have
// minted (Target.attachToTarget to a page that has one,
// Target.attachToBrowserTarget): every event of a tab is matched against
// its sessions, so they must stay few. Real clients use a handful.
const MaxSessions = 1024

const ErrTooManySessions = "cdprelay: too many sessions (1024); detach the ones no longer used"

// Live reports whether s is still in the table.
func (st *State) Live(s *Session) bool { return s != nil && st.Sessions[s.Id] == s }

// lookupSession returns the session a command names: the one its
// sessionId gives, or, without one, a page endpoint's own session.
func (st *State) lookupSession(c *ClientConn, id []byte) *Session {
	if id != nil {
		return st.Sessions[string(id)]
	}
	if p := c.Page; p != nil && st.Live(p) {
		return p
	}
	return nil
}

// Announce gives t a client session at the root and tells the client with
// Target.attachedToTarget. A tab that has a session keeps it.
func (st *State) Announce(c *ClientConn, t *Tab) *Session {
	if t.Session != nil {
		return t.Session
	}
	return st.MintSession(c, t, nil)
}

// MintSession makes a new top-level session of c on t and tells owner
// (nil: the root) with Target.attachedToTarget. It returns nil when c is
// no longer the client: a session minted for a client that left would be
// nobody's, and would hide the tab from the next client.
func (st *State) MintSession(c *ClientConn, t *Tab, owner *Session) *Session {
	if st.Client != c {
		return nil
	}
	st.NextSession++
	s := NewSession("pw-tab-"+strconv.Itoa(st.NextSession), t, false)
	s.owner = owner
	st.addTopSession(t, s)
	c.Event("Target.attachedToTarget", owner, AttachedParams{s.Id, st.TargetInfo(t), false})
	st.Observe(Event{Actor: api.ActorClient, Kind: api.KindAttach, Target: t.TargetID, Outcome: api.OutcomeOK, Detail: s.Id})
	return s
}

// mintPageSession makes the session of a page endpoint's client on t: its
// messages carry no sessionId, and it is never announced.
func (st *State) mintPageSession(t *Tab) *Session {
	st.NextSession++
	s := NewSession("pw-page-"+strconv.Itoa(st.NextSession), t, false)
	s.idJSON = nil
	st.addTopSession(t, s)
	st.Observe(Event{Actor: api.ActorClient, Kind: api.KindAttach, Target: t.TargetID, Outcome: api.OutcomeOK, Detail: s.Id})
	return s
}

func (st *State) addTopSession(t *Tab, s *Session) {
	st.Sessions[s.Id] = s
	if t.Session == nil {
		t.Session = s
	} else {
		t.extra = append(st.LiveExtra(t), s)
	}
}

// MintBrowserSession makes a browser-level session for
// Target.attachToBrowserTarget (Playwright's newBrowserCDPSession, and the
// session its newCDPSession attaches from).
func (st *State) MintBrowserSession(c *ClientConn) *Session {
	st.NextSession++
	s := NewSession("pw-browser-"+strconv.Itoa(st.NextSession), nil, false)
	st.Sessions[s.Id] = s
	c.Event("Target.attachedToTarget", nil, AttachedParams{s.Id, st.BrowserTargetInfo(), false})
	return s
}

// addChild records a child session (frame, worker) that Chrome announced
// under parent. An id already in use keeps its session: a child must not
// reroute another one. It returns nil when nothing was added.
func (st *State) addChild(parent *Session, id, targetID, url []byte) *Session {
	if len(id) == 0 || st.Sessions[string(id)] != nil {
		return nil
	}
	child := NewSession(string(id), parent.Tab, true)
	child.parent = parent
	child.TargetID = string(targetID)
	child.Url = string(url)
	// A frame on its way to a blind site is blind from its attach.
	navTo, navAcc := parent.Tab.blindNavOf(child.TargetID)
	child.NavTo = navTo
	child.Acc = api.Stricter(api.Stricter(st.ChildAccess(child.Url), st.navAccess(child.NavTo)), navAcc)
	st.Sessions[child.Id] = child
	st.Inst.childSessions.Add(1)
	return child
}

// dropChild forgets child session cs and every session announced under it:
// a frame's workers and nested frames go with the frame.
func (st *State) dropChild(cs *Session) (dropped []*Session) {
	delete(st.Sessions, cs.Id)
	childGoneLocked(cs.Tab, cs)
	cs.Tab.Ctxs.Drop(cs.Id)
	dropped = append(dropped, cs)
	for _, d := range st.Sessions {
		for p := d.parent; p != nil; p = p.parent {
			if p == cs {
				delete(st.Sessions, d.Id)
				childGoneLocked(d.Tab, d)
				d.Tab.Ctxs.Drop(d.Id)
				dropped = append(dropped, d)
				break
			}
		}
	}
	return dropped
}

// LiveExtra returns t's further sessions that still exist, in a new slice.
func (st *State) LiveExtra(t *Tab) []*Session {
	var live []*Session
	for _, s := range t.extra {
		if st.Live(s) {
			live = append(live, s)
		}
	}
	return live
}

// TopSessions returns t's top-level sessions, the first one first.
func (st *State) TopSessions(t *Tab) []*Session {
	if t.Session == nil {
		return nil
	}
	return append([]*Session{t.Session}, st.LiveExtra(t)...)
}

// tellDetached sends Target.detachedFromTarget for top-level session s to
// the session that attached it, with why it ended when the client did not
// end it. Nothing is said for a page endpoint's own session (it was never
// announced) or when the owner is gone too.
func (st *State) tellDetached(s *Session, why string) {
	c := st.Client
	if c == nil || s.idJSON == nil {
		return
	}
	if o := s.owner; o != nil && !st.Live(o) {
		return
	}
	c.Event("Target.detachedFromTarget", s.owner, DetachedParams{s.Id, s.Tab.TargetID, why})
}

// dropSessions removes every client session of t, children included, and
// tells the client that t's top-level sessions detached, and why when the
// client did not ask for it (why, "" otherwise: a warning on the sessions
// that enabled Log, then a reason in the detach). A page endpoint whose
// page this was is closed, as Chrome closes a page's socket when its target
// goes.
func (st *State) DropSessions(t *Tab, why string) {
	st.WarnSessions(t, why)
	tops := st.TopSessions(t)
	for id, cs := range st.Sessions {
		if cs.Tab == t {
			delete(st.Sessions, id)
		}
	}
	t.Session, t.extra = nil, nil
	t.forgetReplay()
	for _, s := range tops {
		st.Observe(Event{Actor: api.ActorClient, Kind: api.KindDetach, Target: t.TargetID, Outcome: api.OutcomeOK, Detail: s.Id})
		// Owners are checked after the deletions: a session attached from
		// another session of this tab goes without a word, with its owner.
		st.tellDetached(s, why)
	}
	if c := st.Client; c != nil && c.Page != nil && c.Page.Tab == t {
		c.Close(websocket.CloseNormalClosure, "Target closed")
	}
}

// DetachSession ends one top-level session that the client let go of. It
// reports whether s was the tab's last one, in which case nothing has been
// done: the caller detaches the whole tab. Otherwise the others carry on
// untouched; when s was the first session, the next one becomes first and
// from now on receives all of the tab's events.
func (st *State) DetachSession(s *Session) (last bool) {
	t := s.Tab
	extra := st.LiveExtra(t)
	if t.Session == s && len(extra) == 0 {
		return true
	}
	delete(st.Sessions, s.Id)
	if t.Session == s {
		t.Session, t.extra = extra[0], extra[1:]
	} else {
		rest := make([]*Session, 0, len(extra))
		for _, e := range extra {
			if e != s {
				rest = append(rest, e)
			}
		}
		t.extra = rest
	}
	st.tellDetached(s, "")
	st.dropOwned(s)
	return false
}

// DetachBrowserSession ends a browser session and the sessions it
// attached.
func (st *State) DetachBrowserSession(s *Session) {
	delete(st.Sessions, s.Id)
	if c := st.Client; c != nil {
		c.Event("Target.detachedFromTarget", nil, DetachedParams{SessionID: s.Id, TargetID: st.Inst.BrowserTID})
	}
	st.dropOwned(s)
}

// dropOwned ends the top-level sessions that owner attached: Chrome
// detaches a session's sessions with it. A tab left with no session keeps
// its debugger until the client leaves; that is rare and harmless.
func (st *State) dropOwned(owner *Session) {
	for _, s := range st.Sessions {
		if s.owner == owner && !s.Child && s.Tab != nil {
			if st.DetachSession(s) {
				st.DropSessions(s.Tab, "")
			}
		}
	}
}

// DomainOf returns the domain of a CDP method or event name.
func DomainOf(method []byte) string {
	for i, c := range method {
		if c == '.' {
			if i == 0 {
				return ""
			}
			return string(method[:i])
		}
	}
	return ""
}

// WantsEvent reports whether further session s receives an event of the
// tab's own session.
func WantsEvent(s *Session, method []byte) bool {
	d := DomainOf(method)
	return d == "Inspector" || s.Enabled[d]
}

// domainWanted reports whether a top-level session of t other than s has
// domain enabled.
func (st *State) DomainWanted(t *Tab, s *Session, domain string) bool {
	for _, o := range st.TopSessions(t) {
		if o != s && o.Enabled[domain] {
			return true
		}
	}
	return false
}

// switchDomain records X.enable or X.disable on top-level session s and
// reports whether the command must still go to Chrome: a disable is kept
// from Chrome while another session of the tab has the domain.
func (st *State) SwitchDomain(s *Session, domain string, on bool) (forward bool) {
	if !st.Live(s) {
		return true
	}
	if on {
		if s.Enabled == nil {
			s.Enabled = make(map[string]bool)
		}
		if len(s.Enabled) >= maxSessionDomains && !s.Enabled[domain] {
			st.Inst.Srv.Cfg.Metrics.Limited[metrics.LimitDomains].Inc()
			return true // forwarded, not followed (bounds.go)
		}
		s.Enabled[domain] = true
		return true
	}
	delete(s.Enabled, domain)
	if relayDomains[domain] {
		return false // the relay keeps it on for itself
	}
	return !st.DomainWanted(s.Tab, s, domain)
}

// relayDomains are the domains the relay enables on every tab it attaches
// for its own use: X.disable from a client is answered, not sent.
var relayDomains = map[string]bool{"Page": true, "Debugger": true}
