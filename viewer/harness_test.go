package viewer

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/leakcheck"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay"
	"github.com/cdprelay/cdprelay/screencast"
)

// tabID is the fake extension's shared tab.
const tabID = 7

// harness is a relay with the live view mounted as its Fallback, as cmd
// wires it, on a loopback socket, with a fake extension sharing one tab.
type harness struct {
	t     *testing.T
	relay *relay.Server
	view  *Server
	hs    *httptest.Server
	ext   *fakeext.Ext
	ctx   context.Context
	inst  string // the default instance's public id
}

// newHarness is newRawHarness whose viewers are the person unless they
// ask for ?mode=view: what a relay's Interactive grants to the person's
// credential, which these tests do not carry.
func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	if cfg.Interactive == nil {
		cfg.Interactive = func(r *http.Request) bool { return r.URL.Query().Get("mode") != "view" }
	}
	return newRawHarness(t, cfg)
}

// newRawHarness serves the live view of cfg over a relay with a fake
// extension sharing one tab.
func newRawHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	var log *slog.Logger
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	mux := http.NewServeMux()
	rs, err := relay.New(relay.Config{Logger: log, Fallback: mux})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Source = FromRelay(rs)
	if cfg.WriteTimeout == 0 {
		// A frozen viewer stays connected for the whole test, however
		// slow the machine: the tests decide when it is gone.
		cfg.WriteTimeout = 2 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = log
	}
	vs, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/", vs)
	hs := httptest.NewServer(rs)
	// Generous for -race on a loaded machine; a stall still fails.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	h := &harness{t: t, relay: rs, view: vs, hs: hs, ctx: ctx, inst: rs.Default().ID()}
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		if err := vs.Close(cctx); err != nil {
			t.Errorf("viewer close: %v", err)
		}
		if err := rs.Close(cctx); err != nil {
			t.Errorf("relay close: %v", err)
		}
		hs.Close()
		cancel()
	})
	h.ext, err = fakeext.Dial(ctx, h.wsBase()+"/extension/"+rs.Default().GUID(), fakeext.Options{
		Tabs: []fakeext.Tab{{ID: tabID, URL: "https://example.com/", Title: "Example"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.ext.Close)
	if err := rs.Default().WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) wsBase() string { return "ws" + strings.TrimPrefix(h.hs.URL, "http") }

// client connects a CDP client and auto-attaches: it returns the tab's
// session id.
func (h *harness) client() (*cdptest.Client, string) {
	h.t.Helper()
	c, err := cdptest.Dial(h.ctx, h.wsBase()+"/devtools/browser/"+h.relay.Default().GUID(), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(c.Close)
	if _, err := c.Call(h.ctx, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}); err != nil {
		h.t.Fatal(err)
	}
	ev, err := c.WaitEvent(h.ctx, "Target.attachedToTarget")
	if err != nil {
		h.t.Fatal(err)
	}
	var p struct{ SessionID string }
	json.Unmarshal(ev.Params, &p)
	return c, p.SessionID
}

// cdpCall is one CDP command the fake extension got for the tab.
type cdpCall struct {
	Method string
	Params json.RawMessage
}

// tabCommands returns the CDP commands sent to the tab, in order.
func (h *harness) tabCommands() []cdpCall {
	var out []cdpCall
	for _, c := range h.ext.Commands() {
		if c.Method != "chrome.debugger.sendCommand" {
			continue
		}
		var args []json.RawMessage
		json.Unmarshal(c.Params, &args)
		if len(args) < 2 {
			continue
		}
		var cc cdpCall
		json.Unmarshal(args[1], &cc.Method)
		if len(args) > 2 {
			cc.Params = args[2]
		}
		out = append(out, cc)
	}
	return out
}

func (h *harness) countCommands(method string) int {
	n := 0
	for _, c := range h.tabCommands() {
		if c.Method == method {
			n++
		}
	}
	return n
}

// waitCommand waits until the tab got method n times in all.
func (h *harness) waitCommand(method string, n int) []cdpCall {
	h.t.Helper()
	h.waitFor(fmt.Sprintf("%d × %s", n, method), func() bool { return h.countCommands(method) >= n })
	var out []cdpCall
	for _, c := range h.tabCommands() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	for !cond() {
		select {
		case <-time.After(2 * time.Millisecond):
		case <-h.ctx.Done():
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

var stdMeta = screencast.Metadata{PageScaleFactor: 1, DeviceWidth: 800, DeviceHeight: 600}

// frame emits a Page.screencastFrame on the tab's own session, as Chrome
// does for the relay's screencast.
func (h *harness) frame(id int64, img []byte) {
	h.t.Helper()
	if err := h.ext.WriteRaw(frameEvent(id, img)); err != nil {
		h.t.Fatal(err)
	}
}

// frameEvent is the extension's message for a frame, built by hand: the
// encoder's escaping pass over a large image costs more than the relay's
// whole handling of it.
func frameEvent(id int64, img []byte) []byte {
	md, _ := json.Marshal(stdMeta)
	var b bytes.Buffer
	b.WriteString(`{"method":"chrome.debugger.onEvent","params":[{"tabId":` + fmt.Sprint(tabID) + `},"Page.screencastFrame",{"data":"`)
	b.WriteString(base64.StdEncoding.EncodeToString(img))
	b.WriteString(`","metadata":`)
	b.Write(md)
	b.WriteString(`,"sessionId":` + fmt.Sprint(id) + `}]}`)
	return b.Bytes()
}

// viewer connects a viewer to /viewer?query with extra headers.
func (h *harness) viewer(query string, hdr http.Header) *vclient {
	h.t.Helper()
	v, err := h.dialViewer(query, hdr)
	if err != nil {
		h.t.Fatal(err)
	}
	go v.readLoop()
	h.t.Cleanup(v.close)
	hello := v.waitType(msgHello)
	v.name = hello.Viewer
	return v
}

func (h *harness) dialViewer(query string, hdr http.Header) (*vclient, error) {
	return h.dialViewerWith(websocket.DefaultDialer, query, hdr)
}

// frozenViewer connects a viewer that subscribes to the tab and then
// reads nothing. Its socket takes in little, so that the server's writes
// to it block soon.
func (h *harness) frozenViewer() *vclient {
	h.t.Helper()
	d := *websocket.DefaultDialer
	nd := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { setReceiveBuffer(fd, 4096) })
	}}
	d.NetDialContext = nd.DialContext
	v, err := h.dialViewerWith(&d, "", nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { v.conn.Close() })
	v.send(map[string]any{"type": "subscribe", "instance": h.inst, "tab": tabID})
	return v
}

func (h *harness) dialViewerWith(d *websocket.Dialer, query string, hdr http.Header) (*vclient, error) {
	u := h.wsBase() + "/viewer"
	if query != "" {
		u += "?" + query
	}
	conn, resp, err := d.DialContext(h.ctx, u, hdr)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("dial: %w (HTTP %d)", err, resp.StatusCode)
		}
		return nil, err
	}
	return &vclient{h: h, t: h.t, conn: conn, notify: make(chan struct{}), done: make(chan struct{})}, nil
}

