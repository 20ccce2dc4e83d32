package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

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
