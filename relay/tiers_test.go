package relay

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// tierPolicy allows every method and gives the hosts it lists a tier.
type tierPolicy map[string]string

func (tierPolicy) Command(string, string, []byte) core.Decision         { return core.Decision{} }
func (tierPolicy) MethodURL(string, string, string, bool) core.Decision { return core.Decision{} }
func (tierPolicy) URL(string, string) core.Decision                     { return core.Decision{} }
func (tierPolicy) FencesNavigation(string) bool                         { return false }
func (tierPolicy) UploadDirs(string) []string                           { return nil }
func (p tierPolicy) HasTiers(string) bool                               { return len(p) > 0 }
func (p tierPolicy) Tier(_, raw string) (tier, rule, host string) {
	u, err := url.Parse(raw)
	if err != nil {
		return "blind", "tier:unparsable", raw
	}
	if t := p[u.Hostname()]; t != "" {
		return t, "tier:" + t, u.Hostname()
	}
	return "full", "", u.Hostname()
}

var tiers = tierPolicy{"ro.example": "read-only", "blind.example": "blind"}

// What a read-only site lets automation do: read, not act.
var (
	actCalls = []struct {
		method string
		params any
	}{
		{"Input.dispatchMouseEvent", map[string]any{"type": "mousePressed", "x": 1, "y": 1}},
		{"Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "key": "Enter"}},
		{"Input.insertText", map[string]any{"text": "x"}},
		{"Page.navigate", map[string]any{"url": "https://a.example/"}},
		{"Page.reload", nil},
		{"DOM.setOuterHTML", map[string]any{"nodeId": 1, "outerHTML": "<p>x</p>"}},
		{"Runtime.compileScript", map[string]any{"expression": "1", "sourceURL": "", "persistScript": true}},
		{"Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "fetch('/x')"}},
		{"Fetch.fulfillRequest", map[string]any{"requestId": "1", "responseCode": 200}},
		{"Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{"X": "1"}}},
	}
	readCalls = []struct {
		method string
		params any
	}{
		{"DOM.getDocument", map[string]any{"depth": -1}},
		{"Page.captureScreenshot", nil},
		{"Accessibility.getFullAXTree", nil},
		{"Page.getFrameTree", nil},
	}
)

func TestTierReadOnlySite(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ro.example/account", Title: "Account"}}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	for _, tc := range actCalls {
		before := len(e.Commands())
		m := h.callMsg(c, sess, tc.method, tc.params)
		if m.Error == nil || !strings.Contains(m.Error.Message, "read-only") || !strings.Contains(m.Error.Message, "ro.example") {
			t.Errorf("%s on a read-only site: %s", tc.method, m.Raw)
		}
		if got := commandsSince(e, before); len(got) != 0 {
			t.Errorf("%s reached the tab: %v", tc.method, got)
		}
	}
	for _, tc := range readCalls {
		if m := h.callMsg(c, sess, tc.method, tc.params); m.Error != nil {
			t.Errorf("%s on a read-only site: %s", tc.method, m.Raw)
		}
	}
	// Script may run, with V8's side-effect check forced on.
	before := len(e.Commands())
	h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "document.title"})
	sent := commandsSince(e, before)
	if len(sent) != 1 || !strings.Contains(string(sent[0].Params), `"throwOnSideEffect":true`) {
		t.Fatalf("script on a read-only site went as %v", sent)
	}

	// A further session on the tab is held to the same.
	ns := h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true})
	other := jsonString(t, ns, "sessionId")
	if m := h.callMsg(c, other, "Input.insertText", map[string]any{"text": "x"}); m.Error == nil {
		t.Fatalf("input through a further session: %s", m.Raw)
	}

	// The person takes the tab to a site with full access: so has the
	// automation, and is told.
	from := len(c.Messages())
	e.Navigate(1, "https://a.example/", "A")
	ev, _ := h.event(c, from, "CDPRelay.accessChanged")
	if !strings.Contains(string(ev.Raw), `"access":"full"`) {
		t.Fatalf("access changed: %s", ev.Raw)
	}
	if m := h.callMsg(c, sess, "Input.insertText", map[string]any{"text": "x"}); m.Error != nil {
		t.Fatalf("input on a full site: %s", m.Raw)
	}
	// And may not navigate to the read-only one? It may: reading is
	// allowed there; acting is what it may not.
	if m := h.callMsg(c, sess, "Page.navigate", map[string]any{"url": "https://ro.example/"}); m.Error != nil {
		t.Fatalf("navigating to a read-only site: %s", m.Raw)
	}
	// From the command on, the tab is on its way there, and as strict.
	if got := h.srv.Default().Status().Tabs[0].Access; got != "read-only" {
		t.Fatalf("status access %q", got)
	}
}

