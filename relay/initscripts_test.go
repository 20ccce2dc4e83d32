package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// cdpSent lists the CDP commands e was sent from index from on, in order,
// as "Method params".
func cdpSent(e *fakeext.Ext, from int) []string {
	var out []string
	for _, c := range e.Commands()[from:] {
		if c.Method != "chrome.debugger.sendCommand" {
			continue
		}
		var args []json.RawMessage
		if json.Unmarshal(c.Params, &args) != nil || len(args) < 2 {
			continue
		}
		var m string
		json.Unmarshal(args[1], &m)
		p := ""
		if len(args) > 2 {
			p = string(args[2])
		}
		out = append(out, m+" "+p)
	}
	return out
}

func indexOf(list []string, prefix string) int {
	for i, s := range list {
		if strings.HasPrefix(s, prefix) {
			return i
		}
	}
	return -1
}

// TestTierInitScriptsFollowTheTab: a script the client adds for new
// documents on a full site is taken out of Chrome before the tab goes to
// a read-only site, put back when it returns to a full one, and removed
// by the identifier the client was given; a world's bootstrap, which runs
// nothing, stays.
func TestTierInitScriptsFollowTheTab(t *testing.T) {
	var n atomic.Int64
	handler := func(tabID int, sid, method string, params json.RawMessage) (any, error) {
		if method == "Page.addScriptToEvaluateOnNewDocument" {
			return map[string]string{"identifier": fmt.Sprint("S", n.Add(1))}, nil
		}
		return fakeext.DefaultHandler(tabID, sid, method, params)
	}
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Handler: handler, Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	id := jsonString(t, h.call(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "fetch('/act')"}), "identifier")
	h.call(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "//# sourceURL=boot", "worldName": "w"})

	from := len(e.Commands())
	h.call(c, sess, "Page.navigate", map[string]any{"url": "https://ro.example/"})
	sent := cdpSent(e, from)
	rm, nav := indexOf(sent, `Page.removeScriptToEvaluateOnNewDocument {"identifier":"`+id+`"}`), indexOf(sent, "Page.navigate")
	if rm < 0 || nav < 0 || rm > nav {
		t.Fatalf("the script was not taken out before the navigation: %q", sent)
	}
	if indexOf(sent, `Page.removeScriptToEvaluateOnNewDocument {"identifier":"S2"}`) >= 0 {
		t.Fatalf("the world's bootstrap was taken out: %q", sent)
	}
	e.Navigate(1, "https://ro.example/", "RO")

	// Back on a full site: put back, under a new identifier of Chrome's.
	from = len(e.Commands())
	e.Navigate(1, "https://a.example/2", "A2")
	deadline := time.Now().Add(5 * time.Second)
	for indexOf(cdpSent(e, from), `Page.addScriptToEvaluateOnNewDocument {"source":"fetch('/act')"}`) < 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the script was not put back: %q", cdpSent(e, from))
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The put-back's reply has been read (the relay answers getTargets
	// itself: no barrier for the extension's replies).
	h.waitFor("Chrome's new identifier noted", func() bool {
		in := h.srv.Default()
		st := in.Lock()
		defer in.Unlock()
		for _, sc := range st.Tabs[1].Scripts {
			if sc.Client == id && sc.Real != "" {
				return true
			}
		}
		return false
	})
	from = len(e.Commands())
	h.call(c, sess, "Page.removeScriptToEvaluateOnNewDocument", map[string]any{"identifier": id})
	if sent := cdpSent(e, from); len(sent) != 1 || sent[0] != `Page.removeScriptToEvaluateOnNewDocument {"identifier":"S3"}` {
		t.Fatalf("the client's removal went as %q", sent)
	}
	// Removed: not put back after another trip.
	h.call(c, sess, "Page.navigate", map[string]any{"url": "https://ro.example/"})
	e.Navigate(1, "https://ro.example/", "RO")
	from = len(e.Commands())
	e.Navigate(1, "https://a.example/3", "A3")
	h.call(c, sess, "Target.getTargets", nil)
	if i := indexOf(cdpSent(e, from), "Page.addScriptToEvaluateOnNewDocument"); i >= 0 {
		t.Fatalf("a removed script was put back: %q", cdpSent(e, from))
	}
}

