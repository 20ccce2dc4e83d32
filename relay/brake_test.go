package relay

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/person"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// busyPage is a fake tab (tab 1) whose main thread a script can keep busy, as
// Chrome's does: a script that never ends answers no more, and neither
// does any command that runs on the main thread (Runtime.getIsolateId);
// Debugger.pause still lands (Chrome sends it on its IO thread), and
// Debugger.resume with terminateOnResume ends the script. While paused, the
// page answers what waited on its main thread, as Chrome's debugger loop
// does: the answer comes right after the pause.
type busyPage struct {
	e  *fakeext.Ext // set once dialled
	mu sync.Mutex
	// busy: a script runs on the session (by id, "" for the tab's own)
	// until its channel closes.
	busy map[string]chan struct{}
	// paused: the session is paused; looping: and its debugger's loop
	// answers what waits (once the pause is told); wake closes as a loop
	// starts.
	paused, looping map[string]bool
	wake            chan struct{}
	// refusePause: Debugger.pause is refused (the Debugger is off).
	refusePause bool
	seen        []string // methods with params, as received
}

func newBusyPage() *busyPage {
	return &busyPage{busy: map[string]chan struct{}{}, paused: map[string]bool{}, looping: map[string]bool{}, wake: make(chan struct{})}
}

// loop starts a script that never ends on session sid.
func (b *busyPage) loop(sid string) chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch := b.busy[sid]
	if ch == nil {
		ch = make(chan struct{})
		b.busy[sid] = ch
	}
	return ch
}

func (b *busyPage) isBusy(sid string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.busy[sid] != nil
}

func (b *busyPage) isPaused(sid string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.paused[sid]
}

func (b *busyPage) waitBusy(h *harness, sid string) {
	h.t.Helper()
	h.waitFor("the page is busy", func() bool { return b.isBusy(sid) })
}

func (b *busyPage) end(sid string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ch := b.busy[sid]; ch != nil {
		close(ch)
		delete(b.busy, sid)
	}
}

// wait waits until session sid's main thread is free, or runs the
// debugger's loop.
func (b *busyPage) wait(sid string) {
	for {
		b.mu.Lock()
		ch, looping, wake := b.busy[sid], b.looping[sid], b.wake
		b.mu.Unlock()
		if ch == nil || looping {
			return
		}
		select {
		case <-ch:
		case <-wake:
		}
	}
}

// pause pauses session sid, and says so, before its debugger loop answers
// what waited.
func (b *busyPage) pause(tab int, sid string) {
	b.mu.Lock()
	b.paused[sid] = true
	b.mu.Unlock()
	b.e.Event(tab, sid, "Debugger.paused", map[string]any{"callFrames": []any{}, "reason": "other"})
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.paused[sid] {
		b.looping[sid] = true
		close(b.wake)
		b.wake = make(chan struct{})
	}
}

func (b *busyPage) handler(tab int, sid, method string, params json.RawMessage) (any, error) {
	if tab != 1 {
		return fakeext.DefaultHandler(tab, sid, method, params) // only tab 1 is ever busy
	}
	b.mu.Lock()
	b.seen = append(b.seen, method+" "+string(params))
	b.mu.Unlock()
	switch method {
	case "Runtime.evaluate", "Runtime.callFunctionOn":
		if strings.Contains(string(params), "while(true)") {
			<-b.loop(sid)
			return nil, fakeext.CDPError(-32000, "Execution was terminated")
		}
		b.wait(sid)
	case "Runtime.getIsolateId":
		b.wait(sid)
		return map[string]any{"id": "isolate"}, nil
	case "Debugger.pause":
		b.mu.Lock()
		refuse := b.refusePause
		b.mu.Unlock()
		if refuse {
			return nil, fakeext.CDPError(-32000, "Debugger agent is not enabled")
		}
		if b.isBusy(sid) {
			go b.pause(tab, sid)
		}
		return map[string]any{}, nil
	case "Debugger.resume":
		b.mu.Lock()
		delete(b.paused, sid)
		delete(b.looping, sid)
		b.mu.Unlock()
		if strings.Contains(string(params), `"terminateOnResume":true`) {
			b.end(sid)
		}
		return map[string]any{}, nil
	}
	return fakeext.DefaultHandler(tab, sid, method, params)
}

