package relay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// A tab on a page that is never shared (a file, a browser or extension
// page) is not attached at all; a tab that goes to one is blind: the
// client may only navigate it away, and sees nothing of it but its origin.
func TestBlindTabOnPageNeverShared(t *testing.T) {
	for _, url := range []string{"file:///etc/passwd", "chrome-extension://abcdefghijklmnopabcdefghijklmnop/connect.html", "chrome://version/", "devtools://devtools/bundled/x.html", "data:text/html,hi", "view-source:https://a.example/"} {
		t.Run(url, func(t *testing.T) {
			h := newHarness(t, config.Config{})
			e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: url, Title: "secret title"}, {ID: 2, URL: "https://b.example/", Title: "B"}}})
			c := h.client()
			if got := h.autoAttach(c); len(got) != 1 {
				t.Fatalf("announced %v", got)
			}
			m := h.callMsg(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true})
			if m.Error == nil || !strings.Contains(m.Error.Message, "never shared") {
				t.Fatalf("attaching it: %s", m.Raw)
			}
			if e.Attached(1) {
				t.Fatal("the debugger is attached to it")
			}
			res := h.call(c, "", "Target.getTargets", nil)
			for _, m := range append(c.Messages(), cdptest.Message{Raw: res}) {
				if strings.Contains(string(m.Raw), "secret title") || strings.Contains(string(m.Raw), "passwd") || strings.Contains(string(m.Raw), "connect.html") || strings.Contains(string(m.Raw), "bundled") {
					t.Fatalf("the client was told: %s", m.Raw)
				}
			}

			// Tab 2 goes there: the relay lets go of it at once, before
			// the page commits, and nothing of it reaches the client.
			sess := "pw-tab-1"
			h.call(c, sess, "Page.enable", nil)
			from := len(c.Messages())
			before := len(e.Commands())
			e.Event(2, "", "Page.frameStartedNavigating", map[string]any{"frameId": tid(2), "url": url, "loaderId": "L2", "navigationType": "differentDocument"})
			h.event(c, from, "Target.detachedFromTarget")
			h.waitFor("the relay detaches the tab", func() bool { return !e.Attached(2) })
			e.Navigate(2, url, "secret title")
			m = h.callMsg(c, sess, "Runtime.evaluate", map[string]any{"expression": "document.body.innerText"})
			if m.Error == nil {
				t.Fatalf("evaluate after letting go: %s", m.Raw)
			}
			for _, cmd := range commandsSince(e, before) {
				if cmd.Method == "chrome.debugger.sendCommand" {
					t.Errorf("a command reached the tab: %s", cmd.Params)
				}
			}
			for _, m := range c.Messages() {
				if strings.Contains(string(m.Raw), "secret title") {
					t.Fatalf("told the client: %s", m.Raw)
				}
			}
		})
	}
}

// hostsFence fences navigation to "outside.example".
type hostsFence struct{}

func (hostsFence) Command(string, string, []byte) core.Decision { return core.Decision{} }
func (h hostsFence) MethodURL(p, _, url string, found bool) core.Decision {
	if !found {
		return core.Decision{}
	}
	return h.URL(p, url)
}
func (hostsFence) URL(_, url string) core.Decision {
	if strings.Contains(url, "outside.example") {
		return core.Decision{Verdict: core.Deny, Rule: "url:host-not-allowed", Message: "Denied by cdprelay policy: host outside.example is not in the allowed hosts"}
	}
	return core.Decision{}
}
func (hostsFence) FencesNavigation(string) bool { return true }
func (hostsFence) UploadDirs(string) []string   { return nil }

