package core

import (
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/link"
	"github.com/cdprelay/cdprelay/relay/internal/methods"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
)

// The tab → client path: one chrome.debugger.onEvent goes to the client
// session it belongs to, its params as the bytes they came in. It is
// decided under one lock acquisition and delivered in order (delivering to
// the client never blocks); what needs the extension or the relay's own
// handles is done after the lock is released.

// eventEffects is what routing an event leaves to do outside the lock.
type eventEffects struct {
	// FrameTo: a screencast frame for the live view's handles
	// (handles.Screencast); FrameClient: of the client's own screencast.
	FrameTo     []*TabHandle
	FrameClient bool
	dropped     []*Session // child sessions that went: fail their commands
	refresh     bool       // ask the tab for its title
	Resume      string     // a child of a blind tab waiting for a debugger: resume it
	letGo       bool       // the tab is bound for a page never shared: detach it
	// unpause: the tab's script paused in a debugger nobody the client
	// knows of may resume (a blind tab, or the automation stopped).
	Unpause bool
	// brakeChild: a new frame or worker gets the relay's Debugger.
	BrakeChild string
}

// event is one chrome.debugger.onEvent of a shared tab on its way through
// the events table (order.go), with the instance lock held. The extension
// connection's read loop owns it (ext.Conn.ev) and reuses it for every
// event, so that routing one allocates nothing.
type EventMsg struct {
	State  *State
	Tab    *Tab
	Sid    []byte // the child session it came on; nil: the tab's own
	Method []byte
	info   *methods.Event
	Params []byte // what goes out: Chrome's, or creds.Redact's
	// child is the child session sid names, when the relay knows it.
	Child *Session
	// blind: nothing the client knows of may see it (tiers.Blind).
	Blind bool
	// isolated is the id of a client's isolated world it created.
	Isolated int64
	// c and s are the client and its session the event goes to
	// (core.Session).
	c    *ClientConn
	Sess *Session
	// newChild: a child session Target.attachedToTarget made
	// (core.Children); waiting: it waits for a debugger.
	NewChild *Session
	Waiting  bool
	Red      *[]byte // the buffer of the redacted params, returned after
	Fx       eventEffects
}

// RouteEvent forwards one chrome.debugger.onEvent. This is the tab →
// client hot path.
func (in *Instance) RouteEvent(x Upstream, args []byte, e *EventMsg) {
	src, method, params, err := wire.DebuggerEvent(args)
	if err != nil {
		in.Log.Warn("malformed chrome.debugger.onEvent", "err", err)
		return
	}
	info := methods.LookupEvent(method)
	st := in.Lock()
	// A replaced connection's read loop runs on for a moment: its events
	// belong to tabs that are gone.
	// A tab whose client sessions wait for it while the relay lets go of
	// it: nothing of the page it is on reaches anyone (away.go).
	if t := st.Tabs[src.TabID]; st.Ext == x && t != nil && (t.Away == nil || t.Away.Resumer != nil) {
		*e = EventMsg{State: st, Tab: t, Sid: src.SessionID, Method: method, info: info, Params: params}
		in.runEvent(e)
		if e.Red != nil {
			link.PutBuf(e.Red)
		}
		in.Unlock()
		in.afterEvent(x, t, src.SessionID, params, &e.Fx)
		e.State, e.Tab, e.c, e.Sess, e.Child, e.NewChild, e.Fx = nil, nil, nil, nil, nil, nil, eventEffects{}
		return
	}
	in.Unlock()
}

// The rows of the events table (order.go). Each runs with the instance
// lock held and reports whether the event goes on to the next row. The
// relay follows where the tab is from its own Page events (it keeps Page
// enabled on every tab it attaches), whoever listens: the event that
// takes the tab to a page automation may not see is the last one the
// client gets of it, and nothing of a blind tab reaches the client but
// what the relay says of it itself (access.go).

// PageTrack (core.PageTrack): where the tab is, from its own session's
// Page events (targets.go); a tab bound for a page never shared is let
// go.
func (in *Instance) PageTrack(e *EventMsg) bool {
	if e.Sid != nil {
		return true
	}
	e.Fx.refresh, e.Fx.letGo = e.State.trackPage(e.Tab, e.Method, e.Params)
	return !e.Fx.letGo
}

// ChildOf (core.Child): the child session the event came on.
func (in *Instance) ChildOf(e *EventMsg) bool {
	if e.Sid != nil {
		if cs := e.State.Sessions[string(e.Sid)]; cs != nil && cs.Child && cs.Tab == e.Tab {
			e.Child = cs
		}
	}
	return true
}

// RelayWorld (core.RelayWorld): the relay's own world's events are the
// relay's (package look, relay/internal/contexts).
func (in *Instance) RelayWorld(e *EventMsg) bool {
	if BytesHasPrefix(e.Method, "Runtime.executionContext") {
		relay, isolated := e.Tab.Ctxs.Event(string(e.Sid), e.Method, e.Params)
		e.Isolated = isolated
		return !relay
	}
	if e.Tab.Ctxs.RelayWorlds() > 0 {
		if withhold, unpause := e.Tab.Ctxs.RelayEvent(string(e.Sid), e.Method, e.Params); withhold {
			e.Fx.Unpause = e.Fx.Unpause || unpause
			return false
		}
	}
	return true
}

