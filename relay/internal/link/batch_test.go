package link

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// Batch frames to the extension (docs/EXTENSION-PROTOCOL.md, feature
// "batches"): the writer's side.

// pipe is a relay-side peer and the socket at its other end.
func pipe(t *testing.T) (*Peer, *websocket.Conn) {
	t.Helper()
	conns := make(chan *websocket.Conn, 1)
	up := websocket.Upgrader{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		conns <- c
	}))
	t.Cleanup(hs.Close)
	far, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	far.SetReadLimit(64 << 20)
	t.Cleanup(func() { far.Close() })
	p := NewPeer(<-conns, 1024, 0)
	t.Cleanup(func() {
		p.Shutdown(websocket.CloseNormalClosure, "")
		<-p.writerDone
	})
	return p, far
}

func queueCall(t *testing.T, p *Peer, id int64, args string) {
	t.Helper()
	b := GetBuf()
	*b = wire.AppendCall(*b, id, "chrome.debugger.sendCommand", []byte(args))
	if !p.TrySend(b) {
		t.Fatal("queue full")
	}
}

// readFrames reads frames from far until it has seen n messages, and
// returns the frames and the ids of the messages in order.
func readFrames(t *testing.T, far *websocket.Conn, n int) (frames [][]byte, ids []int64) {
	t.Helper()
	_ = far.SetReadDeadline(time.Now().Add(10 * time.Second))
	for len(ids) < n {
		_, f, err := far.ReadMessage()
		if err != nil {
			t.Fatalf("after %d messages: %v", len(ids), err)
		}
		frames = append(frames, f)
		var one []json.RawMessage
		if wire.IsBatch(f) {
			if err := json.Unmarshal(f, &one); err != nil {
				t.Fatalf("batch frame: %v", err)
			}
		} else {
			one = []json.RawMessage{f}
		}
		for _, m := range one {
			var v struct{ ID int64 }
			if err := json.Unmarshal(m, &v); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, v.ID)
		}
	}
	return frames, ids
}

// TestBatchToExtension: what is queued for a peer that takes batches goes
// in one frame, in order; frames stay under maxBatchBytes, a message that
// large travels alone; a peer without batches gets a frame per message.
func TestBatchToExtension(t *testing.T) {
	t.Parallel()
	t.Run("queued together", func(t *testing.T) {
		t.Parallel()
		p, far := pipe(t)
		p.EnableBatches()
		for id := int64(1); id <= 20; id++ {
			queueCall(t, p, id, `[{"tabId":1},"Runtime.evaluate",{"expression":"1"}]`)
		}
		go p.WriteLoop(0, func(string, any) {})
		frames, ids := readFrames(t, far, 20)
		if len(frames) != 1 {
			t.Errorf("%d frames for 20 queued messages, want 1", len(frames))
		}
		checkOrder(t, ids, 20)
	})
	t.Run("size bound", func(t *testing.T) {
		t.Parallel()
		p, far := pipe(t)
		p.EnableBatches()
		big := `[{"tabId":1},"Runtime.evaluate",{"expression":"` + strings.Repeat("x", maxBatchBytes) + `"}]`
		mid := `[{"tabId":1},"Runtime.evaluate",{"expression":"` + strings.Repeat("y", maxBatchBytes/3) + `"}]`
		args := []string{`[]`, big, `[]`, mid, mid, mid, mid, `[]`, big, big, `[]`}
		for i, a := range args {
			queueCall(t, p, int64(i+1), a)
		}
		go p.WriteLoop(0, func(string, any) {})
		frames, ids := readFrames(t, far, len(args))
		checkOrder(t, ids, len(args))
		// What was queued behind a message goes with it while it fits;
		// the last one, with nothing behind it, goes as it is.
		var shape []string
		for _, f := range frames {
			if wire.IsBatch(f) && len(f) > maxBatchBytes {
				t.Errorf("a batch frame of %d bytes, over %d", len(f), maxBatchBytes)
			}
			switch {
			case wire.IsBatch(f):
				var els []json.RawMessage
				json.Unmarshal(f, &els)
				shape = append(shape, fmt.Sprintf("batch of %d", len(els)))
			case len(f) > maxBatchBytes:
				shape = append(shape, "large alone")
			default:
				shape = append(shape, "small alone")
			}
		}
		want := "batch of 1, large alone, batch of 3, batch of 3, large alone, large alone, small alone"
		if got := strings.Join(shape, ", "); got != want {
			t.Errorf("frames: %s\nwant:   %s", got, want)
		}
	})
	t.Run("without batches", func(t *testing.T) {
		t.Parallel()
		p, far := pipe(t)
		for id := int64(1); id <= 5; id++ {
			queueCall(t, p, id, `[]`)
		}
		go p.WriteLoop(0, func(string, any) {})
		frames, ids := readFrames(t, far, 5)
		checkOrder(t, ids, 5)
		for _, f := range frames {
			if wire.IsBatch(f) {
				t.Errorf("a batch frame to a peer without batches: %.80s", f)
			}
		}
	})
}

func checkOrder(t *testing.T, ids []int64, n int) {
	t.Helper()
	if len(ids) != n {
		t.Fatalf("%d messages, want %d", len(ids), n)
	}
	for i, id := range ids {
		if id != int64(i+1) {
			t.Fatalf("order %v", ids)
		}
	}
}
