package viewer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/gorilla/websocket"
)

func TestSubscribeStreamsFrames(t *testing.T) {
	h := newHarness(t, Config{})
	v := h.viewer("", nil)
	if !v.waitType(msgHello).Interactive {
		t.Error("the person's viewer is not interactive")
	}
	list := v.waitType(msgInstances)
	if len(list.Instances) != 1 || len(list.Instances[0].Tabs) != 1 || list.Instances[0].Tabs[0].Status != statusIdle {
		t.Fatalf("instances = %s", list.Raw)
	}
	v.subscribe()
	start := h.waitCommand("Page.startScreencast", 1)[0]
	if want := `{"format":"jpeg","quality":70,"maxWidth":1920,"maxHeight":1080,"everyNthFrame":1}`; string(start.Params) != want {
		t.Errorf("startScreencast params %s, want %s", start.Params, want)
	}
	var sent [][]byte
	for i := range 5 {
		img := testJPEG(t, 64+i, 48, i)
		sent = append(sent, img)
		h.frame(int64(100+i), img)
		v.wait(0, "frame", func(m vmsg) bool { return m.Type == msgFrame && m.Seq == uint64(i+1) })
		v.wait(0, "its jpeg", func(m vmsg) bool { return m.Type == "jpeg" && bytes.Equal(m.JPEG, img) })
	}
	metas, jpegs := v.frames()
	for i := range sent {
		if !bytes.Equal(jpegs[i], sent[i]) {
			t.Fatalf("frame %d content differs", i)
		}
		m := metas[i]
		if m.Seq != uint64(i+1) || m.Tab != tabID || m.Instance != h.inst || m.Width != 64+i || m.Height != 48 || m.DeviceW != 800 || m.DeviceH != 600 {
			t.Errorf("frame %d metadata %s", i, m.Raw)
		}
	}
	acks := h.waitCommand("Page.screencastFrameAck", 5)
	for i, a := range acks {
		if want := fmt.Sprintf(`{"sessionId":%d}`, 100+i); string(a.Params) != want {
			t.Errorf("ack %d: %s, want %s", i, a.Params, want)
		}
	}
	if st := v.waitType(msgStatus); st.Status != "starting" && st.Status != "live" {
		t.Errorf("first status %s", st.Status)
	}

	// A second viewer gets the last frame at once.
	w := h.viewer("", nil)
	w.subscribe()
	w.wait(0, "the last frame", func(m vmsg) bool { return m.Type == "jpeg" && bytes.Equal(m.JPEG, sent[4]) })

	// Unsubscribing both stops the screencast.
	v.sendAwait(map[string]any{"type": "unsubscribe"}, msgStatus, func(m vmsg) bool { return m.Status == statusUnsubscribed })
	w.send(map[string]any{"type": "unsubscribe"})
	h.waitCommand("Page.stopScreencast", 1)
}

// TestFrozenViewer is the live view's TestSendFreeze: a viewer that stops
// reading must cost the other viewers no frame.
func TestFrozenViewer(t *testing.T) {
	h := newHarness(t, Config{})
	h.frozenViewer()
	a, b := h.viewer("", nil), h.viewer("", nil)
	a.subscribe()
	b.subscribe()
	h.waitCommand("Page.startScreencast", 1)

	// 14 MB in all: far more than the frozen socket takes in.
	big := append(testJPEG(t, 512, 384, 1), make([]byte, 200<<10)...)
	const n = 60
	start := time.Now()
	var worst time.Duration
	for i := 1; i <= n; i++ {
		t0 := time.Now()
		h.frame(int64(i), big)
		for _, v := range []*vclient{a, b} {
			_, at := v.wait(0, "frame", func(m vmsg) bool { return m.Type == msgFrame && m.Seq == uint64(i) })
			v.wait(at+1, "its image", func(m vmsg) bool { return m.Type == "jpeg" })
		}
		worst = max(worst, time.Since(t0))
	}
	t.Logf("%d frames of %d KB to two viewers beside a frozen one in %v (slowest %v)", n, len(big)>>10, time.Since(start), worst)
	if worst > 2*time.Second {
		t.Errorf("a frame took %v to reach the healthy viewers", worst)
	}
	if n := h.view.connCount(); n != 3 {
		t.Errorf("%d viewers connected at the end, want 3: the frozen one did not stay frozen throughout", n)
	}
	for _, v := range []*vclient{a, b} {
		metas, jpegs := v.frames()
		if len(jpegs) < n {
			t.Fatalf("a healthy viewer got %d of %d frames", len(jpegs), n)
		}
		for i, m := range metas[len(metas)-n:] {
			if m.Seq != uint64(i+1) {
				t.Fatalf("healthy viewer: frame %d has seq %d", i, m.Seq)
			}
		}
	}
}

