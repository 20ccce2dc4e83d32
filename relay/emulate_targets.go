package relay

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// Target.* at the browser level: what Chrome's browser target answers,
// from the tabs the extension shares. Every handler acts on the params as
// the route step decoded them (k.a).

func (c *clientConn) getTargetInfo(k call) {
	st := c.inst.lock()
	defer c.inst.unlock()
	if k.a.targetID == "" || k.a.targetID == c.inst.browserTID {
		c.reply(k, map[string]TargetInfo{"targetInfo": st.browserTargetInfo()})
		return
	}
	t := st.tabByTarget(k.a.targetID)
	if t == nil {
		c.fail(k, codeInvalidParams, "No target with given id found")
		return
	}
	c.reply(k, map[string]TargetInfo{"targetInfo": st.targetInfo(t)})
}

func (c *clientConn) getTargets(k call) {
	st := c.inst.lock()
	defer c.inst.unlock()
	infos := []TargetInfo{}
	for _, t := range st.sortedTabs() {
		if t.targetID != "" {
			infos = append(infos, st.targetInfo(t))
		}
	}
	c.reply(k, map[string][]TargetInfo{"targetInfos": infos})
}

func (c *clientConn) setDiscoverTargets(k call) {
	st := c.inst.lock()
	defer c.inst.unlock()
	// Each session that asks gets the target events: chromedp asks on its
	// page session, Playwright's browser session on its own.
	flag := &c.discover
	if s := k.sess; s != nil {
		if !st.live(s) {
			c.fail(k, codeNoSession, "Session with given id not found.")
			return
		}
		flag = &s.discover
	}
	was := *flag
	*flag = k.a.discover
	if k.a.discover && !was {
		// As Chrome does: every existing target is reported before the
		// reply.
		for _, t := range st.sortedTabs() {
			if t.targetID != "" {
				c.event("Target.targetCreated", k.sess, map[string]TargetInfo{"targetInfo": st.targetInfo(t)})
			}
		}
	}
	c.reply(k, struct{}{})
}

// setAutoAttach at the root attaches every shared tab and announces each
// with Target.attachedToTarget before replying, which is what Playwright's
// connectOverCDP waits for.
func (c *clientConn) setAutoAttach(k call) {
	if k.a.autoAttach && (k.a.flatten == nil || !*k.a.flatten) {
		c.fail(k, codeServerError, "cdprelay: only flat sessions are supported (flatten: true)")
		return
	}
	in := c.inst
	st := in.lock()
	c.autoAttach = k.a.autoAttach
	tabs := st.sortedTabs()
	in.unlock()
	if k.a.autoAttach {
		for _, t := range tabs {
			if err := in.attachTab(c.ctx, c.ext(), t); err != nil {
				in.log.Info("auto-attach failed", "tab", t.id, "err", err)
				continue
			}
			st := in.lock()
			if st.shared(t) && c.autoAttach {
				st.announce(c, t)
			}
			in.unlock()
		}
	}
	c.reply(k, struct{}{})
}

// callCtx bounds an emulated command's calls: by the call timeout, the
// client's connection and the next Stop.
func (c *clientConn) callCtx() (context.Context, context.CancelFunc) {
	c.inst.lock()
	run := c.inst.st.runCtx
	c.inst.unlock()
	ctx, cancel := context.WithTimeout(c.ctx, c.inst.srv.cfg.CallTimeout)
	stop := context.AfterFunc(run, cancel)
	return ctx, func() { stop(); cancel() }
}

