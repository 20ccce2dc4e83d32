package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/contexts"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/internal/wire"
)

// settle waits until the events e sent for tab before it are routed: a
// page event after them reaches the client after them.
func settle(h *harness, c *cdptest.Client, e *fakeext.Ext, tab int) {
	at := len(c.Messages())
	e.Event(tab, "", "Page.loadEventFired", map[string]any{"timestamp": 2})
	h.event(c, at, "Page.loadEventFired")
}

// clientSent is what reached the tab since before, past what the relay
// sends on its own: the read-only guard, and its looks' clean-up.
func clientSent(e *fakeext.Ext, before int) []string {
	var out []string
	for _, s := range cdpSent(e, before) {
		if !strings.Contains(s, "cdprelay.readOnly") && !strings.Contains(s, `"objectGroup":"cdprelay-`) {
			out = append(out, s)
		}
	}
	return out
}

// contextCreated announces an execution context of tab's session sid.
func contextCreated(e *fakeext.Ext, tab int, sid string, id int64, frame, typ, name, origin string) {
	e.Event(tab, sid, "Runtime.executionContextCreated", map[string]any{"context": map[string]any{
		"id": id, "origin": origin, "name": name, "uniqueId": fmt.Sprintf("u%d", id),
		"auxData": map[string]any{"isDefault": typ == "default", "type": typ, "frameId": frame},
	}})
}

