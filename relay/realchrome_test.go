package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/replay"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// A person's everyday Chrome, against the fake extension: tabs Chrome
// detaches by itself and why, offers taken back and made again, discarded
// tabs, an extension that restarts, the stock extension's silent closes.

// ourFeatures are what our extension says it can do, as far as these
// tests go.
var ourFeatures = []string{"detach-cause", "windows", "keepalive"}

// auditRecorder is an Observer that keeps what it is told.
type auditRecorder struct {
	mu sync.Mutex
	ev []core.Event
}

func (r *auditRecorder) Observe(ev core.Event) {
	r.mu.Lock()
	r.ev = append(r.ev, ev)
	r.mu.Unlock()
}

func (r *auditRecorder) find(kind, detail string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range r.ev {
		if ev.Kind == kind && strings.Contains(ev.Detail, detail) {
			return true
		}
	}
	return false
}

// TestDetachCauseToldToClient: a tab Chrome detaches by itself for a
// frame of another extension, which our extension could not clear, ends
// the client's sessions on it with a warning its console shows and the
// reason in the detach; the command under way fails after the detach, with
// Chrome's answer for a gone session; the live view's status and the audit
// log say why. (A browser page, or a frame the debugger cannot follow,
// comes back by itself: the sessions wait for it, away_test.go.)
func TestDetachCauseToldToClient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cause map[string]any
		says  string // in the reason
		short string // in the audit record
	}{
		{"password manager frame", map[string]any{"cause": "extension_frame"}, "another extension's frame is in the tab", "another extension's frame"},
		{"guard could not remove it", map[string]any{"cause": "extension_frame", "guard": true}, "could not be removed", "another extension's frame"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newBlocker(t, 1)
			rec := &auditRecorder{}
			h := newHarness(t, config.Config{Observer: rec})
			e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: b.handle, Features: ourFeatures})
			c := h.client()
			h.autoAttach(c)
			h.call(c, "pw-tab-1", "Log.enable", nil)
			id := h.send(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "await new Promise(() => {})"})
			<-b.entered
			from := len(c.Messages())
			e.DetachByBrowser(1, "target_closed", tt.cause)

			warn, wi := h.event(c, from, "Log.entryAdded")
			var w struct {
				Entry struct{ Level, Text, Source string }
			}
			json.Unmarshal(warn.Params, &w)
			if warn.SessionID != "pw-tab-1" || w.Entry.Level != "warning" || !strings.Contains(w.Entry.Text, tt.says) {
				t.Errorf("warning: %s", warn.Raw)
			}
			det, di := h.event(c, from, "Target.detachedFromTarget")
			var d struct{ SessionID, TargetID, Reason string }
			json.Unmarshal(det.Params, &d)
			if d.SessionID != "pw-tab-1" || d.TargetID != tid(1) || !strings.Contains(d.Reason, tt.says) {
				t.Errorf("detach: %s", det.Raw)
			}
			m, ri := h.reply(c, id)
			mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":"pw-tab-1","error":{"code":-32001,"message":"Session with given id not found."}}`, id))
			if !(wi < di && di < ri) {
				t.Errorf("order: warning %d, detach %d, reply %d", wi, di, ri)
			}
			for _, ts := range h.srv.Default().Status().Tabs {
				if ts.TabID == 1 && !strings.Contains(ts.Detached, tt.says) {
					t.Errorf("live view status: %+v", ts)
				}
			}
			if !rec.find(api.KindDetach, tt.short) {
				t.Errorf("no audit record of the cause %q: %+v", tt.short, rec.ev)
			}
			// The other tab carries on.
			h.call(c, "pw-tab-2", "Page.enable", nil)
		})
	}
}

