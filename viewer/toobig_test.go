package viewer

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestViewerMessageTooBig: a viewer that sends a message far larger than
// the limit, still writing it while the live view closes, gets a close
// frame 1009 with the reason, not a connection lost (1006).
func TestViewerMessageTooBig(t *testing.T) {
	h := newHarness(t, Config{MaxMessageBytes: 64 << 10})
	v, err := h.dialViewer("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.conn.Close()
	msg := append([]byte(`{"type":"list","pad":"`), bytes.Repeat([]byte("x"), 24<<20)...)
	go v.conn.WriteMessage(websocket.TextMessage, append(msg, `"}`...))
	_ = v.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		_, _, err := v.conn.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig || !strings.Contains(ce.Text, "larger than 65536 bytes") {
			t.Fatalf("the viewer's connection ended with %v, want 1009 and the reason", err)
		}
		return
	}
}
