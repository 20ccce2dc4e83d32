package relay

import (
	"github.com/cdprelay/cdprelay/internal/wire"
)

// routeEvent forwards one chrome.debugger.onEvent to the client session it
// belongs to. This is the tab → client hot path: the params go out as the
// bytes they came in.
func (in *Instance) routeEvent(x *extConn, args []byte) {
	src, method, params, err := wire.DebuggerEvent(args)
	if err != nil {
		in.log.Warn("malformed chrome.debugger.onEvent", "err", err)
		return
	}
	in.mu.Lock()
	if in.ext != x {
		// A replaced connection's read loop runs on for a moment: its
		// events belong to tabs that are gone.
		in.mu.Unlock()
		return
	}
	c := in.client
	t := in.tabs[src.TabID]
	if t == nil {
		in.mu.Unlock()
		return
	}
	var s *session
	var also []*session // further sessions on the tab that get a copy
	if c == nil {
		// No client: only the relay's own handles may want this.
	} else if src.SessionID == nil {
		s = t.session
		for _, e := range t.extra {
			if in.sessions[e.id] == e && wantsEventLocked(e, method) {
				also = append(also, e)
			}
		}
	} else if cs := in.sessions[string(src.SessionID)]; cs != nil && cs.tab == t {
		s = cs
	}
	if src.SessionID == nil && isScreencastFrame(method) {
		// Frames of the tab's own session belong to whoever started the
		// screencast: the live view's tap, or the client (and then the tap
		// gets a copy and leaves the acks to the client).
		hs, clientOwned := t.handles, t.clientScreencast
		if !clientOwned {
			s, also = nil, nil
		}
		if len(hs) > 0 {
			in.mu.Unlock()
			notifyHandles(hs, TabEvent{Method: "Page.screencastFrame", Params: append([]byte(nil), params...), ClientScreencast: clientOwned})
			in.mu.Lock()
		}
	}
	if t.fetch != nil && isFetchPaused(method) {
		// The navigation backstop sees the pause first; the client gets it
		// only when its own patterns asked for it.
		in.mu.Unlock()
		if in.judgePaused(x, t, string(src.SessionID), params) {
			return
		}
		in.mu.Lock()
	}
	if s == nil {
		// No client session yet (or any more): nobody asked for these.
		in.mu.Unlock()
		return
	}
	var fenceChild string
	var droppedChildren []*session
	switch string(method) {
	case "Target.attachedToTarget":
		// A child target (frame, worker) attached under s: its session id
		// is Chrome's, routed to the same tab.
		// An id already in use keeps its session: a child must not reroute
		// another one.
		if id := wire.StringField(params, "sessionId"); len(id) > 0 && in.sessions[string(id)] == nil {
			child := newSession(string(id), t, true)
			child.parent = s
			if ti := wire.Field(params, "targetInfo"); ti != nil {
				child.targetID = string(wire.StringField(ti, "targetId"))
			}
			in.sessions[child.id] = child
			in.childSessions.Add(1)
			if ti := wire.Field(params, "targetInfo"); ti != nil && string(wire.StringField(ti, "type")) == "iframe" {
				// An out-of-process frame navigates through its own
				// session: fence it too, before the client resumes it.
				fenceChild = child.id
			}
		}
	case "Target.detachedFromTarget":
		if id := wire.StringField(params, "sessionId"); len(id) > 0 {
			if cs := in.sessions[string(id)]; cs != nil && cs.child && cs.tab == t {
				droppedChildren = in.dropChildLocked(cs)
			}
		}
	default:
		if src.SessionID == nil && bytesHasPrefix(method, "Page.") {
			in.pageEventLocked(c, in.ext, t, method, params)
		}
	}
	in.mu.Unlock()
	if fenceChild != "" {
		in.enableFence(x, t, fenceChild)
	}
	x.failSessions(droppedChildren)
	for _, e := range also {
		c.eventRaw(string(method), e, params)
	}

	in.srv.cfg.Metrics.count(dirEvent, method, len(params))
	buf := getBuf()
	b := append(*buf, `{"method":`...)
	b = wire.AppendBytesString(b, method)
	if s.idJSON != nil {
		b = append(b, `,"sessionId":`...)
		b = append(b, s.idJSON...)
	}
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	} else {
		b = append(b, `,"params":{}`...)
	}
	b = append(b, '}')
	*buf = b
	c.deliver(buf)
}

func isScreencastFrame(method []byte) bool {
	return len(method) == len("Page.screencastFrame") && string(method) == "Page.screencastFrame"
}

// dropChildLocked forgets child session cs and every session announced
// under it: a frame's workers and nested frames go with the frame.
func (in *Instance) dropChildLocked(cs *session) (dropped []*session) {
	delete(in.sessions, cs.id)
	delete(cs.tab.fetch, cs.id)
	dropped = append(dropped, cs)
	for _, d := range in.sessions {
		for p := d.parent; p != nil; p = p.parent {
			if p == cs {
				delete(in.sessions, d.id)
				delete(d.tab.fetch, d.id)
				dropped = append(dropped, d)
				break
			}
		}
	}
	return dropped
}

func isFetchPaused(method []byte) bool {
	return len(method) == len("Fetch.requestPaused") && string(method) == "Fetch.requestPaused"
}
