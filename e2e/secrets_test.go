package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
	"github.com/cdprelay/cdprelay/secrets"
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
	env.Relay.SetPolicy(nil) // no policy at all: not even the default rules
	t.Cleanup(resetPolicy)
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
	// Discovery lists the tab too.
	base := env.HTTPEndpoint()
	if direct() {
		base = "http://" + strings.TrimPrefix(strings.SplitN(env.BrowserWS, "/devtools", 2)[0], "ws://")
	}
	resp, err := http.Get(base + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	list, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	noLeaks(t, "/json/list", never.scan("/json/list", list))
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

const ref = "{{secret:site}}"

// TestSecretsPlaywrightLogin: Playwright logs in with
// page.fill('#password', '{{secret:site}}') and a click. The relay types
// the password (the site logs the person in, the page posted the real
// value), and from then on the client sees the reference wherever the
// value would be: inputValue(), evaluate(), a page that echoes it, the
// posted body (request.postData(), Network.getRequestPostData). The audit
// log says which secret was typed where, never the value.
func TestSecretsPlaywrightLogin(t *testing.T) {
	requireEnv(t)
	s := site(t)
	pw := siteSecret(t, s)
	mark := env.Audit.Len()
	tp := newTap(t)
	var rep struct {
		InputValue, Evaluated, Echoed, State string
		PostData, EchoPage                   string
		GetRequestPostData                   json.RawMessage
	}
	out, stdout := script(t, tp, "secrets-playwright.mjs", "login", &rep)
	if rep.State != "logged in" || !loggedInWith(s, pw) {
		t.Errorf("the login with the secret: the page says %q; the site got the password: %v", rep.State, loggedInWith(s, pw))
	}
	for what, v := range map[string]string{"inputValue()": rep.InputValue, "evaluate(el => el.value)": rep.Evaluated, "the echo page": rep.EchoPage} {
		if v != ref {
			t.Errorf("%s after the fill: %q, want %q", what, v, ref)
		}
	}
	if !strings.Contains(rep.Echoed, ref) {
		t.Errorf("a fetch that echoes the field: %q, want the reference", rep.Echoed)
	}
	if !strings.Contains(rep.PostData, ref) || !strings.Contains(string(rep.GetRequestPostData), ref) {
		t.Errorf("the posted body: request.postData() %q, Network.getRequestPostData %s; want the reference", rep.PostData, rep.GetRequestPostData)
	}
	echoed := false
	for _, r := range s.Requests("/secure/echo") {
		if f, _ := url.ParseQuery(r.Body); f.Get("password") == pw {
			echoed = true
		}
	}
	if !echoed {
		t.Error("the page did not post the real value to the echo page: the field did not hold it")
	}
	if !audited(mark, func(e relay.Event) bool {
		return e.Kind == relay.KindSecret && e.Outcome == relay.OutcomeOK && e.Detail == "secret site typed on "+env.Pages.Main
	}) {
		t.Errorf("no audit record %q", "secret site typed on "+env.Pages.Main)
	}
	set := secretSet{}
	set.add(t, "the secret", pw)
	auditClean(t, mark, set)
	noLeaksIn(t, set, tp, out, stdout)
}

// TestSecretsPlaywrightRefused: the same fill on the other origin, into
// the other origin's frame on an allowed page, and a reference among
// other text are refused, with an error that names the secret and the
// origin and never the value; nothing is typed, and the other origin's
// server never gets the value.
func TestSecretsPlaywrightRefused(t *testing.T) {
	requireEnv(t)
	s := site(t)
	pw := siteSecret(t, s)
	mark := env.Audit.Len()
	tp := newTap(t)
	var rep struct {
		OtherOrigin, OtherOriginValue string
		Frame, FrameValue             string
		Partial, PartialValue         string
		Console                       []string
	}
	out, stdout := script(t, tp, "secrets-playwright.mjs", "refused", &rep)
	// Playwright retries a fill whose typing is refused until its timeout,
	// so its error is the timeout's; the relay's reason, naming the secret
	// and the origin, is a warning on the page's console.
	said := func(parts ...string) bool {
		for _, m := range append([]string{rep.OtherOrigin, rep.Frame}, rep.Console...) {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(m, p)
			}
			if all {
				return true
			}
		}
		return false
	}
	if rep.OtherOrigin == "typed" || !said("site", env.Pages.Other) {
		t.Errorf("fill on %s: %q, console %q: want an error or warning naming the secret and the origin", env.Pages.Other, rep.OtherOrigin, rep.Console)
	}
	if rep.Frame == "typed" || !said("site", "another origin") {
		t.Errorf("fill in the frame of %s: %q, console %q: want an error or warning naming the secret", env.Pages.Other, rep.Frame, rep.Console)
	}
	if rep.Partial == "typed" {
		t.Errorf("a reference among other text: typed")
	}
	for what, v := range map[string]string{"the other origin's field": rep.OtherOriginValue, "the frame's field": rep.FrameValue, "the field after the partial reference": rep.PartialValue} {
		if v != "" {
			t.Errorf("%s holds %q, want nothing typed", what, v)
		}
	}
	for _, r := range s.Requests("/secure/") {
		if r.Host == host(env.Pages.Other) && strings.Contains(r.Body, pw) {
			t.Errorf("%s received the secret: %s %s", env.Pages.Other, r.Method, r.Path)
		}
	}
	if !audited(mark, func(e relay.Event) bool {
		return e.Kind == relay.KindSecret && e.Outcome == relay.OutcomeDenied && strings.Contains(e.Detail, env.Pages.Other)
	}) {
		t.Errorf("no audit record of the refusal on %s", env.Pages.Other)
	}
	set := secretSet{}
	set.add(t, "the secret", pw)
	auditClean(t, mark, set)
	noLeaksIn(t, set, tp, out, stdout)
}

