package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/testenv"
	"github.com/cdprelay/cdprelay/relay"
	"github.com/cdprelay/cdprelay/secrets"
)

// The credential and secret tests' harness. A client of the relay must
// never receive the person's HttpOnly cookies, cached HTTP credentials or
// a secret typed by reference: every byte it receives is recorded (a tap
// in front of the relay for node clients, cdptest's Frames for raw ones)
// and searched for each value in the forms it can take in a message.
//
// CDPRELAY_E2E_DIRECT=1 points the clients at the browser's own debugging
// port instead of the relay: every test must then fail, which shows that
// it would catch the protection missing.

// direct reports whether the clients go to the browser's own port.
func direct() bool { return os.Getenv("CDPRELAY_E2E_DIRECT") != "" }

// clientWS is the browser WebSocket a raw client of the test dials.
func clientWS() string {
	if direct() {
		return env.BrowserWS
	}
	return env.WSEndpoint()
}

// tap is a CDP endpoint in front of the relay (or, direct, the browser)
// that keeps every frame it passes to the client.
type tap struct {
	addr   string
	target string // host:port behind the tap
	srv    *http.Server

	mu     sync.Mutex
	frames [][]byte // guarded by mu: what the client received, in order
}

// newTap starts a tap for the rest of the test.
func newTap(t *testing.T) *tap {
	t.Helper()
	target := env.Addr
	if direct() {
		u, err := url.Parse(env.BrowserWS)
		if err != nil {
			t.Fatal(err)
		}
		target = u.Host
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &tap{addr: ln.Addr().String(), target: target}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.Out.URL.Scheme = "http"
		r.Out.URL.Host = target
		r.Out.Host = tp.addr // discovery answers with the tap's address
	}}
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }, ReadBufferSize: 1 << 16, WriteBufferSize: 1 << 16}
	tp.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !websocket.IsWebSocketUpgrade(r) {
			proxy.ServeHTTP(w, r)
			return
		}
		h := http.Header{}
		h.Set("Host", tp.addr)
		d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, ReadBufferSize: 1 << 16, WriteBufferSize: 1 << 16}
		back, resp, err := d.Dial("ws://"+target+r.URL.RequestURI(), nil)
		if err != nil {
			code := http.StatusBadGateway
			if resp != nil {
				code = resp.StatusCode
			}
			http.Error(w, err.Error(), code)
			return
		}
		front, err := up.Upgrade(w, r, nil)
		if err != nil {
			back.Close()
			return
		}
		done := make(chan struct{}, 2)
		pump := func(from, to *websocket.Conn, keep bool) {
			defer func() { done <- struct{}{} }()
			for {
				mt, b, err := from.ReadMessage()
				if err != nil {
					to.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
					return
				}
				if keep {
					tp.mu.Lock()
					tp.frames = append(tp.frames, b)
					tp.mu.Unlock()
				}
				if err := to.WriteMessage(mt, b); err != nil {
					return
				}
			}
		}
		go pump(front, back, false)
		go pump(back, front, true)
		<-done
		front.Close()
		back.Close()
		<-done
	})}
	go tp.srv.Serve(ln)
	t.Cleanup(func() { tp.srv.Close() })
	return tp
}

// endpoint is the tap's http:// endpoint, for connectOverCDP and
// puppeteer.connect({browserURL}).
func (tp *tap) endpoint() string { return "http://" + tp.addr }

// Frames returns what the client received so far.
func (tp *tap) Frames() [][]byte {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([][]byte(nil), tp.frames...)
}

// secretSet names the values that must never reach a client.
type secretSet map[string]string

// add names a value; values shorter than 6 bytes are refused (they could
// turn up by chance).
func (s secretSet) add(t *testing.T, label, v string) {
	t.Helper()
	if len(v) < 6 {
		t.Fatalf("secret %s is too short to search for: %q", label, v)
	}
	s[label] = v
}

// leak is one value found where it must not be.
type leak struct {
	label, form, where, excerpt string
}

func (l leak) String() string {
	return fmt.Sprintf("%s (%s) in %s: …%s…", l.label, l.form, l.where, l.excerpt)
}

// textForms are the forms a value takes in text: as it is, escaped for
// JSON (JSON.stringify's and encoding/json's), URL-encoded in every style
// a browser or a client uses (form bodies, encodeURIComponent, Go's
// query and path escapes), and as HTML text.
func textForms(v string) []needle {
	j, _ := json.Marshal(v)
	return []needle{
		{form: "raw", b: []byte(v)},
		{form: "json", b: j[1 : len(j)-1]},
		{form: "json-noescape", b: []byte(strings.Trim(quote(v), `"`))},
		{form: "query-escape", b: []byte(url.QueryEscape(v))},
		{form: "path-escape", b: []byte(url.PathEscape(v))},
		{form: "uri-component", b: []byte(uriComponent(v))},
		{form: "form-urlencoded", b: []byte(formURLEncoded(v))},
		{form: "html", b: []byte(htmlEscape(v))},
	}
}

