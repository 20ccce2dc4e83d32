package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay"
)

// A person's Stop against a hostile raw client: whatever the automation
// started or set in the person's tab, after Stop it neither keeps the tab
// frozen nor keeps acting there. What counts is what the person's own
// browser shows (through its own debugging port) and what the test site
// served, never an error's wording.

// answers evaluates expr in a target as the person, waiting at most wait
// for the page to answer: a page whose main thread never comes free does
// not.
func (p *person) answers(targetID, expr string, wait time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	res, err := p.c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true})
	if err != nil {
		return "", fmt.Errorf("attach: %w", err)
	}
	var r struct{ SessionID string }
	json.Unmarshal(res, &r)
	defer p.c.Send("", "Target.detachFromTarget", map[string]any{"sessionId": r.SessionID})
	ctx, cancel = context.WithTimeout(p.ctx, wait)
	defer cancel()
	res, err = p.c.Call(ctx, r.SessionID, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		return "", err
	}
	return evalValue(res)
}

// unfreeze ends, as only the person's own port may, whatever script keeps
// a target busy, so that a failing test leaves the site's renderer usable
// for the tests after it.
func (p *person) unfreeze(targetID string) {
	if _, err := p.answers(targetID, "1", 500*time.Millisecond); err == nil {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	res, err := p.c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true})
	if err != nil {
		return
	}
	var r struct{ SessionID string }
	json.Unmarshal(res, &r)
	p.c.Call(ctx, r.SessionID, "Runtime.terminateExecution", nil)
	p.c.Call(ctx, "", "Target.detachFromTarget", map[string]any{"sessionId": r.SessionID})
}