// TestFrozenViewerDoesNotDelayClient: with frames streaming, a viewer
// that reads nothing must not slow the CDP client's replies. The client's
// calls are timed with a healthy viewer first, then with a frozen one
// added: a frozen viewer that held anything up would stall the relay's
// read loop of the extension, which carries the client's replies too.
func TestFrozenViewerDoesNotDelayClient(t *testing.T) {
	h := newHarness(t, Config{})
	c, session := h.client()
	healthy := h.viewer("", nil)
	healthy.subscribe()
	h.waitCommand("Page.startScreencast", 1)

	img := append(testJPEG(t, 256, 192, 2), make([]byte, 40<<10)...)
	ev := frameEvent(1, img)
	stop := make(chan struct{})
	done := make(chan struct{})
	var emitted atomic.Int64
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(4 * time.Millisecond):
			}
			emitted.Add(1)
			if h.ext.WriteRaw(ev) != nil {
				return
			}
		}
	}()
	// Calls spread over half a second, so that frames stream throughout.
	calls := func() (p50, worst time.Duration) {
		var lat []time.Duration
		for i := range 100 {
			time.Sleep(5 * time.Millisecond)
			t0 := time.Now()
			res, err := c.Call(h.ctx, session, "Runtime.evaluate", map[string]any{"expression": "1+1"})
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			if !strings.Contains(string(res), `"value":2`) {
				t.Fatalf("call %d: %s", i, res)
			}
			lat = append(lat, time.Since(t0))
		}
		slices.Sort(lat)
		return lat[len(lat)/2], lat[len(lat)-1]
	}
	base50, baseWorst := calls()

	h.frozenViewer()
	h.waitFor("the frozen viewer to subscribe", func() bool {
		h.view.mu.Lock()
		defer h.view.mu.Unlock()
		for _, w := range h.view.watches {
			return w.tap.Subscribers() == 2
		}
		return false
	})
	// Let its socket fill: 250 frames are 12 MB, far more than it takes
	// in. At 4 ms a frame that is one second, unless something holds the
	// relay up.
	from := emitted.Load()
	fill := time.Now()
	h.waitFor("frames to the frozen viewer", func() bool { return emitted.Load() > from+250 })
	if d := time.Since(fill); d > 5*time.Second {
		t.Errorf("250 frames took %v to stream once a viewer froze", d)
	}
	from = emitted.Load()
	p50, worst := calls()
	frames := emitted.Load() - from
	close(stop)
	<-done
	t.Logf("client calls: healthy viewer only p50 %v worst %v; with a frozen viewer, while %d frames of %d KB streamed, p50 %v worst %v",
		base50, baseWorst, frames, len(img)>>10, p50, worst)
	if frames < 30 {
		t.Fatalf("only %d frames streamed meanwhile: the test proved nothing", frames)
	}
	if p50 > 5*base50+50*time.Millisecond || worst > 5*time.Second {
		t.Errorf("the frozen viewer slowed the client: p50 %v (was %v), worst %v", p50, base50, worst)
	}
	if n := h.view.connCount(); n != 2 {
		t.Errorf("%d viewers connected at the end, want 2: the frozen one did not stay frozen throughout", n)
	}
	// The live view's frames never reach the client.
	if evs := c.Events("Page.screencastFrame"); len(evs) != 0 {
		t.Errorf("the client got %d of the live view's frames", len(evs))
	}
}