// TestTierBlindSettingsApplyOnLeaving: what a blind tab acknowledged
// without applying is applied once it is on a full site.
func TestTierBlindSettingsApplyOnLeaving(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/", Title: "B"}}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	from := len(e.Commands())
	h.call(c, sess, "Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true})
	h.call(c, sess, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 400, "height": 300, "deviceScaleFactor": 1, "mobile": false})
	h.call(c, sess, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 500, "height": 300, "deviceScaleFactor": 1, "mobile": false})
	if i := indexOf(cdpSent(e, from), "Emulation."); i >= 0 {
		t.Fatalf("a setting reached the blind tab: %q", cdpSent(e, from))
	}
	e.Navigate(1, "https://a.example/", "A")
	h.waitFor("the settings applied", func() bool { return indexOf(cdpSent(e, from), "Emulation.setDeviceMetricsOverride") >= 0 })
	sent := cdpSent(e, from)
	focus, metrics := indexOf(sent, `Emulation.setFocusEmulationEnabled {"enabled":true}`), indexOf(sent, `Emulation.setDeviceMetricsOverride {"deviceScaleFactor":1,"height":300,"mobile":false,"width":500}`)
	if focus < 0 || metrics < 0 || focus > metrics || strings.Count(strings.Join(sent, "\n"), "setDeviceMetricsOverride") != 1 {
		t.Fatalf("applied on leaving: %q", sent)
	}
}

// scriptHandler answers Page.addScriptToEvaluateOnNewDocument with fresh
// identifiers, as Chrome does.
func scriptHandler() fakeext.Handler {
	var n atomic.Int64
	return func(tabID int, sid, method string, params json.RawMessage) (any, error) {
		if method == "Page.addScriptToEvaluateOnNewDocument" {
			return map[string]string{"identifier": fmt.Sprint("S", n.Add(1))}, nil
		}
		return fakeext.DefaultHandler(tabID, sid, method, params)
	}
}

