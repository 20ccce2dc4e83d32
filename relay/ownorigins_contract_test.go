package relay

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// ownHarness is a relay that knows where it listens, as cdprelay serve
// tells it, with a public URL too; and the port it is served on.
func ownHarness(t *testing.T, cfg config.Config) (*harness, string) {
	t.Helper()
	cfg.Listen = "127.0.0.1:0" // the port is learnt from the first connection
	cfg.PublicURL = "https://relay.example.com/relay-1"
	h := newHarness(t, cfg)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(h.hs.URL, "http://"))
	return h, port
}

// ownURLs are spellings of the relay's own pages for a relay on port.
func ownURLs(port string) []string {
	return []string{
		"http://127.0.0.1:" + port + "/",
		"http://localhost:" + port + "/json/version",
		"http://0x7f.1:" + port + "/",
		"http://[::1]:" + port + "/viewer",
		"HTTP://LOCALHOST.:" + port + "/",
		"http://user@127.0.0.2:" + port + "/",
		"https://relay.example.com/relay-1/",
	}
}

// TestOwnOriginsCommandsRefused: no command takes a tab to the relay's
// own pages, however the URL is spelt, and nothing of it reaches the tab.
func TestOwnOriginsCommandsRefused(t *testing.T) {
	h, port := ownHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ok.test/"}}, Features: []string{"navigation-fence"}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	before := len(e.Commands())
	for _, u := range ownURLs(port) {
		for _, call := range []struct {
			sess, method string
			params       map[string]any
		}{
			{sess, "Page.navigate", map[string]any{"url": u}},
			{"", "Target.createTarget", map[string]any{"url": u}},
			{sess, "Target.createTarget", map[string]any{"url": u}},
			{sess, "Network.loadNetworkResource", map[string]any{"frameId": tid(1), "url": u, "options": map[string]any{"disableCache": false, "includeCredentials": true}}},
			{sess, "Fetch.continueRequest", map[string]any{"requestId": "R1", "url": u}},
		} {
			m := h.callMsg(c, call.sess, call.method, call.params)
			if m.Error == nil || !strings.Contains(m.Error.Message, "the relay's own page") {
				t.Errorf("%s %s: %s", call.method, u, m.Raw)
			}
		}
	}
	for _, cmd := range commandsSince(e, before) {
		if cmd.Method != "extension.keepalive" {
			t.Errorf("reached the extension: %s %s", cmd.Method, cmd.Params)
		}
	}
	// An ordinary page is not refused.
	if m := h.callMsg(c, sess, "Page.navigate", map[string]any{"url": "http://127.0.0.1:1/"}); m.Error != nil {
		t.Errorf("Page.navigate to another port: %s", m.Raw)
	}
}

// TestOwnOriginsHistoryEntry: a history entry on the relay's own page is
// no way there either.
func TestOwnOriginsHistoryEntry(t *testing.T) {
	var own string
	h, port := ownHarness(t, config.Config{})
	own = "http://localhost:" + port + "/"
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ok.test/"}}, Handler: func(tab int, sid, method string, params json.RawMessage) (any, error) {
		if method == "Page.getNavigationHistory" {
			return map[string]any{"currentIndex": 1, "entries": []map[string]any{{"id": 5, "url": own}, {"id": 6, "url": "https://ok.test/"}}}, nil
		}
		return fakeext.DefaultHandler(tab, sid, method, params)
	}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	m := h.callMsg(c, sess, "Page.navigateToHistoryEntry", map[string]any{"entryId": 5})
	if m.Error == nil || !strings.Contains(m.Error.Message, "the relay's own page") {
		t.Fatalf("navigateToHistoryEntry: %s", m.Raw)
	}
	if n := len(fenceCalls(t, e, "Page.navigateToHistoryEntry")); n != 0 {
		t.Fatal("it reached the tab")
	}
}

