package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/config"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// A page load that happens while our extension's worker is stopped
// (relay/internal/away: load.go, document.go), against the fake extension.

// loadTab is a pageTab whose document has loaded, and which answers as
// Chrome does: Page.setLifecycleEventsEnabled sends the document's past
// lifecycle events before its reply, and document.readyState is
// "complete".
type loadTab struct {
	*pageTab
	mu  sync.Mutex
	ext *fakeext.Ext
	set chan struct{} // closed once ext is the extension the tab is on
}

// lifecycleAt is the timestamp the fake gives lifecycle event i.
func lifecycleAt(i int) float64 { return 100.5 + float64(i) }

var lifecycleNames = []string{"commit", "DOMContentLoaded", "load", "networkAlmostIdle", "networkIdle"}

// next makes the tab wait for the extension that comes next; use names it.
func (l *loadTab) next() {
	l.mu.Lock()
	l.set = make(chan struct{})
	l.mu.Unlock()
}

func (l *loadTab) use(e *fakeext.Ext) {
	l.mu.Lock()
	l.ext = e
	close(l.set)
	l.mu.Unlock()
}

func (l *loadTab) handle(tabID int, sessionID, method string, params json.RawMessage) (any, error) {
	switch {
	case method == "Page.setLifecycleEventsEnabled" && tabID == 1 && strings.Contains(string(params), "true"):
		l.mu.Lock()
		set := l.set
		l.mu.Unlock()
		<-set
		l.mu.Lock()
		e := l.ext
		l.mu.Unlock()
		l.pageTab.mu.Lock()
		doc := l.document
		l.pageTab.mu.Unlock()
		for i, name := range lifecycleNames {
			e.Event(1, "", "Page.lifecycleEvent", map[string]any{"frameId": tid(1), "loaderId": doc, "name": name, "timestamp": lifecycleAt(i)})
		}
		return map[string]any{}, nil
	case method == "Runtime.evaluate" && tabID == 1 && strings.Contains(string(params), "document.readyState"):
		return map[string]any{"result": map[string]any{"type": "string", "value": "complete"}}, nil
	}
	return l.pageTab.handle(tabID, sessionID, method, params)
}

// loadHarness is a client auto-attached to two tabs of our extension, the
// first a loadTab.
func loadHarness(t *testing.T) (*harness, *loadTab, *fakeext.Ext, *cdptest.Client) {
	t.Helper()
	l := &loadTab{pageTab: newPageTab(t)}
	l.next()
	h := newHarness(t, config.Config{ExtensionGrace: 50 * time.Millisecond})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: l.handle, Features: wakeFeatures})
	l.use(e)
	c := h.client()
	h.autoAttach(c)
	return h, l, e, c
}

// awayWhileLoading stops the extension under a client whose tab 1 then
// commits and loads another document, brings a new one, and returns the
// index of the client's first message after the stop.
func awayWhileLoading(t *testing.T, h *harness, l *loadTab, e *fakeext.Ext, c *cdptest.Client) int {
	t.Helper()
	from := len(c.Messages())
	e.CloseGoingAway()
	h.waitFor("the extension gone", func() bool { return !h.srv.Default().Status().Extension })
	l.newDocument("DOC-2", "https://a.example/next")
	l.next()
	l.use(h.ext(fakeext.Options{Tabs: twoTabs, Handler: l.handle, Features: wakeFeatures}))
	h.waitFor("the tab to be back", func() bool { return tabStatus(h, 1).Waiting == "" && tabStatus(h, 1).Attached })
	return from
}