// A tab that arrives outside the URL fence without a request the backstop
// could stop (a page restored from the back/forward cache) is blind: the
// client keeps its session, sees the origin only, and may navigate back.
func TestBlindOutsideTheFence(t *testing.T) {
	h := newHarness(t, config.Config{Policy: hostsFence{}})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Page.enable", nil)
	h.call(c, sess, "Runtime.enable", nil)
	from := len(c.Messages())
	e.Navigate(1, "https://outside.example/inbox?secret=1", "Secret inbox")
	nav, _ := h.event(c, from, "Page.frameNavigated")
	if strings.Contains(string(nav.Raw), "secret") || !strings.Contains(string(nav.Raw), `"url":"https://outside.example/"`) {
		t.Fatalf("frameNavigated %s", nav.Raw)
	}
	h.event(c, from, "Runtime.executionContextCreated")
	h.event(c, from, "CDPRelay.accessChanged")
	before := len(e.Commands())
	for _, method := range []string{"Runtime.evaluate", "Page.captureScreenshot", "DOM.getDocument", "Input.dispatchMouseEvent"} {
		m := h.callMsg(c, sess, method, map[string]any{"expression": "document.body.innerText"})
		if refusal(m) == "" || !strings.Contains(refusal(m), "outside the hosts") {
			t.Errorf("%s on a blind tab: %s", method, m.Raw)
		}
	}
	if got := commandsSince(e, before); len(got) != 0 {
		t.Fatalf("reached the tab: %v", got)
	}
	// The frame tree the client may see is the origin's.
	tree := h.call(c, sess, "Page.getFrameTree", nil)
	if strings.Contains(string(tree), "secret") || strings.Contains(string(tree), "inbox") {
		t.Fatalf("frame tree %s", tree)
	}
	e.Event(1, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{map[string]any{"type": "string", "value": "page text"}}})
	if m := h.callMsg(c, sess, "Page.navigate", map[string]any{"url": "https://outside.example/other"}); m.Error == nil {
		t.Fatalf("navigating within the outside host: %s", m.Raw)
	}
	if m := h.callMsg(c, sess, "Page.navigate", map[string]any{"url": "https://a.example/"}); m.Error != nil {
		t.Fatalf("navigating back: %s", m.Raw)
	}
	from = len(c.Messages())
	e.Navigate(1, "https://a.example/", "A")
	cleared, at := h.event(c, from, "Runtime.executionContextsCleared")
	if _, navAt := h.event(c, from, "Page.frameNavigated"); navAt < at {
		t.Fatalf("the contexts were cleared (%s) after the page changed", cleared.Raw)
	}
	if m := h.callMsg(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"}); m.Error != nil {
		t.Fatalf("evaluate after leaving: %s", m.Raw)
	}
	for _, m := range c.Messages() {
		if strings.Contains(string(m.Raw), "page text") || strings.Contains(string(m.Raw), "Secret inbox") || strings.Contains(string(m.Raw), "secret=1") {
			t.Fatalf("a blind tab's content reached the client: %s", m.Raw)
		}
	}
}

// When a tab goes blind, the reply of a command that was still running is
// withheld: it may have run in the new page.
func TestReplyAfterGoingBlindIsWithheld(t *testing.T) {
	hold, arrived := make(chan struct{}), make(chan struct{})
	h := newHarness(t, config.Config{Policy: hostsFence{}})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Gate: func(method string, args []json.RawMessage) {
		if method == "chrome.debugger.sendCommand" && len(args) > 2 && string(args[1]) == `"Runtime.evaluate"` && strings.Contains(string(args[2]), "secret") {
			close(arrived)
			<-hold
		}
	}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Page.enable", nil)
	h.call(c, sess, "Runtime.enable", nil)
	id := h.send(c, sess, "Runtime.evaluate", map[string]any{"expression": "secret"})
	<-arrived // the command is in the tab when the tab navigates
	from := len(c.Messages())
	e.Navigate(1, "https://outside.example/secret.txt", "secret.txt")
	// The client's page follows the tab to its origin only.
	nav, _ := h.event(c, from, "Page.frameNavigated")
	if strings.Contains(string(nav.Raw), "secret") || !strings.Contains(string(nav.Raw), `"url":"https://outside.example/"`) {
		t.Fatalf("frameNavigated %s", nav.Raw)
	}
	h.event(c, from, "Runtime.executionContextCreated")
	h.event(c, from, "CDPRelay.accessChanged")
	close(hold)
	m, _ := h.reply(c, id)
	if m.Error == nil || m.Result != nil {
		t.Fatalf("the reply of a command sent before the tab went blind: %s", m.Raw)
	}
	for _, m := range c.Messages()[from:] {
		if strings.Contains(string(m.Raw), "secret.txt") {
			t.Fatalf("told the client: %s", m.Raw)
		}
	}
	// Discovery names the origin only.
	res := h.call(c, "", "Target.getTargets", nil)
	if strings.Contains(string(res), "secret") {
		t.Fatalf("Target.getTargets: %s", res)
	}
}

