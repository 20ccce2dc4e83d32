package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/testenv"
)

// The credential and secret tests: the person is logged in to a site (an
// HttpOnly session cookie, rotated later, and a Basic pair in the
// browser's cache), and a client — Playwright, Puppeteer, raw CDP — tries
// every way Chrome reports them. Nothing a page script could not read may
// reach it; what it does with what it was shown must still work (the site
// stays logged in); what it makes up must not act as the person. See
// secrets_harness_test.go for how every byte is searched.

var markerRE = regexp.MustCompile(`^cdprelay-redacted:\d+$`)

// TestCredentialsNetworkEvents: a raw client with the Network domain on
// gets the ExtraInfo events of a navigation, a fetch, a response that
// rotates the session cookie, a request with the cached Basic pair and a
// WebSocket handshake: each credential is there as a marker of its
// length, and nothing else of it is anywhere.
func TestCredentialsNetworkEvents(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	cr := personCredentials(ctx, t)
	a := newClient(ctx, t)
	session := a.tab(env.Pages.Main + "/secure/home")
	if v, _ := a.eval(session, "document.getElementById('state').textContent"); v != `"logged in"` {
		t.Fatalf("the site does not know the person: %s", v)
	}
	v, err := a.eval(session, `(async () => {
  const out = [];
  out.push(await (await fetch('/secure/api')).text());
  out.push((await fetch('/secure/rotate')).status);
  out.push(await (await fetch('/secure/api')).text());
  out.push((await fetch('/basic/page')).status);
  out.push(await new Promise((resolve) => {
    const ws = new WebSocket('ws://' + location.host + '/secure/ws');
    ws.onmessage = (e) => { resolve(e.data); ws.close(); };
    ws.onerror = () => resolve('error');
  }));
  return out;
})()`)
	if err != nil {
		t.Fatal(err)
	}
	// The site kept working with the person's credentials: the requests
	// carried them, the rotated cookie replaced the first one.
	if want := `["{\"loggedIn\":true}",200,"{\"loggedIn\":true}",200,"logged in"]`; v != want {
		t.Errorf("the site, through the client's tab: %s, want %s", v, want)
	}
	settle()

	rotated := cr.s.Live(host(env.Pages.Main))
	if len(rotated) != 1 || rotated[0] == cr.sid {
		t.Fatalf("the session was not rotated: live %v, first %s", rotated, cr.sid)
	}
	// Each credential is reported, as a marker of its length: the events
	// that carry them did reach the client.
	extra := func(path string) (headers []map[string]string, cookies []string) {
		for _, p := range a.eventsFor("Network.requestWillBeSentExtraInfo", path) {
			var ev struct {
				Headers           map[string]string
				AssociatedCookies []struct{ Cookie struct{ Name, Value string } }
			}
			json.Unmarshal(p, &ev)
			headers = append(headers, ev.Headers)
			for _, c := range ev.AssociatedCookies {
				cookies = append(cookies, c.Cookie.Name+"="+c.Cookie.Value)
			}
		}
		return headers, cookies
	}
	expect := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	hs, cookies := extra("/secure/home")
	if len(hs) == 0 {
		t.Fatal("no Network.requestWillBeSentExtraInfo for the page")
	}
	c, _ := header(hs[len(hs)-1], "Cookie")
	expect("the page request's Cookie", c, marker("sid="+cr.sid))
	expect("the page request's associated cookie", strings.Join(cookies, " "), "sid="+marker(cr.sid))
	hs, _ = extra("/basic/page")
	if len(hs) == 0 {
		t.Fatal("no Network.requestWillBeSentExtraInfo for /basic/page")
	}
	auth, _ := header(hs[0], "Authorization")
	expect("the Basic request's Authorization", auth, marker(testenv.BasicHeader(cr.user, cr.pass)))
	var setCookies []string
	for _, p := range a.eventsFor("Network.responseReceivedExtraInfo", "/secure/rotate") {
		var ev struct {
			Headers     map[string]string
			HeadersText string
		}
		json.Unmarshal(p, &ev)
		sc, _ := header(ev.Headers, "Set-Cookie")
		setCookies = append(setCookies, sc)
		if strings.Contains(ev.HeadersText, "Set-Cookie") && !strings.Contains(ev.HeadersText, "Set-Cookie: cdprelay-redacted:") {
			t.Errorf("headersText of the rotation keeps its Set-Cookie: %q", ev.HeadersText)
		}
	}
	if len(setCookies) == 0 || !markerRE.MatchString(setCookies[0]) {
		t.Errorf("the rotation's Set-Cookie: %q, want a marker", setCookies)
	}
	ws := a.eventsFor("Network.webSocketWillSendHandshakeRequest", "/secure/ws")
	if len(ws) == 0 {
		t.Fatal("no Network.webSocketWillSendHandshakeRequest")
	}
	var hsr struct {
		Request struct{ Headers map[string]string }
	}
	json.Unmarshal(ws[0], &hsr)
	c, _ = header(hsr.Request.Headers, "Cookie")
	expect("the WebSocket handshake's Cookie", c, marker("sid="+rotated[0]))

	noLeaks(t, "raw client with Network on", cr.never(t).scanFrames("client", a.c.Frames()))
}