// SessionOf (core.Session): the client and its session the event goes
// to; none: only the relay's own handles may want it.
func (in *Instance) SessionOf(e *EventMsg) bool {
	e.c = e.State.Client
	if e.c == nil {
		return false
	}
	if e.Sid == nil {
		e.Sess = e.Tab.Session
	} else if cs := e.State.Sessions[string(e.Sid)]; cs != nil && cs.Tab == e.Tab {
		e.Sess = cs
	}
	return e.Sess != nil // no client session yet (or any more): nobody asked for these
}

// Children (core.Children): a child target (frame, worker) attached under
// the event's session, or detached.
func (in *Instance) Children(e *EventMsg) bool {
	st, params := e.State, e.Params
	if string(e.Method) == "Target.detachedFromTarget" {
		if id := wire.StringField(params, "sessionId"); len(id) > 0 {
			if cs := st.Sessions[string(id)]; cs != nil && cs.Child && cs.Tab == e.Tab {
				e.Fx.dropped = st.dropChild(cs)
			}
		}
		return true
	}
	if st.refuseChild(e.Sess, wire.StringField(params, "sessionId")) {
		return false // past the bound: detached, never announced (bounds.go)
	}
	ti := wire.Field(params, "targetInfo")
	e.NewChild = st.addChild(e.Sess, wire.StringField(params, "sessionId"), wire.StringField(ti, "targetId"), wire.StringField(ti, "url"))
	if e.NewChild != nil {
		e.Waiting = string(wire.Field(params, "waitingForDebugger")) == "true"
		// The relay follows the child's execution contexts, whatever
		// the client switches (runtimehold.go).
		st.holdRuntime(e.Tab, e.NewChild.Id)
	}
	return true
}

// ChildType is the type of the target a Target.attachedToTarget attached.
func ChildType(e *EventMsg) []byte {
	return wire.StringField(wire.Field(e.Params, "targetInfo"), "type")
}

// CountEvent (core.Count): what reaches the client is counted.
func (in *Instance) CountEvent(e *EventMsg) bool {
	in.Srv.Cfg.Metrics.Count(metrics.DirEvent, e.info.Domain, len(e.Params))
	return true
}

// DeliverEvent (core.Deliver): to the client's session, and a copy to the
// tab's further sessions that enabled the domain.
func (in *Instance) DeliverEvent(e *EventMsg) bool {
	st, t, method, params, c := e.State, e.Tab, e.Method, e.Params, e.c
	// Runtime is on in Chrome for the relay's sake: its events go to the
	// sessions where the client switched it on (runtimehold.go).
	if !BytesHasPrefix(method, "Runtime.") || st.runtimeWanted(t, string(e.Sid), e.Sess, method) {
		buf := link.GetBuf()
		*buf = wire.AppendEvent(*buf, method, e.Sess.idJSON, params)
		c.Deliver(buf)
	}
	if e.Sid == nil {
		// Further sessions on the tab get a copy of the events of the
		// domains they enabled.
		for _, x := range t.extra {
			if st.Live(x) && WantsEvent(x, method) && !st.contextsFrozen(method) {
				c.EventRaw(string(method), x, params)
			}
		}
	}
	return true
}

// afterEvent does what routing an event left to do outside the lock.
func (in *Instance) afterEvent(x Upstream, t *Tab, sid, params []byte, fx *eventEffects) {
	if fx.FrameTo != nil {
		NotifyHandles(fx.FrameTo, api.TabEvent{Method: "Page.screencastFrame", Params: append([]byte(nil), params...), ClientScreencast: fx.FrameClient})
	}
	failSessions(x, fx.dropped)
	if fx.Resume != "" {
		x.Fire(t.Id, fx.Resume, "Runtime.runIfWaitingForDebugger", nil)
	}
	if fx.Unpause {
		x.Fire(t.Id, string(sid), "Debugger.resume", nil)
	}
	if fx.BrakeChild != "" {
		attacher.BrakeOn(x, t.Id, fx.BrakeChild)
	}
	if fx.refresh {
		in.Tasks.Spawn("target info", func() { in.refreshTargetInfo(x, t) })
	}
	if fx.letGo {
		in.failLetGo(x, t)
		x.FireCall("chrome.debugger.detach", cdp.Debuggee(t.Id, ""))
	}
}

// EventRaw sends an event whose params are already JSON; s nil means the
// root session.
func (c *ClientConn) EventRaw(method string, s *Session, params []byte) {
	var sid []byte
	if s != nil {
		sid = s.idJSON
	}
	buf := link.GetBuf()
	*buf = wire.AppendEvent(*buf, method, sid, params)
	c.Deliver(buf)
}
