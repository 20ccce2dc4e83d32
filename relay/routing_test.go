package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay/internal/config"
)

// received is one command as a fake tab got it.
type received struct {
	tabID     int
	sessionID string
	method    string
	params    string // the bytes exactly as they reached the extension
}

// recorder is a fakeext.Handler that keeps what it receives, answering
// with answer when set and DefaultHandler otherwise.
type recorder struct {
	mu     sync.Mutex
	got    []received
	answer func(r received) (any, error)
}

func (r *recorder) handle(tabID int, sessionID, method string, params json.RawMessage) (any, error) {
	rc := received{tabID, sessionID, method, string(params)}
	r.mu.Lock()
	r.got = append(r.got, rc)
	answer := r.answer
	r.mu.Unlock()
	if answer != nil {
		return answer(rc)
	}
	return fakeext.DefaultHandler(tabID, sessionID, method, params)
}

func (r *recorder) all() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// lastOf is the last command of method the tabs received. (Not simply
// the last one: the fake extension answers each command on a goroutine
// of its own, so a command of the relay's own sent just before, as it
// attached a tab, may be recorded after the client's.)
func (r *recorder) lastOf(t *testing.T, method string) received {
	t.Helper()
	all := r.all()
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].method == method {
			return all[i]
		}
	}
	t.Fatalf("the tabs received no %s: %+v", method, all)
	return received{}
}

func TestParamsForwardedAsOriginalBytes(t *testing.T) {
	t.Parallel()
	rec := &recorder{answer: func(received) (any, error) {
		// Compact, so that the fake's re-encoding keeps it byte for byte.
		return json.RawMessage(`{"z":"\u00e9","a":[1,2]}`), nil
	}}
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: rec.handle})
	c := h.client()
	h.autoAttach(c)

	tests := []struct {
		name       string
		frame      string
		id         int64
		method     string
		params     string // "" when the tab must get none
		wantToExt  string // the sendCommand arguments after the debuggee
		wantReplyS string
	}{
		{
			name:      "odd whitespace, key order and escapes",
			frame:     "{ \"params\" : { \"b\" : [1, 2 ,3],\n\t\"a\":\"\\u00e9\\ud83d\\ude00 \\\"q\\\"\", \"n\": 1.50e3 } , \"method\":\"DOM.describeNode\",\"sessionId\":\"pw-tab-2\", \"id\": 7 }",
			id:        7,
			method:    "DOM.describeNode",
			params:    "{ \"b\" : [1, 2 ,3],\n\t\"a\":\"\\u00e9\\ud83d\\ude00 \\\"q\\\"\", \"n\": 1.50e3 }",
			wantToExt: "\"DOM.describeNode\",{ \"b\" : [1, 2 ,3],\n\t\"a\":\"\\u00e9\\ud83d\\ude00 \\\"q\\\"\", \"n\": 1.50e3 }]}",
		},
		{
			name:      "compact, with characters encoding/json would escape",
			frame:     `{"id":8,"sessionId":"pw-tab-2","method":"Page.navigate","params":{"url":"https://x.example/?a=<b>&c=d","referrer":"é"}}`,
			id:        8,
			method:    "Page.navigate",
			params:    `{"url":"https://x.example/?a=<b>&c=d","referrer":"é"}`,
			wantToExt: `"Page.navigate",{"url":"https://x.example/?a=<b>&c=d","referrer":"é"}]}`,
		},
		{
			name:      "no params",
			frame:     `{"id":9,"sessionId":"pw-tab-2","method":"Page.enable"}`,
			id:        9,
			method:    "Page.enable",
			wantToExt: `"Page.enable"]}`,
		},
		{
			name:      "null params are no params",
			frame:     `{"id":10,"sessionId":"pw-tab-2","method":"Page.enable","params":null}`,
			id:        10,
			method:    "Page.enable",
			wantToExt: `"Page.enable"]}`,
		},
		{
			name:      "escaped method name",
			frame:     `{"id":11,"sessionId":"pw-tab-2","method":"Page.\u0065nable","params":{}}`,
			id:        11,
			method:    "Page.enable",
			params:    `{}`,
			wantToExt: `"Page.enable",{}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(e.Commands())
			if err := c.WriteRaw([]byte(tt.frame)); err != nil {
				t.Fatal(err)
			}
			m, _ := h.reply(c, tt.id)
			if want := fmt.Sprintf(`{"id":%d,"sessionId":"pw-tab-2","result":{"z":"\u00e9","a":[1,2]}}`, tt.id); string(m.Raw) != want {
				t.Errorf("reply\n got %s\nwant %s", m.Raw, want)
			}
			got := rec.lastOf(t, tt.method)
			if want := (received{2, "", tt.method, tt.params}); got != want {
				t.Errorf("the tab got %+v, want %+v", got, want)
			}
			cmds := commandsSince(e, before)
			if len(cmds) != 1 {
				t.Fatalf("commands: %+v", cmds)
			}
			raw := string(cmds[0].Raw)
			_, rest, _ := strings.Cut(raw, ",")
			if want := `"method":"chrome.debugger.sendCommand","params":[{"tabId":2},` + tt.wantToExt; rest != want {
				t.Errorf("frame to the extension\n got %s\nwant {\"id\":N,%s", raw, want)
			}
		})
	}
}

func TestTabErrorsReachTheClient(t *testing.T) {
	t.Parallel()
	var relayPageEnable sync.Once
	rec := &recorder{answer: func(r received) (any, error) {
		if r.method == "DOM.getDocument" {
			return nil, fakeext.CDPError(-32602, "Invalid parameters")
		}
		if r.method == "Page.enable" {
			// The first is the relay's own, as it attaches the tab.
			ok := false
			relayPageEnable.Do(func() { ok = true })
			if ok {
				return map[string]any{}, nil
			}
		}
		if r.method == "Runtime.enable" && r.sessionID == "" {
			return map[string]any{}, nil // the relay's own, as it attaches the tab
		}
		return nil, errors.New("Debugger is not attached to the tab with id: 1.")
	}}
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs, Handler: rec.handle})
	c := h.client()
	h.autoAttach(c)
	m := h.callMsg(c, "pw-tab-1", "DOM.getDocument", map[string]any{"depth": "x"})
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":"pw-tab-1","error":{"code":-32602,"message":"Invalid parameters"}}`, *m.ID))
	m = h.callMsg(c, "pw-tab-1", "Page.enable", nil)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":"pw-tab-1","error":{"code":-32000,"message":"Debugger is not attached to the tab with id: 1."}}`, *m.ID))
}

