package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/testenv"
)

// The hostile-client suite: each test is a client trying one way around
// the relay's promises (the URL fence, the method rules, the take-over,
// the person's consent). See hostile_harness_test.go for the rules its
// assertions follow.

// TestHostileLocalFiles tries to open pages the URL fence refuses —
// file:, chrome:, chrome-extension:, and with allowed hosts any other host
// — by spelling the URL key of Target.createTarget so that the fence and
// the tab opener read different values, and to send a paused request
// elsewhere with Fetch.continueRequest carrying its url twice.
func TestHostileLocalFiles(t *testing.T) {
	requireEnv(t)

	createTargetKeyCase := func(t *testing.T, url string) (a *attacker, p *person, from int) {
		ctx := testCtx(t, 30*time.Second)
		p = newPerson(ctx, t)
		a = newAttacker(ctx, t)
		from = a.mark()
		res, err := a.callRaw("", "Target.createTarget", `{"url":"about:blank","URL":`+quote(url)+`}`)
		if err != nil {
			t.Logf("Target.createTarget refused: %v", err)
			return a, p, from
		}
		var r struct{ TargetID string }
		json.Unmarshal(res, &r)
		session := a.sessionFor(r.TargetID, 3*time.Second)
		if session == "" {
			if res, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": r.TargetID, "flatten": true}); err == nil {
				var s struct{ SessionID string }
				json.Unmarshal(res, &s)
				session = s.SessionID
			}
		}
		if session == "" {
			t.Logf("Target.createTarget opened %s, but the client has no session on it", r.TargetID)
			return a, p, from
		}
		// The attacker reads what the tab shows, and the file it is on.
		for _, expr := range []string{
			"document.documentElement.innerText",
			"fetch(location.href).then((r) => r.text()).catch(String)",
			"location.href",
		} {
			deadline := time.Now().Add(3 * time.Second)
			for {
				v, err := a.eval(session, expr)
				t.Logf("%s: %.120s %v", expr, v, err)
				if err != nil || v != `""` || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		return a, p, from
	}
	noPages := func(t *testing.T, p *person, prefix string) {
		t.Helper()
		settle()
		if pages := p.newPages(hasPrefix(prefix)); len(pages) > 0 {
			t.Errorf("a %s page was opened in the person's browser: %+v", prefix, pages)
		}
	}

	t.Run("createTarget_URL_key_opens_file", func(t *testing.T) {
		setPolicy(t, denylist.Config{})
		path, marker := secretFile(t)
		a, p, from := createTargetKeyCase(t, "file://"+path)
		if f := a.leaked(from, marker); f != "" {
			t.Errorf("the secret file's contents reached the client: …%s…", f)
		}
		noPages(t, p, "file:")
	})
	t.Run("createTarget_URL_key_opens_chrome_page", func(t *testing.T) {
		setPolicy(t, denylist.Config{})
		_, p, _ := createTargetKeyCase(t, "chrome://version/")
		noPages(t, p, "chrome:")
	})
	t.Run("createTarget_URL_key_opens_extension_page", func(t *testing.T) {
		setPolicy(t, denylist.Config{})
		_, p, _ := createTargetKeyCase(t, extensionPage())
		noPages(t, p, "chrome-extension:")
	})
	t.Run("createTarget_URL_key_opens_outside_host", func(t *testing.T) {
		setPolicy(t, onlyMain)
		path := "/hostile/landing/createtarget-url-key"
		a, _, from := createTargetKeyCase(t, env.Pages.Other+path)
		settle()
		if n := env.Pages.Hits(env.Pages.Other, path); n != 0 {
			t.Errorf("the host outside the allowed list served %d requests", n)
		}
		if f := a.leaked(from, testenv.LandingMarker("createtarget-url-key")); f != "" {
			t.Errorf("the outside page reached the client: …%s…", f)
		}
	})

	// The client's own Fetch pattern pauses a request; it continues it
	// with the url key twice, an allowed URL first and an outside one
	// second.
	continueTwice := func(t *testing.T, name string, patterns []map[string]any, start func(a *attacker, session, inside string)) {
		setPolicy(t, onlyMain)
		ctx := testCtx(t, 30*time.Second)
		newPerson(ctx, t)
		a := newAttacker(ctx, t)
		_, session := a.newTab(env.Pages.Main + "/hostile/tab.html")
		from := a.mark()
		if _, err := a.call(session, "Fetch.enable", map[string]any{"patterns": patterns}); err != nil {
			t.Fatalf("Fetch.enable: %v", err)
		}
		defer a.call(session, "Fetch.disable", nil)
		inside := env.Pages.Main + "/hostile/landing/" + name + "-inside"
		outsidePath := "/hostile/landing/" + name
		begin := len(a.c.Messages())
		start(a, session, inside)
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		paused, _, err := a.c.WaitMessage(wctx, begin, func(m cdptest.Message) bool {
			return m.Method == "Fetch.requestPaused" && m.SessionID == session && strings.Contains(string(m.Params), inside)
		})
		wcancel()
		if err != nil {
			t.Fatalf("the request to %s did not pause for the client: %v", inside, err)
		}
		var ev struct{ RequestID string }
		json.Unmarshal(paused.Params, &ev)
		_, err = a.callRaw(session, "Fetch.continueRequest",
			`{"requestId":`+quote(ev.RequestID)+`,"url":`+quote(inside)+`,"url":`+quote(env.Pages.Other+outsidePath)+`}`)
		t.Logf("Fetch.continueRequest with the url twice: %v", err)
		if err != nil {
			// Refused: let the request go on where it was going.
			a.call(session, "Fetch.continueRequest", map[string]any{"requestId": ev.RequestID})
		}
		settle()
		if n := env.Pages.Hits(env.Pages.Other, outsidePath); n != 0 {
			t.Errorf("the host outside the allowed list served %d requests", n)
		}
		if f := a.leaked(from, testenv.LandingMarker(name)); f != "" {
			t.Errorf("the outside page reached the client: …%s…", f)
		}
	}
	t.Run("continueRequest_url_twice_fetch", func(t *testing.T) {
		continueTwice(t, "continue-twice-fetch", []map[string]any{{"urlPattern": "*/hostile/landing/*"}}, func(a *attacker, session, inside string) {
			a.sendRaw(session, "Runtime.evaluate", `{"expression":`+quote(`fetch(`+quote(inside)+`).then((r) => r.text()).catch(String)`)+`,"awaitPromise":true,"returnByValue":true}`)
		})
	})
	t.Run("continueRequest_url_twice_navigation", func(t *testing.T) {
		continueTwice(t, "continue-twice-navigation", []map[string]any{{"urlPattern": "*/hostile/landing/*", "resourceType": "Document"}}, func(a *attacker, session, inside string) {
			a.sendRaw(session, "Page.navigate", `{"url":`+quote(inside)+`}`)
		})
	})
}

// extensionPage is our own extension's connect page, whose scripts may
// call chrome.tabs and chrome.debugger.
func extensionPage() string { return "chrome-extension://" + extension.ID + "/connect.html" }

// TestHostileExtensionPage tries to get a session on our own extension's
// connect page, whose scripts hold chrome.tabs and chrome.debugger: from a
// shared tab's history, by the person opening it in a shared tab, and
// through createTarget's URL key. No client command may ever run there.
func TestHostileExtensionPage(t *testing.T) {
	requireEnv(t)
	const probe = "typeof chrome === 'object' && typeof chrome.tabs"

	// tries evaluates probe on session for a while; every answer is
	// checked, for the page may get there late.
	tries := func(t *testing.T, a *attacker, session string) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			v, err := a.eval(session, probe)
			if err == nil && v == `"object"` {
				href, _ := a.eval(session, "location.href")
				t.Errorf("a client command ran on our extension's page (%s): chrome.tabs is there", href)
				tabs, _ := a.eval(session, "chrome.tabs.query({}).then((ts) => ts.map((t) => t.url))")
				t.Logf("chrome.tabs.query from the client: %.300s", tabs)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// The person opened the connect page in a tab, went on to a web page
	// in the same tab and shared it: the connect page is in its history.
	t.Run("shared_tab_history_back_to_connect_page", func(t *testing.T) {
		setPolicy(t, denylist.Config{})
		ctx := testCtx(t, 40*time.Second)
		p := newPerson(ctx, t)
		request := p.pickMode()
		tabTarget, tabID := personTabThroughConnectPage(t, p, request)
		a := newAttacker(ctx, t)
		session := a.sessionFor(tabTarget, 5*time.Second)
		if session == "" {
			t.Fatalf("the shared tab %d is not a target", tabID)
		}
		a.eval(session, "history.back()")
		tries(t, a, session)
	})
	t.Run("shared_tab_navigateToHistoryEntry_connect_page", func(t *testing.T) {
		setPolicy(t, denylist.Config{})
		ctx := testCtx(t, 40*time.Second)
		p := newPerson(ctx, t)
		request := p.pickMode()
		tabTarget, tabID := personTabThroughConnectPage(t, p, request)
		a := newAttacker(ctx, t)
		session := a.sessionFor(tabTarget, 5*time.Second)
		if session == "" {
			t.Fatalf("the shared tab %d is not a target", tabID)
		}
		res, err := a.call(session, "Page.getNavigationHistory", nil)
		if err != nil {
			t.Fatalf("Page.getNavigationHistory: %v", err)
		}
		var h struct {
			Entries []struct {
				ID  int
				URL string
			}
		}
		json.Unmarshal(res, &h)
		for _, e := range h.Entries {
			if strings.HasPrefix(e.URL, "chrome-extension:") {
				_, err := a.call(session, "Page.navigateToHistoryEntry", map[string]any{"entryId": e.ID})
				t.Logf("Page.navigateToHistoryEntry %s: %v", e.URL, err)
			}
		}
		tries(t, a, session)
	})
	// The person, on a tab they share, opens the extension's page in it.
	t.Run("person_opens_connect_page_in_shared_tab", func(t *testing.T) {
		setPolicy(t, denylist.Config{})
		ctx := testCtx(t, 40*time.Second)
		p := newPerson(ctx, t)
		request := p.pickMode()
		target := p.openTab(env.Pages.Main + "/hostile/tab.html?shared")
		tabID := tabIDOfPerson(t, p, target)
		request(fmt.Sprintf(`{type: "share", tabId: %d, on: true}`, tabID))
		a := newAttacker(ctx, t)
		session := a.sessionFor(target, 5*time.Second)
		if session == "" {
			t.Fatalf("the shared tab %d is not a target", tabID)
		}
		s := p.attach(target)
		p.call(s, "Page.navigate", map[string]any{"url": extensionPage()})
		tries(t, a, session)
	})
	for _, mode := range []string{"all", "pick"} {
		t.Run("createTarget_URL_key_connect_page_"+mode+"_mode", func(t *testing.T) {
			setPolicy(t, denylist.Config{})
			ctx := testCtx(t, 40*time.Second)
			p := newPerson(ctx, t)
			if mode == "pick" {
				p.pickMode()
			}
			a := newAttacker(ctx, t)
			res, err := a.callRaw("", "Target.createTarget", `{"url":"about:blank","URL":`+quote(extensionPage())+`}`)
			if err != nil {
				t.Logf("Target.createTarget refused: %v", err)
				return
			}
			var r struct{ TargetID string }
			json.Unmarshal(res, &r)
			if session := a.sessionFor(r.TargetID, 3*time.Second); session != "" {
				tries(t, a, session)
			}
		})
	}
}

// personTabThroughConnectPage has the person open the connect page in a
// new tab, go on from it to a web page in the same tab, and share that
// tab. It returns the tab's target and its tab id.
func personTabThroughConnectPage(t *testing.T, p *person, request func(string) json.RawMessage) (string, int64) {
	t.Helper()
	target := p.openTab(extensionPage())
	tabID := tabIDOfPerson(t, p, target)
	s := p.attach(target)
	if _, err := p.call(s, "Page.navigate", map[string]any{"url": env.Pages.Main + "/hostile/tab.html?after-connect-page"}); err != nil {
		t.Fatalf("the person's navigation: %v", err)
	}
	p.call("", "Target.detachFromTarget", map[string]any{"sessionId": s})
	p.waitLoaded(target)
	request(fmt.Sprintf(`{type: "share", tabId: %d, on: true}`, tabID))
	return target, tabID
}

// tabIDOfPerson asks the extension, as the person's connect page would,
// for the tab id of a target.
func tabIDOfPerson(t *testing.T, p *person, targetID string) int64 {
	t.Helper()
	ext := p.newPages(hasPrefix(extensionPage()))
	var page string
	for _, pt := range ext {
		if pt.TargetID != targetID {
			page = pt.TargetID
		}
	}
	if page == "" {
		t.Fatal("no connect page to ask for tab ids")
	}
	// The page may be one just opened, still loading.
	v := p.evalLoaded(page, `chrome.debugger.getTargets().then((ts) => (ts.find((x) => x.id === `+quote(targetID)+`) || {}).tabId)`, 10*time.Second)
	var id int64
	if err := json.Unmarshal([]byte(v), &id); err != nil || id == 0 {
		t.Fatalf("no tab id for target %s: %s", targetID, v)
	}
	return id
}

// TestHostileNestedCommands hides whole CDP commands inside
// Target.sendMessageToTarget, on a tab session, addressed to a non-flat
// child session (an out-of-process frame) that the client got with
// Target.setAutoAttach {flatten: false}, spelt plainly or with key tricks:
// a cookie read the default policy denies, a navigation outside the
// allowed hosts, a click on a tab a person holds.
func TestHostileNestedCommands(t *testing.T) {
	requireEnv(t)
	// The frame's origin: cross-site to the main one (so out of process)
	// and inside the allowed hosts.
	frameOrigin := strings.Replace(env.Pages.Main, "127.0.0.1", "localhost", 1)
	policy := denylist.Config{AllowedHosts: []string{"127.0.0.1", "localhost"}}

	// nested opens a tab with an out-of-process frame, asks for child
	// sessions with autoAttach params, and returns a function that sends
	// a command to the frame inside Target.sendMessageToTarget and waits
	// for the nested reply (nil when none came).
	type nestedTab struct {
		a             *attacker
		p             *person
		target, frame string // the tab's and the frame's targets
		session       string // the tab's session
		send          func(method string, params any) json.RawMessage
	}
	nested := func(t *testing.T, autoAttach string) *nestedTab {
		t.Helper()
		ctx := testCtx(t, 40*time.Second)
		n := &nestedTab{p: newPerson(ctx, t), a: newAttacker(ctx, t)}
		n.target, n.session = n.a.newTab(env.Pages.Main + "/hostile/frame.html?src=" + frameOrigin + "/hostile/inner.html")
		begin := len(n.a.c.Messages())
		_, err := n.a.callRaw(n.session, "Target.setAutoAttach", autoAttach)
		t.Logf("Target.setAutoAttach %s on the tab: %v", autoAttach, err)
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		m, _, err := n.a.c.WaitMessage(wctx, begin, func(m cdptest.Message) bool {
			return m.Method == "Target.attachedToTarget" && m.SessionID == n.session && strings.Contains(string(m.Params), `"iframe"`)
		})
		cancel()
		var child string
		if err == nil {
			var ev struct {
				SessionID  string
				TargetInfo struct{ TargetID string }
			}
			json.Unmarshal(m.Params, &ev)
			child, n.frame = ev.SessionID, ev.TargetInfo.TargetID
			t.Logf("child session %s on frame %s", child, n.frame)
		} else {
			t.Logf("no child session for the frame: %v", err)
		}
		nextID := 0
		n.send = func(method string, params any) json.RawMessage {
			t.Helper()
			if child == "" {
				return nil
			}
			nextID++
			inner, _ := json.Marshal(map[string]any{"id": nextID, "method": method, "params": params})
			begin := len(n.a.c.Messages())
			_, err := n.a.call(n.session, "Target.sendMessageToTarget", map[string]any{"sessionId": child, "message": string(inner)})
			if err != nil {
				t.Logf("Target.sendMessageToTarget %s: %v", method, err)
				return nil
			}
			wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			m, _, err := n.a.c.WaitMessage(wctx, begin, func(m cdptest.Message) bool {
				return m.Method == "Target.receivedMessageFromTarget" && strings.Contains(string(m.Params), fmt.Sprintf(`{\"id\":%d,`, nextID))
			})
			if err != nil {
				t.Logf("no nested reply to %s", method)
				return nil
			}
			t.Logf("nested reply to %s: %.200s", method, m.Params)
			return m.Params
		}
		return n
	}

	// The person's session cookie, HttpOnly: no script in a page can read
	// it, and Network.getAllCookies is denied to clients.
	personCookie := func(t *testing.T, p *person) string {
		t.Helper()
		value := secret("hostilecookie")
		host := strings.TrimPrefix(env.Pages.Main, "http://")
		host = host[:strings.IndexByte(host, ':')]
		cookie := map[string]any{"name": "hostile_session", "value": value, "domain": host, "path": "/", "httpOnly": true}
		if _, err := p.call("", "Storage.setCookies", map[string]any{"cookies": []any{cookie}}); err != nil {
			t.Fatalf("the person's cookie: %v", err)
		}
		t.Cleanup(func() {
			cookie["expires"] = 1
			p.call("", "Storage.setCookies", map[string]any{"cookies": []any{cookie}})
		})
		return value
	}

	for _, tc := range []struct{ name, autoAttach string }{
		{"nonflat", `{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":false}`},
		{"flatten_key_case", `{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":false,"Flatten":true}`},
		{"flatten_twice", `{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":true,"flatten":false}`},
		{"flat", `{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":true}`},
	} {
		t.Run("getAllCookies_in_sendMessageToTarget_"+tc.name, func(t *testing.T) {
			setPolicy(t, policy)
			n := nested(t, tc.autoAttach)
			value := personCookie(t, n.p)
			n.send("Network.getAllCookies", nil)
			n.send("Storage.getCookies", nil)
			if f := n.a.leaked(0, value); f != "" {
				t.Errorf("the person's HttpOnly cookie reached the client: …%s…", f)
			}
		})
	}

	// A non-flat session asked of the relay itself: attachToTarget with
	// flatten false, spelt so that a decoder matching keys without their
	// case, or keeping the first of two, reads true.
	for _, tc := range []struct{ name, params string }{
		{"flatten_key_case", `{"targetId":%s,"flatten":false,"Flatten":true}`},
		{"flatten_twice", `{"targetId":%s,"flatten":true,"flatten":false}`},
	} {
		t.Run("getAllCookies_in_sendMessageToTarget_attachToTarget_"+tc.name, func(t *testing.T) {
			setPolicy(t, policy)
			n := nested(t, `{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":true}`)
			value := personCookie(t, n.p)
			for _, target := range []string{n.frame, n.target} {
				if target == "" {
					continue
				}
				for _, on := range []string{"", n.session} {
					res, err := n.a.callRaw(on, "Target.attachToTarget", fmt.Sprintf(tc.params, quote(target)))
					if err != nil {
						t.Logf("Target.attachToTarget %s on %q: %v", target, on, err)
						continue
					}
					var r struct{ SessionID string }
					json.Unmarshal(res, &r)
					inner := `{"id":1,"method":"Network.getAllCookies"}`
					for _, via := range []string{"", n.session} {
						_, err := n.a.call(via, "Target.sendMessageToTarget", map[string]any{"sessionId": r.SessionID, "message": inner})
						t.Logf("Target.sendMessageToTarget to %s on %q: %v", r.SessionID, via, err)
					}
				}
			}
			settle()
			if f := n.a.leaked(0, value); f != "" {
				t.Errorf("the person's HttpOnly cookie reached the client: …%s…", f)
			}
		})
	}

	t.Run("navigate_outside_in_sendMessageToTarget", func(t *testing.T) {
		setPolicy(t, policy)
		n := nested(t, `{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":false}`)
		path := "/hostile/landing/nested-navigate"
		n.send("Page.navigate", map[string]any{"url": env.Pages.Other + path})
		settle()
		if h := env.Pages.Hits(env.Pages.Other, path); h != 0 {
			t.Errorf("the host outside the allowed list served %d requests", h)
		}
	})

	t.Run("click_on_held_tab_in_sendMessageToTarget", func(t *testing.T) {
		setPolicy(t, policy)
		n := nested(t, `{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":false}`)
		inst := env.Relay.Default()
		tabID := tabIDOf(t, n.target)
		if err := inst.TakeControl(tabID, "person"); err != nil {
			t.Fatal(err)
		}
		defer inst.ReleaseControl(tabID, "person")
		for _, typ := range []string{"mousePressed", "mouseReleased"} {
			n.send("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": 50, "y": 50, "button": "left", "clickCount": 1})
		}
		settle()
		if n.frame == "" {
			return
		}
		if v := n.p.eval(n.frame, "document.getElementById('b').textContent"); v != `"untouched"` {
			t.Errorf("the frame of the tab the person holds was clicked: its button says %s", v)
		}
	})
}

// TestHostileNewTabs opens new tabs on a host outside the allowed list
// from a tab inside it. The navigation backstop of the opener does not
// see a new tab's navigation, and the new tab is attached (and fenced)
// only after Chrome has started loading it. Attach and first request
// race, so each attack is tried a few times, as an attacker would.
func TestHostileNewTabs(t *testing.T) {
	requireEnv(t)
	const tries = 3
	click := func(a *attacker, session string, x, y int) {
		for _, typ := range []string{"mousePressed", "mouseReleased"} {
			a.call(session, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1})
		}
	}
	for _, tc := range []struct {
		name   string
		attack func(a *attacker, session, outside string, try int)
		// inside, when set, is a page on the allowed host the attack
		// goes through: it must have been reached, or nothing was tried.
		inside string
	}{
		{"window_open", func(a *attacker, session, outside string, _ int) {
			a.eval(session, "window.open("+quote(outside)+"), true")
		}, ""},
		{"window_open_noopener", func(a *attacker, session, outside string, _ int) {
			a.eval(session, "window.open("+quote(outside)+", '_blank', 'noopener'), true")
		}, ""},
		{"target_blank_link_click", func(a *attacker, session, outside string, _ int) {
			click(a, session, 100, 140) // #blank
		}, ""},
		{"target_blank_form_post", func(a *attacker, session, outside string, _ int) {
			click(a, session, 100, 200) // #submit
		}, ""},
		{"window_open_inside_then_location_outside", func(a *attacker, session, outside string, try int) {
			a.eval(session, fmt.Sprintf("const w%d = window.open('/hostile/landing/popup-inside'); w%d.location = %s; true", try, try, quote(outside)))
		}, ""},
		{"window_open_inside_loaded_then_location_outside", func(a *attacker, session, outside string, _ int) {
			a.eval(session, `new Promise((done) => {
  const w = window.open('/hostile/landing/popup-inside-loaded');
  w.addEventListener('load', () => setTimeout(() => { w.location = `+quote(outside)+`; done(true); }, 500));
  setTimeout(() => done(false), 3000);
})`)
		}, "/hostile/landing/popup-inside-loaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setPolicy(t, onlyMain)
			ctx := testCtx(t, 40*time.Second)
			newPerson(ctx, t)
			a := newAttacker(ctx, t)
			prefix := "/hostile/landing/popup-" + strings.ReplaceAll(tc.name, "_", "-") + "-"
			_, session := a.newTab("about:blank")
			from := a.mark()
			for try := 1; try <= tries; try++ {
				outside := fmt.Sprintf("%s%s%d", env.Pages.Other, prefix, try)
				page := env.Pages.Main + "/hostile/tab.html?to=" + outside
				if _, err := a.call(session, "Page.navigate", map[string]any{"url": page}); err != nil {
					t.Fatalf("Page.navigate: %v", err)
				}
				a.waitLoaded(session, page)
				tc.attack(a, session, outside, try)
			}
			settle()
			if tc.inside != "" && env.Pages.Hits(env.Pages.Main, tc.inside) == 0 {
				t.Fatalf("the popup never loaded %s: the attack was not tried", tc.inside)
			}
			if n := env.Pages.HitsUnder(env.Pages.Other, prefix); n != 0 {
				t.Errorf("the host outside the allowed list served %d requests (%d tries)", n, tries)
			}
			if f := a.leaked(from, "landed-popup-"); f != "" {
				t.Errorf("the outside page reached the client: …%s…", f)
			}
		})
	}
	t.Run("playwright_page_evaluate_window_open", func(t *testing.T) {
		setPolicy(t, onlyMain)
		ctx := testCtx(t, 60*time.Second)
		newPerson(ctx, t)
		prefix := "/hostile/landing/popup-playwright-"
		var urls []string
		for try := 1; try <= tries; try++ {
			urls = append(urls, fmt.Sprintf("%s%s%d", env.Pages.Other, prefix, try))
		}
		out, err := testenv.Node(ctx, "hostile-popup.mjs", nil, append([]string{env.HTTPEndpoint(), env.Pages.Main + "/hostile/tab.html"}, urls...)...)
		t.Logf("hostile-popup.mjs:\n%s", out)
		if err != nil {
			t.Logf("hostile-popup.mjs: %v", err) // a refusal is not a failure
		}
		if n := env.Pages.HitsUnder(env.Pages.Other, prefix); n != 0 {
			t.Errorf("the host outside the allowed list served %d requests (%d tries)", n, tries)
		}
		if strings.Contains(out, "landed-popup-playwright-") {
			t.Error("the outside page reached the client")
		}
	})
}

