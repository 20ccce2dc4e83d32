// Package relaybench measures a command's round trip through a relay over
// real loopback WebSockets, against an extension peer that answers at once.
// The figure includes both peers' own socket work, so it is the relay's
// cost as a client sees it with the browser taken out.
package relaybench

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wire"
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

	ext, _, err := websocket.DefaultDialer.Dial(base+"/extension/"+guid, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ext.Close()
	send := func(s string) {
		if err := ext.WriteMessage(websocket.TextMessage, []byte(s)); err != nil {
			b.Fatal(err)
		}
	}
	send(`{"method":"chrome.tabs.onCreated","params":[{"id":7,"url":"about:blank","title":"","targetId":"T7"}]}`)
	send(`{"method":"extension.initialized","params":[]}`)
	go answer(ext)

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

// answer is the extension: it replies to every command at once, with a
// target info during setup and an evaluation result after.
func answer(ext *websocket.Conn) {
	var reply []byte
	for {
		_, frame, err := ext.ReadMessage()
		if err != nil {
			return
		}
		reply = append(reply[:0], `{"id":`...)
		reply = append(reply, wire.Field(frame, "id")...)
		switch {
		case strings.Contains(string(frame), `"Target.getTargetInfo"`):
			reply = append(reply, `,"result":{"targetInfo":{"targetId":"T7","type":"page","title":"","url":"about:blank","attached":true,"browserContextId":"C"}}}`...)
		case strings.Contains(string(frame), `"Page.getFrameTree"`):
			reply = append(reply, `,"result":{"frameTree":{"frame":{"id":"T7","url":"about:blank"}}}}`...)
		default:
			reply = append(reply, `,"result":{"result":{"type":"number","value":1,"description":"1"}}}`...)
		}
		if ext.WriteMessage(websocket.TextMessage, reply) != nil {
			return
		}
	}
}