func TestTierBlindSite(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/inbox?q=secret", Title: "Inbox (3) secret"}, {ID: 2, URL: "https://a.example/", Title: "A"}}})
	c := h.client()
	h.autoAttach(c)
	res := h.call(c, "", "Target.getTargets", nil)
	if strings.Contains(string(res), "secret") || strings.Contains(string(res), "inbox") || !strings.Contains(string(res), "https://blind.example") {
		t.Fatalf("discovery of a blind tab: %s", res)
	}
	if got := h.srv.Default().Status().Tabs; got[0].Access != "blind" || strings.Contains(got[0].URL+got[0].Title, "secret") {
		t.Fatalf("status %+v", got[0])
	}
	ns := h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true})
	sess := jsonString(t, ns, "sessionId")
	before := len(e.Commands())
	for _, tc := range append(append(actCalls[:3:3], readCalls[:3]...), struct {
		method string
		params any
	}{"Runtime.evaluate", map[string]any{"expression": "document.body.innerText"}}) {
		m := h.callMsg(c, sess, tc.method, tc.params)
		if !strings.Contains(refusal(m), "blind") {
			t.Errorf("%s on a blind site: %s", tc.method, m.Raw)
		}
	}
	for _, cmd := range commandsSince(e, before) {
		if strings.Contains(string(cmd.Params), "Runtime") || strings.Contains(string(cmd.Params), "Input") || strings.Contains(string(cmd.Params), "DOM") {
			t.Errorf("reached the tab: %s", cmd.Params)
		}
	}
	// The automation may not close the person's tab, but may leave it.
	if m := h.callMsg(c, "", "Target.closeTarget", map[string]any{"targetId": tid(1)}); m.Error == nil {
		t.Fatalf("closing the person's blind tab: %s", m.Raw)
	}
	if m := h.callMsg(c, "", "Target.activateTarget", map[string]any{"targetId": tid(1)}); m.Error == nil {
		t.Fatalf("bringing a blind tab to the front: %s", m.Raw)
	}
	// It may not navigate a tab it can see into a blind site.
	s2 := h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(2), "flatten": true})
	if m := h.callMsg(c, jsonString(t, s2, "sessionId"), "Page.navigate", map[string]any{"url": "https://blind.example/"}); m.Error == nil || !strings.Contains(m.Error.Message, "blind") {
		t.Fatalf("navigating into a blind site: %s", m.Raw)
	}
	if m := h.callMsg(c, sess, "Page.navigate", map[string]any{"url": "https://a.example/"}); m.Error != nil {
		t.Fatalf("navigating away: %s", m.Raw)
	}
	for _, m := range c.Messages() {
		if strings.Contains(string(m.Raw), "secret") {
			t.Fatalf("the client was told: %s", m.Raw)
		}
	}
}

