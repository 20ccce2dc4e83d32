package relaybench

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay"
)

// RoundTrip runs b.N sequential Runtime.evaluate round trips through a
// relay built from cfg.
func RoundTrip(b *testing.B, cfg relay.Config) {
	if cfg.CommandsPerSecond == 0 {
		// Measure the relay, not its rate limit, which a benchmark loop
		// exceeds by design.
		cfg.CommandsPerSecond = -1
	}
	srv, err := relay.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close(context.Background())
	base := "ws" + strings.TrimPrefix(hs.URL, "http")
	guid := srv.Default().GUID()

	ext, err := fakeext.DialQuick(context.Background(), base+"/extension/"+guid, fakeext.QuickOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer ext.Close()

	cl, _, err := websocket.DefaultDialer.Dial(base+"/devtools/browser/"+guid, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	if err := cl.WriteMessage(websocket.TextMessage, []byte(`{"id":1,"method":"Target.setAutoAttach","params":{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":true}}`)); err != nil {
		b.Fatal(err)
	}
	for {
		_, r, err := cl.ReadMessage()
		if err != nil {
			b.Fatal(err)
		}
		if strings.HasPrefix(string(r), `{"id":1,`) {
			break
		}
	}
	msg := []byte(`{"id":1000000,"method":"Runtime.evaluate","sessionId":"pw-tab-1","params":{"expression":"1"}}`)
	// One round trip first, checked: it must reach the extension, or the
	// loop would time the relay's error reply.
	if err := cl.WriteMessage(websocket.TextMessage, msg); err != nil {
		b.Fatal(err)
	}
	for {
		_, r, err := cl.ReadMessage()
		if err != nil {
			b.Fatal(err)
		}
		if strings.HasPrefix(string(r), `{"id":1000000,`) {
			if !strings.Contains(string(r), `"result":{"result":`) {
				b.Fatalf("the evaluation did not reach the extension: %s", r)
			}
			break
		}
	}
	var digits [7]byte
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		copy(msg[6:13], strconv.AppendInt(digits[:0], int64(1000000+i%9000000), 10))
		if err := cl.WriteMessage(websocket.TextMessage, msg); err != nil {
			b.Fatal(err)
		}
		if _, _, err := cl.NextReader(); err != nil {
			b.Fatal(err)
		}
	}
}
