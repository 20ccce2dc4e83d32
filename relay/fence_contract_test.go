package relay

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// hostFence is a test policy whose URL fence refuses any URL containing
// "evil". The real fence is tested in package denylist and end to end.
type hostFence struct{}

func (hostFence) Command(string, string, []byte) core.Decision { return core.Decision{} }

// MethodURL judges only a continued request's new URL: the command fence
// proper is the real policy's, tested elsewhere.
func (h hostFence) MethodURL(profile, method, url string, found bool) core.Decision {
	if method == "Fetch.continueRequest" && found {
		return h.URL(profile, url)
	}
	return core.Decision{}
}
func (hostFence) URL(_, url string) core.Decision {
	if strings.Contains(url, "evil") {
		return core.Decision{Verdict: core.Deny, Rule: "url:host-not-allowed", Message: "Denied by cdprelay policy: evil"}
	}
	return core.Decision{}
}
func (hostFence) FencesNavigation(string) bool { return true }
func (hostFence) UploadDirs(string) []string   { return nil }

// cdpCall is one chrome.debugger.sendCommand the fake received.
type cdpCall struct {
	Debuggee struct {
		TabID     int    `json:"tabId"`
		SessionID string `json:"sessionId"`
	}
	Method string
	Params json.RawMessage
}

func fenceCalls(t *testing.T, e *fakeext.Ext, method string) []cdpCall {
	t.Helper()
	var out []cdpCall
	for _, c := range e.Commands() {
		if c.Method != "chrome.debugger.sendCommand" {
			continue
		}
		var args []json.RawMessage
		if err := json.Unmarshal(c.Params, &args); err != nil || len(args) < 2 {
			continue
		}
		var call cdpCall
		json.Unmarshal(args[0], &call.Debuggee)
		json.Unmarshal(args[1], &call.Method)
		if len(args) > 2 {
			call.Params = args[2]
		}
		if call.Method == method {
			out = append(out, call)
		}
	}
	return out
}

func paused(id, url, resourceType string) map[string]any {
	return map[string]any{"requestId": id, "request": map[string]any{"url": url, "method": "GET"}, "resourceType": resourceType, "frameId": "F"}
}

