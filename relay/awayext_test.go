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

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// The connection lives on while our extension is expected back
// (relay/internal/away, ext.go), against the fake extension.

// TestExtensionAwayKeepsClient: our extension's worker stops (its socket
// closes with 1001, as Chrome closes it) and comes back later than the
// short grace. The client stays connected, its sessions on the tabs
// stay, the command under way ends as a detach ends it, the console and
// the live view say the client waits for the extension, a command sent
// meanwhile waits; when the extension is back and offers the tabs, they
// are matched by id and resumed: the command goes through, in the same
// session, after what the client had set.
func TestExtensionAwayKeepsClient(t *testing.T) {
	t.Parallel()
	p := newPageTab(t)
	rec := &auditRecorder{}
	h := newHarness(t, config.Config{ExtensionGrace: 50 * time.Millisecond, Observer: rec})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: p.handle, Features: wakeFeatures})
	c := h.client()
	h.call(c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
	h.autoAttach(c)
	h.call(c, "pw-tab-1", "Log.enable", nil)
	h.call(c, "pw-tab-1", "Runtime.enable", nil)
	h.call(c, "pw-tab-1", "Emulation.setLocaleOverride", map[string]any{"locale": "fr-FR"})
	under := h.send(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "hold"})
	<-p.entered
	from := len(c.Messages())
	e.CloseGoingAway()

	m, _ := h.reply(c, under)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":"pw-tab-1","error":{"code":-32000,"message":"Execution context was destroyed."}}`, under))
	warn, _ := h.event(c, from, "Log.entryAdded")
	if !strings.Contains(string(warn.Params), "waiting for the browser's extension to come back") {
		t.Errorf("the console: %s", warn.Raw)
	}
	st := h.srv.Default().Status()
	if st.Waiting != "waiting for the browser's extension to come back" || !st.Client {
		t.Errorf("live view: %+v", st)
	}
	if ts := tabStatus(h, 1); !strings.Contains(ts.Waiting, "extension to come back") {
		t.Errorf("live view tab: %+v", ts)
	}
	waiting := h.send(c, "pw-tab-1", "DOM.getDocument", nil)
	time.Sleep(200 * time.Millisecond) // well past the grace
	select {
	case <-c.Done():
		t.Fatalf("the client was closed: %v", c.CloseErr())
	default:
	}

	e2 := h.ext(fakeext.Options{Tabs: twoTabs, Handler: p.handle, Features: wakeFeatures})
	r, _ := h.reply(c, waiting)
	if r.Error != nil {
		t.Fatalf("the command sent while the extension was away: %s", r.Raw)
	}
	noTargetEnd(t, c.Messages()[from:], "pw-tab-1")
	if !e2.Attached(1) {
		t.Error("the tab was not attached again")
	}
	var locale, get int
	for i, cmd := range e2.Commands() {
		switch {
		case strings.Contains(string(cmd.Params), "Emulation.setLocaleOverride"):
			locale = i
		case strings.Contains(string(cmd.Params), "DOM.getDocument"):
			get = i
		}
	}
	if locale == 0 || get < locale {
		t.Errorf("the settings set again (%d) and the waiting command (%d)", locale, get)
	}
	h.call(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
	h.call(c, "pw-tab-2", "Runtime.evaluate", map[string]any{"expression": "1"})
	h.waitFor("the live view to say all is back", func() bool {
		st := h.srv.Default().Status()
		return st.Waiting == "" && tabStatus(h, 1).Waiting == "" && tabStatus(h, 2).Waiting == ""
	})
}

// TestExtensionAwayNotBackInTime: an extension expected back that does not
// come back within SuspendTimeout costs the client its connection, with
// the reason.
func TestExtensionAwayNotBackInTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{SuspendTimeout: 300 * time.Millisecond, ExtensionGrace: 50 * time.Millisecond})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Features: wakeFeatures})
	c := h.client()
	h.autoAttach(c)
	start := time.Now()
	e.CloseGoingAway()
	waiting := h.send(c, "pw-tab-1", "DOM.getDocument", nil)
	code, text := h.closed(c)
	if code != websocket.CloseGoingAway || !strings.HasPrefix(text, "Extension disconnected: ") || !strings.Contains(text, "not back within 300ms") {
		t.Errorf("close frame %d %q", code, text)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("closed after %v, before the wait was over", d)
	}
	if _, _, err := c.WaitReply(shortCtx(t, 100*time.Millisecond), waiting); err == nil {
		t.Log("the waiting command was answered before the close")
	}
	h.waitFor("the instance to forget the tabs", func() bool {
		st := h.srv.Default().Status()
		return !st.Client && len(st.Tabs) == 0 && st.Waiting == ""
	})
}