// TestTakeOver: while a viewer holds the tab, the client's input is
// refused and told why; the viewer's input reaches the tab; hand-back
// restores the client.
func TestTakeOver(t *testing.T) {
	h := newHarness(t, Config{})
	c, session := h.client()
	click := map[string]any{"type": "mousePressed", "x": 10, "y": 10, "button": "left", "clickCount": 1}
	if _, err := c.Call(h.ctx, session, "Input.dispatchMouseEvent", click); err != nil {
		t.Fatalf("before the take-over: %v", err)
	}

	v := h.viewer("", nil)
	other := h.viewer("", nil)
	v.subscribe()
	other.subscribe()
	h.frame(1, testJPEG(t, 80, 60, 1))
	v.waitType("jpeg")
	v.mustFail(map[string]any{"type": "input", "input": map[string]any{"kind": "mouse", "action": "click", "x": 0.5, "y": 0.5}}, "take control")

	v.send(map[string]any{"type": "take-control"})
	ctl := v.waitType(msgControl)
	if ctl.Holder != v.name || ctl.Tab != tabID {
		t.Fatalf("control = %s", ctl.Raw)
	}
	other.wait(0, "control", func(m vmsg) bool { return m.Type == msgControl && m.Holder == v.name })
	if by := h.relay.Default().Controller(tabID); by != v.name {
		t.Fatalf("relay says %q controls the tab", by)
	}
	other.mustFail(map[string]any{"type": "take-control"}, "already controls")

	m, err := c.CallMessage(h.ctx, session, "Input.dispatchMouseEvent", click)
	if err != nil {
		t.Fatal(err)
	}
	if m.Error == nil || !strings.Contains(m.Error.Message, "taken control") {
		t.Fatalf("client input during the take-over: %s", m.Raw)
	}
	if _, err := c.Call(h.ctx, session, "Runtime.evaluate", map[string]any{"expression": "1"}); err != nil {
		t.Errorf("a read was refused during the take-over: %v", err)
	}
	ev, err := c.WaitEvent(h.ctx, "CDPRelay.controlChanged")
	if err != nil || !strings.Contains(string(ev.Params), `"controlled":true`) {
		t.Errorf("client not told: %s %v", ev.Raw, err)
	}

	before := h.countCommands("Input.dispatchMouseEvent")
	if msg := v.request(map[string]any{"type": "input", "input": map[string]any{"kind": "mouse", "action": "click", "x": 0.25, "y": 0.5}}); msg != "" {
		t.Fatalf("viewer click refused: %s", msg)
	}
	calls := h.waitCommand("Input.dispatchMouseEvent", before+2)[before:]
	want := []string{
		`{"type":"mousePressed","x":200,"y":300,"button":"left","clickCount":1}`,
		`{"type":"mouseReleased","x":200,"y":300,"button":"left","clickCount":1}`,
	}
	for i, c := range calls {
		if string(c.Params) != want[i] {
			t.Errorf("viewer click %d reached the tab as %s, want %s", i, c.Params, want[i])
		}
	}
	other.mustFail(map[string]any{"type": "input", "input": map[string]any{"kind": "bring-to-front"}}, "take control")

	v.send(map[string]any{"type": "hand-back"})
	other.wait(0, "hand-back", func(m vmsg) bool { return m.Type == msgControl && m.Holder == "" })
	if _, err := c.Call(h.ctx, session, "Input.dispatchMouseEvent", click); err != nil {
		t.Fatalf("after hand-back: %v", err)
	}
	v.mustFail(map[string]any{"type": "input", "input": map[string]any{"kind": "bring-to-front"}}, "take control")
}

func TestDisconnectHandsBack(t *testing.T) {
	h := newHarness(t, Config{})
	c, session := h.client()
	v := h.viewer("", nil)
	v.subscribe()
	v.send(map[string]any{"type": "take-control"})
	v.waitType(msgControl)
	v.close()
	h.waitFor("hand-back", func() bool { return h.relay.Default().Controller(tabID) == "" })
	if _, err := c.Call(h.ctx, session, "Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": 1, "y": 1}); err != nil {
		t.Fatalf("after the viewer left: %v", err)
	}
	var got []string
	for _, ev := range c.Events("CDPRelay.controlChanged") {
		got = append(got, string(ev.Params))
	}
	if len(got) != 2 || !strings.Contains(got[1], `"controlled":false`) {
		t.Errorf("controlChanged events: %v", got)
	}
}

