package relay

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/secrets"
)

// No event or result a client gets carries the person's cookies or
// credentials; the markers it is shown go back as the real values for
// the request they came from, and nowhere else.
func TestCredentialsRedacted(t *testing.T) {
	h := newHarness(t, config.Config{RedactHeaders: []string{"X-Api-Key"}})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
		if method == "Network.loadNetworkResource" {
			return map[string]any{"resource": map[string]any{"success": true, "headers": map[string]string{"Set-Cookie": "sid=fromload", "Content-Type": "text/plain"}}}, nil
		}
		return fakeext.DefaultHandler(tabID, sid, method, p)
	}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	from := len(c.Messages())
	e.Event(1, "", "Network.requestWillBeSentExtraInfo", map[string]any{
		"requestId":         "R1",
		"associatedCookies": []any{map[string]any{"blockedReasons": []string{}, "cookie": map[string]any{"name": "sid", "value": "httponly-session-value", "domain": "a.example", "httpOnly": true}}},
		"headers":           map[string]string{"Cookie": "sid=httponly-session-value", "Authorization": "Basic cached-basic-creds", "x-api-key": "the-api-key", "Accept": "*/*"},
	})
	e.Event(1, "", "Network.responseReceivedExtraInfo", map[string]any{
		"requestId": "R1", "statusCode": 200,
		"headers":     map[string]string{"set-cookie": "sid=rotated-session-value; HttpOnly"},
		"headersText": "HTTP/1.1 200 OK\r\nSet-Cookie: sid=rotated-session-value; HttpOnly\r\n\r\n",
	})
	e.Event(1, "", "Fetch.requestPaused", map[string]any{
		"requestId": "P1", "resourceType": "Document", "frameId": "F",
		"request": map[string]any{"url": "https://a.example/", "method": "GET", "headers": map[string]string{"Cookie": "sid=httponly-session-value", "Accept": "text/html"}},
	})
	ev, _ := h.event(c, from, "Fetch.requestPaused")
	res := h.call(c, sess, "Network.loadNetworkResource", map[string]any{"url": "https://a.example/x", "frameId": "F", "options": map[string]any{"disableCache": false, "includeCredentials": true}})
	for _, m := range append(c.Messages()[from:], ev) {
		for _, leak := range []string{"httponly-session-value", "cached-basic-creds", "the-api-key", "rotated-session-value", "fromload"} {
			if strings.Contains(string(m.Raw), leak) {
				t.Fatalf("%s reached the client: %s", leak, m.Raw)
			}
		}
	}
	if strings.Contains(string(res), "fromload") || !strings.Contains(string(res), "cdprelay-redacted:") {
		t.Fatalf("loadNetworkResource result %s", res)
	}
	var paused struct {
		Request struct {
			Headers map[string]string `json:"headers"`
		} `json:"request"`
	}
	json.Unmarshal(ev.Params, &paused)
	marker := paused.Request.Headers["Cookie"]
	if marker != "cdprelay-redacted:26" {
		t.Fatalf("the marker: %q", marker)
	}

	// route.continue({headers: request.headers()}): the real value goes
	// back to Chrome.
	before := len(e.Commands())
	h.call(c, sess, "Fetch.continueRequest", map[string]any{"requestId": "P1", "headers": []map[string]string{{"name": "Cookie", "value": marker}, {"name": "Accept", "value": "text/html"}}})
	got := commandsSince(e, before)
	if len(got) != 1 || !strings.Contains(string(got[0].Params), "sid=httponly-session-value") || strings.Contains(string(got[0].Params), "cdprelay-redacted") {
		t.Fatalf("forwarded as %v", got)
	}

	for _, tc := range []struct {
		name   string
		method string
		params any
	}{
		{"a marker of another request", "Fetch.continueRequest", map[string]any{"requestId": "P2", "headers": []map[string]string{{"name": "Cookie", "value": marker}}}},
		{"a cookie the client made up", "Fetch.continueRequest", map[string]any{"requestId": "P3", "headers": []map[string]string{{"name": "cookie", "value": "sid=the-clients-own"}}}},
		{"a response that sets a cookie", "Fetch.fulfillRequest", map[string]any{"requestId": "P4", "responseCode": 200, "responseHeaders": []map[string]string{{"name": "Set-Cookie", "value": "sid=overwritten"}}}},
		{"a continued response that sets one", "Fetch.continueResponse", map[string]any{"requestId": "P5", "responseHeaders": []map[string]string{{"name": "set-cookie", "value": "sid=x"}}}},
		{"binary response headers that set one", "Fetch.fulfillRequest", map[string]any{"requestId": "P6", "responseCode": 200, "binaryResponseHeaders": "U2V0LUNvb2tpZTogc2lkPXgAQ29udGVudC1UeXBlOiB0ZXh0L2h0bWw="}},
	} {
		before := len(e.Commands())
		m := h.callMsg(c, sess, tc.method, tc.params)
		if m.Error == nil {
			t.Errorf("%s: %s", tc.name, m.Raw)
		}
		// Nothing of it reaches the tab; the paused request is failed, so
		// that the page does not wait for it.
		h.waitFor("the paused request is failed", func() bool { return len(commandsSince(e, before)) > 0 })
		got := commandsSince(e, before)
		if len(got) != 1 || !strings.Contains(string(got[0].Params), `"Fetch.failRequest"`) || !strings.Contains(string(got[0].Params), "BlockedByClient") {
			t.Errorf("%s: the tab got %v", tc.name, got)
		}
	}
}

