package relay

import (
	"github.com/cdprelay/cdprelay/internal/wire"
)

// The tab → client path: one chrome.debugger.onEvent goes to the client
// session it belongs to, its params as the bytes they came in. It is
// decided under one lock acquisition and delivered in order (delivering to
// the client never blocks); what needs the extension or the relay's own
// handles is done after the lock is released.

// eventEffects is what routing an event leaves to do outside the lock.
type eventEffects struct {
	frameTo     []*TabHandle // screencast frame for the live view
	frameClient bool         // ... of the client's own screencast
	paused      pausedAction // what the backstop does with a Fetch.requestPaused
	fenceChild  string       // a new out-of-process frame to fence
	dropped     []*session   // child sessions that went: fail their commands
	refresh     bool         // ask the tab for its title
}

// routeEvent forwards one chrome.debugger.onEvent. This is the tab →
// client hot path.
func (in *Instance) routeEvent(x *extConn, args []byte) {
	src, method, params, err := wire.DebuggerEvent(args)
	if err != nil {
		in.log.Warn("malformed chrome.debugger.onEvent", "err", err)
		return
	}
	var fx eventEffects
	st := in.lock()
	// A replaced connection's read loop runs on for a moment: its events
	// belong to tabs that are gone.
	if t := st.tabs[src.TabID]; st.ext == x && t != nil {
		in.routeEventLocked(st, t, src.SessionID, method, params, &fx)
		in.unlock()
		in.afterEvent(x, t, src.SessionID, params, &fx)
		return
	}
	in.unlock()
}

// routeEventLocked decides where an event of t (on its child session sid,
// nil for the tab's own) goes and delivers it to the client.
func (in *Instance) routeEventLocked(st *state, t *tab, sid, method, params []byte, fx *eventEffects) {
	if sid == nil && isScreencastFrame(method) {
		// Frames of the tab's own session belong to whoever started the
		// screencast: the live view's tap, or the client (and then the tap
		// gets a copy and leaves the acks to the client).
		fx.frameTo, fx.frameClient = t.handles, t.clientScreencast
		if !t.clientScreencast {
			return
		}
	}
	if t.fetch != nil && isFetchPaused(method) {
		// The navigation backstop sees the pause first; the client gets it
		// only when its own patterns asked for it.
		if fx.paused = st.judgePaused(t, string(sid), params); fx.paused.handled() {
			return
		}
	}
	c := st.client
	if c == nil {
		return // no client: only the relay's own handles may want this
	}
	var s *session
	if sid == nil {
		s = t.session
	} else if cs := st.sessions[string(sid)]; cs != nil && cs.tab == t {
		s = cs
	}
	if s == nil {
		return // no client session yet (or any more): nobody asked for these
	}
	switch string(method) {
	case "Target.attachedToTarget":
		// A child target (frame, worker) attached under s.
		ti := wire.Field(params, "targetInfo")
		if child := st.addChild(s, wire.StringField(params, "sessionId"), wire.StringField(ti, "targetId")); child != nil {
			if string(wire.StringField(ti, "type")) == "iframe" {
				// An out-of-process frame navigates through its own
				// session: fence it too, before the client resumes it.
				fx.fenceChild = child.id
			}
		}
	case "Target.detachedFromTarget":
		if id := wire.StringField(params, "sessionId"); len(id) > 0 {
			if cs := st.sessions[string(id)]; cs != nil && cs.child && cs.tab == t {
				fx.dropped = st.dropChild(cs)
			}
		}
	default:
		if sid == nil && bytesHasPrefix(method, "Page.") {
			fx.refresh = st.pageEvent(t, method, params)
		}
	}
	in.srv.cfg.Metrics.count(dirEvent, method, len(params))
	buf := getBuf()
	*buf = wire.AppendEvent(*buf, method, s.idJSON, params)
	c.deliver(buf)
	if sid == nil {
		// Further sessions on the tab get a copy of the events of the
		// domains they enabled.
		for _, e := range t.extra {
			if st.live(e) && wantsEvent(e, method) {
				c.eventRaw(string(method), e, params)
			}
		}
	}
}

// afterEvent does what routing an event left to do outside the lock.
func (in *Instance) afterEvent(x *extConn, t *tab, sid, params []byte, fx *eventEffects) {
	if fx.frameTo != nil {
		notifyHandles(fx.frameTo, TabEvent{Method: "Page.screencastFrame", Params: append([]byte(nil), params...), ClientScreencast: fx.frameClient})
	}
	fx.paused.run(in, x, t, string(sid))
	if fx.fenceChild != "" {
		in.enableFence(x, t, fx.fenceChild)
	}
	x.failSessions(fx.dropped)
	if fx.refresh {
		in.tasks.spawn("target info", func() { in.refreshTargetInfo(x, t) })
	}
}

func isScreencastFrame(method []byte) bool {
	return string(method) == "Page.screencastFrame"
}

func isFetchPaused(method []byte) bool {
	return string(method) == "Fetch.requestPaused"
}

// eventRaw sends an event whose params are already JSON; s nil means the
// root session.
func (c *clientConn) eventRaw(method string, s *session, params []byte) {
	var sid []byte
	if s != nil {
		sid = s.idJSON
	}
	buf := getBuf()
	*buf = wire.AppendEvent(*buf, method, sid, params)
	c.deliver(buf)
}
