package relay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/ext"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// Batch frames between the relay and the extension
// (docs/EXTENSION-PROTOCOL.md, feature "batches").

// TestBatchesNegotiated: the relay offers batches to an extension that
// asked for them, and to no other; every extension's commands are answered
// either way.
func TestBatchesNegotiated(t *testing.T) {
	t.Parallel()
	for _, x := range extensions {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			e := h.ext(x.with(fakeext.Options{Tabs: twoTabs[:1]}))
			c := h.client()
			s := h.autoAttach(c)[0]
			var ids []int64
			for i := range 32 {
				ids = append(ids, h.send(c, s, "DOM.describeNode", map[string]int{"nodeId": i}))
			}
			for i, id := range ids {
				m, _ := h.reply(c, id)
				mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":%q,"result":{"echo":{"tabId":1,"sessionId":"","method":"DOM.describeNode","params":{"nodeId":%d}}}}`, id, s, i))
			}
			accepted := 0
			for _, cmd := range e.Commands() {
				if cmd.Method == ext.MethodAcceptBatches {
					accepted++
				}
			}
			in, out := e.BatchFrames()
			if x.batches {
				if accepted != 1 {
					t.Errorf("extension.acceptBatches sent %d times, want once", accepted)
				}
				if out == 0 {
					t.Errorf("the extension sent no batch frame")
				}
				return
			}
			if accepted != 0 || in != 0 {
				t.Errorf("an extension without batches got extension.acceptBatches %d times and %d batch frames", accepted, in)
			}
		})
	}
}

// TestBatchFromExtension: a batch of replies, events and bad elements from
// the extension is handled element by element, in its order.
func TestBatchFromExtension(t *testing.T) {
	t.Parallel()
	for _, batches := range []bool{true, false} {
		t.Run(fmt.Sprintf("batches=%v", batches), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			release := make(chan struct{})
			var once sync.Once
			t.Cleanup(func() { once.Do(func() { close(release) }) })
			e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Batches: batches, Gate: func(method string, args []json.RawMessage) {
				if method == "chrome.debugger.sendCommand" && len(args) > 1 && string(args[1]) == `"Runtime.evaluate"` {
					<-release
				}
			}})
			c := h.client()
			s := h.autoAttach(c)[0]
			h.call(c, s, "Runtime.enable", nil)
			var ids [3]int64
			for i := range ids {
				ids[i] = h.send(c, s, "Runtime.evaluate", map[string]string{"expression": fmt.Sprint(i)})
			}
			var ext [3]int64
			h.waitFor("three evaluations at the extension", func() bool {
				n := 0
				for _, cmd := range e.Commands() {
					if cmd.Method == "chrome.debugger.sendCommand" && bytes.Contains(cmd.Params, []byte(`"Runtime.evaluate"`)) && n < 3 {
						ext[n] = cmd.ID
						n++
					}
				}
				return n == 3
			})
			from := len(c.Messages())
			batch := fmt.Sprintf(`[{"id":%d,"result":{"result":{"type":"number","value":1}}},`+
				`{"method":"chrome.debugger.onEvent","params":[{"tabId":1},"Runtime.consoleAPICalled",{"type":"log","args":[]}]},`+
				`{"id":"not a number","result":{}},7,[{"id":%d,"result":{}}],`+
				`{"id":%d,"error":"{\"code\":-32000,\"message\":\"Execution context was destroyed.\"}"},`+
				`{"id":%d,"result":{"result":{"type":"number","value":2}}}]`, ext[1], ext[1], ext[0], ext[2])
			if err := e.WriteRaw([]byte(batch)); err != nil {
				t.Fatal(err)
			}
			// A batch that breaks off: what came before the break counts.
			if batches {
				if err := e.WriteRaw([]byte(`[{"method":"chrome.debugger.onEvent","params":[{"tabId":1},"Page.loadEventFired",{"timestamp":2}]},{"id":`)); err != nil {
					t.Fatal(err)
				}
			}
			if !batches {
				// Without batches an array is one malformed frame: nothing
				// of it reaches the client, and the real answers do.
				once.Do(func() { close(release) })
				for _, id := range ids {
					m, _ := h.reply(c, id)
					mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":%q,"result":{"result":{"type":"number","value":2,"description":"2"}}}`, id, s))
				}
				for _, m := range c.Messages()[from:] {
					if m.Method != "" {
						t.Errorf("event from an ignored batch: %s", m.Raw)
					}
				}
				return
			}
			h.event(c, from, "Page.loadEventFired")
			var got []string
			for _, m := range c.Messages()[from:] {
				got = append(got, string(m.Raw))
			}
			want := []string{
				fmt.Sprintf(`{"id":%d,"sessionId":%q,"result":{"result":{"type":"number","value":1}}}`, ids[1], s),
				fmt.Sprintf(`{"method":"Runtime.consoleAPICalled","sessionId":%q,"params":{"type":"log","args":[]}}`, s),
				fmt.Sprintf(`{"id":%d,"sessionId":%q,"error":{"code":-32000,"message":"Execution context was destroyed."}}`, ids[0], s),
				fmt.Sprintf(`{"id":%d,"sessionId":%q,"result":{"result":{"type":"number","value":2}}}`, ids[2], s),
				fmt.Sprintf(`{"method":"Page.loadEventFired","sessionId":%q,"params":{"timestamp":2}}`, s),
			}
			if len(got) != len(want) {
				t.Fatalf("client got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for i := range want {
				mustMatch(t, json.RawMessage(got[i]), want[i])
			}
			// The extension's own late answers to the same ids are ignored,
			// and the connection still works.
			once.Do(func() { close(release) })
			res := h.call(c, s, "DOM.enable", nil)
			mustMatch(t, res, `{"echo":{"tabId":1,"sessionId":"","method":"DOM.enable","params":null}}`)
		})
	}
}

// TestBatchesUnderLoad: 16 in flight through an extension that batches
// both ways; every reply reaches its command.
func TestBatchesUnderLoad(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Batches: true})
	c := h.client()
	s := h.autoAttach(c)[0]
	const total, window = 400, 16
	next := 0
	var pending []int64
	for next < total || len(pending) > 0 {
		for len(pending) < window && next < total {
			pending = append(pending, h.send(c, s, "DOM.resolveNode", map[string]int{"nodeId": next}))
			next++
		}
		m, _ := h.reply(c, pending[0])
		var r struct {
			Echo struct{ Params struct{ NodeID int } }
		}
		if err := json.Unmarshal(m.Result, &r); err != nil || r.Echo.Params.NodeID != next-len(pending) {
			t.Fatalf("reply %s to node %d", m.Raw, next-len(pending))
		}
		pending = pending[1:]
	}
	if _, out := e.BatchFrames(); out == 0 {
		t.Errorf("no batch frame from the extension")
	}
}