// staticSecrets is a secrets.Store over fixed values.
func staticSecrets(t *testing.T) *secrets.Store {
	t.Setenv("CDPRELAY_TEST_GH", "correct horse battery staple")
	s, err := secrets.New([]secrets.Config{
		{Name: "github", Origins: []string{"https://a.example"}, Env: "CDPRELAY_TEST_GH"},
		{Name: "broken", Origins: []string{"https://a.example"}, Command: []string{"false"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSecretsTypedByReference: the relay types a secret where the focus
// is once the browser says it is a password field of a frame on one of
// the secret's origins, and refuses with the secret's name and never its
// value otherwise. The value goes to the page as an argument of the
// relay's call only: no script the relay runs, and no Input command,
// carries it.
func TestSecretsTypedByReference(t *testing.T) {
	page := newFakePage(1, "https://a.example")
	h := newHarness(t, config.Config{Secrets: staticSecrets(t)})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: page.handle})
	page.e.Store(e)
	c := h.client()
	sess := h.autoAttach(c)[0]
	main := tid(1)
	const value = "correct horse battery staple"

	page.setFocus(passwordField(main))
	before := len(e.Commands())
	h.call(c, sess, "Input.insertText", map[string]any{"text": "{{secret:github}}"})
	if got := page.typedValues(); len(got) != 1 || got[0] != value+"@https://a.example" {
		t.Fatalf("typed %q", got)
	}
	scripts, args := page.ran()
	for _, s := range scripts {
		if strings.Contains(s, value) {
			t.Fatalf("a script the relay ran holds the value: %s", s)
		}
	}
	if !strings.Contains(args[len(args)-1], value) {
		t.Fatalf("the typing's arguments: %s", args[len(args)-1])
	}
	for _, cmd := range commandsSince(e, before) {
		if strings.Contains(string(cmd.Params), `"Input.`) {
			t.Fatalf("typed with an Input command: %s", cmd.Params)
		}
	}
	// Reading it back gives the reference.
	from := len(c.Messages())
	h.call(c, sess, "Runtime.enable", nil)
	e.Event(1, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{map[string]any{"type": "string", "value": "the field holds " + value}}})
	e.Event(1, "", "Network.requestWillBeSent", map[string]any{"requestId": "9", "request": map[string]any{"url": "https://a.example/login", "method": "POST", "postData": "user=me&password=correct+horse+battery+staple", "headers": map[string]string{}}})
	m, _ := h.event(c, from, "Network.requestWillBeSent")
	ev, _ := h.event(c, from, "Runtime.consoleAPICalled")
	for _, raw := range []string{string(m.Raw), string(ev.Raw)} {
		if strings.Contains(raw, "correct") || !strings.Contains(raw, "{{secret:github}}") {
			t.Fatalf("after the fill the client got %s", raw)
		}
	}

	// A frame of another origin that the page's script may enter (the
	// relay knows its origin from Chrome), one it may not, a text field,
	// no focus, a focus that moves as the value would go in, an unknown
	// secret, a broken source and a reference among other text are
	// refused, with the secret's name and never its value.
	evil := "EVILFRAME"
	page.mu.Lock()
	page.frames[evil] = "https://evil.example"
	page.ctx(evil, "", false)
	page.mu.Unlock()
	into := func(frame string, enter bool, n *fakeNode) []*fakeNode {
		return []*fakeNode{{id: 7, name: "IFRAME", holds: frame, enter: enter, in: main}, n}
	}
	moveFocus := func(p *fakePage) { p.focus = []*fakeNode{textField(main)} }
	for _, tc := range []struct {
		name    string
		focus   []*fakeNode
		before  func(*fakePage)
		method  string
		params  any
		message string
	}{
		{"another origin's frame", into(evil, true, passwordField(evil)), nil, "Input.insertText", map[string]any{"text": "{{secret:github}}"}, "https://evil.example"},
		{"a frame the page may not enter", into(evil, false, passwordField(evil)), nil, "Input.insertText", map[string]any{"text": "{{secret:github}}"}, "another origin"},
		{"a key event", into(evil, true, passwordField(evil)), nil, "Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "text": "{{secret:github}}"}, "evil"},
		{"fillSecret", into(evil, true, passwordField(evil)), nil, "CDPRelay.fillSecret", map[string]any{"name": "github"}, "evil"},
		{"a text field", []*fakeNode{textField(main)}, nil, "Input.insertText", map[string]any{"text": "{{secret:github}}"}, "not a password field"},
		{"no focus", nil, nil, "Input.insertText", map[string]any{"text": "{{secret:github}}"}, "no field has the focus"},
		{"the focus moves", []*fakeNode{passwordField(main)}, moveFocus, "Input.insertText", map[string]any{"text": "{{secret:github}}"}, "the focus moved"},
		{"an unknown secret", []*fakeNode{passwordField(main)}, nil, "Input.insertText", map[string]any{"text": "{{secret:nope}}"}, "no secret named nope"},
		{"a failing source", []*fakeNode{passwordField(main)}, nil, "Input.insertText", map[string]any{"text": "{{secret:broken}}"}, "command failed"},
		{"a reference among text", []*fakeNode{passwordField(main)}, nil, "Input.insertText", map[string]any{"text": "x {{secret:github}}"}, "whole text"},
	} {
		page.setFocus(tc.focus...)
		page.mu.Lock()
		page.beforeType = tc.before
		page.mu.Unlock()
		typed := len(page.typedValues())
		m := h.callMsg(c, sess, tc.method, tc.params)
		if m.Error == nil || !strings.Contains(m.Error.Message, tc.message) || strings.Contains(string(m.Raw), "correct horse") {
			t.Errorf("%s: %s", tc.name, m.Raw)
		}
		if got := page.typedValues(); len(got) != typed {
			t.Errorf("%s: typed %q", tc.name, got[typed:])
		}
	}
	page.mu.Lock()
	page.beforeType = nil
	page.mu.Unlock()
	// CDPRelay.fillSecret types it too.
	page.setFocus(passwordField(main))
	h.call(c, sess, "CDPRelay.fillSecret", map[string]any{"name": "github"})
	if got := page.typedValues(); len(got) != 2 || got[1] != value+"@https://a.example" {
		t.Fatalf("fillSecret typed %q", got)
	}
}

// A paused response's own Set-Cookie goes back to Chrome as it came when
// the client continues the response with the markers it was shown
// (route.fulfill({response, headers: response.headers()}) through
// Fetch.continueResponse, or a response header edited), in the order
// shown; a marker of another response, the request's Cookie put in the
// response, a Set-Cookie the client makes up and the response's own
// Set-Cookie in a response the client makes are refused.
func TestCredentialsContinueResponse(t *testing.T) {
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	type header struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	// pause pauses request id at the response stage and returns the
	// response headers and the request's Cookie as the client saw them.
	pause := func(id string, setCookies ...string) ([]header, string) {
		t.Helper()
		hs := []header{{"Content-Type", "text/html"}}
		for _, v := range setCookies {
			hs = append(hs, header{"Set-Cookie", v})
		}
		from := len(c.Messages())
		e.Event(1, "", "Fetch.requestPaused", map[string]any{
			"requestId": id, "resourceType": "Document", "frameId": "F",
			"request":            map[string]any{"url": "https://a.example/", "method": "GET", "headers": map[string]string{"Cookie": "sid=httponly-session-value"}},
			"responseStatusCode": 200, "responseHeaders": hs,
		})
		for {
			m, i := h.event(c, from, "Fetch.requestPaused")
			var p struct {
				RequestID string `json:"requestId"`
				Request   struct {
					Headers map[string]string `json:"headers"`
				} `json:"request"`
				ResponseHeaders []header `json:"responseHeaders"`
			}
			json.Unmarshal(m.Params, &p)
			if p.RequestID == id {
				for _, v := range setCookies {
					if strings.Contains(string(m.Raw), v) {
						t.Fatalf("%s reached the client: %s", v, m.Raw)
					}
				}
				return p.ResponseHeaders, p.Request.Headers["Cookie"]
			}
			from = i + 1
		}
	}
	// forwarded returns the params of the one command the tab got since
	// before.
	forwarded := func(before int) (string, json.RawMessage) {
		t.Helper()
		got := commandsSince(e, before)
		if len(got) != 1 {
			t.Fatalf("the tab got %v", got)
		}
		var args []json.RawMessage
		if err := json.Unmarshal(got[0].Params, &args); err != nil || len(args) < 3 {
			t.Fatalf("forwarded as %s", got[0].Params)
		}
		var method string
		json.Unmarshal(args[1], &method)
		return method, args[2]
	}

	// Two values of the same length: each marker takes the value it was
	// shown for, by its place.
	shown, _ := pause("P1", "sid=rotated-session-value; Path=/; HttpOnly", "aaa=111; Path=/", "bbb=222; Path=/")
	before := len(e.Commands())
	edited := append([]header{{"X-Edited", "1"}}, shown...)
	h.call(c, sess, "Fetch.continueResponse", map[string]any{"requestId": "P1", "responseCode": 200, "responseHeaders": edited})
	method, p := forwarded(before)
	var sent struct {
		ResponseHeaders []header `json:"responseHeaders"`
	}
	json.Unmarshal(p, &sent)
	want := []header{{"X-Edited", "1"}, {"Content-Type", "text/html"}, {"Set-Cookie", "sid=rotated-session-value; Path=/; HttpOnly"}, {"Set-Cookie", "aaa=111; Path=/"}, {"Set-Cookie", "bbb=222; Path=/"}}
	if method != "Fetch.continueResponse" || toJSONString(sent.ResponseHeaders) != toJSONString(want) {
		t.Fatalf("forwarded %s %s", method, p)
	}

	// The response is settled: its markers do not work twice.
	other, _ := pause("P2", "other=another-response-value")
	for _, tc := range []struct {
		name   string
		method string
		params func() any
	}{
		{"a settled response's markers", "Fetch.continueResponse", func() any {
			return map[string]any{"requestId": "P1", "responseHeaders": shown}
		}},
		{"another response's marker", "Fetch.continueResponse", func() any {
			shown, _ := pause("P4", "x=1")
			return map[string]any{"requestId": "P4", "responseHeaders": append(shown, other[1])}
		}},
		{"the request's Cookie in the response", "Fetch.continueResponse", func() any {
			shown, cookie := pause("P5")
			return map[string]any{"requestId": "P5", "responseHeaders": append(shown, header{"Cookie", cookie})}
		}},
		{"a marker shown once, sent twice", "Fetch.continueResponse", func() any {
			shown, _ := pause("P6", "sid=rotated-session-value; HttpOnly")
			return map[string]any{"requestId": "P6", "responseHeaders": append(shown, shown[1])}
		}},
		{"a Set-Cookie the client makes up", "Fetch.continueResponse", func() any {
			shown, _ := pause("P7", "x=1")
			return map[string]any{"requestId": "P7", "responseHeaders": append(shown, header{"Set-Cookie", "sid=the-clients-own"})}
		}},
		{"the response's own Set-Cookie in a response the client makes", "Fetch.fulfillRequest", func() any {
			shown, _ := pause("P8", "sid=rotated-session-value; HttpOnly")
			return map[string]any{"requestId": "P8", "responseCode": 200, "responseHeaders": shown, "body": ""}
		}},
	} {
		params := tc.params()
		before := len(e.Commands())
		m := h.callMsg(c, sess, tc.method, params)
		if m.Error == nil {
			t.Errorf("%s: %s", tc.name, m.Raw)
		}
		h.waitFor("the paused request is failed", func() bool { return len(commandsSince(e, before)) > 0 })
		if method, p := forwarded(before); method != "Fetch.failRequest" || !strings.Contains(string(p), "BlockedByClient") {
			t.Errorf("%s: the tab got %s %s", tc.name, method, p)
		}
	}
}

// A reload's redact_headers are in force for the next message.
func TestRedactHeadersReload(t *testing.T) {
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	h.autoAttach(c)
	send := func(value string) cdptest.Message {
		from := len(c.Messages())
		e.Event(1, "", "Network.requestWillBeSentExtraInfo", map[string]any{"requestId": "R1", "associatedCookies": []any{}, "headers": map[string]string{"X-Csrf-Token": value}})
		m, _ := h.event(c, from, "Network.requestWillBeSentExtraInfo")
		return m
	}
	if m := send("before-the-reload"); !strings.Contains(string(m.Raw), "before-the-reload") {
		t.Fatalf("a header no one named: %s", m.Raw)
	}
	h.srv.SetRedactHeaders([]string{"x-csrf-token"})
	if m := send("after-the-reload"); strings.Contains(string(m.Raw), "after-the-reload") || !strings.Contains(string(m.Raw), "cdprelay-redacted:16") {
		t.Fatalf("a header named by the reload: %s", m.Raw)
	}
}

// TestStopWhileTyping: a person's Stop that comes while the relay types a
// secret answers the typing command once, as stopped, and says nothing
// else to the client: the line the typing occupies holds no command of
// the client's to answer.
func TestStopWhileTyping(t *testing.T) {
	page := newFakePage(1, "https://a.example")
	h := newHarness(t, config.Config{Secrets: staticSecrets(t)})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: page.handle})
	page.e.Store(e)
	c := h.client()
	sess := h.autoAttach(c)[0]
	page.setFocus(passwordField(tid(1)))
	in := h.srv.Default()
	page.mu.Lock()
	page.beforeType = func(*fakePage) {
		go in.Stop("person")
		for stopped, _ := in.Stopped(); !stopped; stopped, _ = in.Stopped() {
			time.Sleep(time.Millisecond)
		}
	}
	page.mu.Unlock()
	from := len(c.Messages())
	if m := h.callMsg(c, sess, "Input.insertText", map[string]any{"text": "{{secret:github}}"}); refusal(m) != api.MsgStopped {
		t.Errorf("the typing, stopped: %s", m.Raw)
	}
	// One more command, answered after anything the Stop said.
	if m := h.callMsg(c, sess, "DOM.getDocument", nil); refusal(m) != api.MsgStopped {
		t.Errorf("a command while stopped: %s", m.Raw)
	}
	// Messages holds what answered no command of the client's.
	for _, m := range c.Messages()[from:] {
		if m.ID != nil {
			t.Errorf("a reply to no command of the client's: %s", m.Raw)
		}
	}
}