// TestRelayWorldOutOfReach: once the relay has a world of its own in a
// page (it typed a secret there), the client cannot reach it: not by its
// context id, its unique id, its name, an object or call frame of it, a
// script of it, in any param that names one, spelt with escapes or given
// twice; it hears nothing of it (its context, console, exceptions,
// bindings, scripts, a pause in it, which the relay resumes); and the
// contexts the client names that the relay cannot place are refused. The
// page's own world stays the client's.
func TestRelayWorldOutOfReach(t *testing.T) {
	page := newFakePage(1, "https://a.example")
	h := newHarness(t, config.Config{Secrets: staticSecrets(t)})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: page.handle})
	page.e.Store(e)
	c := h.client()
	sess := h.autoAttach(c)[0]
	main := tid(1)
	page.setFocus(passwordField(main))
	h.call(c, sess, "Input.insertText", map[string]any{"text": "{{secret:github}}"})
	var relay, own int64
	page.mu.Lock()
	for id := range page.relay {
		relay = id
	}
	page.mu.Unlock()
	own = 11 // the page's own world, announced first

	from := len(c.Messages())
	h.call(c, sess, "Runtime.enable", nil)
	for _, m := range c.Messages()[from:] {
		if strings.Contains(string(m.Raw), contexts.RelayWorldPrefix) || strings.Contains(string(m.Raw), fmt.Sprintf(`"id":%d,`, relay)) {
			t.Fatalf("the client heard of the relay's world: %s", m.Raw)
		}
	}
	if _, i := h.event(c, from, "Runtime.executionContextCreated"); i < from {
		t.Fatal("the page's own world was not announced")
	}

	obj := fmt.Sprintf("-7.%d.1", relay)
	for _, tc := range []struct {
		method, params string
	}{
		{"Runtime.evaluate", fmt.Sprintf(`{"expression":"1","contextId":%d}`, relay)},
		{"Runtime.evaluate", fmt.Sprintf(`{"expression":"1","context\u0049d":%d}`, relay)},
		{"Runtime.evaluate", fmt.Sprintf(`{"expression":"1","contextId":%d,"contextId":%d}`, own, relay)},
		{"Runtime.evaluate", fmt.Sprintf(`{"expression":"1","uniqueContextId":"u%d"}`, relay)},
		{"Runtime.callFunctionOn", fmt.Sprintf(`{"functionDeclaration":"function(){}","executionContextId":%d}`, relay)},
		{"Runtime.callFunctionOn", fmt.Sprintf(`{"functionDeclaration":"function(){}","objectId":%q}`, obj)},
		{"Runtime.callFunctionOn", fmt.Sprintf(`{"functionDeclaration":"function(){}","executionContextId":%d,"arguments":[{"value":1},{"objectId":%q}]}`, own, obj)},
		{"Runtime.callFunctionOn", fmt.Sprintf(`{"functionDeclaration":"function(){}","executionContextId":%d,"arguments":[{"value":0},{"value":1},{"value":2},{"value":3},{"value":4},{"value":5},{"value":6},{"value":7},{"value":8},{"objectId":%q}]}`, own, obj)},
		{"Runtime.callFunctionOn", fmt.Sprintf(`{"functionDeclaration":"function(){}","executionContextId":%d,"arguments":[{"objectId":"-7.%d.9","obje\u0063tId":%q}]}`, own, own, obj)},
		{"Runtime.getProperties", fmt.Sprintf(`{"objectId":%q}`, obj)},
		{"Runtime.releaseObject", fmt.Sprintf(`{"objectId":%q}`, obj)},
		{"Runtime.awaitPromise", fmt.Sprintf(`{"promiseObjectId":%q}`, obj)},
		{"Runtime.queryObjects", fmt.Sprintf(`{"prototypeObjectId":%q}`, obj)},
		{"Runtime.globalLexicalScopeNames", fmt.Sprintf(`{"executionContextId":%d}`, relay)},
		{"Runtime.compileScript", fmt.Sprintf(`{"expression":"1","sourceURL":"","persistScript":true,"executionContextId":%d}`, relay)},
		{"Runtime.runScript", fmt.Sprintf(`{"scriptId":"1","executionContextId":%d}`, relay)},
		{"Runtime.addBinding", fmt.Sprintf(`{"name":"b","executionContextId":%d}`, relay)},
		{"Runtime.addBinding", `{"name":"b","executionContextName":"cdprelay"}`},
		{"Page.createIsolatedWorld", fmt.Sprintf(`{"frameId":%q,"worldName":"cdprelay"}`, main)},
		{"Page.createIsolatedWorld", fmt.Sprintf(`{"frameId":%q,"worldName":"cdprelay-0123"}`, main)},
		{"Page.addScriptToEvaluateOnNewDocument", `{"source":"1","worldName":"cdprelay"}`},
		{"DOM.resolveNode", fmt.Sprintf(`{"backendNodeId":5,"executionContextId":%d}`, relay)},
		{"DOM.describeNode", fmt.Sprintf(`{"objectId":%q}`, obj)},
		{"DOM.setFileInputFiles", fmt.Sprintf(`{"files":[],"objectId":%q}`, obj)},
		{"Debugger.evaluateOnCallFrame", fmt.Sprintf(`{"callFrameId":"-7.%d.0","expression":"value"}`, relay)},
		{"Debugger.setVariableValue", fmt.Sprintf(`{"callFrameId":"-7.%d.0","scopeNumber":0,"variableName":"v","newValue":{"value":1}}`, relay)},
		{"Debugger.setBreakpointOnFunctionCall", fmt.Sprintf(`{"objectId":%q}`, obj)},
		// Contexts the relay cannot place, on a tab where secrets are in force.
		{"Runtime.evaluate", `{"expression":"1","contextId":999}`},
		{"Runtime.evaluate", `{"expression":"1","uniqueContextId":"guess"}`},
		{"Runtime.getProperties", `{"objectId":"-7.999.1"}`},
		{"Runtime.getProperties", `{"objectId":"not an id"}`},
	} {
		before := len(e.Commands())
		m := h.callMsg(c, sess, tc.method, json.RawMessage(tc.params))
		if m.Error == nil {
			t.Errorf("%s %s: %s", tc.method, tc.params, m.Raw)
		}
		if got := clientSent(e, before); len(got) != 0 {
			t.Errorf("%s %s reached the tab: %q", tc.method, tc.params, got)
		}
	}
	// The page's own world is the client's.
	before := len(e.Commands())
	if m := h.callMsg(c, sess, "Runtime.evaluate", map[string]any{"expression": "1", "contextId": own}); m.Error != nil {
		t.Fatalf("the page's own world: %s", m.Raw)
	}
	if got := clientSent(e, before); len(got) != 1 {
		t.Fatalf("sent %q", got)
	}
	// A heap snapshot would hold the secret.
	if m := h.callMsg(c, sess, "HeapProfiler.takeHeapSnapshot", nil); m.Error == nil {
		t.Fatalf("HeapProfiler: %s", m.Raw)
	}

	// Nothing of the relay's world reaches the client; the page's own does.
	h.call(c, sess, "Debugger.enable", nil)
	from = len(c.Messages())
	e.Event(1, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{}, "executionContextId": relay})
	e.Event(1, "", "Runtime.exceptionThrown", map[string]any{"timestamp": 1, "exceptionDetails": map[string]any{"exceptionId": 1, "text": "x", "lineNumber": 0, "columnNumber": 0, "executionContextId": relay}})
	e.Event(1, "", "Runtime.bindingCalled", map[string]any{"name": "b", "payload": "p", "executionContextId": relay})
	e.Event(1, "", "Debugger.scriptParsed", map[string]any{"scriptId": "77", "url": "", "executionContextId": relay})
	e.Event(1, "", "Debugger.paused", map[string]any{"reason": "other", "callFrames": []any{
		map[string]any{"callFrameId": fmt.Sprintf("-7.%d.0", own), "location": map[string]any{"scriptId": "5"}},
		map[string]any{"callFrameId": fmt.Sprintf("-7.%d.1", relay), "location": map[string]any{"scriptId": "78"}},
	}})
	h.waitFor("the relay resumes the pause", func() bool { return indexOf(cdpSent(e, before), "Debugger.resume") >= 0 })
	e.Event(1, "", "Debugger.resumed", map[string]any{})
	e.Event(1, "", "Runtime.executionContextDestroyed", map[string]any{"executionContextId": relay, "executionContextUniqueId": fmt.Sprintf("u%d", relay)})
	e.Event(1, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{}, "executionContextId": own})
	h.event(c, from, "Runtime.consoleAPICalled")
	for _, m := range c.Messages()[from:] {
		if m.Method != "Runtime.consoleAPICalled" || !strings.Contains(string(m.Params), fmt.Sprintf(`"executionContextId":%d`, own)) {
			t.Errorf("the client got %s", m.Raw)
		}
	}
	if m := h.callMsg(c, sess, "Debugger.getScriptSource", map[string]any{"scriptId": "77"}); m.Error == nil {
		t.Errorf("the relay's script: %s", m.Raw)
	}
}

