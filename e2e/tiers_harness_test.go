package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/testenv"
	"github.com/cdprelay/cdprelay/viewer"
)

// The tier tests' harness. Three loopback origins, one per tier: Main is
// full, Other read-only, Third blind; and, for frames that share their
// parent's process, hosts of one site under tiers.localhost (Chrome sends
// every *.localhost to the loopback, so they reach Main's server): app is
// full, ro read-only, blind blind.
//
// A blind site's page (/tier/site.html?m=<m>) holds m in its address and
// testenv.TierContent(m) in its content — title, text, console, API
// answers — and with live=1 changes all of them five times a second: a
// client or viewer that got any byte of either learnt something of the
// page.

// tierConfig is the tiers of these tests.
func tierConfig() denylist.Config {
	return denylist.Config{Tiers: []denylist.TierRule{
		{Tier: denylist.TierReadOnly, Hosts: []string{"127.0.0.2", "ro.tiers.localhost"}},
		{Tier: denylist.TierBlind, Hosts: []string{"127.0.0.3", "blind.tiers.localhost"}},
	}}
}

// useTiers puts the relay under the tiers for the rest of the test.
func useTiers(t *testing.T) { t.Helper(); setPolicy(t, tierConfig()) }

// tierHost is the origin of name.tiers.localhost, served by Main.
func tierHost(name string) string {
	u, _ := url.Parse(env.Pages.Main)
	return "http://" + name + ".tiers.localhost:" + u.Port()
}

// siteURL is the address of the tier site on origin with marker m.
func siteURL(origin, m string, live bool) string {
	u := origin + "/tier/site.html?m=" + m
	if live {
		u += "&live=1"
	}
	return u
}

// newMark is a fresh marker for a blind page's address.
func newMark() string { return secret("tiermark") }

// needles are what no client or viewer may receive of the page with
// marker m: its address's marker and its content's.
func needles(m string) []string { return []string{m, testenv.TierContent(m)} }

// leakIn returns, from index from on, the frames that hold one of the
// needles (as is or JSON-escaped): each one's method and an excerpt
// around the needle, at most five; "" when there is none.
func leakIn(frames [][]byte, from int, ns ...string) string {
	var found []string
	n := 0
	for _, f := range frames[min(from, len(frames)):] {
		for _, s := range ns {
			esc, _ := json.Marshal(s)
			i := bytes.Index(f, []byte(s))
			if i < 0 {
				i = bytes.Index(f, esc[1:len(esc)-1])
			}
			if i >= 0 {
				n++
				if len(found) < 5 {
					var m struct{ Method string }
					json.Unmarshal(f, &m)
					if m.Method == "" {
						m.Method = "a reply"
					}
					found = append(found, m.Method+": …"+string(f[max(i-150, 0):min(i+len(s)+60, len(f))])+"…")
				}
				break
			}
		}
	}
	if n == 0 {
		return ""
	}
	return strings.Join(found, "\n\t") + "\n\t(" + strconv.Itoa(n) + " frames in all)"
}

// accessChanged waits for the CDPRelay.accessChanged that gives session
// the access want, from message index from on, and returns the index of
// the message after it.
func (a *attacker) accessChanged(from int, session, want string) int {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(a.ctx, 15*time.Second)
	defer cancel()
	_, i, err := a.c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
		return m.Method == "CDPRelay.accessChanged" && m.SessionID == session && strings.Contains(string(m.Params), `"access":"`+want+`"`)
	})
	if err != nil {
		a.t.Fatalf("no CDPRelay.accessChanged to %s on %s: %v", want, session, err)
	}
	return i + 1
}

// roundTrip makes sure that everything the relay sent before it, the
// client has received.
func (a *attacker) roundTrip() {
	a.t.Helper()
	if _, err := a.call("", "Target.getTargets", nil); err != nil {
		a.t.Fatalf("round trip: %v", err)
	}
}

// refused sends a command that must fail, and returns its error.
//
// A blind tab answers a client's page set-up with stand-ins, so that a
// client that finds it blind does not wait for good: a world that runs
// nothing, a setting acknowledged and not applied. Those answers are
// checked for what they are: the world refuses script, and the setting's
// effect is for the test to look for on the person's side.
func (a *attacker) refused(session, method string, params any) error {
	a.t.Helper()
	res, err := a.call(session, method, params)
	if err == nil {
		switch method {
		case "Page.createIsolatedWorld":
			var w struct{ ExecutionContextID int64 }
			json.Unmarshal(res, &w)
			if out, err := a.call(session, "Runtime.evaluate", map[string]any{"expression": "document.title", "contextId": w.ExecutionContextID, "returnByValue": true}); err == nil {
				a.t.Errorf("script ran in the world %s gave: %.300s", method, out)
			}
			return nil
		case "Emulation.setDeviceMetricsOverride":
			if string(res) != "{}" {
				a.t.Errorf("%s: %.300s", method, res)
			}
			return nil
		}
		a.t.Errorf("%s went through: %.300s", method, res)
	}
	return err
}