func TestNavigationBackstop(t *testing.T) {
	h := newHarness(t, config.Config{Policy: hostFence{}})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ok.test/"}}})
	c := h.client()
	sess := h.autoAttach(c)[0]

	// The fence is enabled at attach, before the client is told of the tab.
	enables := fenceCalls(t, e, "Fetch.enable")
	if len(enables) != 1 {
		t.Fatalf("Fetch.enable at attach: %d", len(enables))
	}
	mustMatch(t, enables[0].Params, `{"patterns":[{"urlPattern":"*","resourceType":"Document","requestStage":"Request"}],"handleAuthRequests":false}`)

	// A Document request to a refused host fails as blocked-by-client; one
	// to an allowed host continues; the client sees neither.
	e.Event(1, "", "Fetch.requestPaused", paused("R1", "https://evil.test/", "Document"))
	e.Event(1, "", "Fetch.requestPaused", paused("R2", "https://ok.test/next", "Document"))
	h.waitFor("fail and continue", func() bool {
		return len(fenceCalls(t, e, "Fetch.failRequest")) == 1 && len(fenceCalls(t, e, "Fetch.continueRequest")) == 1
	})
	mustMatch(t, fenceCalls(t, e, "Fetch.failRequest")[0].Params, `{"requestId":"R1","errorReason":"BlockedByClient"}`)
	mustMatch(t, fenceCalls(t, e, "Fetch.continueRequest")[0].Params, `{"requestId":"R2"}`)

	// The client's own interception is merged with the fence.
	h.call(c, sess, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*api*"}}, "handleAuthRequests": true})
	enables = fenceCalls(t, e, "Fetch.enable")
	mustMatch(t, enables[len(enables)-1].Params, `{"patterns":[{"urlPattern":"*","resourceType":"Document","requestStage":"Request"},{"urlPattern":"*api*"}],"handleAuthRequests":true}`)

	// A request the client asked for reaches it, untouched by the relay.
	e.Event(1, "", "Fetch.requestPaused", paused("R3", "https://ok.test/api/x", "XHR"))
	ev, _ := h.event(c, 0, "Fetch.requestPaused")
	if !strings.Contains(string(ev.Params), `"R3"`) || ev.SessionID != sess {
		t.Fatalf("client got %s", ev.Raw)
	}
	// A refused navigation is failed even though the client intercepts.
	e.Event(1, "", "Fetch.requestPaused", paused("R4", "https://evil.test/api", "Document"))
	h.waitFor("second fail", func() bool { return len(fenceCalls(t, e, "Fetch.failRequest")) == 2 })
	// An allowed one the client's pattern does not ask for is continued.
	e.Event(1, "", "Fetch.requestPaused", paused("R5", "https://ok.test/page", "Document"))
	h.waitFor("second continue", func() bool { return len(fenceCalls(t, e, "Fetch.continueRequest")) == 2 })
	for _, m := range c.Events("Fetch.requestPaused") {
		if !strings.Contains(string(m.Params), `"R3"`) {
			t.Errorf("client saw a pause it did not ask for: %s", m.Raw)
		}
	}
	for _, call := range fenceCalls(t, e, "Fetch.continueRequest") {
		if strings.Contains(string(call.Params), "R3") {
			t.Error("the relay continued a request the client intercepts")
		}
	}

	// Fetch.disable keeps the fence: it becomes a Fetch.enable of the
	// relay's pattern alone, and the client gets its ordinary reply.
	h.call(c, sess, "Fetch.disable", nil)
	enables = fenceCalls(t, e, "Fetch.enable")
	mustMatch(t, enables[len(enables)-1].Params, `{"patterns":[{"urlPattern":"*","resourceType":"Document","requestStage":"Request"}],"handleAuthRequests":false}`)
	if n := len(fenceCalls(t, e, "Fetch.disable")); n != 0 {
		t.Fatalf("Fetch.disable reached the tab %d times", n)
	}
}

func TestNoBackstopWithoutHostRules(t *testing.T) {
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1}}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Fetch.enable", map[string]any{})
	enables := fenceCalls(t, e, "Fetch.enable")
	if len(enables) != 1 {
		t.Fatalf("Fetch.enable sent %d times, want the client's one", len(enables))
	}
	mustMatch(t, enables[0].Params, `{}`)
	e.Event(1, "", "Fetch.requestPaused", paused("R1", "https://evil.test/", "Document"))
	if _, err := c.WaitEvent(h.ctx, "Fetch.requestPaused"); err != nil {
		t.Fatal(err)
	}
}

// TestBackstopHolds covers the ways a client could loosen the fence: Fetch
// commands at the root (answered by a tab on the browser's behalf), params
// the relay cannot read, and a continued request sent somewhere else.
func TestBackstopHolds(t *testing.T) {
	h := newHarness(t, config.Config{Policy: hostFence{}})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ok.test/"}}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	fenceOnly := `{"patterns":[{"urlPattern":"*","resourceType":"Document","requestStage":"Request"}],"handleAuthRequests":false}`

	// Fetch.disable at the root is rewritten like a session's.
	m := h.callMsg(c, "", "Fetch.disable", nil)
	if m.Error != nil || m.SessionID != "" {
		t.Fatalf("root Fetch.disable: %s", m.Raw)
	}
	if n := len(fenceCalls(t, e, "Fetch.disable")); n != 0 {
		t.Fatalf("Fetch.disable reached the tab")
	}
	enables := fenceCalls(t, e, "Fetch.enable")
	mustMatch(t, enables[len(enables)-1].Params, fenceOnly)

	// Params the relay cannot read are refused, not forwarded.
	before := len(fenceCalls(t, e, "Fetch.enable"))
	m = h.callMsg(c, sess, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "x"}}, "handleAuthRequests": "x"})
	if m.Error == nil || m.Error.Code != core.CodeInvalidParams {
		t.Fatalf("unreadable Fetch.enable: %s", m.Raw)
	}
	if len(fenceCalls(t, e, "Fetch.enable")) != before {
		t.Fatal("unreadable Fetch.enable reached the tab")
	}

	// A continued request may not be sent to a refused host.
	m = h.callMsg(c, sess, "Fetch.continueRequest", map[string]any{"requestId": "R9", "url": "https://evil.test/"})
	if m.Error == nil || !strings.Contains(m.Error.Message, "Denied by cdprelay policy") {
		t.Fatalf("continueRequest to a refused host: %s", m.Raw)
	}
	if n := len(fenceCalls(t, e, "Fetch.continueRequest")); n != 0 {
		t.Fatal("the refused continueRequest reached the tab")
	}
	h.call(c, sess, "Fetch.continueRequest", map[string]any{"requestId": "R10", "url": "https://ok.test/x"})
}