func TestRootCommandsGoToLowestAttachedTab(t *testing.T) {
	t.Parallel()
	rec := &recorder{answer: func(r received) (any, error) {
		return map[string]any{"cookies": []any{}}, nil
	}}
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 5, URL: "https://five.example/"}, {ID: 3, URL: "https://three.example/"}, {ID: 9, URL: "https://nine.example/"}}, Handler: rec.handle})
	c := h.client()

	// Nothing attached: nobody to ask.
	m := h.callMsg(c, "", "Storage.getCookies", nil)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"error":{"code":-32000,"message":"cdprelay: Storage.getCookies needs a page, and no tab is attached"}}`, *m.ID))
	if got := rec.all(); len(got) != 0 {
		t.Fatalf("the tabs got %+v", got)
	}

	h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(9), "flatten": true})
	h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(5), "flatten": true})
	// The reply is the root's own: no sessionId, or the client would look
	// for the command on a page session and wait forever.
	m = h.callMsg(c, "", "Storage.getCookies", map[string]any{})
	if want := fmt.Sprintf(`{"id":%d,"result":{"cookies":[]}}`, *m.ID); string(m.Raw) != want {
		t.Errorf("reply\n got %s\nwant %s", m.Raw, want)
	}
	if got, want := rec.lastOf(t, "Storage.getCookies"), (received{5, "", "Storage.getCookies", "{}"}); got != want {
		t.Errorf("the tab got %+v, want %+v", got, want)
	}
	// Errors too.
	rec.mu.Lock()
	rec.answer = func(received) (any, error) { return nil, fakeext.CDPError(-32601, "'Storage.nope' wasn't found") }
	rec.mu.Unlock()
	m = h.callMsg(c, "", "Storage.nope", nil)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"error":{"code":-32601,"message":"'Storage.nope' wasn't found"}}`, *m.ID))
}

