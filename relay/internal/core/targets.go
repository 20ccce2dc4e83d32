package core

import (
	"context"
	"encoding/json"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// Targets as the client discovers them: Target.targetCreated,
// targetInfoChanged and targetDestroyed to the sessions that asked, and the
// url and title of each tab kept current from what the tab itself says.

// TargetEvent sends a Target.targetCreated, targetInfoChanged or
// targetDestroyed to every session of the client that asked for discovery
// with Target.setDiscoverTargets: the root, a browser session, or a page's
// own session (chromedp sends it on its page session).
func (st *State) TargetEvent(method string, params any) {
	c := st.Client
	if c == nil {
		return
	}
	if c.Discover {
		c.Event(method, nil, params)
	}
	for _, s := range st.Sessions {
		if s.Discover {
			c.Event(method, s, params)
		}
	}
}

func (st *State) TargetCreated(t *Tab) {
	st.TargetEvent("Target.targetCreated", struct {
		TargetInfo TargetInfo `json:"targetInfo"`
	}{st.TargetInfo(t)})
}

// SetTargetInfo records t's url and title, decides its access again, and
// tells discovering sessions when what they may see of it changed.
func (st *State) SetTargetInfo(t *Tab, url, title string) {
	if url == t.Url && title == t.title {
		return
	}
	before := st.TargetInfo(t)
	t.Url, t.title = url, title
	if was, changed := st.UpdateAccess(t); changed {
		st.AccessChanged(t, was)
	}
	if after := st.TargetInfo(t); after != before && st.Client != nil && t.TargetID != "" {
		st.TargetEvent("Target.targetInfoChanged", struct {
			TargetInfo TargetInfo `json:"targetInfo"`
		}{after})
	}
}

// setDocument records the URL of the document t shows, and of its
// address bar, which follows it. It reports whether the tab is now on a
// page that is never shared, which the caller must let go of.
func (st *State) setDocument(t *Tab, url string) (letGo bool) {
	if err := st.Inst.Srv.Own.NeverShared(url); err != "" {
		return true
	}
	title := t.title
	if url != t.DocURL {
		title = "" // a new document: its title is yet to come
	}
	t.DocURL, t.NavTo, t.NavApproved = url, "", ""
	st.SetTargetInfo(t, url, title)
	if was, changed := st.UpdateAccess(t); changed {
		st.AccessChanged(t, was)
	}
	return false
}

// SetNavTo records where t's main frame is on its way to, and decides its
// access again.
func (st *State) SetNavTo(t *Tab, url string) {
	if url == "" || url == t.NavTo || !st.Inst.HasTiers() {
		return
	}
	if t.NavTo != "" && st.navAccess(t.NavTo).Level > st.navAccess(url).Level {
		// A navigation started while another is on its way to a site
		// automation may see less of does not lift that: Chrome may
		// still commit the earlier one after starting this one, and the
		// tab would go blind again under the new navigation (its client
		// told of a page it did not ask for). The next document decides.
		return
	}
	t.NavTo = url
	if was, changed := st.UpdateAccess(t); changed {
		st.AccessChanged(t, was)
	}
}

// letGo ends the automation's hold on t because it is on its way to, or
// on, a page that is never shared (its own extension's page, where a
// script has the extension's powers, above all): the client's sessions
// end, nothing more of it reaches the client, and the caller detaches the
// debugger. The extension offers the tab again once it is back on a web
// page.
//
// A client's sessions on the tab wait for it instead, where the extension
// offers it again once it is back on a web page (relay/internal/away): they are
// suspended, and nothing of the page reaches them either.
func (st *State) letGo(t *Tab, url string) {
	wait := away.LetGoLocked(st, t)
	t.Url, t.title = api.Origin(url), ""
	t.blindEpoch.Add(1)
	if !wait {
		st.BrowserDetached(t, "navigated to a page that is never shared", "")
	}
	st.Observe(Event{Actor: api.ActorRelay, Kind: api.KindDetach, Target: t.TargetID, Rule: api.RuleNeverShared, Outcome: api.OutcomeOK, Detail: "navigated to " + api.Origin(url)})
}

// trackPage looks at an event of t's own session for where the tab is:
// its main frame's url (for discovery, /json/list and the tab's access),
// which the relay follows whether or not a client listens. It reports
// whether the tab's title should be asked for (refreshTargetInfo), which
// must happen outside the lock.
func (st *State) trackPage(t *Tab, method, params []byte) (refresh, letGo bool) {
	t.Loaded.note(t, method, params) // resumeslots.go
	switch string(method) {
	case "Page.frameStartedNavigating":
		// Chrome says where the main frame is going a few milliseconds
		// before it gets there: the earliest the relay can let go of a tab
		// bound for a page that is never shared (no request, and so no
		// backstop, precedes a navigation to an extension page). A
		// sub-frame's is the tiers' (tiers.Frames).
		if string(wire.StringField(params, "frameId")) != t.TargetID {
			return false, false
		}
		if u := wire.StringField(params, "url"); len(u) > 0 && st.Inst.Srv.Own.NeverShared(string(u)) != "" && !(backstopped(t) && st.Inst.Srv.OwnURL(string(u))) {
			// (The backstop fails a request to the relay's own page, which
			// then never commits: the tab stays, on Chrome's error page.)
			st.letGo(t, string(u))
			return false, true
		}
		st.SetNavTo(t, string(wire.StringField(params, "url")))
	case "Page.frameRequestedNavigation":
		// A navigation the page asked for, earlier still.
		if string(wire.StringField(params, "disposition")) != "currentTab" {
			return false, false
		}
		if string(wire.StringField(params, "frameId")) == t.TargetID {
			st.SetNavTo(t, string(wire.StringField(params, "url")))
		}
	case "Page.frameNavigated":
		f := wire.Field(params, "frame")
		if f == nil {
			return false, false
		}
		if wire.Field(f, "parentId") != nil {
			return false, false // a sub-frame: the tiers' (tiers.Frames)
		}
		documentLocked(st, t, params)
		if u := wire.StringField(f, "url"); u != nil {
			full := string(u) + string(wire.StringField(f, "urlFragment"))
			t.Frames, t.BlindFrames, t.BlindReqs = nil, nil, nil // a new document: its frames and requests are yet to come
			t.LoaderID = string(wire.StringField(f, "loaderId"))
			t.Loaded = DocLoad{Seen: true}
			if st.setDocument(t, full) {
				st.letGo(t, full)
				return false, true
			}
		}
	case "Page.navigatedWithinDocument":
		if string(wire.StringField(params, "frameId")) != t.TargetID {
			return false, false
		}
		if u := wire.StringField(params, "url"); u != nil {
			st.setDocument(t, string(u))
		}
	case "Page.domContentEventFired", "Page.loadEventFired":
		return !st.TabUpdates, false
	}
	return false, false
}

// refreshTargetInfo asks the tab for its url and title, for an extension
// that does not report tab updates. Chrome has no event for a title.
func (in *Instance) refreshTargetInfo(x Upstream, t *Tab) {
	ctx, cancel := context.WithTimeout(context.Background(), in.Srv.Cfg.CallTimeout)
	defer cancel()
	res, err := x.SendCommand(ctx, t.Id, "", "Target.getTargetInfo", nil)
	if err != nil {
		return
	}
	var r struct {
		TargetInfo TargetInfo `json:"targetInfo"`
	}
	if json.Unmarshal(res, &r) != nil || r.TargetInfo.URL == "" {
		return
	}
	st := in.Lock()
	if st.Shared(t) {
		st.SetTargetInfo(t, r.TargetInfo.URL, r.TargetInfo.Title)
	}
	in.Unlock()
}