// field reads a field of the page of session.
func (a *attacker) field(session, id string) string {
	a.t.Helper()
	v, err := a.eval(session, "document.getElementById("+quote(id)+").value")
	if err != nil {
		a.t.Fatal(err)
	}
	var s string
	json.Unmarshal([]byte(v), &s)
	return s
}

// focus focuses a field of the page of session, emptied.
func (a *attacker) focus(session, id string) {
	a.t.Helper()
	if _, err := a.eval(session, "(() => { const el = document.getElementById("+quote(id)+"); el.value = ''; el.focus(); })()"); err != nil {
		a.t.Fatal(err)
	}
}

// TestSecretsTypedByReference: a raw client types the secret on its
// origin in each way the relay offers — Input.insertText,
// Input.dispatchKeyEvent with the reference as its text, and the relay's
// own CDPRelay.fillSecret — and the form, posted, logs the person in.
// Read back as it is, as JSON, URL-encoded (encodeURIComponent, a form's
// encoding) and as base64, the field shows the reference.
func TestSecretsTypedByReference(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	s := site(t)
	pw := siteSecret(t, s)
	mark := env.Audit.Len()
	a := newClient(ctx, t)
	session := a.tab(env.Pages.Main + "/secure/login.html")
	for _, c := range []struct {
		how    string
		method string
		params map[string]any
	}{
		{"Input.insertText", "Input.insertText", map[string]any{"text": ref}},
		{"Input.dispatchKeyEvent", "Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "text": ref}},
		{"CDPRelay.fillSecret", "CDPRelay.fillSecret", map[string]any{"name": "site"}},
	} {
		a.focus(session, "password")
		if _, err := a.call(session, c.method, c.params); err != nil {
			t.Errorf("%s: %v", c.how, err)
			continue
		}
		if v := a.field(session, "password"); v != ref {
			t.Errorf("after %s the field reads %q, want %q", c.how, v, ref)
		}
	}
	v, err := a.eval(session, `(() => {
  const v = document.getElementById('password').value;
  return {raw: v, json: JSON.stringify({v}), uri: encodeURIComponent(v), form: new URLSearchParams({v}).toString(), base64: btoa(v), html: new Option(v).innerHTML};
})()`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the field read back: %s", v)
	// The form, posted as it is: the site gets the real password.
	if _, err := a.eval(session, "document.getElementById('login').requestSubmit()"); err != nil {
		t.Fatal(err)
	}
	a.waitLoaded(session, env.Pages.Main+"/secure/login")
	if !loggedInWith(s, pw) {
		t.Error("the form, posted, did not log in: the site did not get the password")
	}
	n := 0
	for _, e := range env.Audit.Since(mark) {
		if e.Kind == relay.KindSecret && e.Detail == "secret site typed on "+env.Pages.Main {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d audit records %q, want 3", n, "secret site typed on "+env.Pages.Main)
	}
	set := secretSet{}
	set.add(t, "the secret", pw)
	auditClean(t, mark, set)
	noLeaks(t, "raw client", set.scanFrames("client", a.c.Frames()))
}

// TestSecretsRefusals: where the relay will not type the secret, it says
// why, naming the secret and the origin, never the value, and types
// nothing: another origin's page, a cross-origin frame (from the page's
// session and from the frame's own), no field focused, a text field (not a
// password field), a reference among
// other text, an unknown secret, no secrets at all.
func TestSecretsRefusals(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	s := site(t)
	pw := siteSecret(t, s)
	mark := env.Audit.Len()
	a := newClient(ctx, t)
	main := a.tab(env.Pages.Main + "/secure/login.html?other=" + env.Pages.Other)
	frame := a.child(main, env.Pages.Other)
	if _, err := a.call(frame, "Runtime.enable", nil); err != nil {
		t.Fatal(err)
	}
	other := a.tab(env.Pages.Other + "/secure/login.html")
	refused := func(what, session, method string, params map[string]any, want ...string) {
		t.Helper()
		_, err := a.call(session, method, params)
		if err == nil {
			t.Errorf("%s: typed", what)
			return
		}
		t.Logf("%s: %v", what, err)
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", what, err, w)
			}
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("%s: the error holds the value", what)
		}
	}
	insert := map[string]any{"text": ref}
	a.focus(other, "password")
	refused("the other origin", other, "Input.insertText", insert, "site", env.Pages.Other, env.Pages.Main)
	refused("the other origin, fillSecret", other, "CDPRelay.fillSecret", map[string]any{"name": "site"}, "site", env.Pages.Other)
	if v := a.field(other, "password"); v != "" {
		t.Errorf("the other origin's field holds %q", v)
	}
	a.focus(frame, "inner")
	if _, err := a.eval(main, "document.getElementById('f').focus()"); err != nil {
		t.Fatal(err)
	}
	refused("the frame, from the page's session", main, "Input.insertText", insert, "site")
	refused("the frame, from its own session", frame, "Input.insertText", insert, "site", env.Pages.Other)
	if v := a.field(frame, "inner"); v != "" {
		t.Errorf("the frame's field holds %q", v)
	}
	if _, err := a.eval(main, "document.activeElement.blur()"); err != nil {
		t.Fatal(err)
	}
	refused("no field focused", main, "Input.insertText", insert, "site")
	// A text field on the secret's own origin would show the value in
	// every screenshot: a secret goes into password fields only.
	a.focus(main, "user")
	refused("a text field", main, "Input.insertText", insert, "site", "not a password field")
	refused("a text field, fillSecret", main, "CDPRelay.fillSecret", map[string]any{"name": "site"}, "site", "not a password field")
	if v := a.field(main, "user"); v != "" {
		t.Errorf("the text field holds %q", v)
	}
	a.focus(main, "password")
	refused("a reference among other text", main, "Input.insertText", map[string]any{"text": "x" + ref}, "{{secret:")
	refused("an unknown secret", main, "Input.insertText", map[string]any{"text": "{{secret:nope}}"}, "nope")
	refused("fillSecret without a name", main, "CDPRelay.fillSecret", map[string]any{}, "name")
	env.Relay.SetSecrets(nil)
	refused("no secrets", main, "Input.insertText", insert, "secret")
	if v := a.field(main, "password"); v != "" {
		t.Errorf("the field holds %q after the refusals", v)
	}
	for _, r := range s.Requests("/secure/") {
		if strings.Contains(r.Body, pw) {
			t.Errorf("%s received the secret: %s %s", r.Host, r.Method, r.Path)
		}
	}
	set := secretSet{}
	set.add(t, "the secret", pw)
	auditClean(t, mark, set)
	noLeaks(t, "raw client", set.scanFrames("client", a.c.Frames()))
}

// TestSecretsSources: a secret read from a file or from a command (a
// secret manager's CLI) is typed like one from the environment; a command
// that fails, one that cannot run and an unset variable give an error
// that names the secret and what failed, and type nothing.
func TestSecretsSources(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	s := site(t)
	a := newClient(ctx, t)
	session := a.tab(env.Pages.Main + "/secure/login.html")
	fromCommand, fromFile := secret("cmd pw "), secret("file pw ")
	file := filepath.Join(t.TempDir(), "site.secret")
	if err := os.WriteFile(file, []byte(fromFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Unsetenv("CDPRELAY_E2E_UNSET")
	main := []string{env.Pages.Main}
	useSecrets(t,
		secrets.Config{Name: "cmd", Origins: main, Command: []string{"printf", "%s\n", fromCommand}},
		secrets.Config{Name: "file", Origins: main, File: file},
		secrets.Config{Name: "failing", Origins: main, Command: []string{"sh", "-c", "echo oops >&2; exit 3"}},
		secrets.Config{Name: "missing", Origins: main, Command: []string{"/nonexistent/secret-tool", "get"}},
		secrets.Config{Name: "unset", Origins: main, Env: "CDPRELAY_E2E_UNSET"},
	)
	for _, c := range []struct{ name, value string }{{"cmd", fromCommand}, {"file", fromFile}} {
		s.SetPassword(c.value)
		a.navigate(session, env.Pages.Main+"/secure/login.html")
		a.focus(session, "password")
		if _, err := a.call(session, "CDPRelay.fillSecret", map[string]any{"name": c.name}); err != nil {
			t.Errorf("secret %s: %v", c.name, err)
			continue
		}
		if _, err := a.eval(session, "document.getElementById('login').requestSubmit()"); err != nil {
			t.Fatal(err)
		}
		a.waitLoaded(session, env.Pages.Main+"/secure/login")
		if !loggedInWith(s, c.value) {
			t.Errorf("secret %s did not log in", c.name)
		}
	}
	a.navigate(session, env.Pages.Main+"/secure/login.html")
	for _, c := range []struct{ name, want string }{
		{"failing", "exit status 3"},
		{"missing", "could not run"},
		{"unset", "CDPRELAY_E2E_UNSET"},
	} {
		a.focus(session, "password")
		_, err := a.call(session, "Input.insertText", map[string]any{"text": "{{secret:" + c.name + "}}"})
		if err == nil || !strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("secret %s: %v, want an error naming it and saying %q", c.name, err, c.want)
		} else {
			t.Logf("secret %s: %v", c.name, err)
		}
		if v := a.field(session, "password"); v != "" {
			t.Errorf("secret %s: the field holds %q", c.name, v)
		}
	}
	set := secretSet{}
	set.add(t, "the command's secret", fromCommand)
	set.add(t, "the file's secret", fromFile)
	noLeaks(t, "raw client", set.scanFrames("client", a.c.Frames()))
}

// TestSecretsPuppeteer: Puppeteer intercepts requests and continues them
// with the headers request.headers() gave (the site stays logged in, the
// rotation works), and types the secret with keyboard.sendCharacter (the
// login works, the field reads the reference). page.type sends one key
// per character, so it types the reference's characters, not the secret.
func TestSecretsPuppeteer(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 90*time.Second)
	cr := personCredentials(ctx, t)
	pw := siteSecret(t, cr.s)
	setPolicy(t, denylist.Config{})
	tp := newTap(t)
	var rep struct {
		State, API, After, Value, Login, Typed string
		Rotate                                 int
		Reads                                  []struct {
			URL      string
			Headers  map[string]string
			Response map[string]string
		}
	}
	out, stdout := script(t, tp, "secrets-puppeteer.mjs", "all", &rep)
	if rep.State != "logged in" || rep.API != `{"loggedIn":true}` || rep.Rotate != 200 || rep.After != `{"loggedIn":true}` {
		t.Errorf("the site through Puppeteer's interception: page %q, api %q, rotation %d, after %q", rep.State, rep.API, rep.Rotate, rep.After)
	}
	for _, r := range cr.s.Requests("/secure/api") {
		if r.Query == "puppeteer" && r.Cookie != "sid="+cr.sid {
			t.Errorf("request.continue({headers: request.headers()}): the site got Cookie %q, want the person's", r.Cookie)
		}
	}
	for _, r := range rep.Reads {
		c, ok := r.Headers["cookie"]
		if ok && !markerRE.MatchString(c) {
			t.Errorf("request.headers() of %s: cookie %q", r.URL, c)
		}
		if strings.Contains(r.URL, "/secure/api?puppeteer") && r.Headers != nil {
			t.Logf("request.headers() of %s: cookie %q (present: %v)", r.URL, c, ok)
		}
	}
	if rep.Value != ref || rep.Login != "logged in" || !loggedInWith(cr.s, pw) {
		t.Errorf("keyboard.sendCharacter(%q): the field reads %q, the site says %q", ref, rep.Value, rep.Login)
	}
	if rep.Typed != ref {
		t.Errorf("page.type(%q) typed %q", ref, rep.Typed)
	}
	set := cr.never(t)
	set.add(t, "the secret", pw)
	noLeaksIn(t, set, tp, out, stdout)
}

// TestSecretsFocusRace: the relay looks where the focus is, then types.
// A page that moves the focus between the allowed field and a frame of
// another origin (here a script the client put in the page) must never
// get the secret typed into that frame, which would send it home.
func TestSecretsFocusRace(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	s := site(t)
	pw := siteSecret(t, s)
	a := newClient(ctx, t)
	main := a.tab(env.Pages.Main + "/secure/login.html?other=" + env.Pages.Other)
	frame := a.child(main, env.Pages.Other)
	if _, err := a.call(frame, "Runtime.enable", nil); err != nil {
		t.Fatal(err)
	}
	a.focus(frame, "inner")
	if _, err := a.eval(main, `(() => {
  const pw = document.getElementById('password'), f = document.getElementById('f');
  pw.focus();
  let n = 0;
  const mc = new MessageChannel();
  mc.port1.onmessage = () => { (n++ % 2 ? pw : f).focus(); if (!window.stopFlipping) mc.port2.postMessage(0); };
  mc.port2.postMessage(0);
})()`); err != nil {
		t.Fatal(err)
	}
	typed := 0
	for i := 0; i < 60; i++ {
		if _, err := a.call(main, "Input.insertText", map[string]any{"text": ref}); err == nil {
			typed++
		}
	}
	a.eval(main, "window.stopFlipping = true")
	settle()
	t.Logf("typed %d times of 60", typed)
	for _, r := range s.Requests("/secure/sink") {
		if r.Host == host(env.Pages.Other) && strings.Contains(r.Body, pw) {
			t.Fatalf("the secret for %s was typed into the frame of %s, which sent it to its server (%d bytes)", env.Pages.Main, env.Pages.Other, len(r.Body))
		}
	}
}