// TestWithdrawnTabComesBack: a tab Chrome refuses to attach (another
// extension's frame in it) is withdrawn: it is no target while it cannot
// be used, the client is not left waiting on it nor closed for it, and it
// comes back as a new target when the extension offers it again.
func TestWithdrawnTabComesBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Features: ourFeatures})
	c := h.client()
	h.call(c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
	h.autoAttach(c)
	from := len(c.Messages())
	e.RefuseAttach(1, "Cannot access a chrome-extension:// URL of different extension")
	e.DetachByBrowser(1, "target_closed", map[string]any{"cause": "extension_frame"})
	h.event(c, from, "Target.detachedFromTarget")

	// A client attaching by target id meanwhile gets an answer, not a wait.
	m := h.callMsg(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true})
	if m.Error == nil || !strings.Contains(m.Error.Message, "different extension") {
		t.Errorf("attach while refused: %s", m.Raw)
	}
	// Our extension takes the offer back.
	e.Emit("chrome.tabs.onRemoved", 1, map[string]any{"windowId": 1, "isWindowClosing": false, "withdrawn": true, "cause": "extension_frame"})
	h.waitForMessage(c, from, fmt.Sprintf(`{"method":"Target.targetDestroyed","params":{"targetId":%q}}`, tid(1)))
	res := h.call(c, "", "Target.getTargets", nil)
	mustMatch(t, res, `{"targetInfos":[]}`)
	select {
	case <-c.Done():
		t.Fatalf("the client was closed: %v", c.CloseErr())
	default:
	}

	// The frame is gone: offered again, a new target, attached.
	from = len(c.Messages())
	e.RefuseAttach(1, "")
	e.Emit("chrome.tabs.onCreated", fakeext.Tab{ID: 1, URL: "https://a.example/", Title: "A", TargetID: tid(1), WindowID: 1})
	h.event(c, from, "Target.targetCreated")
	a, _ := h.event(c, from, "Target.attachedToTarget")
	mustMatch(t, a.Raw, attachedEvent("pw-tab-2", pageInfo(1, "https://a.example/", "A", true)))
	h.call(c, "pw-tab-2", "Runtime.evaluate", map[string]any{"expression": "1"})
}