// uriComponent is JavaScript's encodeURIComponent.
func uriComponent(v string) string {
	var b strings.Builder
	for _, c := range []byte(v) {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// formURLEncoded is the application/x-www-form-urlencoded serialisation
// of a browser's form post and of URLSearchParams.
func formURLEncoded(v string) string {
	var b strings.Builder
	for _, c := range []byte(v) {
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("*-._", c) >= 0:
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func htmlEscape(v string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(v)
}

// base64Runs are the parts of the base64 encodings of b (standard and URL
// alphabets) that do not depend on what comes before or after it, at each
// of the three alignments: what any base64 text that holds b contains.
func base64Runs(b []byte) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := 0; k < 3; k++ {
			full := enc.EncodeToString(append(make([]byte, k), b...))
			first := (8*k + 5) / 6
			last := (8*k + 8*len(b)) / 6
			if last-first >= 6 {
				out = append(out, full[first:last])
			}
		}
	}
	return out
}

var base64Text = regexp.MustCompile(`^[A-Za-z0-9+/_-]{8,}={0,2}$`)

// needle is one form of one secret.
type needle struct {
	label, form string
	b           []byte
}

// needles are every form of every secret: the text forms and the base64
// runs of each.
func (s secretSet) needles() []needle {
	var out []needle
	for _, label := range s.labels() {
		for _, f := range textForms(s[label]) {
			out = append(out, needle{label, f.form, f.b})
			for _, run := range base64Runs(f.b) {
				out = append(out, needle{label, "base64 of " + f.form, []byte(run)})
			}
		}
	}
	return out
}

// scan searches data for every secret of s, in every form, and returns
// what it found, one leak per secret. data may be anything: a CDP frame,
// a file of a trace, a log. JSON in it is walked (strings decoded, nested
// JSON and base64 text looked into), so an escape or an encoding hides
// nothing.
func (s secretSet) scan(where string, data []byte) []leak {
	return s.scanNeedles(s.needles(), where, data)
}

func (s secretSet) scanNeedles(ns []needle, where string, data []byte) []leak {
	found := map[string]leak{}
	var look func(in []byte, depth int, via string)
	look = func(in []byte, depth int, via string) {
		for _, n := range ns {
			if _, done := found[n.label]; done {
				continue
			}
			if i := bytes.Index(in, n.b); i >= 0 {
				lo, hi := max(i-80, 0), min(i+len(n.b)+40, len(in))
				found[n.label] = leak{label: n.label, form: via + n.form, where: where, excerpt: string(in[lo:hi])}
			}
		}
		if depth >= 3 || len(found) == len(s) {
			return
		}
		for _, str := range jsonStrings(in) {
			look([]byte(str), depth+1, via+"in a JSON string: ")
			if t := strings.TrimSpace(str); base64Text.MatchString(t) {
				for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
					if dec, err := enc.DecodeString(t); err == nil {
						look(dec, depth+1, via+"in decoded base64: ")
						break
					}
				}
			}
		}
	}
	look(data, 0, "")
	var out []leak
	for _, label := range s.labels() {
		if l, ok := found[label]; ok {
			out = append(out, l)
		}
	}
	return out
}

// jsonStrings returns the strings (keys and values) of data read as JSON
// or as JSON lines; nil when it is neither.
func jsonStrings(data []byte) []string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' && data[0] != '[' && data[0] != '"' {
		return nil
	}
	var out []string
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		if s, ok := tok.(string); ok && len(s) >= 6 {
			out = append(out, s)
		}
	}
}

func (s secretSet) labels() []string {
	var out []string
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// scanFrames searches every frame.
func (s secretSet) scanFrames(where string, frames [][]byte) []leak {
	var out []leak
	ns := s.needles()
	for i, f := range frames {
		out = append(out, s.scanNeedles(ns, fmt.Sprintf("%s frame %d", where, i), f)...)
		if len(out) > 20 {
			break
		}
	}
	return out
}

// scanFile searches a file, and each file inside it when it is a zip (a
// Playwright trace).
func (s secretSet) scanFile(t *testing.T, path string) []leak {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if !bytes.HasPrefix(b, []byte("PK")) {
		return s.scan(filepath.Base(path), b)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []leak
	ns := s.needles()
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("%s: %s: %v", path, f.Name, err)
		}
		body, _ := io.ReadAll(rc)
		rc.Close()
		where := filepath.Base(path) + ":" + f.Name
		// Traces are JSON lines: each line on its own keeps the walk cheap.
		for _, line := range bytes.Split(body, []byte("\n")) {
			out = append(out, s.scanNeedles(ns, where, line)...)
		}
	}
	return out
}