// vmsg is one message a viewer got: a JSON message, or a JPEG that
// follows a frame message.
type vmsg struct {
	Type        string          `json:"type"`
	Viewer      string          `json:"viewer"`
	Interactive bool            `json:"interactive"`
	Hint        string          `json:"hint"`
	KeyRefused  bool            `json:"keyRefused"`
	Instance    string          `json:"instance"`
	Tab         int64           `json:"tab"`
	Status      string          `json:"status"`
	Holder      string          `json:"holder"`
	Message     string          `json:"message"`
	Request     string          `json:"request"`
	Seq         uint64          `json:"seq"`
	Width       int             `json:"width"`
	Height      int             `json:"height"`
	DeviceW     float64         `json:"deviceWidth"`
	DeviceH     float64         `json:"deviceHeight"`
	ClientSC    bool            `json:"clientScreencast"`
	Instances   []instanceView  `json:"instances"`
	Raw         json.RawMessage `json:"-"`
	JPEG        []byte          `json:"-"` // binary message
}

type vclient struct {
	h    *harness
	t    *testing.T
	conn *websocket.Conn
	name string

	wmu sync.Mutex

	mu      sync.Mutex
	msgs    []vmsg
	notify  chan struct{}
	done    chan struct{}
	readErr error
	once    sync.Once
}

func (v *vclient) readLoop() {
	defer close(v.done)
	for {
		mt, b, err := v.conn.ReadMessage()
		if err != nil {
			v.mu.Lock()
			v.readErr = err
			v.mu.Unlock()
			return
		}
		var m vmsg
		if mt == websocket.BinaryMessage {
			m = vmsg{Type: "jpeg", JPEG: b}
		} else if err := json.Unmarshal(b, &m); err != nil {
			m = vmsg{Type: "malformed"}
		}
		m.Raw = b
		v.mu.Lock()
		v.msgs = append(v.msgs, m)
		close(v.notify)
		v.notify = make(chan struct{})
		v.mu.Unlock()
	}
}

