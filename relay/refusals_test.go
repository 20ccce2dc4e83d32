package relay

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay/internal/config"
)

// TestRefusedInputRetried: input refused on a tab a person holds is
// refused as a protocol error; the same input sent again (a client that
// retries) makes the client's next two function calls fail as their
// exception, with the same reason, and no more; other input, or none,
// changes nothing.
func TestRefusedInputRetried(t *testing.T) {
	page := newFakePage(1, "https://a.example")
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/"}}, Handler: page.handle})
	page.e.Store(e)
	c := h.client()
	sess := h.autoAttach(c)[0]
	if err := h.srv.Default().TakeControl(1, "person"); err != nil {
		t.Fatal(err)
	}
	call := func() (string, bool) {
		m := h.callMsg(c, sess, "Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function () { return 1 }", "executionContextId": 11}) // the page's own world
		if m.Error != nil {
			t.Fatalf("callFunctionOn: %s", m.Raw)
		}
		return string(m.Result), strings.Contains(string(m.Result), "exceptionDetails")
	}
	move := map[string]any{"type": "mouseMoved", "x": 10, "y": 20}
	for range 2 {
		if m := h.callMsg(c, sess, "Input.dispatchMouseEvent", move); m.Error == nil || !strings.Contains(m.Error.Message, "taken control") {
			t.Fatalf("input on the held tab: %s", m.Raw)
		}
	}
	for range 2 {
		res, thrown := call()
		if !thrown || !strings.Contains(res, "a person has taken control") {
			t.Fatalf("a call after the input was sent again: %s", res)
		}
	}
	if res, thrown := call(); thrown {
		t.Fatalf("a third call: %s", res)
	}

	// Different input each time is no retry.
	h.callMsg(c, sess, "Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": 11, "y": 20})
	h.callMsg(c, sess, "Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "key": "a"})
	if res, thrown := call(); thrown {
		t.Fatalf("a call after two different inputs: %s", res)
	}
	// A click's move, press and release, sent again.
	for range 2 {
		for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
			h.callMsg(c, sess, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": 1, "y": 2, "button": "left", "clickCount": 1})
		}
	}
	if res, thrown := call(); !thrown {
		t.Fatalf("the call after a click was sent again: %s", res)
	}
	if n := len(fenceCalls(t, e, "Input.dispatchMouseEvent")); n != 0 {
		t.Fatalf("input reached the tab %d times", n)
	}
}

// TestTakeOverTakesInitScriptsOut: a script the client gave Chrome for
// new documents does not run in the pages a person opens in a tab they
// took over, tiers or none: it is out of Chrome while they hold the tab,
// and back when they hand it back. A script that runs nothing stays.
func TestTakeOverTakesInitScriptsOut(t *testing.T) {
	h := newHarness(t, config.Config{})
	var n atomic.Int64
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/"}}, Handler: func(tab int, sid, method string, params json.RawMessage) (any, error) {
		if method == "Page.addScriptToEvaluateOnNewDocument" {
			return map[string]string{"identifier": strconv.FormatInt(n.Add(1), 10)}, nil
		}
		return fakeext.DefaultHandler(tab, sid, method, params)
	}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "location.href = 'https://b.example/'"})
	h.call(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "", "worldName": "utility"})
	added := fenceCalls(t, e, "Page.addScriptToEvaluateOnNewDocument")
	if len(added) != 2 {
		t.Fatalf("added %d scripts", len(added))
	}
	inst := h.srv.Default()
	if err := inst.TakeControl(1, "person"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the script to be taken out", func() bool { return len(fenceCalls(t, e, "Page.removeScriptToEvaluateOnNewDocument")) == 1 })
	if err := inst.ReleaseControl(1, "person"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the script to be put back", func() bool { return len(fenceCalls(t, e, "Page.addScriptToEvaluateOnNewDocument")) == 3 })
	back := fenceCalls(t, e, "Page.addScriptToEvaluateOnNewDocument")[2]
	if !strings.Contains(string(back.Params), "b.example") {
		t.Errorf("put back: %s", back.Params)
	}
}

// TestReadOnlySwitches: on a tab a person holds, a client may switch a
// domain's events on and off (Puppeteer opens every page with
// Audits.enable), but not a switch that takes the person's passkeys or
// device pickers.
func TestReadOnlySwitches(t *testing.T) {
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/"}}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	if err := h.srv.Default().TakeControl(1, "person"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"Audits.enable", "Audits.disable", "WebMCP.enable", "Animation.enable"} {
		if r := h.callMsg(c, sess, m, nil); r.Error != nil {
			t.Errorf("%s: %s", m, r.Raw)
		}
	}
	for _, m := range []string{"WebAuthn.enable", "DeviceAccess.enable", "FedCm.enable", "BluetoothEmulation.enable", "Emulation.setFocusEmulationEnabled"} {
		if r := h.callMsg(c, sess, m, nil); r.Error == nil || !strings.Contains(r.Error.Message, "taken control") {
			t.Errorf("%s: %s", m, r.Raw)
		}
		if n := len(fenceCalls(t, e, m)); n != 0 {
			t.Errorf("%s reached the tab", m)
		}
	}
}