// noLeaks fails the test with every leak found.
func noLeaks(t *testing.T, what string, leaks []leak) {
	t.Helper()
	if len(leaks) == 0 {
		return
	}
	var b strings.Builder
	for i, l := range leaks {
		if i == 10 {
			fmt.Fprintf(&b, "\n  … and %d more", len(leaks)-i)
			break
		}
		b.WriteString("\n  " + l.String())
	}
	t.Errorf("%s: the client received what a page script could not read:%s", what, b.String())
}

// site returns the test site, with a fresh password and Basic pair, and
// the values a client must never see so far: none yet.
func site(t *testing.T) *testenv.Site {
	t.Helper()
	s := env.Pages.Site()
	t.Cleanup(func() { s.SetPassword(""); s.SetBasic("", "") })
	return s
}

// host is an origin without its scheme: what the site records as Host.
func host(origin string) string { return strings.TrimPrefix(origin, "http://") }

// loginAsPerson logs the person in to the site on origin, in a tab of
// their own that is closed again: the session cookie is in the browser's
// jar before any client connects. It returns the session id.
func loginAsPerson(t *testing.T, p *person, s *testenv.Site, origin string) string {
	t.Helper()
	pw := secret("pw")
	s.SetPassword(pw)
	before := s.Live(host(origin))
	tid := p.openTab(origin + "/secure/login.html")
	v := p.eval(tid, `fetch('/secure/login', {method: 'POST', body: new URLSearchParams({user: 'person', password: `+quote(pw)+`})}).then(r => r.status)`)
	if v != "200" {
		t.Fatalf("the person's login: %s", v)
	}
	p.call("", "Target.closeTarget", map[string]any{"targetId": tid})
	for _, id := range s.Live(host(origin)) {
		if !contains(before, id) {
			return id
		}
	}
	t.Fatal("the person's login set no session")
	return ""
}