// TestTierFramesAgainstTheClient: what a hostile client tries with frames
// on their way to sites that are not full.
func TestTierFramesAgainstTheClient(t *testing.T) {
	setup := func(t *testing.T) (*harness, *fakeext.Ext, *cdptest.Client, string) {
		h := newHarness(t, config.Config{Policy: tiers})
		e := h.ext(fakeext.Options{Handler: scriptHandler(), Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}})
		c := h.client()
		return h, e, c, h.autoAttach(c)[0]
	}
	noneHas := func(t *testing.T, c *cdptest.Client, from int, needles ...string) {
		t.Helper()
		for _, m := range c.Messages()[from:] {
			for _, n := range needles {
				if strings.Contains(string(m.Raw), n) {
					t.Errorf("the client received %q: %s", n, m.Raw)
				}
			}
		}
	}
	t.Run("a blind frame's paused request", func(t *testing.T) {
		h, e, c, sess := setup(t)
		h.call(c, sess, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*"}}})
		from, before := len(c.Messages()), len(e.Commands())
		e.Event(1, "", "Fetch.requestPaused", map[string]any{"requestId": "interception-1", "networkId": "R9", "frameId": "SUB", "resourceType": "Document",
			"request": map[string]any{"url": "https://blind.example/inbox?secret"}})
		h.waitFor("the relay lets the request go on", func() bool {
			return indexOf(cdpSent(e, before), `Fetch.continueRequest {"requestId":"interception-1"}`) >= 0
		})
		h.call(c, sess, "Target.getTargets", nil)
		noneHas(t, c, from, "secret", "interception-1")
	})
	t.Run("a frame on its way to a read-only site", func(t *testing.T) {
		h, e, c, sess := setup(t)
		id := jsonString(t, h.call(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "fetch('/act')"}), "identifier")
		before := len(e.Commands())
		e.Event(1, "", "Page.frameStartedNavigating", map[string]any{"frameId": "SUB", "url": "https://ro.example/x", "loaderId": "L", "navigationType": "differentDocument"})
		h.waitFor("the tab's script taken out", func() bool {
			return indexOf(cdpSent(e, before), `Page.removeScriptToEvaluateOnNewDocument {"identifier":"`+id+`"}`) >= 0
		})
	})
	t.Run("a frame on its way to an extension's page", func(t *testing.T) {
		h, e, c, sess := setup(t)
		h.call(c, sess, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
		from := len(c.Messages())
		e.Event(1, "", "Page.frameStartedNavigating", map[string]any{"frameId": "FX", "url": "chrome-extension://abcdefghijklmnopabcdefghijklmnop/menu.html", "loaderId": "L", "navigationType": "differentDocument"})
		e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": "S-X", "waitingForDebugger": true,
			"targetInfo": map[string]any{"targetId": "FX", "type": "iframe", "url": "", "title": "", "attached": true}})
		e.Event(1, "", "Page.frameStartedLoading", map[string]any{"frameId": "OTHER"})
		h.event(c, from, "Page.frameStartedLoading")
		noneHas(t, c, from, "chrome-extension", "S-X")
		before := len(e.Commands())
		h.callMsg(c, "S-X", "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "chrome.tabs"})
		if indexOf(cdpSent(e, before), "Page.addScriptToEvaluateOnNewDocument") >= 0 {
			t.Errorf("a script for the extension's frame reached Chrome: %q", cdpSent(e, before))
		}
	})
	t.Run("a blind frame inside an out-of-process frame", func(t *testing.T) {
		h, e, c, sess := setup(t)
		h.call(c, sess, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
		from := len(c.Messages())
		e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": "S-A", "waitingForDebugger": false,
			"targetInfo": map[string]any{"targetId": "F-A", "type": "iframe", "url": "https://a.example/embed", "title": "", "attached": true}})
		h.event(c, from, "Target.attachedToTarget")
		mark := len(c.Messages())
		e.Event(1, "S-A", "Page.frameNavigated", map[string]any{"frame": map[string]any{"id": "N1", "parentId": "F-A", "url": "https://blind.example/secret2"}})
		e.Event(1, "S-A", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []map[string]any{{"type": "string", "value": "secret3"}}})
		if m := h.callMsg(c, "S-A", "Runtime.evaluate", map[string]any{"expression": "document.title", "contextId": 77}); refusal(m) == "" {
			t.Errorf("script in the out-of-process frame that holds a blind one: %s", m.Raw)
		}
		noneHas(t, c, mark, "secret")
	})
	t.Run("more scripts than the relay keeps", func(t *testing.T) {
		h, e, c, sess := setup(t)
		for i := 0; i < core.MaxInitScripts; i++ {
			h.call(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "0"})
		}
		before := len(e.Commands())
		if m := h.callMsg(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "fetch('/act')"}); m.Error == nil {
			t.Errorf("one script too many: %s", m.Raw)
		}
		if indexOf(cdpSent(e, before), "Page.addScriptToEvaluateOnNewDocument") >= 0 {
			t.Error("the script the relay could not keep reached Chrome")
		}
	})
	t.Run("frames removed are forgotten", func(t *testing.T) {
		h, e, c, sess := setup(t)
		from := len(c.Messages())
		for i := 0; i < 50; i++ {
			id := fmt.Sprint("G", i)
			e.Event(1, "", "Page.frameStartedNavigating", map[string]any{"frameId": id, "url": "https://blind.example/", "loaderId": "L", "navigationType": "differentDocument"})
			e.Event(1, "", "Page.frameDetached", map[string]any{"frameId": id, "reason": "remove"})
		}
		e.Event(1, "", "Page.frameStartedLoading", map[string]any{"frameId": "LAST"})
		h.event(c, from, "Page.frameStartedLoading") // the events before it are routed
		st := h.srv.Default().Lock()
		n := 0
		for _, tb := range st.Tabs {
			n += len(tb.BlindFrames)
		}
		h.srv.Default().Unlock()
		if n != 0 {
			t.Errorf("%d frames removed are still followed", n)
		}
		if m := h.callMsg(c, sess, "Page.captureScreenshot", nil); m.Error != nil {
			t.Errorf("a screenshot once the frames are gone: %s", m.Raw)
		}
	})
	t.Run("a breakpoint's condition", func(t *testing.T) {
		h, _, c, sess := setup(t)
		h.call(c, sess, "Debugger.enable", nil)
		if m := h.callMsg(c, sess, "Debugger.setBreakpointByUrl", map[string]any{"urlRegex": ".*", "lineNumber": 0, "condition": "fetch('/act'),false"}); m.Error == nil {
			t.Errorf("a breakpoint with a condition: %s", m.Raw)
		}
		if m := h.callMsg(c, sess, "Debugger.setBreakpointByUrl", map[string]any{"urlRegex": ".*", "lineNumber": 0}); m.Error != nil {
			t.Errorf("a breakpoint: %s", m.Raw)
		}
	})
}