// TestTakeOverHoldsAtRoot: while a person holds a tab, input sent without
// a session (which a tab executes for the browser) is refused too.
func TestTakeOverHoldsAtRoot(t *testing.T) {
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1}}})
	c := h.client()
	h.autoAttach(c)
	if err := h.srv.Default().TakeControl(1, "person"); err != nil {
		t.Fatal(err)
	}
	m := h.callMsg(c, "", "Input.dispatchMouseEvent", map[string]any{"type": "mousePressed", "x": 1, "y": 1})
	if m.Error == nil || !strings.Contains(m.Error.Message, "taken control") {
		t.Fatalf("root input during take-over: %s", m.Raw)
	}
}

// TestChildDetachFailsPending: a command pending on a child session that
// detaches gets an answer; Chrome gives none.
func TestChildDetachFailsPending(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1}}, Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
		if sid == "CHILD" {
			<-gate
		}
		return fakeext.DefaultHandler(tabID, sid, method, p)
	}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": "CHILD", "targetInfo": map[string]any{"targetId": "F1", "type": "worker"}, "waitingForDebugger": false})
	if _, _, err := c.WaitMessage(h.ctx, 0, func(m cdptest.Message) bool {
		return m.Method == "Target.attachedToTarget" && m.SessionID == sess && strings.Contains(string(m.Params), "CHILD")
	}); err != nil {
		t.Fatal(err)
	}
	id := h.send(c, "CHILD", "Runtime.evaluate", map[string]any{"expression": "1"})
	h.waitFor("the command reached the child", func() bool {
		for _, m := range c.Messages() {
			if m.ID != nil && *m.ID == id {
				t.Fatalf("answered before the detach: %s", m.Raw)
			}
		}
		return len(fenceCalls(t, e, "Runtime.evaluate")) == 1
	})
	e.Event(1, "", "Target.detachedFromTarget", map[string]any{"sessionId": "CHILD", "targetId": "F1"})
	m, _ := h.reply(c, id)
	if m.Error == nil || m.Error.Code != core.CodeNoSession {
		t.Fatalf("pending child command after detach: %s", m.Raw)
	}
}

// TestExtensionGoneWithFenceCommandPending: the extension leaving while a
// backstop command of the relay's own waits for its reply ends the
// instance's client cleanly.
func TestExtensionGoneWithFenceCommandPending(t *testing.T) {
	h := newHarness(t, config.Config{Policy: hostFence{}})
	block := make(chan struct{})
	defer close(block)
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1}}, Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
		if method == "Fetch.continueRequest" {
			<-block
		}
		return fakeext.DefaultHandler(tabID, sid, method, p)
	}})
	c := h.client()
	h.autoAttach(c)
	e.Event(1, "", "Fetch.requestPaused", paused("R1", "https://ok.test/", "Document"))
	h.waitFor("continue sent", func() bool { return len(fenceCalls(t, e, "Fetch.continueRequest")) == 1 })
	e.Close()
	code, text := h.closed(c)
	if !strings.HasPrefix(text, core.ReasonExtGonePrefix) {
		t.Fatalf("client closed with %d %q", code, text)
	}
	h.waitFor("instance reset", func() bool { return !h.srv.Default().Status().Extension })
}

