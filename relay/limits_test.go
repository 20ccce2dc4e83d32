package relay

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/internal/wire"
)

func TestRateLimit(t *testing.T) {
	h := newHarness(t, config.Config{CommandsPerSecond: 1, CommandBurst: 2})
	h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1}}})
	c := h.client()
	sess := h.autoAttach(c)[0] // the first token
	h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"})
	m := h.callMsg(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"})
	if m.Error == nil || !strings.Contains(m.Error.Message, "rate limit") || m.SessionID != sess {
		t.Fatalf("third command within the burst window: %s", m.Raw)
	}
	if h.srv.Cfg.Metrics.Limited[metrics.LimitRate] == nil {
		t.Fatal("no rate counter")
	}
}

func TestInFlightLimit(t *testing.T) {
	gate := make(chan struct{})
	h := newHarness(t, config.Config{MaxInFlight: 2})
	h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1}}, Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
		if method == "Runtime.evaluate" {
			<-gate
		}
		return fakeext.DefaultHandler(tabID, sid, method, p)
	}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	a := h.send(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"})
	b := h.send(c, sess, "Runtime.evaluate", map[string]any{"expression": "2"})
	h.waitFor("two in flight", func() bool {
		cl := currentClient(h.srv.def)
		return cl != nil && cl.Inflight.Load() == 2
	})
	m := h.callMsg(c, sess, "Runtime.evaluate", map[string]any{"expression": "3"})
	if m.Error == nil || !strings.Contains(m.Error.Message, "waiting for the browser") {
		t.Fatalf("third command: %s", m.Raw)
	}
	close(gate)
	for _, id := range []int64{a, b} {
		if r, _ := h.reply(c, id); r.Error != nil {
			t.Fatalf("held command failed: %s", r.Raw)
		}
	}
	// Room again once the replies came.
	h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "4"})
}

func TestIdleClientClosed(t *testing.T) {
	h := newHarness(t, config.Config{IdleClientTimeout: 150 * time.Millisecond})
	h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1}}})
	c := h.client()
	h.call(c, "", "Browser.getVersion", nil)
	code, text := h.closed(c)
	if code != 1001 || !strings.Contains(text, "sent nothing") {
		t.Fatalf("idle client closed with %d %q", code, text)
	}
}

func TestMaxInstances(t *testing.T) {
	h := newHarness(t, config.Config{MaxInstances: 2})
	if _, err := h.srv.NewInstance(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.srv.NewInstance(); err == nil || !strings.Contains(err.Error(), "MaxInstances") {
		t.Fatalf("third instance: %v", err)
	}
}

// TestFloodStaysBounded: a client that writes commands as fast as it can
// and never reads is either served or closed; what the relay holds for it
// stays within its queue bound.
func TestFloodStaysBounded(t *testing.T) {
	h := newHarness(t, config.Config{ClientQueue: 64, CommandsPerSecond: -1})
	h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1}}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	frame := []byte(`{"id":1,"sessionId":"` + sess + `","method":"Runtime.evaluate","params":{"expression":"1"}}`)
	for i := 0; i < 5000; i++ {
		if err := c.WriteRaw(frame); err != nil {
			break // closed for not reading: fine
		}
		cl := currentClient(h.srv.def)
		// The queue's 64, the one message the writer holds, and one for
		// each goroutine that may be delivering to the client at this
		// moment, each counted before its send: the read loop (errors)
		// and the extension's read loop (replies).
		if cl != nil && cl.P.Queued() > 64+1+2 {
			t.Fatalf("client queue holds %d > 64+1+2", cl.P.Queued())
		}
	}
	// The relay still serves a new client once this one is gone or done.
	c.Close()
	h.waitFor("client gone", func() bool { return !h.srv.Default().Status().Client })
	c2 := h.client()
	h.call(c2, "", "Browser.getVersion", nil)
}

// FuzzClientFrame feeds arbitrary frames through the client path of an
// instance with an attached tab: no input may panic, and every frame with
// a usable id gets at most one answer.
func FuzzClientFrame(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"method":"Runtime.evaluate","sessionId":"pw-tab-1","params":{"expression":"1"}}`,
		`{"id":2,"method":"Target.createTarget","params":{"url":"about:blank"}}`,
		`{"id":3,"method":"Target.attachToTarget","params":{"targetId":"T7","flatten":true}}`,
		`{"id":4,"method":"Fetch.enable","sessionId":"pw-tab-1","params":{"patterns":[{"urlPattern":"*"}]}}`,
		`{"id":5,"method":"Target.detachFromTarget","params":{"sessionId":"pw-tab-1"}}`,
		`{"id":6,"method":"Browser.getVersion"}`,
		`{"id":9007199254740993,"method":"x"}`,
		`{"id":1,"method":"Page.startScreencast","sessionId":"pw-tab-1"}`,
		`[1,2,3]`, `{"method":"Runtime.evaluate"}`, `{"id":1,"sessionId":7}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		_, c, _, stop := benchInstance(t)
		defer stop()
		k := &c.Cmd
		if err := wire.DecodeCommand(frame, &k.Env); err != nil {
			c.BadCommand(&k.Env, err)
			return
		}
		c.Handle(k)
		// Emulated commands wait for an extension that never answers here:
		// end them as a leaving client would.
		c.Cancel()
		c.Wg.Wait()
	})
}

// TestClientByteBudget: a client that does not read is closed once what
// waits for it passes its byte budget, long before its message count.
func TestClientByteBudget(t *testing.T) {
	h := newHarness(t, config.Config{ClientQueueBytes: 1 << 20})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1}}})
	c := h.client()
	h.call(c, h.autoAttach(c)[0], "Runtime.enable", nil)
	c.Freeze() // stops reading: the socket's buffers fill, then the relay's queue
	big := strings.Repeat("x", 64<<10)
	for i := 0; i < 4000; i++ {
		if e.Event(1, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{map[string]any{"type": "string", "value": big}}}) != nil {
			break
		}
		cl := currentClient(h.srv.def)
		if cl == nil || cl.P.Closed() {
			break
		}
		if b := cl.P.QueuedBytes(); b > 1<<20+128<<10 {
			t.Fatalf("%d bytes queued for a client with a 1 MiB budget", b)
		}
	}
	h.waitFor("the client closed as not reading", func() bool {
		cl := currentClient(h.srv.def)
		return cl == nil || cl.P.Closed()
	})
}

func TestSessionCap(t *testing.T) {
	h := newHarness(t, config.Config{CommandsPerSecond: -1})
	h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1}}})
	c := h.client()
	h.autoAttach(c)
	var last cdptest.Message
	for i := 0; i < core.MaxSessions+1; i++ {
		last = h.callMsg(c, "", "Target.attachToBrowserTarget", nil)
		if last.Error != nil {
			break
		}
	}
	if last.Error == nil || !strings.Contains(last.Error.Message, "too many sessions") {
		t.Fatalf("session %d: %s", core.MaxSessions+1, last.Raw)
	}
}