// TestContextsJudgedNow: a context id is judged by the context it names
// now. A client makes isolated worlds on a full site, switches Runtime
// off, and the tab goes to a read-only site in another renderer, whose
// contexts count from 1 again: an id of one of its old worlds that now
// names the new page's own world runs under the side-effect check, and an
// id, unique id or object of a world that is gone is refused, whichever
// param carries it.
func TestContextsJudgedNow(t *testing.T) {
	for _, cleared := range []bool{true, false} {
		t.Run(fmt.Sprintf("cleared=%v", cleared), func(t *testing.T) {
			h := newHarness(t, config.Config{Policy: tiers})
			e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
			c := h.client()
			sess := h.autoAttach(c)[0]
			main := tid(1)
			h.call(c, sess, "Runtime.enable", nil)
			contextCreated(e, 1, "", 1, main, "default", "", "https://a.example")
			for id := int64(2); id <= 6; id++ {
				contextCreated(e, 1, "", id, main, "isolated", fmt.Sprintf("w%d", id), "https://a.example")
			}
			before := len(e.Commands())
			h.call(c, sess, "Runtime.disable", nil)
			if got := cdpSent(e, before); len(got) != 0 {
				t.Fatalf("Runtime.disable went to the tab: %q", got)
			}
			// Another renderer: the read-only page's contexts count from 1.
			from := len(c.Messages())
			e.Navigate(1, "https://ro.example/", "RO")
			if cleared {
				e.Event(1, "", "Runtime.executionContextsCleared", map[string]any{})
			}
			contextCreated(e, 1, "", 1, main, "default", "", "https://ro.example")
			contextCreated(e, 1, "", 2, "SUBFRAME", "default", "", "https://ro.example")
			h.event(c, from, "CDPRelay.accessChanged")
			settle(h, c, e, 1)
			for _, m := range c.Messages()[from:] {
				if strings.HasPrefix(m.Method, "Runtime.") {
					t.Errorf("with Runtime off the client got %s", m.Raw)
				}
			}

			forced := func(method string, params any) {
				t.Helper()
				before := len(e.Commands())
				m := h.callMsg(c, sess, method, params)
				sent := clientSent(e, before)
				if len(sent) != 1 || !strings.Contains(sent[0], `"throwOnSideEffect":true`) {
					t.Errorf("%s %v went as %q: %s", method, params, sent, m.Raw)
				}
			}
			refused := func(method string, params any) {
				t.Helper()
				before := len(e.Commands())
				m := h.callMsg(c, sess, method, params)
				if m.Error == nil || len(clientSent(e, before)) != 0 {
					t.Errorf("%s %v: %s, sent %q", method, params, m.Raw, clientSent(e, before))
				}
			}
			forced("Runtime.evaluate", map[string]any{"expression": "document.body.innerHTML = ''", "contextId": 2})
			forced("Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function(){ this.remove() }", "objectId": "-7.2.1"})
			forced("Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function(){ document.body.remove() }", "executionContextId": 1})
			if !cleared {
				// Not said by Chrome, but an id the new renderer has not given
				// yet is not a context the relay can place either.
				e.Event(1, "", "Runtime.executionContextDestroyed", map[string]any{"executionContextId": 4})
				settle(h, c, e, 1)
			}
			for _, stale := range []struct {
				method string
				params any
			}{
				{"Runtime.evaluate", map[string]any{"expression": "document.body.remove()", "contextId": 5}},
				{"Runtime.evaluate", map[string]any{"expression": "document.body.remove()", "uniqueContextId": "u3"}},
				{"Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function(){ this.remove() }", "objectId": "-7.4.1"}},
				{"Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function(){}", "executionContextId": 1, "arguments": []any{map[string]any{"objectId": "-7.4.1"}}}},
				{"Runtime.getProperties", map[string]any{"objectId": "-7.6.1"}},
				{"Runtime.globalLexicalScopeNames", map[string]any{"executionContextId": 99}},
				{"DOM.resolveNode", map[string]any{"backendNodeId": 1, "executionContextId": 99}},
				{"Runtime.awaitPromise", map[string]any{"promiseObjectId": "-7.99.1"}},
			} {
				if p, _ := json.Marshal(stale.params); !cleared && !strings.Contains(string(p), "4") && !strings.Contains(string(p), "99") {
					// Without a word from Chrome the relay keeps the old
					// worlds 3, 5 and 6: they are isolated, and a command
					// naming them reaches a context Chrome no longer has.
					continue
				}
				refused(stale.method, stale.params)
			}
			// A world of the client's own on the read-only page runs as
			// it asks, behind the guard.
			contextCreated(e, 1, "", 3, main, "isolated", "mine", "https://ro.example")
			h.waitFor("the guard goes into the new world", func() bool {
				n := 0
				for _, s := range cdpSent(e, 0) {
					if strings.Contains(s, "cdprelay.readOnly") && strings.Contains(s, `"contextId":3`) {
						n++ // as the tab went read-only, and as the world came
					}
				}
				return n == 2
			})
			before = len(e.Commands())
			h.callMsg(c, sess, "Runtime.evaluate", map[string]any{"expression": "1", "contextId": 3})
			if sent := clientSent(e, before); len(sent) != 1 || strings.Contains(sent[0], "throwOnSideEffect") {
				t.Errorf("in the client's isolated world: %q", sent)
			}
		})
	}
}

