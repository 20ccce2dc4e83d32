package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	neturl "net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/testenv"
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
	p.waitTrue(target, `document.getElementById("pw").dataset.pm === "ready"`)

	// The menu goes (the person closed it): the tab comes back.
	from = len(a.c.Messages())
	p.eval(target, `document.querySelector("iframe").remove(), 1`)
	back := a.sessionSince(from, target, 15*time.Second)
	if back == "" {
		t.Fatalf("the tab did not come back once the frame was gone: %s", describeTargets(a))
	}
	a.waitLoaded(back, env.Pages.Main+"/login.html")
	t.Log("ok - the tab came back once the other extension's frame was gone")

	// The menu comes again on focus; the person goes on to a page without
	// a form: the tab comes back again.
	from = len(a.c.Messages())
	p.focus(target, "pw")
	if _, _, err := a.c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
		return m.Method == "Target.detachedFromTarget" && strings.Contains(string(m.Params), back)
	}); err != nil {
		t.Fatalf("the session did not end when the menu came back: %v", err)
	}
	from = len(a.c.Messages())
	ps := p.attach(target)
	if _, err := p.call(ps, "Page.navigate", map[string]any{"url": env.Pages.Main + "/form.html"}); err != nil {
		t.Fatal(err)
	}
	back = a.sessionSince(from, target, 15*time.Second)
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
	p.waitTrue(mine, `document.getElementById("pw").dataset.pm === "ready"`)

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
	p.waitTrue(target, `document.getElementById("pw").dataset.pm === "ready"`)
}