func (b *busyPage) received(prefix string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, s := range b.seen {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

var rawIDs atomic.Int64

// lastNotBrake is what the tab last received, leaving out the relay's own
// Debugger that each new frame and worker gets (attach.BrakeOn), whose commands
// the fake may answer in any order with the client's.
func lastNotBrake(t *testing.T, rec *recorder) received {
	t.Helper()
	all := rec.all()
	for i := len(all) - 1; i >= 0; i-- {
		if m := all[i].method; m != "Debugger.enable" && m != "Debugger.setBreakpointsActive" {
			return all[i]
		}
	}
	t.Fatal("the tab received nothing but the relay's Debugger")
	return received{}
}

// sentOn lists the CDP methods (with params) the fake was sent from
// command from on, and the chrome.debugger calls among them.
func sentOn(e *fakeext.Ext, from int) []string {
	var out []string
	for _, c := range e.Commands()[from:] {
		if c.Method != "chrome.debugger.sendCommand" {
			if strings.HasPrefix(c.Method, "chrome.debugger.") {
				out = append(out, c.Method)
			}
			continue
		}
		var args []json.RawMessage
		if json.Unmarshal(c.Params, &args) != nil || len(args) < 2 {
			continue
		}
		var d struct{ SessionID string }
		json.Unmarshal(args[0], &d)
		var m string
		json.Unmarshal(args[1], &m)
		if d.SessionID != "" {
			m = d.SessionID + ":" + m
		}
		if len(args) > 2 {
			m += " " + string(args[2])
		}
		out = append(out, m)
	}
	return out
}

// effectiveTimeout is the timeout an evaluation's params give Chrome:
// the last one, as JSON.parse reads them.
func effectiveTimeout(t *testing.T, params string) float64 {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(params), &m); err != nil {
		t.Fatalf("params %s: %v", params, err)
	}
	v, _ := m["timeout"].(float64)
	return v
}

// TestEvaluateBounded: every client evaluation reaches the tab with a
// timeout of at most the bound, whatever the client wrote; its other
// params go as they were.
func TestEvaluateBounded(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := newHarness(t, config.Config{ScriptTimeout: 7 * time.Second})
	h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: rec.handle})
	c := h.client()
	sess := h.autoAttach(c)[0]
	for _, tc := range []struct {
		params string
		want   float64
	}{
		{`{"expression":"1"}`, 7000},
		{`{"expression":"1","timeout":500}`, 500},
		{`{"expression":"1","timeout":1e12}`, 7000},
		{`{"expression":"1","timeout":-5}`, 7000},
		{`{"expression":"1","timeout":"soon"}`, 7000},
		{`{"expression":"1","t\u0069meout":1e12}`, 7000},
		{`{"expression":"1","timeout":5,"timeout":1e12}`, 5},
		{`{"expression":"1","timeout":1e12,"timeout":5}`, 7000},
		{`{"expression":"1","throwOnSideEffect":true}`, 7000},
		{`{"expression":"1","disableBreaks":true}`, 7000},
		{`{}`, 7000},
		{` { } `, 7000},
		{`null`, 7000},
	} {
		id := rawIDs.Add(1) + 5000
		frame := `{"id":` + strconv.FormatInt(id, 10) + `,"sessionId":"` + sess + `","method":"Runtime.evaluate","params":` + tc.params + `}`
		if err := c.WriteRaw([]byte(frame)); err != nil {
			t.Fatal(err)
		}
		h.reply(c, id)
		got := rec.lastOf(t, "Runtime.evaluate")
		if to := effectiveTimeout(t, got.params); to != tc.want {
			t.Errorf("%s reached the tab as %s: timeout %v, want %v", tc.params, got.params, to, tc.want)
		}
		if strings.Contains(tc.params, "expression") && !strings.HasPrefix(got.params, strings.TrimSuffix(strings.TrimSpace(tc.params), "}")) {
			t.Errorf("%s reached the tab as %s: the client's params changed", tc.params, got.params)
		}
	}
	// Other script goes as it came.
	h.call(c, sess, "Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function(){}", "executionContextId": 1})
	if got := rec.lastOf(t, "Runtime.callFunctionOn"); got.params != `{"executionContextId":1,"functionDeclaration":"function(){}"}` {
		t.Errorf("callFunctionOn reached the tab as %s", got.params)
	}
}

func TestAppendTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"expression":"1"}`, `{"expression":"1","timeout":3000}`},
		{`{}`, `{"timeout":3000}`},
		{"{\n}", "{\n\"timeout\":3000}"},
		{``, `{"timeout":3000}`},
		{`null`, `{"timeout":3000}`},
		{`{"timeout":10}`, `{"timeout":10,"timeout":10}`},
		{`{"timeout":10.9}`, `{"timeout":10.9,"timeout":10}`},
		{`[1]`, `[1]`},
		{`"x"`, `"x"`},
	} {
		if got := string(person.AppendTimeout(nil, []byte(tc.in), 3*time.Second)); got != tc.want {
			t.Errorf("appendTimeout(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// FuzzAppendTimeout: for any params that are a JSON object, the result is
// one too, keeps the client's members, and its last timeout (the one
// Chrome gets) is within the bound.
func FuzzAppendTimeout(f *testing.F) {
	for _, s := range []string{`{"expression":"1"}`, `{}`, `{"timeout":10}`, `{"timeout":1e300}`, `{"t\u0069meout":-1}`, `{"a":{"timeout":1e9}}`, `{"timeout":5,"timeout":1e12}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var before map[string]any
		if json.Unmarshal([]byte(in), &before) != nil || before == nil {
			return
		}
		out := person.AppendTimeout(nil, []byte(in), 3*time.Second)
		var after map[string]any
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("appendTimeout(%s) = %s: %v", in, out, err)
		}
		to, ok := after["timeout"].(float64)
		if !ok || to < 0 || to > 3000 {
			t.Fatalf("appendTimeout(%s) = %s: timeout %v", in, out, after["timeout"])
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				t.Fatalf("appendTimeout(%s) = %s lost %q", in, out, k)
			}
		}
	})
}

// TestBoundEndsScriptThatNeverEnds: a client's script command still
// waiting past the bound, on a page whose main thread does not answer, has
// its task ended and fails saying why; one that waits on a page that
// answers (an awaited promise) is left alone.
func TestBoundEndsScriptThatNeverEnds(t *testing.T) {
	t.Parallel()
	rec := &auditRecorder{}
	bound := 200 * time.Millisecond
	h := newHarness(t, config.Config{ScriptTimeout: bound, Observer: rec})
	page := newBusyPage()
	release := make(chan struct{})
	defer close(release)
	handler := func(tab int, sid, method string, params json.RawMessage) (any, error) {
		if strings.Contains(string(params), "awaitForever") {
			<-release // a promise that takes its time: the page is free
			return map[string]any{}, nil
		}
		return page.handler(tab, sid, method, params)
	}
	e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: handler})
	page.e = e
	c := h.client()
	sess := h.autoAttach(c)
	waiting := h.send(c, sess[1], "Runtime.callFunctionOn", map[string]any{"functionDeclaration": "async function awaitForever(){}", "executionContextId": 1, "awaitPromise": true})
	m := h.callMsg(c, sess[0], "Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function(){ while(true){} }", "executionContextId": 1})
	if m.Error == nil || m.Error.Message != person.MsgScriptEnded(bound) {
		t.Fatalf("the script that never ends: %s", m.Raw)
	}
	h.waitFor("the page is free", func() bool { return !page.isBusy("") })
	if len(page.received("Debugger.resume {\"terminateOnResume\":true}")) != 1 {
		t.Fatalf("the brake: %v", page.received("Debugger."))
	}
	h.waitFor("the audit record", func() bool {
		return rec.find(person.KindScriptEnded, "ended a script that kept the page busy past 200ms; 1 commands")
	})
	for _, msg := range c.Messages() {
		if msg.ID != nil && *msg.ID == waiting {
			t.Fatalf("the awaited promise was failed: %s", msg.Raw)
		}
	}
	if n := len(page.received("Debugger.pause")); n != 1 {
		t.Fatalf("%d pauses: the free page was paused too", n)
	}
}