func TestViewOnly(t *testing.T) {
	h := newHarness(t, Config{})
	v := h.viewer("mode=view", nil)
	if v.waitType(msgHello).Interactive {
		t.Fatal("?mode=view is interactive")
	}
	v.subscribe()
	h.frame(1, testJPEG(t, 8, 8, 1))
	v.waitType("jpeg")
	v.mustFail(map[string]any{"type": "take-control"}, "only watch")
	v.mustFail(map[string]any{"type": "input", "input": map[string]any{"kind": "mouse", "action": "click", "x": 0.5, "y": 0.5}}, "only watch")
	if by := h.relay.Default().Controller(tabID); by != "" {
		t.Errorf("a view-only viewer took control: %q", by)
	}
	if n := h.countCommands("Input.dispatchMouseEvent"); n != 0 {
		t.Errorf("a view-only viewer's input reached the tab %d times", n)
	}
}

// TestDefaultIsViewOnly: without a hook that grants it, no viewer acts,
// not even one on this machine: the agent runs here too. A view-only
// viewer is told why and how the person acts, and is named without a
// credential.
func TestDefaultIsViewOnly(t *testing.T) {
	h := newRawHarness(t, Config{Credential: func(r *http.Request) Credential {
		return Credential{Name: "ignored: not interactive", Hint: "open the person's link", KeyRefused: r.Header.Get("X-Stale") != ""}
	}})
	v := h.viewer("", http.Header{"X-Stale": {"1"}})
	hello := v.waitType(msgHello)
	if hello.Interactive || hello.Hint != "open the person's link" || !hello.KeyRefused || strings.Contains(hello.Viewer, "ignored") {
		t.Fatalf("hello %s", hello.Raw)
	}
	v.subscribe()
	h.frame(1, testJPEG(t, 8, 8, 1))
	v.waitType("jpeg")
	for _, m := range []map[string]any{
		{"type": "take-control"},
		{"type": "stop", "instance": h.inst},
		{"type": "resume", "instance": h.inst},
		{"type": "approve", "instance": h.inst, "approval": 1},
		{"type": "deny", "instance": h.inst, "approval": 1},
		{"type": "answer-dialog", "instance": h.inst, "tab": tabID, "accept": true},
		{"type": "input", "input": map[string]any{"kind": "navigate", "url": "https://example.org/"}},
	} {
		v.mustFail(m, "only watch")
	}
	if stopped, _ := h.relay.Default().Stopped(); stopped {
		t.Error("a view-only viewer stopped the automation")
	}
}

// TestInteractiveNamedByCredential: the person's viewer is named with the
// credential it acts with, in its hello, in what the relay records of a
// take-over and a Stop, and in what the automation is told.
func TestInteractiveNamedByCredential(t *testing.T) {
	h := newHarness(t, Config{Credential: func(*http.Request) Credential {
		return Credential{Name: "person key", Hint: "never shown to the person"}
	}})
	v := h.viewer("", nil)
	hello := v.waitType(msgHello)
	if !hello.Interactive || !strings.HasSuffix(hello.Viewer, " (person key)") || hello.Hint != "" {
		t.Fatalf("hello %s", hello.Raw)
	}
	v.sendAwait(map[string]any{"type": "stop", "instance": h.inst}, msgInstances, func(m vmsg) bool {
		return len(m.Instances) == 1 && m.Instances[0].Stopped
	})
	if _, by := h.relay.Default().Stopped(); by != hello.Viewer {
		t.Errorf("stopped by %q, want %q", by, hello.Viewer)
	}
}

func TestInteractiveHook(t *testing.T) {
	h := newHarness(t, Config{Interactive: func(r *http.Request) bool { return r.Header.Get("X-Scope") == "drive" }})
	if h.viewer("", nil).waitType(msgHello).Interactive {
		t.Error("the hook said view-only")
	}
	if !h.viewer("", http.Header{"X-Scope": {"drive"}}).waitType(msgHello).Interactive {
		t.Error("the hook said interactive")
	}
}

func TestOriginCheck(t *testing.T) {
	h := newHarness(t, Config{})
	host := strings.TrimPrefix(h.hs.URL, "http://")
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"http://" + host, true},
		{"https://" + host, true},
		{"http://evil.example", false},
		{"http://" + host + ".evil.example", false},
		{"null", false},
		{"chrome-extension://abcdefghijklmnop", false},
	} {
		hdr := http.Header{}
		if tc.origin != "" {
			hdr.Set("Origin", tc.origin)
		}
		v, err := h.dialViewer("", hdr)
		if tc.ok != (err == nil) {
			t.Errorf("Origin %q: %v, want ok=%v", tc.origin, err, tc.ok)
		}
		if err == nil {
			go v.readLoop()
			v.close()
		} else if !strings.Contains(err.Error(), "403") {
			t.Errorf("Origin %q: %v, want 403", tc.origin, err)
		}
	}
}

