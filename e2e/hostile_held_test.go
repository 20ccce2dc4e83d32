package e2e

import (
	"encoding/json"
	"testing"
	"time"
)

// TestHostileHeldTabScript: while a person holds a tab from the live
// view, no script the client runs there, in any world, navigates it: not
// in the page's own world (whatever the evaluation's params), not in an
// isolated world of its own, and not a script it gave Chrome for new
// documents before the person took the tab.
func TestHostileHeldTabScript(t *testing.T) {
	requireEnv(t)
	type heldTab struct {
		a       *attacker
		p       *person
		target  string
		session string
		url     string
	}
	// held opens a tab of the attacker's with a page before it and after
	// it in its history, and has the person take control of it.
	held := func(t *testing.T, before func(h *heldTab)) *heldTab {
		t.Helper()
		ctx := testCtx(t, 60*time.Second)
		h := &heldTab{p: newPerson(ctx, t), a: newAttacker(ctx, t)}
		h.target, h.session = h.a.newTab(env.Pages.Main + "/hostile/tab.html?before")
		h.url = env.Pages.Main + "/hostile/tab.html?held=" + secret("")
		for _, u := range []string{env.Pages.Main + "/hostile/tab.html?after", h.url} {
			if _, err := h.a.call(h.session, "Page.navigate", map[string]any{"url": u}); err != nil {
				t.Fatal(err)
			}
			h.a.waitLoaded(h.session, u)
		}
		// A history entry after the held page too.
		h.a.eval(h.session, "history.pushState({}, '', location.href + '&pushed'), history.back(), true")
		h.a.waitLoaded(h.session, h.url)
		if before != nil {
			before(h)
		}
		inst := env.Relay.Default()
		tabID := tabIDOf(t, h.target)
		if err := inst.TakeControl(tabID, "person"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.ReleaseControl(tabID, "person") })
		// The document the person holds, told from any other (a reload).
		h.p.eval(h.target, "window.heldDocument = true")
		return h
	}
	// untouched checks the tab as the person sees it, and that the site
	// was not asked for landing since hits (env.Pages.Hits) were counted.
	untouched := func(t *testing.T, h *heldTab, landing string, hits int) {
		t.Helper()
		settle()
		if v := h.p.eval(h.target, "location.href"); v != quote(h.url) {
			t.Errorf("the tab the person holds went to %s", v)
		} else if v := h.p.eval(h.target, "window.heldDocument === true"); v != "true" {
			t.Errorf("the tab the person holds shows another document at its address (a reload)")
		}
		if v := h.p.eval(h.target, "document.getElementById('marker') && document.getElementById('marker').textContent"); v != `"untouched"` {
			t.Errorf("the page of the tab the person holds was changed: its marker says %s", v)
		}
		if landing != "" {
			if n := env.Pages.Hits(env.Pages.Main, landing) - hits; n != 0 {
				t.Errorf("the navigation was requested %d times", n)
			}
		}
	}

	// The page's own world, with every way of asking for the evaluation.
	for _, expr := range []string{
		"history.back()",
		"history.go(-1)",
		"history.forward()",
		"navigation.back()",
		"navigation.navigate('/hostile/landing/held-page-world')",
		"location.assign('/hostile/landing/held-page-world')",
		"location.reload()",
		"document.forms[0].requestSubmit()",
		"window.open('/hostile/landing/held-page-world', '_self')",
		"document.getElementById('self').click()",
		"document.open()",
	} {
		t.Run("page_world/"+expr, func(t *testing.T) {
			h := held(t, nil)
			hits := env.Pages.Hits(env.Pages.Main, "/hostile/landing/held-page-world")
			for _, params := range []string{
				`{"expression":` + quote(expr) + `}`,
				`{"expression":` + quote(expr) + `,"throwOnSideEffect":false,"awaitPromise":true,"userGesture":true}`,
				`{"expression":` + quote(expr) + `,"replMode":true}`,
			} {
				_, err := h.a.callRaw(h.session, "Runtime.evaluate", params)
				t.Logf("Runtime.evaluate %s: %v", params, err)
			}
			res, err := h.a.call(h.session, "Runtime.evaluate", map[string]any{"expression": "window"})
			if err == nil {
				var r struct{ Result struct{ ObjectID string } }
				json.Unmarshal(res, &r)
				_, err = h.a.call(h.session, "Runtime.callFunctionOn", map[string]any{"objectId": r.Result.ObjectID, "functionDeclaration": "function () { " + expr + " }", "throwOnSideEffect": false})
				t.Logf("Runtime.callFunctionOn: %v", err)
			}
			_, err = h.a.call(h.session, "Runtime.compileScript", map[string]any{"expression": expr, "sourceURL": "", "persistScript": true})
			t.Logf("Runtime.compileScript: %v", err)
			untouched(t, h, "/hostile/landing/held-page-world", hits)
		})
	}

	// An isolated world of the client's own: the guard holds there.
	for _, expr := range []string{
		"history.back()",
		"history.go(1)",
		"navigation.back()",
		"navigation.forward()",
		"navigation.navigate('/hostile/landing/held-isolated-world')",
		"navigation.reload()",
		"navigation.traverseTo(navigation.entries()[0].key)",
		"document.forms[0].requestSubmit()",
		"HTMLFormElement.prototype.submit.call(document.forms[0])",
		"window.open('/hostile/landing/held-isolated-world', '_self')",
		"document.getElementById('self').click()",
		"document.getElementById('self').dispatchEvent(new MouseEvent('click', {bubbles: true}))",
		"document.open()",
		"document.head.append(Object.assign(document.createElement('meta'), {httpEquiv: 'refresh', content: '0;url=/hostile/landing/held-isolated-world'}))",
	} {
		t.Run("isolated_world/"+expr, func(t *testing.T) {
			h := held(t, nil)
			hits := env.Pages.Hits(env.Pages.Main, "/hostile/landing/held-isolated-world")
			w := h.a.isolatedWorld(h.session, h.target)
			v := h.a.evalIn(h.session, w, expr+"; 'done'")
			t.Logf("%s: %s", expr, v)
			untouched(t, h, "/hostile/landing/held-isolated-world", hits)
		})
	}

	// A script the client gave Chrome for new documents before the person
	// took the tab does not run in the documents the person opens.
	t.Run("init_script_from_before", func(t *testing.T) {
		landing := "/hostile/landing/held-init-script"
		h := held(t, func(h *heldTab) {
			src := `if (location.search.includes('held=')) { location.replace(` + quote(landing) + `); }
document.addEventListener('DOMContentLoaded', () => { const m = document.getElementById('marker'); if (m) m.textContent = 'changed by an init script'; });`
			if _, err := h.a.call(h.session, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": src}); err != nil {
				t.Fatalf("Page.addScriptToEvaluateOnNewDocument: %v", err)
			}
		})
		hits := env.Pages.Hits(env.Pages.Main, landing)
		// The person reloads the tab they hold.
		s := h.p.attach(h.target)
		if _, err := h.p.call(s, "Page.reload", nil); err != nil {
			t.Fatal(err)
		}
		h.p.call("", "Target.detachFromTarget", map[string]any{"sessionId": s})
		time.Sleep(time.Second)
		h.p.waitFor(h.target, "document.readyState", `"complete"`)
		h.p.eval(h.target, "window.heldDocument = true") // the person's own reload
		untouched(t, h, landing, hits)
	})
}
