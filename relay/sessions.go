package relay

import (
	"strconv"
	"strings"
)

// Several top-level sessions on one tab.
//
// Chrome gives every Target.attachToTarget its own session with its own
// state; Playwright's context.newCDPSession(page) and Puppeteer's
// page.createCDPSession() rely on that while the page's own session goes on.
// Through the extension there is one chrome.debugger session per tab, so the
// relay multiplexes: every top-level session sends its commands to the same
// debuggee and gets its own replies, and events are shared out this way:
//
//   - the tab's first session (the one auto-attach announced, or the first
//     attachToTarget) receives every event of the tab, as it always has;
//   - a further session receives the events of the domains it enabled itself
//     (X.enable, until X.disable), and Inspector.* — roughly what Chrome
//     would send a fresh session.
//
// The first session keeps everything because it is the one a client's page
// object is built on: filtering it by domain could only lose events the
// client relies on (Target.attachedToTarget of its frames, lifecycle events
// Chrome replays) for the sake of a session the client added later. A
// further session filtered by what it enabled sees what it asked for and
// does not flood a raw CDPSession with the page's traffic.
//
// The domains are the tab's, not a session's: X.disable from one session is
// answered by the relay and not sent to Chrome while another session of the
// tab still has X enabled, so a helper session's clean-up cannot switch off
// the page session's Runtime or Network.

// attachedParams are Target.attachedToTarget's.
type attachedParams struct {
	SessionID          string     `json:"sessionId"`
	TargetInfo         TargetInfo `json:"targetInfo"`
	WaitingForDebugger bool       `json:"waitingForDebugger"`
}

type detachedParams struct {
	SessionID string `json:"sessionId"`
	TargetID  string `json:"targetId"`
}

// mintSessionLocked makes a new top-level session of c on t and tells
// owner (nil: the root) with Target.attachedToTarget.
func (in *Instance) mintSessionLocked(c *clientConn, t *tab, owner *session) *session {
	if in.client != c {
		// The client left while its attach was under way: a session minted
		// now would be nobody's, and would hide the tab from the next client.
		return nil
	}
	in.nextSession++
	s := newSession("pw-tab-"+strconv.Itoa(in.nextSession), t, false)
	s.owner = owner
	in.sessions[s.id] = s
	if t.session == nil {
		t.session = s
	} else {
		t.extra = append(in.liveExtraLocked(t), s)
	}
	c.event("Target.attachedToTarget", owner, attachedParams{s.id, in.targetInfoLocked(t), false})
	in.observe(Event{Actor: ActorClient, Kind: KindAttach, Target: t.targetID, Outcome: OutcomeOK, Detail: s.id})
	return s
}

// liveExtraLocked returns t's further sessions that still exist, in a new
// slice: t.extra is replaced, never changed in place, so that a copy of it
// taken under mu stays valid.
func (in *Instance) liveExtraLocked(t *tab) []*session {
	var live []*session
	for _, s := range t.extra {
		if in.sessions[s.id] == s {
			live = append(live, s)
		}
	}
	return live
}

// topSessionsLocked returns t's top-level sessions, the first one first.
func (in *Instance) topSessionsLocked(t *tab) []*session {
	if t.session == nil {
		return nil
	}
	return append([]*session{t.session}, in.liveExtraLocked(t)...)
}

// tellDetachedLocked sends Target.detachedFromTarget for top-level session
// s to the session that attached it. Nothing is said for a page endpoint's
// own session (it was never announced) or when the owner is gone too.
func (in *Instance) tellDetachedLocked(c *clientConn, s *session) {
	if c == nil || s.idJSON == nil {
		return
	}
	if o := s.owner; o != nil && in.sessions[o.id] != o {
		return
	}
	c.event("Target.detachedFromTarget", s.owner, detachedParams{s.id, s.tab.targetID})
}

// detachSessionLocked ends one top-level session that the client let go
// of. It reports whether s was the tab's last one, in which case nothing
// has been done: the caller detaches the whole tab. Otherwise the others
// carry on untouched; when s was the first session, the next one becomes
// first and from now on receives all of the tab's events.
func (in *Instance) detachSessionLocked(c *clientConn, s *session) (last bool) {
	t := s.tab
	extra := in.liveExtraLocked(t)
	if t.session == s && len(extra) == 0 {
		return true
	}
	delete(in.sessions, s.id)
	if t.session == s {
		t.session, t.extra = extra[0], extra[1:]
	} else {
		rest := make([]*session, 0, len(extra))
		for _, e := range extra {
			if e != s {
				rest = append(rest, e)
			}
		}
		t.extra = rest
	}
	in.tellDetachedLocked(c, s)
	in.dropOwnedLocked(c, s)
	return false
}

// dropOwnedLocked ends the top-level sessions that owner attached: Chrome
// detaches a session's sessions with it. A tab left with no session keeps
// its debugger until the client leaves; that is rare and harmless.
func (in *Instance) dropOwnedLocked(c *clientConn, owner *session) {
	for _, s := range in.sessions {
		if s.owner == owner && !s.child && s.tab != nil {
			if in.detachSessionLocked(c, s) {
				in.dropSessionsLocked(c, s.tab)
			}
		}
	}
}

// mintBrowserSessionLocked makes a browser-level session for
// Target.attachToBrowserTarget (Playwright's newBrowserCDPSession, and the
// session its newCDPSession attaches from).
func (in *Instance) mintBrowserSessionLocked(c *clientConn) *session {
	in.nextSession++
	s := newSession("pw-browser-"+strconv.Itoa(in.nextSession), nil, false)
	in.sessions[s.id] = s
	c.event("Target.attachedToTarget", nil, attachedParams{s.id, in.browserTargetInfoLocked(), false})
	return s
}

// domainOf returns the domain of a CDP method or event name.
func domainOf(method []byte) string {
	if i := strings.IndexByte(string(method), '.'); i > 0 {
		return string(method[:i])
	}
	return ""
}

// wantsEventLocked reports whether further session s receives an event of
// the tab's own session.
func wantsEventLocked(s *session, method []byte) bool {
	d := domainOf(method)
	return d == "Inspector" || s.enabled[d]
}

// domainWantedLocked reports whether a top-level session of t other than
// s has domain enabled.
func (in *Instance) domainWantedLocked(t *tab, s *session, domain string) bool {
	for _, o := range in.topSessionsLocked(t) {
		if o != s && o.enabled[domain] {
			return true
		}
	}
	return false
}