// TestRuntimeHeld: the relay keeps Runtime on in Chrome; the client's
// Runtime.enable is answered with the contexts the session has, before
// the reply, and its Runtime.disable is answered and not sent; while it
// is off the client hears no Runtime event but a binding's call. A child
// session is the same.
func TestRuntimeHeld(t *testing.T) {
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	main := tid(1)
	if indexOf(cdpSent(e, 0), "Runtime.enable") < 0 {
		t.Fatal("the relay did not turn Runtime on as it attached the tab")
	}
	contextCreated(e, 1, "", 1, main, "default", "", "https://a.example")
	contextCreated(e, 1, "", 2, main, "isolated", "w", "https://a.example")
	e.Event(1, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{}})
	h.call(c, sess, "Page.enable", nil) // a round trip: the events are routed
	from := len(c.Messages())
	id := h.send(c, sess, "Runtime.enable", nil)
	_, at := h.reply(c, id)
	var got []string
	for _, m := range c.Messages()[from:at] {
		got = append(got, m.Method+" "+string(m.Params))
	}
	if len(got) != 2 || !strings.Contains(got[0], `"id":1`) || !strings.Contains(got[1], `"id":2`) {
		t.Fatalf("before the reply to Runtime.enable: %q", got)
	}
	before := len(e.Commands())
	h.call(c, sess, "Runtime.disable", nil)
	from = len(c.Messages())
	e.Event(1, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{}})
	e.Event(1, "", "Runtime.executionContextDestroyed", map[string]any{"executionContextId": 2})
	e.Event(1, "", "Runtime.bindingCalled", map[string]any{"name": "b", "payload": "p", "executionContextId": 1})
	h.event(c, from, "Runtime.bindingCalled")
	for _, m := range c.Messages()[from:] {
		if m.Method != "Runtime.bindingCalled" {
			t.Errorf("with Runtime off: %s", m.Raw)
		}
	}
	if got := cdpSent(e, before); len(got) != 0 {
		t.Fatalf("sent %q", got)
	}
	// A child: the relay turns Runtime on there as it attaches.
	e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": "CHILD", "targetInfo": map[string]any{"targetId": "FRAME", "type": "iframe", "url": "https://b.example/"}, "waitingForDebugger": false})
	h.waitFor("Runtime on the child", func() bool {
		for _, cmd := range commandsSince(e, before) {
			if strings.Contains(string(cmd.Params), `"sessionId":"CHILD"},"Runtime.enable"`) {
				return true
			}
		}
		return false
	})
	contextCreated(e, 1, "CHILD", 1, "FRAME", "default", "", "https://b.example")
	h.call(c, sess, "Page.enable", nil)
	from = len(c.Messages())
	h.call(c, "CHILD", "Runtime.enable", nil)
	if m, _ := h.event(c, from, "Runtime.executionContextCreated"); m.SessionID != "CHILD" {
		t.Fatalf("the child's context went to %s", m.Raw)
	}
}

