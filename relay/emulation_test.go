package relay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay/internal/config"
)

// twoTabs is the usual starting point: two ordinary shared tabs.
var twoTabs = []fakeext.Tab{
	{ID: 1, URL: "https://a.example/", Title: "A"},
	{ID: 2, URL: "https://b.example/", Title: "B"},
}

func TestBrowserGetVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    fakeext.Options
		session bool
		want    string
	}{
		{
			name: "reports the extension's browser",
			opts: fakeext.Options{Product: "Chrome/156.0.8078.108", UserAgent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) Chrome/156.0.0.0 Safari/537.36"},
			want: `{"protocolVersion":"1.3","product":"Chrome/156.0.8078.108","revision":"","userAgent":"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) Chrome/156.0.0.0 Safari/537.36","jsVersion":""}`,
		},
		{
			name:    "on a tab session too",
			session: true,
			want:    fmt.Sprintf(`{"protocolVersion":"1.3","product":%q,"revision":"","userAgent":%q,"jsVersion":""}`, fakeProduct, fakeUA),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			tt.opts.Tabs = twoTabs[:1]
			e := h.ext(tt.opts)
			c := h.client()
			sid := ""
			if tt.session {
				sid = h.autoAttach(c)[0]
			}
			before := len(e.Commands())
			m := h.callMsg(c, sid, "Browser.getVersion", nil)
			if m.SessionID != sid || m.Error != nil {
				t.Fatalf("reply %s, want a result on session %q", m.Raw, sid)
			}
			mustMatch(t, m.Result, tt.want)
			if got := commandsSince(e, before); len(got) != 0 {
				t.Errorf("forwarded to the extension: %v", got)
			}
		})
	}
}

func TestSetDownloadBehaviorIsAckedNotForwarded(t *testing.T) {
	t.Parallel()
	for _, session := range []bool{false, true} {
		t.Run(fmt.Sprintf("session=%t", session), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			e := h.ext(fakeext.Options{Tabs: twoTabs})
			c := h.client()
			sessions := h.autoAttach(c)
			sid := ""
			if session {
				sid = sessions[0]
			}
			before := len(e.Commands())
			id := h.send(c, sid, "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": "/tmp/x", "eventsEnabled": true})
			m, _ := h.reply(c, id)
			if session {
				mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":%q,"result":{}}`, id, sid))
			} else {
				mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"result":{}}`, id))
			}
			if got := commandsSince(e, before); len(got) != 0 {
				t.Errorf("forwarded to the extension: %+v", got)
			}
		})
	}
}

func TestRootSetAutoAttach(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{
		{ID: 1, URL: "https://a.example/", Title: "A"},
		{ID: 2, URL: "chrome://settings/", Title: "Settings"},
		{ID: 3, URL: "https://c.example/", Title: "C"},
	}})
	c := h.client()
	id := h.send(c, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	_, at := h.reply(c, id)
	msgs := c.Messages()
	// Playwright's connectOverCDP takes the pages announced before the
	// reply as the browser's pages: all of them must come first.
	want := []string{
		attachedEvent("pw-tab-1", pageInfo(1, "https://a.example/", "A", true)),
		attachedEvent("pw-tab-2", pageInfo(3, "https://c.example/", "C", true)),
		fmt.Sprintf(`{"id":%d,"result":{}}`, id),
	}
	if at != len(want)-1 {
		t.Fatalf("reply at %d, want %d: %s", at, len(want)-1, describe(msgs))
	}
	for i, w := range want {
		mustMatch(t, msgs[i].Raw, w)
	}
	if !e.Attached(1) || e.Attached(2) || !e.Attached(3) {
		t.Errorf("attached: 1=%t 2=%t 3=%t, want the chrome:// tab alone left out", e.Attached(1), e.Attached(2), e.Attached(3))
	}
	// Switching it on again announces nothing twice.
	if again := h.autoAttach(c); len(again) != 0 {
		t.Errorf("second setAutoAttach announced %v", again)
	}
}

func TestRootSetAutoAttachRefusesNonFlat(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	id := h.send(c, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": false})
	m, at := h.reply(c, id)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"error":{"code":-32000,"message":"cdprelay: only flat sessions are supported (flatten: true)"}}`, id))
	if at != 0 || len(e.Commands()) != 0 {
		t.Errorf("something happened: messages %s, commands %+v", describe(c.Messages()), e.Commands())
	}
}

func TestCreateTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		autoAttach bool
		params     map[string]any
		wantCreate string // the chrome.tabs.create arguments
		wantURL    string
	}{
		{"auto-attach on", true, map[string]any{"url": "https://new.example/"}, `[{"active":true,"url":"https://new.example/"}]`, "https://new.example/"},
		{"auto-attach off", false, map[string]any{"url": "https://new.example/"}, `[{"active":true,"url":"https://new.example/"}]`, "https://new.example/"},
		{"background, no url", true, map[string]any{"background": true, "newWindow": true}, `[{"active":false,"url":"about:blank"}]`, "about:blank"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
			c := h.client()
			if tt.autoAttach {
				h.autoAttach(c)
			}
			from := len(c.Messages())
			before := len(e.Commands())
			id := h.send(c, "", "Target.createTarget", tt.params)
			m, at := h.reply(c, id)
			// The fake numbers new tabs from 101.
			mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"result":{"targetId":%q}}`, id, tid(101)))
			got := c.Messages()[from:at]
			if tt.autoAttach {
				// Playwright's newPage() waits for the page announced before
				// the reply.
				if len(got) != 1 {
					t.Fatalf("before the reply: %s", describe(got))
				}
				mustMatch(t, got[0].Raw, attachedEvent("pw-tab-2", pageInfo(101, tt.wantURL, "", true)))
			} else if len(got) != 0 {
				t.Fatalf("before the reply: %s", describe(got))
			}
			cmds := commandsSince(e, before)
			if len(cmds) == 0 || cmds[0].Method != "chrome.tabs.create" {
				t.Fatalf("commands: %+v", cmds)
			}
			mustMatch(t, cmds[0].Params, tt.wantCreate)
			if !e.Attached(101) {
				t.Errorf("the new tab is not attached")
			}
			if !tt.autoAttach {
				// Without auto-attach it is a target the client can attach to.
				res := h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(101), "flatten": true})
				mustMatch(t, res, `{"sessionId":"pw-tab-1"}`)
			}
		})
	}
}

func TestCloseTarget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	h.autoAttach(c)
	from := len(c.Messages())
	id := h.send(c, "", "Target.closeTarget", map[string]any{"targetId": tid(1)})
	m, at := h.reply(c, id)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"result":{"success":true}}`, id))
	if at != from {
		t.Fatalf("before the reply: %s", describe(c.Messages()[from:at]))
	}
	ev, _ := h.event(c, at, "Target.detachedFromTarget")
	mustMatch(t, ev.Raw, detachedEvent("pw-tab-1", 1))
	if tabs := e.Tabs(); len(tabs) != 1 || tabs[0].ID != 2 {
		t.Errorf("tabs left: %+v", tabs)
	}
	// The other tab is untouched.
	h.call(c, "pw-tab-2", "Runtime.evaluate", map[string]any{"expression": "1"})

	m = h.callMsg(c, "", "Target.closeTarget", map[string]any{"targetId": "NOSUCHTARGET"})
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"error":{"code":-32602,"message":"No target with given id found"}}`, *m.ID))
}

func TestGetTargetInfo(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	h.autoAttach(c)

	t.Run("root is the browser", func(t *testing.T) {
		before := len(e.Commands())
		res := h.call(c, "", "Target.getTargetInfo", nil)
		mustMatch(t, res, `{"targetInfo":{"targetId":"<any>","type":"browser","title":"","url":"","attached":true,"canAccessOpener":false}}`)
		if got := commandsSince(e, before); len(got) != 0 {
			t.Errorf("forwarded: %+v", got)
		}
	})
	t.Run("root with a tab's targetId", func(t *testing.T) {
		res := h.call(c, "", "Target.getTargetInfo", map[string]any{"targetId": tid(2)})
		mustMatch(t, res, `{"targetInfo":`+pageInfo(2, "https://b.example/", "B", true)+`}`)
	})
	t.Run("root with an unknown targetId", func(t *testing.T) {
		m := h.callMsg(c, "", "Target.getTargetInfo", map[string]any{"targetId": "NOPE"})
		mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"error":{"code":-32602,"message":"No target with given id found"}}`, *m.ID))
	})
	t.Run("a session asks its tab", func(t *testing.T) {
		before := len(e.Commands())
		m := h.callMsg(c, "pw-tab-2", "Target.getTargetInfo", nil)
		// This is the fake's own answer, key order and all.
		want := fmt.Sprintf(`{"id":%d,"sessionId":"pw-tab-2","result":{"targetInfo":{"attached":true,"browserContextId":%q,"canAccessOpener":false,"targetId":%q,"title":"B","type":"page","url":"https://b.example/"}}}`, *m.ID, fakeContext, tid(2))
		if string(m.Raw) != want {
			t.Errorf("reply\n got %s\nwant %s", m.Raw, want)
		}
		cmds := commandsSince(e, before)
		if len(cmds) != 1 {
			t.Fatalf("commands: %+v", cmds)
		}
		mustMatch(t, cmds[0].Params, `[{"tabId":2},"Target.getTargetInfo"]`)
	})
}

