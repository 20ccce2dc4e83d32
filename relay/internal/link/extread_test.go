package link

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/internal/wslimit"
)

// TestExtReader: what the extension sends is handed on message by
// message, in order: a binary frame and a malformed message are skipped;
// an array is one malformed message until batches are on, and then a
// batch whose elements count one by one, up to where its JSON breaks off;
// a message over the bound ends the loop with a close frame 1009.
func TestExtReader(t *testing.T) {
	t.Parallel()
	p, far := pipe(t)
	go p.WriteLoop(0, func(string, any) {})
	var got []string
	started := 0
	r := &ExtReader{}
	*r = ExtReader{
		Peer:       p,
		Log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		Timeout:    time.Minute,
		MaxMessage: 1 << 10,
		Handle: func(m *wire.ExtMessage) {
			if m.HasID {
				got = append(got, "reply "+string(m.Result))
				return
			}
			got = append(got, "event "+string(m.Method))
			if string(m.Method) == "extension.info" && r.StartBatches() {
				started++
			}
		},
	}
	done := make(chan error, 1)
	go func() { done <- r.Run() }()
	frames := []string{
		`{"id":1,"result":{"a":1}}`,
		`[{"id":2,"result":{}}]`,
		`{"id":"two"}`,
		`{"method":"extension.info","params":[]}`,
		`{"method":"extension.info","params":[]}`,
		`[{"id":3,"result":{"b":3}},7,{"method":"Page.x","params":[]},{"id":`,
		`{"id":4,"result":{}}`,
	}
	if err := far.WriteMessage(websocket.BinaryMessage, []byte(`{"id":9,"result":{}}`)); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := far.WriteMessage(websocket.TextMessage, []byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	go far.WriteMessage(websocket.TextMessage, []byte(`{"id":5,"result":"`+strings.Repeat("x", 2<<10)+`"}`))
	_ = far.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err := far.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig {
		t.Errorf("far end read %v, want a close frame 1009", err)
	}
	far.Close()
	select {
	case err := <-done:
		if !wslimit.IsTooBig(err) {
			t.Errorf("Run returned %v, want too big", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	want := []string{`reply {"a":1}`, "event extension.info", "event extension.info", `reply {"b":3}`, "event Page.x", "reply {}"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("handled\n%q\nwant\n%q", got, want)
	}
	if started != 1 || !p.batch.Load() {
		t.Errorf("batches started %d times, writer batches: %v", started, p.batch.Load())
	}
}