// TestOwnOriginsLetGo: a tab there is never attached; the backstop fails
// every request there, of every type (a link, a script, a form, a
// redirect); a tab on its way there stays until its request is failed,
// and one that commits there all the same is let go; and our extension
// gets rules that block them.
func TestOwnOriginsLetGo(t *testing.T) {
	h, port := ownHarness(t, config.Config{})
	own := "http://127.0.0.1:" + port + "/"
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: own, Title: "cdprelay"}, {ID: 2, URL: "https://ok.test/", Title: "B"}}, Features: []string{"navigation-fence"}})
	c := h.client()
	if got := h.autoAttach(c); len(got) != 1 {
		t.Fatalf("announced %v", got)
	}
	if e.Attached(1) {
		t.Fatal("the debugger is attached to the tab on the relay's own page")
	}

	// The backstop pauses requests to the relay's origins, of every type.
	enables := fenceCalls(t, e, "Fetch.enable")
	if len(enables) == 0 || !strings.Contains(string(enables[0].Params), "127.*:"+port+"/*") || strings.Contains(string(enables[0].Params), `"Document"`) {
		t.Fatalf("Fetch.enable at attach: %+v", enables)
	}
	e.Event(2, "", "Fetch.requestPaused", paused("R1", "http://localhost:"+port+"/viewer", "XHR"))
	e.Event(2, "", "Fetch.requestPaused", paused("R2", "http://127.0.0.1:1/", "Document"))
	e.Event(2, "", "Fetch.requestPaused", paused("R3", "https://relay.example.com/relay-1/", "Document"))
	h.waitFor("fail and continue", func() bool {
		return len(fenceCalls(t, e, "Fetch.failRequest")) == 2 && len(fenceCalls(t, e, "Fetch.continueRequest")) == 1
	})
	for _, f := range fenceCalls(t, e, "Fetch.failRequest") {
		if !strings.Contains(string(f.Params), `"R1"`) && !strings.Contains(string(f.Params), `"R3"`) {
			t.Errorf("failed %s", f.Params)
		}
	}

	// Our extension blocks them from the first request.
	h.waitFor("the first-request rules", func() bool { return strings.Contains(string(e.NetFence()), port) })
	var rules []map[string]any
	if err := json.Unmarshal(e.NetFence(), &rules); err != nil || len(rules) == 0 {
		t.Fatalf("rules: %s", e.NetFence())
	}

	// Tab 2 is on its way there: its request is failed, and it stays.
	sess := "pw-tab-1"
	h.call(c, sess, "Page.enable", nil)
	from := len(c.Messages())
	e.Event(2, "", "Page.frameStartedNavigating", map[string]any{"frameId": tid(2), "url": "http://localhost:" + port + "/", "loaderId": "L2", "navigationType": "differentDocument"})
	e.Event(2, "", "Fetch.requestPaused", paused("R4", "http://localhost:"+port+"/", "Document"))
	h.waitFor("the request fails", func() bool { return len(fenceCalls(t, e, "Fetch.failRequest")) == 3 })
	if !e.Attached(2) {
		t.Fatal("the relay let go of a tab whose request the backstop failed")
	}
	// Had it committed there all the same, it is let go at once.
	e.Navigate(2, "http://[::1]:"+port+"/", "cdprelay")
	h.event(c, from, "Target.detachedFromTarget")
	h.waitFor("the relay detaches the tab", func() bool { return !e.Attached(2) })
	m := h.callMsg(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"})
	if m.Error == nil {
		t.Fatalf("evaluate after letting go: %s", m.Raw)
	}
}

// TestOwnOriginsLiveViewNavigate: the live view's navigate does not go
// there either.
func TestOwnOriginsLiveViewNavigate(t *testing.T) {
	h, port := ownHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ok.test/"}}})
	if err := h.srv.Default().WaitReady(h.ctx); err != nil {
		t.Fatal(err)
	}
	th, err := OpenTab(h.ctx, h.srv.Default(), 1, func(api.TabEvent) {})
	if err != nil {
		t.Fatal(err)
	}
	defer th.Close()
	before := len(fenceCalls(t, e, "Page.navigate"))
	for _, u := range ownURLs(port) {
		if _, err := th.Call(context.Background(), "Page.navigate", map[string]any{"url": u}); err == nil || !strings.Contains(err.Error(), "the relay's own page") {
			t.Errorf("the live view's navigate to %s: %v", u, err)
		}
	}
	if _, err := th.Call(context.Background(), "Page.navigate", json.RawMessage(`{"url":"https://ok.test/","url":"http://127.0.0.1:`+port+`/"}`)); err == nil {
		t.Error("a navigate whose url is given twice went through")
	}
	if n := len(fenceCalls(t, e, "Page.navigate")); n != before {
		t.Errorf("%d navigations reached the tab", n-before)
	}
	if _, err := th.Call(context.Background(), "Page.navigate", map[string]any{"url": "https://ok.test/next"}); err != nil {
		t.Errorf("an ordinary navigate: %v", err)
	}
}
