package screencast

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/leakcheck"

	"github.com/chromedp/cdproto/page"
)

// call is one command a fakeSession received.
type call struct {
	Method string
	Params json.RawMessage
	At     time.Time
}

// fakeSession records the tap's commands. onCall, when set, runs for each
// one and may answer with an error.
type fakeSession struct {
	mu     sync.Mutex
	calls  []call
	onCall func(method string, params json.RawMessage) error
}

func (s *fakeSession) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	s.mu.Lock()
	s.calls = append(s.calls, call{method, raw, time.Now()})
	hook := s.onCall
	s.mu.Unlock()
	if hook != nil {
		if err := hook(method, raw); err != nil {
			return nil, err
		}
	}
	return json.RawMessage(`{}`), nil
}

func (s *fakeSession) Calls() []call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]call(nil), s.calls...)
}

func (s *fakeSession) methods() []string {
	var out []string
	for _, c := range s.Calls() {
		out = append(out, c.Method)
	}
	return out
}

func (s *fakeSession) count(method string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Method == method {
			n++
		}
	}
	return n
}

// ackIDs returns the sessionId of every ack, in order.
func (s *fakeSession) ackIDs(t testing.TB) []int64 {
	t.Helper()
	var out []int64
	for _, c := range s.Calls() {
		if c.Method != page.CommandScreencastFrameAck {
			continue
		}
		var p page.ScreencastFrameAckParams
		if err := json.Unmarshal(c.Params, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.SessionID)
	}
	return out
}

// testJPEG encodes a w×h image whose colour depends on n, so that frames
// differ in content.
func testJPEG(t testing.TB, w, h, n int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	c := color.RGBA{uint8(n * 37), uint8(n * 91), uint8(n * 13), 255}
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var testMeta = Metadata{OffsetTop: 0, PageScaleFactor: 1, DeviceWidth: 800, DeviceHeight: 600, ScrollOffsetX: 3, ScrollOffsetY: 120, Timestamp: 1.7e9}

// frameParams is a Page.screencastFrame event's params as Chrome sends it.
func frameParams(id int64, img []byte, md Metadata) []byte {
	b, _ := json.Marshal(map[string]any{
		"data":      base64.StdEncoding.EncodeToString(img),
		"metadata":  md,
		"sessionId": id,
	})
	return b
}

func frameEvent(id int64, img []byte) Event {
	return Event{Method: EventFrame, Params: frameParams(id, img, testMeta)}
}

// newTestTap starts a tap and stops it when the test ends.
func newTestTap(t testing.TB, s Session, cfg Config) *Tap {
	t.Helper()
	tap, err := New(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tap.Close()
		<-tap.Done()
	})
	return tap
}

func subscribe(t testing.TB, tap *Tap) *Subscriber {
	t.Helper()
	s, err := tap.Subscribe()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMain fails the package when a tap's goroutine outlives the tests.
func TestMain(m *testing.M) { leakcheck.Main(m, "github.com/cdprelay/cdprelay/screencast.(*Tap)") }