// waitTrue waits until expr is true in the person's target.
func (p *person) waitTrue(targetID, expr string) {
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

// extensionPage opens our extension's page, as the person would, and
// returns a function that evaluates an expression there with the page's
// chrome.* (what the browser itself does: its memory saver discards tabs,
// an update reloads the extension), returning the value as JSON.
func (p *person) extensionPage() func(expr string) string {
	p.t.Helper()
	res, err := p.call("", "Target.createTarget", map[string]any{"url": extensionPage()})
	if err != nil {
		p.t.Fatalf("open the extension's page: %v", err)
	}
	var page struct{ TargetID string }
	json.Unmarshal(res, &page)
	s := p.attach(page.TargetID)
	return func(expr string) string {
		p.t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			res, err := p.call(s, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true})
			if err == nil {
				if v, err := evalValue(res); err == nil {
					return v
				} else if !strings.Contains(err.Error(), "chrome") {
					p.t.Fatalf("%s: %v", expr, err)
				}
			}
			if time.Now().After(deadline) {
				p.t.Fatalf("%s: %v %s", expr, err, res)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// TestDiscardedTab: Chrome discards a shared tab to save memory and
// replaces it with a new one under a new id. On the browser's own port the
// old target is destroyed and a new one created; through the relay the
// same, in "all" and in "pick" mode (where the new tab stays shared): no
// ghost target to attach, and the new one works.
func TestDiscardedTab(t *testing.T) {
	requireEnv(t)
	for _, mode := range []string{"all", "pick"} {
		t.Run(mode, func(t *testing.T) {
			ctx := testCtx(t, 60*time.Second)
			p := newPerson(ctx, t)
			request := p.connectPage()
			if mode == "pick" {
				request(`{type: "mode", share: "pick"}`)
				t.Cleanup(func() { request(`{type: "mode", share: "all"}`) })
			}
			ext := p.extensionPage()
			url := env.Pages.Main + "/form.html?discard-" + mode
			target := p.openTab(url)
			tabID := tabIDOfPerson(t, p, target)
			if mode == "pick" {
				request(fmt.Sprintf(`{type: "share", tabId: %d, on: true}`, tabID))
			}
			ref := dialOrFail(ctx, t, env.BrowserWS)
			defer ref.Close()
			callOrFail(ctx, t, ref, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
			a := newAttacker(ctx, t)
			if a.sessionFor(target, 10*time.Second) == "" {
				t.Fatalf("the shared tab is not a target: %s", describeTargets(a))
			}
			refFrom, from := len(ref.Messages()), len(a.c.Messages())

			// A discarded tab is one in the background.
			ext(fmt.Sprintf(`chrome.tabs.query({}).then((ts) => chrome.tabs.update(ts.find((t) => t.id !== %d).id, {active: true})).then(() => 1)`, tabID))
			newID := ext(fmt.Sprintf(`chrome.tabs.discard(%d).then((t) => t.id)`, tabID))
			t.Logf("tab %d discarded, replaced by tab %s", tabID, newID)

			// The reference.
			destroyed := func(c *cdptest.Client, from int) error {
				_, _, err := c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
					return m.Method == "Target.targetDestroyed" && strings.Contains(string(m.Params), target)
				})
				return err
			}
			created := func(c *cdptest.Client, from int, method string) string {
				m, _, err := c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
					return m.Method == method && strings.Contains(string(m.Params), "?discard-"+mode) && targetOf(m.Params) != target
				})
				if err != nil {
					t.Fatalf("no new target (%s): %v", method, err)
				}
				return targetOf(m.Params)
			}
			if err := destroyed(ref, refFrom); err != nil {
				t.Fatalf("the reference: the old target stays: %v", err)
			}
			newTarget := created(ref, refFrom, "Target.targetCreated")
			t.Logf("ok - the reference: target %s destroyed, %s created", target, newTarget)

			// Through the relay.
			if err := destroyed(a.c, from); err != nil {
				t.Fatalf("the old target stays: %s", describeTargets(a))
			}
			if got := created(a.c, from, "Target.attachedToTarget"); got != newTarget {
				t.Fatalf("the new tab is target %s, Chrome says %s", got, newTarget)
			}
			res, err := a.call("", "Target.getTargets", nil)
			if err != nil || strings.Contains(string(res), target) || !strings.Contains(string(res), newTarget) {
				t.Fatalf("targets after the discard: %s %v", res, err)
			}
			if _, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}); err == nil || !strings.Contains(err.Error(), "No target with given id") {
				t.Errorf("attaching the old target: %v", err)
			}
			s := a.sessionSince(from, newTarget, 10*time.Second)
			a.waitLoaded(s, url)
			if v, err := a.eval(s, "document.title"); err != nil || v != `"Form"` {
				t.Fatalf("the new tab: %s %v", v, err)
			}
			shared := false
			for _, tab := range env.Relay.Default().Status().Tabs {
				if strconv.FormatInt(tab.TabID, 10) == newID {
					shared = true
				}
			}
			if !shared {
				t.Errorf("the new tab %s is not shared", newID)
			}
			t.Log("ok - through the relay: the same, and the new tab works")
		})
	}
}

// startNode runs an e2e node script beside the test, and returns a
// function that waits for a line of its output and one that waits for its
// end (failing the test if the script failed).
func startNode(t *testing.T, script string, args ...string) (waitLine func(string), wait func() string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = testenv.E2EDir()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	var all strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			lines <- sc.Text()
		}
		close(lines)
	}()
	waitLine = func(want string) {
		t.Helper()
		for l := range lines {
			if l == want {
				return
			}
		}
		cmd.Wait()
		t.Fatalf("%s ended before %q:\n%s%s", script, want, all.String(), errBuf.String())
	}
	wait = func() string {
		t.Helper()
		for range lines {
		}
		err := cmd.Wait()
		t.Logf("%s:\n%s%s", script, all.String(), errBuf.String())
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		return all.String()
	}
	return waitLine, wait
}

// TestExtensionReloadKeepsClient: the person's extension reloads (as an
// update does) under a connected Playwright. The extension comes back,
// enabled (the profile is in developer mode), the client keeps its
// connection and its page: the command it had under way is answered, and
// the same page works once the extension is back (restart.mjs).
func TestExtensionReloadKeepsClient(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 90*time.Second)
	p := newPerson(ctx, t)
	waitLine, wait := startNode(t, "restart.mjs", env.HTTPEndpoint(), env.Pages.Main)
	waitLine("ready")
	before := env.Relay.Default().Status()
	start := time.Now()
	p.reloadExtension()
	wait()
	st := env.Relay.Default().Status()
	if !st.Ready {
		t.Fatal("the extension is not back")
	}
	t.Logf("the extension was back within %v; client before %v, after %v", time.Since(start).Round(time.Millisecond), before.Client, st.Client)
}