// A tab the automation opened, gone blind, is the automation's to close.
func TestTierBlindTabOpenedByClientMayClose(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	h.autoAttach(c)
	from := len(c.Messages())
	res := h.call(c, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	target := jsonString(t, res, "targetId")
	h.event(c, from, "Target.attachedToTarget")
	var id int
	for _, tab := range e.Tabs() {
		if tid(tab.ID) == target {
			id = tab.ID
		}
	}
	e.Navigate(id, "https://blind.example/", "B")
	h.waitFor("the tab goes blind", func() bool {
		for _, ts := range h.srv.Default().Status().Tabs {
			if ts.TargetID == target {
				return ts.Access == "blind"
			}
		}
		return false
	})
	if m := h.callMsg(c, "", "Target.closeTarget", map[string]any{"targetId": target}); m.Error != nil {
		t.Fatalf("closing a tab it opened: %s", m.Raw)
	}
}

// Out-of-process frames are judged by their own site: a blind one is not
// even announced, a read-only one may be read, and one that goes blind
// falls silent.
func TestTierChildFrames(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	frame := func(sid, u string) {
		e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": sid, "waitingForDebugger": true,
			"targetInfo": map[string]any{"targetId": "F-" + sid, "type": "iframe", "url": u, "title": "", "attached": true}})
	}
	before := len(e.Commands())
	from := len(c.Messages())
	frame("S-BLIND", "https://blind.example/widget?token=secret")
	frame("S-EXT", "chrome-extension://abcdefghijklmnopabcdefghijklmnop/inline-menu.html")
	frame("S-RO", "https://ro.example/embed")
	h.event(c, from, "Target.attachedToTarget")
	h.waitFor("the relay resumes the frames the client does not see", func() bool {
		n := 0
		for _, cmd := range commandsSince(e, before) {
			if strings.Contains(string(cmd.Params), "runIfWaitingForDebugger") {
				n++
			}
		}
		return n == 2
	})
	for _, m := range c.Messages()[from:] {
		if strings.Contains(string(m.Raw), "S-BLIND") || strings.Contains(string(m.Raw), "S-EXT") || strings.Contains(string(m.Raw), "secret") {
			t.Fatalf("the client heard of a frame it may not see: %s", m.Raw)
		}
	}
	if m := h.callMsg(c, "S-BLIND", "Runtime.evaluate", map[string]any{"expression": "document.cookie"}); refusal(m) == "" {
		t.Fatalf("evaluate in a blind frame: %s", m.Raw)
	}
	if m := h.callMsg(c, "S-EXT", "Runtime.evaluate", map[string]any{"expression": "chrome.storage"}); refusal(m) == "" {
		t.Fatalf("evaluate in an extension's frame: %s", m.Raw)
	}
	if m := h.callMsg(c, "S-RO", "Input.dispatchMouseEvent", map[string]any{"type": "mousePressed", "x": 1, "y": 1}); m.Error == nil || !strings.Contains(m.Error.Message, "read-only") {
		t.Fatalf("input in a read-only frame: %s", m.Raw)
	}
	if m := h.callMsg(c, "S-RO", "DOM.getDocument", nil); m.Error != nil {
		t.Fatalf("reading a read-only frame: %s", m.Raw)
	}
	// The read-only frame navigates to a blind site: nothing more of it.
	e.Event(1, "S-RO", "Page.frameNavigated", map[string]any{"frame": map[string]any{"id": "F-S-RO", "url": "https://blind.example/x?secret", "loaderId": "L", "securityOrigin": "https://blind.example", "mimeType": "text/html"}})
	h.waitFor("the frame goes blind", func() bool {
		m := h.callMsg(c, "S-RO", "DOM.getDocument", nil)
		return m.Error != nil
	})
	e.Event(1, "S-RO", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{map[string]any{"type": "string", "value": "secret text"}}})
	h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"}) // a round trip after the event
	for _, m := range c.Messages() {
		if strings.Contains(string(m.Raw), "secret") {
			t.Fatalf("the client was told: %s", m.Raw)
		}
	}
	// The tab itself stays full to read, but input could land in the
	// blind frame (where the pointer or the focus is): refused, saying so.
	if m := h.callMsg(c, sess, "Input.insertText", map[string]any{"text": "x"}); m.Error == nil || !strings.Contains(m.Error.Message, "could reach it") {
		t.Fatalf("input in the tab: %s", m.Raw)
	}
	if m := h.callMsg(c, sess, "DOM.getDocument", nil); m.Error != nil {
		t.Fatalf("reading the tab: %s", m.Raw)
	}
}

