package relay

import (
	"context"
	"encoding/json"
)

// emulation answers one browser-level method at the relay. blocking
// handlers call the extension and run beside the client's read loop.
type emulation struct {
	fn       func(c *clientConn, cmd command)
	blocking bool
}

// emulated returns the handler for method, or nil when the command goes to
// the tab. Browser.* and Target.* are answered here at any session level:
// a tab-level chrome.debugger session refuses most of them, and the ones it
// would accept (Target.setAutoAttach, Target.getTargetInfo on a tab) are
// forwarded below. A browser session (Target.attachToBrowserTarget) is the
// root under another name; a tab's top-level sessions also have their
// domain switches watched, since several of them share one debuggee.
func emulated(method []byte, s *session) *emulation {
	browserLevel := s == nil || s.tab == nil
	switch string(method) {
	case "Browser.getVersion":
		return &emBrowserGetVersion
	case "Browser.setDownloadBehavior":
		return &emSetDownloadBehavior
	case "Target.setAutoAttach":
		switch {
		case !browserLevel:
			return nil // the tab's own auto-attach: frames and workers
		case s != nil:
			return &emBrowserSessionAutoAttach
		}
		return &emSetAutoAttach
	case "Target.getTargetInfo":
		if !browserLevel {
			return nil // Chrome answers with the tab's current url and title
		}
		return &emGetTargetInfo
	case "Target.createTarget":
		return &emCreateTarget
	case "Target.closeTarget":
		return &emCloseTarget
	case "Target.attachToTarget":
		return &emAttachToTarget
	case "Target.attachToBrowserTarget":
		return &emAttachToBrowserTarget
	case "Target.detachFromTarget":
		if !browserLevel {
			// On a tab session it usually names a child of that session
			// (Playwright and Puppeteer let go of one on its parent), which
			// is Chrome's to detach; sometimes one of the relay's sessions.
			return &emDetachOnSession
		}
		return &emDetachFromTarget
	case "Target.getTargets":
		return &emGetTargets
	case "Target.setDiscoverTargets":
		return &emSetDiscoverTargets
	case "Target.activateTarget":
		return &emActivateTarget
	case "Target.getBrowserContexts":
		return &emGetBrowserContexts
	case "Target.createBrowserContext":
		return &emCreateBrowserContext
	}
	if bytesHasPrefix(method, "Browser.") || (browserLevel && bytesHasPrefix(method, "Target.")) {
		return &emUnsupported
	}
	if s != nil && !s.child && s.tab != nil && (bytesHasSuffix(method, ".enable") || bytesHasSuffix(method, ".disable")) {
		return &emDomainSwitch
	}
	return nil
}

func bytesHasSuffix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[len(b)-len(p):]) == p
}

func bytesHasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}

var (
	emBrowserGetVersion    = emulation{fn: (*clientConn).browserGetVersion}
	emSetDownloadBehavior  = emulation{fn: (*clientConn).setDownloadBehavior}
	emGetTargetInfo        = emulation{fn: (*clientConn).getTargetInfo}
	emGetTargets           = emulation{fn: (*clientConn).getTargets}
	emSetDiscoverTargets   = emulation{fn: (*clientConn).setDiscoverTargets}
	emGetBrowserContexts   = emulation{fn: func(c *clientConn, cmd command) { c.reply(cmd, map[string][]string{"browserContextIds": {}}) }}
	emCreateBrowserContext = emulation{fn: func(c *clientConn, cmd command) {
		c.fail(cmd, codeServerError, "cdprelay: an extension shares tabs of the person's own profile, so new browser contexts cannot be created; use the default context (browser.contexts()[0])")
	}}
	emUnsupported = emulation{fn: func(c *clientConn, cmd command) {
		c.fail(cmd, codeMethodNotFound, "cdprelay: '"+cmd.method+"' is not available through the extension")
	}}
	emSetAutoAttach    = emulation{fn: (*clientConn).setAutoAttach, blocking: true}
	emCreateTarget     = emulation{fn: (*clientConn).createTarget, blocking: true}
	emCloseTarget      = emulation{fn: (*clientConn).closeTarget, blocking: true}
	emAttachToTarget   = emulation{fn: (*clientConn).attachToTarget, blocking: true}
	emDetachFromTarget = emulation{fn: (*clientConn).detachFromTarget, blocking: true}
	emActivateTarget   = emulation{fn: (*clientConn).activateTarget, blocking: true}

	emAttachToBrowserTarget    = emulation{fn: (*clientConn).attachToBrowserTarget}
	emDetachOnSession          = emulation{fn: (*clientConn).detachOnSession}
	emDomainSwitch             = emulation{fn: (*clientConn).domainSwitch}
	emBrowserSessionAutoAttach = emulation{fn: func(c *clientConn, cmd command) {
		c.fail(cmd, codeServerError, "cdprelay: Target.setAutoAttach on a browser session is not supported; send it without a sessionId")
	}}
)