// reloadExtension reloads our extension, as an update does: its worker
// calls chrome.runtime.reload().
func (p *person) reloadExtension() {
	p.t.Helper()
	res, err := p.call("", "Target.getTargets", nil)
	if err != nil {
		p.t.Fatal(err)
	}
	var r struct{ TargetInfos []pageTarget }
	json.Unmarshal(res, &r)
	for _, ti := range r.TargetInfos {
		if ti.Type == "service_worker" && strings.HasPrefix(ti.URL, "chrome-extension://"+extension.ID+"/") {
			s := p.attach(ti.TargetID)
			// The worker goes with the reload: its answer may not come.
			p.c.Send(s, "Runtime.evaluate", map[string]any{"expression": "setTimeout(() => chrome.runtime.reload(), 20), 1"})
			return
		}
	}
	p.t.Fatal("our extension's worker is not running")
}

// TestRestrictedPagesComeBack: the person takes a shared tab to a browser
// page (chrome://version) and back to the web, eight times over, in "all"
// and in "pick" mode. On the browser's own port a client keeps the tab
// throughout; through the relay too: the client's session waits while the
// tab is on the browser page (the live view says why), and goes on, the
// same session, in the page the tab came back to.
func TestRestrictedPagesComeBack(t *testing.T) {
	requireEnv(t)
	for _, mode := range []string{"all", "pick"} {
		t.Run(mode, func(t *testing.T) {
			ctx := testCtx(t, 120*time.Second)
			p := newPerson(ctx, t)
			if mode == "pick" {
				p.pickMode()
			}
			a := newAttacker(ctx, t)
			target, session := a.newTab(env.Pages.Main + "/form.html?restricted-" + mode)
			ref := dialOrFail(ctx, t, env.BrowserWS)
			defer ref.Close()
			res := callOrFail(ctx, t, ref, "", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true})
			var rs struct{ SessionID string }
			json.Unmarshal(res, &rs)
			ps := p.attach(target)
			from := len(a.c.Messages())
			for i := range 8 {
				if _, err := p.call(ps, "Page.navigate", map[string]any{"url": "chrome://version"}); err != nil {
					t.Fatalf("the person's navigation: %v", err)
				}
				waitTab(t, fmt.Sprintf("round %d: the session does not wait on the browser page", i), target, waiting)
				url := fmt.Sprintf("%s/form.html?restricted-%s-%d", env.Pages.Main, mode, i)
				if _, err := p.call(ps, "Page.navigate", map[string]any{"url": url}); err != nil {
					t.Fatalf("the person's navigation: %v", err)
				}
				a.waitLoaded(session, url)
				// The reference kept it all along.
				res, err := ref.Call(ctx, rs.SessionID, "Runtime.evaluate", map[string]any{"expression": "location.href", "returnByValue": true})
				if err != nil || !strings.Contains(string(res), url) {
					t.Fatalf("round %d: the reference: %s %v", i, res, err)
				}
			}
			for _, m := range a.c.Messages()[from:] {
				if (m.Method == "Target.detachedFromTarget" && strings.Contains(string(m.Params), session)) ||
					(m.Method == "Target.targetDestroyed" && strings.Contains(string(m.Params), target)) {
					t.Fatalf("the client lost the tab: %s", m.Raw)
				}
			}
			t.Log("ok - eight times to chrome://version and back: the same session throughout")
		})
	}
}

