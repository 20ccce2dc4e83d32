package e2e

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/relay"
)

// TestConnectLinkConsent opens our extension's connect links as the person
// would. A link with auto=1 connects by itself only to a relay on this
// machine in "pick" mode; one that asks to share every tab, or names a
// relay on another machine, waits for the person's click on Connect, and
// connects after it. Several connect pages are open at once, as a person
// may have them. (The embedded default never goes through a link: its
// config.json connects the extension, as this environment's did.)
func TestConnectLinkConsent(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 90*time.Second)
	p := newPerson(ctx, t)
	home := p.openExtensionPage("chrome-extension://" + extension.ID + "/connect.html")
	orig := p.extStatus(home)
	if orig.State != "connected" || orig.Share != "all" {
		t.Fatalf("the extension is not connected in all mode at the start: %+v", orig)
	}
	t.Cleanup(func() { p.restoreExtension(home, orig.Relay) })
	// A web page of the person's, which "all" mode shares.
	p.openTab(env.Pages.Main + "/form.html?consent")

	link := func(relayURL, share string) string {
		q := url.Values{}
		q.Set("relay", relayURL)
		q.Set("share", share)
		q.Set("auto", "1")
		return "chrome-extension://" + extension.ID + "/connect.html?" + q.Encode()
	}
	// asked waits for the page to say that it waits for a click, and
	// returns what it says.
	asked := func(page string) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var v string
			json.Unmarshal([]byte(p.eval(page, `(({hidden, textContent}) => hidden ? "" : textContent)(document.getElementById("confirm"))`)), &v)
			if v != "" {
				return v
			}
			if time.Now().After(deadline) {
				t.Fatal("the connect page does not ask for a click")
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	mint := func() *relay.Instance {
		t.Helper()
		in, err := env.Relay.NewInstance()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { env.Relay.Remove(in, "test over") })
		return in
	}
	extURL := func(in *relay.Instance) string { return "ws://" + env.Addr + "/extension/" + in.GUID() }

	// A relay on another machine, in pick mode: no connection without a click.
	far := p.openExtensionPage(link("wss://relay.example/extension/0123456789abcdef0123456789abcdef", "pick"))
	if say := asked(far); !strings.Contains(say, "another machine (relay.example)") || strings.Contains(say, "every tab") {
		t.Errorf("the page says %q", say)
	}
	settle()
	if st := p.extStatus(home); st.Relay != orig.Relay || st.State != "connected" {
		t.Fatalf("a link to another machine took the extension without a click: %+v", st)
	}
	t.Log("ok - a link to a relay on another machine waits for a click")

	// Every tab, to a relay on this machine: waits, then connects on the click.
	all := mint()
	page := p.openExtensionPage(link(extURL(all), "all"))
	if say := asked(page); !strings.Contains(say, "every tab") || strings.Contains(say, "another machine") {
		t.Errorf("the page says %q", say)
	}
	settle()
	if st := all.Status(); st.Extension {
		t.Fatal("a link to share every tab connected without a click")
	}
	if st := p.extStatus(home); st.Relay != orig.Relay {
		t.Fatalf("a link to share every tab took the extension without a click: %+v", st)
	}
	p.click(page, "connect")
	waitInstance(t, all, func(st relay.Status) bool {
		for _, tab := range st.Tabs {
			if strings.HasSuffix(tab.URL, "?consent") {
				return st.Ready
			}
		}
		return false
	}, "the extension with the person's tab after the click")
	if st := p.extStatus(home); st.Relay != extURL(all) || st.Share != "all" {
		t.Errorf("after the click: %+v", st)
	}
	t.Log("ok - a link to share every tab waits for a click, and connects after it")

	// Pick mode, to a relay on this machine: connects by itself, as before.
	pick := mint()
	pickPage := p.openExtensionPage(link(extURL(pick), "pick"))
	deadline := time.Now().Add(20 * time.Second)
	for !pick.Status().Ready {
		if time.Now().After(deadline) {
			t.Fatalf("the pick-mode link did not connect by itself; its page shows %s", p.eval(pickPage, `[...document.querySelectorAll("#state, #detail, #problem, #confirm")].map((e) => e.id + (e.hidden ? " (hidden)" : "") + ": " + e.textContent).join(" | ") + " | share: " + document.querySelector('input[name="share"]:checked')?.value`))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st := p.extStatus(home); st.Relay != extURL(pick) || st.Share != "pick" {
		t.Errorf("after the pick-mode link: %+v", st)
	}
	t.Log("ok - a link to a relay on this machine in pick mode connects by itself")
}

// openExtensionPage opens an extension page in a new tab, as the person
// would, and waits until it has loaded (not the tab's first about:blank).
func (p *person) openExtensionPage(url string) string {
	p.t.Helper()
	res, err := p.call("", "Target.createTarget", map[string]any{"url": url})
	if err != nil {
		p.t.Fatalf("open %s: %v", url, err)
	}
	var r struct{ TargetID string }
	json.Unmarshal(res, &r)
	deadline := time.Now().Add(10 * time.Second)
	for p.eval(r.TargetID, `location.protocol + " " + document.readyState`) != `"chrome-extension: complete"` {
		if time.Now().After(deadline) {
			p.t.Fatalf("%s did not load", url)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r.TargetID
}

// extStatus is the extension's status as its connect page reads it.
type extStatus struct {
	State, Error, Relay, Share string
	Enabled                    bool
	Backlog, DroppedFrames     int64
}

// extStatus reads the extension's status through its connect page, open
// in target page.
func (p *person) extStatus(page string) extStatus {
	p.t.Helper()
	var st extStatus
	if v := p.eval(page, `chrome.runtime.sendMessage({type: "status"})`); json.Unmarshal([]byte(v), &st) != nil {
		p.t.Fatalf("the extension's status: %s", v)
	}
	return st
}

// restoreExtension connects the extension to relayURL again in "all" mode,
// as the environment had it, through its connect page, and waits for the
// default instance to have it back with its tabs.
func (p *person) restoreExtension(page, relayURL string) {
	p.t.Helper()
	if v := p.eval(page, `chrome.runtime.sendMessage({type: "connect", relay: `+quote(relayURL)+`, share: "all"}).then((r) => r.ok)`); v != "true" {
		p.t.Errorf("connect the extension to %s again: %s", relayURL, v)
	}
	waitInstance(p.t, env.Relay.Default(), func(st relay.Status) bool { return st.Ready && len(st.Tabs) > 0 }, "the extension back on the default instance")
}

// click clicks the middle of the element with this id, as the person's
// mouse would.
func (p *person) click(page, id string) {
	p.t.Helper()
	var at [2]float64
	v := p.eval(page, `(() => { const r = document.getElementById(`+quote(id)+`).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
	if json.Unmarshal([]byte(v), &at) != nil {
		p.t.Fatalf("where is #%s: %s", id, v)
	}
	s := p.attach(page)
	defer p.call("", "Target.detachFromTarget", map[string]any{"sessionId": s})
	if _, err := p.call(s, "Page.bringToFront", nil); err != nil {
		p.t.Fatalf("Page.bringToFront: %v", err)
	}
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		if _, err := p.call(s, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": at[0], "y": at[1], "button": "left", "clickCount": 1}); err != nil {
			p.t.Fatalf("the person's click on #%s: %v", id, err)
		}
	}
}

// waitInstance waits until an instance's status satisfies ok.
func waitInstance(t *testing.T, in *relay.Instance, ok func(relay.Status) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := in.Status()
		if ok(st) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %+v", what, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