// TestBrakeNeverLeavesPagePaused: a paused page answers what waited on its
// main thread at once, so the brake hears the pause and the page's answer
// together; whichever it reads first, the page is resumed and the script
// ended. Run on eight pages, as either order may come first.
func TestBrakeNeverLeavesPagePaused(t *testing.T) {
	t.Parallel()
	bound := 100 * time.Millisecond
	for i := range 8 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{ScriptTimeout: bound})
			page := newBusyPage()
			e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: page.handler})
			page.e = e
			c := h.client()
			sess := h.autoAttach(c)[0]
			m := h.callMsg(c, sess, "Runtime.evaluate", map[string]any{"expression": "while(true){}"})
			if m.Error == nil || m.Error.Message != person.MsgScriptEnded(bound) {
				t.Fatalf("the script that never ends: %s", m.Raw)
			}
			h.waitFor("the page is free", func() bool { return !page.isBusy("") })
			if page.isPaused("") {
				t.Fatal("the page was left paused")
			}
			if got := page.received("Debugger.resume"); len(got) != 1 || !strings.Contains(got[0], `"terminateOnResume":true`) {
				t.Fatalf("the brake: %v", page.received("Debugger."))
			}
		})
	}
}

// TestTheRelaysDebugger: the relay keeps the Debugger on in every tab,
// frame and worker, with breakpoints off; the client hears nothing of it
// until it enables the Debugger itself, which then starts afresh; its
// disable gives the relay's back; its setSkipAllPauses (which would keep
// the brake's pause from landing) becomes setBreakpointsActive.
func TestTheRelaysDebugger(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	sent := sentOn(e, 0)
	if i := indexOf(sent, "Debugger.enable"); i < 0 || i+1 >= len(sent) || sent[i+1] != `Debugger.setBreakpointsActive {"active":false}` {
		t.Fatalf("at attach: %v", sent)
	}

	// Nothing of the relay's Debugger reaches the client; a pause nobody
	// the client knows of could answer is resumed.
	from, before := len(c.Messages()), len(e.Commands())
	e.Event(1, "", "Debugger.scriptParsed", map[string]any{"scriptId": "5", "url": "https://a.example/app.js"})
	e.Event(1, "", "Debugger.paused", map[string]any{"callFrames": []any{}, "reason": "other"})
	h.waitFor("the pause is resumed", func() bool { return indexOf(sentOn(e, before), "Debugger.resume") >= 0 })
	h.call(c, sess, "Runtime.getIsolateId", nil)
	for _, m := range c.Messages()[from:] {
		if strings.HasPrefix(m.Method, "Debugger.") {
			t.Fatalf("the client heard of the relay's Debugger: %s", m.Raw)
		}
	}

	// The client's own.
	before = len(e.Commands())
	h.call(c, sess, "Debugger.enable", nil)
	if got := sentOn(e, before); len(got) != 2 || got[0] != "Debugger.disable" || got[1] != "Debugger.enable" {
		t.Fatalf("the client's Debugger.enable: %v", got)
	}
	from = len(c.Messages())
	e.Event(1, "", "Debugger.scriptParsed", map[string]any{"scriptId": "6", "url": "https://a.example/app.js"})
	h.event(c, from, "Debugger.scriptParsed")
	before = len(e.Commands())
	h.call(c, sess, "Debugger.setSkipAllPauses", map[string]any{"skip": true})
	h.call(c, sess, "Debugger.setSkipAllPauses", map[string]any{"skip": false})
	if got := sentOn(e, before); len(got) != 2 || got[0] != `Debugger.setBreakpointsActive {"active":false}` || got[1] != `Debugger.setBreakpointsActive {"active":true}` {
		t.Fatalf("the client's setSkipAllPauses: %v", got)
	}
	before = len(e.Commands())
	h.call(c, sess, "Debugger.disable", nil)
	h.waitFor("the relay's Debugger is back", func() bool { return len(sentOn(e, before)) == 3 })
	if got := sentOn(e, before); got[0] != "Debugger.disable" || got[1] != "Debugger.enable" || got[2] != `Debugger.setBreakpointsActive {"active":false}` {
		t.Fatalf("the client's Debugger.disable: %v", got)
	}
	from = len(c.Messages())
	e.Event(1, "", "Debugger.scriptParsed", map[string]any{"scriptId": "7", "url": "https://a.example/app.js"})
	h.call(c, sess, "Runtime.getIsolateId", nil)
	for _, m := range c.Messages()[from:] {
		if strings.HasPrefix(m.Method, "Debugger.") {
			t.Fatalf("after its disable the client heard: %s", m.Raw)
		}
	}

	// A frame or a worker gets the relay's Debugger as it is attached, and
	// the client's disable there gives it back.
	for _, kind := range []string{"iframe", "worker"} {
		child := "CHILD-" + kind
		before = len(e.Commands())
		e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": child, "targetInfo": map[string]any{"targetId": "T-" + kind, "type": kind, "url": "https://a.example/" + kind}, "waitingForDebugger": true})
		h.waitFor("the child's Debugger", func() bool { return indexOf(sentOn(e, before), child+":Debugger.enable") >= 0 })
		before = len(e.Commands())
		h.call(c, child, "Debugger.enable", nil)
		if m := h.callMsg(c, child, "Debugger.disable", nil); m.Error != nil {
			t.Fatalf("%s's Debugger.disable: %s", kind, m.Raw)
		}
		h.waitFor("the relay's Debugger is back", func() bool {
			return indexOf(sentOn(e, before), child+`:Debugger.setBreakpointsActive {"active":false}`) >= 0
		})
	}
}