func (c *clientConn) decode(cmd command, v any) bool {
	if cmd.params == nil {
		return true
	}
	if err := json.Unmarshal(cmd.params, v); err != nil {
		c.fail(cmd, codeInvalidParams, "Invalid parameters: "+err.Error())
		return false
	}
	return true
}

func (c *clientConn) browserGetVersion(cmd command) {
	info := c.inst.Info()
	if info.UserAgent == "" {
		// An extension that does not say (the stock one) and a browser
		// not asked yet: ask a tab, beside the read loop.
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			info, err := c.inst.ensureInfo(c.ctx, c.ext)
			if err != nil {
				c.fail(cmd, codeServerError, "cdprelay: the browser's version is not known: "+err.Error())
				return
			}
			c.replyVersion(cmd, info)
		}()
		return
	}
	c.replyVersion(cmd, info)
}

func (c *clientConn) replyVersion(cmd command, info BrowserInfo) {
	product := info.Product
	if product == "" {
		product = "Chrome/" + info.Version
	}
	c.reply(cmd, map[string]string{
		"protocolVersion": "1.3",
		"product":         product,
		"revision":        "",
		"userAgent":       info.UserAgent,
		"jsVersion":       "",
	})
}

func (c *clientConn) getTargetInfo(cmd command) {
	var p struct {
		TargetID string `json:"targetId"`
	}
	if !c.decode(cmd, &p) {
		return
	}
	in := c.inst
	in.mu.Lock()
	defer in.mu.Unlock()
	if p.TargetID == "" || p.TargetID == in.browserTID {
		c.reply(cmd, map[string]TargetInfo{"targetInfo": in.browserTargetInfoLocked()})
		return
	}
	t := in.tabByTargetLocked(p.TargetID)
	if t == nil {
		c.fail(cmd, codeInvalidParams, "No target with given id found")
		return
	}
	c.reply(cmd, map[string]TargetInfo{"targetInfo": in.targetInfoLocked(t)})
}

func (in *Instance) browserTargetInfoLocked() TargetInfo {
	return TargetInfo{TargetID: in.browserTID, Type: "browser", Attached: true}
}

func (c *clientConn) getTargets(cmd command) {
	in := c.inst
	in.mu.Lock()
	defer in.mu.Unlock()
	infos := []TargetInfo{}
	for _, t := range in.sortedTabsLocked() {
		if t.targetID != "" {
			infos = append(infos, in.targetInfoLocked(t))
		}
	}
	c.reply(cmd, map[string][]TargetInfo{"targetInfos": infos})
}

func (c *clientConn) setDiscoverTargets(cmd command) {
	var p struct {
		Discover bool `json:"discover"`
	}
	if !c.decode(cmd, &p) {
		return
	}
	in := c.inst
	in.mu.Lock()
	defer in.mu.Unlock()
	// Each session that asks gets the target events: chromedp asks on its
	// page session, Playwright's browser session on its own.
	flag := &c.discover
	if s := cmd.sess; s != nil {
		if in.sessions[s.id] != s {
			c.fail(cmd, codeNoSession, "Session with given id not found.")
			return
		}
		flag = &s.discover
	}
	was := *flag
	*flag = p.Discover
	if p.Discover && !was {
		// As Chrome does: every existing target is reported before the
		// reply.
		for _, t := range in.sortedTabsLocked() {
			if t.targetID != "" {
				c.event("Target.targetCreated", cmd.sess, map[string]TargetInfo{"targetInfo": in.targetInfoLocked(t)})
			}
		}
	}
	c.reply(cmd, struct{}{})
}