// paused is a Fetch.requestPaused as a client reads it.
type paused struct {
	session   string
	RequestID string
	Request   struct {
		URL     string
		Headers map[string]string
	}
	ResponseStatusCode int
	ResponseHeaders    []fetchHeader
}

type fetchHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// start makes the page of session fetch path without waiting; the
// result is in window[name], to be read with finish.
func (a *attacker) start(session, name, path string) {
	a.t.Helper()
	if _, err := a.eval(session, `window[`+quote(name)+`] = fetch(`+quote(path)+`).then((r) => r.text(), (e) => 'failed: ' + e), 1`); err != nil {
		a.t.Fatal(err)
	}
}

func (a *attacker) finish(session, name string) string {
	a.t.Helper()
	v, err := a.eval(session, `window[`+quote(name)+`]`)
	if err != nil {
		a.t.Fatal(err)
	}
	return v
}

// pausedFor waits for the Fetch.requestPaused of a URL containing path.
func (a *attacker) pausedFor(path string, response bool) paused {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
	defer cancel()
	var p paused
	_, _, err := a.c.WaitMessage(ctx, 0, func(m cdptest.Message) bool {
		if m.Method != "Fetch.requestPaused" {
			return false
		}
		var ev paused
		json.Unmarshal(m.Params, &ev)
		if !strings.Contains(ev.Request.URL, path) || (ev.ResponseStatusCode != 0) != response {
			return false
		}
		ev.session = m.SessionID
		p = ev
		return true
	})
	if err != nil {
		a.t.Fatalf("no Fetch.requestPaused for %s: %v", path, err)
	}
	return p
}

// headerList is a paused request's headers as Fetch.continueRequest
// takes them.
func headerList(h map[string]string, set ...string) []fetchHeader {
	var out []fetchHeader
	for k, v := range h {
		out = append(out, fetchHeader{k, v})
	}
	for i := 0; i+1 < len(set); i += 2 {
		out = append(out, fetchHeader{set[i], set[i+1]})
	}
	return out
}