func TestInputRequiresFrameAndRange(t *testing.T) {
	h := newHarness(t, Config{})
	v := h.viewer("", nil)
	v.subscribe()
	v.send(map[string]any{"type": "take-control"})
	v.waitType(msgControl)
	v.mustFail(map[string]any{"type": "input", "input": map[string]any{"kind": "mouse", "action": "click", "x": 0.5, "y": 0.5}}, "no frame")
	h.frame(1, testJPEG(t, 8, 8, 1))
	v.waitType("jpeg")
	v.mustFail(map[string]any{"type": "input", "input": map[string]any{"kind": "mouse", "action": "click", "x": 1.0001, "y": 0.5}}, "outside [0, 1]")
	v.mustFail(map[string]any{"type": "input", "input": map[string]any{"kind": "mouse", "action": "move", "x": 0.5, "y": -0.0001}}, "outside [0, 1]")
	v.mustFail(map[string]any{"type": "input", "input": map[string]any{"kind": "Runtime.evaluate", "expression": "alert(1)"}}, "not allowed")
	v.mustFail(map[string]any{"type": "input"}, "without input")
	if n := h.countCommands("Input.dispatchMouseEvent"); n != 0 {
		t.Errorf("refused input reached the tab %d times", n)
	}
	// (Runtime.enable is the relay's own, at the attach: it keeps Runtime
	// on in every tab.)
	for _, c := range h.tabCommands() {
		if strings.HasPrefix(c.Method, "Runtime.") && c.Method != "Runtime.enable" || strings.Contains(string(c.Params), "alert(1)") {
			t.Errorf("a viewer reached %s %s", c.Method, c.Params)
		}
	}
}

func TestNavigateFence(t *testing.T) {
	var asked, instances []string
	h := newHarness(t, Config{URLFence: func(instance, u string) (bool, string) {
		asked = append(asked, u)
		instances = append(instances, instance)
		if strings.Contains(u, "blocked.example") {
			return false, "blocked by policy"
		}
		return DefaultURLFence(u)
	}})
	v := h.viewer("", nil)
	v.subscribe()
	v.send(map[string]any{"type": "take-control"})
	v.waitType(msgControl)
	nav := func(u string) map[string]any {
		return map[string]any{"type": "input", "input": map[string]any{"kind": "navigate", "url": u}}
	}
	v.mustFail(nav("javascript:alert(document.cookie)"), "javascript")
	v.mustFail(nav("file:///etc/passwd"), "http, https and about:blank")
	v.mustFail(nav("https://blocked.example/"), "blocked by policy")
	if msg := v.request(nav("https://ok.example/path")); msg != "" {
		t.Fatalf("allowed navigation refused: %s", msg)
	}
	navs := h.waitCommand("Page.navigate", 1)
	if len(navs) != 1 || string(navs[0].Params) != `{"url":"https://ok.example/path"}` {
		t.Errorf("navigations reaching the tab: %v", navs)
	}
	if slices.Contains(asked, "javascript:alert(document.cookie)") {
		t.Error("a javascript: URL reached the fence hook instead of being refused first")
	}
	// The fence is asked for the instance the viewer navigates, whose
	// policy profile decides.
	for _, in := range instances {
		if in != h.inst {
			t.Errorf("the fence was asked for instance %q", in)
		}
	}
}

// TestResizeReleasedOnLastUnsubscribe: the override stays while anyone
// watches and is cleared when the last viewer leaves.
func TestResizeReleasedOnLastUnsubscribe(t *testing.T) {
	h := newHarness(t, Config{})
	v, w := h.viewer("", nil), h.viewer("", nil)
	v.subscribe()
	w.subscribe()
	v.send(map[string]any{"type": "take-control"})
	v.waitType(msgControl)
	if msg := v.request(map[string]any{"type": "input", "input": map[string]any{"kind": "resize", "width": 99999, "height": 100}}); msg != "" {
		t.Fatal(msg)
	}
	set := h.waitCommand("Emulation.setDeviceMetricsOverride", 1)
	if want := `{"width":3840,"height":240,"deviceScaleFactor":0,"mobile":false}`; string(set[0].Params) != want {
		t.Errorf("override %s, want %s", set[0].Params, want)
	}
	v.sendAwait(map[string]any{"type": "unsubscribe"}, msgStatus, func(m vmsg) bool { return m.Status == statusUnsubscribed })
	time.Sleep(50 * time.Millisecond)
	if n := h.countCommands("Emulation.clearDeviceMetricsOverride"); n != 0 {
		t.Fatal("cleared while a viewer still watches")
	}
	w.send(map[string]any{"type": "unsubscribe"})
	h.waitCommand("Emulation.clearDeviceMetricsOverride", 1)
	h.waitCommand("Page.stopScreencast", 1)
}

