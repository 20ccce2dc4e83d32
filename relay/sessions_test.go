package relay

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// sendCommands returns the CDP methods the fake received through
// chrome.debugger.sendCommand since index from.
func sendCommands(t *testing.T, e *fakeext.Ext, from int) []string {
	t.Helper()
	var out []string
	for _, cmd := range commandsSince(e, from) {
		if cmd.Method != "chrome.debugger.sendCommand" {
			continue
		}
		var args []json.RawMessage
		mustDecode(t, string(cmd.Params), &args)
		var m string
		mustDecode(t, string(args[1]), &m)
		out = append(out, m)
	}
	return out
}

// TestFurtherSessionOnAttachedTab is Puppeteer's page.createCDPSession():
// Target.attachToTarget at the root for a page that has its session.
func TestFurtherSessionOnAttachedTab(t *testing.T) {
	t.Parallel()
	for _, x := range extensions {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			e := h.ext(x.with(fakeext.Options{Tabs: twoTabs[:1]}))
			c := h.client()
			page := h.autoAttach(c)[0]
			h.call(c, page, "Runtime.enable", nil)

			from := len(c.Messages())
			id := h.send(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true})
			m, at := h.reply(c, id)
			mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"result":{"sessionId":"pw-tab-2"}}`, id))
			if at != from+1 {
				t.Fatalf("before the reply: %s", describe(c.Messages()[from:at]))
			}
			mustMatch(t, c.Messages()[from].Raw, attachedEvent("pw-tab-2", pageInfo(1, "https://a.example/", "A", true)))

			// Replies go to the asking session.
			for _, sid := range []string{page, "pw-tab-2"} {
				m := h.callMsg(c, sid, "Runtime.evaluate", map[string]any{"expression": "1"})
				if m.SessionID != sid || m.Error != nil {
					t.Fatalf("reply %s, want a result on %s", m.Raw, sid)
				}
			}

			// The page's session gets everything; the further one only the
			// domains it enabled.
			from = len(c.Messages())
			e.Event(1, "", "Runtime.consoleAPICalled", map[string]any{"type": "log"})
			e.Event(1, "", "Network.requestWillBeSent", map[string]any{"requestId": "1"})
			h.event(c, from, "Network.requestWillBeSent")
			for _, m := range c.Messages()[from:] {
				if m.SessionID != page {
					t.Fatalf("a further session got %s", m.Raw)
				}
			}
			h.call(c, "pw-tab-2", "Network.enable", nil)
			from = len(c.Messages())
			e.Event(1, "", "Network.requestWillBeSent", map[string]any{"requestId": "2"})
			e.Event(1, "", "Page.loadEventFired", map[string]any{"timestamp": 1})
			h.event(c, from, "Page.loadEventFired")
			got := map[string]int{}
			for _, m := range c.Messages()[from:] {
				got[m.SessionID+" "+m.Method]++
			}
			want := map[string]int{page + " Network.requestWillBeSent": 1, "pw-tab-2 Network.requestWillBeSent": 1, page + " Page.loadEventFired": 1}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("events %v, want %v", got, want)
			}

			// The further session's clean-up does not switch off the page's
			// Runtime (which the relay answers itself: it keeps Runtime on);
			// a domain nobody else has is switched off.
			before := len(e.Commands())
			h.call(c, "pw-tab-2", "Runtime.enable", nil)
			h.call(c, "pw-tab-2", "Runtime.disable", nil)
			h.call(c, "pw-tab-2", "Network.disable", nil)
			var sent []string
			for _, m := range sendCommands(t, e, before) {
				// The stock extension's tabs are asked for their title
				// after a load; that is the relay's own business.
				if m != "Target.getTargetInfo" {
					sent = append(sent, m)
				}
			}
			if got := fmt.Sprint(sent); got != "[Network.disable]" {
				t.Errorf("forwarded %s", got)
			}

			// Detaching it leaves the page alone.
			from = len(c.Messages())
			id = h.send(c, "", "Target.detachFromTarget", map[string]any{"sessionId": "pw-tab-2"})
			m, at = h.reply(c, id)
			mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"result":{}}`, id))
			if at != from+1 {
				t.Fatalf("before the reply: %s", describe(c.Messages()[from:at]))
			}
			mustMatch(t, c.Messages()[from].Raw, detachedEvent("pw-tab-2", 1))
			if !e.Attached(1) {
				t.Fatal("the debugger left the tab")
			}
			h.call(c, page, "Runtime.evaluate", map[string]any{"expression": "1"})
			m = h.callMsg(c, "pw-tab-2", "Runtime.evaluate", map[string]any{"expression": "1"})
			if m.Error == nil || m.Error.Code != core.CodeNoSession {
				t.Errorf("the detached session still works: %s", m.Raw)
			}
		})
	}
}