// While a person holds a tab it is read-only for automation: reads pass
// (script with V8's side-effect check forced on), acts are refused.
func TestTakeOverIsReadOnly(t *testing.T) {
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Debugger.enable", nil)
	if err := h.srv.Default().TakeControl(1, "viewer-1"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method string
		params any
	}{
		{"Input.dispatchMouseEvent", map[string]any{"type": "mousePressed", "x": 1, "y": 1}},
		{"Input.insertText", map[string]any{"text": "x"}},
		{"Page.navigate", map[string]any{"url": "https://a.example/next"}},
		{"Page.reload", nil},
		{"Page.navigateToHistoryEntry", map[string]any{"entryId": 1}},
		{"DOM.setOuterHTML", map[string]any{"nodeId": 1, "outerHTML": "<p>x</p>"}},
		{"DOM.setAttributeValue", map[string]any{"nodeId": 1, "name": "a", "value": "b"}},
		{"Runtime.runScript", map[string]any{"scriptId": "1"}},
		{"Emulation.setDeviceMetricsOverride", map[string]any{"width": 1, "height": 1, "deviceScaleFactor": 1, "mobile": false}},
		{"Fetch.fulfillRequest", map[string]any{"requestId": "1", "responseCode": 200}},
		{"Fetch.continueRequest", map[string]any{"requestId": "1", "url": "https://a.example/x"}},
		{"Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "document.body.innerHTML = ''"}},
		{"Debugger.setBreakpointByUrl", map[string]any{"lineNumber": 0, "urlRegex": ".*", "condition": "fetch('/x')"}},
		{"Target.createTarget", map[string]any{"url": "about:blank"}},
	} {
		before := len(e.Commands())
		m := h.callMsg(c, sess, tc.method, tc.params)
		if m.Error == nil || !strings.Contains(m.Error.Message, "taken control") {
			t.Errorf("%s on a held tab: %s", tc.method, m.Raw)
		}
		if got := commandsSince(e, before); len(got) != 0 {
			t.Errorf("%s reached the tab: %v", tc.method, got)
		}
	}
	before := len(e.Commands())
	for _, tc := range []struct {
		method string
		params any
	}{
		{"DOM.getDocument", map[string]any{"depth": -1}},
		{"Page.captureScreenshot", nil},
		{"Accessibility.getFullAXTree", nil},
		{"Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "", "worldName": "util"}},
		{"Fetch.continueRequest", map[string]any{"requestId": "1"}},
	} {
		if m := h.callMsg(c, sess, tc.method, tc.params); m.Error != nil {
			t.Errorf("%s on a held tab: %s", tc.method, m.Raw)
		}
	}
	h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "document.title", "throwOnSideEffect": false})
	var sent []string
	for _, cmd := range commandsSince(e, before) {
		sent = append(sent, string(cmd.Params))
	}
	last := sent[len(sent)-1]
	if !strings.Contains(last, `"throwOnSideEffect":true`) || strings.Contains(last, `"throwOnSideEffect":false`) {
		t.Fatalf("script on a held tab went as %s", last)
	}
	// Handing back restores full access.
	if err := h.srv.Default().ReleaseControl(1, "viewer-1"); err != nil {
		t.Fatal(err)
	}
	if m := h.callMsg(c, sess, "Input.insertText", map[string]any{"text": "x"}); m.Error != nil {
		t.Fatalf("input after hand-back: %s", m.Raw)
	}
}

// On a blind tab the client's own request interception sees nothing, and
// the page's requests go on as it made them.
func TestBlindTabRequestsContinue(t *testing.T) {
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "file:///x"}}})
	c := h.client()
	h.autoAttach(c)
	before := len(e.Commands())
	e.Event(1, "", "Fetch.requestPaused", map[string]any{"requestId": "R1", "request": map[string]any{"url": "file:///y"}, "resourceType": "Document"})
	h.waitFor("the relay continues the paused request", func() bool {
		for _, cmd := range commandsSince(e, before) {
			if strings.Contains(string(cmd.Params), "Fetch.continueRequest") && strings.Contains(string(cmd.Params), "R1") {
				return true
			}
		}
		return false
	})
	for _, m := range c.Messages() {
		if m.Method == "Fetch.requestPaused" {
			t.Fatalf("the client saw %s", m.Raw)
		}
	}
}

// refusal is the message a command was refused with: its error's, or, for
// script, the exception it was answered with ("" when it went through).
func refusal(m cdptest.Message) string {
	if m.Error != nil {
		return m.Error.Message
	}
	var r struct {
		ExceptionDetails *struct {
			Exception struct{ Description string }
		}
	}
	if json.Unmarshal(m.Result, &r) == nil && r.ExceptionDetails != nil && strings.Contains(r.ExceptionDetails.Exception.Description, "cdprelay: ") {
		return r.ExceptionDetails.Exception.Description
	}
	return ""
}

// A tab the automation opened is its own to close, except while a person
// holds it: then it is theirs until they hand it back.
func TestTakeOverHeldTabNotClosed(t *testing.T) {
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	h.autoAttach(c)
	from := len(c.Messages())
	target := jsonString(t, h.call(c, "", "Target.createTarget", map[string]any{"url": "about:blank"}), "targetId")
	h.event(c, from, "Target.attachedToTarget")
	var tabID int64
	for _, tab := range h.srv.Default().Status().Tabs {
		if tab.TargetID == target {
			tabID = tab.TabID
		}
	}
	if tabID == 0 {
		t.Fatalf("no tab for target %s", target)
	}
	if err := h.srv.Default().TakeControl(tabID, "viewer-1"); err != nil {
		t.Fatal(err)
	}
	before := len(e.Commands())
	if m := h.callMsg(c, "", "Target.closeTarget", map[string]any{"targetId": target}); m.Error == nil || !strings.Contains(m.Error.Message, "taken control") {
		t.Fatalf("closing a held tab: %s", m.Raw)
	}
	for _, cmd := range commandsSince(e, before) {
		if cmd.Method == "chrome.tabs.remove" {
			t.Fatal("the held tab was removed")
		}
	}
	if err := h.srv.Default().ReleaseControl(tabID, "viewer-1"); err != nil {
		t.Fatal(err)
	}
	if m := h.callMsg(c, "", "Target.closeTarget", map[string]any{"targetId": target}); m.Error != nil {
		t.Fatalf("closing it once handed back: %s", m.Raw)
	}
}