// TestExtensionGoneClosesClient: an extension that is not expected back
// ends its client after the short grace, as before: the person's
// Disconnect (1000), an extension without the wake alarm (the stock one),
// a connection lost without a close frame.
func TestExtensionGoneClosesClient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		opts  fakeext.Options
		close func(e *fakeext.Ext)
	}{
		{"disconnect", fakeext.Options{Features: wakeFeatures}, (*fakeext.Ext).Close},
		{"stock", fakeext.Options{Stock: true}, (*fakeext.Ext).CloseGoingAway},
		{"no alarm", fakeext.Options{Features: ourFeatures}, (*fakeext.Ext).CloseGoingAway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{ExtensionGrace: 100 * time.Millisecond})
			tt.opts.Tabs = twoTabs
			e := h.ext(tt.opts)
			c := h.client()
			h.autoAttach(c)
			start := time.Now()
			tt.close(e)
			code, text := h.closed(c)
			if code != websocket.CloseGoingAway || !strings.HasPrefix(text, "Extension disconnected: ") {
				t.Errorf("close frame %d %q", code, text)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("closed after %v", d)
			}
		})
	}
}

// TestTabClosedWhileExtensionAway: a tab the person closes while the
// extension is away is not offered when it is back; the extension says it
// is closed, and it is gone for the client at once, while the other tab
// is resumed.
func TestTabClosedWhileExtensionAway(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Features: wakeFeatures})
	c := h.client()
	h.call(c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
	h.autoAttach(c)
	e.CloseGoingAway()
	h.waitFor("the wait", func() bool { return h.srv.Default().Status().Waiting != "" })
	from := len(c.Messages())
	waiting := h.send(c, "pw-tab-1", "DOM.getDocument", nil)
	h.ext(fakeext.Options{Tabs: twoTabs[1:], Features: wakeFeatures})
	h.waitForMessage(c, from, fmt.Sprintf(`{"method":"Target.targetDestroyed","params":{"targetId":%q}}`, tid(1)))
	m, _ := h.reply(c, waiting)
	if m.Error == nil || m.Error.Code != core.CodeNoSession {
		t.Errorf("the command for the closed tab: %s", m.Raw)
	}
	h.call(c, "pw-tab-2", "Runtime.evaluate", map[string]any{"expression": "1"})
	if ts := tabStatus(h, 2); ts.Waiting != "" || !ts.Attached {
		t.Errorf("the other tab: %+v", ts)
	}
}

// TestExtensionReplacedKeepsSessions: a restarted worker of ours that
// connects before its old socket has gone replaces it; the client's
// sessions are resumed on the new connection.
func TestExtensionReplacedKeepsSessions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs, Features: wakeFeatures})
	c := h.client()
	h.autoAttach(c)
	from := len(c.Messages())
	e2 := h.ext(fakeext.Options{Tabs: twoTabs, Features: wakeFeatures})
	h.waitFor("the tabs back", func() bool { return e2.Attached(1) && e2.Attached(2) && tabStatus(h, 1).Waiting == "" })
	h.call(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
	noTargetEnd(t, c.Messages()[from:], "pw-tab-1")
}

