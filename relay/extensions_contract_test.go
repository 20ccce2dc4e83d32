package relay

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay/internal/config"
)

// The key contract, against our extension and the stock one: a client sees
// the same browser through either.

func TestBothExtensionsGetVersion(t *testing.T) {
	t.Parallel()
	for _, x := range extensions {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			h.ext(x.with(fakeext.Options{Tabs: twoTabs}))
			c := h.client()
			// Playwright's first command, before anything is attached: the
			// stock extension's browser was learnt from a tab during the
			// handshake.
			res := h.call(c, "", "Browser.getVersion", nil)
			mustMatch(t, res, fmt.Sprintf(`{"protocolVersion":"1.3","product":%q,"revision":"","userAgent":%q,"jsVersion":""}`, fakeProduct, fakeUA))
			code, body := h.get("/json/version", "")
			if code != 200 {
				t.Fatalf("status %d", code)
			}
			var v map[string]string
			mustDecode(t, body, &v)
			if v["Browser"] != fakeProduct || v["User-Agent"] != fakeUA {
				t.Errorf("/json/version: %v", v)
			}
		})
	}
}

func TestBothExtensionsTargets(t *testing.T) {
	t.Parallel()
	for _, x := range extensions {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			e := h.ext(x.with(fakeext.Options{Tabs: twoTabs}))
			c := h.client()

			// Before any attach: the tabs are targets with their real ids.
			res := h.call(c, "", "Target.getTargets", nil)
			mustMatch(t, res, `{"targetInfos":[`+unattachedInfo(1, "https://a.example/", "A")+","+unattachedInfo(2, "https://b.example/", "B")+`]}`)
			id := h.send(c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
			_, at := h.reply(c, id)
			if at != 2 {
				t.Fatalf("targetCreated before the reply: %s", describe(c.Messages()))
			}

			sessions := h.autoAttach(c)
			if len(sessions) != 2 {
				t.Fatalf("announced %v", sessions)
			}
			for i, m := range c.Events("Target.attachedToTarget") {
				mustMatch(t, m.Raw, attachedEvent(sessions[i], pageInfo(i+1, []string{"https://a.example/", "https://b.example/"}[i], []string{"A", "B"}[i], true)))
			}

			// A navigation: the stock extension reports nothing, the relay
			// follows the tab's own events.
			from := len(c.Messages())
			e.Navigate(1, "https://a.example/next", "A2")
			h.waitForMessage(c, from, `{"method":"Target.targetInfoChanged","params":{"targetInfo":`+pageInfo(1, "https://a.example/next", "A2", true)+`}}`)

			// A tab the person adds and one the person closes.
			from = len(c.Messages())
			e.OpenTab(fakeext.Tab{URL: "https://later.example/", Title: "L"})
			created, i := h.event(c, from, "Target.targetCreated")
			mustMatch(t, created.Raw, `{"method":"Target.targetCreated","params":{"targetInfo":`+unattachedInfo(101, "https://later.example/", "L")+`}}`)
			attached, j := h.event(c, from, "Target.attachedToTarget")
			if j < i {
				t.Errorf("attached before created: %s", describe(c.Messages()[from:]))
			}
			mustMatch(t, attached.Raw, attachedEvent("pw-tab-3", pageInfo(101, "https://later.example/", "L", true)))
			h.call(c, "pw-tab-3", "Runtime.evaluate", map[string]any{"expression": "1"})

			from = len(c.Messages())
			e.CloseTab(2)
			d, _ := h.event(c, from, "Target.detachedFromTarget")
			mustMatch(t, d.Raw, detachedEvent(sessions[1], 2))
			g, _ := h.event(c, from, "Target.targetDestroyed")
			mustMatch(t, g.Raw, fmt.Sprintf(`{"method":"Target.targetDestroyed","params":{"targetId":%q}}`, tid(2)))

			// The client's own tabs.
			from = len(c.Messages())
			id = h.send(c, "", "Target.createTarget", map[string]any{"url": "https://new.example/"})
			m, at := h.reply(c, id)
			mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"result":{"targetId":%q}}`, id, tid(102)))
			if ev := c.Events("Target.attachedToTarget"); len(ev) == 0 || ev[len(ev)-1].SessionID != "" {
				t.Fatalf("no attachedToTarget: %s", describe(c.Messages()[from:at]))
			}
			res = h.call(c, "", "Target.activateTarget", map[string]any{"targetId": tid(102)})
			mustMatch(t, res, `{}`)
			res = h.call(c, "", "Target.closeTarget", map[string]any{"targetId": tid(102)})
			mustMatch(t, res, `{"success":true}`)
		})
	}
}

func TestBothExtensionsActivateUnattachedTab(t *testing.T) {
	t.Parallel()
	for _, x := range extensions {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			e := h.ext(x.with(fakeext.Options{Tabs: twoTabs}))
			c := h.client()
			h.ready()
			before := len(e.Commands())
			res := h.call(c, "", "Target.activateTarget", map[string]any{"targetId": tid(2)})
			mustMatch(t, res, `{}`)
			var methods []string
			for _, cmd := range commandsSince(e, before) {
				m := cmd.Method
				if m == "extension.acceptBatches" {
					continue // the connection's own, whenever it reaches the fake
				}
				if m == "chrome.debugger.sendCommand" {
					var args []json.RawMessage
					mustDecode(t, string(cmd.Params), &args)
					m += " " + string(args[1])
				}
				methods = append(methods, m)
			}
			want := "[chrome.tabs.update]"
			if x.stock {
				// No chrome.tabs.update in the stock extension: the tab
				// brings itself to the front.
				want = `[chrome.tabs.update chrome.debugger.attach chrome.debugger.sendCommand "Target.getTargetInfo" chrome.debugger.sendCommand "Page.enable" chrome.debugger.sendCommand "Debugger.enable" chrome.debugger.sendCommand "Debugger.setBreakpointsActive" chrome.debugger.sendCommand "Runtime.enable" chrome.debugger.sendCommand "Page.getFrameTree" chrome.debugger.sendCommand "Page.getNavigationHistory" chrome.debugger.sendCommand "Page.bringToFront"]`
			}
			if got := fmt.Sprint(methods); got != want {
				t.Errorf("commands %s, want %s", got, want)
			}
		})
	}
}

// unattachedInfo is the pattern of a tab's TargetInfo before it is
// attached: its context is the instance's default until Chrome names it.
func unattachedInfo(id int, url, title string) string {
	return fmt.Sprintf(`{"targetId":%q,"type":"page","title":%q,"url":%q,"attached":false,"canAccessOpener":false,"browserContextId":"<any>"}`, tid(id), title, url)
}

// ready waits until the default instance's extension has finished its
// handshake, learning included.
func (h *harness) ready() {
	h.t.Helper()
	if err := h.srv.Default().WaitReady(h.ctx); err != nil {
		h.t.Fatal(err)
	}
}

// waitForMessage waits for a message from index from on that matches the
// pattern want.
func (h *harness) waitForMessage(c *cdptest.Client, from int, want string) cdptest.Message {
	h.t.Helper()
	m, _, err := c.WaitMessage(h.ctx, from, func(m cdptest.Message) bool { return matchJSON(m.Raw, want) == nil })
	if err != nil {
		h.t.Fatalf("waiting for %s: %v (messages so far: %s)", want, err, describe(c.Messages()[from:]))
	}
	return m
}