func (v *vclient) send(m any) {
	v.t.Helper()
	b, _ := json.Marshal(m)
	v.wmu.Lock()
	defer v.wmu.Unlock()
	if err := v.conn.WriteMessage(websocket.TextMessage, b); err != nil {
		v.t.Fatalf("viewer send: %v", err)
	}
}

func (v *vclient) messages() []vmsg {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]vmsg(nil), v.msgs...)
}

// wait returns the first message from index from on that matches, and
// its index.
func (v *vclient) wait(from int, what string, match func(vmsg) bool) (vmsg, int) {
	v.t.Helper()
	for {
		v.mu.Lock()
		for i := from; i < len(v.msgs); i++ {
			if match(v.msgs[i]) {
				m := v.msgs[i]
				v.mu.Unlock()
				return m, i
			}
		}
		from = len(v.msgs)
		ch := v.notify
		v.mu.Unlock()
		select {
		case <-ch:
		case <-v.done:
			v.t.Fatalf("viewer closed (%v) while waiting for %s; got %s", v.readErr, what, v.describe())
		case <-v.h.ctx.Done():
			v.t.Fatalf("timed out waiting for %s; got %s", what, v.describe())
		}
	}
}

func (v *vclient) waitType(typ string) vmsg {
	v.t.Helper()
	m, _ := v.wait(0, typ, func(m vmsg) bool { return m.Type == typ })
	return m
}

// sendAwait sends m and waits for a message of typ that answers it.
func (v *vclient) sendAwait(m map[string]any, typ string, match func(vmsg) bool) vmsg {
	v.t.Helper()
	from := len(v.messages())
	v.send(m)
	got, _ := v.wait(from, typ, func(m vmsg) bool { return m.Type == typ && (match == nil || match(m)) })
	return got
}

func (v *vclient) describe() string {
	var b strings.Builder
	for _, m := range v.messages() {
		if m.Type == "jpeg" {
			fmt.Fprintf(&b, "\n  <jpeg %d bytes>", len(m.JPEG))
		} else {
			fmt.Fprintf(&b, "\n  %s", m.Raw)
		}
	}
	return b.String()
}

// request sends a request and waits for the error it may cause, up to a
// short while: it returns "" when none came.
func (v *vclient) request(m map[string]any) string {
	v.t.Helper()
	from := len(v.messages())
	v.send(m)
	deadline := time.After(300 * time.Millisecond)
	for {
		for _, msg := range v.messages()[from:] {
			if msg.Type == msgError {
				return msg.Message
			}
		}
		select {
		case <-deadline:
			return ""
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// mustFail sends m and waits for the error it must cause.
func (v *vclient) mustFail(m map[string]any, want string) {
	v.t.Helper()
	from := len(v.messages())
	v.send(m)
	e, _ := v.wait(from, "an error", func(m vmsg) bool { return m.Type == msgError })
	if !strings.Contains(e.Message, want) {
		v.t.Fatalf("error %q does not say %q", e.Message, want)
	}
}

func (v *vclient) close() {
	v.once.Do(func() {
		v.wmu.Lock()
		_ = v.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		v.wmu.Unlock()
		select {
		case <-v.done:
		case <-time.After(2 * time.Second):
		}
		v.conn.Close()
	})
}

func (v *vclient) subscribe() {
	v.t.Helper()
	v.send(map[string]any{"type": "subscribe", "instance": v.h.inst, "tab": tabID})
	v.wait(0, "status", func(m vmsg) bool { return m.Type == msgStatus && m.Tab == tabID })
}

// frames returns the JPEGs received, with the frame message before each.
func (v *vclient) frames() (metas []vmsg, jpegs [][]byte) {
	ms := v.messages()
	for i, m := range ms {
		if m.Type == "jpeg" && i > 0 && ms[i-1].Type == msgFrame {
			metas = append(metas, ms[i-1])
			jpegs = append(jpegs, m.JPEG)
		}
	}
	return metas, jpegs
}

// testJPEG is a w×h JPEG whose colour depends on n.
func testJPEG(t testing.TB, w, h, n int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(n * 41), uint8(x ^ y), uint8(n * 7), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestMain fails the package when a goroutine of this module outlives
// the tests.
func TestMain(m *testing.M) { leakcheck.Main(m) }