func TestChildSessions(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: rec.handle})
	c := h.client()
	h.autoAttach(c)
	at := len(c.Messages())

	next := func(what string) []byte {
		t.Helper()
		m, i, err := c.WaitMessage(h.ctx, at, func(cdptest.Message) bool { return true })
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		at = i + 1
		return m.Raw
	}

	// A cross-origin frame attaches under the tab's own auto-attach.
	frameInfo := `{"targetId":"FRAME1","type":"iframe","title":"","url":"https://ads.example/","attached":true,"canAccessOpener":false,"browserContextId":"FAKECONTEXT0000000000000000000000"}`
	e.Event(1, "", "Target.attachedToTarget", json.RawMessage(`{"sessionId":"CHILD1","targetInfo":`+frameInfo+`,"waitingForDebugger":true}`))
	if want := `{"method":"Target.attachedToTarget","sessionId":"pw-tab-1","params":{"sessionId":"CHILD1","targetInfo":` + frameInfo + `,"waitingForDebugger":true}}`; string(next("the child's attach")) != want {
		t.Fatalf("child attach not forwarded as is; want %s", want)
	}

	// The relay follows the child's contexts: Runtime on, before anything
	// of the client's reaches the child.
	h.waitFor("the relay's Runtime.enable on the frame", func() bool {
		for _, r := range rec.all() {
			if r == (received{1, "CHILD1", "Runtime.enable", ""}) {
				return true
			}
		}
		return false
	})
	m := h.callMsg(c, "CHILD1", "Runtime.runIfWaitingForDebugger", nil)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":"CHILD1","result":{"echo":{"tabId":1,"sessionId":"CHILD1","method":"Runtime.runIfWaitingForDebugger","params":null}}}`, *m.ID))
	if got, want := lastNotBrake(t, rec), (received{1, "CHILD1", "Runtime.runIfWaitingForDebugger", ""}); got != want {
		t.Errorf("the tab got %+v, want %+v", got, want)
	}
	cmds := e.Commands()
	for strings.Contains(string(cmds[len(cmds)-1].Params), `"Debugger.`) {
		cmds = cmds[:len(cmds)-1] // the relay's own Debugger (person's brake.go)
	}
	mustMatch(t, cmds[len(cmds)-1].Params, `[{"tabId":1,"sessionId":"CHILD1"},"Runtime.runIfWaitingForDebugger"]`)

	// The client hears of its contexts once it enables Runtime there (the
	// relay keeps Runtime on in Chrome for itself).
	h.call(c, "CHILD1", "Runtime.enable", nil)
	e.Event(1, "CHILD1", "Runtime.executionContextCreated", map[string]any{"context": map[string]any{"id": 1}})
	if raw := next("a child event"); string(raw) != `{"method":"Runtime.executionContextCreated","sessionId":"CHILD1","params":{"context":{"id":1}}}` {
		t.Fatalf("child event: %s", raw)
	}

	// A worker of the frame: a child of the child, on the same tab.
	e.Event(1, "CHILD1", "Target.attachedToTarget", map[string]any{"sessionId": "CHILD2", "targetInfo": map[string]any{"targetId": "WORKER1", "type": "worker"}, "waitingForDebugger": false})
	mustMatch(t, next("the grandchild's attach"), `{"method":"Target.attachedToTarget","sessionId":"CHILD1","params":{"sessionId":"CHILD2","targetInfo":{"targetId":"WORKER1","type":"worker"},"waitingForDebugger":false}}`)
	// The relay turned Runtime on there itself as the child attached; the
	// client's switch is the relay's to answer.
	h.waitFor("the relay's Runtime.enable on the worker", func() bool {
		return lastNotBrake(t, rec) == (received{1, "CHILD2", "Runtime.enable", ""})
	})
	h.call(c, "CHILD2", "Runtime.enable", map[string]any{})
	e.Event(1, "CHILD2", "Runtime.consoleAPICalled", map[string]any{"type": "log"})
	mustMatch(t, next("a grandchild event"), `{"method":"Runtime.consoleAPICalled","sessionId":"CHILD2","params":{"type":"log"}}`)

	// Playwright lets go of a child it does not want by sending
	// Target.detachFromTarget on the parent's session: that is Chrome's
	// business, on that parent.
	m = h.callMsg(c, "CHILD1", "Target.detachFromTarget", map[string]any{"sessionId": "CHILD2"})
	if m.Error != nil {
		t.Fatalf("detach of a grandchild: %s", m.Raw)
	}
	if got, want := rec.lastOf(t, "Target.detachFromTarget"), (received{1, "CHILD1", "Target.detachFromTarget", `{"sessionId":"CHILD2"}`}); got != want {
		t.Errorf("the tab got %+v, want %+v", got, want)
	}
	m = h.callMsg(c, "pw-tab-1", "Target.detachFromTarget", map[string]any{"sessionId": "CHILD1"})
	if m.Error != nil {
		t.Fatalf("detach of a child on the tab's session: %s", m.Raw)
	}
	if got, want := rec.lastOf(t, "Target.detachFromTarget"), (received{1, "", "Target.detachFromTarget", `{"sessionId":"CHILD1"}`}); got != want {
		t.Errorf("the tab got %+v, want %+v", got, want)
	}

	// Chrome reports the child gone; from then on it is unknown.
	e.Event(1, "", "Target.detachedFromTarget", map[string]any{"sessionId": "CHILD1", "targetId": "FRAME1"})
	mustMatch(t, next("the child's detach"), `{"method":"Target.detachedFromTarget","sessionId":"pw-tab-1","params":{"sessionId":"CHILD1","targetId":"FRAME1"}}`)
	m = h.callMsg(c, "CHILD1", "Runtime.evaluate", map[string]any{"expression": "1"})
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":"CHILD1","error":{"code":-32001,"message":"Session with given id not found."}}`, *m.ID))
	// Its late events go nowhere; the tab's own still flow.
	e.Event(1, "CHILD1", "Runtime.consoleAPICalled", map[string]any{"type": "late"})
	e.Event(1, "", "Page.loadEventFired", map[string]any{"timestamp": 1})
	mustMatch(t, next("the tab's event"), `{"method":"Page.loadEventFired","sessionId":"pw-tab-1","params":{"timestamp":1}}`)

	// A child id is only good on its own tab.
	e.Event(2, "CHILD1", "Runtime.consoleAPICalled", map[string]any{"type": "wrong tab"})
	e.Event(2, "", "Page.loadEventFired", map[string]any{"timestamp": 2})
	mustMatch(t, next("tab 2's event"), `{"method":"Page.loadEventFired","sessionId":"pw-tab-2","params":{"timestamp":2}}`)
}

