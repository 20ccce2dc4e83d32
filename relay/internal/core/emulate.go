package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// Emulation: the methods a tab-level chrome.debugger session cannot
// serve, answered by the relay as Chrome's browser target would. The
// core dispatches them (Emulated); the answers themselves are the
// stages' (Target.*: package targets; Browser.*: package browser) and,
// for a tab's domain switches, a part of the core's (package switches),
// registered at assembly.

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

// Levels says what answers a method at each level of session: the root
// (no sessionId), a browser session (Target.attachToBrowserTarget) and a
// tab's session, top-level or child. At a level left nil the method goes
// on as if nothing answered it there: Browser.*, and Target.* at the
// browser level, are refused as Chrome's browser target refuses what it
// does not have; anything else goes to the tab the route found (at the
// root, the tab the relay sends a browser-level client's page commands
// to). A stage that judges a method answers it at every level where it
// can reach a tab.
type Levels struct {
	Root, Browser, Tab *Emulation
}

// AtEvery is the same emulation at every level.
func AtEvery(e Emulation) Levels {
	return Levels{Root: &e, Browser: &e, Tab: &e}
}

// stageEmulations are the methods the stages answer (AddEmulations,
// AddLevels), by name; set before any instance exists and read only
// after.
var stageEmulations = map[string]Levels{}

// AddEmulations lets a stage answer methods at the relay, at every level;
// an emulation that is TabLevel is answered on a tab's sessions only. It
// is called from the facade's init, before any instance exists.
func AddEmulations(m map[string]Emulation) {
	lv := make(map[string]Levels, len(m))
	for name, e := range m {
		if e.TabLevel {
			// A tab's method at the browser's root is not carried to a
			// tab around the stage that judges it: Chrome has no such
			// method there.
			tab := e
			tab.TabLevel = false
			lv[name] = Levels{Root: &emTabOnly, Browser: &emTabOnly, Tab: &tab}
			continue
		}
		lv[name] = AtEvery(e)
	}
	AddLevels(lv)
}

// AddLevels lets a stage answer methods at the relay, level by level. It
// is called from the facade's init, before any instance exists; a method
// answered twice is a mistake of the assembly.
func AddLevels(m map[string]Levels) {
	if CommandStages != nil {
		panic("core: emulations added after the order")
	}
	for name, lv := range m {
		for _, e := range []*Emulation{lv.Root, lv.Browser, lv.Tab} {
			if e != nil && e.TabLevel {
				panic("core: a TabLevel emulation of " + name + " given to AddLevels: say its levels instead")
			}
		}
		if _, dup := stageEmulations[name]; dup {
			panic("core: two emulations of " + name)
		}
		stageEmulations[name] = lv
	}
}

// Emulated returns the handler for m on session s (nil: the root), or nil
// when the command goes to the tab. What a stage answers comes first, at
// s's level (Target.* and Browser.*: package targets and package browser).
// Browser.*, and Target.* at the browser level, that nothing answers are
// refused: a tab-level chrome.debugger session has none of them. A tab's
// top-level sessions also have their domain switches watched, since
// several of them share one debuggee.
func Emulated(m *MethodInfo, s *Session) *Emulation {
	browserLevel := s == nil || s.Tab == nil
	if lv, ok := stageEmulations[m.Name]; ok {
		e := lv.Tab
		switch {
		case s == nil:
			e = lv.Root
		case s.Tab == nil:
			e = lv.Browser
		}
		if e != nil {
			return e
		}
	}
	if m.Domain == cdp.DomainBrowser || (browserLevel && m.Domain == cdp.DomainTarget) {
		return &emUnsupported
	}
	if s != nil && s.Tab != nil && (m.Name == "Runtime.enable" || m.Name == "Runtime.disable") {
		return &switchEms.Runtime // on any of a tab's sessions
	}
	if s != nil && !s.Child && s.Tab != nil && (m.Enable || m.Disable) {
		return &switchEms.Domain
	}
	return nil
}

func BytesHasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}

var (
	emUnsupported = Emulation{Fn: func(c *ClientConn, k Call) {
		c.Fail(k, CodeMethodNotFound, "cdprelay: '"+k.Method+"' is not available through the extension")
	}}
	emTabOnly = Emulation{Fn: func(c *ClientConn, k Call) {
		c.Fail(k, CodeMethodNotFound, "'"+k.Method+"' wasn't found")
	}}
)

// ForwardCall sends an emulation handler's command on to its tab, as the
// pipeline would have: on its route (k.Via, k.ReplyTo), or, for a Call
// made without one, on the session it names.
func (c *ClientConn) ForwardCall(k Call) {
	via, replyTo := k.Via, k.ReplyTo
	if via == nil {
		via = k.Sess
		if k.Sess.idJSON != nil {
			replyTo = k.Sess
		}
	}
	m := LookupMethod([]byte(k.Method))
	if err := c.Ext().Forward(c, k.Id, m, m.NameBytes, k.Params, via, replyTo, nil); err != nil {
		msg := "Extension disconnected"
		if err == ErrSendStopped {
			msg = api.MsgStopped
		}
		c.ReplyError(k.Id, k.Sess, CodeServerError, msg)
	}
}

// Switches are the emulations that answer a client's switches of a
// domain's events on a tab's sessions (package switches): Runtime's on
// any of them, the other domains' on a top-level one.
type Switches struct {
	Runtime, Domain Emulation
}

// switchEms are the switches' emulations, set once before the order
// (Services.Switches).
var switchEms Switches
