package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// Browser-level emulation: the methods a tab-level chrome.debugger session
// cannot serve, answered by the relay as Chrome's browser target would.
// The target methods are in emulate_targets.go.

// Emulation answers one method at the relay, in place of the tab.
// Blocking handlers call the extension and run beside the client's read
// loop.
type Emulation struct {
	Fn       func(c *ClientConn, k Call)
	Blocking bool
	// TabLevel: a tab's method, answered on a tab's session; at the
	// browser level it is refused as Chrome refuses a method it does not
	// have there, and never carried to a tab.
	TabLevel bool
}

// stageEmulations are the methods a stage answers (AddEmulations), by
// name; set before any instance exists and read only after.
var stageEmulations = map[string]*Emulation{}

// AddEmulations lets a stage answer methods at the relay. It is called
// from the facade's init, before any instance exists; a method answered
// twice is a mistake of the assembly.
func AddEmulations(m map[string]Emulation) {
	if CommandStages != nil {
		panic("core: emulations added after the order")
	}
	for name, e := range m {
		if _, dup := stageEmulations[name]; dup {
			panic("core: two emulations of " + name)
		}
		e := e
		stageEmulations[name] = &e
	}
}

// Emulated returns the handler for m, or nil when the command goes to the
// tab. Browser.* and Target.* are answered here at any session level: a
// tab-level chrome.debugger session refuses most of them, and the ones it
// would accept (Target.setAutoAttach, Target.getTargetInfo on a tab) are
// forwarded. A browser session (Target.attachToBrowserTarget) is the root
// under another name; a tab's top-level sessions also have their domain
// switches watched, since several of them share one debuggee.
func Emulated(m *MethodInfo, s *Session) *Emulation {
	browserLevel := s == nil || s.Tab == nil
	if e := stageEmulations[m.Name]; e != nil {
		if e.TabLevel && browserLevel {
			// A tab's method at the browser's root is not carried to a
			// tab around the stage that judges it: Chrome has no such
			// method there.
			return &emTabOnly
		}
		return e
	}
	switch m.Name {
	case "Browser.getVersion":
		return &emBrowserGetVersion
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
	case "Page.navigateToHistoryEntry":
		// On a child session too: an entry of the tab's history is judged
		// by its URL wherever the command comes from.
		if !browserLevel {
			return &emHistoryEntry
		}
	}
	if m.Domain == cdp.DomainBrowser || (browserLevel && m.Domain == cdp.DomainTarget) {
		return &emUnsupported
	}
	if s != nil && s.Tab != nil && (m.Name == "Runtime.enable" || m.Name == "Runtime.disable") {
		return &emRuntimeSwitch // on any of a tab's sessions (runtimehold.go)
	}
	if s != nil && !s.Child && s.Tab != nil && (m.Enable || m.Disable) {
		return &emDomainSwitch
	}
	return nil
}

func BytesHasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}

var (
	emBrowserGetVersion    = Emulation{Fn: (*ClientConn).browserGetVersion}
	emGetTargetInfo        = Emulation{Fn: (*ClientConn).getTargetInfo}
	emGetTargets           = Emulation{Fn: (*ClientConn).getTargets}
	emSetDiscoverTargets   = Emulation{Fn: (*ClientConn).setDiscoverTargets}
	emGetBrowserContexts   = Emulation{Fn: func(c *ClientConn, k Call) { c.Reply(k, map[string][]string{"browserContextIds": {}}) }}
	emCreateBrowserContext = Emulation{Fn: func(c *ClientConn, k Call) {
		c.Fail(k, CodeServerError, "cdprelay: an extension shares tabs of the person's own profile, so new browser contexts cannot be created; use the default context (browser.contexts()[0])")
	}}
	emUnsupported = Emulation{Fn: func(c *ClientConn, k Call) {
		c.Fail(k, CodeMethodNotFound, "cdprelay: '"+k.Method+"' is not available through the extension")
	}}
	emTabOnly = Emulation{Fn: func(c *ClientConn, k Call) {
		c.Fail(k, CodeMethodNotFound, "'"+k.Method+"' wasn't found")
	}}
	emSetAutoAttach    = Emulation{Fn: (*ClientConn).setAutoAttach, Blocking: true}
	emCreateTarget     = Emulation{Fn: (*ClientConn).createTarget, Blocking: true}
	emCloseTarget      = Emulation{Fn: (*ClientConn).closeTarget, Blocking: true}
	emAttachToTarget   = Emulation{Fn: (*ClientConn).attachToTarget, Blocking: true}
	emDetachFromTarget = Emulation{Fn: (*ClientConn).detachFromTarget, Blocking: true}
	emActivateTarget   = Emulation{Fn: (*ClientConn).activateTarget, Blocking: true}
	emHistoryEntry     = Emulation{Fn: (*ClientConn).navigateToHistoryEntry, Blocking: true}

	emAttachToBrowserTarget    = Emulation{Fn: (*ClientConn).attachToBrowserTarget}
	emDetachOnSession          = Emulation{Fn: (*ClientConn).detachOnSession}
	emDomainSwitch             = Emulation{Fn: (*ClientConn).domainSwitch}
	emBrowserSessionAutoAttach = Emulation{Fn: func(c *ClientConn, k Call) {
		c.Fail(k, CodeServerError, "cdprelay: Target.setAutoAttach on a browser session is not supported; send it without a sessionId")
	}}
)

func (c *ClientConn) browserGetVersion(k Call) {
	info := c.Inst.Info()
	if info.UserAgent == "" {
		// An extension that does not say (the stock one) and a browser
		// not asked yet: ask a tab, beside the read loop.
		c.Wg.Add(1)
		c.Inst.Tasks.Spawn("browser version", func() {
			defer c.Wg.Done()
			info, err := c.Inst.EnsureInfo(c.Ctx, c.Ext())
			if err != nil {
				c.Fail(k, CodeServerError, "cdprelay: the browser's version is not known: "+err.Error())
				return
			}
			c.replyVersion(k, info)
		})
		return
	}
	c.replyVersion(k, info)
}

func (c *ClientConn) replyVersion(k Call, info BrowserInfo) {
	product := info.Product
	if product == "" {
		product = "Chrome/" + info.Version
	}
	c.Reply(k, map[string]string{
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
func (c *ClientConn) domainSwitch(k Call) {
	on := k.Method[len(k.Method)-len(".enable"):] == ".enable"
	domain := domainOf([]byte(k.Method))
	st := c.Inst.Lock()
	forward := st.SwitchDomain(k.Sess, domain, on)
	if st.Live(k.Sess) {
		st.RecordSwitch(k.Sess.Tab, domain, on, k.Params)
	}
	c.Inst.Unlock()
	c.switched(k.Sess, domain, on)
	if !forward {
		c.Reply(k, struct{}{})
		return
	}
	c.forwardCall(k)
}

// forwardCall sends an emulation handler's command on to its tab, as the
// pipeline would have.
func (c *ClientConn) forwardCall(k Call) {
	var replyTo *Session
	if k.Sess.idJSON != nil {
		replyTo = k.Sess
	}
	m := LookupMethod([]byte(k.Method))
	if err := c.Ext().forward(c, k.Id, m, []byte(m.Name), k.Params, k.Sess, replyTo); err != nil {
		msg := "Extension disconnected"
		if err == errSendStopped {
			msg = api.MsgStopped
		}
		c.ReplyError(k.Id, k.Sess, CodeServerError, msg)
	}
}
