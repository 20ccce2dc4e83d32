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
	resume      string       // a child of a blind tab waiting for a debugger: resume it
	letGo       bool         // the tab is bound for a page never shared: detach it
	// unpause: the tab's script paused in a debugger nobody the client
	// knows of may resume (a blind tab, or the automation stopped).
	unpause bool
	// brakeChild: a new frame or worker gets the relay's Debugger.
	brakeChild string
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
//
// The relay follows where the tab is from its own Page events (it keeps
// Page enabled on every tab it attaches), whoever listens: the event that
// takes the tab to a page automation may not see is the last one the
// client gets of it, and nothing of a blind tab reaches the client but
// what the relay says of it itself (access.go).
func (in *Instance) routeEventLocked(st *state, t *tab, sid, method, params []byte, fx *eventEffects) {
	if sid == nil {
		if isScreencastFrame(method) {
			if t.acc.level == accessBlind || st.hasBlindChild(t) {
				return // not even the live view sees a blind tab, or a blind frame's pixels
			}
			// Frames of the tab's own session belong to whoever started the
			// screencast: the live view's tap, or the client (and then the
			// tap gets a copy and leaves the acks to the client).
			fx.frameTo, fx.frameClient = t.handles, t.clientScreencast
			if !t.clientScreencast || st.withholdFrame(t, params) {
				return
			}
		} else if bytesHasPrefix(method, "Page.") {
			if fx.refresh, fx.letGo = st.trackPage(t, method, params); fx.letGo {
				return
			}
		}
	}
	var child *session
	if sid != nil {
		if cs := st.sessions[string(sid)]; cs != nil && cs.child && cs.tab == t {
			child = cs
			switch string(method) {
			case "Page.frameNavigated":
				// The child's own frame carries its parent's id: it is known
				// by being the child's target.
				if f := wire.Field(params, "frame"); f != nil {
					if id := string(wire.StringField(f, "id")); id == cs.targetID {
						// Committed: where it is now decides. A blind
						// one's entry stays, for the late events of its
						// navigation on its parent's session.
						if n, ok := t.blindFrames[id]; ok && n.acc.level != accessBlind || ok && st.childAccess(string(wire.StringField(f, "url"))).level != accessBlind {
							st.frameCommitted(t, id)
						}
						st.setChildURL(cs, string(wire.StringField(f, "url"))+string(wire.StringField(f, "urlFragment")))
					} else {
						// A frame in the child's process: the child's
						// session reaches into it, so the child is as
						// strict as it.
						st.frameCommitted(t, id)
						st.setChildFrame(cs, id, string(wire.StringField(f, "url")))
					}
				}
			case "Page.frameDetached":
				if id := string(wire.StringField(params, "frameId")); id != cs.targetID {
					st.frameRemoved(t, id, params)
					st.setChildFrame(cs, id, "")
				}
			case "Page.frameStartedNavigating", "Page.frameRequestedNavigation":
				if id := string(wire.StringField(params, "frameId")); id == cs.targetID {
					st.setChildNav(cs, string(wire.StringField(params, "url")))
				} else {
					st.noteFrameNav(t, id, string(wire.StringField(params, "url")), "")
				}
			}
		}
	}
	if isFetchPaused(method) || string(method) == "Network.requestWillBeSent" {
		st.noteRequest(t, child, method, params)
		if in.hasTiers() {
			st.noteBlindRequest(t, method, params)
		}
	}
	if (string(method) == "Debugger.scriptParsed" || string(method) == "Debugger.scriptFailedToParse" || string(method) == "CSS.styleSheetAdded") && in.hasTiers() && st.noteBlindSource(t, string(sid), method, params) {
		return // a blind site's script or style sheet, in a page that loaded it
	}
	blind := t.acc.level == accessBlind || (child != nil && child.acc.level == accessBlind) ||
		((len(t.blindFrames) > 0 || len(t.blindReqs) > 0 || bytesHasPrefix(method, "Target.")) && st.in.hasTiers() &&
			(st.aboutBlindFrame(t, method, params) ||
				((bytesHasPrefix(method, "Network.") || bytesHasPrefix(method, "Fetch.")) && t.blindRequest(method, params)) ||
				(string(method) == "Debugger.paused" && t.pausedInBlind(string(sid), params))))
	if bytesHasPrefix(method, "Runtime.executionContext") {
		relay, isolated := st.contextEvent(t, string(sid), method, params)
		if relay {
			return // the relay's own world (relayworld.go)
		}
		if isolated != 0 && t.guard != nil {
			// The guard goes in before the client hears of the world.
			_, src := newGuardFrom(*t.guard)
			st.fire(t.id, string(sid), "Runtime.evaluate", map[string]any{"expression": src, "contextId": isolated, "silent": true})
		}
	} else if t.relayCtxs.Load() > 0 && (bytesHasPrefix(method, "Runtime.") || bytesHasPrefix(method, "Debugger.")) {
		if withhold, unpause := st.relayEvent(t, string(sid), method, params); withhold {
			fx.unpause = fx.unpause || unpause
			return // of the relay's own world (relayevents.go)
		}
	}
	if string(method) == "Debugger.paused" {
		if unpause, ours := in.pausedLocked(t.id, string(sid)); ours {
			fx.unpause = unpause
			return
		}
	}
	if isFetchPaused(method) {
		// The navigation backstop sees the pause first; the client gets it
		// only when its own patterns asked for it, and never on a blind tab,
		// whose requests the relay lets go on as the page made them.
		if t.fetch != nil {
			fx.paused = st.judgePaused(t, string(sid), params)
		}
		if !fx.paused.handled() && (blind || in.stopped.Load()) {
			// Nobody the client knows of may answer it: a blind tab's
			// requests, and every request while the automation is stopped,
			// go on as the page made them.
			fx.paused = pausedAction{kind: pausedContinue, requestID: string(wire.StringField(params, "requestId"))}
		}
		if fx.paused.handled() {
			return
		}
	} else if (blind || in.stopped.Load()) && string(method) == "Fetch.authRequired" {
		fx.paused = pausedAction{kind: pausedAuthDefault, requestID: string(wire.StringField(params, "requestId"))}
		return
	} else if (blind || in.stopped.Load()) && string(method) == "Debugger.paused" {
		// A breakpoint or pause-on-exceptions set while the tab was on a
		// full site would freeze the person's page: the client may not
		// see the pause or resume it, so the relay resumes it.
		fx.unpause = true
		return
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
		if st.refuseChild(s, wire.StringField(params, "sessionId")) {
			return // past the bound: detached, never announced (bounds.go)
		}
		ti := wire.Field(params, "targetInfo")
		if child := st.addChild(s, wire.StringField(params, "sessionId"), wire.StringField(ti, "targetId"), wire.StringField(ti, "url")); child != nil {
			if brakesChild(wire.StringField(ti, "type")) {
				fx.brakeChild = child.id
			}
			// The relay follows the child's execution contexts, whatever
			// the client switches (runtimehold.go).
			st.holdRuntime(t, child.id)
			if string(wire.StringField(ti, "type")) == "iframe" {
				// An out-of-process frame navigates through its own
				// session: fence it too, before the client resumes it;
				// and with tiers, follow where it goes.
				fx.fenceChild = child.id
				if in.hasTiers() {
					st.fire(t.id, child.id, "Page.enable", nil)
				}
			}
			if child.acc.level == accessBlind {
				// The client does not hear of a frame it may not see, and
				// nobody else resumes it.
				if string(wire.Field(params, "waitingForDebugger")) == "true" {
					fx.resume = child.id
				}
				return
			}
			if (blind || in.stopped.Load()) && string(wire.Field(params, "waitingForDebugger")) == "true" {
				// Nobody the client knows of will resume it: the page must
				// not hang for being blind.
				fx.resume = child.id
			}
		}
	case "Target.detachedFromTarget":
		if id := wire.StringField(params, "sessionId"); len(id) > 0 {
			if cs := st.sessions[string(id)]; cs != nil && cs.child && cs.tab == t {
				fx.dropped = st.dropChild(cs)
			}
		}
	}
	if blind {
		return
	}
	if bytesHasPrefix(method, "Debugger.") && !s.enabled["Debugger"] {
		// The relay's own Debugger (brake.go). A pause of a session that
		// did not enable it (a client's DOMDebugger breakpoint or
		// Debugger.pause on the relay's Debugger) has nobody to resume it.
		fx.unpause = string(method) == "Debugger.paused"
		return
	}
	if sid == nil && isDownloadEvent(method) && st.downloadEvent(t, method, params) {
		return // a blind site's, or held until its file is in place (downloads.go)
	}
	in.srv.cfg.Metrics.count(dirEvent, method, len(params))
	if isCredentialEvent(method) {
		red := in.redactEvent(st, t, string(sid), method, params)
		defer putBuf(red)
		params = *red
	}
	// Runtime is on in Chrome for the relay's sake: its events go to the
	// sessions where the client switched it on (runtimehold.go).
	if !bytesHasPrefix(method, "Runtime.") || st.runtimeWanted(t, string(sid), s, method) {
		buf := getBuf()
		*buf = wire.AppendEvent(*buf, method, s.idJSON, params)
		c.deliver(buf)
	}
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
	if fx.resume != "" {
		x.fire(t.id, fx.resume, "Runtime.runIfWaitingForDebugger", nil)
	}
	if fx.unpause {
		x.fire(t.id, string(sid), "Debugger.resume", nil)
	}
	if fx.brakeChild != "" {
		x.brakeOn(t.id, fx.brakeChild)
	}
	if fx.refresh {
		in.tasks.spawn("target info", func() { in.refreshTargetInfo(x, t) })
	}
	if fx.letGo {
		x.failTab(t.id)
		x.fireCall("chrome.debugger.detach", debuggee(t.id, ""))
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
