package e2e

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/extension"
)

// TestScreencastBackPressure connects our extension to a relay of the
// test's own that stops reading: replies pile up in the extension's
// socket (its bufferedAmount), and the screencast started then is not
// queued behind them. The extension drops its frames and acks them itself,
// so Chrome keeps streaming (it would stop after 3 unacked frames), and
// counts them on its connect page. Not one reply is lost, and once the
// relay reads again the frames come again.
func TestScreencastBackPressure(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 150*time.Second)
	p := newPerson(ctx, t)
	home := p.openExtensionPage("chrome-extension://" + extension.ID + "/connect.html")
	orig := p.extStatus(home)
	if orig.State != "connected" {
		t.Fatalf("the extension is not connected at the start: %+v", orig)
	}
	p.openTab(env.Pages.Main + "/form.html?backpressure")

	conns := make(chan *websocket.Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		// A small receive buffer that does not grow: what the relay does
		// not read soon waits in the browser.
		if tc, ok := c.UnderlyingConn().(*net.TCPConn); ok {
			tc.SetReadBuffer(64 << 10)
		}
		select {
		case conns <- c:
		default:
			c.Close() // a reconnection after the test let go
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { p.restoreExtension(home, orig.Relay) })
	fakeURL := "ws://" + srv.Listener.Addr().String() + "/extension/backpressure"
	if v := p.eval(home, `chrome.runtime.sendMessage({type: "connect", relay: `+quote(fakeURL)+`, share: "all"}).then((r) => r.ok)`); v != "true" {
		t.Fatalf("connect the extension to the test's relay: %s", v)
	}
	var ws *websocket.Conn
	select {
	case ws = <-conns:
	case <-time.After(20 * time.Second):
		t.Fatal("the extension did not connect to the test's relay")
	}
	defer ws.Close()
	r := &stallingRelay{t: t, ws: ws}

	// The handshake offers the person's tab (or, where Chrome reports it a
	// moment late, an offer or update just after it does).
	tabID := int64(0)
	var offered []string
	deadline := time.Now().Add(10 * time.Second)
	for initialized := false; tabID == 0 || !initialized; {
		if initialized && time.Now().After(deadline) {
			t.Fatalf("the person's tab was not offered; offered: %v", offered)
		}
		m := r.read()
		switch m.Method {
		case "chrome.tabs.onCreated":
			var args []struct {
				ID  int64
				URL string
			}
			json.Unmarshal(m.Params, &args)
			if len(args) > 0 {
				offered = append(offered, args[0].URL)
				if strings.HasSuffix(args[0].URL, "?backpressure") {
					tabID = args[0].ID
				}
			}
		case "chrome.tabs.onUpdated":
			var args []json.RawMessage
			json.Unmarshal(m.Params, &args)
			var tab struct {
				ID  int64
				URL string
			}
			if len(args) > 2 && json.Unmarshal(args[2], &tab) == nil && strings.HasSuffix(tab.URL, "?backpressure") {
				tabID = tab.ID
			}
		case "extension.initialized":
			initialized = true
		}
	}
	r.tab = map[string]any{"tabId": tabID}
	r.call("chrome.debugger.attach", r.tab, "1.3")
	r.cdp("Page.bringToFront", map[string]any{})
	// A page that paints every frame, so that the screencast streams.
	r.cdp("Runtime.evaluate", map[string]any{"expression": `(() => {
		const f = () => { document.body.style.background = "hsl(" + (performance.now() / 4) % 360 + ", 80%, 60%)"; requestAnimationFrame(f); };
		requestAnimationFrame(f);
		return 1;
	})()`})
	screencast := map[string]any{"format": "jpeg", "quality": 70, "maxWidth": 640, "maxHeight": 480}
	r.cdp("Page.startScreencast", screencast)
	for r.frames < 3 {
		r.read()
	}
	r.cdp("Page.stopScreencast", map[string]any{})
	t.Logf("ok - %d frames while the relay reads", r.frames)

	// The relay stops reading; 24 MiB of replies pile up behind it.
	const n, size = 24, 1 << 20
	var flood []int64
	for range n {
		flood = append(flood, r.send("chrome.debugger.sendCommand", r.tab, "Runtime.evaluate",
			map[string]any{"expression": "'x'.repeat(" + strconv.Itoa(size) + ")", "returnByValue": true}))
	}
	var st extStatus
	waitFor(t, 60*time.Second, "the extension's socket to back up", func() bool {
		st = p.extStatus(home)
		return st.Backlog > 8<<20
	})
	t.Logf("ok - %d bytes wait in the extension's socket", st.Backlog)
	before := st.DroppedFrames
	started := r.send("chrome.debugger.sendCommand", r.tab, "Page.startScreencast", screencast)
	// More than the 3 unacked frames Chrome sends before it waits: the
	// extension acked what it dropped.
	waitFor(t, 30*time.Second, "dropped screencast frames", func() bool {
		st = p.extStatus(home)
		return st.DroppedFrames-before >= 10
	})
	t.Logf("ok - the extension dropped %d frames while %d bytes waited", st.DroppedFrames-before, st.Backlog)
	waitFor(t, 10*time.Second, "the connect page to show the dropped frames", func() bool {
		var detail string
		json.Unmarshal([]byte(p.eval(home, `document.getElementById("detail").textContent`)), &detail)
		return strings.Contains(detail, "screencast frames dropped")
	})

	// The relay reads again: every reply is there, in full, and the
	// screencast goes on.
	want := map[int64]bool{started: true}
	for _, id := range flood {
		want[id] = true
	}
	framesBefore := r.frames
	for len(want) > 0 {
		m := r.read()
		if !want[m.ID] {
			continue
		}
		delete(want, m.ID)
		if m.ID == started {
			if m.Error != "" {
				t.Fatalf("Page.startScreencast: %s", m.Error)
			}
			continue
		}
		var res struct{ Result struct{ Value string } }
		if m.Error != "" || json.Unmarshal(m.Result, &res) != nil || len(res.Result.Value) != size {
			t.Fatalf("reply %d: error %q, %d bytes", m.ID, m.Error, len(m.Result))
		}
	}
	t.Logf("ok - all %d replies arrived, in full (%d frames came among them)", n, r.frames-framesBefore)
	for target := r.frames + 3; r.frames < target; {
		r.read()
	}
	t.Log("ok - the screencast goes on once the relay reads again")
	r.cdp("Page.stopScreencast", map[string]any{})
	r.call("chrome.debugger.detach", r.tab)
}

