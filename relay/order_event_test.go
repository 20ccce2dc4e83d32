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
	"github.com/cdprelay/cdprelay/relay/internal/contexts"
	tier "github.com/cdprelay/cdprelay/relay/internal/tiers"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// The order of the events table's rows (order.go, events.go) is a
// security contract as the commands' is (order_command_test.go): each pin
// names the two stages it keeps in order and the swap it catches. Events
// are routed one at a time in the order the extension sent them, so a
// later event that arrives is the sign that an earlier one was decided.

// viewLog records what a live view's tab handle receives.
type viewLog struct {
	mu sync.Mutex
	ev []api.TabEvent
}

func (l *viewLog) add(ev api.TabEvent) {
	l.mu.Lock()
	l.ev = append(l.ev, ev)
	l.mu.Unlock()
}

// has reports whether the handle got method with s in its params.
func (l *viewLog) has(method, s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range l.ev {
		if ev.Method == method && strings.Contains(string(ev.Params), s) {
			return true
		}
	}
	return false
}

// clientSaw reports whether c got a message after index from with s in it.
func clientSaw(c *cdptest.Client, from int, s string) bool {
	for _, m := range c.Messages()[from:] {
		if strings.Contains(string(m.Raw), s) {
			return true
		}
	}
	return false
}

// sentOnSession reports whether CDP method reached child session sid of a tab
// after index from.
func sentOnSession(e *fakeext.Ext, from int, method, sid string) bool {
	for _, c := range e.Commands()[from:] {
		var args []json.RawMessage
		var call cdpCall
		if c.Method != "chrome.debugger.sendCommand" || json.Unmarshal(c.Params, &args) != nil || len(args) < 2 {
			continue
		}
		if json.Unmarshal(args[0], &call.Debuggee) == nil && json.Unmarshal(args[1], &call.Method) == nil && call.Method == method && call.Debuggee.SessionID == sid {
			return true
		}
	}
	return false
}