// A frame that shares the tab's process has no session of its own: the
// tab's session reaches into it, so the tab is as strict as its strictest
// such frame, while the frame is there.
func TestTierInProcessFrame(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Page.enable", nil)
	from := len(c.Messages())
	e.Event(1, "", "Page.frameNavigated", map[string]any{"frame": map[string]any{"id": "SUB", "parentId": tid(1), "url": "https://blind.example/embed?secret", "loaderId": "L", "securityOrigin": "https://blind.example", "mimeType": "text/html"}, "type": "Navigation"})
	ev, _ := h.event(c, from, "CDPRelay.accessChanged")
	if !strings.Contains(string(ev.Raw), `"access":"blind"`) {
		t.Fatalf("access changed: %s", ev.Raw)
	}
	if m := h.callMsg(c, sess, "DOM.getDocument", map[string]any{"depth": -1, "pierce": true}); m.Error == nil {
		t.Fatalf("reading a tab with a blind frame in it: %s", m.Raw)
	}
	from = len(c.Messages())
	e.Event(1, "", "Page.frameDetached", map[string]any{"frameId": "SUB", "reason": "remove"})
	ev, _ = h.event(c, from, "CDPRelay.accessChanged")
	if !strings.Contains(string(ev.Raw), `"access":"full"`) {
		t.Fatalf("access changed: %s", ev.Raw)
	}
	if m := h.callMsg(c, sess, "DOM.getDocument", nil); m.Error != nil {
		t.Fatalf("reading once the frame is gone: %s", m.Raw)
	}
	for _, m := range c.Messages() {
		if strings.Contains(string(m.Raw), "secret") {
			t.Fatalf("the client was told: %s", m.Raw)
		}
	}
}

// Changing the tiers (a reload) decides every tab's access again.
func TestTierPolicyChange(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tierPolicy{}})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	from := len(c.Messages())
	h.srv.SetPolicy(tierPolicy{"a.example": "read-only"})
	ev, _ := h.event(c, from, "CDPRelay.accessChanged")
	if !strings.Contains(string(ev.Raw), `"access":"read-only"`) {
		t.Fatalf("access changed: %s", ev.Raw)
	}
	before := len(e.Commands())
	if m := h.callMsg(c, sess, "Input.insertText", map[string]any{"text": "x"}); m.Error == nil {
		t.Fatalf("input after the tab became read-only: %s", m.Raw)
	}
	// (The backstop the new tiers turn on may be enabling meanwhile.)
	for _, cmd := range commandsSince(e, before) {
		if strings.Contains(string(cmd.Params), "Input.insertText") {
			t.Fatalf("reached the tab: %s", cmd.Params)
		}
	}
}

func jsonString(t *testing.T, raw []byte, key string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	s, _ := m[key].(string)
	if s == "" {
		t.Fatalf("no %s in %s", key, raw)
	}
	return s
}

// The live view sees no more of a blind tab than automation does: no
// frames, no input, no take-over.
func TestTierBlindHiddenFromLiveView(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/", Title: "B"}}})
	in := h.srv.Default()
	h.waitFor("the tab", func() bool { s := in.Status(); return s.Ready && len(s.Tabs) == 1 })
	th, err := OpenTab(context.Background(), in, 1, func(api.TabEvent) {})
	if err != nil {
		t.Fatal(err)
	}
	defer th.Close()
	before := len(e.Commands())
	if _, err := th.Call(context.Background(), "Input.dispatchMouseEvent", map[string]any{"type": "mousePressed", "x": 1, "y": 1}); err == nil || !strings.Contains(err.Error(), "hidden") {
		t.Fatalf("input from the live view: %v", err)
	}
	if _, err := th.Call(context.Background(), "Page.captureScreenshot", nil); err == nil {
		t.Fatal("a screenshot for the live view")
	}
	// (The relay's own attach of the tab may be going on meanwhile.)
	for _, s := range sentOn(e, before) {
		if strings.HasPrefix(s, "Input.") || strings.HasPrefix(s, "Page.captureScreenshot") {
			t.Fatalf("reached the tab: %s", s)
		}
	}
	if err := in.TakeControl(1, "viewer-1"); !errors.Is(err, api.ErrHidden) {
		t.Fatalf("take-over: %v", err)
	}
	if _, err := th.Call(context.Background(), "Page.startScreencast", map[string]any{"format": "jpeg"}); err != nil {
		t.Fatalf("starting the screencast: %v", err)
	}
}