// stallingRelay is the relay's side of an extension connection, driven by
// the test: it reads only when the test asks it to.
type stallingRelay struct {
	t      *testing.T
	ws     *websocket.Conn
	id     int64
	tab    map[string]any
	frames int // the screencast frames it has read (and acked)
}

type extMessage struct {
	ID     int64
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  string
}

func (r *stallingRelay) send(method string, params ...any) int64 {
	r.t.Helper()
	r.id++
	b, _ := json.Marshal(map[string]any{"id": r.id, "method": method, "params": params})
	if err := r.ws.WriteMessage(websocket.TextMessage, b); err != nil {
		r.t.Fatalf("%s: %v", method, err)
	}
	return r.id
}

// read reads the next message, acking a screencast frame.
func (r *stallingRelay) read() extMessage {
	r.t.Helper()
	r.ws.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, b, err := r.ws.ReadMessage()
	if err != nil {
		r.t.Fatalf("read from the extension: %v", err)
	}
	var m extMessage
	if err := json.Unmarshal(b, &m); err != nil {
		r.t.Fatalf("a message that is not one: %v: %.200s", err, b)
	}
	if m.Method == "chrome.debugger.onEvent" {
		var args []json.RawMessage
		json.Unmarshal(m.Params, &args)
		if len(args) >= 3 && string(args[1]) == `"Page.screencastFrame"` {
			var f struct{ SessionID int }
			json.Unmarshal(args[2], &f)
			r.frames++
			r.send("chrome.debugger.sendCommand", r.tab, "Page.screencastFrameAck", map[string]any{"sessionId": f.SessionID})
		}
	}
	return m
}

// call sends a command and reads until its reply.
func (r *stallingRelay) call(method string, params ...any) json.RawMessage {
	r.t.Helper()
	id := r.send(method, params...)
	for {
		m := r.read()
		if m.ID != id {
			continue
		}
		if m.Error != "" {
			r.t.Fatalf("%s: %s", method, m.Error)
		}
		return m.Result
	}
}

// cdp sends a CDP command to the tab and reads until its reply.
func (r *stallingRelay) cdp(method string, params any) json.RawMessage {
	r.t.Helper()
	return r.call("chrome.debugger.sendCommand", r.tab, method, params)
}

// waitFor polls ok until it holds.
func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