// TestStopRules: what a person's Stop could not undo (virtual time) or end
// (script where the debugger takes no pause) is refused.
func TestStopRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	before := len(e.Commands())
	// The relay's own Debugger is not the client's.
	if m := h.callMsg(c, sess, "Debugger.getScriptSource", map[string]any{"scriptId": "1"}); m.Error == nil || m.Error.Message != "Debugger agent is not enabled" {
		t.Fatalf("Debugger.getScriptSource before the client's Debugger.enable: %s", m.Raw)
	}
	h.call(c, sess, "Debugger.enable", nil)
	for _, tc := range []struct {
		method, params string
		refused        bool
	}{
		{"Emulation.setVirtualTimePolicy", `{"policy":"pause"}`, true},
		{"Debugger.setBlackboxPatterns", `{"patterns":[".*"]}`, true},
		{"Debugger.setBlackboxedRanges", `{"scriptId":"1","positions":[]}`, true},
		{"Debugger.setBlackboxExecutionContexts", `{"uniqueIds":[]}`, true},
		{"Runtime.callFunctionOn", `{"functionDeclaration":"function(){}","executionContextId":1,"throwOnSideEffect":true}`, true},
		{"Runtime.callFunctionOn", `{"functionDeclaration":"function(){}","executionContextId":1,"throwOnSideEffect":false,"throwOnSideEffect":true}`, true},
		{"Runtime.callFunctionOn", `{"functionDeclaration":"function(){}","executionContextId":1,"throwOnSid\u0065Effect":1}`, true},
		{"Runtime.callFunctionOn", `{"functionDeclaration":"function(){}","executionContextId":1,"throwOnSideEffect":false}`, false},
		{"Runtime.evaluate", `{"expression":"1","throwOnSideEffect":true}`, false},
	} {
		id := rawIDs.Add(1) + 5000
		frame := `{"id":` + strconv.FormatInt(id, 10) + `,"sessionId":"` + sess + `","method":"` + tc.method + `","params":` + tc.params + `}`
		if err := c.WriteRaw([]byte(frame)); err != nil {
			t.Fatal(err)
		}
		m, _ := h.reply(c, id)
		if refused := m.Error != nil && strings.HasPrefix(m.Error.Message, "cdprelay: "); refused != tc.refused {
			t.Errorf("%s %s: %s", tc.method, tc.params, m.Raw)
		}
	}
	for _, s := range sentOn(e, before) {
		if strings.Contains(s, "VirtualTime") || strings.Contains(s, "Blackbox") || strings.Contains(s, `"throwOnSideEffect":true`) && strings.HasPrefix(s, "Runtime.callFunctionOn") {
			t.Errorf("reached the tab: %s", s)
		}
	}
}