// TestDiscardedTabReplaced: Chrome replaces a discarded tab with a new id
// and a new target: the old target is destroyed (no ghost to attach), the
// new one is offered and attached.
func TestDiscardedTabReplaced(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Features: ourFeatures})
	c := h.client()
	h.call(c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
	h.autoAttach(c)
	from := len(c.Messages())
	nt := e.DiscardTab(2)
	d, _ := h.event(c, from, "Target.detachedFromTarget")
	if !strings.Contains(string(d.Params), "discarded") {
		t.Errorf("detach: %s", d.Raw)
	}
	h.waitForMessage(c, from, fmt.Sprintf(`{"method":"Target.targetDestroyed","params":{"targetId":%q}}`, tid(2)))
	a, _ := h.event(c, from, "Target.attachedToTarget")
	if targetOfMsg(a) != nt.TargetID {
		t.Errorf("the new tab: %s", a.Raw)
	}
	res := h.call(c, "", "Target.getTargets", nil)
	if strings.Contains(string(res), tid(2)) || !strings.Contains(string(res), nt.TargetID) {
		t.Errorf("targets: %s", res)
	}
	m := h.callMsg(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(2), "flatten": true})
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"error":{"code":-32602,"message":"No target with given id found"}}`, *m.ID))
}

func targetOfMsg(m cdptest.Message) string {
	var ev struct{ TargetInfo struct{ TargetID string } }
	json.Unmarshal(m.Params, &ev)
	return ev.TargetInfo.TargetID
}

// TestExtensionRestartKeepsClient: the extension's worker restarts (a
// reload, an update): the client stays connected. Its tab sessions end at
// once, told why, and the commands under way fail after that, as a closed
// target's; a command sent meanwhile waits; when the extension is back,
// its tabs come back as new targets and work.
func TestExtensionRestartKeepsClient(t *testing.T) {
	t.Parallel()
	b := newBlocker(t, 1)
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: b.handle, Features: ourFeatures})
	c := h.client()
	h.call(c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
	h.autoAttach(c)
	browser := h.call(c, "", "Target.attachToBrowserTarget", nil)
	var bs struct{ SessionID string }
	json.Unmarshal(browser, &bs)
	id := h.send(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "await new Promise(() => {})"})
	<-b.entered
	from := len(c.Messages())
	e.Close()

	m, ri := h.reply(c, id)
	if m.Error == nil || m.Error.Code != -32001 {
		t.Errorf("the command under way: %s", m.Raw)
	}
	_, di := h.event(c, from, "Target.detachedFromTarget")
	if di > ri {
		t.Errorf("the command failed before its session detached: %s", describe(c.Messages()[from:]))
	}
	for _, s := range []string{"pw-tab-1", "pw-tab-2"} {
		h.waitForMessage(c, from, fmt.Sprintf(`{"method":"Target.detachedFromTarget","params":{"sessionId":%q,"targetId":"<any>","reason":"<any>"}}`, s))
	}
	h.waitForMessage(c, from, fmt.Sprintf(`{"method":"Target.targetDestroyed","params":{"targetId":%q}}`, tid(1)))

	// Meanwhile the client asks for something: it waits for the extension.
	from = len(c.Messages())
	pending := h.send(c, "", "Target.getTargets", nil)
	e2 := h.ext(fakeext.Options{Tabs: twoTabs, Features: ourFeatures})
	r, _ := h.reply(c, pending)
	if r.Error != nil {
		t.Errorf("the command sent while the extension was away: %s", r.Raw)
	}
	var fresh []string
	for i := range twoTabs {
		a := h.waitForMessage(c, from, attachedEvent("<any>", pageInfo(i+1, twoTabs[i].URL, twoTabs[i].Title, true)))
		var p struct{ SessionID string }
		json.Unmarshal(a.Params, &p)
		fresh = append(fresh, p.SessionID)
	}
	h.waitForMessage(c, from, fmt.Sprintf(`{"method":"Target.targetCreated","params":{"targetInfo":{"targetId":%q,"type":"page","title":"A","url":"https://a.example/","attached":"<any>","canAccessOpener":false,"browserContextId":"<any>"}}}`, tid(1)))
	if fresh[0] == "pw-tab-1" || fresh[1] == "pw-tab-2" {
		t.Errorf("old sessions announced again: %v", fresh)
	}
	h.call(c, fresh[0], "Runtime.evaluate", map[string]any{"expression": "1"})
	// The old sessions are gone for good; the browser session stays.
	old := h.callMsg(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
	if old.Error == nil || old.Error.Code != -32001 {
		t.Errorf("old session: %s", old.Raw)
	}
	h.call(c, bs.SessionID, "Target.getTargets", nil)
	if !e2.Attached(1) || !e2.Attached(2) {
		t.Error("the tabs were not attached again")
	}
	select {
	case <-c.Done():
		t.Fatalf("the client was closed: %v", c.CloseErr())
	default:
	}
}

// TestExtensionReplacedKeepsClient: a restarted worker that connects
// before the old socket has gone replaces it; the client stays as well.
func TestExtensionReplacedKeepsClient(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs, Features: ourFeatures})
	c := h.client()
	h.autoAttach(c)
	from := len(c.Messages())
	h.ext(fakeext.Options{Tabs: twoTabs[:1], Features: ourFeatures})
	h.waitForMessage(c, from, `{"method":"Target.detachedFromTarget","params":{"sessionId":"pw-tab-1","targetId":"<any>","reason":"<any>"}}`)
	h.waitForMessage(c, from, attachedEvent("pw-tab-3", pageInfo(1, "https://a.example/", "A", true)))
	h.call(c, "pw-tab-3", "Runtime.evaluate", map[string]any{"expression": "1"})
}

// TestStockClosedTabIsForgotten: the stock extension reports a closed tab
// only as a detach (target_closed) and never as removed; the relay finds
// out it is gone, and it is no target, no /json/list entry and no tab of
// the instance any more.
func TestStockClosedTabIsForgotten(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Stock: true})
	c := h.client()
	h.call(c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
	h.autoAttach(c)
	from := len(c.Messages())
	e.CloseTab(1)
	h.event(c, from, "Target.detachedFromTarget")
	h.waitForMessage(c, from, fmt.Sprintf(`{"method":"Target.targetDestroyed","params":{"targetId":%q}}`, tid(1)))
	res := h.call(c, "", "Target.getTargets", nil)
	mustMatch(t, res, `{"targetInfos":[`+pageInfo(2, "https://b.example/", "B", true)+`]}`)
	if _, body := h.get("/json/list", ""); strings.Contains(body, tid(1)) {
		t.Errorf("/json/list still lists the closed tab: %s", body)
	}
	for _, ts := range h.srv.Default().Status().Tabs {
		if ts.TabID == 1 {
			t.Errorf("the instance still has the closed tab: %+v", ts)
		}
	}
}

// TestStockDetachedTabComesBack: a tab the stock extension let detach but
// that is still there (a frame went to an unknown scheme) is attached
// again and announced as a new target, though the stock extension never
// offers it again.
func TestStockDetachedTabComesBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Stock: true})
	c := h.client()
	h.autoAttach(c)
	from := len(c.Messages())
	e.DetachByBrowser(1, "target_closed")
	h.event(c, from, "Target.detachedFromTarget")
	a, _ := h.event(c, from, "Target.attachedToTarget")
	mustMatch(t, a.Raw, attachedEvent("pw-tab-3", pageInfo(1, "https://a.example/", "A", true)))
	h.call(c, "pw-tab-3", "Runtime.evaluate", map[string]any{"expression": "1"})
}

// TestRestrictedPopupAnnouncedAndLetGo: the automation opens a popup onto
// another extension's page, which cannot be attached: the client hears of
// it (so a client waiting for the popup gets it) and of its end, with the
// reason, at once.
func TestRestrictedPopupAnnouncedAndLetGo(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Features: ourFeatures})
	c := h.client()
	h.autoAttach(c)
	h.call(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "window.open('chrome-extension://abcdefghijklmnopabcdefghijklmnop/menu.html')"})
	from := len(c.Messages())
	e.Emit("chrome.tabs.onCreated", map[string]any{"id": 50, "openerTabId": 1, "url": "", "pendingUrl": "chrome-extension://abcdefghijklmnopabcdefghijklmnop/menu.html", "targetId": "POPUPTARGET", "cdprelayOffer": "restricted"})
	a, ai := h.event(c, from, "Target.attachedToTarget")
	mustMatch(t, a.Raw, fmt.Sprintf(`{"method":"Target.attachedToTarget","params":{"sessionId":"<any>","targetInfo":{"targetId":"POPUPTARGET","type":"page","title":"","url":"chrome-extension://abcdefghijklmnopabcdefghijklmnop","attached":true,"openerId":%q,"canAccessOpener":false,"browserContextId":"<any>"},"waitingForDebugger":false}}`, tid(1)))
	d, di := h.event(c, from, "Target.detachedFromTarget")
	if di < ai || !strings.Contains(string(d.Params), "POPUPTARGET") || !strings.Contains(string(d.Params), "does not let an extension debug") {
		t.Errorf("detach: %s", d.Raw)
	}
	res := h.call(c, "", "Target.getTargets", nil)
	if strings.Contains(string(res), "POPUPTARGET") {
		t.Errorf("the person's tab is kept as a target: %s", res)
	}
}

// TestResumeAfterGuardedFrame: Chrome detached a tab for another
// extension's frame, which the frame guard removed at once: the relay
// attaches it again and resumes the client's sessions on it. The sessions
// stay; their children end; contexts are cleared; a Runtime command under
// way fails as a context's end; a command sent meanwhile waits; what the
// sessions had set is set again, in order, before it.
func TestResumeAfterGuardedFrame(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	scripts := 0
	gone := make(chan struct{})
	entered := make(chan struct{}, 1)
	handler := func(tabID int, sid, method string, params json.RawMessage) (any, error) {
		switch {
		case method == "Page.addScriptToEvaluateOnNewDocument":
			// Chrome numbers them anew in each debugger session; a
			// counter that goes on shows the relay maps them.
			mu.Lock()
			defer mu.Unlock()
			scripts++
			return map[string]string{"identifier": fmt.Sprint(scripts)}, nil
		case tabID == 1 && method == "Runtime.callFunctionOn":
			entered <- struct{}{}
			<-gone
			return nil, fakeext.CDPError(-32000, "Detached while handling command.")
		}
		return fakeext.DefaultHandler(tabID, sid, method, params)
	}
	rec := &auditRecorder{}
	h := newHarness(t, config.Config{Observer: rec})
	// The attach that resumes the tab (after the two tabs') waits until
	// the test lets it go.
	ag := holdAttach(3)
	e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: handler, Features: ourFeatures, Gate: ag.gate})
	c := h.client()
	h.autoAttach(c)
	for _, cmd := range []struct {
		method string
		params any
	}{
		{"Runtime.enable", nil},
		{"Log.enable", nil},
		{"Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}},
		{"Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "", "worldName": "util"}},
		{"Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "window.x = 1"}},
		{"Emulation.setDeviceMetricsOverride", map[string]any{"width": 800, "height": 600, "deviceScaleFactor": 1, "mobile": false}},
		{"Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}},
	} {
		h.call(c, "pw-tab-1", cmd.method, cmd.params)
	}
	// An out-of-process frame, with a session of its own.
	e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": "CHILD1", "targetInfo": map[string]any{"targetId": "F1", "type": "iframe", "url": "https://a.example/frame", "attached": true}, "waitingForDebugger": false})
	h.waitFor("the child session", func() bool {
		return h.callMsg(c, "CHILD1", "Runtime.evaluate", map[string]any{"expression": "1"}).Error == nil
	})
	inflight := h.send(c, "pw-tab-1", "Runtime.callFunctionOn", map[string]any{"functionDeclaration": "() => 1", "objectId": "1"})
	<-entered

	from := len(c.Messages())
	before := len(e.Commands())
	e.DetachByBrowser(1, "target_closed", map[string]any{"cause": "extension_frame", "cleared": true, "guard": true})
	h.event(c, from, "Log.entryAdded")
	held := h.send(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "2"})
	close(ag.release)
	h.waitForMessage(c, from, `{"method":"Target.detachedFromTarget","sessionId":"pw-tab-1","params":{"sessionId":"CHILD1","targetId":"F1"}}`)
	h.waitForMessage(c, from, `{"method":"Runtime.executionContextsCleared","sessionId":"pw-tab-1","params":{}}`)
	close(gone)
	m, _ := h.reply(c, inflight)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":"pw-tab-1","error":{"code":-32000,"message":"Execution context was destroyed."}}`, inflight))
	r, _ := h.reply(c, held)
	if r.Error != nil {
		t.Errorf("the command sent meanwhile: %s", r.Raw)
	}
	for _, msg := range c.Messages()[from:] {
		if msg.Method == "Target.detachedFromTarget" && strings.Contains(string(msg.Params), `"pw-tab-1"`) {
			t.Errorf("the session ended: %s", msg.Raw)
		}
	}

	// After the new attach: what the sessions had set, in order, then the
	// command that waited.
	var got []string
	attached := false
	for _, cmd := range commandsSince(e, before) {
		if cmd.Method == "chrome.debugger.attach" {
			attached = true
			continue
		}
		if !attached || cmd.Method != "chrome.debugger.sendCommand" {
			continue
		}
		var args []json.RawMessage
		json.Unmarshal(cmd.Params, &args)
		var method string
		json.Unmarshal(args[1], &method)
		got = append(got, method)
	}
	want := []string{"Runtime.enable", "Log.enable", "Page.setLifecycleEventsEnabled", "Page.addScriptToEvaluateOnNewDocument", "Page.addScriptToEvaluateOnNewDocument", "Emulation.setDeviceMetricsOverride", "Target.setAutoAttach", "Runtime.evaluate"}
	if i := indexOfSeq(got, want); i < 0 {
		t.Errorf("after the new attach: %v\nwant, in order: %v", got, want)
	}
	if !e.Attached(1) {
		t.Error("the tab is not attached again")
	}

	// The client's script "2" is Chrome's "4" now.
	before = len(e.Commands())
	h.call(c, "pw-tab-1", "Page.removeScriptToEvaluateOnNewDocument", map[string]any{"identifier": "2"})
	last := commandsSince(e, before)
	if len(last) != 1 || !strings.Contains(string(last[0].Params), `{"identifier":"4"}`) {
		t.Errorf("removal: %+v", last)
	}
	// The record is made once the resume is done, after the commands
	// that waited for it were let go.
	h.waitFor("the audit record of the resume", func() bool { return rec.find(api.KindAttach, "resumed") })
}

