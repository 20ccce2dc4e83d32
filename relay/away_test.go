package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// A client's page lives as long as its tab (relay/internal/away), against
// the fake extension: a tab the person takes to a browser page and back,
// a frame the debugger cannot follow, our extension restarting or its
// worker stopped; the waits are bounded, and a tab that closes still
// closes at once.

// wakeFeatures are our extension's features as far as these tests go,
// with wake: a stopped worker comes back by itself.
var wakeFeatures = []string{"detach-cause", "windows", "keepalive", "wake"}

// pageTab is a fake tab's behaviour for these tests: an evaluation of
// "hold" waits until the test ends (a command under way when Chrome lets
// go of the tab), and Page.getFrameTree gives the tab's document, whose
// loader changes with document.
type pageTab struct {
	mu       sync.Mutex
	held     chan struct{} // closed at cleanup
	entered  chan string
	document string // the main frame's loaderId
	url      string
}

func newPageTab(t *testing.T) *pageTab {
	p := &pageTab{held: make(chan struct{}), entered: make(chan string, 16), document: "DOC-1", url: "https://a.example/"}
	t.Cleanup(func() { close(p.held) })
	return p
}

func (p *pageTab) newDocument(loader, url string) {
	p.mu.Lock()
	p.document, p.url = loader, url
	p.mu.Unlock()
}

func (p *pageTab) handle(tabID int, sessionID, method string, params json.RawMessage) (any, error) {
	switch {
	case method == "Runtime.evaluate" && strings.Contains(string(params), "hold"):
		p.entered <- method
		<-p.held
		return nil, fakeext.CDPError(-32000, core.MsgDetachedWhile)
	case method == "Page.getFrameTree" && tabID == 1:
		p.mu.Lock()
		defer p.mu.Unlock()
		return map[string]any{"frameTree": map[string]any{
			"frame": map[string]any{"id": tid(1), "loaderId": p.document, "url": p.url, "securityOrigin": "https://a.example", "mimeType": "text/html"},
			"childFrames": []any{map[string]any{
				"frame": map[string]any{"id": "SUBFRAME", "parentId": tid(1), "loaderId": p.document + "-sub", "url": "https://a.example/inner", "securityOrigin": "https://a.example", "mimeType": "text/html"},
			}},
		}}, nil
	}
	return fakeext.DefaultHandler(tabID, sessionID, method, params)
}

// noTargetEnd fails t if anything of the messages says that session's
// target ended or came anew, or shows a page never shared.
func noTargetEnd(t *testing.T, ms []cdptest.Message, session string) {
	t.Helper()
	for _, m := range ms {
		switch {
		case m.Method == "Target.detachedFromTarget" && strings.Contains(string(m.Params), session),
			m.Method == "Target.targetDestroyed",
			m.Method == "Target.attachedToTarget":
			t.Errorf("the client was told: %s", m.Raw)
		case strings.Contains(string(m.Raw), "chrome://"), strings.Contains(string(m.Raw), "chrome-extension://"):
			t.Errorf("the client saw the page never shared: %s", m.Raw)
		}
	}
}

// tabStatus is tab id's entry in the instance's status.
func tabStatus(h *harness, id int64) api.TabStatus {
	for _, ts := range h.srv.Default().Status().Tabs {
		if ts.TabID == id {
			return ts
		}
	}
	return api.TabStatus{}
}