// personTab opens a tab as the person, on url, and returns its target id
// and the client's session on it.
func (a *attacker) personTab(p *person, url string) (targetID, session string) {
	a.t.Helper()
	from := len(a.c.Messages())
	targetID = p.openTab(url)
	ctx, cancel := context.WithTimeout(a.ctx, 15*time.Second)
	defer cancel()
	m, _, err := a.c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
		return m.Method == "Target.attachedToTarget" && targetOf(m.Params) == targetID
	})
	if err != nil {
		a.t.Fatalf("the person's tab was not attached: %v", err)
	}
	var ev struct{ SessionID string }
	json.Unmarshal(m.Params, &ev)
	return targetID, ev.SessionID
}

// enableAll switches on, on session, the domains a client such as
// Playwright listens to, so that whatever the tab says reaches it.
func (a *attacker) enableAll(session string) {
	a.t.Helper()
	for _, m := range []string{"Page.enable", "Runtime.enable", "Network.enable", "DOM.enable", "Log.enable"} {
		if _, err := a.call(session, m, nil); err != nil {
			a.t.Fatalf("%s: %v", m, err)
		}
	}
	a.call(session, "Page.setLifecycleEventsEnabled", map[string]any{"enabled": true})
}

// personNavigate takes the person's tab to url, as they would type it.
func (p *person) navigate(targetID, url string) {
	p.t.Helper()
	s := p.attach(targetID)
	defer p.call("", "Target.detachFromTarget", map[string]any{"sessionId": s})
	if _, err := p.call(s, "Page.navigate", map[string]any{"url": url}); err != nil {
		p.t.Fatalf("the person's navigation to %s: %v", url, err)
	}
}

// waitFor waits until the person reads want from expr in targetID.
func (p *person) waitFor(targetID, expr, want string) {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := p.evalMay(targetID, expr)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the person reads %s = %s, want %s", expr, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// evalMay is eval that returns an error's text rather than failing: a page
// that is navigating has no context for a moment.
func (p *person) evalMay(targetID, expr string) string {
	s := p.attach(targetID)
	defer p.call("", "Target.detachFromTarget", map[string]any{"sessionId": s})
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

// ticks returns the number of ticks a live tier page has made, as the
// person reads it.
func (p *person) ticks(targetID string) string {
	return p.evalMay(targetID, `document.getElementById('tick').textContent.replace(/.* tick /, '')`)
}

// waitTicks waits, as the person, until the live page in targetID has
// ticked n more times: the page went on changing, so whatever it would
// have told a client in that time has been said.
func (p *person) waitTicks(targetID string, n int) {
	p.t.Helper()
	var start int
	json.Unmarshal([]byte(strings.Trim(p.ticks(targetID), `"`)), &start)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var now int
		json.Unmarshal([]byte(strings.Trim(p.ticks(targetID), `"`)), &now)
		if now >= start+n {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the page did not tick (%d, then %d)", start, now)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// liveViewer is a program on the viewer socket of a live view over the
// env's relay: it keeps every message it got, text and binary.
type liveViewer struct {
	t    *testing.T
	ws   *websocket.Conn
	inst string

	mu     sync.Mutex
	msgs   []viewerMsg // guarded by mu
	notify chan struct{}
	done   chan struct{}
}

type viewerMsg struct {
	binary bool
	data   []byte
	Type   string `json:"type"`
	Tab    int64  `json:"tab"`
	Status string `json:"status"`
}

// liveViewServer starts a live view over the env's relay for the rest of
// the test and returns its address.
func liveViewServer(t *testing.T) string {
	t.Helper()
	vs, err := viewer.New(viewer.Config{Source: viewer.FromRelay(env.Relay), Interactive: asThePerson})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(vs)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := vs.Close(ctx); err != nil {
			t.Errorf("live view close: %v", err)
		}
		hs.Close()
	})
	return hs.URL
}

// dialViewer connects a viewer to the live view at base.
func dialViewer(t *testing.T, base string) *liveViewer {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/viewer", nil)
	if err != nil {
		t.Fatal(err)
	}
	v := &liveViewer{t: t, ws: ws, inst: env.Relay.Default().ID(), notify: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(v.done)
		for {
			mt, b, err := ws.ReadMessage()
			if err != nil {
				return
			}
			m := viewerMsg{binary: mt == websocket.BinaryMessage, data: b}
			if !m.binary {
				json.Unmarshal(b, &m)
			}
			v.mu.Lock()
			v.msgs = append(v.msgs, m)
			close(v.notify)
			v.notify = make(chan struct{})
			v.mu.Unlock()
		}
	}()
	t.Cleanup(func() { ws.Close(); <-v.done })
	return v
}

func (v *liveViewer) send(msg map[string]any) {
	v.t.Helper()
	b, _ := json.Marshal(msg)
	if err := v.ws.WriteMessage(websocket.TextMessage, b); err != nil {
		v.t.Fatalf("viewer: %v", err)
	}
}

// messages returns what the viewer got so far.
func (v *liveViewer) messages() []viewerMsg {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]viewerMsg(nil), v.msgs...)
}

