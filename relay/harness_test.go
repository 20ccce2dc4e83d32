package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// harness is a relay on a real loopback socket with helpers to connect a
// fake extension and CDP clients to its default instance.
type harness struct {
	t   *testing.T
	srv *Server
	hs  *httptest.Server
	ctx context.Context
}

func newHarness(t *testing.T, cfg config.Config) *harness {
	t.Helper()
	if cfg.Logger == nil && testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	// Generous for a loaded CI machine, short enough that a hang fails the
	// test rather than the package.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		if err := srv.Close(cctx); err != nil {
			t.Errorf("relay close: %v", err)
		}
		hs.Close()
		cancel()
	})
	return &harness{t: t, srv: srv, hs: hs, ctx: ctx}
}

// renew gives the rest of a test a fresh budget: for a test whose first
// part is long by design (megabytes written under the race detector on a
// loaded machine), so that its last steps do not fail for want of time.
func (h *harness) renew() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	h.t.Cleanup(cancel)
	h.ctx = ctx
}

func (h *harness) wsBase() string { return "ws" + strings.TrimPrefix(h.hs.URL, "http") }

func (h *harness) extURL(in *core.Instance) string { return h.wsBase() + "/extension/" + in.GUID() }

func (h *harness) cdpURL(in *core.Instance) string {
	return h.wsBase() + "/devtools/browser/" + in.GUID()
}

func (h *harness) ext(opts fakeext.Options) *fakeext.Ext {
	h.t.Helper()
	return h.extAt(h.extURL(h.srv.Default()), opts)
}

func (h *harness) extAt(url string, opts fakeext.Options) *fakeext.Ext {
	h.t.Helper()
	e, err := fakeext.Dial(h.ctx, url, opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(e.Close)
	return e
}

func (h *harness) client() *cdptest.Client {
	h.t.Helper()
	return h.clientAt(h.cdpURL(h.srv.Default()))
}

func (h *harness) clientAt(url string) *cdptest.Client {
	h.t.Helper()
	c, err := cdptest.Dial(h.ctx, url, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(c.Close)
	return c
}

// send writes a command whose reply is recorded in order among the
// client's messages.
func (h *harness) send(c *cdptest.Client, sessionID, method string, params any) int64 {
	h.t.Helper()
	id, err := c.Send(sessionID, method, params)
	if err != nil {
		h.t.Fatalf("send %s: %v", method, err)
	}
	return id
}

// reply waits for the reply to id and returns it with its index.
func (h *harness) reply(c *cdptest.Client, id int64) (cdptest.Message, int) {
	h.t.Helper()
	m, i, err := c.WaitReply(h.ctx, id)
	if err != nil {
		h.t.Fatalf("reply to %d: %v (messages so far: %s)", id, err, describe(c.Messages()))
	}
	return m, i
}

// call sends a command and returns its result, failing on a CDP error.
func (h *harness) call(c *cdptest.Client, sessionID, method string, params any) json.RawMessage {
	h.t.Helper()
	res, err := c.Call(h.ctx, sessionID, method, params)
	if err != nil {
		h.t.Fatalf("%s: %v", method, err)
	}
	return res
}

// callErr sends a command that must fail and returns the whole reply.
func (h *harness) callMsg(c *cdptest.Client, sessionID, method string, params any) cdptest.Message {
	h.t.Helper()
	m, err := c.CallMessage(h.ctx, sessionID, method, params)
	if err != nil {
		h.t.Fatalf("%s: %v", method, err)
	}
	return m
}

// event waits for a message at index from or later that is the event
// method, and returns it with its index.
func (h *harness) event(c *cdptest.Client, from int, method string) (cdptest.Message, int) {
	h.t.Helper()
	m, i, err := c.WaitMessage(h.ctx, from, func(m cdptest.Message) bool { return m.Method == method })
	if err != nil {
		h.t.Fatalf("waiting for %s: %v (messages so far: %s)", method, err, describe(c.Messages()))
	}
	return m, i
}

// autoAttach switches root auto-attach on, checks that every
// Target.attachedToTarget came before the reply and nothing else did, and
// returns the session ids in the order announced.
func (h *harness) autoAttach(c *cdptest.Client) []string {
	h.t.Helper()
	from := len(c.Messages())
	id := h.send(c, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	m, at := h.reply(c, id)
	mustMatch(h.t, m.Raw, fmt.Sprintf(`{"id":%d,"result":{}}`, id))
	var sessions []string
	for _, ev := range c.Messages()[from:at] {
		if ev.Method != "Target.attachedToTarget" {
			h.t.Fatalf("before the setAutoAttach reply: %s", ev.Raw)
		}
		var p struct{ SessionID string }
		if err := json.Unmarshal(ev.Params, &p); err != nil {
			h.t.Fatal(err)
		}
		sessions = append(sessions, p.SessionID)
	}
	return sessions
}

// waitFor polls cond until it holds or the test's deadline passes.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-h.ctx.Done():
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// closed waits for the relay to close c and returns the close frame.
func (h *harness) closed(c *cdptest.Client) (code int, text string) {
	h.t.Helper()
	select {
	case <-c.Done():
	case <-h.ctx.Done():
		h.t.Fatalf("client was not closed")
	}
	return closeFrame(h.t, c.CloseErr())
}

// commandsSince returns the fake's commands after the first n.
func commandsSince(e *fakeext.Ext, n int) []fakeext.Command { return e.Commands()[n:] }

// tid is the target id the fake extension gives tab id.
func tid(id int) string { return fmt.Sprintf("%032X", id*7919) }

// fakeContext is the browserContextId the fake's Target.getTargetInfo
// reports.
const fakeContext = "FAKECONTEXT0000000000000000000000"

const (
	fakeUA      = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36"
	fakeProduct = "Chrome/156.0.8078.108"
)

// pageInfo is the pattern of an attached page's TargetInfo as the relay
// reports it for a fake tab.
func pageInfo(id int, url, title string, attached bool) string {
	return fmt.Sprintf(`{"targetId":%q,"type":"page","title":%q,"url":%q,"attached":%t,"canAccessOpener":false,"browserContextId":%q}`,
		tid(id), title, url, attached, fakeContext)
}

func attachedEvent(session string, info string) string {
	return fmt.Sprintf(`{"method":"Target.attachedToTarget","params":{"sessionId":%q,"targetInfo":%s,"waitingForDebugger":false}}`, session, info)
}

// detachedEventWhy is a Target.detachedFromTarget with the relay's reason.
func detachedEventWhy(session string, tabID int, why string) string {
	return fmt.Sprintf(`{"method":"Target.detachedFromTarget","params":{"sessionId":%q,"targetId":%q,"reason":%q}}`, session, tid(tabID), why)
}

func detachedEvent(session string, tabID int) string {
	return fmt.Sprintf(`{"method":"Target.detachedFromTarget","params":{"sessionId":%q,"targetId":%q}}`, session, tid(tabID))
}

// describe renders messages compactly for failure output.
func describe(ms []cdptest.Message) string {
	var b strings.Builder
	for i, m := range ms {
		fmt.Fprintf(&b, "\n  [%d] %s", i, m.Raw)
	}
	return b.String()
}

// currentClient is the instance's client connection, for tests that look
// at its queues.
func currentClient(in *core.Instance) *core.ClientConn {
	st := in.Lock()
	defer in.Unlock()
	return st.Client
}