// TestTierClientSetupEndsWithTheClient: what a client set up on a blind
// tab is not applied for the next one.
func TestTierClientSetupEndsWithTheClient(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Handler: scriptHandler(), Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/", Title: "B"}}})
	a := h.client()
	sess := h.autoAttach(a)[0]
	h.call(a, sess, "Emulation.setUserAgentOverride", map[string]any{"userAgent": "client A"})
	h.call(a, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "/*A*/fetch('/a')"})
	h.call(a, sess, "Page.createIsolatedWorld", map[string]any{"frameId": "T1", "worldName": "worldOfA"})
	a.Close()
	b := h.client()
	sessB := h.autoAttach(b)[0]
	from := len(e.Commands())
	e.Navigate(1, "https://a.example/", "A")
	e.Navigate(1, "https://a.example/2", "A2")
	h.waitFor("the navigations routed", func() bool {
		return h.srv.Default().Status().Tabs[0].Access == "full"
	})
	h.call(b, "", "Target.getTargets", nil)
	time.Sleep(50 * time.Millisecond)
	for _, s := range cdpSent(e, from) {
		if strings.Contains(s, "client A") || strings.Contains(s, "/*A*/") {
			t.Errorf("client A's set-up went to client B's tab: %s", s)
		}
	}
	// Nor are client A's worlds among the stand-ins a blind tab shows B.
	h.call(b, sessB, "Runtime.enable", nil)
	fromB := len(b.Messages())
	e.Navigate(1, "https://blind.example/again", "B")
	h.event(b, fromB, "CDPRelay.accessChanged")
	h.call(b, "", "Target.getTargets", nil)
	if clientSaw(b, fromB, "worldOfA") {
		t.Error("client A's isolated world was shown to client B")
	}
}

// askTiers is tiers, with navigations to the read-only site asked of a
// person.
type askTiers struct{ tierPolicy }

func (askTiers) MethodURL(_, _, url string, _ bool) core.Decision {
	if strings.Contains(url, "ro.example") {
		return core.Decision{Verdict: core.Ask, Rule: "ask:domain"}
	}
	return core.Decision{}
}

// TestDeniedNavigationLeavesTheTab: the stages judge before anything acts.
// A Page.navigate to a read-only site that a person is asked about changes
// nothing of the tab while it is held, and nothing once it is denied or
// unanswered: its scripts stay in Chrome, its access stays, the client is
// told of no change. Approved, the tab goes stricter before the navigation
// reaches Chrome.
func TestDeniedNavigationLeavesTheTab(t *testing.T) {
	var n atomic.Int64
	handler := func(tabID int, sid, method string, params json.RawMessage) (any, error) {
		if method == "Page.addScriptToEvaluateOnNewDocument" {
			return map[string]string{"identifier": fmt.Sprint("S", n.Add(1))}, nil
		}
		return fakeext.DefaultHandler(tabID, sid, method, params)
	}
	h := newHarness(t, config.Config{Policy: askTiers{tiers}, ApprovalTimeout: time.Hour})
	e := h.ext(fakeext.Options{Handler: handler, Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	id := jsonString(t, h.call(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "fetch('/act')"}), "identifier")
	in := h.srv.Default()
	unchanged := func(what string, from, before int) {
		t.Helper()
		for _, s := range cdpSent(e, before) {
			t.Errorf("%s: sent to the tab: %s", what, s)
		}
		for _, m := range c.Messages()[from:] {
			if m.Method == "CDPRelay.accessChanged" || m.Method == "Log.entryAdded" {
				t.Errorf("%s: the client was told %s", what, m.Raw)
			}
		}
		st := in.Lock()
		acc := st.Tabs[1].Acc.Level
		in.Unlock()
		if acc != api.Full {
			t.Errorf("%s: the tab is %v", what, acc)
		}
	}
	pending := func() api.ApprovalStatus {
		var a []api.ApprovalStatus
		h.waitFor("the approval", func() bool { a = in.Status().Approvals; return len(a) == 1 })
		return a[0]
	}

	// Held, then denied.
	from, before := len(c.Messages()), len(e.Commands())
	nav := h.send(c, sess, "Page.navigate", map[string]any{"url": "https://ro.example/"})
	a := pending()
	unchanged("held", from, before)
	if err := in.Deny(a.ID, "person"); err != nil {
		t.Fatal(err)
	}
	if m, _ := h.reply(c, nav); m.Error == nil {
		t.Fatalf("denied: %s", m.Raw)
	}
	unchanged("denied", from, before)

	// Approved: the script is out of Chrome before the navigation is in.
	before = len(e.Commands())
	nav = h.send(c, sess, "Page.navigate", map[string]any{"url": "https://ro.example/"})
	a = pending()
	if err := in.Approve(a.ID, "person"); err != nil {
		t.Fatal(err)
	}
	if m, _ := h.reply(c, nav); m.Error != nil {
		t.Fatalf("approved: %s", m.Raw)
	}
	sent := cdpSent(e, before)
	rm, navAt := indexOf(sent, `Page.removeScriptToEvaluateOnNewDocument {"identifier":"`+id+`"}`), indexOf(sent, "Page.navigate")
	if rm < 0 || navAt < 0 || rm > navAt {
		t.Fatalf("approved: the script was not taken out before the navigation: %q", sent)
	}
}
