package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/cdptest"
)

// A person's everyday Chrome: a password manager (the stand-in, whose
// inline menu is a frame of another extension), discarded tabs, an
// extension that reloads, browser pages and other extensions' pages. Each
// scenario runs first against the browser's own debugging port, the
// reference, where every step passes, then through the relay.

// guardFrames sets the person's consent to the frame guard for the rest of
// the test, through our extension's page, and takes it back at the end.
func guardFrames(t *testing.T, p *person, on bool) {
	t.Helper()
	request := p.connectPage()
	if on {
		request(`{type: "guardFrames", on: true}`)
		t.Cleanup(func() { request(`{type: "guardFrames", on: false}`) })
	}
}

// TestPasswordManagerReference: Playwright's login scenario against the
// browser's own port, with the password manager's frames in the pages.
func TestPasswordManagerReference(t *testing.T) {
	requireEnv(t)
	runNode(t, "password.mjs", env.BrowserWS, env.Pages.Main)
}

// TestPasswordManagerGuarded: the same scenario through the relay, with
// the person's consent to keep other extensions' frames out of the tabs
// the automation holds: every step passes, the page is never closed under
// the automation.
func TestPasswordManagerGuarded(t *testing.T) {
	requireEnv(t)
	p := newPerson(testCtx(t, 90*time.Second), t)
	guardFrames(t, p, true)
	runNode(t, "password.mjs", env.HTTPEndpoint(), env.Pages.Main)
	assertTabsKept(t)
}

// TestPasswordManagerUnguarded: without the person's consent, a tab that
// shows another extension's frame cannot be debugged. The client is never
// left waiting: its session ends at once, with the reason, and its console
// is told; a client that attaches meanwhile gets an answer. Once the
// person takes the tab to a page without the frame, it comes back, to the
// same client and to a new one.
func TestPasswordManagerUnguarded(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 90*time.Second)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	target, session := a.newTab(env.Pages.Main + "/")
	if _, err := a.call(session, "Log.enable", nil); err != nil {
		t.Fatal(err)
	}
	from := len(a.c.Messages())
	start := time.Now()
	// The automation goes to a login page; the menu comes on load.
	a.sendRaw(session, "Page.navigate", `{"url":`+quote(env.Pages.Main+"/login.html")+`}`)
	det, _, err := a.c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
		return m.Method == "Target.detachedFromTarget" && strings.Contains(string(m.Params), session)
	})
	if err != nil {
		t.Fatalf("the session did not end: %v", err)
	}
	t.Logf("the session ended %v after the navigation: %s", time.Since(start).Round(time.Millisecond), det.Params)
	if !strings.Contains(string(det.Params), "another extension's frame") {
		t.Errorf("no reason in the detach: %s", det.Params)
	}
	warned := false
	for _, m := range a.c.Messages()[from:] {
		if m.Method == "Log.entryAdded" && m.SessionID == session && strings.Contains(string(m.Params), `"warning"`) {
			warned = true
		}
	}
	if !warned {
		t.Error("no warning on the session's console")
	}
	// Attaching the tab now is answered at once, one way or the other.
	if res, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}); err == nil {
		t.Logf("attached meanwhile: %s", res)
	} else {
		t.Logf("attach meanwhile: %v", err)
	}
	// The person's menu works in the tab, now that nobody debugs it.
	p.waitFor(target, `document.getElementById("pw").dataset.pm === "ready"`)

	// The person goes on to a page without a form: the tab comes back.
	from = len(a.c.Messages())
	ps := p.attach(target)
	if _, err := p.call(ps, "Page.navigate", map[string]any{"url": env.Pages.Main + "/form.html"}); err != nil {
		t.Fatal(err)
	}
	back := a.sessionSince(from, target, 15*time.Second)
	if back == "" {
		t.Fatalf("the tab did not come back: %s", describeTargets(a))
	}
	a.waitLoaded(back, env.Pages.Main+"/form.html")
	t.Log("ok - the tab came back once its page had no other extension's frame")

	// A new client sees it and attaches it by its target id.
	a.c.Close()
	b := newAttacker(ctx, t)
	res, err := b.call("", "Target.getTargets", nil)
	if err != nil || !strings.Contains(string(res), target) {
		t.Fatalf("a new client's targets: %s %v", res, err)
	}
	s := b.sessionFor(target, 10*time.Second)
	if s == "" {
		t.Fatal("a new client got no session on the tab")
	}
	if v, err := b.eval(s, "document.title"); err != nil || v != `"Form"` {
		t.Fatalf("a new client's evaluation: %s %v", v, err)
	}
}