// TestStopUndoesWhatTheAutomationSet: after a Stop the relay detaches the
// tab and attaches it again (Chrome then drops what the client's session
// set), resets what outlives a session, and records what it undid; it
// sets nothing of the client's again while stopped. Resume sets it again
// before the client's next command for the tab.
func TestStopUndoesWhatTheAutomationSet(t *testing.T) {
	t.Parallel()
	rec := &auditRecorder{}
	h := newHarness(t, config.Config{Observer: rec})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Runtime.enable", nil)
	h.call(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "window.planted = 1"})
	h.call(c, sess, "Runtime.addBinding", map[string]any{"name": "planted"})
	h.call(c, sess, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 300, "height": 200, "deviceScaleFactor": 1, "mobile": false})
	h.call(c, sess, "Emulation.setPageScaleFactor", map[string]any{"pageScaleFactor": 2})
	h.call(c, sess, "Page.setWebLifecycleState", map[string]any{"state": "frozen"})
	in := h.srv.Default()
	before := len(e.Commands())
	from := len(c.Messages())
	if err := in.Stop("viewer-1"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the record of what the Stop undid", func() bool { return rec.find(api.KindStop, "the Stop by viewer-1 undid, on 1 tabs") })
	for _, want := range []string{"Page.addScriptToEvaluateOnNewDocument", "Runtime.addBinding", "Emulation.setDeviceMetricsOverride", "Emulation.setPageScaleFactor"} {
		if !rec.find(api.KindStop, want) {
			t.Errorf("the record does not say %s: %+v", want, rec.ev)
		}
	}
	sent := sentOn(e, before)
	order := []string{`Page.setWebLifecycleState {"state":"active"}`, "chrome.debugger.detach", "chrome.debugger.attach", "Emulation.resetPageScaleFactor"}
	last := -1
	for _, w := range order {
		i := indexOf(sent, w)
		if i <= last {
			t.Fatalf("%s not in order %v: %v", w, order, sent)
		}
		last = i
	}
	for _, s := range sent {
		for _, set := range []string{"addScriptToEvaluateOnNewDocument", "addBinding", "setDeviceMetricsOverride"} {
			if strings.Contains(s, set) {
				t.Errorf("set again while stopped: %s", s)
			}
		}
	}
	// Runtime is the relay's own (runtimehold.go): on again with the
	// attach, once, whatever the client had switched.
	if n := len(slices.DeleteFunc(slices.Clone(sent), func(s string) bool { return !strings.HasPrefix(s, "Runtime.enable") })); n != 1 || indexOf(sent, "Runtime.enable") < indexOf(sent, "chrome.debugger.attach") {
		t.Errorf("the relay's Runtime not on again once with the attach: %v", sent)
	}
	// The client's session stays, and its view of the contexts stays as
	// it was while stopped: a script it had just sent is refused for the
	// person's Stop, not taken for a navigation. A context the page makes
	// meanwhile is withheld.
	e.Event(1, "", "Runtime.executionContextCreated", map[string]any{"context": map[string]any{"id": 2, "origin": "https://a.example", "name": "",
		"uniqueId": "u2", "auxData": map[string]any{"isDefault": true, "type": "default", "frameId": tid(1)}}})
	e.Event(1, "", "Page.lifecycleEvent", map[string]any{"frameId": tid(1), "loaderId": "L", "name": "marker", "timestamp": 1})
	_, upTo := h.event(c, from, "Page.lifecycleEvent") // the relay has read the context's event
	for _, m := range c.Messages()[from:upTo] {
		if strings.HasPrefix(m.Method, "Runtime.executionContext") {
			t.Fatalf("the client heard of its contexts while stopped: %s", m.Raw)
		}
	}

	before = len(e.Commands())
	from = len(c.Messages())
	if err := in.Resume("viewer-1"); err != nil {
		t.Fatal(err)
	}
	// Resume brings the client's view up to date: the contexts it knew are
	// gone, and the page's are announced, before its commands go on.
	cleared, ci := h.event(c, from, "Runtime.executionContextsCleared")
	created, cr := h.event(c, from, "Runtime.executionContextCreated")
	if !strings.Contains(string(created.Raw), `"id":2`) || ci > cr {
		t.Fatalf("after Resume: %s (at %d), then %s (at %d)", cleared.Raw, ci, created.Raw, cr)
	}
	h.call(c, sess, "DOM.describeNode", map[string]any{"backendNodeId": 1})
	sent = sentOn(e, before)
	at := indexOf(sent, "DOM.describeNode")
	for _, set := range []string{"Page.addScriptToEvaluateOnNewDocument", "Runtime.addBinding", "Emulation.setDeviceMetricsOverride"} {
		if i := indexOf(sent, set); i < 0 || i > at {
			t.Errorf("%s not set again before the client's next command: %v", set, sent)
		}
	}
	// The client's Runtime switch is the relay's to keep: still on, it
	// hears of the page's contexts.
	from = len(c.Messages())
	e.Event(1, "", "Runtime.executionContextCreated", map[string]any{"context": map[string]any{"id": 3, "origin": "https://a.example", "name": "",
		"uniqueId": "u3", "auxData": map[string]any{"isDefault": true, "type": "default", "frameId": tid(1)}}})
	h.event(c, from, "Runtime.executionContextCreated")
}