func TestGetTargets(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	// Before any attach the relay knows the tabs from the extension's
	// offer; their context is the instance's default one.
	res := h.call(c, "", "Target.getTargets", nil)
	mustMatch(t, res, fmt.Sprintf(`{"targetInfos":[
		{"targetId":%q,"type":"page","title":"A","url":"https://a.example/","attached":false,"canAccessOpener":false,"browserContextId":"<any>"},
		{"targetId":%q,"type":"page","title":"B","url":"https://b.example/","attached":false,"canAccessOpener":false,"browserContextId":"<any>"}]}`, tid(1), tid(2)))
	h.autoAttach(c)
	res = h.call(c, "", "Target.getTargets", nil)
	mustMatch(t, res, `{"targetInfos":[`+pageInfo(1, "https://a.example/", "A", true)+","+pageInfo(2, "https://b.example/", "B", true)+`]}`)
}

func TestSetDiscoverTargets(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	created := func(id int, url, title string) string {
		return fmt.Sprintf(`{"method":"Target.targetCreated","params":{"targetInfo":{"targetId":%q,"type":"page","title":%q,"url":%q,"attached":false,"canAccessOpener":false,"browserContextId":"<any>"}}}`, tid(id), title, url)
	}

	id := h.send(c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
	_, at := h.reply(c, id)
	msgs := c.Messages()
	if at != 2 {
		t.Fatalf("reply at %d: %s", at, describe(msgs))
	}
	mustMatch(t, msgs[0].Raw, created(1, "https://a.example/", "A"))
	mustMatch(t, msgs[1].Raw, created(2, "https://b.example/", "B"))
	mustMatch(t, msgs[2].Raw, fmt.Sprintf(`{"id":%d,"result":{}}`, id))

	// A tab the person shares later.
	e.OpenTab(fakeext.Tab{URL: "https://later.example/", Title: "L"})
	m, at := h.event(c, at, "Target.targetCreated")
	mustMatch(t, m.Raw, created(101, "https://later.example/", "L"))

	// A navigation the extension reports.
	e.Emit("chrome.tabs.onUpdated", 1, map[string]any{"url": "https://a.example/next"},
		fakeext.Tab{ID: 1, URL: "https://a.example/next", Title: "A2", TargetID: tid(1)})
	m, at = h.event(c, at, "Target.targetInfoChanged")
	mustMatch(t, m.Raw, fmt.Sprintf(`{"method":"Target.targetInfoChanged","params":{"targetInfo":{"targetId":%q,"type":"page","title":"A2","url":"https://a.example/next","attached":false,"canAccessOpener":false,"browserContextId":"<any>"}}}`, tid(1)))

	// An update that changes nothing the client sees says nothing; the
	// closing of tab 2 right after is the next message.
	e.Emit("chrome.tabs.onUpdated", 1, map[string]any{"status": "complete"},
		fakeext.Tab{ID: 1, URL: "https://a.example/next", Title: "A2", TargetID: tid(1)})
	e.CloseTab(2)
	m, _, err := c.WaitMessage(h.ctx, at+1, func(cdptest.Message) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	mustMatch(t, m.Raw, fmt.Sprintf(`{"method":"Target.targetDestroyed","params":{"targetId":%q}}`, tid(2)))
}

func TestAttachToTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		params map[string]any
		want   string // the reply's result or error, %d for the id
		event  bool
	}{
		{"flat", map[string]any{"targetId": tid(2), "flatten": true}, `{"id":%d,"result":{"sessionId":"pw-tab-1"}}`, true},
		{"not flat", map[string]any{"targetId": tid(2), "flatten": false}, `{"id":%d,"error":{"code":-32000,"message":"cdprelay: only flat sessions are supported (flatten: true)"}}`, false},
		{"flatten missing", map[string]any{"targetId": tid(2)}, `{"id":%d,"error":{"code":-32000,"message":"cdprelay: only flat sessions are supported (flatten: true)"}}`, false},
		{"unknown target", map[string]any{"targetId": "NOPE", "flatten": true}, `{"id":%d,"error":{"code":-32602,"message":"No target with given id found"}}`, false},
		{"bad params", map[string]any{"targetId": 5, "flatten": true}, `{"id":%d,"error":{"code":-32602,"message":"<any>"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			e := h.ext(fakeext.Options{Tabs: twoTabs})
			c := h.client()
			id := h.send(c, "", "Target.attachToTarget", tt.params)
			m, at := h.reply(c, id)
			mustMatch(t, m.Raw, fmt.Sprintf(tt.want, id))
			msgs := c.Messages()
			if !tt.event {
				if at != 0 || e.Attached(2) {
					t.Errorf("attached anyway: %s", describe(msgs))
				}
				return
			}
			// chromedp uses the session as soon as the reply comes; the
			// event must be there already.
			if at != 1 {
				t.Fatalf("reply at %d: %s", at, describe(msgs))
			}
			mustMatch(t, msgs[0].Raw, attachedEvent("pw-tab-1", pageInfo(2, "https://b.example/", "B", true)))
			if !e.Attached(2) || e.Attached(1) {
				t.Errorf("attached: 1=%t 2=%t", e.Attached(1), e.Attached(2))
			}
			h.call(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
		})
	}
}

func TestDetachFromTarget(t *testing.T) {
	t.Parallel()
	for _, by := range []string{"sessionId", "targetId"} {
		t.Run(by, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			e := h.ext(fakeext.Options{Tabs: twoTabs})
			c := h.client()
			h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true})
			if !e.Attached(1) {
				t.Fatal("tab 1 not attached")
			}
			from := len(c.Messages())
			params := map[string]any{"sessionId": "pw-tab-1"}
			if by == "targetId" {
				params = map[string]any{"targetId": tid(1)}
			}
			id := h.send(c, "", "Target.detachFromTarget", params)
			m, at := h.reply(c, id)
			mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"result":{}}`, id))
			msgs := c.Messages()[from:at]
			if len(msgs) != 1 {
				t.Fatalf("before the reply: %s", describe(msgs))
			}
			mustMatch(t, msgs[0].Raw, detachedEvent("pw-tab-1", 1))
			// The reply means the debugger is off the tab: the infobar goes.
			if e.Attached(1) {
				t.Error("the debugger is still attached")
			}
			m = h.callMsg(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
			mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":"pw-tab-1","error":{"code":-32001,"message":"Session with given id not found."}}`, *m.ID))
			// A session is never handed out twice.
			res := h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true})
			mustMatch(t, res, `{"sessionId":"pw-tab-2"}`)
		})
	}
}