// TestFirstSessionDetachPromotesNext: when the page's own session goes,
// the further one carries on and gets the tab's events.
func TestFirstSessionDetachPromotesNext(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	first := h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true})
	mustMatch(t, first, `{"sessionId":"pw-tab-1"}`)
	h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true})
	h.call(c, "", "Target.detachFromTarget", map[string]any{"sessionId": "pw-tab-1"})
	if !e.Attached(1) {
		t.Fatal("the debugger left the tab")
	}
	from := len(c.Messages())
	e.Event(1, "", "Page.loadEventFired", map[string]any{"timestamp": 1})
	m, _ := h.event(c, from, "Page.loadEventFired")
	if m.SessionID != "pw-tab-2" {
		t.Errorf("event on %q", m.SessionID)
	}
	// The last one going takes the debugger with it.
	h.call(c, "", "Target.detachFromTarget", map[string]any{"sessionId": "pw-tab-2"})
	if e.Attached(1) {
		t.Error("the debugger is still attached")
	}
}

// TestBrowserSession is Playwright's newBrowserCDPSession() and the path
// of its context.newCDPSession(page).
func TestBrowserSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	page := h.autoAttach(c)[0]

	from := len(c.Messages())
	id := h.send(c, "", "Target.attachToBrowserTarget", nil)
	m, at := h.reply(c, id)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"result":{"sessionId":"pw-browser-3"}}`, id))
	if at != from+1 {
		t.Fatalf("before the reply: %s", describe(c.Messages()[from:at]))
	}
	mustMatch(t, c.Messages()[from].Raw, `{"method":"Target.attachedToTarget","params":{"sessionId":"pw-browser-3","targetInfo":{"targetId":"<any>","type":"browser","title":"","url":"","attached":true,"canAccessOpener":false},"waitingForDebugger":false}}`)
	b := "pw-browser-3"

	// Root methods, answered on the session.
	m = h.callMsg(c, b, "Browser.getVersion", nil)
	if m.SessionID != b || m.Error != nil {
		t.Fatalf("getVersion: %s", m.Raw)
	}
	m = h.callMsg(c, b, "Target.getTargets", nil)
	if m.SessionID != b || m.Error != nil {
		t.Fatalf("getTargets: %s", m.Raw)
	}
	// What the relay does not emulate goes to the tab that answers the
	// root's, and back on the session.
	before := len(e.Commands())
	m = h.callMsg(c, b, "Storage.getCookies", map[string]any{})
	if m.SessionID != b || m.Error != nil {
		t.Fatalf("getCookies: %s", m.Raw)
	}
	if got := fmt.Sprint(sendCommands(t, e, before)); got != "[Storage.getCookies]" {
		t.Errorf("forwarded %s", got)
	}
	m = h.callMsg(c, b, "Browser.close", nil)
	if m.SessionID != b || m.Error == nil || m.Error.Code != core.CodeMethodNotFound {
		t.Errorf("Browser.close: %s", m.Raw)
	}

	// newCDPSession(page): attached from the browser session, announced
	// there, not at the root (Playwright's root would take it for a
	// duplicate page).
	from = len(c.Messages())
	id = h.send(c, b, "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true})
	m, at = h.reply(c, id)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":%q,"result":{"sessionId":"pw-tab-4"}}`, id, b))
	if at != from+1 {
		t.Fatalf("before the reply: %s", describe(c.Messages()[from:at]))
	}
	ev := c.Messages()[from]
	if ev.Method != "Target.attachedToTarget" || ev.SessionID != b {
		t.Fatalf("announced as %s", ev.Raw)
	}
	h.call(c, "pw-tab-4", "Runtime.evaluate", map[string]any{"expression": "1"})

	// CDPSession.detach(): sent on the browser session, told there.
	from = len(c.Messages())
	id = h.send(c, b, "Target.detachFromTarget", map[string]any{"sessionId": "pw-tab-4"})
	_, at = h.reply(c, id)
	if at != from+1 || c.Messages()[from].Method != "Target.detachedFromTarget" || c.Messages()[from].SessionID != b {
		t.Fatalf("detach: %s", describe(c.Messages()[from:]))
	}
	h.call(c, page, "Runtime.evaluate", map[string]any{"expression": "1"})

	// Letting go of the browser session.
	h.call(c, "", "Target.detachFromTarget", map[string]any{"sessionId": b})
	m = h.callMsg(c, b, "Browser.getVersion", nil)
	if m.Error == nil || m.Error.Code != core.CodeNoSession {
		t.Errorf("the browser session still works: %s", m.Raw)
	}
}