// TestPasswordManagerInPersonsTabs: in the tabs the automation does not
// hold, the person's password manager works, guard or no guard; in a tab
// it held, the menu comes back once the automation has let go.
func TestPasswordManagerInPersonsTabs(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 90*time.Second)
	p := newPerson(ctx, t)
	p.pickMode()
	guardFrames(t, p, true)
	// The person's own login tab, not shared.
	mine := p.openTab(env.Pages.Main + "/login.html?pm=shadow")
	p.waitFor(mine, `document.getElementById("pw").dataset.pm === "ready"`)

	// The automation works on a login page of its own meanwhile.
	a := newAttacker(ctx, t)
	target, session := a.newTab(env.Pages.Main + "/login.html?pm-when=focus")
	// A headless page has no focus of its own: as Playwright does, the
	// automation emulates it, so that the field's focus event fires.
	if _, err := a.call(session, "Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.eval(session, `document.getElementById("pw").focus(), 1`); err != nil {
		t.Logf("focus: %v", err)
	}
	a.waitLoaded(session, env.Pages.Main+"/login.html?pm-when=focus")
	if v, err := a.eval(session, `document.getElementById("pw").dataset.pm`); err != nil || v != `"inserted"` {
		t.Errorf("the menu did not try to come: %s %v", v, err)
	}
	if v := p.eval(mine, `document.getElementById("pw").dataset.pm + " " + !!document.querySelector("stand-in-menu")`); v != `"ready true"` {
		t.Errorf("the person's own tab: %s", v)
	}
	// In the automation's tab the menu was kept out.
	if v := p.eval(target, `document.querySelectorAll("iframe").length`); v != "0" {
		t.Errorf("frames in the automation's tab: %s", v)
	}
	// The automation lets go: the person's focus brings the menu back.
	a.c.Close()
	waitReleased(t, target)
	p.focus(target, "pw")
	p.waitFor(target, `document.getElementById("pw").dataset.pm === "ready"`)
}

// waitFor waits until expr is true in the person's target.
func (p *person) waitFor(targetID, expr string) {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.eval(targetID, "(() => { try { return !!("+expr+") } catch { return false } })()") != "true" {
		if time.Now().After(deadline) {
			p.t.Fatalf("in %s, never true: %s", targetID, expr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitReleased waits until the relay has let go of the tab of targetID.
func waitReleased(t *testing.T, targetID string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		released := true
		for _, tab := range env.Relay.Default().Status().Tabs {
			if tab.TargetID == targetID && tab.Attached {
				released = false
			}
		}
		if released {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the relay still holds %s", targetID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func describeTargets(a *attacker) string {
	var b strings.Builder
	for id, urls := range a.targets() {
		b.WriteString("\n  " + id + urls)
	}
	return b.String()
}

// focus focuses the element with id in the person's target, as a click
// would: with focus emulated, so that a headless page fires the event.
func (p *person) focus(targetID, id string) {
	p.t.Helper()
	s := p.attach(targetID)
	defer p.call("", "Target.detachFromTarget", map[string]any{"sessionId": s})
	if _, err := p.call(s, "Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true}); err != nil {
		p.t.Fatal(err)
	}
	expr := `document.getElementById(` + quote(id) + `).blur(), document.getElementById(` + quote(id) + `).focus(), 1`
	if _, err := p.call(s, "Runtime.evaluate", map[string]any{"expression": expr}); err != nil {
		p.t.Fatal(err)
	}
}

// sessionSince is sessionFor for an attachedToTarget at index from or
// later: a session the client got after something happened.
func (a *attacker) sessionSince(from int, targetID string, wait time.Duration) string {
	ctx, cancel := context.WithTimeout(a.ctx, wait)
	defer cancel()
	m, _, err := a.c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
		return m.Method == "Target.attachedToTarget" && targetOf(m.Params) == targetID
	})
	if err != nil {
		return ""
	}
	var ev struct{ SessionID string }
	json.Unmarshal(m.Params, &ev)
	return ev.SessionID
}