func TestTabGoneIsDetached(t *testing.T) {
	h := newHarness(t, Config{})
	v := h.viewer("", nil)
	v.subscribe()
	h.waitCommand("Page.startScreencast", 1)
	h.ext.CloseTab(tabID)
	v.wait(0, "detached", func(m vmsg) bool { return m.Type == msgStatus && m.Status == "detached" })
	h.waitFor("the watch to end", func() bool {
		h.view.mu.Lock()
		defer h.view.mu.Unlock()
		return len(h.view.watches) == 0
	})
}

func TestInstancesList(t *testing.T) {
	h := newHarness(t, Config{ListEvery: 20 * time.Millisecond})
	v := h.viewer("", nil)
	v.subscribe()
	v.send(map[string]any{"type": "take-control"})
	v.waitType(msgControl)
	h.frame(1, testJPEG(t, 8, 8, 1))
	m, _ := v.wait(0, "a list with the tab live", func(m vmsg) bool {
		return m.Type == msgInstances && len(m.Instances) == 1 && len(m.Instances[0].Tabs) == 1 && m.Instances[0].Tabs[0].Status == "live"
	})
	tab := m.Instances[0].Tabs[0]
	if tab.ID != tabID || tab.URL != "https://example.com/" || tab.Viewers != 1 || tab.ControlledBy != v.name || !tab.Attached {
		t.Errorf("tab = %+v", tab)
	}
	if in := m.Instances[0]; in.ID != h.inst || !in.Default || !in.Extension || strings.Contains(string(m.Raw), h.relay.Default().GUID()) {
		t.Errorf("instance = %s", m.Raw)
	}
}

func TestBadRequests(t *testing.T) {
	h := newHarness(t, Config{})
	v := h.viewer("", nil)
	v.mustFail(map[string]any{"type": "nonsense"}, "unknown message type")
	v.mustFail(map[string]any{"type": "subscribe"}, "needs an instance")
	v.mustFail(map[string]any{"type": "subscribe", "instance": "nope", "tab": 1}, "no such instance")
	v.mustFail(map[string]any{"type": "subscribe", "instance": h.inst, "tab": 999}, "no such shared tab")
	v.mustFail(map[string]any{"type": "unsubscribe"}, "not subscribed")
	v.mustFail(map[string]any{"type": "take-control"}, "subscribe to a tab")
	v.mustFail(map[string]any{"type": "hand-back"}, "does not control")
	from := len(v.messages())
	v.wmu.Lock()
	v.conn.WriteMessage(websocket.TextMessage, []byte(`{"type":`))
	v.conn.WriteMessage(websocket.BinaryMessage, []byte{1, 2, 3})
	v.wmu.Unlock()
	e1, i := v.wait(from, "error", func(m vmsg) bool { return m.Type == msgError })
	e2, _ := v.wait(i+1, "error", func(m vmsg) bool { return m.Type == msgError })
	if !strings.Contains(e1.Message, "malformed") || !strings.Contains(e2.Message, "JSON text") {
		t.Errorf("errors: %q, %q", e1.Message, e2.Message)
	}
	// Errors echo the request's id and type.
	from = len(v.messages())
	v.send(map[string]any{"type": "hand-back", "id": 42})
	e, _ := v.wait(from, "error", func(m vmsg) bool { return m.Type == msgError })
	var raw struct {
		ID      int64  `json:"id"`
		Request string `json:"request"`
	}
	json.Unmarshal(e.Raw, &raw)
	if raw.ID != 42 || raw.Request != "hand-back" {
		t.Errorf("error %s does not echo the request", e.Raw)
	}
}