// TestSessionLevelDiscoverTargets is chromedp's: Target.setDiscoverTargets
// on its page session, the target events on that session.
func TestSessionLevelDiscoverTargets(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	res := h.call(c, "", "Target.createTarget", map[string]any{"url": "about:blank", "newWindow": true})
	var ct struct{ TargetID string }
	mustDecode(t, string(res), &ct)
	res = h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": ct.TargetID, "flatten": true})
	var at struct{ SessionID string }
	mustDecode(t, string(res), &at)
	s := at.SessionID

	from := len(c.Messages())
	id := h.send(c, s, "Target.setDiscoverTargets", map[string]any{"discover": true})
	_, i := h.reply(c, id)
	got := c.Messages()[from:i]
	if len(got) != 2 {
		t.Fatalf("before the reply: %s", describe(got))
	}
	for _, m := range got {
		if m.Method != "Target.targetCreated" || m.SessionID != s {
			t.Fatalf("got %s", m.Raw)
		}
	}
	from = len(c.Messages())
	e.OpenTab(fakeext.Tab{URL: "https://later.example/", Title: "L"})
	m, _ := h.event(c, from, "Target.targetCreated")
	if m.SessionID != s {
		t.Errorf("targetCreated on %q, want %q", m.SessionID, s)
	}
	for _, m := range c.Messages()[from:] {
		if m.SessionID == "" && m.Method == "Target.targetCreated" {
			t.Errorf("the root did not ask: %s", m.Raw)
		}
	}
}

// TestDownloadEvents: the tab's Page.download* become Browser.download*
// at the root for a client that asked for download events (here without a
// folder: downloads_test.go has those).
func TestDownloadEvents(t *testing.T) {
	t.Parallel()
	for _, enabled := range []bool{true, false} {
		t.Run(fmt.Sprintf("eventsEnabled=%t", enabled), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
			c := h.client()
			h.call(c, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "default", "eventsEnabled": enabled})
			page := h.autoAttach(c)[0]
			from := len(c.Messages())
			begin := map[string]any{"frameId": tid(1), "guid": "g-1", "url": "http://x.example/f", "suggestedFilename": "report.csv"}
			e.Event(1, "", "Page.downloadWillBegin", begin)
			e.Event(1, "", "Page.downloadProgress", map[string]any{"guid": "g-1", "totalBytes": 8, "receivedBytes": 8, "state": "completed"})
			h.event(c, from, "Page.downloadProgress")
			var got []string
			for _, m := range c.Messages()[from:] {
				got = append(got, m.SessionID+" "+m.Method)
			}
			want := []string{page + " Page.downloadWillBegin", page + " Page.downloadProgress"}
			if enabled {
				want = []string{" Browser.downloadWillBegin", page + " Page.downloadWillBegin", " Browser.downloadProgress", page + " Page.downloadProgress"}
				w, _ := h.event(c, from, "Browser.downloadWillBegin")
				mustMatch(t, w.Raw, fmt.Sprintf(`{"method":"Browser.downloadWillBegin","params":{"frameId":%q,"guid":"g-1","url":"http://x.example/f","suggestedFilename":"report.csv"}}`, tid(1)))
				p, _ := h.event(c, from, "Browser.downloadProgress")
				mustMatch(t, p.Raw, `{"method":"Browser.downloadProgress","params":{"guid":"g-1","totalBytes":8,"receivedBytes":8,"state":"completed"}}`)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// TestSharedSetChanges: in "pick" mode the person adds and removes tabs
// while a client works; they come and go as targets.
func TestSharedSetChanges(t *testing.T) {
	t.Parallel()
	for _, x := range extensions {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			e := h.ext(x.with(fakeext.Options{Tabs: twoTabs[:1]}))
			c := h.client()
			h.call(c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
			h.autoAttach(c)

			from := len(c.Messages())
			e.OpenTab(fakeext.Tab{URL: "https://picked.example/", Title: "P"})
			h.event(c, from, "Target.targetCreated")
			a, _ := h.event(c, from, "Target.attachedToTarget")
			mustMatch(t, a.Raw, attachedEvent("pw-tab-2", pageInfo(101, "https://picked.example/", "P", true)))
			h.call(c, "pw-tab-2", "Runtime.evaluate", map[string]any{"expression": "1"})

			// Unticked: the extension detaches and says it is gone, though
			// the tab stays open.
			from = len(c.Messages())
			e.DetachByBrowser(101, "canceled_by_user")
			e.Emit("chrome.tabs.onRemoved", 101, map[string]any{"windowId": 1, "isWindowClosing": false, "unshared": true})
			d, _ := h.event(c, from, "Target.detachedFromTarget")
			mustMatch(t, d.Raw, detachedEventWhy("pw-tab-2", 101, "the person stopped sharing the tab (Cancel on the debugging bar)"))
			g, _ := h.event(c, from, "Target.targetDestroyed")
			mustMatch(t, g.Raw, fmt.Sprintf(`{"method":"Target.targetDestroyed","params":{"targetId":%q}}`, tid(101)))
			res := h.call(c, "", "Target.getTargets", nil)
			mustMatch(t, res, `{"targetInfos":[`+pageInfo(1, "https://a.example/", "A", true)+`]}`)

			// Shared again.
			from = len(c.Messages())
			e.Emit("chrome.tabs.onCreated", fakeext.Tab{ID: 101, URL: "https://picked.example/", Title: "P", TargetID: map[bool]string{false: tid(101)}[x.stock]})
			a, _ = h.event(c, from, "Target.attachedToTarget")
			mustMatch(t, a.Raw, attachedEvent("pw-tab-3", pageInfo(101, "https://picked.example/", "P", true)))
		})
	}
}