// TestBrakeLeavesOthersPauses: while the bound looks whether a page is
// busy, a pause the brake did not ask for (the client's breakpoint) is the
// client's, as without the brake: it hears of it, and may resume it.
func TestBrakeLeavesOthersPauses(t *testing.T) {
	t.Parallel()
	asked, answer, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once sync.Once
	defer close(done)
	handler := func(tab int, sid, method string, params json.RawMessage) (any, error) {
		switch {
		case method == "Runtime.getIsolateId":
			once.Do(func() { close(asked) })
			<-answer
			return map[string]any{"id": "isolate"}, nil
		case method == "Runtime.evaluate" && strings.Contains(string(params), "takesItsTime"):
			<-done
			return map[string]any{"result": map[string]any{"type": "undefined"}}, nil
		}
		return fakeext.DefaultHandler(tab, sid, method, params)
	}
	h := newHarness(t, config.Config{ScriptTimeout: 100 * time.Millisecond})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: handler})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Debugger.enable", nil)
	h.send(c, sess, "Runtime.evaluate", map[string]any{"expression": "takesItsTime()"})
	select {
	case <-asked: // the bound looks whether the page is busy
	case <-h.ctx.Done():
		t.Fatal("the bound did not look at the page")
	}
	from := len(c.Messages())
	e.Event(1, "", "Debugger.paused", map[string]any{"reason": "other", "callFrames": []any{}, "hitBreakpoints": []string{"client-1"}})
	h.event(c, from, "Debugger.paused")
	close(answer)
}

// TestBrakeStrayPauseLetGo: a brake's pause that did not land in time
// (stray) may land while the next brake on the session waits to see
// whether the page is busy, before it asks for its own. It is the stray
// one, and is let go: taken for the page's own, a client with the
// Debugger on would hear a pause it never caused, and the page would
// stay paused until it resumed it. The script is ended by the brake after
// it.
func TestBrakeStrayPauseLetGo(t *testing.T) {
	t.Parallel()
	bound := 100 * time.Millisecond
	h := newHarness(t, config.Config{ScriptTimeout: bound})
	page := newBusyPage()
	var mu sync.Mutex
	pauses, isolates := 0, 0
	handler := func(tab int, sid, method string, params json.RawMessage) (any, error) {
		if tab == 1 && sid == "" {
			mu.Lock()
			switch method {
			case "Debugger.pause":
				pauses++
				if pauses == 1 {
					// The first brake's pause does not land in time.
					mu.Unlock()
					page.mu.Lock()
					page.seen = append(page.seen, method+" "+string(params))
					page.mu.Unlock()
					return map[string]any{}, nil
				}
			case "Runtime.getIsolateId":
				isolates++
				if pauses == 1 && isolates > 1 {
					// The next brake looks whether the page is busy: the
					// stray pause lands now.
					pauses++
					go func() {
						time.Sleep(100 * time.Millisecond)
						page.pause(tab, sid)
					}()
				}
			}
			mu.Unlock()
		}
		return page.handler(tab, sid, method, params)
	}
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: handler})
	page.e = e
	c := h.client()
	sess := h.autoAttach(c)[0]
	// A client with the Debugger on hears the page's own pauses: it must
	// not hear the brake's.
	h.call(c, sess, "Debugger.enable", nil)
	from := len(c.Messages())
	id := h.send(c, sess, "Runtime.evaluate", map[string]any{"expression": "while(true){}"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, _, err := c.WaitReply(ctx, id)
	if err != nil {
		t.Fatalf("the script that never ends was not ended (page paused: %t): %v; the tab got %v", page.isPaused(""), err, page.received("Debugger."))
	}
	if m.Error == nil || m.Error.Message != person.MsgScriptEnded(bound) {
		t.Fatalf("the script that never ends: %s", m.Raw)
	}
	h.waitFor("the page is free", func() bool { return !page.isBusy("") })
	if page.isPaused("") {
		t.Fatal("the page was left paused")
	}
	got := page.received("Debugger.resume")
	if len(got) != 2 || strings.Contains(got[0], "terminateOnResume") || !strings.Contains(got[1], `"terminateOnResume":true`) {
		t.Fatalf("want the stray pause let go, then the script ended: %v", got)
	}
	for _, m := range c.Messages()[from:] {
		if m.Method == "Debugger.paused" {
			t.Fatalf("the client heard the brake's pause: %s", m.Raw)
		}
	}
}