func TestEventsWithoutClientSessionAreDropped(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(2), "flatten": true})
	from := len(c.Messages())
	// Tab 1 is shared but nobody attached to it; an unknown tab even less.
	e.Event(1, "", "Page.loadEventFired", map[string]any{"timestamp": 1})
	e.Event(77, "", "Page.loadEventFired", map[string]any{"timestamp": 77})
	e.Event(2, "", "Page.loadEventFired", map[string]any{"timestamp": 2})
	// Events without params still carry an object.
	e.Emit("chrome.debugger.onEvent", map[string]any{"tabId": 2}, "Page.frameResized")
	_, at := h.event(c, from, "Page.frameResized")
	msgs := c.Messages()[from : at+1]
	if len(msgs) != 2 {
		t.Fatalf("messages: %s", describe(msgs))
	}
	mustMatch(t, msgs[0].Raw, `{"method":"Page.loadEventFired","sessionId":"pw-tab-1","params":{"timestamp":2}}`)
	if string(msgs[1].Raw) != `{"method":"Page.frameResized","sessionId":"pw-tab-1","params":{}}` {
		t.Errorf("event without params: %s", msgs[1].Raw)
	}
}

func TestChildCannotTakeOverAnotherSession(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: rec.handle})
	c := h.client()
	h.autoAttach(c)
	// Chrome's child ids never look like the relay's, but an extension
	// that sends one must not reroute another tab's session.
	e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": "pw-tab-2", "targetInfo": map[string]any{"targetId": "F", "type": "iframe"}, "waitingForDebugger": false})
	h.event(c, 0, "Target.attachedToTarget")
	h.call(c, "pw-tab-2", "Runtime.evaluate", map[string]any{"expression": "1"})
	if got, want := rec.lastOf(t, "Runtime.evaluate"), (received{2, "", "Runtime.evaluate", `{"expression":"1","timeout":10000}`}); got != want {
		t.Errorf("the tab got %+v, want %+v", got, want)
	}
}