// BenchmarkForwardCommandContext: a command that names a context (an
// object of the page's own world) on a tab of a full site under tiers:
// what placing the context costs.
func BenchmarkForwardCommandContext(b *testing.B) {
	in, c, x, stop := benchInstanceWith(b, config.Config{Policy: tierPolicy{"ro.example": "read-only"}})
	defer stop()
	st := in.Lock()
	t := st.Tabs[7]
	t.Url, t.DocURL = "https://a.example/", "https://a.example/"
	st.UpdateAccess(t)
	t.Ctxs.Event("", []byte("Runtime.executionContextCreated"), []byte(`{"context":{"id":7,"origin":"https://a.example","name":"","uniqueId":"u7","auxData":{"isDefault":true,"type":"default","frameId":"T7"}}}`))
	in.Unlock()
	cmd := []byte(`{"id":42,"method":"Runtime.callFunctionOn","sessionId":"pw-tab-1","params":{"functionDeclaration":"function(){return this.title}","objectId":"-1.7.1","returnByValue":true}}`)
	b.SetBytes(int64(len(cmd)))
	b.ReportAllocs()
	for b.Loop() {
		k := &c.Cmd
		if err := wire.DecodeCommand(cmd, &k.Env); err != nil {
			b.Fatal(err)
		}
		c.Handle(k)
		x.Forget(x.LastID())
	}
}