// A frame on its way to a blind site: from the first event that says so,
// nothing about it reaches the client (its navigation's events on the
// parent's session, by frame or by request), the session Chrome attaches
// for it is not announced even though its target still shows no URL, and
// the page's pixels are refused.
func TestTierFrameOnItsWayToBlind(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	from := len(c.Messages())
	e.Event(1, "", "Page.frameStartedNavigating", map[string]any{"frameId": "F1", "url": "https://a.example/hop", "loaderId": "R1", "navigationType": "differentDocument"})
	e.Event(1, "", "Network.requestWillBeSent", map[string]any{"requestId": "R1", "loaderId": "R1", "frameId": "F1", "type": "Document",
		"request": map[string]any{"url": "https://a.example/hop"}})
	// Redirected to the blind site.
	e.Event(1, "", "Network.requestWillBeSent", map[string]any{"requestId": "R1", "loaderId": "R1", "frameId": "F1", "type": "Document",
		"request": map[string]any{"url": "https://blind.example/inbox?secret2"}, "redirectResponse": map[string]any{"status": 302}})
	e.Event(1, "", "Network.responseReceivedExtraInfo", map[string]any{"requestId": "R1", "headers": map[string]any{"x": "secret3"}})
	e.Event(1, "", "Page.frameStartedLoading", map[string]any{"frameId": "F1"})
	e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": "S-F1", "waitingForDebugger": true,
		"targetInfo": map[string]any{"targetId": "F1", "type": "iframe", "url": "", "title": "", "attached": true}})
	e.Event(1, "S-F1", "Runtime.executionContextCreated", map[string]any{"context": map[string]any{"id": 1, "name": "", "origin": "secret4"}})
	// A frame of a full site goes on as before.
	e.Event(1, "", "Page.frameStartedLoading", map[string]any{"frameId": "F2"})
	h.event(c, from, "Page.frameStartedLoading")
	// Its first request, to a full site, may be seen; nothing from the
	// redirect on.
	for _, m := range c.Messages()[from:] {
		if strings.Contains(string(m.Raw), "secret") || strings.Contains(string(m.Raw), "S-F1") || (m.Method == "Page.frameStartedLoading" && strings.Contains(string(m.Raw), `"F1"`)) {
			t.Errorf("the client heard of the frame on its way to the blind site: %s", m.Raw)
		}
	}
	if m := h.callMsg(c, sess, "Page.captureScreenshot", nil); m.Error == nil || !strings.Contains(m.Error.Message, "pixels") {
		t.Errorf("a screenshot of the page with the frame: %s", m.Raw)
	}
}

