package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/testenv"
	"github.com/cdprelay/cdprelay/relay"
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

// TestCredentialsLoadNetworkResource: Network.loadNetworkResource with
// includeCredentials sends the person's cookie and cached Basic pair (the
// site answers as for the person) and its result, headers and stream,
// shows neither, nor the cookie the response sets.
func TestCredentialsLoadNetworkResource(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	cr := personCredentials(ctx, t)
	setPolicy(t, denylist.Config{})
	a := newClient(ctx, t)
	session := a.tab(env.Pages.Main + "/secure/home")
	res, err := a.call(session, "Page.getFrameTree", nil)
	if err != nil {
		t.Fatal(err)
	}
	var tree struct {
		FrameTree struct{ Frame struct{ ID string } }
	}
	json.Unmarshal(res, &tree)
	load := func(path string) (status int, body string) {
		t.Helper()
		res, err := a.call(session, "Network.loadNetworkResource", map[string]any{"frameId": tree.FrameTree.Frame.ID, "url": env.Pages.Main + path, "options": map[string]any{"disableCache": true, "includeCredentials": true}})
		if err != nil {
			t.Fatalf("Network.loadNetworkResource %s: %v", path, err)
		}
		var r struct {
			Resource struct {
				Success        bool
				HTTPStatusCode int `json:"httpStatusCode"`
				Stream         string
			}
		}
		json.Unmarshal(res, &r)
		if r.Resource.Stream != "" {
			for {
				res, err := a.call(session, "IO.read", map[string]any{"handle": r.Resource.Stream})
				if err != nil {
					break
				}
				var chunk struct {
					Data          string
					Base64Encoded bool
					EOF           bool
				}
				json.Unmarshal(res, &chunk)
				if chunk.Base64Encoded {
					b, _ := base64.StdEncoding.DecodeString(chunk.Data)
					chunk.Data = string(b)
				}
				body += chunk.Data
				if chunk.EOF {
					break
				}
			}
			a.call(session, "IO.close", map[string]any{"handle": r.Resource.Stream})
		}
		return r.Resource.HTTPStatusCode, body
	}
	if status, body := load("/secure/rotate"); status != 200 || !strings.Contains(body, "rotated") {
		t.Errorf("/secure/rotate through loadNetworkResource: %d %q, want the person's session rotated", status, body)
	}
	if status, body := load("/basic/page"); status != 200 || !strings.Contains(body, "basic ok") {
		t.Errorf("/basic/page through loadNetworkResource: %d %q, want the cached pair sent", status, body)
	}
	if status, body := load("/secure/api"); status != 200 || body != `{"loggedIn":true}` {
		t.Errorf("/secure/api after the rotation: %d %q, want the rotated session", status, body)
	}
	noLeaks(t, "raw client with loadNetworkResource", cr.never(t).scanFrames("client", a.c.Frames()))
}