// TestPopupToExtensionPage: the automation opens a popup onto another
// extension's page. Playwright waits for its popup: against the browser's
// own port it gets the page; through the relay, which cannot attach such a
// page, it gets the popup at once, closed, and carries on.
func TestPopupToExtensionPage(t *testing.T) {
	requireEnv(t)
	menu := "chrome-extension://" + testenv.PasswordManagerID + "/menu.html"
	p := newPerson(testCtx(t, 60*time.Second), t) // closes the popups at the end
	p.spareTab()                                  // what assertTabsKept finds at the end
	runNode(t, "extpopup.mjs", env.BrowserWS, env.Pages.Main, menu, "reference")
	runNode(t, "extpopup.mjs", env.HTTPEndpoint(), env.Pages.Main, menu, "relay")
	assertTabsKept(t)
}

// TestStockExtensionPairFirst: the README's flow with the stock Playwright
// extension (its stand-in: internal/testenv/standins/stock), which sends no
// keepalive of its own and forwards no tab removals. The person pairs it,
// and no client comes for longer than Chrome lets an idle extension worker
// run (30 s): the pairing holds. Then Playwright's core scenario passes
// through it; and a tab the person closes is gone for the client, for
// /json/list and for the instance.
func TestStockExtensionPairFirst(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 150*time.Second)
	p := newPerson(ctx, t)
	in, err := env.Relay.NewInstance()
	if err != nil {
		t.Fatal(err)
	}
	url := env.Pages.Main + "/form.html?stock"
	shared := p.openTab(url)
	connect := "chrome-extension://" + testenv.StockStandInID + "/connect.html?mcpRelayUrl=" +
		neturl.QueryEscape("ws://"+env.Addr+"/extension/"+in.GUID()) + "&url=" + neturl.QueryEscape(url)
	callOrFail(ctx, t, p.c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
	from := len(p.c.Messages())
	if _, err := p.call("", "Target.createTarget", map[string]any{"url": connect}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := in.WaitReady(wctx); err != nil {
		t.Fatalf("the stand-in did not pair: %v", err)
	}
	worker := ""
	for _, m := range p.c.Messages()[from:] {
		if m.Method == "Target.targetCreated" && strings.Contains(string(m.Params), `"service_worker"`) && strings.Contains(string(m.Params), testenv.StockStandInID) {
			worker = targetOf(m.Params)
		}
	}
	if worker == "" {
		res, _ := p.call("", "Target.getTargets", nil)
		var r struct{ TargetInfos []pageTarget }
		json.Unmarshal(res, &r)
		for _, ti := range r.TargetInfos {
			if ti.Type == "service_worker" && strings.Contains(ti.URL, testenv.StockStandInID) {
				worker = ti.TargetID
			}
		}
	}
	t.Logf("paired; the stand-in's worker is target %s", worker)

	// Idle, with no client: the worker would be stopped after 30 s (the
	// event that fails this), and its socket with it.
	idle := time.Now()
	stopped := make(chan struct{})
	since := from
	go func() {
		defer close(stopped)
		p.c.WaitMessage(ctx, since, func(m cdptest.Message) bool {
			return m.Method == "Target.targetDestroyed" && worker != "" && strings.Contains(string(m.Params), worker)
		})
	}()
	select {
	case <-stopped:
		if ctx.Err() == nil {
			t.Fatalf("the stand-in's worker stopped %v into the idle time", time.Since(idle).Round(time.Second))
		}
	case <-time.After(35 * time.Second):
	}
	if st := in.Status(); !st.Ready {
		t.Fatalf("after %v idle the pairing is gone: %+v", time.Since(idle).Round(time.Second), st)
	}
	t.Logf("ok - the pairing held through %v without a client", time.Since(idle).Round(time.Second))

	endpoint := "http://" + env.Addr + "/cdp/" + in.GUID()
	runNode(t, "playwright.mjs", endpoint, env.Pages.Main, env.Pages.Other)

	// A client holds the tab; the person closes it.
	c := dialOrFail(ctx, t, "ws://"+env.Addr+"/devtools/browser/"+in.GUID())
	defer c.Close()
	callOrFail(ctx, t, c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
	callOrFail(ctx, t, c, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	from = len(c.Messages())
	if _, err := p.call("", "Target.closeTarget", map[string]any{"targetId": shared}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
		return m.Method == "Target.targetDestroyed" && strings.Contains(string(m.Params), shared)
	}); err != nil {
		t.Fatalf("the closed tab is still a target: %v", err)
	}
	if res := callOrFail(ctx, t, c, "", "Target.getTargets", nil); strings.Contains(string(res), shared) {
		t.Errorf("Target.getTargets: %s", res)
	}
	if body := get(t, endpoint+"/json/list"); strings.Contains(string(body), shared) {
		t.Errorf("/json/list: %s", body)
	}
	for _, tab := range in.Status().Tabs {
		if tab.TargetID == shared {
			t.Errorf("the instance still has the closed tab: %+v", tab)
		}
	}
	t.Log("ok - the closed tab is gone for the client, /json/list and the instance")
}

// TestClientMismatchesMatchChrome: what chrome-devtools-mcp, agent-browser
// and Playwright MCP ask of a browser, answered through the relay as the
// browser's own port answers it, side by side on the same tab: window
// bounds (resize_page, viewports), Target.getDevToolsTarget, a command for
// a session that is gone, /json/version's browser.
func TestClientMismatchesMatchChrome(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	p := newPerson(ctx, t)
	// The client's connection outlives the tab the test closes only while
	// another is shared.
	p.spareTab()
	a := newAttacker(ctx, t)
	target, session := a.newTab(env.Pages.Main + "/form.html?window")
	ref := dialOrFail(ctx, t, env.BrowserWS)
	defer ref.Close()
	var rs struct{ SessionID string }
	json.Unmarshal(callOrFail(ctx, t, ref, "", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}), &rs)

	// answer is a reply as far as clients read it: the result, or the
	// error's code and message.
	answer := func(c *cdptest.Client, session, method string, params any) string {
		m, err := c.CallMessage(ctx, session, method, params)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if m.Error != nil {
			msg := m.Error.Message
			if m.Error.Code == -32602 && strings.HasPrefix(msg, "Invalid parameters") {
				msg = "Invalid parameters" // the rest names Chrome's deserializer
			}
			return fmt.Sprintf("error %d %s", m.Error.Code, msg)
		}
		return string(m.Result)
	}
	var win struct {
		WindowID int64
		Bounds   json.RawMessage
	}
	json.Unmarshal([]byte(answer(ref, "", "Browser.getWindowForTarget", map[string]any{"targetId": target})), &win)
	steps := []struct {
		name, method string
		session      bool // on the tab's session
		params       any
	}{
		{"window of a target", "Browser.getWindowForTarget", false, map[string]any{"targetId": target}},
		{"window of the session's page", "Browser.getWindowForTarget", true, map[string]any{}},
		{"the browser has none", "Browser.getWindowForTarget", false, map[string]any{}},
		{"unknown target", "Browser.getWindowForTarget", false, map[string]any{"targetId": "0000"}},
		{"resize", "Browser.setWindowBounds", false, map[string]any{"windowId": win.WindowID, "bounds": map[string]any{"width": 900, "height": 700}}},
		{"bounds", "Browser.getWindowBounds", false, map[string]any{"windowId": win.WindowID}},
		{"state with size", "Browser.setWindowBounds", false, map[string]any{"windowId": win.WindowID, "bounds": map[string]any{"width": 800, "windowState": "maximized"}}},
		{"no bounds", "Browser.setWindowBounds", false, map[string]any{"windowId": win.WindowID}},
		{"unknown window", "Browser.setWindowBounds", false, map[string]any{"windowId": 999999, "bounds": map[string]any{"width": 800}}},
		{"resize back", "Browser.setWindowBounds", false, map[string]any{"windowId": win.WindowID, "bounds": map[string]any{"width": 780, "height": 580}}},
		{"devtools of a target", "Target.getDevToolsTarget", false, map[string]any{"targetId": target}},
		{"devtools of an unknown one", "Target.getDevToolsTarget", false, map[string]any{"targetId": "0000"}},
		{"devtools of none", "Target.getDevToolsTarget", false, map[string]any{}},
	}
	for _, step := range steps {
		rsess, csess := "", ""
		if step.session {
			rsess, csess = rs.SessionID, session
		}
		want := answer(ref, rsess, step.method, step.params)
		got := answer(a.c, csess, step.method, step.params)
		if got != want {
			t.Errorf("%s: %s\n  Chrome: %s\n  relay:  %s", step.name, step.method, want, got)
		}
	}
	if v, err := a.eval(session, "innerWidth > 0"); err != nil || v != "true" {
		t.Errorf("the page after the resizes: %s %v", v, err)
	}

	// A command for a session that is gone: Chrome's answer.
	gone := a.sessionFor(target, time.Second)
	if _, err := p.call("", "Target.closeTarget", map[string]any{"targetId": target}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.c.WaitMessage(ctx, 0, func(m cdptest.Message) bool {
		return m.Method == "Target.detachedFromTarget" && strings.Contains(string(m.Params), gone)
	}); err != nil {
		t.Fatal("no detach for the closed tab")
	}
	// Chrome's answer for a session it does not know, asked on a socket of
	// its own (the first one may have been closed with the tab's session).
	ref2 := dialOrFail(ctx, t, env.BrowserWS)
	defer ref2.Close()
	want := answer(ref2, rs.SessionID, "Runtime.evaluate", map[string]any{"expression": "1"})
	if got := answer(a.c, gone, "Runtime.evaluate", map[string]any{"expression": "1"}); got != want {
		t.Errorf("a command for a gone session:\n  Chrome: %s\n  relay:  %s", want, got)
	}

	// The browser /json/version names.
	var refVersion, relVersion map[string]string
	json.Unmarshal(get(t, "http://"+strings.TrimPrefix(strings.Split(env.BrowserWS, "/devtools/")[0], "ws://")+"/json/version"), &refVersion)
	json.Unmarshal(get(t, env.HTTPEndpoint()+"/json/version"), &relVersion)
	if refVersion["Browser"] == "" || relVersion["Browser"] != refVersion["Browser"] || relVersion["User-Agent"] != refVersion["User-Agent"] {
		t.Errorf("/json/version:\n  Chrome: %v\n  relay:  %v", refVersion, relVersion)
	}
}

// TestCreateTargetWithNoWindowLeft: the person has closed every window of
// the browser, which keeps running; a client's Target.createTarget opens
// a window for its page, as it does against the browser's own port.
func TestCreateTargetWithNoWindowLeft(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	p := newPerson(ctx, t)
	closeAll := func() {
		var closed []string
		for _, pt := range p.pages() {
			if _, err := p.call("", "Target.closeTarget", map[string]any{"targetId": pt.TargetID}); err != nil {
				t.Fatalf("closing %s: %v", pt.URL, err)
			}
			closed = append(closed, pt.TargetID)
		}
		defer p.relayForgets(closed)
		deadline := time.Now().Add(10 * time.Second)
		for len(p.pages()) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("pages left: %+v", p.pages())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	create := func(c *cdptest.Client, who string) string {
		m, err := c.CallMessage(ctx, "", "Target.createTarget", map[string]any{"url": env.Pages.Main + "/form.html?nowindow"})
		if err != nil {
			t.Fatalf("%s: Target.createTarget: %v", who, err)
		}
		if m.Error != nil {
			t.Fatalf("%s: Target.createTarget with no window: %d %s", who, m.Error.Code, m.Error.Message)
		}
		var r struct{ TargetID string }
		json.Unmarshal(m.Result, &r)
		target := r.TargetID
		// It is a page in a window of its own.
		if _, err := p.call("", "Browser.getWindowForTarget", map[string]any{"targetId": target}); err != nil {
			t.Fatalf("%s: the new page has no window: %v", who, err)
		}
		return target
	}

	closeAll()
	create(p.c, "reference")
	t.Log("ok - reference: the browser's own port opens a window")

	closeAll()
	c := dialOrFail(ctx, t, env.WSEndpoint())
	defer c.Close()
	target := create(c, "relay")
	// The person's browser keeps the window the client opened, as the
	// window the test closed.
	p.before[target] = true
	t.Log("ok - relay: the extension opens a window")
}
