package relay

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// clientEmu is a client's browser-level state that the root flags of
// clientConn do not cover.
type clientEmu struct {
	// page is the session of a client that connected to a page endpoint
	// (/devtools/page/<targetId>): its commands without a sessionId are the
	// page's, and nothing it receives carries one. Static once the client's
	// read loop runs; nil for a browser-level client.
	page *session
}

// instanceEmu is what the relay learns about the extension on the side.
type instanceEmu struct {
	// tabUpdates: the extension reports chrome.tabs.onUpdated, so titles
	// need not be asked for. Guarded by the instance's mu.
	tabUpdates bool
	// learning serialises finding out the browser's identity, so that
	// concurrent Browser.getVersion calls ask the tab once.
	learning sync.Mutex
}

// targetEventLocked sends a Target.targetCreated, targetInfoChanged or
// targetDestroyed to every session of c that asked for discovery with
// Target.setDiscoverTargets: the root, a browser session, or a page's own
// session (chromedp sends it on its page session).
func (in *Instance) targetEventLocked(c *clientConn, method string, params any) {
	if c.discover {
		c.event(method, nil, params)
	}
	for _, s := range in.sessions {
		if s.discover {
			c.event(method, s, params)
		}
	}
}

// setTargetInfoLocked records t's url and title and tells discovering
// sessions when either changed.
func (in *Instance) setTargetInfoLocked(t *tab, url, title string) {
	if url == t.url && title == t.title {
		return
	}
	t.url, t.title = url, title
	if c := in.client; c != nil && t.targetID != "" {
		in.targetEventLocked(c, "Target.targetInfoChanged", struct {
			TargetInfo TargetInfo `json:"targetInfo"`
		}{in.targetInfoLocked(t)})
	}
}

// pageEventLocked looks at an event of t's own session before it goes to
// the client: the Page events that say where the tab is (its url and
// title, for discovery and /json/list, which an extension without tab
// updates never reports) and the downloads the tab starts.
func (in *Instance) pageEventLocked(c *clientConn, x *extConn, t *tab, method, params []byte) {
	switch string(method) {
	case "Page.frameNavigated":
		f := wire.Field(params, "frame")
		if f == nil || wire.Field(f, "parentId") != nil {
			return // a sub-frame
		}
		if u := wire.StringField(f, "url"); u != nil {
			in.setTargetInfoLocked(t, string(u)+string(wire.StringField(f, "urlFragment")), t.title)
		}
	case "Page.navigatedWithinDocument":
		if string(wire.StringField(params, "frameId")) != t.targetID {
			return
		}
		if u := wire.StringField(params, "url"); u != nil {
			in.setTargetInfoLocked(t, string(u), t.title)
		}
	case "Page.domContentEventFired", "Page.loadEventFired":
		if !in.emu.tabUpdates {
			go in.refreshTargetInfo(x, t)
		}
	case "Page.downloadWillBegin":
		// Chrome reports a download on the tab that started it when its
		// Page domain is on; a client of a browser expects it at the
		// browser level, where Playwright finds the page by frameId.
		if c.downloadEvents {
			c.eventRaw("Browser.downloadWillBegin", nil, params)
		}
	case "Page.downloadProgress":
		if c.downloadEvents {
			c.eventRaw("Browser.downloadProgress", nil, params)
		}
	}
}

// refreshTargetInfo asks the tab for its url and title, for an extension
// that does not report tab updates. Chrome has no event for a title.
func (in *Instance) refreshTargetInfo(x *extConn, t *tab) {
	ctx, cancel := context.WithTimeout(context.Background(), in.srv.cfg.CallTimeout)
	defer cancel()
	res, err := x.call(ctx, "chrome.debugger.sendCommand", map[string]int64{"tabId": t.id}, "Target.getTargetInfo")
	if err != nil {
		return
	}
	var r struct {
		TargetInfo TargetInfo `json:"targetInfo"`
	}
	if json.Unmarshal(res, &r) != nil || r.TargetInfo.URL == "" {
		return
	}
	in.mu.Lock()
	if in.tabs[t.id] == t {
		in.setTargetInfoLocked(t, r.TargetInfo.URL, r.TargetInfo.Title)
	}
	in.mu.Unlock()
}

// eventRaw sends an event whose params are already JSON.
func (c *clientConn) eventRaw(method string, s *session, params []byte) {
	buf := getBuf()
	b := append(*buf, `{"method":`...)
	b = wire.AppendString(b, method)
	if s != nil && s.idJSON != nil {
		b = append(b, `,"sessionId":`...)
		b = append(b, s.idJSON...)
	}
	b = append(b, `,"params":`...)
	if params == nil {
		params = []byte("{}")
	}
	b = append(b, params...)
	b = append(b, '}')
	*buf = b
	c.deliver(buf)
}

// sessionLocked returns the session a command is for: the one its
// sessionId names, or, without one, a page endpoint's own session.
func (c *clientConn) sessionLocked(id []byte) *session {
	if id != nil {
		return c.inst.sessions[string(id)]
	}
	if p := c.emu.page; p != nil && c.inst.sessions[p.id] == p {
		return p
	}
	return nil
}