// indexOfSeq returns where want occurs in got as a subsequence, or -1.
func indexOfSeq(got, want []string) int {
	j := 0
	for i := 0; i < len(got) && j < len(want); i++ {
		if got[i] == want[j] {
			j++
		}
	}
	if j == len(want) {
		return 0
	}
	return -1
}

// TestReplayJudgedByTheStages: a resume sets again only what the pipeline's
// judging stages let a client set now, on the tab as it is now: the access
// stage's own rules, not a copy of them.
func TestReplayJudgedByTheStages(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{Policy: tiers})
	h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	h.autoAttach(c)
	in := h.srv.Default()
	cc := currentClient(in)
	st := in.Lock()
	tb := st.Tabs[1]
	in.Unlock()
	full, ro, blind := core.TabAccess{Level: api.Full}, core.TabAccess{Level: api.ReadOnly, Rule: "tier:read-only", Why: "ro"}, core.TabAccess{Level: api.Blind, Rule: "tier:blind", Why: "blind"}
	tests := []struct {
		acc    core.TabAccess
		method string
		params string
		want   bool
	}{
		{full, "Page.addScriptToEvaluateOnNewDocument", `{"source":"window.x=1"}`, true},
		{ro, "Page.addScriptToEvaluateOnNewDocument", `{"source":"window.x=1"}`, false},
		{ro, "Page.addScriptToEvaluateOnNewDocument", `{"source":"","worldName":"util"}`, true},
		{ro, "Page.addScriptToEvaluateOnNewDocument", `{"source":"a","source":""}`, false},
		{ro, "Runtime.enable", ``, true},
		{ro, "Emulation.setDeviceMetricsOverride", `{"width":1}`, false},
		{ro, "Runtime.addBinding", `{"name":"x"}`, false},
		{blind, "Runtime.enable", ``, true},
		{blind, "Page.setLifecycleEventsEnabled", `{"enabled":true}`, true},
		{blind, "Emulation.setDeviceMetricsOverride", `{"width":1}`, false},
		{blind, "Runtime.addBinding", `{"name":"x"}`, false},
		{full, "Runtime.addBinding", `{"name":"x"}`, true},
		{full, "Target.setAutoAttach", `{"autoAttach":true,"waitForDebuggerOnStart":true}`, false}, // not flat: the relay's own rule
	}
	for _, tt := range tests {
		in.Lock()
		tb.Acc = tt.acc
		in.Unlock()
		var params []byte
		if tt.params != "" {
			params = []byte(tt.params)
		}
		if _, got := cc.JudgeReplayed(tb, tb.Session, replay.Cmd{Method: tt.method, Params: params}); got != tt.want {
			t.Errorf("%v %s %s: %t, want %t", tt.acc.Level, tt.method, tt.params, got, tt.want)
		}
	}
}