// setAutoAttach at the root attaches every shared tab and announces each
// with Target.attachedToTarget before replying, which is what Playwright's
// connectOverCDP waits for.
func (c *clientConn) setAutoAttach(cmd command) {
	var p struct {
		AutoAttach bool `json:"autoAttach"`
		Flatten    bool `json:"flatten"`
	}
	if !c.decode(cmd, &p) {
		return
	}
	if p.AutoAttach && !p.Flatten {
		c.fail(cmd, codeServerError, "cdprelay: only flat sessions are supported (flatten: true)")
		return
	}
	in := c.inst
	in.mu.Lock()
	c.autoAttach = p.AutoAttach
	tabs := in.sortedTabsLocked()
	in.mu.Unlock()
	if p.AutoAttach {
		for _, t := range tabs {
			if err := in.attachTab(c.ctx, c.ext, t); err != nil {
				in.log.Info("auto-attach failed", "tab", t.id, "err", err)
				continue
			}
			in.mu.Lock()
			if in.tabs[t.id] == t && c.autoAttach {
				in.announceLocked(c, t)
			}
			in.mu.Unlock()
		}
	}
	c.reply(cmd, struct{}{})
}

func (c *clientConn) callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.ctx, c.inst.srv.cfg.CallTimeout)
}

func (c *clientConn) createTarget(cmd command) {
	var p struct {
		URL              string `json:"url"`
		Background       bool   `json:"background"`
		NewWindow        bool   `json:"newWindow"`
		BrowserContextID string `json:"browserContextId"`
	}
	if !c.decode(cmd, &p) {
		return
	}
	in := c.inst
	if p.BrowserContextID != "" && !in.knownContext(p.BrowserContextID) {
		c.fail(cmd, codeInvalidParams, "cdprelay: unknown browserContextId; only the default context exists")
		return
	}
	if p.URL == "" {
		p.URL = "about:blank"
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.ext.call(ctx, "chrome.tabs.create", map[string]any{"url": p.URL, "active": !p.Background})
	if err != nil {
		c.fail(cmd, codeServerError, "cdprelay: create tab: "+err.Error())
		return
	}
	var et extTab
	if err := json.Unmarshal(res, &et); err != nil || et.ID == 0 {
		c.fail(cmd, codeServerError, "cdprelay: create tab: the extension returned no tab")
		return
	}
	in.mu.Lock()
	t, _ := in.upsertTabLocked(et)
	in.mu.Unlock()
	if err := in.attachTab(ctx, c.ext, t); err != nil {
		c.fail(cmd, codeServerError, "cdprelay: "+err.Error())
		return
	}
	in.mu.Lock()
	// Chrome's order: the target exists, then it is attached.
	in.targetEventLocked(c, "Target.targetCreated", map[string]TargetInfo{"targetInfo": in.targetInfoLocked(t)})
	if c.autoAttach && in.tabs[t.id] == t {
		in.announceLocked(c, t)
	}
	targetID := t.targetID
	in.mu.Unlock()
	c.reply(cmd, map[string]string{"targetId": targetID})
}

func (in *Instance) knownContext(id string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if id == in.browserCtx {
		return true
	}
	for _, t := range in.tabs {
		if t.browserCtx == id {
			return true
		}
	}
	return false
}

func (c *clientConn) targetParam(cmd command) *tab {
	var p struct {
		TargetID string `json:"targetId"`
	}
	if !c.decode(cmd, &p) {
		return nil
	}
	in := c.inst
	in.mu.Lock()
	t := in.tabByTargetLocked(p.TargetID)
	in.mu.Unlock()
	if t == nil {
		c.fail(cmd, codeInvalidParams, "No target with given id found")
	}
	return t
}

func (c *clientConn) closeTarget(cmd command) {
	t := c.targetParam(cmd)
	if t == nil {
		return
	}
	in := c.inst
	in.mu.Lock()
	t.closingByClient = true
	in.mu.Unlock()
	ctx, cancel := c.callCtx()
	defer cancel()
	// As with Chrome, the reply comes before the Target.detachedFromTarget
	// that the removal causes: answering from the extension's read loop
	// queues it ahead of the onDetach and onRemoved that follow the reply.
	answer := func([]byte) { c.reply(cmd, map[string]bool{"success": true}) }
	if _, err := c.ext.callThen(ctx, answer, "chrome.tabs.remove", t.id); err != nil {
		in.mu.Lock()
		t.closingByClient = false
		in.mu.Unlock()
		c.fail(cmd, codeServerError, "cdprelay: close tab: "+err.Error())
	}
}

func (c *clientConn) activateTarget(cmd command) {
	t := c.targetParam(cmd)
	if t == nil {
		return
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	_, err := c.ext.call(ctx, "chrome.tabs.update", t.id, map[string]bool{"active": true})
	if err != nil {
		// The stock extension has no chrome.tabs.update, but a tab can
		// bring itself to the front. One not attached yet is attached for
		// that, and released when the client leaves, like any other.
		if err = c.inst.attachTab(ctx, c.ext, t); err == nil {
			_, err = c.ext.call(ctx, "chrome.debugger.sendCommand", map[string]int64{"tabId": t.id}, "Page.bringToFront")
		}
	}
	if err != nil {
		c.fail(cmd, codeServerError, "cdprelay: activate tab: "+err.Error())
		return
	}
	c.reply(cmd, struct{}{})
}

// attachToTarget gives the asking session a new session on the tab, even
// when the tab has one already: that is how Playwright's newCDPSession and
// Puppeteer's createCDPSession work. The attach is announced to the asking
// session, which is also the one the reply goes to.
func (c *clientConn) attachToTarget(cmd command) {
	var p struct {
		TargetID string `json:"targetId"`
		Flatten  *bool  `json:"flatten"`
	}
	if !c.decode(cmd, &p) {
		return
	}
	if p.Flatten == nil || !*p.Flatten {
		c.fail(cmd, codeServerError, "cdprelay: only flat sessions are supported (flatten: true)")
		return
	}
	in := c.inst
	in.mu.Lock()
	t := in.tabByTargetLocked(p.TargetID)
	in.mu.Unlock()
	if t == nil {
		c.fail(cmd, codeInvalidParams, "No target with given id found")
		return
	}
	if err := in.attachTab(c.ctx, c.ext, t); err != nil {
		c.fail(cmd, codeServerError, "cdprelay: "+err.Error())
		return
	}
	in.mu.Lock()
	if in.tabs[t.id] != t {
		in.mu.Unlock()
		c.fail(cmd, codeServerError, "cdprelay: the tab went away while attaching")
		return
	}
	if o := cmd.sess; o != nil && in.sessions[o.id] != o {
		in.mu.Unlock()
		c.fail(cmd, codeNoSession, "Session with given id not found.")
		return
	}
	if len(in.sessions) >= maxSessions {
		in.mu.Unlock()
		c.fail(cmd, codeServerError, errTooManySessions)
		return
	}
	s := in.mintSessionLocked(c, t, cmd.sess)
	in.mu.Unlock()
	if s == nil {
		return // the client is gone
	}
	c.reply(cmd, map[string]string{"sessionId": s.id})
}

func (c *clientConn) detachFromTarget(cmd command) {
	var p struct {
		SessionID string `json:"sessionId"`
		TargetID  string `json:"targetId"`
	}
	if !c.decode(cmd, &p) {
		return
	}
	in := c.inst
	in.mu.Lock()
	var s *session
	if p.SessionID != "" {
		s = in.sessions[p.SessionID]
	} else if t := in.tabByTargetLocked(p.TargetID); t != nil {
		s = t.session
	}
	if s == nil || s.child {
		in.mu.Unlock()
		c.fail(cmd, codeInvalidParams, "No session with given id")
		return
	}
	if s.tab == nil {
		// A browser session, and the sessions it attached.
		delete(in.sessions, s.id)
		c.event("Target.detachedFromTarget", nil, detachedParams{s.id, in.browserTID})
		in.dropOwnedLocked(c, s)
		in.mu.Unlock()
		c.reply(cmd, struct{}{})
		return
	}
	if !in.detachSessionLocked(c, s) {
		// The tab's other sessions carry on.
		in.mu.Unlock()
		c.reply(cmd, struct{}{})
		return
	}
	t := s.tab
	in.dropSessionsLocked(c, t)
	in.mu.Unlock()
	c.ext.failTab(t.id, "Target detached")
	in.detachTab(c.ext, t)
	c.reply(cmd, struct{}{})
}