// TestHostileNavigationPaths takes the tab outside the allowed hosts by
// ways that are neither a navigation command with a URL nor an ordinary
// navigation of the tab's own frame: a history entry, a page restored
// from the back/forward cache, a speculation-rules prefetch, and an
// out-of-process frame sent elsewhere by its parent.
func TestHostileNavigationPaths(t *testing.T) {
	requireEnv(t)

	// history builds inside → outside → inside while the policy allows
	// every host, then fences the relay to the main origin.
	history := func(t *testing.T, outsidePath string) (a *attacker, session string) {
		t.Helper()
		setPolicy(t, denylist.Config{})
		ctx := testCtx(t, 40*time.Second)
		newPerson(ctx, t)
		a = newAttacker(ctx, t)
		_, session = a.newTab(env.Pages.Main + "/hostile/tab.html?start")
		a.call(session, "Page.enable", nil)
		for _, u := range []string{env.Pages.Other + outsidePath, env.Pages.Main + "/hostile/tab.html?end"} {
			if _, err := a.call(session, "Page.navigate", map[string]any{"url": u}); err != nil {
				t.Fatalf("Page.navigate %s: %v", u, err)
			}
			a.waitLoaded(session, u)
		}
		setPolicy(t, onlyMain)
		return a, session
	}
	entryOf := func(t *testing.T, a *attacker, session, path string) int {
		t.Helper()
		res, err := a.call(session, "Page.getNavigationHistory", nil)
		if err != nil {
			t.Fatalf("Page.getNavigationHistory: %v", err)
		}
		var h struct {
			Entries []struct {
				ID  int
				URL string
			}
		}
		json.Unmarshal(res, &h)
		for _, e := range h.Entries {
			if strings.HasSuffix(e.URL, path) {
				return e.ID
			}
		}
		t.Fatalf("no history entry for %s: %s", path, res)
		return 0
	}
	// noOutside reads the tab at once and for a while after going back to
	// the outside entry, and checks that this neither asked the outside
	// host for it again nor let the client read it.
	noOutside := func(t *testing.T, a *attacker, session, path, marker string, hitsBefore, from int) {
		t.Helper()
		for range 20 {
			a.eval(session, "document.documentElement.innerText")
			time.Sleep(50 * time.Millisecond)
		}
		for _, m := range a.c.Messages() {
			if m.Method == "Page.backForwardCacheNotUsed" || m.Method == "Page.frameNavigated" && strings.Contains(string(m.Params), path) {
				var ev struct {
					Type                    string
					NotRestoredExplanations []struct{ Reason string }
					Frame                   struct{ URL string }
				}
				json.Unmarshal(m.Params, &ev)
				t.Logf("%s %s %s %v", m.Method, ev.Type, ev.Frame.URL, ev.NotRestoredExplanations)
			}
		}
		if n := env.Pages.Hits(env.Pages.Other, path) - hitsBefore; n != 0 {
			t.Errorf("the host outside the allowed list served %d requests", n)
		}
		if f := a.leaked(from, marker); f != "" {
			t.Errorf("the outside page reached the client after the policy fenced it out: …%s…", f)
		}
	}

	for _, tc := range []struct{ name, dir, how string }{
		// Not restorable: Chrome asks the server again, and the backstop
		// sees the request.
		{"navigateToHistoryEntry_outside_no_bfcache", "unload", "entry"},
		{"history_back_outside_no_bfcache", "unload", "back"},
		// Chrome restores the page, even a no-store one, without a request.
		{"navigateToHistoryEntry_outside_nostore", "landing", "entry"},
		{"navigateToHistoryEntry_outside_bfcache", "cached", "entry"},
		{"history_back_outside_bfcache", "cached", "back"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "history-" + strings.ReplaceAll(tc.name, "_", "-")
			path := "/hostile/" + tc.dir + "/" + name
			a, session := history(t, path)
			before, from := env.Pages.Hits(env.Pages.Other, path), a.mark()
			if tc.how == "entry" {
				_, err := a.call(session, "Page.navigateToHistoryEntry", map[string]any{"entryId": entryOf(t, a, session, path)})
				t.Logf("Page.navigateToHistoryEntry: %v", err)
			} else {
				_, err := a.eval(session, "history.back(), true")
				t.Logf("history.back(): %v", err)
			}
			noOutside(t, a, session, path, testenv.LandingMarker(name), before, from)
		})
	}

	for _, kind := range []string{"prefetch", "prerender"} {
		t.Run("speculation_rules_"+kind+"_then_location", func(t *testing.T) {
			setPolicy(t, onlyMain)
			ctx := testCtx(t, 40*time.Second)
			newPerson(ctx, t)
			a := newAttacker(ctx, t)
			name := "speculation-" + kind
			path := "/hostile/landing/" + name
			outside := env.Pages.Other + path
			_, session := a.newTab(env.Pages.Main + "/hostile/speculation.html?kind=" + kind + "&url=" + outside)
			from := a.mark()
			settle()
			t.Logf("requests for the outside page after the rules: %d", env.Pages.Hits(env.Pages.Other, path))
			a.eval(session, "location.href = "+quote(outside)+", true")
			settle()
			a.eval(session, "document.documentElement.innerText")
			if n := env.Pages.Hits(env.Pages.Other, path); n != 0 {
				t.Errorf("the host outside the allowed list served %d requests", n)
			}
			if f := a.leaked(from, testenv.LandingMarker(name)); f != "" {
				t.Errorf("the outside page reached the client: …%s…", f)
			}
		})
	}

	// The frame's origin is cross-site to the main one (so out of process)
	// and inside the allowed hosts; its parent sends it elsewhere.
	frameOrigin := strings.Replace(env.Pages.Main, "127.0.0.1", "localhost", 1)
	for _, tc := range []struct{ name, autoAttach string }{
		{"oopif_src_outside", ""},
		{"oopif_src_outside_with_flat_child_sessions", `{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setPolicy(t, denylist.Config{AllowedHosts: []string{"127.0.0.1", "localhost"}})
			ctx := testCtx(t, 40*time.Second)
			newPerson(ctx, t)
			a := newAttacker(ctx, t)
			name := "oopif-" + strings.ReplaceAll(tc.name, "_", "-")
			path := "/hostile/landing/" + name
			_, session := a.newTab(env.Pages.Main + "/hostile/frame.html?src=" + frameOrigin + "/hostile/inner.html")
			if tc.autoAttach != "" {
				if _, err := a.callRaw(session, "Target.setAutoAttach", tc.autoAttach); err != nil {
					t.Fatalf("Target.setAutoAttach: %v", err)
				}
				time.Sleep(300 * time.Millisecond)
			}
			if env.Pages.HitsUnder(frameOrigin, "/hostile/inner.html") == 0 {
				t.Fatalf("the frame never loaded from %s: the attack was not tried", frameOrigin)
			}
			a.eval(session, "document.getElementById('f').src = "+quote(env.Pages.Other+path)+", true")
			settle()
			if n := env.Pages.Hits(env.Pages.Other, path); n != 0 {
				t.Errorf("the host outside the allowed list served %d requests", n)
			}
		})
	}
}

// TestHostileTakeOver acts on a tab while a person holds it from the live
// view, with commands that are neither Input.* nor Page.*: a script that
// navigates, goes back or clicks, a DOM edit, a new tab from the tab's
// session. The person's tab must stay as they hold it.
func TestHostileTakeOver(t *testing.T) {
	requireEnv(t)
	type heldTab struct {
		a       *attacker
		p       *person
		target  string
		session string
		url     string
	}
	// held opens a tab of the attacker's (with a page before it in its
	// history) and has the person take control of it.
	held := func(t *testing.T) *heldTab {
		t.Helper()
		ctx := testCtx(t, 40*time.Second)
		h := &heldTab{p: newPerson(ctx, t), a: newAttacker(ctx, t)}
		h.target, h.session = h.a.newTab(env.Pages.Main + "/hostile/tab.html?before")
		h.url = env.Pages.Main + "/hostile/tab.html?held"
		if _, err := h.a.call(h.session, "Page.navigate", map[string]any{"url": h.url}); err != nil {
			t.Fatal(err)
		}
		h.a.waitLoaded(h.session, h.url)
		inst := env.Relay.Default()
		tabID := tabIDOf(t, h.target)
		if err := inst.TakeControl(tabID, "person"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.ReleaseControl(tabID, "person") })
		return h
	}
	// untouched checks the tab as the person sees it.
	untouched := func(t *testing.T, h *heldTab) {
		t.Helper()
		settle()
		if v := h.p.eval(h.target, "location.href"); v != quote(h.url) {
			t.Errorf("the tab the person holds went to %s", v)
		}
		if v := h.p.eval(h.target, "document.getElementById('marker') && document.getElementById('marker').textContent"); v != `"untouched"` {
			t.Errorf("the page of the tab the person holds was changed: its marker says %s", v)
		}
	}

	t.Run("evaluate_location_href", func(t *testing.T) {
		h := held(t)
		path := "/hostile/landing/takeover-location"
		h.a.eval(h.session, "location.href = "+quote(env.Pages.Main+path)+", true")
		untouched(t, h)
		if n := env.Pages.Hits(env.Pages.Main, path); n != 0 {
			t.Errorf("the navigation was requested %d times", n)
		}
	})
	t.Run("evaluate_history_back", func(t *testing.T) {
		h := held(t)
		h.a.eval(h.session, "history.back(), true")
		untouched(t, h)
	})
	t.Run("evaluate_button_click", func(t *testing.T) {
		h := held(t)
		h.a.eval(h.session, "document.getElementById('change').click(), true")
		untouched(t, h)
	})
	t.Run("callFunctionOn_button_click", func(t *testing.T) {
		h := held(t)
		res, err := h.a.call(h.session, "Runtime.evaluate", map[string]any{"expression": "document.getElementById('change')"})
		if err == nil {
			var r struct{ Result struct{ ObjectID string } }
			json.Unmarshal(res, &r)
			h.a.call(h.session, "Runtime.callFunctionOn", map[string]any{"objectId": r.Result.ObjectID, "functionDeclaration": "function () { this.click(); }"})
		}
		untouched(t, h)
	})
	t.Run("DOM_setOuterHTML", func(t *testing.T) {
		h := held(t)
		if res, err := h.a.call(h.session, "DOM.getDocument", nil); err == nil {
			var doc struct{ Root struct{ NodeID int } }
			json.Unmarshal(res, &doc)
			if res, err := h.a.call(h.session, "DOM.querySelector", map[string]any{"nodeId": doc.Root.NodeID, "selector": "#marker"}); err == nil {
				var q struct{ NodeID int }
				json.Unmarshal(res, &q)
				_, err := h.a.call(h.session, "DOM.setOuterHTML", map[string]any{"nodeId": q.NodeID, "outerHTML": `<p id="marker">rewritten by the client</p>`})
				t.Logf("DOM.setOuterHTML: %v", err)
			}
		}
		untouched(t, h)
	})
	t.Run("createTarget_on_held_tab_session", func(t *testing.T) {
		h := held(t)
		before := len(h.p.newPages(func(string) bool { return true }))
		path := "/hostile/landing/takeover-createtarget"
		_, err := h.a.call(h.session, "Target.createTarget", map[string]any{"url": env.Pages.Main + path})
		t.Logf("Target.createTarget: %v", err)
		untouched(t, h)
		if pages := h.p.newPages(func(string) bool { return true }); len(pages) != before {
			t.Errorf("a new tab appeared from the session of the tab the person holds: %+v", pages)
		}
	})
}

// TestHostileFileUpload puts a file of the person's machine into a page —
// DOM.setFileInputFiles on a file input, Input.dispatchDragEvent with
// files — and sends it to a host the policy allows, or reads it back.
// Neither the server nor the client may ever see its contents.
func TestHostileFileUpload(t *testing.T) {
	requireEnv(t)
	upload := func(t *testing.T) (a *attacker, session, path, marker string, from int) {
		t.Helper()
		setPolicy(t, denylist.Config{})
		ctx := testCtx(t, 40*time.Second)
		newPerson(ctx, t)
		a = newAttacker(ctx, t)
		path, marker = secretFile(t)
		_, session = a.newTab(env.Pages.Main + "/hostile/upload.html")
		return a, session, path, marker, a.mark()
	}
	setFiles := func(t *testing.T, a *attacker, session, path string) {
		t.Helper()
		res, err := a.call(session, "DOM.getDocument", nil)
		if err != nil {
			t.Fatalf("DOM.getDocument: %v", err)
		}
		var doc struct{ Root struct{ NodeID int } }
		json.Unmarshal(res, &doc)
		res, err = a.call(session, "DOM.querySelector", map[string]any{"nodeId": doc.Root.NodeID, "selector": "#file"})
		if err != nil {
			t.Fatalf("DOM.querySelector: %v", err)
		}
		var q struct{ NodeID int }
		json.Unmarshal(res, &q)
		_, err = a.call(session, "DOM.setFileInputFiles", map[string]any{"nodeId": q.NodeID, "files": []string{path}})
		t.Logf("DOM.setFileInputFiles: %v", err)
	}
	noLeak := func(t *testing.T, a *attacker, marker string, from int) {
		t.Helper()
		settle()
		if env.Pages.Received(marker) {
			t.Error("the person's file was posted to the server")
		}
		if f := a.leaked(from, marker); f != "" {
			t.Errorf("the person's file reached the client: …%s…", f)
		}
	}

	t.Run("setFileInputFiles_then_multipart_form_post", func(t *testing.T) {
		a, session, path, marker, from := upload(t)
		setFiles(t, a, session, path)
		a.eval(session, "document.getElementById('form').submit(), true")
		noLeak(t, a, marker, from)
	})
	t.Run("setFileInputFiles_then_fetch_FormData", func(t *testing.T) {
		a, session, path, marker, from := upload(t)
		setFiles(t, a, session, path)
		v, err := a.eval(session, "fetch('/hostile/sink', {method: 'POST', body: new FormData(document.getElementById('form'))}).then((r) => r.status)")
		t.Logf("fetch: %s %v", v, err)
		noLeak(t, a, marker, from)
	})
	t.Run("setFileInputFiles_then_read_back", func(t *testing.T) {
		a, session, path, marker, from := upload(t)
		setFiles(t, a, session, path)
		v, err := a.eval(session, "document.getElementById('file').files.length ? document.getElementById('file').files[0].text() : 'no file'")
		t.Logf("the file as the page reads it: %.80s %v", v, err)
		noLeak(t, a, marker, from)
	})
	t.Run("dispatchDragEvent_files_drop", func(t *testing.T) {
		a, session, path, marker, from := upload(t)
		data := map[string]any{"items": []any{}, "files": []string{path}, "dragOperationsMask": 1}
		for _, typ := range []string{"dragEnter", "dragOver", "drop"} {
			_, err := a.call(session, "Input.dispatchDragEvent", map[string]any{"type": typ, "x": 150, "y": 200, "data": data})
			t.Logf("Input.dispatchDragEvent %s: %v", typ, err)
		}
		settle()
		v, _ := a.eval(session, "document.getElementById('dropped').textContent")
		t.Logf("the page says: %s", v)
		noLeak(t, a, marker, from)
	})
}

// TestHostilePersonOpenedTab: in "pick" mode only the tabs the person
// ticks are shared. A tab the person opens themselves from a shared tab
// (a ctrl+click, a middle click, a shift+click on a link) carries the
// shared tab as its opener, but the person never ticked it: the client
// must never see it as a target nor get a session on it.
func TestHostilePersonOpenedTab(t *testing.T) {
	requireEnv(t)
	for _, tc := range []struct {
		name      string
		button    string
		modifiers int // 1 Alt, 2 Ctrl, 4 Meta, 8 Shift
		// watched: the client reads the shared tab all along (the DOM,
		// screenshots), as an agent that watches a page does.
		watched bool
	}{
		{"ctrl_click", "left", 2, false},
		{"middle_click", "middle", 0, false},
		{"shift_click", "left", 8, false},
		{"ctrl_click_while_watched", "left", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setPolicy(t, denylist.Config{})
			ctx := testCtx(t, 40*time.Second)
			p := newPerson(ctx, t)
			request := p.pickMode()
			name := "person-opened-" + strings.ReplaceAll(tc.name, "_", "-")
			opened := env.Pages.Main + "/hostile/landing/" + name
			shared := p.openTab(env.Pages.Main + "/hostile/tab.html?to=" + opened)
			request(fmt.Sprintf(`{type: "share", tabId: %d, on: true}`, tabIDOfPerson(t, p, shared)))
			a := newAttacker(ctx, t)
			session := a.sessionFor(shared, 5*time.Second)
			if session == "" {
				t.Fatal("the tab the person shared is not a target")
			}
			if tc.watched {
				stop := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						method := []string{"DOM.getDocument", "Page.captureScreenshot", "Accessibility.getFullAXTree"}[i%3]
						a.c.Call(ctx, session, method, nil)
						time.Sleep(50 * time.Millisecond)
					}
				}()
				defer func() { close(stop); <-done }()
			}

			// The person opens the link of the shared tab in a tab of its own.
			s := p.attach(shared)
			for _, typ := range []string{"mousePressed", "mouseReleased"} {
				if _, err := p.call(s, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": 100, "y": 260, "button": tc.button, "buttons": 0, "clickCount": 1, "modifiers": tc.modifiers}); err != nil {
					t.Fatalf("the person's click: %v", err)
				}
			}
			var tab pageTarget
			deadline := time.Now().Add(5 * time.Second)
			for tab.TargetID == "" {
				if pages := p.newPages(hasPrefix(opened)); len(pages) > 0 {
					tab = pages[0]
				} else if time.Now().After(deadline) {
					t.Fatalf("the person's %s opened no tab: %+v", tc.name, p.newPages(func(string) bool { return true }))
				}
				time.Sleep(50 * time.Millisecond)
			}
			if v := p.eval(shared, "location.href"); !strings.Contains(v, "/hostile/tab.html") {
				t.Fatalf("the click navigated the shared tab itself (to %s), it did not open a tab", v)
			}
			settle()
			if page := p.newPages(hasPrefix(extensionPage())); len(page) > 0 {
				t.Logf("the tab as chrome.tabs sees it: %s", p.eval(page[0].TargetID, `chrome.tabs.query({}).then((ts) => ts.filter((t) => t.url.startsWith(`+quote(opened)+`)).map((t) => ({openerTabId: t.openerTabId, active: t.active, windowId: t.windowId})))`))
			}

			if urls, ok := a.targets()[tab.TargetID]; ok {
				t.Errorf("the tab the person opened became a target for the client:%s", urls)
			}
			for _, m := range a.c.Messages() {
				if m.Method == "Target.attachedToTarget" && targetOf(m.Params) == tab.TargetID {
					t.Errorf("the client got a session on the tab the person opened: %s", m.Raw)
				}
			}
			if res, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": tab.TargetID, "flatten": true}); err == nil {
				var r struct{ SessionID string }
				json.Unmarshal(res, &r)
				v, err := a.eval(r.SessionID, "document.getElementById('marker').textContent")
				t.Errorf("the client attached to the tab the person opened and read %s %v", v, err)
			}
		})
	}
}