// TestCredentialsCookieJarWrites: under the default policy, a raw client
// cannot write, clear or read the person's cookies — Network.setCookie(s),
// Storage.setCookies, deletes and clears, Storage.clearDataForOrigin and
// clearDataForStorageKey with cookies (or all), Network.setExtraHTTPHeaders
// with a Cookie — and the person's jar is as it was after each attempt.
func TestCredentialsCookieJarWrites(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	cr := personCredentials(ctx, t)
	setPolicy(t, denylist.Config{})
	a := newClient(ctx, t)
	session := a.tab(env.Pages.Main + "/secure/home")
	planted := map[string]any{"name": "sid", "value": "planted", "url": env.Pages.Main + "/", "httpOnly": true}
	attempts := []struct {
		session, method string
		params          any
	}{
		{session, "Network.setCookie", planted},
		{session, "Network.setCookies", map[string]any{"cookies": []any{planted}}},
		{"", "Storage.setCookies", map[string]any{"cookies": []any{map[string]any{"name": "sid", "value": "planted", "domain": "127.0.0.1", "path": "/"}}}},
		{session, "Network.deleteCookies", map[string]any{"name": "sid", "url": env.Pages.Main + "/"}},
		{session, "Network.clearBrowserCookies", nil},
		{"", "Storage.clearCookies", nil},
		{session, "Storage.clearDataForOrigin", map[string]any{"origin": env.Pages.Main, "storageTypes": "cookies"}},
		{session, "Storage.clearDataForOrigin", map[string]any{"origin": env.Pages.Main, "storageTypes": "all"}},
		{session, "Storage.clearDataForOrigin", map[string]any{"origin": env.Pages.Main, "storageTypes": "local_storage, cookies"}},
		{session, "Storage.clearDataForStorageKey", map[string]any{"storageKey": env.Pages.Main + "/", "storageTypes": "cookies"}},
		{session, "Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{"Cookie": "sid=planted"}}},
		{session, "Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{"cookie": "sid=planted"}}},
		{session, "Network.getCookies", nil},
		{session, "Network.getAllCookies", nil},
		{"", "Storage.getCookies", nil},
	}
	for _, at := range attempts {
		before := cr.p.jar()
		_, err := a.call(at.session, at.method, at.params)
		if err == nil {
			t.Errorf("%s %v: not refused", at.method, at.params)
		}
		// A header set for every request would show in the next one.
		a.start(session, "after", "/secure/api?after-"+at.method)
		if v := a.finish(session, "after"); v != `"{\"loggedIn\":true}"` {
			t.Errorf("after %s %v the site answered %s", at.method, at.params, v)
		}
		if after := cr.p.jar(); strings.Join(after, "\n") != strings.Join(before, "\n") {
			t.Errorf("%s %v changed the person's cookies:\nbefore %v\nafter  %v", at.method, at.params, before, after)
		}
	}
	for _, r := range cr.s.Requests("/secure/api") {
		if strings.Contains(r.Cookie, "planted") {
			t.Errorf("the site got the client's cookie as the person's: %s?%s Cookie: %s", r.Path, r.Query, r.Cookie)
		}
	}
	noLeaks(t, "raw client", cr.never(t).scanFrames("client", a.c.Frames()))
}

// TestCredentialsCookieReadsWithoutPolicy: with no policy at all (every
// method allowed), Storage.getCookies and Network.getCookies answer, but
// the values of HttpOnly cookies are markers.
func TestCredentialsCookieReadsWithoutPolicy(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	cr := personCredentials(ctx, t)
	env.Relay.SetPolicy(nil)
	a := newClient(ctx, t)
	session := a.tab(env.Pages.Main + "/secure/home")
	for _, c := range []struct{ session, method string }{{"", "Storage.getCookies"}, {session, "Network.getCookies"}, {session, "Network.getAllCookies"}} {
		res, err := a.call(c.session, c.method, nil)
		if err != nil {
			t.Errorf("%s without a policy: %v", c.method, err)
			continue
		}
		var r struct {
			Cookies []struct{ Name, Value string }
		}
		json.Unmarshal(res, &r)
		found := false
		for _, ck := range r.Cookies {
			if ck.Name == "sid" {
				found = true
				if ck.Value != marker(cr.sid) {
					t.Errorf("%s: sid=%s, want %s", c.method, ck.Value, marker(cr.sid))
				}
			}
		}
		if !found {
			t.Errorf("%s: no sid cookie in %s", c.method, res)
		}
	}
	noLeaks(t, "raw client without a policy", cr.never(t).scanFrames("client", a.c.Frames()))
}

// TestCredentialsCrossOriginFrame: a frame of the other origin, in its
// own process with its own session, gets an HttpOnly cookie of its own
// (Set-Cookie in its response) and sends it on its next requests; the
// client, with Network on in the frame's session, gets neither value.
func TestCredentialsCrossOriginFrame(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	cr := personCredentials(ctx, t)
	a := newClient(ctx, t)
	session := a.tab(env.Pages.Main + "/secure/login.html?other=" + env.Pages.Other)
	child := a.child(session, env.Pages.Other)
	for _, m := range []string{"Network.enable", "Page.enable", "Runtime.enable"} {
		if _, err := a.call(child, m, nil); err != nil {
			t.Fatalf("%s on the frame: %v", m, err)
		}
	}
	// The frame loads again (a new cookie) and fetches with its cookie.
	if _, err := a.eval(child, "location.reload()"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if v, err := a.eval(child, "fetch('/secure/api').then((r) => r.status)"); err != nil || v != "200" {
		t.Errorf("the frame's fetch: %s %v", v, err)
	}
	settle()
	var sent []string
	for _, r := range cr.s.Requests("/secure/api") {
		if r.Host == host(env.Pages.Other) {
			sent = append(sent, r.Cookie)
		}
	}
	if len(sent) == 0 || !strings.Contains(sent[len(sent)-1], "fsid=") {
		t.Errorf("the frame did not send its own cookie: %q; the person's jar: %v", sent, cr.p.jar())
	}
	var setCookies []string
	for _, m := range a.c.Messages() {
		if m.Method == "Network.responseReceivedExtraInfo" && m.SessionID == child {
			var ev struct{ Headers map[string]string }
			json.Unmarshal(m.Params, &ev)
			if sc, ok := header(ev.Headers, "Set-Cookie"); ok {
				setCookies = append(setCookies, sc)
			}
		}
	}
	if len(setCookies) == 0 {
		t.Error("the frame's session reported no response with Set-Cookie")
	}
	for _, sc := range setCookies {
		if !markerRE.MatchString(sc) {
			t.Errorf("the frame's Set-Cookie: %q, want a marker", sc)
		}
	}
	noLeaks(t, "raw client in a cross-origin frame", cr.never(t).scanFrames("client", a.c.Frames()))
}

// TestCredentialsPasswordInTabURL: the person opened a page of the site
// with the Basic pair in the address (http://user:password@host/), the
// way one signs in to a router. Chrome keeps the pair in the tab's URL,
// which it reports everywhere — target infos, the frame tree, the
// navigation history, Network events. The password is a cached credential
// like the others: it must not reach a client of the relay.
func TestCredentialsPasswordInTabURL(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	p := newPerson(ctx, t)
	s := site(t)
	user, pass := secret("user"), secret("pass")
	s.SetBasic(user, pass)
	u, _ := url.Parse(env.Pages.Main + "/basic/")
	u.User = url.UserPassword(user, pass)
	tid := p.openTab(u.String())
	a := newClient(ctx, t)
	session := a.sessionFor(tid, 5*time.Second)
	if session == "" {
		t.Fatal("the person's tab is not shared")
	}
	for _, m := range []string{"Page.enable", "Network.enable", "Page.getFrameTree", "Page.getNavigationHistory", "Target.getTargetInfo", "Page.reload"} {
		if _, err := a.call(session, m, nil); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	a.call("", "Target.getTargets", nil)
	settle()
	never := secretSet{}
	never.add(t, "the password in the tab's URL", pass)
	noLeaks(t, "raw client on the person's tab", never.scanFrames("client", a.c.Frames()))
}

// siteUse is what the page's use of the site answered (secrets-playwright.mjs).
type siteUse struct {
	API    string `json:"api"`
	Rotate int    `json:"rotate"`
	After  string `json:"after"`
	Basic  int    `json:"basic"`
	WS     string `json:"ws"`
}

// checkSiteUse checks that the site answered as for the person: their
// cookie, the rotated one, the cached Basic pair reached it.
func checkSiteUse(t *testing.T, got siteUse) {
	t.Helper()
	want := siteUse{API: `{"loggedIn":true}`, Rotate: 200, After: `{"loggedIn":true}`, Basic: 200, WS: "logged in"}
	if got != want {
		t.Errorf("the site through the client's page: %+v, want %+v", got, want)
	}
}

// TestCredentialsPlaywrightHeaders: Playwright reads every request's and
// response's headers (allHeaders, headersArray, headerValue) — a page
// load, a fetch, the rotation, a Basic page, a WebSocket, a cross-origin
// frame's requests — and runs raw sessions on the page
// (context.newCDPSession) and the browser (newBrowserCDPSession). The
// credentials read as markers; nothing else of them reaches it.
func TestCredentialsPlaywrightHeaders(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 90*time.Second)
	cr := personCredentials(ctx, t)
	setPolicy(t, denylist.Config{})
	tp := newTap(t)
	var rep struct {
		State string
		Site  siteUse
		Frame string
		Reads []struct {
			URL       string
			Request   map[string]string
			Cookie    *string
			Response  map[string]string
			SetCookie *string
		}
		Raw []struct{ Ev string }
	}
	out, stdout := script(t, tp, "secrets-playwright.mjs", "headers", &rep)
	if rep.State != "logged in" {
		t.Errorf("the page says %q", rep.State)
	}
	checkSiteUse(t, rep.Site)
	if rep.Frame != `{"loggedIn":false}` {
		t.Errorf("the frame's fetch: %q", rep.Frame)
	}
	read := func(path string) (req, resp map[string]string) {
		for _, r := range rep.Reads {
			if strings.Contains(r.URL, path) {
				return r.Request, r.Response
			}
		}
		t.Errorf("Playwright read no headers for %s", path)
		return nil, nil
	}
	req, _ := read("/secure/home")
	if req["cookie"] != marker("sid="+cr.sid) {
		t.Errorf("allHeaders() of the page: cookie %q, want %q", req["cookie"], marker("sid="+cr.sid))
	}
	_, resp := read("/secure/rotate")
	if !markerRE.MatchString(resp["set-cookie"]) {
		t.Errorf("allHeaders() of the rotation: set-cookie %q, want a marker", resp["set-cookie"])
	}
	req, _ = read("/basic/page")
	if want := marker(testenv.BasicHeader(cr.user, cr.pass)); req["authorization"] != want {
		t.Errorf("allHeaders() of the Basic page: authorization %q, want %q", req["authorization"], want)
	}
	_, resp = read("/secure/iframe.html")
	if !markerRE.MatchString(resp["set-cookie"]) {
		t.Errorf("allHeaders() of the frame: set-cookie %q, want a marker", resp["set-cookie"])
	}
	seen := map[string]int{}
	for _, r := range rep.Raw {
		seen[r.Ev]++
	}
	for _, ev := range []string{"Network.requestWillBeSentExtraInfo", "Network.responseReceivedExtraInfo", "Network.webSocketWillSendHandshakeRequest"} {
		if seen[ev] == 0 {
			t.Errorf("the page's CDP session got no %s", ev)
		}
	}
	noLeaksIn(t, cr.never(t), tp, out, stdout)
}

// TestCredentialsPlaywrightRecordings: a trace with snapshots
// (context.tracing) and a HAR (routeFromHAR with update) of the same
// visit: both are built from what the client received, and hold markers,
// never the credentials.
func TestCredentialsPlaywrightRecordings(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 90*time.Second)
	cr := personCredentials(ctx, t)
	setPolicy(t, denylist.Config{})
	tp := newTap(t)
	var rep struct {
		State string
		Site  siteUse
	}
	out, stdout := script(t, tp, "secrets-playwright.mjs", "recordings", &rep)
	checkSiteUse(t, rep.Site)
	b, err := os.ReadFile(filepath.Join(out, "recorded.har"))
	if err != nil {
		t.Fatalf("no HAR: %v", err)
	}
	var har struct {
		Log struct {
			Entries []struct {
				Request struct {
					URL     string
					Headers []fetchHeader
				}
			}
		}
	}
	json.Unmarshal(b, &har)
	found := false
	for _, e := range har.Log.Entries {
		if strings.HasSuffix(e.Request.URL, "/secure/home") {
			for _, h := range e.Request.Headers {
				if strings.EqualFold(h.Name, "cookie") {
					found = true
					if h.Value != marker("sid="+cr.sid) {
						t.Errorf("the HAR's Cookie of the page: %q, want %q", h.Value, marker("sid="+cr.sid))
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("the HAR has no Cookie header for the page (%d entries)", len(har.Log.Entries))
	}
	if _, err := os.Stat(filepath.Join(out, "trace.zip")); err != nil {
		t.Fatalf("no trace: %v", err)
	}
	noLeaksIn(t, cr.never(t), tp, out, stdout)
}

// TestCredentialsPlaywrightRoutes: page.route() handlers do with a
// request what they can with the headers they read. route.continue() with
// allHeaders() sends the person's cookie (the site answers as for the
// person); route.fetch() replays from Node and sends the marker, never the
// cookie; a made-up cookie, another request's marker and a fulfilled
// response with Set-Cookie are refused; the person's jar is as it was.
func TestCredentialsPlaywrightRoutes(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 90*time.Second)
	cr := personCredentials(ctx, t)
	setPolicy(t, denylist.Config{})
	before := cr.p.jar()
	mark := env.Audit.Len()
	tp := newTap(t)
	var rep struct {
		Routes  map[string]string
		Answers map[string]string
	}
	out, stdout := script(t, tp, "secrets-playwright.mjs", "routes", &rep)
	got := func(mode string) []testenv.SiteRequest {
		var out []testenv.SiteRequest
		for _, r := range cr.s.Requests("/secure/api") {
			if r.Query == "mode="+mode {
				out = append(out, r)
			}
		}
		return out
	}
	for _, mode := range []string{"continue-all-headers", "continue"} {
		if rep.Routes[mode] != "ok" || rep.Answers[mode] != `{"loggedIn":true}` {
			t.Errorf("route.continue (%s): %q, the page got %q; want the site logged in", mode, rep.Routes[mode], rep.Answers[mode])
		}
		if rs := got(mode); len(rs) != 1 || rs[0].Cookie != "sid="+cr.sid {
			t.Errorf("route.continue (%s): the site got %+v, want the person's cookie", mode, rs)
		}
	}
	t.Logf("route.continue({headers: request.headers()}), which has no Cookie: %q, the page got %q", rep.Routes["continue-headers"], rep.Answers["continue-headers"])
	// route.fetch() sends the paused request's headers (the marker among
	// them) from Node, with or without allHeaders().
	for _, mode := range []string{"fetch-all-headers", "fetch"} {
		if rs := got(mode); len(rs) != 1 || rs[0].Cookie != marker("sid="+cr.sid) || rs[0].LoggedIn {
			t.Errorf("route.fetch (%s): the site got %+v, want the marker %q", mode, rs, marker("sid="+cr.sid))
		}
	}
	// Playwright drops the Cookie of route.continue's headers itself: a
	// made-up cookie or marker never reaches the relay, and the browser's
	// own cookie goes (checked below: the site never gets them).
	t.Logf("route.continue with a made-up cookie: %q, the page got %q", rep.Routes["continue-made-up-cookie"], rep.Answers["continue-made-up-cookie"])
	t.Logf("route.continue with another request's marker: %q, the page got %q", rep.Routes["continue-other-marker"], rep.Answers["continue-other-marker"])
	// Playwright ignores most errors of Fetch.fulfillRequest: the relay's
	// refusal must still end the request, or the page waits for good.
	t.Logf("route.fulfill with Set-Cookie: %q, the page got %q", rep.Routes["fulfill-set-cookie"], rep.Answers["fulfill-set-cookie"])
	if !audited(mark, func(e relay.Event) bool { return e.Kind == relay.KindDenied && e.Method == "Fetch.fulfillRequest" }) {
		t.Errorf("no refusal of Fetch.fulfillRequest was audited")
	}
	if a := rep.Answers["fulfill-set-cookie"]; a == "no answer" {
		t.Errorf("route.fulfill({headers: {'set-cookie': ...}}) was refused, but Playwright was not told (it ignores the error) and the page's request was left paused: no answer in 3 s")
	} else if !strings.HasPrefix(a, "failed:") {
		t.Errorf("route.fulfill with Set-Cookie: the page got %q, want the request failed", a)
	}
	for _, r := range cr.s.Requests("/secure/api") {
		if strings.Contains(r.Cookie, "made-up") || strings.Contains(r.Cookie, "cdprelay-redacted:5") {
			t.Errorf("the site got a cookie the client made: %s?%s Cookie: %s", r.Path, r.Query, r.Cookie)
		}
	}
	if after := cr.p.jar(); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("the routes changed the person's cookies:\nbefore %v\nafter  %v", before, after)
	}
	noLeaksIn(t, cr.never(t), tp, out, stdout)
}
