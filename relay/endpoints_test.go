package relay

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// TestPageEndpoint is chrome-remote-interface's default: /json/list, then
// the first page's webSocketDebuggerUrl, commands without a sessionId.
func TestPageEndpoint(t *testing.T) {
	t.Parallel()
	for _, x := range extensions {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			e := h.ext(x.with(fakeext.Options{Tabs: twoTabs}))
			h.ready()
			_, body := h.get("/json/list", "")
			var list []struct{ WebSocketDebuggerURL string }
			mustDecode(t, body, &list)
			c := h.clientAt(list[1].WebSocketDebuggerURL)

			before := len(e.Commands())
			m := h.callMsg(c, "", "Runtime.evaluate", map[string]any{"expression": "1"})
			mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"result":{"result":{"type":"number","value":2,"description":"2"}}}`, *m.ID))
			cmds := commandsSince(e, before)
			mustMatch(t, cmds[len(cmds)-1].Params, `[{"tabId":2},"Runtime.evaluate",{"expression":"1","timeout":10000}]`)
			m = h.callMsg(c, "", "Browser.getVersion", nil)
			if m.SessionID != "" || m.Error != nil {
				t.Errorf("getVersion: %s", m.Raw)
			}
			m = h.callMsg(c, "", "Nope.nothing", nil)
			if m.SessionID != "" {
				t.Errorf("reply carries a session: %s", m.Raw)
			}

			// Its page's events, without a sessionId; not the other tab's.
			from := len(c.Messages())
			e.Event(1, "", "Page.loadEventFired", map[string]any{"timestamp": 1})
			e.Event(2, "", "Page.loadEventFired", map[string]any{"timestamp": 2})
			ev, _ := h.event(c, from, "Page.loadEventFired")
			mustMatch(t, ev.Raw, `{"method":"Page.loadEventFired","params":{"timestamp":2}}`)

			// One client per instance.
			other, err := cdptest.Dial(h.ctx, h.cdpURL(h.srv.Default()), nil)
			if err != nil {
				t.Fatal(err)
			}
			code, text := h.closed(other)
			if code != websocket.ClosePolicyViolation || text != core.ReasonSecondClient {
				t.Errorf("second client: %d %q", code, text)
			}

			// The page closing closes its socket, as with Chrome.
			e.CloseTab(2)
			if code, text := h.closed(c); code != websocket.CloseNormalClosure || text != "Target closed" {
				t.Errorf("closed with %d %q", code, text)
			}
		})
	}
}

func TestPageEndpointPaths(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs})
	h.ready()
	in, err := h.srv.NewInstance()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/devtools/page/NOPE",
		"/devtools/page/",
		"/cdp/" + h.srv.Default().GUID() + "/devtools/page/NOPE",
		"/cdp/" + in.GUID() + "/devtools/page/" + tid(1), // another instance's tab
	} {
		if code, body := h.get(path, ""); code != http.StatusNotFound {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	c := h.clientAt(h.wsBase() + "/cdp/" + h.srv.Default().GUID() + "/devtools/page/" + tid(1))
	h.call(c, "", "Runtime.evaluate", map[string]any{"expression": "1"})
}

// rawHandshake opens path with go-rod's handshake and returns the response
// and the connection.
func rawHandshake(t *testing.T, h *harness, path, key string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	u, _ := url.Parse(h.hs.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	req := "GET " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n"
	if strings.HasPrefix(path, "/extension/") {
		req += "Origin: chrome-extension://fakeextensionidfakeextensionid\r\n"
	}
	if _, err := conn.Write([]byte(req + "\r\n")); err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp, conn, br
}

// TestRodWebSocketKey: go-rod's "Sec-WebSocket-Key: nil" is accepted on
// the CDP endpoints, with the accept value go-rod checks, and nowhere
// else.
func TestRodWebSocketKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs})
	h.ready()
	def := h.srv.Default()

	resp, conn, br := rawHandshake(t, h, "/devtools/browser/"+def.GUID(), "nil")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if got, want := resp.Header.Get("Sec-WebSocket-Accept"), acceptKey("nil"); got != want {
		t.Fatalf("accept %q, want %q", got, want)
	}
	// The socket works: one masked text frame, as go-rod writes it.
	msg := []byte(`{"id":1,"method":"Browser.getVersion"}`)
	mask := []byte{1, 2, 3, 4}
	frame := append([]byte{0x81, 0x80 | byte(len(msg))}, mask...)
	for i, b := range msg {
		frame = append(frame, b^mask[i%4])
	}
	if _, err := conn.Write(frame); err != nil {
		t.Fatal(err)
	}
	op, payload, err := readRawFrame(br)
	if err != nil || op != 0x81 {
		t.Fatalf("frame %x %q: %v", op, payload, err)
	}
	var reply struct{ ID int }
	if json.Unmarshal(payload, &reply) != nil || reply.ID != 1 {
		t.Fatalf("reply %q", payload)
	}

	// go-rod panics on a close frame: when the relay closes its
	// connection, the socket just ends.
	h.extAt(h.extURL(def), fakeext.Options{Tabs: twoTabs}) // replaces the first: the client is closed
	if op, payload, err := readRawFrame(br); err == nil {
		t.Fatalf("got a frame %x %q, want the connection to end", op, payload)
	}

	// Page endpoints take it too.
	h.waitFor("the new extension's tabs", func() bool { return def.HasTarget(tid(1)) })
	resp, _, _ = rawHandshake(t, h, "/devtools/page/"+tid(1), "nil")
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != acceptKey("nil") {
		t.Errorf("page endpoint: %d %q", resp.StatusCode, resp.Header.Get("Sec-WebSocket-Accept"))
	}

	// The extension endpoint does not.
	in, _ := h.srv.NewInstance()
	resp, _, _ = rawHandshake(t, h, "/extension/"+in.GUID(), "nil")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("extension endpoint: status %d", resp.StatusCode)
	}
}

// readRawFrame reads one unmasked server frame.
func readRawFrame(br *bufio.Reader) (byte, []byte, error) {
	var head [2]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return 0, nil, err
	}
	n := int(head[1] & 0x7f)
	switch n {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(br, ext[:]); err != nil {
			return 0, nil, err
		}
		n = int(binary.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		if _, err := io.ReadFull(br, ext[:]); err != nil {
			return 0, nil, err
		}
		n = int(binary.BigEndian.Uint64(ext[:]))
	}
	payload := make([]byte, n)
	_, err := io.ReadFull(br, payload)
	return head[0], payload, err
}

func TestAcceptKey(t *testing.T) {
	// RFC 6455's own example.
	if got := acceptKey("dGhlIHNhbXBsZSBub25jZQ=="); got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Errorf("acceptKey = %q", got)
	}
}

// TestJSONProtocol: chrome-remote-interface builds its helpers from
// /json/protocol before it connects.
func TestJSONProtocol(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	for _, path := range []string{"/json/protocol", "/cdp/" + h.srv.Default().GUID() + "/json/protocol"} {
		code, body := h.get(path, "")
		if code != http.StatusOK {
			t.Fatalf("%s: %d", path, code)
		}
		var p struct {
			Version struct{ Major, Minor string }
			Domains []struct {
				Domain   string
				Commands []struct{ Name string }
				Events   []struct{ Name string }
			}
		}
		mustDecode(t, body, &p)
		has := map[string]bool{}
		for _, d := range p.Domains {
			for _, c := range d.Commands {
				has["command "+d.Domain+"."+c.Name] = true
			}
			for _, e := range d.Events {
				has["event "+d.Domain+"."+e.Name] = true
			}
		}
		for _, want := range []string{"command Page.navigate", "command Runtime.evaluate", "command Target.attachToTarget", "event Page.loadEventFired", "event Network.requestWillBeSent"} {
			if !has[want] {
				t.Errorf("%s: no %s", path, want)
			}
		}
		if p.Version.Major != "1" || len(p.Domains) < 40 {
			t.Errorf("%s: version %+v, %d domains", path, p.Version, len(p.Domains))
		}
	}
}

// TestAdminNewInstance is what `cdprelay connect-url` asks.
func TestAdminNewInstance(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	resp, err := http.Post(h.hs.URL+"/v1/instances", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var info NewInstanceInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.ExtensionURL, h.wsBase()+"/extension/") || !strings.HasPrefix(info.CDPURL, h.wsBase()+"/devtools/browser/") || info.InstanceID == "" {
		t.Fatalf("info %+v", info)
	}
	cu, err := url.Parse(info.ConnectURL)
	if err != nil || cu.Scheme != "chrome-extension" || cu.Host != StockExtensionID || cu.Path != "/connect.html" ||
		cu.Query().Get("mcpRelayUrl") != info.ExtensionURL || cu.Query().Get("protocolVersion") != "2" || cu.Query().Get("client") != `{"name":"cdprelay"}` {
		t.Fatalf("connect URL %q", info.ConnectURL)
	}
	// The instance is a real one: the stock extension connects, a client
	// drives it.
	h.extAt(info.ExtensionURL, fakeext.Options{Stock: true, Tabs: twoTabs})
	c := h.clientAt(info.CDPURL)
	if got := h.autoAttach(c); len(got) != 2 {
		t.Fatalf("announced %v", got)
	}

	// Minting is POST, from this machine only. GET is the instance list,
	// which the operator handler behind the relay (Config.Fallback)
	// serves: with none configured here, it is not found.
	if code, _ := h.get("/v1/instances", ""); code != http.StatusNotFound {
		t.Errorf("GET: %d", code)
	}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/v1/instances", nil)
	req.RemoteAddr = "192.0.2.7:5000"
	w := httptest.NewRecorder()
	h.srv.ServeHTTP(w, req)
	if w.Code != http.StatusForbidden {
		t.Errorf("from another machine: %d", w.Code)
	}
}

func TestStockConnectURLLocalhost(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	u, _ := url.Parse(h.hs.URL)
	_, port, _ := net.SplitHostPort(u.Host)
	req := httptest.NewRequest(http.MethodPost, "http://localhost:"+port+"/v1/instances", nil)
	req.RemoteAddr = "127.0.0.1:5000"
	w := httptest.NewRecorder()
	h.srv.ServeHTTP(w, req)
	var info NewInstanceInfo
	mustDecode(t, w.Body.String(), &info)
	// The stock connect page refuses localhost.
	if !strings.HasPrefix(info.ExtensionURL, "ws://127.0.0.1:"+port+"/extension/") {
		t.Errorf("extension URL %q", info.ExtensionURL)
	}
}

// A go-rod client gets long messages whole, whatever bytes their text
// holds: the relay writes a long message's payload apart from its head,
// and a piece of it may start with any byte, a close frame's first byte
// (0x88, inside a UTF-8 character) included.
func TestRodLongMessages(t *testing.T) {
	t.Parallel()
	handler := func(tabID int, sid, method string, params json.RawMessage) (any, error) {
		if method == "Runtime.evaluate" {
			var p struct{ Expression string }
			json.Unmarshal(params, &p)
			return map[string]any{"result": map[string]any{"type": "string", "value": p.Expression + strings.Repeat("我", 3000)}}, nil
		}
		return fakeext.DefaultHandler(tabID, sid, method, params)
	}
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs, Handler: handler})
	h.ready()
	_, conn, br := rawHandshake(t, h, "/devtools/page/"+tid(1), "nil")
	send := func(id int, method string, params any) {
		msg, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
		mask := []byte{1, 2, 3, 4}
		frame := []byte{0x81, 0x80 | 126, byte(len(msg) >> 8), byte(len(msg))}
		frame = append(frame, mask...)
		for i, b := range msg {
			frame = append(frame, b^mask[i%4])
		}
		if _, err := conn.Write(frame); err != nil {
			t.Fatal(err)
		}
	}
	// Three pads: the byte at any one place of the text is each of the
	// character's three bytes for one of them.
	for id, pad := range []string{"", "x", "xx"} {
		send(id+1, "Runtime.evaluate", map[string]any{"expression": pad})
		var msg []byte
		for {
			op, payload, err := readRawFrame(br)
			if err != nil {
				t.Fatalf("pad %q: the connection ended after %d bytes: %v", pad, len(msg), err)
			}
			msg = append(msg, payload...)
			if op&0x80 != 0 {
				break
			}
		}
		var reply struct {
			ID     int
			Result struct{ Result struct{ Value string } }
		}
		if err := json.Unmarshal(msg, &reply); err != nil || reply.ID != id+1 || reply.Result.Result.Value != pad+strings.Repeat("我", 3000) {
			t.Fatalf("pad %q: reply %d bytes, %v", pad, len(msg), err)
		}
	}
}
