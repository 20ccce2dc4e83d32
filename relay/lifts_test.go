package relay

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/replay"

	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// plantCalls are settings a client makes on its full tab, one of each
// kind the tiers treat differently.
var plantCalls = []struct {
	method string
	params map[string]any
}{
	{"Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{"X-Planted": "1"}}},
	{"Emulation.setTimezoneOverride", map[string]any{"timezoneId": "Asia/Tokyo"}},
	{"Emulation.setDeviceMetricsOverride", map[string]any{"width": 400, "height": 300, "deviceScaleFactor": 1, "mobile": false}},
	{"Runtime.addBinding", map[string]any{"name": "b1"}},
	{"Emulation.setSensorOverrideEnabled", map[string]any{"enabled": true, "type": "gyroscope"}},
	{"Runtime.addBinding", map[string]any{"name": "b2"}},
	{"Profiler.start", nil},
	{"WebAuthn.enable", nil},
	{"Page.setBypassCSP", map[string]any{"enabled": true}},
	{"Emulation.setSensorOverrideEnabled", map[string]any{"enabled": true, "type": "accelerometer"}},
}

// TestTierSettingsFollowTheTab: what the client set up on a full site is
// taken out of Chrome as the tab goes to a stricter one — what acts on a
// site or tells it anything for read-only and blind, how a page is shown
// for blind only — and put back, in the order it was made, on a full one.
func TestTierSettingsFollowTheTab(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Handler: scriptHandler(), Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	for _, p := range plantCalls {
		h.call(c, sess, p.method, p.params)
	}
	readOnlyLifts := []string{
		`Network.setExtraHTTPHeaders {"headers":{}}`,
		`Emulation.setTimezoneOverride {"timezoneId":""}`,
		`Emulation.setSensorOverrideEnabled {"enabled":false,"type":"gyroscope"}`,
		`Emulation.setSensorOverrideEnabled {"enabled":false,"type":"accelerometer"}`,
		`WebAuthn.disable `,
		`Page.setBypassCSP {"enabled":false}`,
	}
	blindLifts := []string{
		`Emulation.clearDeviceMetricsOverride `,
		`Runtime.removeBinding {"name":"b1"}`,
		`Runtime.removeBinding {"name":"b2"}`,
		`Profiler.stop `,
	}

	// The client takes the tab to a read-only site: what acts on it is
	// out before the navigation is sent.
	from := len(e.Commands())
	h.call(c, sess, "Page.navigate", map[string]any{"url": "https://ro.example/"})
	sent := cdpSent(e, from)
	nav := indexOf(sent, "Page.navigate")
	for _, want := range readOnlyLifts {
		if i := indexOf(sent, want); i < 0 || i > nav {
			t.Errorf("%s was not sent before the navigation: %q", want, sent)
		}
	}
	for _, not := range blindLifts {
		if indexOf(sent, not) >= 0 {
			t.Errorf("%s on the way to a read-only site: %q", not, sent)
		}
	}
	e.Navigate(1, "https://ro.example/", "RO")

	// The page takes itself to a blind site: the rest goes too, at the
	// first word of it, and what went before is not sent again.
	from = len(e.Commands())
	e.Event(1, "", "Page.frameRequestedNavigation", map[string]any{"frameId": tid(1), "url": "https://blind.example/", "disposition": "currentTab", "reason": "scriptInitiated"})
	h.waitFor("the blind lifts", func() bool {
		s := cdpSent(e, from)
		for _, want := range blindLifts {
			if indexOf(s, want) < 0 {
				return false
			}
		}
		return true
	})
	for _, not := range readOnlyLifts {
		if indexOf(cdpSent(e, from), not) >= 0 {
			t.Errorf("%s sent again: %q", not, cdpSent(e, from))
		}
	}
	e.Navigate(1, "https://blind.example/", "B")

	// Back on a full site: everything is back, as it was made, in order.
	from = len(e.Commands())
	e.Navigate(1, "https://a.example/2", "A2")
	var want []string
	for _, p := range plantCalls {
		b, _ := json.Marshal(p.params)
		if p.params == nil {
			b = nil
		}
		want = append(want, p.method+" "+string(b))
	}
	h.waitFor("the settings put back", func() bool { return indexOf(cdpSent(e, from), want[len(want)-1]) >= 0 })
	sent = cdpSent(e, from)
	last := -1
	for _, w := range want {
		i := indexOf(sent, w)
		if i < 0 || i < last {
			t.Fatalf("put back: %q, want in this order %q", sent, want)
		}
		last = i
	}
}

// blocker holds Chrome's answer to the commands it is given until let go.
type liftBlocker struct {
	match   func(method string, params json.RawMessage) bool
	release chan struct{}
	once    sync.Once
}

func (b *liftBlocker) handle(tabID int, sid, method string, params json.RawMessage) (any, error) {
	if b.match(method, params) {
		<-b.release
	}
	return scriptHandler()(tabID, sid, method, params)
}

func (b *liftBlocker) letGo() { b.once.Do(func() { close(b.release) }) }

// pausedDoc is a Fetch.requestPaused of the tab's main frame.
func pausedDoc(id, url, method string, headers map[string]string) map[string]any {
	return map[string]any{"requestId": id, "frameId": tid(1), "resourceType": "Document",
		"request": map[string]any{"url": url, "method": method, "headers": headers, "hasPostData": method == "POST"}}
}

// TestTierNavigationSentAgain: Chrome keeps every command for the page
// back while a navigation is under way. A navigation into a stricter page
// that comes before the lifts for it are answered is cancelled, and sent
// again to the same address once they are; its request then goes without
// the client's headers. One that posts a form cannot be sent again: it
// is refused.
func TestTierNavigationSentAgain(t *testing.T) {
	for _, post := range []bool{false, true} {
		name := "get"
		if post {
			name = "post"
		}
		t.Run(name, func(t *testing.T) {
			b := &liftBlocker{release: make(chan struct{}), match: func(m string, p json.RawMessage) bool {
				return m == "Network.setExtraHTTPHeaders" && strings.Contains(string(p), `{}`)
			}}
			defer b.letGo()
			rec := &auditRecorder{}
			h := newHarness(t, config.Config{Policy: tiers, Observer: rec})
			e := h.ext(fakeext.Options{Handler: b.handle, Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}})
			c := h.client()
			sess := h.autoAttach(c)[0]
			h.call(c, sess, "Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{"X-Planted": "1"}})
			h.call(c, sess, "Network.setUserAgentOverride", map[string]any{"userAgent": "planted"})

			method := "GET"
			if post {
				method = "POST"
			}
			headers := map[string]string{"Referer": "https://a.example/", "X-Planted": "1", "User-Agent": "planted", "Accept": "text/html"}
			from := len(e.Commands())
			e.Event(1, "", "Fetch.requestPaused", pausedDoc("R1", "https://blind.example/x", method, headers))
			h.waitFor("the navigation cancelled", func() bool {
				return indexOf(cdpSent(e, from), `Fetch.failRequest {"errorReason":"Aborted","requestId":"R1"}`) >= 0
			})
			if indexOf(cdpSent(e, from), "Fetch.continueRequest") >= 0 {
				t.Fatalf("the request went on before the lifts: %q", cdpSent(e, from))
			}
			b.letGo()
			if post {
				h.waitFor("the refusal audited", func() bool { return rec.find(api.KindNavigate, "not sent again") })
				h.call(c, "", "Target.getTargets", nil)
				if indexOf(cdpSent(e, from), "Page.navigate") >= 0 {
					t.Fatalf("a form's post was sent again: %q", cdpSent(e, from))
				}
				return
			}
			h.waitFor("the navigation sent again", func() bool {
				return indexOf(cdpSent(e, from), `Page.navigate {"referrer":"https://a.example/","url":"https://blind.example/x"}`) >= 0
			})
			// Chrome's request for it, made with what the browser side
			// had already lifted or not: it goes without the client's.
			from = len(e.Commands())
			e.Event(1, "", "Fetch.requestPaused", pausedDoc("R2", "https://blind.example/x", "GET", headers))
			h.waitFor("the request let go", func() bool { return indexOf(cdpSent(e, from), "Fetch.continueRequest") >= 0 })
			got := cdpSent(e, from)[indexOf(cdpSent(e, from), "Fetch.continueRequest")]
			if strings.Contains(got, "X-Planted") || strings.Contains(got, "planted") || !strings.Contains(got, `"R2"`) || !strings.Contains(got, "Accept") {
				t.Fatalf("the request went on as %s", got)
			}
		})
	}
}

// TestTierSettingsRefused: what no command takes back is refused while
// some sites have a tier — and so is a setter the relay does not know —
// on any site; and a domain whose switch has an effect is not switched
// on on a blind page. Without tiers, all of it goes to the tab.
func TestTierSettingsRefused(t *testing.T) {
	calls := []struct {
		method string
		params any
	}{
		{"Emulation.setHardwareConcurrencyOverride", map[string]any{"hardwareConcurrency": 7}},
		{"Page.addScriptToEvaluateOnLoad", map[string]any{"scriptSource": "fetch('/x')"}},
		// (Emulation.setVirtualTimePolicy is refused with or without tiers,
		// since Chrome keeps it after a Stop: brake_test.go.)
		{"Cast.startTabMirroring", map[string]any{"sinkName": "x"}},
		{"Emulation.setSomethingNewOverride", map[string]any{"value": 1}},
	}
	for _, withTiers := range []bool{true, false} {
		var p core.Policy = tiers
		if !withTiers {
			p = tierPolicy{}
		}
		h := newHarness(t, config.Config{Policy: p})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}, {ID: 2, URL: "https://blind.example/", Title: "B"}}})
		c := h.client()
		sessions := h.autoAttach(c)
		for _, tc := range calls {
			before := len(e.Commands())
			m := h.callMsg(c, sessions[0], tc.method, tc.params)
			refused := m.Error != nil && strings.Contains(m.Error.Message, "refused while some sites are read-only or blind")
			if refused != withTiers {
				t.Errorf("tiers %v: %s answered %s", withTiers, tc.method, m.Raw)
			}
			if reached := len(commandsSince(e, before)) > 0; reached == withTiers {
				t.Errorf("tiers %v: %s reached the tab: %v", withTiers, tc.method, reached)
			}
		}
		if !withTiers {
			continue
		}
		blind := sessions[1]
		for _, m := range []string{"WebAuthn.enable", "BluetoothEmulation.enable", "FedCm.enable", "DeviceAccess.enable"} {
			if r := h.callMsg(c, blind, m, nil); r.Error == nil {
				t.Errorf("%s on a blind page: %s", m, r.Raw)
			}
		}
		if r := h.callMsg(c, blind, "Network.enable", nil); r.Error != nil {
			t.Errorf("Network.enable on a blind page: %s", r.Raw)
		}
	}
}