func (c *clientConn) createTarget(k call) {
	in := c.inst
	st := in.lock()
	known := k.a.browserContextID == "" || st.knownContext(k.a.browserContextID)
	room := st.tabRoom("a tab the client asked for")
	in.unlock()
	if !known {
		c.fail(k, codeInvalidParams, "cdprelay: unknown browserContextId; only the default context exists")
		return
	}
	if !room {
		c.fail(k, codeServerError, "cdprelay: too many tabs: the instance keeps "+strconv.Itoa(in.srv.cfg.MaxTabs)+" already (--max-tabs); close some")
		return
	}
	url := k.a.url // the one the fence judged
	if url == "" {
		url = "about:blank"
	}
	// Where the navigation ends is asked about too (navask.go): the
	// backstop sees the tab's requests once the tab is attached, so it
	// opens on about:blank and goes to url from there.
	navigate := url != "about:blank" && in.asksNavigation()
	first := url
	if navigate {
		first = "about:blank"
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.ext().call(ctx, "chrome.tabs.create", map[string]any{"url": first, "active": !k.a.background})
	if err != nil {
		c.fail(k, codeServerError, "cdprelay: create tab: "+err.Error())
		return
	}
	var et extTab
	if err := json.Unmarshal(res, &et); err != nil || et.ID == 0 {
		c.fail(k, codeServerError, "cdprelay: create tab: the extension returned no tab")
		return
	}
	st = in.lock()
	t, _ := st.upsertTab(et)
	t.openedByClient = true
	in.unlock()
	if err := in.attachTab(ctx, c.ext(), t); err != nil {
		c.fail(k, codeServerError, "cdprelay: "+err.Error())
		return
	}
	st = in.lock()
	if navigate && st.shared(t) {
		if k.approved {
			st.approvedNavigation(t, url)
		}
		st.fire(t.id, "", "Page.navigate", map[string]string{"url": url})
	}
	// Chrome's order: the target exists, then it is attached.
	st.targetCreated(t)
	if c.autoAttach && st.shared(t) {
		st.announce(c, t)
	}
	targetID := t.targetID
	in.unlock()
	c.reply(k, map[string]string{"targetId": targetID})
}

// targetOf returns the tab k's targetId names, answering the client when
// there is none.
func (c *clientConn) targetOf(k call) *tab {
	st := c.inst.lock()
	t := st.tabByTarget(k.a.targetID)
	c.inst.unlock()
	if t == nil {
		c.fail(k, codeInvalidParams, "No target with given id found")
	}
	return t
}

func (c *clientConn) closeTarget(k call) {
	t := c.targetOf(k)
	if t == nil {
		return
	}
	in := c.inst
	in.lock()
	acc, mine, held := t.acc, t.openedByClient, t.Control != ""
	if acc.Level == accessFull || (mine && !held) {
		t.closingByClient = true
	}
	in.unlock()
	if acc.Level != accessFull && (!mine || held) {
		// A tab a person holds is theirs until they hand it back, even
		// one the automation opened.
		// The person's tab on a page automation may not act on is theirs
		// to close.
		d := accessRefusal(acc)
		in.srv.cfg.Metrics.countRefusal(d)
		in.observe(Event{Actor: ActorClient, Kind: KindDenied, Method: k.method, Rule: d.Rule, Outcome: OutcomeDenied, Detail: d.Message})
		c.fail(k, codeServerError, d.Message)
		return
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	// As with Chrome, the reply comes before the Target.detachedFromTarget
	// that the removal causes: answering from the extension's read loop
	// queues it ahead of the onDetach and onRemoved that follow the reply.
	answer := func([]byte) { c.reply(k, map[string]bool{"success": true}) }
	if _, err := c.ext().callThen(ctx, answer, "chrome.tabs.remove", t.id); err != nil {
		in.lock()
		t.closingByClient = false
		in.unlock()
		c.fail(k, codeServerError, "cdprelay: close tab: "+err.Error())
	}
}

func (c *clientConn) activateTarget(k call) {
	t := c.targetOf(k)
	if t == nil {
		return
	}
	c.inst.lock()
	acc := t.acc
	c.inst.unlock()
	if acc.Level == accessBlind {
		c.fail(k, codeServerError, accessRefusal(acc).Message)
		return
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	_, err := c.ext().call(ctx, "chrome.tabs.update", t.id, map[string]bool{"active": true})
	if err != nil {
		// The stock extension has no chrome.tabs.update, but a tab can
		// bring itself to the front. One not attached yet is attached for
		// that, and released when the client leaves, like any other.
		if err = c.inst.attachTab(ctx, c.ext(), t); err == nil {
			_, err = c.ext().sendCommand(ctx, t.id, "", "Page.bringToFront", nil)
		}
	}
	if err != nil {
		c.fail(k, codeServerError, "cdprelay: activate tab: "+err.Error())
		return
	}
	c.reply(k, struct{}{})
}

// attachToTarget gives the asking session a new session on the tab, even
// when the tab has one already: that is how Playwright's newCDPSession and
// Puppeteer's createCDPSession work. The attach is announced to the asking
// session, which is also the one the reply goes to.
func (c *clientConn) attachToTarget(k call) {
	if k.a.flatten == nil || !*k.a.flatten {
		c.fail(k, codeServerError, "cdprelay: only flat sessions are supported (flatten: true)")
		return
	}
	in := c.inst
	t := c.targetOf(k)
	if t == nil {
		return
	}
	if err := in.attachTab(c.ctx, c.ext(), t); err != nil {
		c.fail(k, codeServerError, "cdprelay: "+err.Error())
		return
	}
	st := in.lock()
	var s *session
	switch {
	case !st.shared(t):
		in.unlock()
		c.fail(k, codeServerError, "cdprelay: the tab went away while attaching")
		return
	case k.sess != nil && !st.live(k.sess):
		in.unlock()
		c.fail(k, codeNoSession, "Session with given id not found.")
		return
	case len(st.sessions) >= maxSessions:
		in.unlock()
		c.fail(k, codeServerError, errTooManySessions)
		return
	}
	s = st.mintSession(c, t, k.sess)
	in.unlock()
	if s == nil {
		return // the client is gone
	}
	c.reply(k, map[string]string{"sessionId": s.id})
}

// attachToBrowserTarget gives the client a session whose commands behave
// like the root's (Playwright's browser.newBrowserCDPSession(), and the
// session its context.newCDPSession(page) attaches from).
func (c *clientConn) attachToBrowserTarget(k call) {
	st := c.inst.lock()
	if len(st.sessions) >= maxSessions {
		c.inst.unlock()
		c.fail(k, codeServerError, errTooManySessions)
		return
	}
	s := st.mintBrowserSession(c)
	c.inst.unlock()
	c.reply(k, map[string]string{"sessionId": s.id})
}

func (c *clientConn) detachFromTarget(k call) {
	in := c.inst
	st := in.lock()
	var s *session
	if k.a.sessionID != "" {
		s = st.sessions[k.a.sessionID]
	} else if t := st.tabByTarget(k.a.targetID); t != nil {
		s = t.session
	}
	if s == nil || s.child {
		in.unlock()
		c.fail(k, codeInvalidParams, "No session with given id")
		return
	}
	if s.tab == nil {
		st.detachBrowserSession(s)
		in.unlock()
		c.reply(k, struct{}{})
		return
	}
	if !st.detachSession(s) {
		// The tab's other sessions carry on.
		in.unlock()
		c.reply(k, struct{}{})
		return
	}
	t := s.tab
	st.dropSessions(t, "")
	in.unlock()
	c.ext().failTab(t.id)
	in.detachTab(c.ext(), t)
	c.reply(k, struct{}{})
}

// detachOnSession handles Target.detachFromTarget sent on a tab's session:
// a child of that session is Chrome's to detach, one of the relay's own
// sessions is the relay's. It decides on the read loop, so that a forwarded
// detach keeps its place among the client's commands.
func (c *clientConn) detachOnSession(k call) {
	st := c.inst.lock()
	s := st.sessions[k.a.sessionID]
	ours := s != nil && !s.child
	c.inst.unlock()
	if !ours {
		c.forwardCall(k)
		return
	}
	c.wg.Add(1)
	c.inst.tasks.spawn("detach session", func() {
		defer c.wg.Done()
		c.detachFromTarget(k)
	})
}

// navigateToHistoryEntry goes through the URL fence like Page.navigate: it
// names an entry, not a URL, so the relay looks the entry up first. (A
// page that comes back from the back/forward cache makes no request the
// backstop could stop; the tab then goes blind, access.go.)
func (c *clientConn) navigateToHistoryEntry(k call) {
	var p struct {
		EntryID int64 `json:"entryId"`
	}
	if err := decodeStruct(k.params, &p); err != nil {
		c.fail(k, codeInvalidParams, cdp.InvalidParams(err).Error())
		return
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.ext().sendCommand(ctx, k.sess.tab.id, "", "Page.getNavigationHistory", nil)
	if err != nil {
		c.fail(k, codeServerError, "cdprelay: the tab's history: "+err.Error())
		return
	}
	var h struct {
		Entries []struct {
			ID  int64  `json:"id"`
			URL string `json:"url"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(res, &h); err != nil {
		c.fail(k, codeServerError, "cdprelay: the tab's history: "+err.Error())
		return
	}
	url := ""
	for _, e := range h.Entries {
		if e.ID == p.EntryID {
			url = e.URL
		}
	}
	if url == "" {
		c.forwardCall(k) // Chrome answers an unknown entry itself
		return
	}
	in := c.inst
	d := in.srv.policy.load().URL(in.profile, url)
	if d.Verdict == Allow {
		st := in.lock()
		if to := st.urlAccess(url); to.Level == accessBlind {
			d = Decision{Verdict: Deny, Rule: to.Rule, Message: "cdprelay: blind: " + to.Why}
		}
		in.unlock()
	}
	if d.Verdict != Allow {
		in.srv.cfg.Metrics.countRefusal(d)
		in.observe(Event{Actor: ActorClient, Kind: KindDenied, Method: k.method, Rule: d.Rule, Outcome: OutcomeDenied, Detail: d.Message})
		c.fail(k, codeServerError, d.Message)
		return
	}
	c.forwardCall(k)
}