// TestExtensionAwayMissedLoad: the client's navigation commits and the
// document loads while our extension's worker is stopped. Once the
// extension is back, the client is shown the new document, then hears its
// lifecycle events once, as Chrome sends them again when they are enabled
// again (the relay adds none), then the Page load events Chrome does not
// send again, with the times of Chrome's lifecycle events, in Chrome's
// order. A tab that did not move hears nothing of the kind.
func TestExtensionAwayMissedLoad(t *testing.T) {
	t.Parallel()
	h, l, e, c := loadHarness(t)
	for _, s := range []string{"pw-tab-1", "pw-tab-2"} {
		h.call(c, s, "Page.enable", nil)
		h.call(c, s, "Page.setLifecycleEventsEnabled", map[string]any{"enabled": true})
	}
	from := awayWhileLoading(t, h, l, e, c)

	nav, ni := h.event(c, from, "Page.frameNavigated")
	mustMatch(t, nav.Raw, fmt.Sprintf(`{"method":"Page.frameNavigated","sessionId":"pw-tab-1","params":{"frame":{"id":%q,"loaderId":"DOC-2","url":"https://a.example/next","securityOrigin":"https://a.example","mimeType":"text/html"},"type":"Navigation"}}`, tid(1)))
	stopped, si := h.event(c, ni, "Page.frameStoppedLoading")
	mustMatch(t, stopped.Raw, fmt.Sprintf(`{"method":"Page.frameStoppedLoading","sessionId":"pw-tab-1","params":{"frameId":%q}}`, tid(1)))

	var got []string
	for _, m := range c.Messages()[ni+1 : si+1] {
		switch m.Method {
		case "Page.lifecycleEvent":
			var p struct{ Name, LoaderID string }
			json.Unmarshal(m.Params, &p)
			if p.LoaderID != "DOC-2" || m.SessionID != "pw-tab-1" {
				t.Errorf("a lifecycle event of another document: %s", m.Raw)
			}
			got = append(got, p.Name)
		case "Page.domContentEventFired", "Page.loadEventFired":
			var p struct{ Timestamp json.RawMessage }
			json.Unmarshal(m.Params, &p)
			got = append(got, m.SessionID+" "+m.Method+" "+string(p.Timestamp))
		}
	}
	want := append(append([]string(nil), lifecycleNames...),
		fmt.Sprintf("pw-tab-1 Page.domContentEventFired %v", lifecycleAt(1)),
		fmt.Sprintf("pw-tab-1 Page.loadEventFired %v", lifecycleAt(2)))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after the new document the client heard\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	h.call(c, "pw-tab-2", "Runtime.evaluate", map[string]any{"expression": "1"})
	for _, m := range c.Messages()[from:] {
		if m.SessionID == "pw-tab-2" && (m.Method == "Page.frameNavigated" || m.Method == "Page.loadEventFired" || m.Method == "Page.frameStoppedLoading") {
			t.Errorf("the tab that stayed on its document: %s", m.Raw)
		}
		if m.Method == "Page.loadEventFired" && m.SessionID == "pw-tab-1" && !strings.Contains(string(m.Params), fmt.Sprint(lifecycleAt(2))) {
			t.Errorf("a further load event: %s", m.Raw)
		}
	}
}

// TestExtensionAwayMissedLoadPageOnly: a client that waits for a load with
// Page enabled and no lifecycle events hears the load it missed too, from
// the document's readyState, and nothing of the lifecycle.
func TestExtensionAwayMissedLoadPageOnly(t *testing.T) {
	t.Parallel()
	h, l, e, c := loadHarness(t)
	h.call(c, "pw-tab-1", "Page.enable", nil)
	from := awayWhileLoading(t, h, l, e, c)

	_, ni := h.event(c, from, "Page.frameNavigated")
	dcl, di := h.event(c, ni, "Page.domContentEventFired")
	mustMatch(t, dcl.Raw, `{"method":"Page.domContentEventFired","sessionId":"pw-tab-1","params":{"timestamp":"<any>"}}`)
	load, li := h.event(c, di, "Page.loadEventFired")
	mustMatch(t, load.Raw, `{"method":"Page.loadEventFired","sessionId":"pw-tab-1","params":{"timestamp":"<any>"}}`)
	stopped, _ := h.event(c, li, "Page.frameStoppedLoading")
	mustMatch(t, stopped.Raw, fmt.Sprintf(`{"method":"Page.frameStoppedLoading","sessionId":"pw-tab-1","params":{"frameId":%q}}`, tid(1)))
	for _, m := range c.Messages()[from:] {
		if m.Method == "Page.lifecycleEvent" {
			t.Errorf("lifecycle events were not enabled: %s", m.Raw)
		}
	}
}