// TestTierChildSettingsFollowTheFrame: an out-of-process frame's own
// settings are lifted when the frame goes to a stricter site, on its
// own session.
func TestTierChildSettingsFollowTheFrame(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Handler: scriptHandler(), Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	from := len(c.Messages())
	e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": "S-F", "waitingForDebugger": true,
		"targetInfo": map[string]any{"targetId": "F-1", "type": "iframe", "url": "https://b.example/frame", "title": "", "attached": true}})
	h.event(c, from, "Target.attachedToTarget")
	h.call(c, "S-F", "Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{"X-Planted": "1"}})
	h.call(c, "S-F", "Emulation.setLocaleOverride", map[string]any{"locale": "fr"})
	h.call(c, "S-F", "Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true})

	before := len(e.Commands())
	e.Event(1, "S-F", "Page.frameRequestedNavigation", map[string]any{"frameId": "F-1", "url": "https://ro.example/", "disposition": "currentTab", "reason": "scriptInitiated"})
	h.waitFor("the frame's lifts", func() bool {
		n := 0
		for _, cmd := range fenceCallsSince(e, before) {
			if cmd.Debuggee.SessionID == "S-F" && (cmd.Method == "Network.setExtraHTTPHeaders" || cmd.Method == "Emulation.setLocaleOverride") {
				n++
			}
		}
		return n == 2
	})
	for _, cmd := range fenceCallsSince(e, before) {
		if cmd.Method == "Emulation.setFocusEmulationEnabled" || cmd.Debuggee.SessionID == "" && cmd.Method == "Network.setExtraHTTPHeaders" {
			t.Errorf("sent on the way to a read-only site: %s on %q %s", cmd.Method, cmd.Debuggee.SessionID, cmd.Params)
		}
	}
}

// fenceCallsSince lists the CDP commands e was sent from index from on.
func fenceCallsSince(e *fakeext.Ext, from int) []cdpCall {
	var out []cdpCall
	for _, c := range e.Commands()[from:] {
		if c.Method != "chrome.debugger.sendCommand" {
			continue
		}
		var args []json.RawMessage
		if json.Unmarshal(c.Params, &args) != nil || len(args) < 2 {
			continue
		}
		var call cdpCall
		json.Unmarshal(args[0], &call.Debuggee)
		json.Unmarshal(args[1], &call.Method)
		if len(args) > 2 {
			call.Params = args[2]
		}
		out = append(out, call)
	}
	return out
}

// TestRootCommandNotTheCarryingTabs: a command of the browser's, sent at
// the root, is not judged by the access of the tab the relay would carry
// it on: with the client's only tab blind, it may still open a tab on a
// full site and list its targets.
func TestRootCommandNotTheCarryingTabs(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/", Title: "B"}}})
	c := h.client()
	h.autoAttach(c)
	if m := h.callMsg(c, "", "Target.createTarget", map[string]any{"url": "https://a.example/"}); m.Error != nil {
		t.Fatalf("Target.createTarget at the root: %s", m.Raw)
	}
	if m := h.callMsg(c, "", "Target.getTargets", nil); m.Error != nil {
		t.Fatalf("Target.getTargets at the root: %s", m.Raw)
	}
	// A browser session is the root under another name.
	bs := jsonString(t, h.call(c, "", "Target.attachToBrowserTarget", nil), "sessionId")
	if m := h.callMsg(c, bs, "Target.createTarget", map[string]any{"url": "https://a.example/2"}); m.Error != nil {
		t.Fatalf("Target.createTarget on a browser session: %s", m.Raw)
	}
	// Still: not into a blind site, and a command the tab would run is
	// the tab's.
	if m := h.callMsg(c, "", "Target.createTarget", map[string]any{"url": "https://blind.example/x"}); m.Error == nil {
		t.Fatalf("Target.createTarget into a blind site: %s", m.Raw)
	}
}

// The settings a client can make are all classified: every command of
// the protocol whose name says it sets, starts, adds, forces or emulates
// something, or switches on a domain, is lifted, refused, kept, or of a
// kind that needs none of that (said by its domain or name below).
func TestSettingsClassified(t *testing.T) {
	notSettings := map[string]string{
		"Browser.": "the browser's: the relay answers it",
		"Target.":  "the relay's own", "Storage.": "judged by the storage it names",
		"Extensions.": "an extension's storage", "IndexedDB.": "judged by the storage it names",
		"DOMStorage.": "judged by the storage it names", "CacheStorage.": "judged by the storage it names",
		"DOM.": "acts on a node of the document", "CSS.": "acts on a node or style sheet of the document",
		"Debugger.":    "a pause, which the relay resumes on a page automation may not see",
		"DOMDebugger.": "a pause", "EventBreakpoints.": "a pause", "Input.": "one input event, on the page it is sent to",
		"Animation.": "an animation of the document", "Fetch.": "the navigation backstop's, with the client's patterns",
		"WebAuthn.": "an authenticator of WebAuthn.enable, which is lifted", "BluetoothEmulation.": "of BluetoothEmulation.enable, which is lifted",
		"SmartCardEmulation.": "of SmartCardEmulation.enable, which is lifted", "LayerTree.": "a snapshot",
		"Page.startScreencast": "frames, which the relay withholds on a blind page", "Tracing.": "refused",
		"Emulation.clear": "takes a setting back", "Emulation.setSensorOverrideReadings": "readings of a lifted override",
		"Emulation.setPressureStateOverride": "the state of a lifted override", "Emulation.removeScreen": "takes a setting back",
		"Network.setCookie": "cookie writes, the policy's", "Network.clearBrowser": "the policy's",
		"Page.addScriptToEvaluateOnNewDocument": "followed by the tiers (worldscripts.go)", "Page.setDocumentContent": "acts on the document",
		"Runtime.addBinding": "lifted", "Overlay.setShowGridOverlays": "of nodes of the document",
		"Overlay.setShowFlexOverlays": "of nodes of the document", "Overlay.setShowScrollSnapOverlays": "of nodes of the document",
		"Overlay.setShowContainerQueryOverlays": "of nodes of the document", "Overlay.setShowIsolatedElements": "of nodes of the document",
		"Overlay.setShowInspectedElementAnchor": "of a node of the document", "HeapProfiler.addInspectedHeapObject": "an object of the document",
		"ServiceWorker.startWorker": "one worker, once", "Cast.enable": "events only", "BackgroundService.": "events, by origin",
		"Page.addCompilationCache": "a cache entry, used only for the script it was made for", "Memory.simulatePressureNotification": "once",
		"Network.emulateNetworkConditions": "lifted", "Page.setDownloadBehavior": "lifted",
	}
	known := func(name string) bool {
		if _, ok := access.Lift(name); ok {
			return true
		}
		if access.Refused(name) != "" || access.Kept(name) != "" {
			return true
		}
		for prefix := range notSettings {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		}
		return false
	}
	var missing []string
	for _, name := range cdp.Commands() {
		if !access.SetterName(name) {
			continue
		}
		if strings.HasSuffix(name, ".enable") && !access.HasEffect(name) {
			if _, lifted := access.Lift(name); !lifted {
				continue // a domain's events
			}
		}
		if !known(name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("settings not classified (tiers/settings.go): %s", strings.Join(missing, " "))
	}
	// What is lifted is kept for the tab, as a resume keeps it.
	for name := range access.Lifted() {
		if strings.HasSuffix(name, ".enable") {
			continue // a domain's switch, kept as one
		}
		if replay.KindOf(name) == replay.None {
			t.Errorf("%s is lifted but not kept (relay/internal/replay)", name)
		}
	}
}