// TestHandleLivesThroughExtensionRestart: the live view's handle on a tab
// that waited for the extension to come back goes on through the new
// connection: it hears the tab attached again, and its calls (a
// screencast started again) reach the extension that came back, not the
// one that went.
func TestHandleLivesThroughExtensionRestart(t *testing.T) {
	t.Parallel()
	p := newPageTab(t)
	h := newHarness(t, config.Config{ExtensionGrace: 50 * time.Millisecond})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: p.handle, Features: wakeFeatures})
	c := h.client()
	h.autoAttach(c)
	events := make(chan string, 16)
	hd, err := OpenTab(context.Background(), h.srv.Default(), 1, func(ev api.TabEvent) {
		if strings.HasPrefix(ev.Method, "cdprelay.") {
			events <- ev.Method
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer hd.Close()
	e.CloseGoingAway()
	for wait := time.Now().Add(5 * time.Second); tabStatus(h, 1).Waiting == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatalf("the tab does not wait: %+v", tabStatus(h, 1))
		}
	}
	e2 := h.ext(fakeext.Options{Tabs: twoTabs, Handler: p.handle, Features: wakeFeatures})
	deadline := time.After(5 * time.Second)
	for attached := false; !attached; {
		select {
		case m := <-events:
			attached = m == api.EventAttached
		case <-deadline:
			t.Fatal("the handle did not hear the tab attached again")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := hd.Call(ctx, "Page.startScreencast", map[string]any{"format": "jpeg"}); err != nil {
		t.Fatalf("the handle's call after the extension came back: %v", err)
	}
	found := false
	for _, cmd := range e2.Commands() {
		found = found || strings.Contains(string(cmd.Params), "Page.startScreencast")
	}
	if !found {
		t.Error("the screencast did not reach the extension that came back")
	}
}

// awayWhileClosing has a client close tab 2 (Target.closeTarget, whose id
// it returns) and our extension's worker stop before the tab is removed.
// It returns the index of the client's first message after the stop.
func awayWhileClosing(t *testing.T) (h *harness, c *cdptest.Client, closing int64, from int) {
	t.Helper()
	h = newHarness(t, config.Config{ExtensionGrace: 50 * time.Millisecond})
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	gate := func(method string, _ []json.RawMessage) {
		if method == "chrome.tabs.remove" {
			once.Do(func() { close(entered) })
			<-release // the worker stopped before it removed the tab
		}
	}
	e := h.ext(fakeext.Options{Tabs: twoTabs, Features: wakeFeatures, Gate: gate})
	c = h.client()
	h.autoAttach(c)
	closing = h.send(c, "", "Target.closeTarget", map[string]any{"targetId": tid(2)})
	<-entered
	from = len(c.Messages())
	e.CloseGoingAway()
	close(release)
	return h, c, closing, from
}

// TestExtensionAwayCloseTarget: our extension's worker stops while the
// client's Target.closeTarget is under way, before the tab was removed.
// The tab stays open, and its sessions wait for the extension: the
// removal is asked of the extension that comes back, and the client
// hears the reply and then its target's end. Playwright's page.close, and
// a newPage whose page failed to set up, ignore an error of closeTarget
// and wait for Target.detachedFromTarget: an error here, with the tab
// resumed, left them waiting forever.
func TestExtensionAwayCloseTarget(t *testing.T) {
	t.Parallel()
	h, c, closing, from := awayWhileClosing(t)

	e2 := h.ext(fakeext.Options{Tabs: twoTabs, Features: wakeFeatures})
	m, at := h.reply(c, closing)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"result":{"success":true}}`, closing))
	ev, _ := h.event(c, at, "Target.detachedFromTarget")
	mustMatch(t, ev.Raw, detachedEvent("pw-tab-2", 2))
	for _, tab := range e2.Tabs() {
		if tab.ID == 2 {
			t.Error("the tab is still open")
		}
	}
	noTargetEnd(t, c.Messages()[from:], "pw-tab-1")
	h.call(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
	h.waitFor("one tab left", func() bool { return len(h.srv.Default().Status().Tabs) == 1 })
}

// TestExtensionAwayCloseTargetStopped: as above, but a person stops the
// automation while the extension is away. The removal is not asked again
// of the extension that comes back: the client hears the person's stop,
// and the tab stays open.
func TestExtensionAwayCloseTargetStopped(t *testing.T) {
	t.Parallel()
	h, c, closing, _ := awayWhileClosing(t)
	in := h.srv.Default()
	h.waitFor("the extension gone", func() bool { return !in.Status().Extension })
	if err := in.Stop("person"); err != nil {
		t.Fatal(err)
	}

	e2 := h.ext(fakeext.Options{Tabs: twoTabs, Features: wakeFeatures})
	m, _ := h.reply(c, closing)
	if got := refusal(m); got != api.MsgStopped {
		t.Fatalf("closeTarget after a stop while the extension was away: %q, want the stop", got)
	}
	for _, call := range e2.Commands() {
		if call.Method == "chrome.tabs.remove" {
			t.Fatal("the removal was asked again after the person stopped the automation")
		}
	}
	found := false
	for _, tab := range e2.Tabs() {
		found = found || tab.ID == 2
	}
	if !found {
		t.Error("the tab was closed after the person stopped the automation")
	}
}