// basicAsPerson makes the browser cache a Basic pair for origin/basic/:
// the person opens it and answers the browser's sign-in prompt (here
// Fetch.authRequired on their own session). It returns the pair.
func basicAsPerson(t *testing.T, p *person, s *testenv.Site, origin string) (user, pass string) {
	t.Helper()
	user, pass = secret("user"), secret("pass")
	s.SetBasic(user, pass)
	tid := p.openTab("about:blank")
	sess := p.attach(tid)
	defer p.call("", "Target.detachFromTarget", map[string]any{"sessionId": sess})
	if _, err := p.call(sess, "Fetch.enable", map[string]any{"handleAuthRequests": true, "patterns": []map[string]any{{"urlPattern": "*/basic/*"}}}); err != nil {
		t.Fatalf("the person's Fetch.enable: %v", err)
	}
	ctx, stop := context.WithCancel(p.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for from := 0; ; {
			m, i, err := p.c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
				return m.SessionID == sess && (m.Method == "Fetch.requestPaused" || m.Method == "Fetch.authRequired")
			})
			if err != nil {
				return
			}
			from = i + 1
			var ev struct{ RequestID string }
			json.Unmarshal(m.Params, &ev)
			if m.Method == "Fetch.requestPaused" {
				p.call(sess, "Fetch.continueRequest", map[string]any{"requestId": ev.RequestID})
				continue
			}
			p.call(sess, "Fetch.continueWithAuth", map[string]any{"requestId": ev.RequestID, "authChallengeResponse": map[string]any{"response": "ProvideCredentials", "username": user, "password": pass}})
		}
	}()
	if _, err := p.call(sess, "Page.navigate", map[string]any{"url": origin + "/basic/"}); err != nil {
		t.Fatalf("the person's navigation to /basic/: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.eval(tid, "document.documentElement ? document.documentElement.outerHTML : ''"), "basic ok") {
		if time.Now().After(deadline) {
			t.Fatal("the person's Basic sign-in did not get in")
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	<-done
	p.call(sess, "Fetch.disable", nil)
	p.call("", "Target.closeTarget", map[string]any{"targetId": tid})
	return user, pass
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// creds are the person's credentials on the site, made before a client
// connects: a session, and a Basic pair in the browser's cache.
type creds struct {
	p          *person
	s          *testenv.Site
	sid        string // the person's session cookie on the main origin
	password   string // the person's password on the site
	user, pass string // the cached Basic pair
}

// personCredentials logs the person in on the main origin and has the
// browser cache a Basic pair there.
func personCredentials(ctx context.Context, t *testing.T) *creds {
	t.Helper()
	c := &creds{p: newPerson(ctx, t), s: site(t)}
	c.sid = loginAsPerson(t, c.p, c.s, env.Pages.Main)
	c.password = c.s.Password()
	c.user, c.pass = basicAsPerson(t, c.p, c.s, env.Pages.Main)
	return c
}

// never is what no client may ever receive: every cookie value the site
// has set so far (rotated ones and frames' included), the person's
// password, and the Basic pair and its header.
func (c *creds) never(t *testing.T) secretSet {
	t.Helper()
	set := secretSet{}
	for i, v := range c.s.Issued() {
		set.add(t, fmt.Sprintf("cookie #%d", i), v)
	}
	set.add(t, "the person's password", c.password)
	if c.user != "" {
		set.add(t, "Basic password", c.pass)
		set.add(t, "Basic user:password", c.user+":"+c.pass)
		set.add(t, "Basic header", strings.TrimPrefix(testenv.BasicHeader(c.user, c.pass), "Basic "))
	}
	return set
}

// jar is the person's cookie jar, read through the browser's own port:
// name=value;httpOnly per cookie, sorted.
func (p *person) jar() []string {
	p.t.Helper()
	res, err := p.call("", "Storage.getCookies", nil)
	if err != nil {
		p.t.Fatalf("the person's Storage.getCookies: %v", err)
	}
	var r struct {
		Cookies []struct {
			Name, Value, Domain, Path string
			HTTPOnly                  bool `json:"httpOnly"`
		}
	}
	json.Unmarshal(res, &r)
	var out []string
	for _, c := range r.Cookies {
		out = append(out, fmt.Sprintf("%s=%s;domain=%s;path=%s;httpOnly=%v", c.Name, c.Value, c.Domain, c.Path, c.HTTPOnly))
	}
	sort.Strings(out)
	return out
}

// newClient is a raw client of the relay (direct: of the browser),
// connected as Playwright is.
func newClient(ctx context.Context, t *testing.T) *attacker {
	t.Helper()
	c, err := cdptest.Dial(ctx, clientWS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &attacker{t: t, ctx: ctx, c: c}
	t.Cleanup(c.Close)
	for _, m := range []struct {
		method string
		params any
	}{
		{"Target.setDiscoverTargets", map[string]any{"discover": true}},
		{"Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}},
	} {
		if _, err := a.call("", m.method, m.params); err != nil {
			t.Fatalf("%s: %v", m.method, err)
		}
	}
	return a
}

// tab opens a tab on url with the Network domain on (and the frames'
// sessions attached) before the page loads, and returns its session.
func (a *attacker) tab(url string) string {
	a.t.Helper()
	_, session := a.newTab("about:blank")
	for _, m := range []string{"Network.enable", "Page.enable"} {
		if _, err := a.call(session, m, nil); err != nil {
			a.t.Fatalf("%s: %v", m, err)
		}
	}
	if _, err := a.call(session, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}); err != nil {
		a.t.Fatalf("Target.setAutoAttach on the tab: %v", err)
	}
	a.navigate(session, url)
	return session
}

// navigate loads url in session and waits until it has loaded.
func (a *attacker) navigate(session, url string) {
	a.t.Helper()
	if _, err := a.call(session, "Page.navigate", map[string]any{"url": url}); err != nil {
		a.t.Fatalf("Page.navigate %s: %v", url, err)
	}
	a.waitLoaded(session, url)
}

// child waits for the session of session's out-of-process frame on
// origin (the first frame still without a URL will do), and returns it.
func (a *attacker) child(session, origin string) string {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
	defer cancel()
	m, _, err := a.c.WaitMessage(ctx, 0, func(m cdptest.Message) bool {
		if m.Method != "Target.attachedToTarget" || m.SessionID != session {
			return false
		}
		var ev struct{ TargetInfo struct{ Type, URL string } }
		json.Unmarshal(m.Params, &ev)
		// Chrome attaches the frame before it commits: its URL may be "".
		return ev.TargetInfo.Type == "iframe" && (ev.TargetInfo.URL == "" || strings.HasPrefix(ev.TargetInfo.URL, origin))
	})
	if err != nil {
		for _, m := range a.c.Messages() {
			if m.Method == "Target.attachedToTarget" {
				a.t.Logf("%s %s", m.SessionID, m.Params)
			}
		}
		a.t.Fatalf("no session for the frame on %s: %v", origin, err)
	}
	var ev struct{ SessionID string }
	json.Unmarshal(m.Params, &ev)
	return ev.SessionID
}

// requestURLs maps the Network request ids the client was told of to
// their URLs.
func (a *attacker) requestURLs() map[string]string {
	out := map[string]string{}
	for _, m := range a.c.Messages() {
		if m.Method == "Network.requestWillBeSent" || m.Method == "Network.webSocketCreated" {
			var ev struct {
				RequestID string
				URL       string
				Request   struct{ URL string }
			}
			json.Unmarshal(m.Params, &ev)
			out[ev.RequestID] = ev.Request.URL + ev.URL
		}
	}
	return out
}

// eventsFor returns the params of the events named method whose request
// went to a URL containing path.
func (a *attacker) eventsFor(method, path string) []json.RawMessage {
	urls := a.requestURLs()
	var out []json.RawMessage
	for _, m := range a.c.Messages() {
		if m.Method != method {
			continue
		}
		var ev struct{ RequestID string }
		json.Unmarshal(m.Params, &ev)
		if strings.Contains(urls[ev.RequestID], path) {
			out = append(out, m.Params)
		}
	}
	return out
}

// marker is what a credential of n bytes reads as.
func marker(v string) string { return "cdprelay-redacted:" + strconv.Itoa(len(v)) }

// header returns the value of header name (any case) in a header map.
func header(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// script runs an e2e node script against the tap, with the test's
// origins and a folder for what it writes, and returns that folder and its
// output. The script writes report.json, read into report.
func script(t *testing.T, tp *tap, name, scenario string, report any) (out, stdout string) {
	t.Helper()
	out = t.TempDir()
	stdout = runNode(t, name, scenario, tp.endpoint(), env.Pages.Main, env.Pages.Other, out)
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatalf("%s %s wrote no report: %v", name, scenario, err)
	}
	if err := json.Unmarshal(b, report); err != nil {
		t.Fatalf("%s %s: report.json: %v", name, scenario, err)
	}
	return out, stdout
}

// noLeaksIn searches what a node client received (the tap's frames), what
// it printed, and every file it wrote.
func noLeaksIn(t *testing.T, set secretSet, tp *tap, out, stdout string) {
	t.Helper()
	noLeaks(t, "the client's frames", set.scanFrames("client", tp.Frames()))
	noLeaks(t, "the client's output", set.scan("stdout", []byte(stdout)))
	files, _ := os.ReadDir(out)
	for _, f := range files {
		noLeaks(t, f.Name(), set.scanFile(t, filepath.Join(out, f.Name())))
	}
}

// audited reports whether the relay observed an event that matches since
// mark.
func audited(mark int, match func(relay.Event) bool) bool {
	for _, e := range env.Audit.Since(mark) {
		if match(e) {
			return true
		}
	}
	return false
}

// siteSecret configures the secret "site", the site's password, on the
// main origin for the rest of the test (the relay reads it from an
// environment variable), and returns it. It is a strong password: spaces
// and punctuation, so that each way of encoding it differs.
func siteSecret(t *testing.T, s *testenv.Site) string {
	t.Helper()
	pw := secret("Tr0ub4dor&3 horse-") + "!@~*"
	s.SetPassword(pw)
	t.Setenv("CDPRELAY_E2E_SITE_SECRET", pw)
	useSecrets(t, secrets.Config{Name: "site", Origins: []string{env.Pages.Main}, Env: "CDPRELAY_E2E_SITE_SECRET"})
	return pw
}

// useSecrets gives the relay these secrets for the rest of the test.
func useSecrets(t *testing.T, cfgs ...secrets.Config) {
	t.Helper()
	st, err := secrets.New(cfgs)
	if err != nil {
		t.Fatal(err)
	}
	env.Relay.SetSecrets(st)
	t.Cleanup(func() { env.Relay.SetSecrets(nil) })
}

// auditClean checks that nothing the relay observed since mark holds a
// value of set.
func auditClean(t *testing.T, mark int, set secretSet) {
	t.Helper()
	for _, e := range env.Audit.Since(mark) {
		b, _ := json.Marshal(e)
		noLeaks(t, "the audit log", set.scan("audit event", b))
	}
}

// loggedInWith reports whether the site logged someone in with password
// pw since it was set (a POST to /secure/login whose form held it).
func loggedInWith(s *testenv.Site, pw string) bool {
	for _, r := range s.Requests("/secure/login") {
		if f, err := url.ParseQuery(r.Body); err == nil && r.Method == "POST" && f.Get("password") == pw {
			return true
		}
	}
	return false
}