// TestBrowserPageKeepsPage: the person takes a shared tab to a page
// Chrome does not let an extension debug and comes back; Chrome detaches,
// or the relay lets go first (it follows the tab's own events). The
// client's session stays: no detach, no destroyed target, no new one;
// the command under way ends as a detach ends it (the context's end); the
// console and the live view say what happens; a command sent meanwhile
// waits while the client's other tab goes on; nothing of the page never
// shared reaches the client; once the extension offers the tab again, what
// the client had set is set again before its waiting command goes, which
// then succeeds, in the same session.
func TestBrowserPageKeepsPage(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"restricted_url", "navigation"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			p := newPageTab(t)
			rec := &auditRecorder{}
			h := newHarness(t, config.Config{Observer: rec})
			e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: p.handle, Features: ourFeatures})
			c := h.client()
			h.call(c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
			h.autoAttach(c)
			h.call(c, "pw-tab-1", "Log.enable", nil)
			h.call(c, "pw-tab-1", "Runtime.enable", nil)
			h.call(c, "pw-tab-1", "Emulation.setTimezoneOverride", map[string]any{"timezoneId": "Europe/Paris"})
			under := h.send(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "hold"})
			<-p.entered
			from := len(c.Messages())
			if how == "navigation" {
				e.Event(1, "", "Page.frameStartedNavigating", map[string]any{"frameId": tid(1), "url": "chrome://version/", "loaderId": "V", "navigationType": "differentDocument"})
				h.waitFor("the relay to let go of the tab", func() bool { return !e.Attached(1) })
				// What Chrome says of the page before the detach reaches it.
				e.Event(1, "", "Page.frameNavigated", map[string]any{"frame": map[string]any{"id": tid(1), "loaderId": "V", "url": "chrome://version/"}, "type": "Navigation"})
			} else {
				e.DetachByBrowser(1, "target_closed", map[string]any{"cause": how})
			}

			m, _ := h.reply(c, under)
			mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":"pw-tab-1","error":{"code":-32000,"message":"Execution context was destroyed."}}`, under))
			warn, _ := h.event(c, from, "Log.entryAdded")
			if !strings.Contains(string(warn.Params), "waits for it to come back") {
				t.Errorf("the console: %s", warn.Raw)
			}
			h.event(c, from, "Runtime.executionContextsCleared")
			waiting := h.send(c, "pw-tab-1", "DOM.getDocument", map[string]any{"depth": 1})
			h.call(c, "pw-tab-2", "DOM.getDocument", nil)
			if ts := tabStatus(h, 1); !strings.Contains(ts.Waiting, "come back") && !strings.Contains(ts.Waiting, "debug") || ts.Detached != "" {
				t.Errorf("live view status while away: %+v", ts)
			}
			if _, _, err := c.WaitReply(shortCtx(t, 200*time.Millisecond), waiting); err == nil {
				t.Fatal("the command sent while the tab was away was answered before the tab was back")
			}
			sent := len(e.Commands())

			p.newDocument("DOC-2", "https://a.example/back")
			e.Offer(1, "https://a.example/back")
			r, _ := h.reply(c, waiting)
			if r.Error != nil {
				t.Fatalf("the command sent while the tab was away: %s", r.Raw)
			}
			noTargetEnd(t, c.Messages()[from:], "pw-tab-1")
			var order []string
			for _, cmd := range commandsSince(e, sent) {
				var args []json.RawMessage
				json.Unmarshal(cmd.Params, &args)
				if len(args) > 1 {
					var method string
					json.Unmarshal(args[1], &method)
					order = append(order, method)
				}
			}
			got := strings.Join(order, " ")
			if !strings.Contains(got, "Runtime.enable") || !strings.Contains(got, "Emulation.setTimezoneOverride") || strings.Index(got, "Emulation.setTimezoneOverride") > strings.Index(got, "DOM.getDocument") {
				t.Errorf("what reached the tab once it was back: %s", got)
			}
			if v := h.call(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"}); !strings.Contains(string(v), "2") {
				t.Errorf("the same session after: %s", v)
			}
			if ts := tabStatus(h, 1); ts.Waiting != "" || !ts.Attached {
				t.Errorf("live view status after: %+v", ts)
			}
			// The resume lets the waiting commands go before it records itself.
			h.waitFor("the audit record of the resume", func() bool { return rec.find(api.KindAttach, "resumed the automation's sessions") })
		})
	}
}

// TestComeBackToAnotherPage: the tab comes back on another document than
// the one the client knew. The client is shown it as Chrome shows a new
// document (the main frame and its frame navigated, before anything of
// the settings set again), and its scripts for new documents run in it.
func TestComeBackToAnotherPage(t *testing.T) {
	t.Parallel()
	p := newPageTab(t)
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: p.handle, Features: ourFeatures})
	c := h.client()
	h.autoAttach(c)
	h.call(c, "pw-tab-1", "Page.enable", nil)
	h.call(c, "pw-tab-1", "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "", "worldName": "utility"})
	from := len(c.Messages())
	e.Event(1, "", "Page.frameStartedNavigating", map[string]any{"frameId": tid(1), "url": "chrome://version/", "loaderId": "V", "navigationType": "differentDocument"})
	h.waitFor("the relay to let go of the tab", func() bool { return !e.Attached(1) })
	sent := len(e.Commands())
	p.newDocument("DOC-2", "https://a.example/back")
	e.Offer(1, "https://a.example/back")
	h.waitFor("the tab to be back", func() bool { return tabStatus(h, 1).Waiting == "" && tabStatus(h, 1).Attached })

	nav, ni := h.event(c, from, "Page.frameNavigated")
	mustMatch(t, nav.Raw, fmt.Sprintf(`{"method":"Page.frameNavigated","sessionId":"pw-tab-1","params":{"frame":{"id":%q,"loaderId":"DOC-2","url":"https://a.example/back","securityOrigin":"https://a.example","mimeType":"text/html"},"type":"Navigation"}}`, tid(1)))
	att, ai := h.event(c, ni, "Page.frameAttached")
	mustMatch(t, att.Raw, fmt.Sprintf(`{"method":"Page.frameAttached","sessionId":"pw-tab-1","params":{"frameId":"SUBFRAME","parentFrameId":%q}}`, tid(1)))
	sub, _ := h.event(c, ai, "Page.frameNavigated")
	if !strings.Contains(string(sub.Params), "https://a.example/inner") {
		t.Errorf("the frame's navigation: %s", sub.Raw)
	}
	var script string
	for _, cmd := range commandsSince(e, sent) {
		if strings.Contains(string(cmd.Params), "Page.addScriptToEvaluateOnNewDocument") {
			script = string(cmd.Params)
		}
	}
	if !strings.Contains(script, `"runImmediately":true`) || !strings.Contains(script, `"worldName":"utility"`) {
		t.Errorf("the script for new documents set again: %s", script)
	}
	// The target's URL follows it.
	res := h.call(c, "", "Target.getTargets", nil)
	if !strings.Contains(string(res), "https://a.example/back") {
		t.Errorf("targets: %s", res)
	}
}