// stopAutomation is the person's Stop, as the live view's button and
// POST /v1/instances/<id>/stop do it; the automation is resumed when the
// test ends.
func stopAutomation(t *testing.T) {
	t.Helper()
	in := env.Relay.Default()
	mark := env.Audit.Len()
	if err := in.Stop("the person"); err != nil {
		t.Fatalf("stop: %v", err)
	}
	t.Cleanup(func() {
		if err := in.Resume("the person"); err != nil && !errors.Is(err, relay.ErrNotStopped) {
			t.Errorf("resume: %v", err)
		}
	})
	// What the Stop undoes is done when the audit log says what it undid:
	// after every shared tab's undoing, each bounded by the relay at 15 s
	// (a tab the browser keeps detaching takes that long), so the wait
	// here is longer than that bound.
	deadline := time.Now().Add(3 * pageAnswerWait)
	for !undone(mark) {
		if time.Now().After(deadline) {
			t.Fatal("the Stop's undoing was not recorded")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// undone reports whether the audit log has recorded, since mark, what a
// Stop undid.
func undone(mark int) bool {
	for _, ev := range env.Audit.Since(mark) {
		if ev.Kind == relay.KindStop && strings.Contains(ev.Detail, "undid") {
			return true
		}
	}
	return false
}

// pageAnswerWait bounds how long the person's page may take to answer
// once stopped: generous, to avoid a hang, never a timing target.
const pageAnswerWait = 15 * time.Second

// TestStopEndsScriptThatNeverEnds: the automation starts script that never
// ends in the person's tab, in each way a client can; the tab is frozen
// (the person's own script there gets no answer). After Stop the person's
// script runs again.
func TestStopEndsScriptThatNeverEnds(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 4*time.Minute)
	p := newPerson(ctx, t)
	p.spareTab()
	for _, tc := range []struct {
		name string
		// start starts the attack; an error is the relay refusing it,
		// which passes.
		start func(a *attacker, session string) error
	}{
		{"evaluate", func(a *attacker, s string) error {
			a.sendRaw(s, "Runtime.evaluate", `{"expression":"while(true){}"}`)
			return nil
		}},
		{"evaluate with a long timeout of its own", func(a *attacker, s string) error {
			a.sendRaw(s, "Runtime.evaluate", `{"expression":"while(true){}","timeout":1e12}`)
			return nil
		}},
		// V8 takes no pause under its side-effect check, nor with breaks
		// disabled.
		{"evaluate under the side-effect check", func(a *attacker, s string) error {
			a.sendRaw(s, "Runtime.evaluate", `{"expression":"while(true){}","throwOnSideEffect":true}`)
			return nil
		}},
		{"evaluate with breaks disabled", func(a *attacker, s string) error {
			a.sendRaw(s, "Runtime.evaluate", `{"expression":"while(true){}","disableBreaks":true}`)
			return nil
		}},
		{"callFunctionOn", func(a *attacker, s string) error {
			a.sendRaw(s, "Runtime.callFunctionOn", `{"functionDeclaration":"function(){ while(true){} }","objectId":`+quote(a.document(s))+`}`)
			return nil
		}},
		{"callFunctionOn under the side-effect check", func(a *attacker, s string) error {
			_, err := a.callRawWait(s, "Runtime.callFunctionOn", `{"functionDeclaration":"function(){ while(true){} }","objectId":`+quote(a.document(s))+`,"throwOnSideEffect":true}`, 300*time.Millisecond)
			if err != nil && strings.Contains(err.Error(), "cdprelay") {
				return err
			}
			return nil
		}},
		{"blackboxed script", func(a *attacker, s string) error {
			a.call(s, "Debugger.enable", nil)
			if _, err := a.call(s, "Debugger.setBlackboxPatterns", map[string]any{"patterns": []string{".*"}, "skipAnonymous": true}); err != nil {
				return err
			}
			a.sendRaw(s, "Runtime.callFunctionOn", `{"functionDeclaration":"function(){ while(true){} }","objectId":`+quote(a.document(s))+`}`)
			return nil
		}},
		{"skipping all pauses", func(a *attacker, s string) error {
			a.call(s, "Debugger.enable", nil)
			a.call(s, "Debugger.setSkipAllPauses", map[string]any{"skip": true})
			a.sendRaw(s, "Runtime.callFunctionOn", `{"functionDeclaration":"function(){ while(true){} }","objectId":`+quote(a.document(s))+`}`)
			return nil
		}},
		{"a timer it planted", func(a *attacker, s string) error {
			if _, err := a.eval(s, "setTimeout(() => { while(true){} }, 50), 1"); err != nil {
				a.t.Fatal(err)
			}
			return nil
		}},
		{"a promise it awaits", func(a *attacker, s string) error {
			a.sendRaw(s, "Runtime.evaluate", `{"expression":"(async () => { await new Promise((r) => setTimeout(r, 20)); while(true){} })()","awaitPromise":true}`)
			return nil
		}},
		{"the page's own handler it rewrote", func(a *attacker, s string) error {
			if _, err := a.eval(s, "window.pressed = () => { while(true){} }, 1"); err != nil {
				a.t.Fatal(err)
			}
			for _, ty := range []string{"mousePressed", "mouseReleased"} {
				a.sendRaw(s, "Input.dispatchMouseEvent", `{"type":"`+ty+`","x":40,"y":40,"button":"left","clickCount":1}`)
			}
			return nil
		}},
		{"a script for new documents", func(a *attacker, s string) error {
			if _, err := a.call(s, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "while(true){}"}); err != nil {
				a.t.Fatal(err)
			}
			a.sendRaw(s, "Page.reload", `{}`)
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAttacker(ctx, t)
			target, session := a.newTab(env.Pages.Main + "/stop.html?never-ends")
			t.Cleanup(func() {
				p.unfreeze(target)
				p.call("", "Target.closeTarget", map[string]any{"targetId": target})
			})
			if err := tc.start(a, session); err != nil {
				t.Logf("refused: %v", err)
				return
			}
			time.Sleep(300 * time.Millisecond)
			if v, err := p.answers(target, "ticks", 1500*time.Millisecond); err == nil {
				t.Fatalf("the attack did not take: the page answered %s", v)
			}
			stopped := time.Now()
			stopAutomation(t)
			if v, err := p.answers(target, "document.title", pageAnswerWait); err != nil {
				t.Fatalf("after Stop the person's tab still does not answer: %s %v", v, err)
			}
			t.Logf("the person's page answered %v after the Stop", time.Since(stopped).Round(time.Millisecond))
			// And its own script runs there again.
			if v, err := p.answers(target, "new Promise((r) => { const t0 = ticks; setTimeout(() => r(ticks > t0), 500); })", pageAnswerWait); err != nil || v != "true" {
				t.Fatalf("after Stop the person's page does not run its own script: %s %v", v, err)
			}
		})
	}
}

// document returns the objectId of a session's document, to call script
// on.
func (a *attacker) document(session string) string {
	a.t.Helper()
	res, err := a.call(session, "Runtime.evaluate", map[string]any{"expression": "document"})
	var r struct{ Result struct{ ObjectID string } }
	json.Unmarshal(res, &r)
	if err != nil || r.Result.ObjectID == "" {
		a.t.Fatalf("an object to call on: %s %v", res, err)
	}
	return r.Result.ObjectID
}

// TestScriptBoundWithoutStop: nobody stops the automation; its script that
// never ends is ended all the same once it has kept the person's tab busy
// past the relay's bound (relay.Config.ScriptTimeout, 10 s), and the
// client is told why.
func TestScriptBoundWithoutStop(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 2*time.Minute)
	p := newPerson(ctx, t)
	p.spareTab()
	for _, tc := range []struct{ name, method, params string }{
		{"evaluate", "Runtime.evaluate", `{"expression":"while(true){}"}`},
		{"callFunctionOn", "Runtime.callFunctionOn", `{"functionDeclaration":"function(){ while(true){} }","objectId":%q}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAttacker(ctx, t)
			target, session := a.newTab(env.Pages.Main + "/stop.html?bound")
			t.Cleanup(func() {
				p.unfreeze(target)
				p.call("", "Target.closeTarget", map[string]any{"targetId": target})
			})
			params := tc.params
			if strings.Contains(params, "%q") {
				params = fmt.Sprintf(params, a.document(session))
			}
			_, err := a.callRawWait(session, tc.method, params, time.Minute)
			if err == nil || !strings.Contains(err.Error(), "terminated") && !strings.Contains(err.Error(), "bound") {
				t.Fatalf("the script that never ends: %v", err)
			}
			if v, err := p.answers(target, "document.title", pageAnswerWait); err != nil {
				t.Fatalf("the person's tab still does not answer: %s %v", v, err)
			}
		})
	}
}

// TestStopLiftsWhatTheAutomationSet: the automation sets, in the person's
// tab, everything a client can set there that changes how the page
// behaves for the person; after Stop none of it acts any more, and a
// reload by the person runs none of its scripts.
func TestStopLiftsWhatTheAutomationSet(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 2*time.Minute)
	p := newPerson(ctx, t)
	p.spareTab()
	a := newAttacker(ctx, t)
	mark := secret("lift")
	target, session := a.newTab(env.Pages.Main + "/stop.html?lift")
	t.Cleanup(func() { p.unfreeze(target) })
	beacon := "/beacon/" + mark
	for _, c := range []cdpCall{
		{"Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "fetch('" + beacon + "-init')"}},
		{"Runtime.enable", nil},
		{"Runtime.addBinding", map[string]any{"name": "plantedBinding"}},
		{"Emulation.setDeviceMetricsOverride", map[string]any{"width": 301, "height": 202, "deviceScaleFactor": 1, "mobile": false}},
		{"Emulation.setUserAgentOverride", map[string]any{"userAgent": "planted-agent"}},
		{"Emulation.setTimezoneOverride", map[string]any{"timezoneId": "Asia/Tokyo"}},
		{"Emulation.setPageScaleFactor", map[string]any{"pageScaleFactor": 2}},
		{"Network.enable", nil},
		{"Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{"X-Planted": mark}}},
		{"Fetch.enable", map[string]any{"patterns": []any{map[string]any{"urlPattern": "*" + mark + "-held*"}}}},
		{"Input.setIgnoreInputEvents", map[string]any{"ignore": true}},
	} {
		if _, err := a.call(session, c.method, c.params); err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
	}
	// A request of the person's that the automation's interception holds.
	if _, err := p.answers(target, "window.held = fetch('"+beacon+"-held').then((r) => r.text()), 1", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// Settings that freeze the page last: once set, the page answers no more.
	for _, c := range []cdpCall{
		{"Emulation.setScriptExecutionDisabled", map[string]any{"value": true}},
		{"Emulation.setVirtualTimePolicy", map[string]any{"policy": "pause"}},
		{"Page.setWebLifecycleState", map[string]any{"state": "frozen"}},
	} {
		a.call(session, c.method, c.params) // refused or not: what counts is the page
	}
	if v, err := p.answers(target, "[innerWidth, navigator.userAgent]", 3*time.Second); err == nil && !strings.Contains(v, "planted-agent") {
		t.Fatalf("the settings did not take: %s", v)
	}

	stopAutomation(t)
	deadline := time.Now().Add(pageAnswerWait)
	for {
		if _, err := p.answers(target, "1", 2*time.Second); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("after Stop the person's page does not answer")
		}
	}
	p.clickAt(target, 40, 40)
	var got map[string]any
	for {
		v, err := p.answers(target, `(async () => {
		  const t0 = window.ticks, d0 = Date.now();
		  await new Promise((r) => setTimeout(r, 300));
		  return {width: innerWidth, agent: navigator.userAgent, zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
		    scale: visualViewport.scale, binding: typeof plantedBinding, presses: window.presses,
		    ticking: window.ticks > t0, clock: Date.now() - d0 >= 250,
		    held: await Promise.race([window.held, new Promise((r) => setTimeout(() => r('still held'), 2000))]),
		    header: await fetch('`+beacon+`-header').then((r) => r.text()),
		    script: (() => { const s = document.createElement('script'); s.textContent = 'window.ran = 1'; document.body.append(s); return window.ran === 1; })()};
		})()`, 5*time.Second)
		if err == nil {
			json.Unmarshal([]byte(v), &got)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after Stop the person's page does not answer: %v", err)
		}
	}
	want := map[string]any{"zone": "UTC", "scale": 1.0, "presses": 1.0, "ticking": true, "clock": true, "held": "ok", "header": "ok", "script": true}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("after Stop, %s is %v, not %v (the automation's setting still acts)", k, got[k], w)
		}
	}
	if got["width"] == 301.0 || strings.Contains(fmt.Sprint(got["agent"]), "planted") {
		t.Errorf("after Stop the page still has the automation's viewport or user agent: %v", got)
	}
	if n := env.Pages.Hits(env.Pages.Main, beacon+"-header+planted"); n > 0 {
		t.Errorf("after Stop the person's request carried the automation's header")
	}
	// The binding may stay a function of this document; it reaches nobody.
	from := len(a.c.Messages())
	p.answers(target, "typeof plantedBinding === 'function' && plantedBinding('after stop'), 1", 3*time.Second)

	// The person reloads the page: none of the automation's scripts runs.
	before := env.Pages.Hits(env.Pages.Main, beacon+"-init")
	p.reload(target)
	settle()
	if n := env.Pages.Hits(env.Pages.Main, beacon+"-init"); n > before {
		t.Errorf("the automation's script for new documents ran on the person's reload (%d requests)", n-before)
	}
	for _, m := range a.c.Messages()[from:] {
		if m.Method == "Runtime.bindingCalled" {
			t.Errorf("the page's call reached the stopped automation: %s", m.Raw)
		}
	}
}

// TestStopPlantedTimerEndsWithTheDocument: script the automation left in
// the page (a timer that keeps fetching, re-planted on every new document
// by a script for new documents) is part of the page's own state; Stop
// cannot tell it from the page's, so it goes on until the person reloads
// the page (in their browser or the live view) — and then it is gone:
// nothing of the automation's comes back with the new document.
func TestStopPlantedTimerEndsWithTheDocument(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 2*time.Minute)
	p := newPerson(ctx, t)
	p.spareTab()
	a := newAttacker(ctx, t)
	mark := secret("timer")
	target, session := a.newTab(env.Pages.Main + "/stop.html?timer")
	plant := "setInterval(() => fetch('/beacon/" + mark + "'), 100)"
	if _, err := a.call(session, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": plant}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.eval(session, plant+", 1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if env.Pages.Hits(env.Pages.Main, "/beacon/"+mark) == 0 {
		t.Fatal("the planted timer does not fetch")
	}
	stopAutomation(t)
	p.reload(target)
	settle()
	n := env.Pages.Hits(env.Pages.Main, "/beacon/"+mark)
	time.Sleep(time.Second)
	if more := env.Pages.Hits(env.Pages.Main, "/beacon/"+mark) - n; more > 0 {
		t.Errorf("after Stop and the person's reload, the automation's timer fetched %d more times", more)
	}
}

// clickAt presses and releases the left button at (x, y) of a target, as the
// person.
func (p *person) clickAt(targetID string, x, y int) {
	p.t.Helper()
	s := p.attach(targetID)
	defer p.call("", "Target.detachFromTarget", map[string]any{"sessionId": s})
	for _, ty := range []string{"mousePressed", "mouseReleased"} {
		if _, err := p.call(s, "Input.dispatchMouseEvent", map[string]any{"type": ty, "x": x, "y": y, "button": "left", "clickCount": 1}); err != nil {
			p.t.Fatalf("the person's click: %v", err)
		}
	}
}

// reload reloads a target as the person, and waits until it has loaded.
func (p *person) reload(targetID string) {
	p.t.Helper()
	s := p.attach(targetID)
	if _, err := p.call(s, "Page.reload", nil); err != nil {
		p.t.Fatalf("the person's reload: %v", err)
	}
	p.call("", "Target.detachFromTarget", map[string]any{"sessionId": s})
	deadline := time.Now().Add(pageAnswerWait)
	for {
		v, err := p.answers(targetID, "document.readyState", 2*time.Second)
		if err == nil && v == `"complete"` {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the person's reload did not finish: %s %v", v, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
