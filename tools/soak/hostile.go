package main

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/cdptest"
)

// hostileCase is one frame a broken or malicious client might send, and
// what the relay must do about it.
type hostileCase struct {
	name  string
	mt    int
	frame string
	// wantError: the answer must be a CDP error; otherwise any answer
	// will do (a result where the frame happens to be valid).
	wantError bool
}

var hostileCases = []hostileCase{
	{"not JSON", websocket.TextMessage, "this is not JSON", true},
	{"cut short", websocket.TextMessage, `{"id":1,"method":"Browser.getVersion"`, true},
	{"no id", websocket.TextMessage, `{"method":"Browser.getVersion"}`, true},
	{"string id", websocket.TextMessage, `{"id":"7","method":"Browser.getVersion"}`, true},
	{"fractional id", websocket.TextMessage, `{"id":1.5,"method":"Browser.getVersion"}`, true},
	{"id past int64", websocket.TextMessage, `{"id":123456789012345678901234567890,"method":"Browser.getVersion"}`, true},
	{"id 1e400", websocket.TextMessage, `{"id":1e400,"method":"Browser.getVersion"}`, true},
	{"largest int64 id", websocket.TextMessage, `{"id":9223372036854775807,"method":"Browser.getVersion"}`, false},
	{"negative id", websocket.TextMessage, `{"id":-5,"method":"Browser.getVersion"}`, false},
	{"unknown session", websocket.TextMessage, `{"id":11,"sessionId":"no-such-session","method":"Runtime.evaluate","params":{"expression":"1"}}`, true},
	{"numeric session", websocket.TextMessage, `{"id":12,"sessionId":12,"method":"Runtime.evaluate"}`, true},
	{"no method", websocket.TextMessage, `{"id":13}`, true},
	{"empty method", websocket.TextMessage, `{"id":14,"method":""}`, true},
	{"array", websocket.TextMessage, `[1,2,3]`, true},
	{"null", websocket.TextMessage, `null`, true},
	{"params a string", websocket.TextMessage, `{"id":15,"method":"Runtime.evaluate","params":"x"}`, false},
	{"deep nesting", websocket.TextMessage, `{"id":16,"method":"Runtime.evaluate","params":` + strings.Repeat("[", 100000), true},
	{"invalid UTF-8", websocket.TextMessage, "{\"id\":17,\"method\":\"Runtime.\xff\xfe\"}", false},
	{"binary frame", websocket.BinaryMessage, `{"id":18,"method":"Browser.getVersion"}`, true},
	{"1 MiB of junk", websocket.TextMessage, strings.Repeat("x", 1<<20), true},
	{"duplicate id keys", websocket.TextMessage, `{"id":19,"id":20,"method":"Browser.getVersion"}`, false},
	{"attach to no target", websocket.TextMessage, `{"id":21,"method":"Target.attachToTarget","params":{"targetId":"NOPE","flatten":true}}`, true},
	{"close no target", websocket.TextMessage, `{"id":22,"method":"Target.closeTarget","params":{"targetId":"NOPE"}}`, false},
	{"message to no session", websocket.TextMessage, `{"id":23,"method":"Target.sendMessageToTarget","params":{"sessionId":"nope","message":"{}"}}`, false},
}