// TestRuntimeEnableAfterEarlierAnswers: the relay answers a tab session's
// Runtime.enable itself, and Chrome answers a session's commands in
// order: the contexts it reports and its reply come after the answers to
// the commands the client sent on the session before it (Playwright sends
// Page.getFrameTree, then Runtime.enable, and drops a context of a frame
// it does not know yet).
func TestRuntimeEnableAfterEarlierAnswers(t *testing.T) {
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
		if method == "Page.getFrameTree" {
			time.Sleep(150 * time.Millisecond) // a browser that is slow to answer
		}
		return fakeext.DefaultHandler(tabID, sid, method, p)
	}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	e.Event(1, "", "Runtime.executionContextCreated", map[string]any{"context": map[string]any{"id": 1, "origin": "https://a.example", "name": "", "uniqueId": "u1", "auxData": map[string]any{"isDefault": true, "type": "default", "frameId": tid(1)}}})
	h.call(c, sess, "DOM.getDocument", nil) // the relay has seen the context
	from := len(c.Frames())
	tree := h.send(c, sess, "Page.getFrameTree", nil)
	enable := h.send(c, sess, "Runtime.enable", nil)
	h.reply(c, enable)
	h.reply(c, tree)
	at := map[string]int{}
	for i, f := range c.Frames()[from:] {
		s := string(f)
		switch {
		case strings.Contains(s, fmt.Sprintf(`"id":%d,`, tree)):
			at["tree"] = i
		case strings.Contains(s, fmt.Sprintf(`"id":%d,`, enable)):
			at["enable"] = i
		case strings.Contains(s, `"Runtime.executionContextCreated"`) && at["context"] == 0:
			at["context"] = i + 1
		}
	}
	if at["context"] == 0 || at["tree"] >= at["context"]-1 || at["tree"] >= at["enable"] {
		for _, f := range c.Frames()[from:] {
			t.Logf("%s", f)
		}
		t.Fatalf("the frame tree's answer at %d, the context at %d, Runtime.enable's answer at %d", at["tree"], at["context"]-1, at["enable"])
	}
}

// TestRuntimeEnableNotAfterAPromise: what Runtime.enable waits for is what
// tells the client of the page's frames, not a script that awaits a
// promise: Chrome answers Runtime.enable while such a script still runs,
// and so does the relay.
func TestRuntimeEnableNotAfterAPromise(t *testing.T) {
	h := newHarness(t, config.Config{})
	release := make(chan struct{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
		if method == "Runtime.evaluate" {
			<-release // a promise that has not settled
		}
		return fakeext.DefaultHandler(tabID, sid, method, p)
	}})
	defer close(release)
	c := h.client()
	sess := h.autoAttach(c)[0]
	e.Event(1, "", "Runtime.executionContextCreated", map[string]any{"context": map[string]any{"id": 1, "origin": "https://a.example", "name": "", "uniqueId": "u1", "auxData": map[string]any{"isDefault": true, "type": "default", "frameId": tid(1)}}})
	h.call(c, sess, "DOM.getDocument", nil) // the relay has seen the context
	eval := h.send(c, sess, "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
	start := time.Now()
	h.reply(c, h.send(c, sess, "Runtime.enable", nil))
	// The bound the relay would otherwise wait to: the answer comes well
	// before it.
	if d := time.Since(start); d >= 900*time.Millisecond {
		t.Fatalf("Runtime.enable was answered after %v, behind a script awaiting a promise (id %d)", d, eval)
	}
}