// Page.navigateToHistoryEntry names an entry of the tab's history, not a
// URL: the relay looks the entry up and judges its URL, whichever session
// the command comes from, an out-of-process frame's included.
func TestHistoryEntryFenced(t *testing.T) {
	handler := func(tabID int, sid, method string, params json.RawMessage) (any, error) {
		if method == "Page.getNavigationHistory" {
			return map[string]any{"currentIndex": 0, "entries": []any{
				map[string]any{"id": 1, "url": "https://ok.test/"},
				map[string]any{"id": 2, "url": "https://evil.test/"},
			}}, nil
		}
		return fakeext.DefaultHandler(tabID, sid, method, params)
	}
	h := newHarness(t, config.Config{Policy: hostFence{}})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ok.test/"}}, Handler: handler})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": "CHILD1", "targetInfo": map[string]any{"targetId": "F1", "type": "iframe", "url": "https://ok.test/frame", "attached": true}, "waitingForDebugger": false})
	h.waitFor("the child session", func() bool {
		return h.callMsg(c, "CHILD1", "Runtime.evaluate", map[string]any{"expression": "1"}).Error == nil
	})
	// The tab's session, a child's, the root and a browser session, which
	// send a page's commands to the tab: the entry is judged on each.
	browser := jsonString(t, h.call(c, "", "Target.attachToBrowserTarget", nil), "sessionId")
	for _, on := range []string{sess, "CHILD1", "", browser} {
		before := len(fenceCalls(t, e, "Page.navigateToHistoryEntry"))
		if m := h.callMsg(c, on, "Page.navigateToHistoryEntry", map[string]any{"entryId": 2}); m.Error == nil || !strings.Contains(m.Error.Message, "evil") {
			t.Errorf("an entry outside the fence, on %s: %s", on, m.Raw)
		}
		if m := h.callMsg(c, on, "Page.navigateToHistoryEntry", map[string]any{"entryId": 1}); m.Error != nil {
			t.Errorf("an entry inside the fence, on %s: %s", on, m.Raw)
		}
		if got := fenceCalls(t, e, "Page.navigateToHistoryEntry")[before:]; len(got) != 1 || !strings.Contains(string(got[0].Params), `"entryId":1`) {
			t.Errorf("on %s, reached the tab: %+v", on, got)
		}
	}
}

// The first-request fence (our extension's host rules, which act before a
// popup's first request) is in force before a client's first command
// reaches the browser, and goes when the client does.
func TestNetFenceBeforeFirstCommand(t *testing.T) {
	letGo := make(chan struct{})
	var once sync.Once
	gate := func(method string, _ []json.RawMessage) {
		if method == "extension.setNavigationFence" {
			once.Do(func() { <-letGo })
		}
	}
	h := newHarness(t, config.Config{Policy: netFencePolicy{}})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ok.test/"}}, Features: []string{"navigation-fence"}, Gate: gate})
	c := h.client()
	id := h.send(c, "", "Target.getTargets", nil)
	// Nothing can be awaited for a reply that must not come: a reply would
	// come well within this.
	time.Sleep(100 * time.Millisecond)
	for _, m := range c.Messages() {
		if m.ID != nil && *m.ID == id {
			t.Fatalf("answered before the fence was in force: %s", m.Raw)
		}
	}
	close(letGo)
	if m, _ := h.reply(c, id); m.Error != nil {
		t.Fatalf("after the fence: %s", m.Raw)
	}
	if got := string(e.NetFence()); got != `{"allow":["ok.test"]}` {
		t.Fatalf("the rules in force: %s", got)
	}
	c.Close()
	h.waitFor("the fence to go with the client", func() bool { return string(e.NetFence()) == "null" })
}

// netFencePolicy is hostFence with rules for the extension.
type netFencePolicy struct{ hostFence }

func (netFencePolicy) NetworkRules(string) []byte { return []byte(`{"allow":["ok.test"]}`) }
