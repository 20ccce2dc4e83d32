package relay

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/ext"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// TestWindowEmulation: Browser.getWindowForTarget, getWindowBounds and
// setWindowBounds answered through chrome.windows, with Chrome's answers
// and errors (e2e/realchrome_test.go compares them with a Chromium's own
// port).
func TestWindowEmulation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Features: ourFeatures})
	c := h.client()
	h.autoAttach(c)
	bounds := `{"left":10,"top":10,"width":780,"height":580,"windowState":"normal"}`
	tests := []struct {
		name, session, method string
		params                any
		want                  string // the reply, without its id
	}{
		{"by target", "", "Browser.getWindowForTarget", map[string]any{"targetId": tid(1)}, `"result":{"windowId":1,"bounds":` + bounds + `}`},
		{"by session", "pw-tab-2", "Browser.getWindowForTarget", nil, `"sessionId":"pw-tab-2","result":{"windowId":1,"bounds":` + bounds + `}`},
		{"the root has none", "", "Browser.getWindowForTarget", nil, `"error":{"code":-32000,"message":"No web contents in the target"}`},
		{"unknown target", "", "Browser.getWindowForTarget", map[string]any{"targetId": "nope"}, `"error":{"code":-32000,"message":"No target with given id"}`},
		{"bounds", "", "Browser.getWindowBounds", map[string]any{"windowId": 1}, `"result":{"bounds":` + bounds + `}`},
		{"unknown window", "", "Browser.setWindowBounds", map[string]any{"windowId": 999999, "bounds": map[string]any{"width": 900}}, `"error":{"code":-32000,"message":"Browser window not found"}`},
		{"state with size", "", "Browser.setWindowBounds", map[string]any{"windowId": 1, "bounds": map[string]any{"width": 900, "windowState": "maximized"}}, `"error":{"code":-32602,"message":"The 'minimized', 'maximized' and 'fullscreen' states cannot be combined with 'left', 'top', 'width' or 'height'"}`},
		{"no bounds", "", "Browser.setWindowBounds", map[string]any{"windowId": 1}, `"error":{"code":-32602,"message":"<any>"}`},
		{"bad state", "", "Browser.setWindowBounds", map[string]any{"windowId": 1, "bounds": map[string]any{"windowState": "sideways"}}, `"error":{"code":-32602,"message":"<any>"}`},
		{"resize", "", "Browser.setWindowBounds", map[string]any{"windowId": 1, "bounds": map[string]any{"width": 900, "height": 700}}, `"result":{}`},
		{"resized", "", "Browser.getWindowBounds", map[string]any{"windowId": 1}, `"result":{"bounds":{"left":10,"top":10,"width":900,"height":700,"windowState":"normal"}}`},
		{"minimize", "", "Browser.setWindowBounds", map[string]any{"windowId": 1, "bounds": map[string]any{"windowState": "minimized"}}, `"result":{}`},
	}
	for _, tt := range tests {
		m := h.callMsg(c, tt.session, tt.method, tt.params)
		if err := matchJSON(m.Raw, fmt.Sprintf(`{"id":%d,%s}`, *m.ID, tt.want)); err != nil {
			t.Errorf("%s: %v\n got: %s", tt.name, err, m.Raw)
		}
	}
	if w := e.Window(); w.Width != 900 || w.Height != 700 || w.State != "minimized" {
		t.Errorf("the window: %+v", w)
	}
}