// denyPolicy denies the methods it lists.
type denyPolicy map[string]bool

func (p denyPolicy) Command(_, method string, _ []byte) core.Decision {
	if p[method] {
		return core.Decision{Verdict: core.Deny, Rule: "method:" + method, Message: "Denied by cdprelay policy: " + method}
	}
	return core.Decision{}
}
func (denyPolicy) MethodURL(string, string, string, bool) core.Decision { return core.Decision{} }
func (denyPolicy) URL(string, string) core.Decision                     { return core.Decision{} }
func (denyPolicy) FencesNavigation(string) bool                         { return false }
func (denyPolicy) UploadDirs(string) []string                           { return nil }

// TestResumeReplayAsksThePolicyNow: a setting the policy denies since it
// was first sent (a reload) is not set again when the tab is resumed; the
// client is told, and the refusal is audited. The rest is set again.
func TestResumeReplayAsksThePolicyNow(t *testing.T) {
	t.Parallel()
	rec := &auditRecorder{}
	h := newHarness(t, config.Config{Policy: denyPolicy{}, Observer: rec})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Features: ourFeatures})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Log.enable", nil)
	h.call(c, sess, "Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{"X-Planted": "1"}})
	h.call(c, sess, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 800, "height": 600, "deviceScaleFactor": 1, "mobile": false})

	h.srv.SetPolicy(denyPolicy{"Network.setExtraHTTPHeaders": true})
	from, before := len(c.Messages()), len(e.Commands())
	e.DetachByBrowser(1, "target_closed", map[string]any{"cause": "extension_frame", "cleared": true, "guard": true})
	h.waitFor("the resume", func() bool { return rec.find(api.KindAttach, "resumed") })

	var got []string
	for _, cmd := range commandsSince(e, before) {
		if cmd.Method == "chrome.debugger.sendCommand" {
			got = append(got, string(cmd.Params))
		}
	}
	sent := strings.Join(got, "\n")
	if strings.Contains(sent, "setExtraHTTPHeaders") {
		t.Errorf("a setting the policy denies now was set again:\n%s", sent)
	}
	if !strings.Contains(sent, "Emulation.setDeviceMetricsOverride") || !strings.Contains(sent, "Log.enable") {
		t.Errorf("the rest was not set again:\n%s", sent)
	}
	h.waitFor("the client told", func() bool {
		for _, m := range c.Messages()[from:] {
			if m.Method == "Log.entryAdded" && strings.Contains(string(m.Params), "Network.setExtraHTTPHeaders was not set again") {
				return true
			}
		}
		return false
	})
	if !rec.find(api.KindDenied, "Denied by cdprelay policy: Network.setExtraHTTPHeaders") {
		t.Errorf("the refusal is not audited: %+v", rec.ev)
	}
}

// attachGate holds the nth chrome.debugger.attach the fake extension gets
// until release is closed, and counts them.
type attachGate struct {
	mu       sync.Mutex
	attaches int
	nth      int
	release  chan struct{}
}

func holdAttach(nth int) *attachGate { return &attachGate{nth: nth, release: make(chan struct{})} }

func (g *attachGate) gate(method string, _ []json.RawMessage) {
	if method != "chrome.debugger.attach" {
		return
	}
	g.mu.Lock()
	g.attaches++
	n := g.attaches
	g.mu.Unlock()
	if n == g.nth {
		<-g.release
	}
}

// count is how many attaches have come.
func (g *attachGate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.attaches
}
