package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestHostileRelayOrigins takes a shared tab to the relay's own pages —
// the live view, whose buttons are the person's, and /json/version — or
// has a shared page talk to them, by every way a client can: commands with
// the address spelt as Chrome reads it, a script, a link, a form, a
// redirect, a popup, a frame, fetch, a WebSocket and an EventSource. The
// relay's listener must receive none of it.
func TestHostileRelayOrigins(t *testing.T) {
	requireEnv(t)
	_, port, _ := strings.Cut(env.Addr, ":")
	// relayURL is a page of the relay's under a name that reaches it,
	// with a marker its listener can be asked about.
	relayURL := func(host, marker string) string { return "http://" + host + ":" + port + "/json/version?m=" + marker }
	var n int
	newMarker := func() string { n++; return fmt.Sprintf("relayorigin%d%s", n, secret("")) }
	untouched := func(t *testing.T, a *attacker, from int, marker string) {
		t.Helper()
		settle()
		if got := env.RelaySaw(marker); got != 0 {
			t.Errorf("the relay's listener received %d requests of the attack", got)
		}
		// What /json/version says, and what the relay's pages say.
		for _, s := range []string{"webSocketDebuggerUrl", "Chrome DevTools Protocol endpoint"} {
			if f := a.leaked(from, s); f != "" {
				t.Errorf("a page of the relay's reached the client: …%s…", f)
			}
		}
	}

	t.Run("commands", func(t *testing.T) {
		ctx := testCtx(t, 60*time.Second)
		newPerson(ctx, t)
		a := newAttacker(ctx, t)
		_, session := a.newTab(env.Pages.Main + "/hostile/tab.html?commands")
		marker := newMarker()
		from := a.mark()
		for _, host := range []string{"127.0.0.1", "localhost", "LOCALHOST.", "127.0.0.2", "0x7f.1", "2130706433", "[::1]", "[0:0:0:0:0:0:0:1]", "0.0.0.0", "a.localhost", "user:pw@127.0.0.1"} {
			u := relayURL(host, marker)
			_, err := a.call(session, "Page.navigate", map[string]any{"url": u})
			t.Logf("Page.navigate %s: %v", u, err)
			res, err := a.call("", "Target.createTarget", map[string]any{"url": u})
			t.Logf("Target.createTarget %s: %s %v", u, res, err)
			_, err = a.callRaw(session, "Page.navigate", `{"url":`+quote(u)+`}`)
			t.Logf("Page.navigate (raw) %s: %v", u, err)
			res, err = a.call(session, "Network.loadNetworkResource", map[string]any{"frameId": "", "url": u, "options": map[string]any{"disableCache": true, "includeCredentials": true}})
			t.Logf("Network.loadNetworkResource %s: %.200s %v", u, res, err)
		}
		untouched(t, a, from, marker)
	})

	// The page goes there itself, by script or by an element of its own.
	for _, tc := range []struct {
		name string
		// page is the page the attack starts on, for the relay URL u.
		page   func(u string) string
		attack func(a *attacker, session, u string)
	}{
		{"location_href", func(string) string { return env.Pages.Main + "/hostile/tab.html?location" }, func(a *attacker, s, u string) {
			a.eval(s, "location.href = "+quote(u)+", true")
		}},
		{"location_replace", func(string) string { return env.Pages.Main + "/hostile/tab.html?replace" }, func(a *attacker, s, u string) {
			a.eval(s, "location.replace("+quote(u)+"), true")
		}},
		{"link_click", func(u string) string { return env.Pages.Main + "/hostile/tab.html?to=" + url.QueryEscape(u) }, func(a *attacker, s, _ string) {
			a.eval(s, "document.getElementById('self').click(), true")
		}},
		{"form_post_new_tab", func(u string) string { return env.Pages.Main + "/hostile/tab.html?to=" + url.QueryEscape(u) }, func(a *attacker, s, _ string) {
			a.eval(s, "document.getElementById('submit').click(), true")
		}},
		{"link_new_tab", func(u string) string { return env.Pages.Main + "/hostile/tab.html?to=" + url.QueryEscape(u) }, func(a *attacker, s, _ string) {
			a.eval(s, "document.getElementById('blank').click(), true")
		}},
		{"window_open", func(string) string { return env.Pages.Main + "/hostile/tab.html?open" }, func(a *attacker, s, u string) {
			a.eval(s, "window.open("+quote(u)+"), true")
		}},
		{"redirect", func(string) string { return env.Pages.Main + "/hostile/tab.html?redirect" }, func(a *attacker, s, u string) {
			a.eval(s, "location.href = "+quote(env.Pages.Main+"/redirect?to="+url.QueryEscape(u))+", true")
		}},
		{"redirect_new_tab", func(string) string { return env.Pages.Main + "/hostile/tab.html?redirectpopup" }, func(a *attacker, s, u string) {
			a.eval(s, "window.open("+quote(env.Pages.Main+"/redirect?to="+url.QueryEscape(u))+"), true")
		}},
		{"frame", func(u string) string { return env.Pages.Main + "/hostile/frame.html?src=" + url.QueryEscape(u) }, func(*attacker, string, string) {}},
		{"fetch", func(string) string { return env.Pages.Main + "/hostile/tab.html?fetch" }, func(a *attacker, s, u string) {
			v, err := a.eval(s, "fetch("+quote(u)+", {mode: 'no-cors', credentials: 'include'}).then(() => 'sent', (e) => String(e))")
			a.t.Logf("fetch: %s %v", v, err)
			v, err = a.eval(s, "fetch("+quote(u+"&post")+", {method: 'POST', mode: 'no-cors', body: '{}'}).then(() => 'sent', (e) => String(e))")
			a.t.Logf("fetch POST: %s %v", v, err)
		}},
		{"xhr", func(string) string { return env.Pages.Main + "/hostile/tab.html?xhr" }, func(a *attacker, s, u string) {
			a.eval(s, "new Promise((done) => { const x = new XMLHttpRequest(); x.open('GET', "+quote(u)+"); x.onloadend = () => done(x.status); x.send(); })")
		}},
		{"websocket", func(string) string { return env.Pages.Main + "/hostile/tab.html?ws" }, func(a *attacker, s, u string) {
			ws := "ws://" + strings.TrimPrefix(u, "http://")
			ws = strings.Replace(ws, "/json/version?", "/devtools/browser/"+env.Relay.Default().GUID()+"?", 1)
			v, err := a.eval(s, "new Promise((done) => { const w = new WebSocket("+quote(ws)+"); w.onopen = () => done('open'); w.onerror = () => done('error'); setTimeout(() => done('timeout'), 3000); })")
			a.t.Logf("WebSocket: %s %v", v, err)
		}},
		{"eventsource", func(string) string { return env.Pages.Main + "/hostile/tab.html?es" }, func(a *attacker, s, u string) {
			a.eval(s, "new Promise((done) => { const e = new EventSource("+quote(u)+"); e.onerror = () => { e.close(); done('error'); }; setTimeout(() => done('timeout'), 2000); })")
		}},
		{"img_beacon", func(string) string { return env.Pages.Main + "/hostile/tab.html?beacon" }, func(a *attacker, s, u string) {
			a.eval(s, "navigator.sendBeacon("+quote(u+"&beacon")+", 'x'); new Image().src = "+quote(u+"&img")+"; true")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t, 60*time.Second)
			newPerson(ctx, t)
			a := newAttacker(ctx, t)
			marker := newMarker()
			from := a.mark()
			for _, host := range []string{"127.0.0.1", "localhost", "[::1]"} {
				u := relayURL(host, marker)
				target, session := a.newTabLoading(tc.page(u))
				tc.attack(a, session, u)
				settle()
				if session != "" {
					v, err := a.eval(session, "location.href + ' ' + (document.body ? document.body.innerText.slice(0, 200) : '')")
					t.Logf("%s: the tab shows %s %v", host, v, err)
				}
				_ = target
			}
			untouched(t, a, from, marker)
		})
	}

	// The person opens the live view (here: the relay's root page) in a
	// tab of the browser the automation shares: the automation gets no hold
	// of it.
	t.Run("person_opens_relay_page", func(t *testing.T) {
		ctx := testCtx(t, 60*time.Second)
		p := newPerson(ctx, t)
		a := newAttacker(ctx, t)
		from := a.mark()
		res, err := p.call("", "Target.createTarget", map[string]any{"url": "http://127.0.0.1:" + port + "/?person"})
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ TargetID string }
		json.Unmarshal(res, &r)
		settle()
		// In "all" mode the tab is shared (from about:blank): whatever the
		// client's session on it, the relay's page is not what it reads.
		session := a.sessionFor(r.TargetID, time.Second)
		if session == "" {
			if res, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": r.TargetID, "flatten": true}); err == nil {
				var s struct{ SessionID string }
				json.Unmarshal(res, &s)
				session = s.SessionID
			}
		}
		if session != "" {
			v, err := a.eval(session, "location.href + ' ' + document.body.innerText")
			t.Logf("the client reads %.200s %v", v, err)
		}
		for _, s := range []string{"webSocketDebuggerUrl", "Chrome DevTools Protocol endpoint"} {
			if f := a.leaked(from, s); f != "" {
				t.Errorf("the relay's page reached the client: …%s…", f)
			}
		}
	})
}

// newTabLoading opens a tab of the attacker's on url and waits (briefly)
// for it to load; a page that never loads is no failure here, since some
// attacks start as it loads (a frame).
func (a *attacker) newTabLoading(url string) (targetID, session string) {
	a.t.Helper()
	res, err := a.call("", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		a.t.Fatalf("Target.createTarget: %v", err)
	}
	var r struct{ TargetID string }
	json.Unmarshal(res, &r)
	session = a.sessionFor(r.TargetID, 10*time.Second)
	if session == "" {
		a.t.Fatalf("no session on the new tab")
	}
	if _, err := a.call(session, "Page.navigate", map[string]any{"url": url}); err != nil {
		a.t.Fatalf("Page.navigate %s: %v", url, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if v, err := a.eval(session, "document.readyState"); err == nil && v == `"complete"` {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r.TargetID, session
}