// TestAwayTabNotBackInTime: a tab that is not back within SuspendTimeout
// ends its sessions: the command that waited fails with the reason, then
// the session ends, told why; the live view says why.
func TestAwayTabNotBackInTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{SuspendTimeout: 300 * time.Millisecond})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Features: ourFeatures})
	c := h.client()
	h.autoAttach(c)
	from := len(c.Messages())
	e.DetachByBrowser(1, "target_closed", map[string]any{"cause": "restricted_url"})
	h.waitFor("the wait", func() bool { return tabStatus(h, 1).Waiting != "" })
	waiting := h.send(c, "pw-tab-1", "DOM.getDocument", nil)
	m, ri := h.reply(c, waiting)
	if m.Error == nil || !strings.Contains(m.Error.Message, "was not back within 300ms") || !strings.Contains(m.Error.Message, "a page Chrome does not let an extension debug") {
		t.Fatalf("the waiting command: %s", m.Raw)
	}
	det, di := h.event(c, from, "Target.detachedFromTarget")
	if !strings.Contains(string(det.Params), "not back within") || di < ri {
		t.Errorf("the detach (%d, reply %d): %s", di, ri, det.Raw)
	}
	if ts := tabStatus(h, 1); !strings.Contains(ts.Detached, "not back within") || ts.Waiting != "" {
		t.Errorf("live view: %+v", ts)
	}
	// Offered again later, it is a new target.
	e.Offer(1, "https://a.example/")
	h.waitForMessage(c, from, attachedEvent("pw-tab-3", pageInfo(1, "https://a.example/", "A", true)))
}

// TestAwayTabClosesAtOnce: a tab that closes while its sessions wait for
// it is gone for the client at once, and the command that waited gets a
// gone session's answer.
func TestAwayTabClosesAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Features: ourFeatures})
	c := h.client()
	h.call(c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
	h.autoAttach(c)
	from := len(c.Messages())
	e.DetachByBrowser(1, "target_closed", map[string]any{"cause": "restricted_url"})
	h.waitFor("the wait", func() bool { return tabStatus(h, 1).Waiting != "" })
	waiting := h.send(c, "pw-tab-1", "DOM.getDocument", nil)
	start := time.Now()
	e.CloseTab(1)
	h.waitForMessage(c, from, fmt.Sprintf(`{"method":"Target.targetDestroyed","params":{"targetId":%q}}`, tid(1)))
	h.waitForMessage(c, from, detachedEvent("pw-tab-1", 1))
	m, _ := h.reply(c, waiting)
	if m.Error == nil || m.Error.Code != core.CodeNoSession {
		t.Errorf("the waiting command: %s", m.Raw)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the closed tab took %v", d)
	}
	if tabStatus(h, 1).TabID != 0 {
		t.Error("the instance still has the closed tab")
	}
}

// TestStockExtensionDoesNotWait: the stock extension never offers a
// detached tab again, so nothing waits for it: the session ends at once.
func TestStockExtensionDoesNotWait(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Stock: true})
	c := h.client()
	h.autoAttach(c)
	from := len(c.Messages())
	e.Event(1, "", "Page.frameStartedNavigating", map[string]any{"frameId": tid(1), "url": "chrome://version/", "loaderId": "V", "navigationType": "differentDocument"})
	h.event(c, from, "Target.detachedFromTarget")
}

// shortCtx is a context for a wait that is expected to time out.
func shortCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestAwayWaitOff: with no wait (SuspendTimeout negative, --away-timeout
// 0) a tab Chrome lets go of for a browser page ends its session at once,
// with the reason, as before the wait was built; the live view has no
// wait to show.
func TestAwayWaitOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{SuspendTimeout: -1})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Features: ourFeatures})
	c := h.client()
	h.autoAttach(c)
	from := len(c.Messages())
	e.DetachByBrowser(1, "target_closed", map[string]any{"cause": "restricted_url"})
	det, _ := h.event(c, from, "Target.detachedFromTarget")
	if !strings.Contains(string(det.Params), "pw-tab-1") {
		t.Errorf("the detach: %s", det.Raw)
	}
	if ts := tabStatus(h, 1); ts.Waiting != "" {
		t.Errorf("live view: %+v", ts)
	}
}