// What a hostile client tried through a real browser, each against the
// fake extension: a blind tab's own target info, a decoy context key on a
// read-only tab, storage named by origin, what a full page loaded from a
// blind site, and a redirect's Location to one.
func TestTierAgainstTheClientInABrowser(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{
		{ID: 1, URL: "https://a.example/", Title: "A"},
		{ID: 2, URL: "https://ro.example/", Title: "RO"},
		{ID: 3, URL: "https://blind.example/secret-path?q=secret1", Title: "secret2"},
	}})
	c := h.client()
	sessions := h.autoAttach(c)
	full, ro, blind := sessions[0], sessions[1], sessions[2]

	t.Run("a blind tab's own target info", func(t *testing.T) {
		before := len(e.Commands())
		m := h.callMsg(c, blind, "Target.getTargetInfo", nil)
		if m.Error != nil || strings.Contains(string(m.Raw), "secret") || !strings.Contains(string(m.Raw), "https://blind.example") {
			t.Errorf("Target.getTargetInfo on the blind tab: %s", m.Raw)
		}
		if indexOf(cdpSent(e, before), "Target.getTargetInfo") >= 0 {
			t.Error("it reached the tab")
		}
	})
	t.Run("a decoy context key", func(t *testing.T) {
		e.Event(2, "", "Runtime.executionContextCreated", map[string]any{"context": map[string]any{"id": 9, "name": "w", "origin": "https://ro.example",
			"auxData": map[string]any{"isDefault": false, "type": "isolated", "frameId": tid(2)}}})
		h.call(c, ro, "Target.getTargets", nil)
		time.Sleep(20 * time.Millisecond) // the event is routed
		for _, params := range []map[string]any{
			{"expression": "window.x = 1", "executionContextId": 9},
			{"functionDeclaration": "function(){ this.title = 'x' }", "objectId": "1.1.1", "contextId": 9},
			{"functionDeclaration": "function(){ this.title = 'x' }", "objectId": "1.9.1", "executionContextId": 1},
		} {
			method := "Runtime.evaluate"
			if params["functionDeclaration"] != nil {
				method = "Runtime.callFunctionOn"
			}
			before := len(e.Commands())
			m := h.callMsg(c, ro, method, params)
			sent := cdpSent(e, before)
			// Run under the side-effect check, or refused for naming a
			// context the relay cannot place (the tiers' contexts.go).
			forced := len(sent) == 1 && strings.Contains(sent[0], `"throwOnSideEffect":true`)
			refused := len(sent) == 0 && m.Error != nil
			if !forced && !refused {
				t.Errorf("%s %v went as %q: %s", method, params, sent, m.Raw)
			}
		}
	})
	t.Run("storage named by origin", func(t *testing.T) {
		for _, tc := range []struct {
			method string
			params map[string]any
		}{
			{"Storage.clearDataForOrigin", map[string]any{"origin": "https://ro.example", "storageTypes": "local_storage"}},
			{"Storage.trackIndexedDBForOrigin", map[string]any{"origin": "https://blind.example"}},
			{"Storage.getUsageAndQuota", map[string]any{"origin": "https://blind.example"}},
			{"Storage.trackCacheStorageForStorageKey", map[string]any{"storageKey": "https://blind.example/"}},
			{"IndexedDB.requestDatabaseNames", map[string]any{"securityOrigin": "https://blind.example"}},
			{"DOMStorage.getDOMStorageItems", map[string]any{"storageId": map[string]any{"securityOrigin": "https://ro.example", "isLocalStorage": true}}},
		} {
			if m := h.callMsg(c, full, tc.method, tc.params); m.Error == nil {
				t.Errorf("%s %v: %s", tc.method, tc.params, m.Raw)
			}
		}
		// A second spelling of the key: which one Chrome reads is not the
		// relay's to guess, so it is refused.
		if m := h.callMsg(c, full, "Storage.clearDataForOrigin", json.RawMessage(`{"origin":"https://a.example","origin":"https://ro.example","storageTypes":"local_storage"}`)); m.Error == nil {
			t.Errorf("storage named twice: %s", m.Raw)
		}
		if m := h.callMsg(c, full, "Storage.clearDataForOrigin", json.RawMessage(`{"orig\u0069n":"https://ro.example","storageTypes":"local_storage"}`)); m.Error == nil {
			t.Errorf("storage named with an escaped key: %s", m.Raw)
		}
		if m := h.callMsg(c, full, "Storage.clearDataForOrigin", map[string]any{"origin": "https://a.example", "storageTypes": "local_storage"}); m.Error != nil {
			t.Errorf("storage of a full site: %s", m.Raw)
		}
	})
	t.Run("what a full page loaded from a blind site", func(t *testing.T) {
		h.call(c, full, "Network.enable", nil)
		from := len(c.Messages())
		e.Event(1, "", "Network.requestWillBeSent", map[string]any{"requestId": "R7", "type": "Script", "frameId": tid(1),
			"request": map[string]any{"url": "https://blind.example/data.js?secret3"}})
		e.Event(1, "", "Network.responseReceived", map[string]any{"requestId": "R7", "type": "Script", "response": map[string]any{"url": "https://blind.example/data.js?secret4"}})
		e.Event(1, "", "Network.loadingFinished", map[string]any{"requestId": "R7"})
		e.Event(1, "", "Page.frameStartedLoading", map[string]any{"frameId": "LAST"})
		h.event(c, from, "Page.frameStartedLoading")
		for _, m := range c.Messages()[from:] {
			if strings.Contains(string(m.Raw), "secret") || strings.Contains(string(m.Raw), `"R7"`) {
				t.Errorf("the client heard of the blind request: %s", m.Raw)
			}
		}
		for _, tc := range []struct {
			method string
			params map[string]any
		}{
			{"Network.getResponseBody", map[string]any{"requestId": "R7"}},
			{"Network.searchInResponseBody", map[string]any{"requestId": "R7", "query": "x"}},
			{"Page.getResourceContent", map[string]any{"frameId": tid(1), "url": "https://blind.example/data.js"}},
			{"Page.searchInResource", map[string]any{"frameId": tid(1), "url": "https://blind.example/data.js", "query": "x"}},
		} {
			if m := h.callMsg(c, full, tc.method, tc.params); m.Error == nil || !strings.Contains(m.Error.Message, "blind") {
				t.Errorf("%s: %s", tc.method, m.Raw)
			}
		}
	})
	t.Run("a blind site's scripts and style sheets", func(t *testing.T) {
		h.call(c, full, "Debugger.enable", nil)
		from := len(c.Messages())
		e.Event(1, "", "Debugger.scriptParsed", map[string]any{"scriptId": "41", "url": "https://blind.example/data.js?secret7", "startLine": 0})
		e.Event(1, "", "CSS.styleSheetAdded", map[string]any{"header": map[string]any{"styleSheetId": "style-9", "sourceURL": "https://blind.example/data.css?secret8"}})
		e.Event(1, "", "Debugger.scriptParsed", map[string]any{"scriptId": "42", "url": "https://a.example/app.js", "startLine": 0})
		ev, _ := h.event(c, from, "Debugger.scriptParsed")
		if !strings.Contains(string(ev.Raw), `"42"`) {
			t.Errorf("the first script the client heard of: %s", ev.Raw)
		}
		for _, m := range c.Messages()[from:] {
			if strings.Contains(string(m.Raw), "secret") {
				t.Errorf("the client heard of the blind source: %s", m.Raw)
			}
		}
		for _, tc := range []struct {
			method string
			params map[string]any
		}{
			{"Debugger.getScriptSource", map[string]any{"scriptId": "41"}},
			{"Debugger.searchInContent", map[string]any{"scriptId": "41", "query": "x"}},
			{"CSS.getStyleSheetText", map[string]any{"styleSheetId": "style-9"}},
		} {
			if m := h.callMsg(c, full, tc.method, tc.params); m.Error == nil || !strings.Contains(m.Error.Message, "blind") {
				t.Errorf("%s: %s", tc.method, m.Raw)
			}
		}
		if m := h.callMsg(c, full, "Debugger.getScriptSource", map[string]any{"scriptId": "42"}); m.Error != nil {
			t.Errorf("the full site's script: %s", m.Raw)
		}
		// A pause in the blind script is withheld and resumed; one in the
		// page's own goes to the client.
		from, sent := len(c.Messages()), len(e.Commands())
		frame := func(script, fn string) map[string]any {
			return map[string]any{"callFrameId": "cf-" + script, "functionName": fn, "location": map[string]any{"scriptId": script, "lineNumber": 1}}
		}
		e.Event(1, "", "Debugger.paused", map[string]any{"reason": "exception", "callFrames": []any{frame("42", "caller"), frame("41", "secret9Fn")}})
		h.waitFor("the relay resumes the pause in the blind script", func() bool { return hasMethod(sentMethods(e, sent), "Debugger.resume") })
		e.Event(1, "", "Debugger.paused", map[string]any{"reason": "other", "callFrames": []any{frame("42", "pageFn")}})
		ev, _ = h.event(c, from, "Debugger.paused")
		if !strings.Contains(string(ev.Raw), "pageFn") {
			t.Errorf("the pause the client heard of: %s", ev.Raw)
		}
		for _, m := range c.Messages()[from:] {
			if strings.Contains(string(m.Raw), "secret9Fn") {
				t.Errorf("the client heard of the pause in the blind script: %s", m.Raw)
			}
		}
	})
	t.Run("a redirect's Location", func(t *testing.T) {
		from := len(c.Messages())
		e.Event(1, "", "Network.responseReceivedExtraInfo", map[string]any{"requestId": "R8", "statusCode": 302,
			"headers":     map[string]any{"Location": "https://blind.example/inbox?secret5", "X-Other": "kept"},
			"headersText": "HTTP/1.1 302 Found\r\nLocation: https://blind.example/inbox?secret6\r\n\r\n"})
		ev, _ := h.event(c, from, "Network.responseReceivedExtraInfo")
		if strings.Contains(string(ev.Raw), "secret") || !strings.Contains(string(ev.Raw), "https://blind.example/") || !strings.Contains(string(ev.Raw), "kept") {
			t.Errorf("the redirect: %s", ev.Raw)
		}
	})
}