func TestEventOrderPins(t *testing.T) {
	// The blind check before the screencast's routing: a frame of a blind
	// tab, or of a tab with a blind frame in it, reaches neither the live
	// view nor the client's own screencast. Catches the screencast's
	// routing to the live view's handles done before the blind check: the
	// person watching would see the pixels of a page that is hidden from
	// automation, and from the live view with it. (The client's copy is
	// withheld by the later blind check as well.)
	t.Run("the blind check before the screencast", func(t *testing.T) {
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers}})
		e := h.ext(fakeext.Options{Tabs: twoTabs})
		c := h.client()
		sess := h.autoAttach(c)
		in := h.srv.Default()
		views := []*viewLog{{}, {}}
		for i, l := range views {
			th, err := OpenTab(context.Background(), in, int64(i+1), l.add)
			if err != nil {
				t.Fatal(err)
			}
			defer th.Close()
		}
		h.call(c, sess[0], "Page.startScreencast", map[string]any{"format": "jpeg"})
		frame := func(tab int, data string) {
			e.Event(tab, "", "Page.screencastFrame", map[string]any{"data": data, "metadata": map[string]any{}, "sessionId": 1})
		}
		from := len(c.Messages())
		// A blind frame in tab 1, whose screencast is the client's.
		e.Event(1, "", "Page.frameNavigated", map[string]any{"frame": map[string]any{"id": "SUB", "parentId": tid(1), "url": "https://blind.example/embed",
			"loaderId": "L", "securityOrigin": "https://blind.example", "mimeType": "text/html"}, "type": "Navigation"})
		frame(1, "PIXELS-of-a-blind-frame")
		e.Event(1, "", "Page.frameDetached", map[string]any{"frameId": "SUB", "reason": "remove"})
		frame(1, "tab-1-again")
		// Tab 2 goes blind: the live view's screencast alone.
		e.Navigate(2, "https://blind.example/", "B")
		frame(2, "PIXELS-of-a-blind-tab")
		e.Navigate(2, "https://b.example/", "B")
		frame(2, "tab-2-again")
		h.waitFor("the frames after", func() bool {
			return views[0].has("Page.screencastFrame", "tab-1-again") && views[1].has("Page.screencastFrame", "tab-2-again") && clientSaw(c, from, "tab-1-again")
		})
		for i, l := range views {
			if l.has("Page.screencastFrame", "PIXELS") {
				t.Errorf("the live view of tab %d got a blind page's pixels", i+1)
			}
		}
		if clientSaw(c, from, "PIXELS") {
			t.Error("the client got a blind page's pixels")
		}
	})

	// Following the page before anything of it is delivered: the event
	// that takes a tab to a page that is never shared (an extension's own
	// page) is the last the relay routes for it, and does not reach the
	// client itself. Catches delivery before the page tracking: the client
	// would hear where the tab went.
	t.Run("page tracking before delivery", func(t *testing.T) {
		h := newHarness(t, config.Config{})
		e := h.ext(fakeext.Options{Tabs: twoTabs})
		c := h.client()
		sess := h.autoAttach(c)
		h.call(c, sess[0], "Page.enable", nil)
		// The client hears Runtime events where it enabled Runtime
		// (runtimehold.go): on both tabs, so that the first tab's would
		// reach it too.
		for _, s := range sess {
			h.call(c, s, "Runtime.enable", nil)
		}
		before, from := len(e.Commands()), len(c.Messages())
		e.Event(1, "", "Page.frameStartedNavigating", map[string]any{"frameId": tid(1), "url": "chrome-extension://abcdefghijklmnopabcdefghijklmnop/options.html?token=x",
			"loaderId": "L", "navigationType": "differentDocument"})
		e.Event(1, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{map[string]any{"type": "string", "value": "said by the extension's page"}}})
		e.Event(2, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{map[string]any{"type": "string", "value": "tab 2"}}})
		h.waitFor("tab 2's event", func() bool { return clientSaw(c, from, "tab 2") })
		h.waitFor("the tab let go", func() bool { return indexOf(extMethods(e, before), "chrome.debugger.detach") >= 0 })
		for _, m := range c.Messages()[from:] {
			if m.Method == "Page.frameStartedNavigating" || strings.Contains(string(m.Raw), "said by the extension's page") || strings.Contains(string(m.Raw), "token=x") {
				t.Errorf("the client got %s", m.Raw)
			}
		}
	})

	// The relay's own world before the world tracking: the isolated world
	// the relay makes for itself (package look) is not tracked as one of
	// the client's, gets no read-only guard, and the client is not told of
	// it. Catches the tracking run first: the guard would go into the
	// relay's world (and break its probes), and a client that names that
	// world's context id would run script there as in a guarded world of
	// its own, without V8's side-effect check.
	t.Run("the relay's own world before the world tracking", func(t *testing.T) {
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers}})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ro.example/", Title: "RO"}}})
		c := h.client()
		sess := h.autoAttach(c)[0]
		h.call(c, sess, "Runtime.enable", nil)
		before, from := len(e.Commands()), len(c.Messages())
		world := func(id int, name string) {
			e.Event(1, "", "Runtime.executionContextCreated", map[string]any{"context": map[string]any{"id": id, "origin": "https://ro.example", "name": name,
				"uniqueId": fmt.Sprint("u", id), "auxData": map[string]any{"isDefault": false, "type": "isolated", "frameId": tid(1)}}})
		}
		world(55, contexts.RelayWorldPrefix+"-0123456789abcdef")
		world(56, "util")
		h.waitFor("the guard in the client's world", func() bool { return indexOf(cdpSent(e, before), `Runtime.evaluate {"contextId":56`) >= 0 })
		if indexOf(cdpSent(e, before), `Runtime.evaluate {"contextId":55`) >= 0 {
			t.Error("the guard went into the relay's world")
		}
		h.event(c, from, "Runtime.executionContextCreated")
		if clientSaw(c, from, `"id":55`) {
			t.Error("the client was told of the relay's world")
		}
		// Naming the relay's world is answered as Chrome answers a context
		// that does not exist (the tiers' contexts.go); the client's own world takes
		// its script.
		before = len(e.Commands())
		if m := h.callMsg(c, sess, "Runtime.evaluate", map[string]any{"expression": "window.x = 1", "contextId": 55}); m.Error == nil || m.Error.Message != tier.MsgNoContext {
			t.Errorf("script in the relay's world: %s", m.Raw)
		}
		if sent := cdpSent(e, before); len(sent) != 0 {
			t.Errorf("script in the relay's world on a read-only tab went as %q", sent)
		}
		h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "document.title", "contextId": 56})
		if sent := cdpSent(e, before); len(sent) != 1 || !strings.Contains(sent[0], `"contextId":56`) || strings.Contains(sent[0], "throwOnSideEffect") {
			t.Errorf("script in the client's guarded world went as %q", sent)
		}
	})

	// The backstop before letting the page go on: while stopped, a paused
	// navigation is still judged by the URL fence, and one it refuses is
	// failed. Catches the stopped automation's "let the request go on"
	// run before the backstop: a navigation the fence refuses would be
	// continued for as long as a person holds the automation stopped.
	t.Run("the backstop before letting the page go on", func(t *testing.T) {
		rec := &auditRecorder{}
		h := newHarness(t, config.Config{Policy: orderPolicy{fence: true, denyURL: "evil"}, Observer: rec})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ok.test/"}}})
		c := h.client()
		h.autoAttach(c)
		if err := h.srv.Default().Stop("person"); err != nil {
			t.Fatal(err)
		}
		// The Stop's undoing (person's stopundo.go) ends with the tab attached
		// again, and fenced again.
		h.waitFor("the Stop's undoing", func() bool { return rec.find(api.KindStop, "the Stop by person undid") })
		before := len(e.Commands())
		e.Event(1, "", "Fetch.requestPaused", paused("R1", "https://evil.test/", "Document"))
		e.Event(1, "", "Fetch.requestPaused", paused("R2", "https://ok.test/next", "Document"))
		h.waitFor("both answered", func() bool { return len(cdpSent(e, before)) == 2 })
		sent := cdpSent(e, before)
		if !strings.HasPrefix(sent[0], "Fetch.failRequest") || !strings.Contains(sent[0], `"R1"`) || !strings.Contains(sent[0], "BlockedByClient") ||
			!strings.HasPrefix(sent[1], "Fetch.continueRequest") || !strings.Contains(sent[1], `"R2"`) {
			t.Fatalf("sent %q", sent)
		}
	})

	// Letting the page go on before the client's session is looked up and
	// before delivery: what nobody the client knows of may answer (a blind
	// tab's paused request or debugger pause, every one while stopped) is
	// answered by the relay, whether or not a client is there, and is not
	// delivered. Catches the session lookup (no client: nothing to do) or
	// the delivery run first: the person's page would hang on a request or
	// a pause nobody answers, or the client would see what it may not
	// answer.
	t.Run("letting the page go on before the session and delivery", func(t *testing.T) {
		t.Run("no client", func(t *testing.T) {
			h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers}})
			e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/", Title: "B"}}})
			h.waitFor("the tab", func() bool { return len(h.srv.Default().Status().Tabs) == 1 })
			before := len(e.Commands())
			e.Event(1, "", "Fetch.requestPaused", paused("R1", "https://blind.example/x", "XHR"))
			e.Event(1, "", "Debugger.paused", map[string]any{"reason": "other", "callFrames": []any{}})
			h.waitFor("the relay lets the page go on", func() bool {
				return indexOf(cdpSent(e, before), `Fetch.continueRequest {"requestId":"R1"}`) >= 0 && indexOf(cdpSent(e, before), "Debugger.resume") >= 0
			})
		})
		t.Run("stopped", func(t *testing.T) {
			rec := &auditRecorder{}
			h := newHarness(t, config.Config{Observer: rec})
			e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
			c := h.client()
			sess := h.autoAttach(c)[0]
			// The client listens to what it is not to get: it enabled the
			// Debugger, whose pauses it would then hear (person's brake.go), and
			// Runtime, whose event is the sign the others were routed.
			h.call(c, sess, "Debugger.enable", nil)
			h.call(c, sess, "Runtime.enable", nil)
			if err := h.srv.Default().Stop("person"); err != nil {
				t.Fatal(err)
			}
			// The Stop's undoing (person's stopundo.go) ends with the tab attached
			// again.
			h.waitFor("the Stop's undoing", func() bool { return rec.find(api.KindStop, "the Stop by person undid") })
			before, from := len(e.Commands()), len(c.Messages())
			e.Event(1, "", "Debugger.paused", map[string]any{"reason": "other", "callFrames": []any{map[string]any{"functionName": "pausedWhileStopped"}}})
			e.Event(1, "", "Fetch.authRequired", map[string]any{"requestId": "A1", "request": map[string]any{"url": "https://a.example/"}, "authChallenge": map[string]any{"source": "Server", "origin": "https://a.example", "scheme": "basic", "realm": "r"}})
			e.Event(1, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{}})
			h.event(c, from, "Runtime.consoleAPICalled")
			h.waitFor("the relay lets the page go on", func() bool {
				return indexOf(cdpSent(e, before), "Debugger.resume") >= 0 && indexOf(cdpSent(e, before), "Fetch.continueWithAuth") >= 0
			})
			for _, m := range c.Messages()[from:] {
				if m.Method == "Debugger.paused" || m.Method == "Fetch.authRequired" {
					t.Errorf("the client got %s", m.Raw)
				}
			}
		})
	})

	// The session table kept before a blind tab's event is withheld: a
	// frame or worker that attaches in a blind tab, waiting for a
	// debugger, is resumed by the relay and not announced. Catches the
	// withholding run before the child sessions are handled: the child
	// would never be resumed, and the person's page would wait for it.
	t.Run("the child sessions before withholding", func(t *testing.T) {
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers}})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/", Title: "B"}, {ID: 2, URL: "https://a.example/", Title: "A"}}})
		c := h.client()
		sess := h.autoAttach(c)
		h.call(c, sess[1], "Runtime.enable", nil) // the sign below is a Runtime event
		before, from := len(e.Commands()), len(c.Messages())
		e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": "S-W", "waitingForDebugger": true,
			"targetInfo": map[string]any{"targetId": "W1", "type": "worker", "url": "https://a.example/w.js", "title": "", "attached": true}})
		e.Event(2, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{}})
		h.event(c, from, "Runtime.consoleAPICalled")
		// What the first event had the relay send went to the extension
		// before the second was read; a round trip through the same
		// socket brings it to the fake.
		h.call(c, sess[1], "Runtime.evaluate", map[string]any{"expression": "1"})
		if !sentOnSession(e, before, "Runtime.runIfWaitingForDebugger", "S-W") {
			t.Errorf("the relay did not resume the blind tab's worker: %q", cdpSent(e, before))
		}
		if clientSaw(c, from, "S-W") {
			t.Error("the client heard of a blind tab's worker")
		}
	})

	// The child's fence before it runs: an out-of-process frame that
	// attaches waiting for a debugger gets the backstop's Fetch.enable
	// before the client's Runtime.runIfWaitingForDebugger lets it load.
	// Catches the fence sent after the event's lock is released and after
	// the client could answer it: the frame's first document request would
	// leave unjudged.
	t.Run("the child's fence before it runs", func(t *testing.T) {
		h := newHarness(t, config.Config{Policy: orderPolicy{fence: true, denyURL: "evil"}})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ok.test/"}}})
		c := h.client()
		sess := h.autoAttach(c)[0]
		h.call(c, sess, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
		before, from := len(e.Commands()), len(c.Messages())
		e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": "S-F", "waitingForDebugger": true,
			"targetInfo": map[string]any{"targetId": "F1", "type": "iframe", "url": "https://ok.test/frame", "title": "", "attached": true}})
		h.event(c, from, "Target.attachedToTarget")
		h.call(c, "S-F", "Runtime.runIfWaitingForDebugger", nil)
		var onChild []string
		for _, cmd := range commandsSince(e, before) {
			var args []json.RawMessage
			var call cdpCall
			if cmd.Method != "chrome.debugger.sendCommand" || json.Unmarshal(cmd.Params, &args) != nil || len(args) < 2 {
				continue
			}
			if json.Unmarshal(args[0], &call.Debuggee) == nil && json.Unmarshal(args[1], &call.Method) == nil && call.Debuggee.SessionID == "S-F" {
				onChild = append(onChild, call.Method)
			}
		}
		fence, run := indexOf(onChild, "Fetch.enable"), indexOf(onChild, "Runtime.runIfWaitingForDebugger")
		if fence < 0 || run < 0 || fence > run {
			t.Fatalf("sent on the frame's session: %q", onChild)
		}
	})

	// Following the page before withholding: a blind tab's dialog is
	// withheld from the client, yet followed: the relay answers it when
	// nobody does, and the audit log records it. Catches the withholding
	// run before the page tracking: the dialog would not be known, nobody
	// would answer it, and the person's page would wait.
	t.Run("page tracking before withholding", func(t *testing.T) {
		rec := &auditRecorder{}
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers}, DialogTimeout: 50 * time.Millisecond, Observer: rec})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/", Title: "B"}}})
		c := h.client()
		h.autoAttach(c)
		before, from := len(e.Commands()), len(c.Messages())
		e.Event(1, "", "Page.javascriptDialogOpening", map[string]any{"url": "https://blind.example/", "message": "secret question", "type": "confirm", "hasBrowserHandler": false, "defaultPrompt": ""})
		h.waitFor("the relay answers the dialog", func() bool { return indexOf(cdpSent(e, before), "Page.handleJavaScriptDialog") >= 0 })
		if !rec.find(api.KindDialog, "opened confirm on https://blind.example") {
			t.Errorf("the dialog is not audited: %+v", auditedEvents(rec))
		}
		if clientSaw(c, from, "secret question") {
			t.Error("the client got a blind tab's dialog")
		}
	})

	// Withholding before the browser's download events: a blind tab's
	// download is not reported to a client that asked for download
	// events. Catches the download events (Browser.downloadWillBegin,
	// made from the tab's Page event) sent before the withholding: the
	// client would learn what the blind page downloads.
	t.Run("withholding before the download events", func(t *testing.T) {
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers}})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/", Title: "B"}, {ID: 2, URL: "https://a.example/", Title: "A"}}})
		c := h.client()
		h.autoAttach(c)
		h.call(c, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": t.TempDir(), "eventsEnabled": true})
		from := len(c.Messages())
		e.Event(1, "", "Page.downloadWillBegin", map[string]any{"frameId": tid(1), "guid": "G1", "url": "https://blind.example/statement.pdf", "suggestedFilename": "statement-secret.pdf"})
		e.Event(2, "", "Page.downloadWillBegin", map[string]any{"frameId": tid(2), "guid": "G2", "url": "https://a.example/report.pdf", "suggestedFilename": "report.pdf"})
		h.waitFor("tab 2's download", func() bool { return clientSaw(c, from, `"G2"`) })
		if clientSaw(c, from, `"G1"`) || clientSaw(c, from, "statement-secret") {
			t.Error("the client heard of a blind tab's download")
		}
	})

	// Redaction before the copies: a further session on the tab (one the
	// client attached beside its first) gets the redacted params, as the
	// first does. Catches the copies to further sessions made before the
	// redaction, from the params as Chrome sent them.
	t.Run("redaction before the copies to further sessions", func(t *testing.T) {
		h := newHarness(t, config.Config{})
		e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
		c := h.client()
		sess := h.autoAttach(c)[0]
		other := jsonString(t, h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true}), "sessionId")
		h.call(c, other, "Network.enable", nil)
		from := len(c.Messages())
		e.Event(1, "", "Network.requestWillBeSentExtraInfo", map[string]any{"requestId": "R1", "associatedCookies": []any{},
			"headers": map[string]string{"Cookie": "sid=the-persons-session", "Accept": "*/*"}})
		got := map[string]bool{}
		h.waitFor("both sessions' copies", func() bool {
			for _, m := range c.Messages()[from:] {
				if m.Method == "Network.requestWillBeSentExtraInfo" {
					got[m.SessionID] = true
				}
			}
			return got[sess] && got[other]
		})
		if clientSaw(c, from, "the-persons-session") {
			t.Error("a session got the person's cookie")
		}
	})

	// The secret lock last, on every way out: once a secret is typed,
	// whatever reaches the client has its value replaced by the reference:
	// an event, its copy to a further session, a download event the relay
	// makes from the tab's, a result and an error. Catches a way to the
	// client that does not end in the outbound filter (or a filter run
	// before a stage that rebuilds the message).
	t.Run("the secret lock on every way out", func(t *testing.T) {
		const value = "correct horse battery staple"
		page := newFakePage(1, "https://a.example")
		page.setFocus(passwordField(tid(1)))
		focus := page.handle
		h := newHarness(t, config.Config{Secrets: staticSecrets(t)})
		e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
			switch {
			case method == "Runtime.evaluate" && strings.Contains(string(p), "read it back"):
				return map[string]any{"result": map[string]any{"type": "string", "value": "the field holds " + value}}, nil
			case method == "DOM.getDocument":
				return nil, fakeext.CDPError(-32000, "no node holds "+value)
			}
			return focus(tabID, sid, method, p)
		}})
		page.e.Store(e)
		c := h.client()
		sess := h.autoAttach(c)[0]
		other := jsonString(t, h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true}), "sessionId")
		h.call(c, sess, "Runtime.enable", nil)
		h.call(c, other, "Runtime.enable", nil)
		h.call(c, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": t.TempDir(), "eventsEnabled": true})
		h.call(c, sess, "Input.insertText", map[string]any{"text": "{{secret:github}}"})
		from := len(c.Messages())
		e.Event(1, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{map[string]any{"type": "string", "value": "echo: " + value}}})
		e.Event(1, "", "Page.downloadWillBegin", map[string]any{"frameId": tid(1), "guid": "G1", "url": "https://a.example/x", "suggestedFilename": value + ".txt"})
		h.waitFor("the event on both sessions and the download", func() bool {
			n := 0
			for _, m := range c.Messages()[from:] {
				if m.Method == "Runtime.consoleAPICalled" || m.Method == "Browser.downloadWillBegin" {
					n++
				}
			}
			return n == 3
		})
		res := h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "read it back"})
		m := h.callMsg(c, sess, "DOM.getDocument", nil)
		for _, got := range append([][]byte{res, m.Raw}, rawFrames(c.Messages()[from:])...) {
			if strings.Contains(string(got), value) {
				t.Errorf("the client got the secret: %s", got)
			}
		}
		if !strings.Contains(string(res), "{{secret:github}}") || m.Error == nil || !strings.Contains(m.Error.Message, "{{secret:github}}") {
			t.Errorf("the result %s and the error %s", res, m.Raw)
		}
	})
}

func rawFrames(ms []cdptest.Message) [][]byte {
	out := make([][]byte, len(ms))
	for i, m := range ms {
		out[i] = m.Raw
	}
	return out
}

// extMethods lists the extension's own commands after index from
// (chrome.debugger.attach, chrome.tabs.create, ...), in order.
func extMethods(e *fakeext.Ext, from int) []string {
	var out []string
	for _, c := range e.Commands()[from:] {
		out = append(out, c.Method)
	}
	return out
}