// TestWindowsNotThroughStock: the stock extension has no chrome.windows.
func TestWindowsNotThroughStock(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs, Stock: true})
	c := h.client()
	h.autoAttach(c)
	m := h.callMsg(c, "", "Browser.getWindowForTarget", map[string]any{"targetId": tid(1)})
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"error":{"code":-32601,"message":"cdprelay: 'Browser.getWindowForTarget' is not available through this extension"}}`, *m.ID))
}

// TestGetDevToolsTarget: Chrome's answers for a target with no DevTools
// window, an unknown one and none.
func TestGetDevToolsTarget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	h.autoAttach(c)
	for _, tt := range []struct {
		session string
		params  any
		want    string
	}{
		{"", map[string]any{"targetId": tid(1)}, `"result":{}`},
		{"pw-tab-1", map[string]any{"targetId": tid(2)}, `"sessionId":"pw-tab-1","result":{}`},
		{"", map[string]any{"targetId": "nope"}, `"error":{"code":-32602,"message":"No target with given id found"}`},
		{"", nil, `"error":{"code":-32602,"message":"<any>"}`},
	} {
		m := h.callMsg(c, tt.session, "Target.getDevToolsTarget", tt.params)
		if err := matchJSON(m.Raw, fmt.Sprintf(`{"id":%d,%s}`, *m.ID, tt.want)); err != nil {
			t.Errorf("%v: %v\n got: %s", tt.params, err, m.Raw)
		}
	}
}

// TestRememberedBrowser: /json/version names the browser its extension
// last reported, across a restart of the relay, before the extension has
// connected again.
func TestRememberedBrowser(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "state", "browser.json")
	h := newHarness(t, config.Config{BrowserFile: file})
	_, body := h.get("/json/version", "")
	var v map[string]string
	mustDecode(t, body, &v)
	if v["Browser"] != "Chrome" {
		t.Errorf("before any extension: %v", v)
	}
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	h.waitFor("the browser to be remembered", func() bool {
		b, err := os.ReadFile(file)
		return err == nil && json.Valid(b)
	})
	e.Close()
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file: %v %v", fi, err)
	}

	again := newHarness(t, config.Config{BrowserFile: file})
	_, body = again.get("/json/version", "")
	mustDecode(t, body, &v)
	if v["Browser"] != fakeProduct || v["User-Agent"] != fakeUA {
		t.Errorf("after a restart, before the extension: %v", v)
	}
}

// TestKeepaliveToBothExtensions: the relay's own data message reaches the
// extension every ExtensionKeepalive, the stock one included, which
// answers an error, and nothing else is disturbed.
func TestKeepaliveToBothExtensions(t *testing.T) {
	t.Parallel()
	for _, x := range extensions {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{ExtensionKeepalive: 20 * time.Millisecond})
			e := h.ext(x.with(fakeext.Options{Tabs: twoTabs}))
			h.waitFor("keepalives", func() bool { return e.Keepalives() >= 3 })
			c := h.client()
			h.autoAttach(c)
			h.call(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
		})
	}
}

// FuzzDetachEvents: whatever an extension says of a detach or a removal,
// the relay does not panic and keeps its lock usable.
func FuzzDetachEvents(f *testing.F) {
	f.Add([]byte(`[{"tabId":1},"target_closed",{"cause":"extension_frame","cleared":true,"guard":true}]`), []byte(`[1,{"withdrawn":true,"cause":"restricted_url"}]`))
	f.Add([]byte(`[{"tabId":1},"target_closed",{"cause":"discarded","replacedBy":7}]`), []byte(`[1,{"replacedBy":7}]`))
	f.Add([]byte(`[{"tabId":1},"canceled_by_user"]`), []byte(`[1,null]`))
	f.Add([]byte(`[{"tabId":1},"target_closed","cause"]`), []byte(`[1,{"withdrawn":"yes"}]`))
	f.Fuzz(func(t *testing.T, detach, removed []byte) {
		if cdp.ParseDetachCause(detach).Text() == "" && cdp.ParseDetachCause(detach).Cause != "" {
			t.Errorf("a cause without words: %q", detach)
		}
		srv, err := New(config.Config{})
		if err != nil {
			t.Fatal(err)
		}
		in := srv.Default()
		x := ext.New(in, nil, in.Log)
		st := in.Lock()
		st.Ext = x
		st.Features = ext.FeaturesOf(ourFeatures)
		for _, id := range []int64{1, 2} {
			st.Tabs[id] = &core.Tab{Id: id, TargetID: fmt.Sprint("T", id)}
		}
		in.Unlock()
		x.OnDetach(detach)
		x.OnTabRemoved(removed)
		if n := len(in.Status().Tabs); n > 2 {
			t.Errorf("%d tabs", n)
		}
	})
}