// A pause in the debugger on a blind tab (a breakpoint set while the tab
// was on a full site) is withheld from the client, who could not resume
// it: the relay resumes it, so that the person's page does not freeze.
func TestTierBlindPauseResumed(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/", Title: "Bank"}, {ID: 2, URL: "https://a.example/", Title: "A"}}})
	c := h.client()
	sess := h.autoAttach(c)
	for _, s := range sess {
		h.call(c, s, "Debugger.enable", nil)
	}
	from, before := len(c.Messages()), len(e.Commands())
	e.Event(1, "", "Debugger.paused", map[string]any{"callFrames": []any{map[string]any{"functionName": "secretFn"}}, "reason": "other"})
	h.waitFor("the relay resumes the blind tab", func() bool { return hasMethod(sentMethods(e, before), "Debugger.resume") })
	// A full tab's pause is the client's own to answer.
	before = len(e.Commands())
	e.Event(2, "", "Debugger.paused", map[string]any{"callFrames": []any{}, "reason": "other"})
	h.event(c, from, "Debugger.paused")
	if hasMethod(sentMethods(e, before), "Debugger.resume") {
		t.Fatal("the relay resumed a full tab's pause")
	}
	for _, m := range c.Messages()[from:] {
		if strings.Contains(string(m.Raw), "secretFn") {
			t.Fatalf("the client saw the blind pause: %s", m.Raw)
		}
	}
}