// TestQueueOverflowCloses: a viewer that reads nothing while messages
// other than frames pile up is closed, not dropped from.
func TestQueueOverflowCloses(t *testing.T) {
	h := newHarness(t, Config{SendQueue: 8})
	h.frozenViewer()
	h.waitCommand("Page.startScreencast", 1)
	// Fill the frozen socket so that its writer blocks.
	big := append(testJPEG(t, 64, 64, 1), make([]byte, 1<<20)...)
	for i := 1; i <= 10; i++ {
		h.frame(int64(i), big)
		time.Sleep(5 * time.Millisecond)
	}
	conns := h.view.connCount
	// Each take/hand-back by another viewer queues a control message for
	// the frozen one.
	v := h.viewer("", nil)
	v.subscribe()
	for i := 0; i < 20 && conns() == 2; i++ {
		// Paced by v's own copy, so that only the frozen viewer falls behind.
		v.sendAwait(map[string]any{"type": "take-control"}, msgControl, func(m vmsg) bool { return m.Holder != "" })
		v.sendAwait(map[string]any{"type": "hand-back"}, msgControl, func(m vmsg) bool { return m.Holder == "" })
	}
	h.waitFor("the frozen viewer to be closed", func() bool { return conns() == 1 })
}

func (s *Server) connCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// TestClientScreencastTee: when the CDP client runs its own screencast,
// viewers see its frames, the live view acks none of them, and when the
// client stops, the live view's own screencast starts again.
func TestClientScreencastTee(t *testing.T) {
	h := newHarness(t, Config{})
	c, session := h.client()
	v := h.viewer("", nil)
	v.subscribe()
	h.waitCommand("Page.startScreencast", 1)
	if _, err := c.Call(h.ctx, session, "Page.startScreencast", map[string]any{"format": "png"}); err != nil {
		t.Fatal(err)
	}
	h.waitCommand("Page.startScreencast", 2)
	acks := h.countCommands("Page.screencastFrameAck")
	img := testJPEG(t, 32, 32, 3)
	for i := 1; i <= 3; i++ {
		h.frame(int64(i), img)
	}
	v.wait(0, "the client's frames", func(m vmsg) bool { return m.Type == msgFrame && m.ClientSC })
	h.waitFor("the client's frames", func() bool { return len(c.Events("Page.screencastFrame")) == 3 })
	time.Sleep(100 * time.Millisecond)
	if n := h.countCommands("Page.screencastFrameAck") - acks; n != 0 {
		t.Errorf("%d of the client's frames were acked by the live view", n)
	}
	if _, err := c.Call(h.ctx, session, "Page.stopScreencast", nil); err != nil {
		t.Fatal(err)
	}
	h.waitCommand("Page.startScreencast", 3)
}

// TestResubscribeAfterDetach: a tab that detached (the extension restarted,
// or a frame navigated somewhere the debugger cannot follow) and came back
// can be watched again with the same subscribe message.
func TestResubscribeAfterDetach(t *testing.T) {
	h := newHarness(t, Config{})
	v := h.viewer("", nil)
	v.subscribe()
	h.waitCommand("Page.startScreencast", 1)
	h.ext.CloseTab(tabID)
	v.wait(0, "detached", func(m vmsg) bool { return m.Type == msgStatus && m.Status == "detached" })
	h.ext.OpenTab(fakeext.Tab{ID: tabID, URL: "https://example.com/", Title: "Example"})
	h.waitFor("the tab shared again", func() bool { return len(h.relay.Default().Status().Tabs) == 1 })
	v.subscribe()
	h.waitCommand("Page.startScreencast", 2)
}

// TestSubprotocol: a client that offers the viewer's subprotocol, as the
// live view does beside the person key, is answered with it (a browser
// fails a socket whose server picks none of those it offered); one that
// offers none gets none.
func TestSubprotocol(t *testing.T) {
	h := newHarness(t, Config{})
	for _, offered := range [][]string{{"chat", Protocol}, nil} {
		d := websocket.Dialer{Subprotocols: offered}
		v, err := h.dialViewerWith(&d, "", nil)
		if err != nil {
			t.Fatalf("offering %q: %v", offered, err)
		}
		want := ""
		if offered != nil {
			want = Protocol
		}
		if got := v.conn.Subprotocol(); got != want {
			t.Errorf("offering %q: got %q, want %q", offered, got, want)
		}
		v.conn.Close()
	}
}