// hostile sends every hostile frame on a fresh client of fi, one at a
// time: each must get an answer, or the connection a close with a reason,
// within a few seconds, and the relay must still serve the client after.
func hostile(ctx context.Context, t *tally, fi *fakeInstance) {
	c, err := cdptest.Dial(ctx, fi.ws, nil)
	if err != nil {
		t.violate("hostile client: cannot connect: %v", err)
		return
	}
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for _, hc := range hostileCases {
		if ctx.Err() != nil {
			return
		}
		from := len(c.Messages())
		if err := c.Write(hc.mt, []byte(hc.frame)); err != nil {
			t.violate("hostile %q: the relay dropped the connection without a close: %v", hc.name, err)
			return
		}
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		m, _, err := c.WaitMessage(wctx, from, func(cdptest.Message) bool { return true })
		cancel()
		t.inc("hostile frames", hc.name)
		switch {
		case err == nil && hc.wantError && m.Error == nil:
			t.violate("hostile %q: answered without an error: %.200s", hc.name, m.Raw)
		case err == nil:
		case ctx.Err() != nil:
			return
		case errors.Is(err, context.DeadlineExceeded):
			t.violate("hostile %q: no answer within 5 s", hc.name)
			return
		default:
			// Closed: acceptable only with a code and a reason.
			var ce *websocket.CloseError
			if !errors.As(c.CloseErr(), &ce) || ce.Text == "" {
				t.violate("hostile %q: connection ended without a reason: %v", hc.name, c.CloseErr())
				return
			}
			t.note("hostile closed", "%q: %d %s", hc.name, ce.Code, ce.Text)
			c.Close()
			c = nil
			next, err := cdptest.Dial(ctx, fi.ws, nil)
			if err != nil {
				t.violate("hostile client: cannot reconnect: %v", err)
				return
			}
			c = next
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := c.Call(cctx, "", "Browser.getVersion", nil); err != nil && ctx.Err() == nil {
		t.violate("after the hostile frames the relay no longer serves the client: %v", err)
	}
}

// hostileExtension sends frames the relay must ignore on an extension
// connection: junk, a binary frame, a reply to nothing, an event for a tab
// it does not know. The instance must go on working.
func hostileExtension(ctx context.Context, t *tally, fi *fakeInstance) {
	frames := []struct {
		mt int
		b  string
	}{
		{websocket.TextMessage, "junk"},
		{websocket.BinaryMessage, "\x00\x01\x02"},
		{websocket.TextMessage, `{"id":987654321,"result":{}}`},
		{websocket.TextMessage, `{"method":"chrome.debugger.onEvent","params":[{"tabId":424242},"Page.loadEventFired",{}]}`},
		{websocket.TextMessage, `{"method":"chrome.debugger.onDetach","params":[{"tabId":424242},"canceled_by_user"]}`},
		{websocket.TextMessage, `{"method":"chrome.tabs.onCreated","params":[{"id":"not a number"}]}`},
		{websocket.TextMessage, `{"method":"no.such.event","params":[]}`},
	}
	for _, f := range frames {
		if err := fi.ext.Write(f.mt, []byte(f.b)); err != nil {
			t.violate("hostile extension frames: the relay closed the extension: %v", err)
			return
		}
		t.inc("hostile frames", "extension")
	}
	c, err := cdptest.Dial(ctx, fi.ws, nil)
	if err != nil {
		t.violate("after hostile extension frames: cannot connect a client: %v", err)
		return
	}
	defer c.Close()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := c.Call(cctx, "", "Browser.getVersion", nil); err != nil && ctx.Err() == nil {
		t.violate("after hostile extension frames the instance no longer serves: %v", err)
	}
}

// secondClient connects a second client to the default instance, where
// the Playwright client normally is: it must be refused with a reason (or,
// when Playwright happens to be away, served, and then it leaves at once;
// or, when the extension is away too, closed with a reason after wait).
func secondClient(ctx context.Context, t *tally, ws string, wait time.Duration) {
	c, err := cdptest.Dial(ctx, ws, nil)
	if err != nil {
		t.violate("second client: cannot connect: %v", err)
		return
	}
	defer c.Close()
	cctx, cancel := context.WithTimeout(ctx, wait+5*time.Second)
	defer cancel()
	_, err = c.Call(cctx, "", "Browser.getVersion", nil)
	var ce *websocket.CloseError
	switch {
	case err == nil:
		t.inc("second client", "served (no client connected)")
	case errors.As(c.CloseErr(), &ce) && strings.Contains(ce.Text, "Another CDP client"):
		t.inc("second client", "refused with a reason")
	case errors.As(c.CloseErr(), &ce) && ce.Text != "":
		t.inc("second client", "closed: "+ce.Text)
	case ctx.Err() != nil:
	default:
		t.violate("second client: neither served nor refused with a reason: %v (%v)", err, c.CloseErr())
	}
}
