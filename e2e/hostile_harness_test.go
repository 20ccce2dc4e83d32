package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/relaypolicy"
)

// The hostile-client suite's harness. An attacker is an ordinary CDP
// client of the relay; the person is the test acting through the
// browser's own debugging port (env.BrowserWS), which no client reaches.
// Every assertion is about what an attack did — a request the outside
// host served, a secret in a frame the client received, a change in the
// person's tab — never about the wording of an error: a relay that
// refuses the attacker's command, or blocks its navigation, passes.

// setPolicy puts the relay under cfg for the rest of the test: the
// default rules, and the URL fence with cfg's hosts.
func setPolicy(t *testing.T, cfg denylist.Config) {
	t.Helper()
	p, err := denylist.Compile(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	env.Relay.SetPolicy(relaypolicy.Adapter{P: p})
	t.Cleanup(resetPolicy)
}

// testCtx is a context for one test, cancelled after its clean-ups ran.
func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// onlyMain is the policy of a relay started with --allowed-domains
// 127.0.0.1: the main test origin is inside, the other one outside.
var onlyMain = denylist.Config{AllowedHosts: []string{"127.0.0.1"}}

// secret returns a marker no page or frame could contain by chance.
func secret(prefix string) string {
	b := make([]byte, 8)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// secretFile writes a file holding a fresh secret and returns its path and
// the secret.
func secretFile(t *testing.T) (path, marker string) {
	t.Helper()
	marker = secret("hostilesecret")
	path = filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(path, []byte("the person's file: "+marker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, marker
}

// attacker is a raw CDP client of the relay, connected as Playwright is:
// flat auto-attach at the root, target discovery on.
type attacker struct {
	t   *testing.T
	ctx context.Context
	c   *cdptest.Client
}

var rawIDs atomic.Int64

func init() { rawIDs.Store(1 << 30) }

func newAttacker(ctx context.Context, t *testing.T) *attacker {
	t.Helper()
	c, err := cdptest.Dial(ctx, env.WSEndpoint(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &attacker{t: t, ctx: ctx, c: c}
	t.Cleanup(c.Close)
	if _, err := a.call("", "Target.setDiscoverTargets", map[string]any{"discover": true}); err != nil {
		t.Fatalf("Target.setDiscoverTargets: %v", err)
	}
	if _, err := a.call("", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}); err != nil {
		t.Fatalf("Target.setAutoAttach: %v", err)
	}
	return a
}

// call sends a command; an error reply is an ordinary outcome for an
// attack and comes back as the error.
func (a *attacker) call(session, method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
	defer cancel()
	res, err := a.c.Call(ctx, session, method, params)
	if err == nil {
		err = relayThrow(res)
	}
	return res, err
}

// relayThrow is the refusal of script that the relay answers as the
// script's own exception (so that clients report what it says), as an
// error; nil for any other result.
func relayThrow(res []byte) error {
	var r struct {
		ExceptionDetails *struct {
			Exception struct{ Description string }
		}
	}
	if json.Unmarshal(res, &r) != nil || r.ExceptionDetails == nil {
		return nil
	}
	if d := r.ExceptionDetails.Exception.Description; strings.HasPrefix(d, "Error: cdprelay: ") {
		return errors.New(strings.TrimPrefix(d, "Error: "))
	}
	return nil
}

// callRaw sends a command whose params are written by hand (duplicate
// keys, odd key cases), and waits for its reply.
func (a *attacker) callRaw(session, method, params string) (json.RawMessage, error) {
	return a.callRawWait(session, method, params, 10*time.Second)
}

func (a *attacker) callRawWait(session, method, params string, wait time.Duration) (json.RawMessage, error) {
	id := a.sendRaw(session, method, params)
	ctx, cancel := context.WithTimeout(a.ctx, wait)
	defer cancel()
	m, _, err := a.c.WaitReply(ctx, id)
	if err != nil {
		return nil, err
	}
	if m.Error != nil {
		return nil, m.Error
	}
	return m.Result, nil
}

// sendRaw writes a hand-written command without waiting; its reply is
// recorded among the client's messages.
func (a *attacker) sendRaw(session, method, params string) int64 {
	id := rawIDs.Add(1)
	frame := `{"id":` + strconv.FormatInt(id, 10) + `,"method":` + quote(method)
	if session != "" {
		frame += `,"sessionId":` + quote(session)
	}
	if params != "" {
		frame += `,"params":` + params
	}
	frame += "}"
	if err := a.c.WriteRaw([]byte(frame)); err != nil {
		a.t.Fatalf("write %s: %v", method, err)
	}
	return id
}

// quote writes s as a JSON (and JavaScript) string literal, without the
// HTML escapes of json.Marshal, so that it can be compared with what a
// page returns.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// sessionFor waits (briefly) for the attachedToTarget that gives the
// client a session on targetID and returns the session, or "".
func (a *attacker) sessionFor(targetID string, wait time.Duration) string {
	ctx, cancel := context.WithTimeout(a.ctx, wait)
	defer cancel()
	m, _, err := a.c.WaitMessage(ctx, 0, func(m cdptest.Message) bool {
		return m.Method == "Target.attachedToTarget" && targetOf(m.Params) == targetID
	})
	if err != nil {
		return ""
	}
	var ev struct{ SessionID string }
	json.Unmarshal(m.Params, &ev)
	return ev.SessionID
}

func targetOf(params json.RawMessage) string {
	var ev struct{ TargetInfo struct{ TargetID string } }
	json.Unmarshal(params, &ev)
	return ev.TargetInfo.TargetID
}

// newTab opens a tab of the attacker's own and loads url in it, waiting
// until the page has loaded. The tab starts on about:blank: a page whose
// frames load while the relay is still attaching can be left waiting for
// good under the navigation backstop (a Fetch.requestPaused that comes
// before the relay has noted its own Fetch.enable is dropped).
func (a *attacker) newTab(url string) (targetID, session string) {
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
	a.waitLoaded(session, url)
	return r.TargetID, session
}

// waitLoaded waits until the session's document is url and has loaded.
func (a *attacker) waitLoaded(session, url string) {
	a.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := a.eval(session, "location.href + ' ' + document.readyState")
		if err == nil && v == quote(url+" complete") {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("the page did not load: %s %v", v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// eval runs expr on session, as a user gesture as Playwright's evaluate
// does (so that the popup blocker lets window.open through), and returns
// its value as JSON.
func (a *attacker) eval(session, expr string) (string, error) {
	res, err := a.call(session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true, "userGesture": true})
	if err != nil {
		return "", err
	}
	return evalValue(res)
}

func evalValue(res json.RawMessage) (string, error) {
	var r struct {
		Result struct {
			Value json.RawMessage
		}
		ExceptionDetails *struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return "", err
	}
	if e := r.ExceptionDetails; e != nil {
		return "", fmt.Errorf("exception: %s %s", e.Text, e.Exception.Description)
	}
	return string(r.Result.Value), nil
}

// mark returns how many frames the client has received, so that a later
// search can start there.
func (a *attacker) mark() int { return len(a.c.Frames()) }

// leaked returns the first frame, from index from on, that contains s
// (as is, or JSON-escaped inside a string), or "".
func (a *attacker) leaked(from int, s string) string {
	esc, _ := json.Marshal(s)
	esc = esc[1 : len(esc)-1]
	frames := a.c.Frames()
	for _, f := range frames[min(from, len(frames)):] {
		if bytes.Contains(f, []byte(s)) || bytes.Contains(f, esc) {
			return excerpt(f, s)
		}
	}
	return ""
}

func excerpt(f []byte, s string) string {
	i := max(bytes.Index(f, []byte(s[:min(len(s), 8)])), 0)
	lo, hi := max(i-120, 0), min(i+len(s)+60, len(f))
	return string(f[lo:hi])
}

// targets returns the targets the client was told about, by Target.*
// events and a fresh Target.getTargets.
func (a *attacker) targets() map[string]string {
	urls := map[string]string{}
	for _, m := range a.c.Messages() {
		switch m.Method {
		case "Target.targetCreated", "Target.attachedToTarget", "Target.targetInfoChanged":
			var ev struct {
				TargetInfo struct{ TargetID, URL string }
			}
			json.Unmarshal(m.Params, &ev)
			urls[ev.TargetInfo.TargetID] += " " + ev.TargetInfo.URL
		}
	}
	if res, err := a.call("", "Target.getTargets", nil); err == nil {
		var r struct {
			TargetInfos []struct{ TargetID, URL string }
		}
		json.Unmarshal(res, &r)
		for _, ti := range r.TargetInfos {
			urls[ti.TargetID] += " " + ti.URL
		}
	}
	return urls
}

// person is the test acting as the person at their own browser, through
// its debugging port.
type person struct {
	t      *testing.T
	ctx    context.Context
	c      *cdptest.Client
	before map[string]bool // the pages open when the test began
}

type pageTarget struct {
	TargetID, Type, URL, OpenerID string
}

// newPerson connects to the browser's own port and closes, at the end of
// the test, every tab that was not open at its start.
func newPerson(ctx context.Context, t *testing.T) *person {
	t.Helper()
	if env.BrowserWS == "" {
		t.Fatal("the environment has no browser debugging port")
	}
	c, err := cdptest.Dial(ctx, env.BrowserWS, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &person{t: t, ctx: ctx, c: c, before: map[string]bool{}}
	for _, pt := range p.pages() {
		p.before[pt.TargetID] = true
	}
	t.Cleanup(func() {
		var closed []string
		for _, pt := range p.pages() {
			if !p.before[pt.TargetID] {
				p.call("", "Target.closeTarget", map[string]any{"targetId": pt.TargetID})
				closed = append(closed, pt.TargetID)
			}
		}
		// The next test's client must not meet a tab the relay has not
		// yet heard is gone: its end would reach that client.
		p.relayForgets(closed)
		c.Close()
	})
	return p
}

// relayForgets waits until the relay's default instance lists none of
// the targets, which the browser has closed: the tab's end travels
// through the extension and reaches the relay a moment after the
// browser's own port stops listing it.
func (p *person) relayForgets(targets []string) {
	p.t.Helper()
	if len(targets) == 0 {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := ""
		resp, err := http.Get("http://" + env.Addr + "/json/list")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, id := range targets {
				if bytes.Contains(body, []byte(id)) {
					left = id
					break
				}
			}
		} else {
			left = err.Error()
		}
		if left == "" {
			return
		}
		if time.Now().After(deadline) {
			p.t.Logf("the relay still lists %s 10s after the browser closed it", left)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *person) call(session, method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	return p.c.Call(ctx, session, method, params)
}

// pages returns the browser's page targets (tabs, extension pages).
func (p *person) pages() []pageTarget {
	res, err := p.call("", "Target.getTargets", nil)
	if err != nil {
		p.t.Fatalf("the person's Target.getTargets: %v", err)
	}
	var r struct{ TargetInfos []pageTarget }
	json.Unmarshal(res, &r)
	var out []pageTarget
	for _, ti := range r.TargetInfos {
		if ti.Type == "page" {
			out = append(out, ti)
		}
	}
	return out
}

// newPages returns the pages opened since the test began whose URL
// satisfies ok.
func (p *person) newPages(ok func(url string) bool) []pageTarget {
	var out []pageTarget
	for _, pt := range p.pages() {
		if !p.before[pt.TargetID] && ok(pt.URL) {
			out = append(out, pt)
		}
	}
	return out
}

// attach gives the person a session of their own on a target.
func (p *person) attach(targetID string) string {
	p.t.Helper()
	res, err := p.call("", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true})
	if err != nil {
		p.t.Fatalf("the person's attach to %s: %v", targetID, err)
	}
	var r struct{ SessionID string }
	json.Unmarshal(res, &r)
	return r.SessionID
}

// eval evaluates expr in a target, as the person, and returns its value as
// JSON.
func (p *person) eval(targetID, expr string) string {
	p.t.Helper()
	s := p.attach(targetID)
	defer p.call("", "Target.detachFromTarget", map[string]any{"sessionId": s})
	res, err := p.call(s, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		p.t.Fatalf("the person's evaluation in %s: %v", targetID, err)
	}
	v, err := evalValue(res)
	if err != nil {
		p.t.Fatalf("the person's evaluation in %s: %v", targetID, err)
	}
	return v
}

// evalLoaded is eval in an extension page that may still be loading (just
// opened: its chrome.* comes with its document), tried again until it
// answers or wait has passed.
func (p *person) evalLoaded(targetID, expr string, wait time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		s := p.attach(targetID)
		res, err := p.call(s, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
		p.call("", "Target.detachFromTarget", map[string]any{"sessionId": s})
		if err == nil {
			var v string
			if v, err = evalValue(res); err == nil {
				return v
			}
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the person's evaluation in %s: %v", targetID, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// openTab opens a tab as the person would, and waits until it has loaded.
// spareTab opens a tab of the person's that outlives the test, for a test
// that must not leave the browser, or the relay's client, without a tab
// when it closes the ones it uses (whatever earlier tests left open).
func (p *person) spareTab() {
	p.t.Helper()
	p.before[p.openTab(env.Pages.Main+"/form.html?spare")] = true
}

func (p *person) openTab(url string) string {
	p.t.Helper()
	res, err := p.call("", "Target.createTarget", map[string]any{"url": url})
	if err != nil {
		p.t.Fatalf("the person's new tab: %v", err)
	}
	var r struct{ TargetID string }
	json.Unmarshal(res, &r)
	p.waitLoaded(r.TargetID)
	return r.TargetID
}

func (p *person) waitLoaded(targetID string) {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.eval(targetID, "document.readyState") != `"complete"` {
		if time.Now().After(deadline) {
			p.t.Fatalf("the person's tab %s did not load", targetID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// connectPage opens our extension's connect page, as the person would, and
// returns a function that sends it a request for the service worker (the
// page's own chrome.runtime.sendMessage), failing the test on a refusal.
func (p *person) connectPage() (request func(msg string) json.RawMessage) {
	p.t.Helper()
	res, err := p.call("", "Target.createTarget", map[string]any{"url": "chrome-extension://" + extension.ID + "/connect.html"})
	if err != nil {
		p.t.Fatalf("open the connect page: %v", err)
	}
	var page struct{ TargetID string }
	json.Unmarshal(res, &page)
	s := p.attach(page.TargetID)
	return func(msg string) json.RawMessage {
		p.t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			// The page's own script may still be loading: retry until the
			// extension API answers.
			res, err := p.call(s, "Runtime.evaluate", map[string]any{"expression": "chrome.runtime.sendMessage(" + msg + ")", "awaitPromise": true, "returnByValue": true})
			if err == nil {
				if v, err := evalValue(res); err == nil {
					var r struct{ OK bool }
					if json.Unmarshal([]byte(v), &r) != nil || !r.OK {
						p.t.Fatalf("connect page %s: %s", msg, v)
					}
					return json.RawMessage(v)
				}
			}
			if time.Now().After(deadline) {
				p.t.Fatalf("connect page %s: %v %s", msg, err, res)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// pickMode switches the extension to "pick" mode for the rest of the test,
// through its connect page, and back to "all" at the end.
func (p *person) pickMode() (request func(msg string) json.RawMessage) {
	p.t.Helper()
	request = p.connectPage()
	request(`{type: "mode", share: "pick"}`)
	p.t.Cleanup(func() { request(`{type: "mode", share: "all"}`) })
	return request
}

// tabIDOf returns the relay's tab id of a shared target, waiting for the
// relay to know it.
func tabIDOf(t *testing.T, targetID string) int64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, tab := range env.Relay.Default().Status().Tabs {
			if tab.TargetID == targetID {
				return tab.TabID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("target %s is not a shared tab", targetID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// settle gives the browser a moment for what an attack set off (a popup's
// first request, a navigation) to happen.
func settle() { time.Sleep(700 * time.Millisecond) }

func hasPrefix(prefixes ...string) func(string) bool {
	return func(u string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(u, p) {
				return true
			}
		}
		return false
	}
}
