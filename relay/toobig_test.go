package relay

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// tooBigClose sends a message of size bytes on a socket to url and returns
// the close frame the peer answered with.
func tooBigClose(t *testing.T, ctx context.Context, url string, size int) (int, string) {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, url, http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	msg := append([]byte(`{"id":1,"method":"Runtime.evaluate","params":{"expression":"`), bytes.Repeat([]byte("x"), size)...)
	msg = append(msg, `"}}`...)
	go conn.WriteMessage(websocket.TextMessage, msg) // the peer closes while it is written
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) {
				t.Fatalf("the connection ended without a close frame: %v", err)
			}
			return ce.Code, ce.Text
		}
	}
}

// TestMessageTooBigCloses: a CDP client or an extension that sends a
// message far larger than the limit, still writing it while the relay
// closes, gets a close frame 1009 with the reason, not a connection lost
// (1006); the limit is counted.
func TestMessageTooBigCloses(t *testing.T) {
	const limit = 1 << 20
	h := newHarness(t, config.Config{MaxMessageBytes: limit})
	h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	for _, c := range []struct{ name, url string }{
		{"cdp client", h.cdpURL(h.srv.Default())},
		{"extension", h.extURL(func() *core.Instance { in, _ := h.srv.NewInstance(); return in }())},
	} {
		before := testutil.ToFloat64(h.srv.Cfg.Metrics.Limited[metrics.LimitSize])
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		code, text := tooBigClose(t, ctx, c.url, 24<<20)
		cancel()
		if code != websocket.CloseMessageTooBig || !strings.Contains(text, "larger than 1048576 bytes") {
			t.Errorf("%s: closed with %d %q, want 1009 and the reason", c.name, code, text)
		}
		if got := testutil.ToFloat64(h.srv.Cfg.Metrics.Limited[metrics.LimitSize]) - before; got != 1 {
			t.Errorf("%s: %v message-size limits counted", c.name, got)
		}
	}
	// The default instance is free for the next client, which is served.
	h.renew()
	h.waitFor("the client gone", func() bool { return !h.srv.Default().Status().Client })
	c := h.client()
	h.call(c, "", "Browser.getVersion", nil)
}
