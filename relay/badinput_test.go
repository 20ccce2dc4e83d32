package relay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay/internal/config"
)

func TestClientBadFrames(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	h.autoAttach(c)
	tests := []struct {
		name   string
		binary bool
		frame  string
		want   string // the whole reply; messages are "<any>" where only the code matters
		msg    string // a substring the message must have
	}{
		{name: "truncated JSON", frame: `{"id":1,"method":`, want: `{"id":null,"error":{"code":-32700,"message":"<any>"}}`},
		{name: "not JSON", frame: `hello`, want: `{"id":null,"error":{"code":-32700,"message":"<any>"}}`},
		{name: "trailing data", frame: `{"id":2,"method":"Browser.getVersion"} {}`, want: `{"id":null,"error":{"code":-32700,"message":"<any>"}}`},
		{name: "invalid UTF-8", frame: "{\"id\":3,\"method\":\"Runtime.evaluate\",\"sessionId\":\"pw-tab-1\",\"params\":{\"expression\":\"\xff\"}}", want: `{"id":null,"error":{"code":-32700,"message":"<any>"}}`},
		{name: "binary frame", binary: true, frame: `{"id":4,"method":"Browser.getVersion"}`, want: `{"id":null,"error":{"code":-32700,"message":"<any>"}}`, msg: "text frame"},
		{name: "missing id", frame: `{"method":"Browser.getVersion"}`, want: `{"id":null,"error":{"code":-32600,"message":"<any>"}}`, msg: "'id'"},
		{name: "string id", frame: `{"id":"5","method":"Browser.getVersion"}`, want: `{"id":null,"error":{"code":-32600,"message":"<any>"}}`, msg: "'id'"},
		{name: "fractional id", frame: `{"id":5.5,"method":"Browser.getVersion"}`, want: `{"id":null,"error":{"code":-32600,"message":"<any>"}}`, msg: "'id'"},
		{name: "not an object", frame: `[1,2]`, want: `{"id":null,"error":{"code":-32600,"message":"<any>"}}`},
		{name: "params not an object", frame: `{"id":6,"sessionId":"pw-tab-1","method":"Runtime.evaluate","params":[1]}`, want: `{"id":6,"sessionId":"pw-tab-1","error":{"code":-32600,"message":"<any>"}}`, msg: "'params'"},
		{name: "params a string", frame: `{"id":7,"method":"Browser.getVersion","params":"x"}`, want: `{"id":7,"error":{"code":-32600,"message":"<any>"}}`, msg: "'params'"},
		{name: "duplicate method", frame: `{"id":8,"method":"Browser.getVersion","method":"Browser.close"}`, want: `{"id":8,"error":{"code":-32600,"message":"<any>"}}`, msg: "duplicate"},
		{name: "duplicate escaped method", frame: `{"id":9,"method":"Browser.getVersion","\u006dethod":"Browser.close"}`, want: `{"id":9,"error":{"code":-32600,"message":"<any>"}}`, msg: "duplicate"},
		{name: "missing method", frame: `{"id":10}`, want: `{"id":10,"error":{"code":-32600,"message":"<any>"}}`, msg: "'method'"},
		{name: "method not a string", frame: `{"id":11,"method":42}`, want: `{"id":11,"error":{"code":-32600,"message":"<any>"}}`, msg: "'method'"},
		{name: "sessionId not a string", frame: `{"id":12,"method":"Runtime.evaluate","sessionId":5}`, want: `{"id":12,"error":{"code":-32600,"message":"<any>"}}`, msg: "'sessionId'"},
		{name: "unknown session", frame: `{"id":13,"method":"Runtime.evaluate","sessionId":"nope","params":{}}`, want: `{"id":13,"sessionId":"nope","error":{"code":-32001,"message":"Session with given id not found."}}`},
		{name: "unknown session with escapes", frame: `{"id":14,"method":"Runtime.evaluate","sessionId":"n\"o\u00e9"}`, want: `{"id":14,"sessionId":"n\"oé","error":{"code":-32001,"message":"Session with given id not found."}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(e.Commands())
			from := len(c.Messages())
			mt := websocket.TextMessage
			if tt.binary {
				mt = websocket.BinaryMessage
			}
			if err := c.Write(mt, []byte(tt.frame)); err != nil {
				t.Fatal(err)
			}
			m, at, err := c.WaitMessage(h.ctx, from, func(cdptest.Message) bool { return true })
			if err != nil {
				t.Fatal(err)
			}
			mustMatch(t, m.Raw, tt.want)
			if m.Error == nil || m.Error.Message == "" || !strings.Contains(m.Error.Message, tt.msg) {
				t.Errorf("error message %v, want one mentioning %q", m.Error, tt.msg)
			}
			// The connection keeps working, and the bad frame did nothing.
			res := h.call(c, "", "Browser.getVersion", nil)
			mustMatch(t, res, fmt.Sprintf(`{"protocolVersion":"1.3","product":%q,"revision":"","userAgent":%q,"jsVersion":""}`, fakeProduct, fakeUA))
			if extra := c.Messages()[at+1:]; len(extra) != 0 {
				t.Errorf("more than one answer: %s", describe(extra))
			}
			if got := commandsSince(e, before); len(got) != 0 {
				t.Errorf("forwarded: %+v", got)
			}
		})
	}
}

func TestClientMessageTooBig(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := newHarness(t, config.Config{MaxMessageBytes: 1 << 16})
	h.ext(fakeext.Options{Tabs: twoTabs, Handler: rec.handle})
	c := h.client()
	h.autoAttach(c)

	frame := func(size int) []byte {
		head := `{"id":1,"sessionId":"pw-tab-1","method":"Runtime.evaluate","params":{"expression":"`
		tail := `"}}`
		return []byte(head + strings.Repeat("x", size-len(head)-len(tail)) + tail)
	}
	// Exactly at the limit passes.
	if err := c.WriteRaw(frame(1 << 16)); err != nil {
		t.Fatal(err)
	}
	m, _ := h.reply(c, 1)
	if m.Error != nil {
		t.Fatalf("a frame at the limit: %s", m.Error)
	}
	// (With the relay's bound on the script's run: person's brake.go.)
	if got := rec.lastOf(t, "Runtime.evaluate"); len(got.params) != 1<<16-len(`{"id":1,"sessionId":"pw-tab-1","method":"Runtime.evaluate","params":}`)+len(`,"timeout":10000`) {
		t.Errorf("forwarded params of %d bytes", len(got.params))
	}
	if err := c.WriteRaw(frame(1<<16 + 1)); err != nil {
		t.Fatal(err)
	}
	if code, _ := h.closed(c); code != websocket.CloseMessageTooBig {
		t.Errorf("close code %d, want 1009", code)
	}
	h.waitFor("the client to be gone", func() bool { return !h.srv.Default().Status().Client })
	// The instance is free for the next client.
	c2 := h.client()
	h.call(c2, "", "Browser.getVersion", nil)
}

func TestExtensionGarbageIsIgnored(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	h.autoAttach(c)
	// A command in flight when the garbage comes must still get its reply.
	h.call(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
	from := len(c.Messages())

	garbage := []string{
		`not json`,
		`{"method":"chrome.debugger.onEvent","params":[{"tabId":1},"Page.x"]`,
		`[1,2,3]`,
		`{}`,
		`{"id":999999,"result":{}}`,
		`{"id":999998,"error":"late"}`,
		`{"id":1}`,
		`{"id":"1","result":{}}`,
		`{"id":1,"method":"chrome.debugger.onEvent","params":[]}`,
		`{"method":"chrome.debugger.onEvent","params":{"tabId":1}}`,
		`{"method":"chrome.debugger.onEvent","params":[]}`,
		`{"method":"chrome.debugger.onEvent","params":[{"tabId":"1"},"Page.loadEventFired",{}]}`,
		`{"method":"chrome.debugger.onEvent","params":[{"tab":1},"Page.loadEventFired",{}]}`,
		`{"method":"chrome.debugger.onEvent","params":[{"tabId":1},42,{}]}`,
		`{"method":"chrome.debugger.onEvent","params":[1,"Page.loadEventFired",{}]}`,
		`{"method":"chrome.debugger.onDetach","params":[{"tabId":1}]}`,
		`{"method":"chrome.debugger.onDetach","params":["x","canceled_by_user"]}`,
		`{"method":"chrome.debugger.onDetach","params":[{"tabId":424242},"canceled_by_user"]}`,
		`{"method":"chrome.tabs.onCreated","params":[]}`,
		`{"method":"chrome.tabs.onCreated","params":[{"id":"x"}]}`,
		`{"method":"chrome.tabs.onCreated","params":[{"url":"https://no-id.example/"}]}`,
		`{"method":"chrome.tabs.onRemoved","params":["1",{}]}`,
		`{"method":"chrome.tabs.onRemoved","params":[]}`,
		`{"method":"chrome.tabs.onRemoved","params":[424242,{}]}`,
		`{"method":"chrome.tabs.onUpdated","params":[1,{},{"id":"x"}]}`,
		`{"method":"chrome.tabs.onUpdated","params":[1]}`,
		`{"method":"extension.info","params":[42]}`,
		`{"method":"extension.initialized","params":[]}`,
		`{"method":"extension.somethingNew","params":[{"a":1}]}`,
		`{"method":"chrome.debugger.onEvent","params":[{"tabId":1},"Page.loadEventFired",{}],"method":"x"}`,
	}
	for _, g := range garbage {
		if err := e.WriteRaw([]byte(g)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Write(websocket.BinaryMessage, []byte(`{"method":"chrome.debugger.onEvent","params":[{"tabId":1},"Page.loadEventFired",{}]}`)); err != nil {
		t.Fatal(err)
	}
	e.Event(1, "", "Page.frameNavigated", map[string]any{"ok": true})
	_, at := h.event(c, from, "Page.frameNavigated")
	if got := c.Messages()[from:at]; len(got) != 0 {
		t.Errorf("garbage reached the client: %s", describe(got))
	}
	// Nothing was lost: the tabs, the sessions, the browser info.
	h.call(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
	h.call(c, "pw-tab-2", "Runtime.evaluate", map[string]any{"expression": "1"})
	res := h.call(c, "", "Browser.getVersion", nil)
	mustMatch(t, res, fmt.Sprintf(`{"protocolVersion":"1.3","product":%q,"revision":"","userAgent":%q,"jsVersion":""}`, fakeProduct, fakeUA))
	if st := h.srv.Default().Status(); len(st.Tabs) != 2 || !st.Extension || !st.Client {
		t.Errorf("status %+v", st)
	}
	select {
	case <-e.Done():
		t.Errorf("the relay dropped the extension: %v", e.Err())
	default:
	}
}