// wait waits for a message from index from on that satisfies ok and
// returns the index after it.
func (v *liveViewer) wait(from int, what string, ok func(viewerMsg) bool) int {
	v.t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		v.mu.Lock()
		for i := from; i < len(v.msgs); i++ {
			if ok(v.msgs[i]) {
				v.mu.Unlock()
				return i + 1
			}
		}
		ch := v.notify
		v.mu.Unlock()
		select {
		case <-ch:
		case <-v.done:
			v.t.Fatalf("viewer: closed while waiting for %s", what)
		case <-deadline:
			v.t.Fatalf("viewer: no %s", what)
		}
	}
}

// roundTrip asks for the list and waits for it: whatever the server
// wrote before, the viewer has.
func (v *liveViewer) roundTrip() int {
	v.t.Helper()
	from := len(v.messages())
	v.send(map[string]any{"type": "list"})
	return v.wait(from, "the list", func(m viewerMsg) bool { return m.Type == "instances" })
}

// subscribe watches tab and waits for its first status.
func (v *liveViewer) subscribe(tab int64) int {
	v.t.Helper()
	from := len(v.messages())
	v.send(map[string]any{"type": "subscribe", "instance": v.inst, "tab": tab})
	return v.wait(from, "the subscription's status", func(m viewerMsg) bool { return m.Type == "status" && m.Tab == tab })
}

// frames counts the frames of tab from index from on.
func (v *liveViewer) frames(from int, tab int64) int {
	n := 0
	for _, m := range v.messages()[from:] {
		if m.Type == "frame" && m.Tab == tab {
			n++
		}
	}
	return n
}

// listedTab is a tab as a list shows it.
type listedTab struct {
	ID     int64  `json:"id"`
	URL    string `json:"url"`
	Title  string `json:"title"`
	Access string `json:"access"`
}

// listed returns tab as the newest list shows it.
func (v *liveViewer) listed(tab int64) (listedTab, bool) {
	msgs := v.messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Type != "instances" {
			continue
		}
		var l struct {
			Instances []struct{ Tabs []listedTab }
		}
		json.Unmarshal(msgs[i].data, &l)
		for _, in := range l.Instances {
			for _, t := range in.Tabs {
				if t.ID == tab {
					return t, true
				}
			}
		}
		return listedTab{}, false
	}
	return listedTab{}, false
}

// waitListed waits for a list that shows tab with access want.
func (v *liveViewer) waitListed(from int, tab int64, want string) int {
	v.t.Helper()
	return v.wait(from, "a list with tab "+want, func(m viewerMsg) bool {
		if m.Type != "instances" {
			return false
		}
		var l struct {
			Instances []struct{ Tabs []listedTab }
		}
		json.Unmarshal(m.data, &l)
		for _, in := range l.Instances {
			for _, t := range in.Tabs {
				if t.ID == tab && t.Access == want {
					return true
				}
			}
		}
		return false
	})
}

// viewerLeak returns the first text message from index from on that holds
// one of the needles, or "".
func (v *liveViewer) leak(from int, ns ...string) string {
	var text [][]byte
	for _, m := range v.messages()[from:] {
		if !m.binary {
			text = append(text, m.data)
		}
	}
	return leakIn(text, 0, ns...)
}
