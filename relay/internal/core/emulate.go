package core

// Browser-level emulation: the methods a tab-level chrome.debugger session
// cannot serve, answered by the relay as Chrome's browser target would.
// The target methods are in emulate_targets.go.

// emulation answers one method at the relay. blocking handlers call the
// extension and run beside the client's read loop.
type emulation struct {
	fn       func(c *ClientConn, k call)
	blocking bool
}

// Emulated returns the handler for m, or nil when the command goes to the
// tab. Browser.* and Target.* are answered here at any session level: a
// tab-level chrome.debugger session refuses most of them, and the ones it
// would accept (Target.setAutoAttach, Target.getTargetInfo on a tab) are
// forwarded. A browser session (Target.attachToBrowserTarget) is the root
// under another name; a tab's top-level sessions also have their domain
// switches watched, since several of them share one debuggee.
func Emulated(m *MethodInfo, s *Session) *emulation {
	browserLevel := s == nil || s.Tab == nil
	switch m.Name {
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
	case "Browser.getWindowForTarget":
		return &emGetWindowForTarget
	case "Browser.getWindowBounds":
		return &emGetWindowBounds
	case "Browser.setWindowBounds":
		return &emSetWindowBounds
	case "Target.getDevToolsTarget":
		return &emGetDevToolsTarget
	case "Page.setDownloadBehavior":
		if !browserLevel {
			return &emPageDownloadBehavior // downloads.go
		}
	case "Page.navigateToHistoryEntry":
		// On a child session too: an entry of the tab's history is judged
		// by its URL wherever the command comes from.
		if !browserLevel {
			return &emHistoryEntry
		}
	}
	if m.domain == domainBrowser || (browserLevel && m.domain == domainTarget) {
		return &emUnsupported
	}
	if s != nil && s.Tab != nil && (m.Name == "Runtime.enable" || m.Name == "Runtime.disable") {
		return &emRuntimeSwitch // on any of a tab's sessions (runtimehold.go)
	}
	if s != nil && !s.Child && s.Tab != nil && (m.enable || m.disable) {
		return &emDomainSwitch
	}
	return nil
}

func bytesHasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}

var (
	emBrowserGetVersion    = emulation{fn: (*ClientConn).browserGetVersion}
	emSetDownloadBehavior  = emulation{fn: (*ClientConn).setDownloadBehavior}
	emPageDownloadBehavior = emulation{fn: (*ClientConn).pageDownloadBehavior}
	emGetTargetInfo        = emulation{fn: (*ClientConn).getTargetInfo}
	emGetTargets           = emulation{fn: (*ClientConn).getTargets}
	emSetDiscoverTargets   = emulation{fn: (*ClientConn).setDiscoverTargets}
	emGetBrowserContexts   = emulation{fn: func(c *ClientConn, k call) { c.reply(k, map[string][]string{"browserContextIds": {}}) }}
	emCreateBrowserContext = emulation{fn: func(c *ClientConn, k call) {
		c.fail(k, codeServerError, "cdprelay: an extension shares tabs of the person's own profile, so new browser contexts cannot be created; use the default context (browser.contexts()[0])")
	}}
	emUnsupported = emulation{fn: func(c *ClientConn, k call) {
		c.fail(k, CodeMethodNotFound, "cdprelay: '"+k.method+"' is not available through the extension")
	}}
	emSetAutoAttach    = emulation{fn: (*ClientConn).setAutoAttach, blocking: true}
	emCreateTarget     = emulation{fn: (*ClientConn).createTarget, blocking: true}
	emCloseTarget      = emulation{fn: (*ClientConn).closeTarget, blocking: true}
	emAttachToTarget   = emulation{fn: (*ClientConn).attachToTarget, blocking: true}
	emDetachFromTarget = emulation{fn: (*ClientConn).detachFromTarget, blocking: true}
	emActivateTarget   = emulation{fn: (*ClientConn).activateTarget, blocking: true}
	emHistoryEntry     = emulation{fn: (*ClientConn).navigateToHistoryEntry, blocking: true}

	emGetWindowForTarget = emulation{fn: (*ClientConn).getWindowForTarget, blocking: true}
	emGetWindowBounds    = emulation{fn: (*ClientConn).getWindowBounds, blocking: true}
	emSetWindowBounds    = emulation{fn: (*ClientConn).setWindowBounds, blocking: true}
	emGetDevToolsTarget  = emulation{fn: (*ClientConn).getDevToolsTarget}

	emAttachToBrowserTarget    = emulation{fn: (*ClientConn).attachToBrowserTarget}
	emDetachOnSession          = emulation{fn: (*ClientConn).detachOnSession}
	emDomainSwitch             = emulation{fn: (*ClientConn).domainSwitch}
	emBrowserSessionAutoAttach = emulation{fn: func(c *ClientConn, k call) {
		c.fail(k, codeServerError, "cdprelay: Target.setAutoAttach on a browser session is not supported; send it without a sessionId")
	}}
)

func (c *ClientConn) browserGetVersion(k call) {
	info := c.Inst.Info()
	if info.UserAgent == "" {
		// An extension that does not say (the stock one) and a browser
		// not asked yet: ask a tab, beside the read loop.
		c.Wg.Add(1)
		c.Inst.Tasks.Spawn("browser version", func() {
			defer c.Wg.Done()
			info, err := c.Inst.EnsureInfo(c.Ctx, c.ext())
			if err != nil {
				c.fail(k, codeServerError, "cdprelay: the browser's version is not known: "+err.Error())
				return
			}
			c.replyVersion(k, info)
		})
		return
	}
	c.replyVersion(k, info)
}

func (c *ClientConn) replyVersion(k call, info BrowserInfo) {
	product := info.Product
	if product == "" {
		product = "Chrome/" + info.Version
	}
	c.reply(k, map[string]string{
		"protocolVersion": "1.3",
		"product":         product,
		"revision":        "",
		"userAgent":       info.UserAgent,
		"jsVersion":       "",
	})
}

// domainSwitch watches X.enable and X.disable on a tab's top-level
// sessions (see sessions.go): enabling is recorded and forwarded; disabling
// is forwarded only when no other session of the tab still has the domain.
func (c *ClientConn) domainSwitch(k call) {
	on := k.method[len(k.method)-len(".enable"):] == ".enable"
	domain := domainOf([]byte(k.method))
	st := c.Inst.Lock()
	forward := st.switchDomain(k.sess, domain, on)
	if st.live(k.sess) {
		st.RecordSwitch(k.sess.Tab, domain, on, k.params)
	}
	c.Inst.Unlock()
	if domain == "Debugger" {
		c.debuggerSwitched(k.sess, on)
	}
	if !forward {
		c.reply(k, struct{}{})
		return
	}
	c.forwardCall(k)
}

// forwardCall sends an emulation handler's command on to its tab, as the
// pipeline would have.
func (c *ClientConn) forwardCall(k call) {
	var replyTo *Session
	if k.sess.idJSON != nil {
		replyTo = k.sess
	}
	m := LookupMethod([]byte(k.method))
	if err := c.ext().forward(c, k.id, m, []byte(m.Name), k.params, k.sess, replyTo); err != nil {
		msg := "Extension disconnected"
		if err == errSendStopped {
			msg = MsgStopped
		}
		c.replyError(k.id, k.sess, codeServerError, msg)
	}
}