// A navigation that starts while the tab is on its way to a blind site
// does not lift that: Chrome may commit the blind page after starting the
// next navigation, and the tab would go blind again under it, its client
// told of a second page it did not ask for (Playwright's goto then fails
// as interrupted). The tab stays blind until the next document decides.
func TestNavigationDoesNotLiftABlindOneOnItsWay(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Page.enable", nil)
	in := h.srv.Default()
	access := func() string { return in.Status().Tabs[0].Access }
	count := func(method string) int {
		n := 0
		for _, m := range c.Messages() {
			if m.Method == method {
				n++
			}
		}
		return n
	}
	started := func(url string) {
		e.Event(1, "", "Page.frameStartedNavigating", map[string]any{"frameId": tid(1), "url": url, "loaderId": "L", "navigationType": "differentDocument"})
	}

	from := len(c.Messages())
	started("https://blind.example/inbox")
	h.event(c, from, "CDPRelay.accessChanged")
	h.event(c, from, "Page.frameNavigated") // the stand-in: the page follows the tab to the blind origin
	if got := access(); got != "blind" {
		t.Fatalf("on its way to the blind site: %s", got)
	}
	changes, navigated := len(c.Messages()), count("Page.frameNavigated")

	// The client's navigation away starts before the blind page commits.
	started("https://c.example/page")
	h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"}) // a round trip: the event was routed
	if got := access(); got != "blind" {
		t.Errorf("a navigation away lifted the blind one on its way: %s", got)
	}
	// The blind page commits: the client is not told of it again.
	e.Navigate(1, "https://blind.example/inbox", "Inbox")
	h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"})
	for _, m := range c.Messages()[changes:] {
		if m.Method == "CDPRelay.accessChanged" && !strings.Contains(string(m.Params), `"access":"blind"`) {
			t.Errorf("the tab's access changed before the client's page committed: %s", m.Raw)
		}
	}
	if n := count("Page.frameNavigated"); n != navigated {
		t.Errorf("the client was told of the blind page's commit: %d frameNavigated, want %d", n, navigated)
	}
	// The client's page commits: the tab is the client's again.
	from = len(c.Messages())
	e.Navigate(1, "https://c.example/page", "C")
	if m, _ := h.event(c, from, "Page.frameNavigated"); !strings.Contains(string(m.Raw), "https://c.example/page") {
		t.Errorf("the client's page: %s", m.Raw)
	}
	if got := access(); got != "full" {
		t.Errorf("on the client's page: %s", got)
	}
}
