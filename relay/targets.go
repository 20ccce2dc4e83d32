package relay

import (
	"context"
	"encoding/json"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// Targets as the client discovers them: Target.targetCreated,
// targetInfoChanged and targetDestroyed to the sessions that asked, and the
// url and title of each tab kept current from what the tab itself says.

// targetEvent sends a Target.targetCreated, targetInfoChanged or
// targetDestroyed to every session of the client that asked for discovery
// with Target.setDiscoverTargets: the root, a browser session, or a page's
// own session (chromedp sends it on its page session).
func (st *state) targetEvent(method string, params any) {
	c := st.client
	if c == nil {
		return
	}
	if c.discover {
		c.event(method, nil, params)
	}
	for _, s := range st.sessions {
		if s.discover {
			c.event(method, s, params)
		}
	}
}

func (st *state) targetCreated(t *tab) {
	st.targetEvent("Target.targetCreated", struct {
		TargetInfo TargetInfo `json:"targetInfo"`
	}{st.targetInfo(t)})
}

// setTargetInfo records t's url and title, decides its access again, and
// tells discovering sessions when what they may see of it changed.
func (st *state) setTargetInfo(t *tab, url, title string) {
	if url == t.url && title == t.title {
		return
	}
	before := st.targetInfo(t)
	t.url, t.title = url, title
	if was, changed := st.updateAccess(t); changed {
		st.accessChanged(t, was)
	}
	if after := st.targetInfo(t); after != before && st.client != nil && t.targetID != "" {
		st.targetEvent("Target.targetInfoChanged", struct {
			TargetInfo TargetInfo `json:"targetInfo"`
		}{after})
	}
}

// trackPage looks at an event of t's own session for where the tab is:
// its main frame's url (for discovery, /json/list and the tab's access),
// which the relay follows whether or not a client listens. It reports
// whether the tab's title should be asked for (refreshTargetInfo), which
// must happen outside the lock.
func (st *state) trackPage(t *tab, method, params []byte) (refresh bool) {
	switch string(method) {
	case "Page.frameNavigated":
		f := wire.Field(params, "frame")
		if f == nil || wire.Field(f, "parentId") != nil {
			return false // a sub-frame
		}
		if u := wire.StringField(f, "url"); u != nil {
			st.setTargetInfo(t, string(u)+string(wire.StringField(f, "urlFragment")), t.title)
		}
	case "Page.navigatedWithinDocument":
		if string(wire.StringField(params, "frameId")) != t.targetID {
			return false
		}
		if u := wire.StringField(params, "url"); u != nil {
			st.setTargetInfo(t, string(u), t.title)
		}
	case "Page.domContentEventFired", "Page.loadEventFired":
		return !st.tabUpdates
	}
	return false
}

// pageDownload turns the downloads a tab starts into the browser-level
// events a client of a browser expects. Chrome reports a download on the
// tab that started it when its Page domain is on; Playwright finds the
// page by frameId.
func (st *state) pageDownload(method, params []byte) {
	c := st.client
	if c == nil || !c.downloadEvents {
		return
	}
	switch string(method) {
	case "Page.downloadWillBegin":
		c.eventRaw("Browser.downloadWillBegin", nil, params)
	case "Page.downloadProgress":
		c.eventRaw("Browser.downloadProgress", nil, params)
	}
}

// refreshTargetInfo asks the tab for its url and title, for an extension
// that does not report tab updates. Chrome has no event for a title.
func (in *Instance) refreshTargetInfo(x *extConn, t *tab) {
	ctx, cancel := context.WithTimeout(context.Background(), in.srv.cfg.CallTimeout)
	defer cancel()
	res, err := x.sendCommand(ctx, t.id, "", "Target.getTargetInfo", nil)
	if err != nil {
		return
	}
	var r struct {
		TargetInfo TargetInfo `json:"targetInfo"`
	}
	if json.Unmarshal(res, &r) != nil || r.TargetInfo.URL == "" {
		return
	}
	st := in.lock()
	if st.shared(t) {
		st.setTargetInfo(t, r.TargetInfo.URL, r.TargetInfo.Title)
	}
	in.unlock()
}