// TestCredentialsFetchInterception: a raw client intercepts requests at
// the request stage (Cookie in the paused request) and at the response
// stage. Continued with the headers it was shown, a request reaches the
// site with the person's cookie; a marker of another request, a Cookie it
// makes up, and a Set-Cookie in a response it makes or changes are
// refused, and the person's jar is as it was.
func TestCredentialsFetchInterception(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	cr := personCredentials(ctx, t)
	setPolicy(t, denylist.Config{})
	a := newClient(ctx, t)
	session := a.tab(env.Pages.Main + "/secure/home")
	if _, err := a.call(session, "Fetch.enable", map[string]any{"patterns": []map[string]any{
		{"urlPattern": "*/secure/api?req*", "requestStage": "Request"},
		{"urlPattern": "*/secure/api?resp*", "requestStage": "Response"},
		{"urlPattern": "*/secure/rotate*", "requestStage": "Response"},
	}}); err != nil {
		t.Fatal(err)
	}
	api := host(env.Pages.Main)
	reached := func(query string) []testenv.SiteRequest {
		var out []testenv.SiteRequest
		for _, r := range cr.s.Requests("/secure/api") {
			if r.Host == api && r.Query == query {
				out = append(out, r)
			}
		}
		return out
	}
	// unchanged runs an attempt and checks that the person's jar is as it
	// was before.
	unchanged := func(what string, attempt func()) {
		t.Helper()
		before := cr.p.jar()
		attempt()
		if after := cr.p.jar(); strings.Join(after, "\n") != strings.Join(before, "\n") {
			t.Errorf("%s changed the person's cookies:\nbefore %v\nafter  %v", what, before, after)
		}
	}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: not refused", what)
		} else {
			t.Logf("%s: %v", what, err)
		}
	}

	// Continued with the headers it was shown: the site gets the cookie.
	{
		a.start(session, "r1", "/secure/api?req1")
		p := a.pausedFor("/secure/api?req1", false)
		c, ok := header(p.Request.Headers, "Cookie")
		if !ok || c != marker("sid="+cr.sid) {
			t.Errorf("the paused request's Cookie: %q, want %q", c, marker("sid="+cr.sid))
		}
		if _, err := a.call(p.session, "Fetch.continueRequest", map[string]any{"requestId": p.RequestID, "headers": headerList(p.Request.Headers, "X-Client", "kept")}); err != nil {
			t.Fatalf("Fetch.continueRequest with the headers shown: %v", err)
		}
		if v := a.finish(session, "r1"); v != `"{\"loggedIn\":true}"` {
			t.Errorf("the site answered %s", v)
		}
		if got := reached("req1"); len(got) != 1 || got[0].Cookie != "sid="+cr.sid || !got[0].LoggedIn {
			t.Errorf("the site got %+v, want the person's cookie", got)
		}
	}
	// A marker that is not this request's (another length): refused.
	{
		a.start(session, "r2", "/secure/api?req2")
		p := a.pausedFor("/secure/api?req2", false)
		h := p.Request.Headers
		delete(h, "Cookie")
		_, err := a.call(p.session, "Fetch.continueRequest", map[string]any{"requestId": p.RequestID, "headers": headerList(h, "Cookie", "cdprelay-redacted:5")})
		refused("a marker that is not this request's", err)
		if err != nil {
			a.call(p.session, "Fetch.failRequest", map[string]any{"requestId": p.RequestID, "errorReason": "Aborted"})
		}
		a.finish(session, "r2")
		for _, r := range reached("req2") {
			if strings.Contains(r.Cookie, "cdprelay-redacted") || r.Cookie == "sid="+cr.sid {
				t.Errorf("the site got %q", r.Cookie)
			}
		}
	}
	// A Cookie of the client's own: refused.
	{
		unchanged("a made-up Cookie", func() {
			a.start(session, "r3", "/secure/api?req3")
			p := a.pausedFor("/secure/api?req3", false)
			h := p.Request.Headers
			delete(h, "Cookie")
			_, err := a.call(p.session, "Fetch.continueRequest", map[string]any{"requestId": p.RequestID, "headers": headerList(h, "cookie", "sid=made-up-by-the-client")})
			refused("a Cookie the client made up", err)
			if err != nil {
				a.call(p.session, "Fetch.failRequest", map[string]any{"requestId": p.RequestID, "errorReason": "Aborted"})
			}
			a.finish(session, "r3")
		})
		for _, r := range reached("req3") {
			if strings.Contains(r.Cookie, "made-up") {
				t.Errorf("the site got the client's cookie as the person's: %q", r.Cookie)
			}
		}
	}
	// A response the client makes that sets a cookie: refused.
	{
		for i, c := range []struct {
			what   string
			params func(id string) map[string]any
		}{
			{"responseHeaders", func(id string) map[string]any {
				return map[string]any{"requestId": id, "responseCode": 200, "responseHeaders": []fetchHeader{{"Content-Type", "text/plain"}, {"Set-Cookie", "sid=planted; Path=/; HttpOnly"}}, "body": "b2s="}
			}},
			{"binaryResponseHeaders", func(id string) map[string]any {
				return map[string]any{"requestId": id, "responseCode": 200, "binaryResponseHeaders": base64.StdEncoding.EncodeToString([]byte("Content-Type: text/plain\x00set-cookie: sid=planted; Path=/\x00")), "body": "b2s="}
			}},
		} {
			unchanged("Fetch.fulfillRequest with Set-Cookie in "+c.what, func() {
				path := fmt.Sprintf("/secure/api?req4-%d", i)
				a.start(session, path, path)
				p := a.pausedFor(path, false)
				_, err := a.call(p.session, "Fetch.fulfillRequest", c.params(p.RequestID))
				refused("Fetch.fulfillRequest with Set-Cookie in "+c.what, err)
				if err != nil {
					a.call(p.session, "Fetch.failRequest", map[string]any{"requestId": p.RequestID, "errorReason": "Aborted"})
				}
				a.finish(session, path)
			})
		}
	}
	// The response stage: continued as shown it works; a Set-Cookie added
	// is refused.
	{
		a.start(session, "r5", "/secure/api?resp5")
		p := a.pausedFor("/secure/api?resp5", true)
		if _, err := a.call(p.session, "Fetch.continueResponse", map[string]any{"requestId": p.RequestID, "responseCode": p.ResponseStatusCode, "responseHeaders": p.ResponseHeaders}); err != nil {
			t.Errorf("Fetch.continueResponse with the headers shown: %v", err)
		}
		if v := a.finish(session, "r5"); v != `"{\"loggedIn\":true}"` {
			t.Errorf("the site answered %s", v)
		}
		unchanged("Fetch.continueResponse with Set-Cookie", func() {
			a.start(session, "r6", "/secure/api?resp6")
			p := a.pausedFor("/secure/api?resp6", true)
			_, err := a.call(p.session, "Fetch.continueResponse", map[string]any{"requestId": p.RequestID, "responseCode": 200, "responseHeaders": append(p.ResponseHeaders, fetchHeader{"Set-Cookie", "sid=planted; Path=/; HttpOnly"})})
			refused("Fetch.continueResponse with Set-Cookie", err)
			if err != nil {
				a.call(p.session, "Fetch.continueResponse", map[string]any{"requestId": p.RequestID})
			}
			a.finish(session, "r6")
		})
		// A response that rotates the session: whatever Chrome shows of it
		// at the response stage, continued as it is, the new cookie is set.
		a.start(session, "r7", "/secure/rotate")
		p = a.pausedFor("/secure/rotate", true)
		if _, err := a.call(p.session, "Fetch.continueResponse", map[string]any{"requestId": p.RequestID}); err != nil {
			t.Errorf("Fetch.continueResponse of the rotation: %v", err)
		}
		a.finish(session, "r7")
		a.start(session, "r8", "/secure/api?after-rotation")
		if v := a.finish(session, "r8"); v != `"{\"loggedIn\":true}"` {
			t.Errorf("after the rotation the site answered %s", v)
		}
	}
	noLeaks(t, "raw client intercepting with Fetch", cr.never(t).scanFrames("client", a.c.Frames()))
}