func TestActivateTarget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	before := len(e.Commands())
	res := h.call(c, "", "Target.activateTarget", map[string]any{"targetId": tid(2)})
	mustMatch(t, res, `{}`)
	cmds := commandsSince(e, before)
	if len(cmds) != 1 || cmds[0].Method != "chrome.tabs.update" {
		t.Fatalf("commands: %+v", cmds)
	}
	mustMatch(t, cmds[0].Params, `[2,{"active":true}]`)
	if tabs := e.Tabs(); !tabs[1].Active || tabs[0].Active {
		t.Errorf("tabs: %+v", tabs)
	}
}

func TestBrowserContexts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	m := h.callMsg(c, "", "Target.createBrowserContext", map[string]any{"disposeOnDetach": true})
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"error":{"code":-32000,"message":"<any>"}}`, *m.ID))
	if !strings.Contains(m.Error.Message, "browser.contexts()[0]") {
		t.Errorf("the error does not say what to do instead: %q", m.Error.Message)
	}
	res := h.call(c, "", "Target.getBrowserContexts", nil)
	mustMatch(t, res, `{"browserContextIds":[]}`)
	if cmds := e.Commands(); len(cmds) != 0 {
		t.Errorf("forwarded: %+v", cmds)
	}
}

func TestUnsupportedBrowserLevelMethods(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	h.autoAttach(c)
	before := len(e.Commands())
	tests := []struct{ session, method string }{
		{"", "Browser.crash"},
		{"", "Browser.close"},
		{"", "Browser.grantPermissions"},
		{"pw-tab-1", "Browser.getHistograms"},
		{"", "Target.exposeDevToolsProtocol"},
	}
	for _, tt := range tests {
		m := h.callMsg(c, tt.session, tt.method, map[string]any{})
		sess := ""
		if tt.session != "" {
			sess = fmt.Sprintf(`"sessionId":%q,`, tt.session)
		}
		mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,%s"error":{"code":-32601,"message":"cdprelay: '%s' is not available through the extension"}}`, *m.ID, sess, tt.method))
	}
	if got := commandsSince(e, before); len(got) != 0 {
		t.Errorf("forwarded: %+v", got)
	}
}
