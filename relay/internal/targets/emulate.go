package targets

import (
	"encoding/json"
	"strconv"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/attach"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// Target.* at the browser level: what Chrome's browser target answers,
// from the tabs the extension shares. Every handler acts on the params as
// the route step decoded them (k.Args).

// Emulations are the Target.* methods answered at the relay, level by
// level (core.Levels), and Page.navigateToHistoryEntry, whose entry of
// the tab's history is judged by its URL before the tab goes there.
func Emulations() map[string]core.Levels {
	every := func(fn func(c *core.ClientConn, k core.Call), blocking bool) core.Levels {
		return core.AtEvery(core.Emulation{Fn: fn, Blocking: blocking})
	}
	browser := func(fn func(c *core.ClientConn, k core.Call), blocking bool) core.Levels {
		e := &core.Emulation{Fn: fn, Blocking: blocking}
		return core.Levels{Root: e, Browser: e}
	}
	return map[string]core.Levels{
		// The tab's own Target.setAutoAttach (frames and workers) and
		// Target.getTargetInfo (Chrome answers with the tab's current
		// url and title) go to the tab.
		"Target.setAutoAttach": {
			Root: &core.Emulation{Fn: setAutoAttach, Blocking: true},
			Browser: &core.Emulation{Fn: func(c *core.ClientConn, k core.Call) {
				c.Fail(k, core.CodeServerError, "cdprelay: Target.setAutoAttach on a browser session is not supported; send it without a sessionId")
			}},
		},
		"Target.getTargetInfo":         browser(getTargetInfo, false),
		"Target.createTarget":          every(createTarget, true),
		"Target.closeTarget":           every(closeTarget, true),
		"Target.attachToTarget":        every(attachToTarget, true),
		"Target.attachToBrowserTarget": every(attachToBrowserTarget, false),
		"Target.getTargets":            every(getTargets, false),
		"Target.setDiscoverTargets":    every(setDiscoverTargets, false),
		"Target.activateTarget":        every(activateTarget, true),
		"Target.getBrowserContexts":    every(func(c *core.ClientConn, k core.Call) { c.Reply(k, map[string][]string{"browserContextIds": {}}) }, false),
		"Target.createBrowserContext": every(func(c *core.ClientConn, k core.Call) {
			c.Fail(k, core.CodeServerError, "cdprelay: an extension shares tabs of the person's own profile, so new browser contexts cannot be created; use the default context (browser.contexts()[0])")
		}, false),
		// On a tab session it usually names a child of that session
		// (Playwright and Puppeteer let go of one on its parent), which
		// is Chrome's to detach; sometimes one of the relay's sessions.
		"Target.detachFromTarget": {
			Root:    &core.Emulation{Fn: detachFromTarget, Blocking: true},
			Browser: &core.Emulation{Fn: detachFromTarget, Blocking: true},
			Tab:     &core.Emulation{Fn: detachOnSession},
		},
		// An entry of the tab's history is judged by its URL wherever the
		// command comes from: a tab's session, a child session, or the
		// root, which sends a browser-level client's page commands to a
		// tab.
		"Page.navigateToHistoryEntry": every(navigateToHistoryEntry, true),
	}
}

func getTargetInfo(c *core.ClientConn, k core.Call) {
	st := c.Inst.Lock()
	defer c.Inst.Unlock()
	if k.Args.TargetID == "" || k.Args.TargetID == c.Inst.BrowserTID {
		c.Reply(k, map[string]core.TargetInfo{"targetInfo": st.BrowserTargetInfo()})
		return
	}
	t := st.TabByTarget(k.Args.TargetID)
	if t == nil {
		c.Fail(k, core.CodeInvalidParams, "No target with given id found")
		return
	}
	c.Reply(k, map[string]core.TargetInfo{"targetInfo": st.TargetInfo(t)})
}

func getTargets(c *core.ClientConn, k core.Call) {
	st := c.Inst.Lock()
	defer c.Inst.Unlock()
	infos := []core.TargetInfo{}
	for _, t := range st.SortedTabs() {
		if t.TargetID != "" {
			infos = append(infos, st.TargetInfo(t))
		}
	}
	c.Reply(k, map[string][]core.TargetInfo{"targetInfos": infos})
}

func setDiscoverTargets(c *core.ClientConn, k core.Call) {
	st := c.Inst.Lock()
	defer c.Inst.Unlock()
	// Each session that asks gets the target events: chromedp asks on its
	// page session, Playwright's browser session on its own.
	flag := &c.Discover
	if s := k.Sess; s != nil {
		if !st.Live(s) {
			c.Fail(k, core.CodeNoSession, "Session with given id not found.")
			return
		}
		flag = &s.Discover
	}
	was := *flag
	*flag = k.Args.Discover
	if k.Args.Discover && !was {
		// As Chrome does: every existing target is reported before the
		// reply.
		for _, t := range st.SortedTabs() {
			if t.TargetID != "" {
				c.Event("Target.targetCreated", k.Sess, map[string]core.TargetInfo{"targetInfo": st.TargetInfo(t)})
			}
		}
	}
	c.Reply(k, struct{}{})
}

// setAutoAttach at the root attaches every shared tab and announces each
// with Target.attachedToTarget before replying, which is what Playwright's
// connectOverCDP waits for.
func setAutoAttach(c *core.ClientConn, k core.Call) {
	if k.Args.AutoAttach && (k.Args.Flatten == nil || !*k.Args.Flatten) {
		c.Fail(k, core.CodeServerError, "cdprelay: only flat sessions are supported (flatten: true)")
		return
	}
	in := c.Inst
	st := in.Lock()
	c.AutoAttach = k.Args.AutoAttach
	tabs := st.SortedTabs()
	in.Unlock()
	if k.Args.AutoAttach {
		for _, t := range tabs {
			if err := attach.Tab(c.Ctx, in, c.Ext(), t); err != nil {
				in.Log.Info("auto-attach failed", "tab", t.Id, "err", err)
				continue
			}
			st := in.Lock()
			if st.Shared(t) && c.AutoAttach {
				st.Announce(c, t)
			}
			in.Unlock()
		}
	}
	c.Reply(k, struct{}{})
}

func createTarget(c *core.ClientConn, k core.Call) {
	in := c.Inst
	st := in.Lock()
	known := k.Args.BrowserContextID == "" || st.KnownContext(k.Args.BrowserContextID)
	room := st.TabRoom("a tab the client asked for")
	in.Unlock()
	if !known {
		c.Fail(k, core.CodeInvalidParams, "cdprelay: unknown browserContextId; only the default context exists")
		return
	}
	if !room {
		c.Fail(k, core.CodeServerError, "cdprelay: too many tabs: the instance keeps "+strconv.Itoa(in.Srv.Cfg.MaxTabs)+" already (--max-tabs); close some")
		return
	}
	url := k.Args.Url // the one the fence judged
	if url == "" {
		url = "about:blank"
	}
	// Where the navigation ends is asked about too (the person's navask.go,
	// package navhold): the
	// backstop sees the tab's requests once the tab is attached, so it
	// opens on about:blank and goes to url from there.
	navigate := url != "about:blank" && in.AsksNavigation()
	first := url
	if navigate {
		first = "about:blank"
	}
	ctx, cancel := c.CallCtx()
	defer cancel()
	res, err := c.Ext().Call(ctx, "chrome.tabs.create", map[string]any{"url": first, "active": !k.Args.Background})
	if err != nil {
		c.Fail(k, core.CodeServerError, "cdprelay: create tab: "+err.Error())
		return
	}
	var et core.ExtTab
	if err := json.Unmarshal(res, &et); err != nil || et.ID == 0 {
		c.Fail(k, core.CodeServerError, "cdprelay: create tab: the extension returned no tab")
		return
	}
	st = in.Lock()
	t, _ := st.UpsertTab(et)
	t.OpenedByClient = true
	in.Unlock()
	if err := attach.Tab(ctx, in, c.Ext(), t); err != nil {
		c.Fail(k, core.CodeServerError, "cdprelay: "+err.Error())
		return
	}
	st = in.Lock()
	if navigate && st.Shared(t) {
		if k.Approved {
			st.ApprovedNavigation(t, url)
		}
		st.Fire(t.Id, "", "Page.navigate", map[string]string{"url": url})
	}
	// Chrome's order: the target exists, then it is attached.
	st.TargetCreated(t)
	if c.AutoAttach && st.Shared(t) {
		st.Announce(c, t)
	}
	targetID := t.TargetID
	in.Unlock()
	c.Reply(k, map[string]string{"targetId": targetID})
}

// targetOf returns the tab k's targetId names, answering the client when
// there is none.
func targetOf(c *core.ClientConn, k core.Call) *core.Tab {
	st := c.Inst.Lock()
	t := st.TabByTarget(k.Args.TargetID)
	c.Inst.Unlock()
	if t == nil {
		c.Fail(k, core.CodeInvalidParams, "No target with given id found")
	}
	return t
}

func activateTarget(c *core.ClientConn, k core.Call) {
	t := targetOf(c, k)
	if t == nil {
		return
	}
	c.Inst.Lock()
	acc := t.Acc
	c.Inst.Unlock()
	if acc.Level == api.Blind {
		c.Fail(k, core.CodeServerError, core.AccessRefusal(acc).Message)
		return
	}
	ctx, cancel := c.CallCtx()
	defer cancel()
	_, err := c.Ext().Call(ctx, "chrome.tabs.update", t.Id, map[string]bool{"active": true})
	if err != nil {
		// The stock extension has no chrome.tabs.update, but a tab can
		// bring itself to the front. One not attached yet is attached for
		// that, and released when the client leaves, like any other.
		if err = attach.Tab(ctx, c.Inst, c.Ext(), t); err == nil {
			_, err = c.Ext().SendCommand(ctx, t.Id, "", "Page.bringToFront", nil)
		}
	}
	if err != nil {
		c.Fail(k, core.CodeServerError, "cdprelay: activate tab: "+err.Error())
		return
	}
	c.Reply(k, struct{}{})
}

// attachToTarget gives the asking session a new session on the tab, even
// when the tab has one already: that is how Playwright's newCDPSession and
// Puppeteer's createCDPSession work. The attach is announced to the asking
// session, which is also the one the reply goes to.
func attachToTarget(c *core.ClientConn, k core.Call) {
	if k.Args.Flatten == nil || !*k.Args.Flatten {
		c.Fail(k, core.CodeServerError, "cdprelay: only flat sessions are supported (flatten: true)")
		return
	}
	in := c.Inst
	t := targetOf(c, k)
	if t == nil {
		return
	}
	if err := attach.Tab(c.Ctx, in, c.Ext(), t); err != nil {
		c.Fail(k, core.CodeServerError, "cdprelay: "+err.Error())
		return
	}
	st := in.Lock()
	var s *core.Session
	switch {
	case !st.Shared(t):
		in.Unlock()
		c.Fail(k, core.CodeServerError, "cdprelay: the tab went away while attaching")
		return
	case k.Sess != nil && !st.Live(k.Sess):
		in.Unlock()
		c.Fail(k, core.CodeNoSession, "Session with given id not found.")
		return
	case len(st.Sessions) >= core.MaxSessions:
		in.Unlock()
		c.Fail(k, core.CodeServerError, core.ErrTooManySessions)
		return
	}
	s = st.MintSession(c, t, k.Sess)
	in.Unlock()
	if s == nil {
		return // the client is gone
	}
	c.Reply(k, map[string]string{"sessionId": s.Id})
}

// attachToBrowserTarget gives the client a session whose commands behave
// like the root's (Playwright's browser.newBrowserCDPSession(), and the
// session its context.newCDPSession(page) attaches from).
func attachToBrowserTarget(c *core.ClientConn, k core.Call) {
	st := c.Inst.Lock()
	if len(st.Sessions) >= core.MaxSessions {
		c.Inst.Unlock()
		c.Fail(k, core.CodeServerError, core.ErrTooManySessions)
		return
	}
	s := st.MintBrowserSession(c)
	c.Inst.Unlock()
	c.Reply(k, map[string]string{"sessionId": s.Id})
}

func detachFromTarget(c *core.ClientConn, k core.Call) {
	in := c.Inst
	st := in.Lock()
	var s *core.Session
	if k.Args.SessionID != "" {
		s = st.Sessions[k.Args.SessionID]
	} else if t := st.TabByTarget(k.Args.TargetID); t != nil {
		s = t.Session
	}
	if s == nil || s.Child {
		in.Unlock()
		c.Fail(k, core.CodeInvalidParams, "No session with given id")
		return
	}
	if s.Tab == nil {
		st.DetachBrowserSession(s)
		in.Unlock()
		c.Reply(k, struct{}{})
		return
	}
	if !st.DetachSession(s) {
		// The tab's other sessions carry on.
		in.Unlock()
		c.Reply(k, struct{}{})
		return
	}
	t := s.Tab
	st.DropSessions(t, "")
	in.Unlock()
	core.FailTab(c.Ext(), t.Id)
	attach.Detach(in, c.Ext(), t)
	c.Reply(k, struct{}{})
}

// detachOnSession handles Target.detachFromTarget sent on a tab's session:
// a child of that session is Chrome's to detach, one of the relay's own
// sessions is the relay's. It decides on the read loop, so that a forwarded
// detach keeps its place among the client's commands.
func detachOnSession(c *core.ClientConn, k core.Call) {
	st := c.Inst.Lock()
	s := st.Sessions[k.Args.SessionID]
	ours := s != nil && !s.Child
	c.Inst.Unlock()
	if !ours {
		c.ForwardCall(k)
		return
	}
	c.Wg.Add(1)
	c.Inst.Tasks.Spawn("detach session", func() {
		defer c.Wg.Done()
		detachFromTarget(c, k)
	})
}

// navigateToHistoryEntry goes through the URL fence like Page.navigate: it
// names an entry, not a URL, so the relay looks the entry up first. (A
// page that comes back from the back/forward cache makes no request the
// backstop could stop; the tab then goes blind, access.go.)
func navigateToHistoryEntry(c *core.ClientConn, k core.Call) {
	var p struct {
		EntryID int64 `json:"entryId"`
	}
	if err := core.DecodeStruct(k.Params, &p); err != nil {
		c.Fail(k, core.CodeInvalidParams, cdp.InvalidParams(err).Error())
		return
	}
	if k.Via == nil || k.Via.Tab == nil {
		// No tab to go to: Chrome's browser target has no Page domain.
		c.Fail(k, core.CodeMethodNotFound, "'"+k.Method+"' wasn't found")
		return
	}
	ctx, cancel := c.CallCtx()
	defer cancel()
	res, err := c.Ext().SendCommand(ctx, k.Via.Tab.Id, "", "Page.getNavigationHistory", nil)
	if err != nil {
		c.Fail(k, core.CodeServerError, "cdprelay: the tab's history: "+err.Error())
		return
	}
	var h struct {
		Entries []struct {
			ID  int64  `json:"id"`
			URL string `json:"url"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(res, &h); err != nil {
		c.Fail(k, core.CodeServerError, "cdprelay: the tab's history: "+err.Error())
		return
	}
	url := ""
	for _, e := range h.Entries {
		if e.ID == p.EntryID {
			url = e.URL
		}
	}
	if url == "" {
		c.ForwardCall(k) // Chrome answers an unknown entry itself
		return
	}
	in := c.Inst
	d := in.Srv.PolicyBox.Load().URL(in.ProfileName, url)
	if d.Verdict == core.Allow {
		st := in.Lock()
		if to := st.UrlAccess(url); to.Level == api.Blind {
			d = core.Decision{Verdict: core.Deny, Rule: to.Rule, Message: "cdprelay: blind: " + to.Why}
		}
		in.Unlock()
	}
	if d.Verdict != core.Allow {
		in.Srv.Cfg.Metrics.CountRefusal(d)
		in.Observe(core.Event{Actor: api.ActorClient, Kind: api.KindDenied, Method: k.Method, Rule: d.Rule, Outcome: api.OutcomeDenied, Detail: d.Message})
		c.Fail(k, core.CodeServerError, d.Message)
		return
	}
	c.ForwardCall(k)
}