// TestCredentialsContinuedElsewhere: a raw client continues a paused
// request with the headers it was shown, but sends it to another origin
// (Fetch.continueRequest's url). The person's cookie belongs to the
// request's own site: the other origin must never receive it.
func TestCredentialsContinuedElsewhere(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	cr := personCredentials(ctx, t)
	setPolicy(t, denylist.Config{})
	a := newClient(ctx, t)
	session := a.tab(env.Pages.Main + "/secure/home")
	if _, err := a.call(session, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*/secure/api*", "requestStage": "Request"}}}); err != nil {
		t.Fatal(err)
	}
	a.start(session, "r", "/secure/api?elsewhere")
	p := a.pausedFor("/secure/api?elsewhere", false)
	_, err := a.call(p.session, "Fetch.continueRequest", map[string]any{"requestId": p.RequestID, "url": env.Pages.Other + "/secure/sink?elsewhere", "headers": headerList(p.Request.Headers)})
	t.Logf("Fetch.continueRequest to %s with the headers shown: %v", env.Pages.Other, err)
	if err != nil {
		a.call(p.session, "Fetch.failRequest", map[string]any{"requestId": p.RequestID, "errorReason": "Aborted"})
	}
	a.finish(session, "r")
	for _, r := range cr.s.Requests("/secure/sink") {
		if r.Host == host(env.Pages.Other) && strings.Contains(r.Cookie, cr.sid) {
			t.Errorf("%s received the person's session cookie for %s: Cookie: %s", env.Pages.Other, env.Pages.Main, r.Cookie)
		}
	}
	noLeaks(t, "raw client", cr.never(t).scanFrames("client", a.c.Frames()))
}
