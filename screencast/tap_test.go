package screencast

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// closeTap stops tap and waits for it, inside a bubble.
func closeTap(tap *Tap) {
	tap.Close()
	<-tap.Done()
}

func TestStartParams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeSession{}
		tap, err := New(s, Config{Quality: 55, MaxWidth: 1280, MaxHeight: 720})
		if err != nil {
			t.Fatal(err)
		}
		defer closeTap(tap)
		synctest.Wait()
		if n := len(s.Calls()); n != 0 {
			t.Fatalf("a tap without subscribers sent %d commands", n)
		}
		subscribe(t, tap)
		synctest.Wait()
		calls := s.Calls()
		if len(calls) != 1 || calls[0].Method != page.CommandStartScreencast {
			t.Fatalf("calls = %v, want one Page.startScreencast", s.methods())
		}
		want := `{"format":"jpeg","quality":55,"maxWidth":1280,"maxHeight":720,"everyNthFrame":1}`
		if string(calls[0].Params) != want {
			t.Errorf("params = %s, want %s", calls[0].Params, want)
		}
		if st := tap.Status(); st != StatusStarting {
			t.Errorf("status = %s, want starting", st)
		}
	})
}

// TestFanOutOrderAndContent: every subscriber gets every frame, in order,
// with the bytes and geometry Chrome sent.
func TestFanOutOrderAndContent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeSession{}
		tap := newTapIn(t, s, Config{MaxFPS: 1000})
		defer closeTap(tap)
		subs := []*Subscriber{subscribe(t, tap), subscribe(t, tap), subscribe(t, tap)}
		const n = 40
		imgs := make([][]byte, n)
		got := make([][]*Frame, len(subs))
		for i := range n {
			imgs[i] = testJPEG(t, 32+i, 24, i)
			tap.HandleEvent(frameEvent(int64(1000+i), imgs[i]))
			synctest.Wait()
			for j, sub := range subs {
				f, st, _ := sub.Take()
				if f == nil {
					t.Fatalf("subscriber %d got no frame %d", j, i)
				}
				if st != StatusLive {
					t.Fatalf("status = %s, want live", st)
				}
				got[j] = append(got[j], f)
			}
		}
		for j := range subs {
			for i, f := range got[j] {
				if f.Seq != uint64(i+1) {
					t.Fatalf("subscriber %d frame %d: seq %d", j, i, f.Seq)
				}
				if !bytes.Equal(f.JPEG, imgs[i]) {
					t.Fatalf("subscriber %d frame %d: content differs", j, i)
				}
				if f.Width != 32+i || f.Height != 24 {
					t.Fatalf("frame %d: size %d×%d, want %d×24", i, f.Width, f.Height, 32+i)
				}
				if f.Metadata != testMeta {
					t.Fatalf("frame %d: metadata %+v, want %+v", i, f.Metadata, testMeta)
				}
				if i > 0 && got[0][i] != f {
					t.Fatalf("frame %d decoded more than once", i)
				}
			}
		}
		time.Sleep(time.Second) // the paced acks go out
		wantIDs := make([]int64, n)
		for i := range wantIDs {
			wantIDs[i] = int64(1000 + i)
		}
		if ids := s.ackIDs(t); !slices.Equal(ids, wantIDs) {
			t.Errorf("acks = %v, want each frame's own sessionId %v", ids, wantIDs)
		}
	})
}

// newTapIn is newTestTap for a bubble, where cleanup must be explicit.
func newTapIn(t *testing.T, s Session, cfg Config) *Tap {
	t.Helper()
	tap, err := New(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tap
}

// TestFrozenSubscriber is the tap's TestSendFreeze: one subscriber never
// takes a frame; the others must still get every frame, and the frozen
// one's losses are counted.
func TestFrozenSubscriber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m, err := NewMetrics(reg)
		if err != nil {
			t.Fatal(err)
		}
		s := &fakeSession{}
		tap := newTapIn(t, s, Config{MaxFPS: 1000, Metrics: m})
		defer closeTap(tap)
		frozen := subscribe(t, tap)
		a, b := subscribe(t, tap), subscribe(t, tap)
		img := testJPEG(t, 16, 16, 1)
		const n = 200
		for i := range n {
			tap.HandleEvent(frameEvent(int64(i+1), img))
			synctest.Wait()
			for _, sub := range []*Subscriber{a, b} {
				f, _, _ := sub.Take()
				if f == nil || f.Seq != uint64(i+1) {
					t.Fatalf("healthy subscriber missed frame %d (got %v)", i+1, f)
				}
			}
		}
		if d := frozen.Dropped(); d != n-1 {
			t.Errorf("frozen subscriber dropped %d, want %d", d, n-1)
		}
		if f, _, _ := frozen.Take(); f == nil || f.Seq != n {
			t.Errorf("frozen subscriber's slot holds %v, want the newest frame", f)
		}
		if d := a.Dropped() + b.Dropped(); d != 0 {
			t.Errorf("healthy subscribers dropped %d", d)
		}
		if got := testutil.ToFloat64(m.framesDropped.WithLabelValues(string(DropSlowSubscriber))); got != n-1 {
			t.Errorf("dropped{slow_subscriber} = %v, want %d", got, n-1)
		}
		if got := testutil.ToFloat64(m.framesSent); got != 2*n+1 {
			t.Errorf("sent = %v, want %d", got, 2*n+1)
		}
		time.Sleep(time.Second)
		if got := len(s.ackIDs(t)); got != n {
			t.Errorf("acked %d frames, want %d", got, n)
		}
	})
}

// TestFrozenSubscriberConcurrent runs the same freeze with real
// goroutines consuming as they would in the viewer: the healthy
// consumers, scheduled freely, never lose a frame that was published
// after they took the previous one.
func TestFrozenSubscriberConcurrent(t *testing.T) {
	s := &fakeSession{}
	tap := newTestTap(t, s, Config{MaxFPS: 1000})
	frozen := subscribe(t, tap)
	const healthy, n = 8, 300
	var wg sync.WaitGroup
	took := make([]chan uint64, healthy)
	for i := range healthy {
		sub := subscribe(t, tap)
		took[i] = make(chan uint64, n)
		wg.Go(func() {
			for {
				<-sub.Ready()
				f, _, _ := sub.Take()
				if f == nil {
					continue
				}
				took[i] <- f.Seq
				if f.Seq == n {
					return
				}
			}
		})
	}
	img := testJPEG(t, 16, 16, 1)
	for i := range n {
		tap.HandleEvent(frameEvent(int64(i+1), img))
		// Wait until every healthy consumer has this frame: publishing
		// goes at the pace of the healthy, whatever the frozen one does.
		for j := range healthy {
			select {
			case seq := <-took[j]:
				if seq != uint64(i+1) {
					t.Fatalf("consumer %d got seq %d, want %d", j, seq, i+1)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("consumer %d did not get frame %d", j, i+1)
			}
		}
	}
	wg.Wait()
	if frozen.Dropped() != n-1 {
		t.Errorf("frozen dropped %d, want %d", frozen.Dropped(), n-1)
	}
}

func TestNewSubscriberGetsLastFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeSession{}
		tap := newTapIn(t, s, Config{})
		defer closeTap(tap)
		first := subscribe(t, tap)
		img := testJPEG(t, 20, 10, 3)
		tap.HandleEvent(frameEvent(7, img))
		synctest.Wait()
		first.Take()
		// A static page sends nothing more; a late viewer still sees it.
		time.Sleep(10 * time.Second)
		late := subscribe(t, tap)
		select {
		case <-late.Ready():
		default:
			t.Fatal("a new subscriber was not signalled")
		}
		f, st, changed := late.Take()
		if f == nil || !bytes.Equal(f.JPEG, img) {
			t.Fatalf("late subscriber got %v, want the last frame", f)
		}
		if st != StatusNoFrames || !changed {
			t.Errorf("late subscriber status %s (changed %v), want no-frames", st, changed)
		}
	})
}

// TestAckPacing models Chrome: a page repainting at 60 fps, and a frame
// sent only while fewer than three are unacked. The tap's ack timing alone
// must hold the rate to the cap.
func TestAckPacing(t *testing.T) {
	for _, tc := range []struct {
		fps      float64
		min, max int // frames in 10 s
	}{
		{fps: 10, min: 98, max: 103},
		{fps: 24, min: 237, max: 243},
		{fps: 1000, min: 590, max: 601}, // above the source: the source's rate
	} {
		t.Run("", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				chrome := &chromeModel{}
				s := &fakeSession{onCall: chrome.onCall}
				tap := newTapIn(t, s, Config{MaxFPS: tc.fps, NoFramesAfter: time.Hour})
				chrome.tap = tap
				chrome.img = testJPEG(t, 8, 8, 0)
				sub := subscribe(t, tap)
				stop := make(chan struct{})
				go chrome.paint(stop)
				time.Sleep(10*time.Second - time.Nanosecond)
				close(stop)
				synctest.Wait()
				frames := chrome.sent()
				sub.Close()
				<-tap.Done()
				t.Logf("cap %v fps: %d frames in 10 s", tc.fps, frames)
				if frames < tc.min || frames > tc.max {
					t.Errorf("cap %v fps: %d frames in 10 s, want %d–%d", tc.fps, frames, tc.min, tc.max)
				}
				// After the first three (Chrome's window), acks are at
				// least one interval apart.
				var acks []time.Time
				for _, c := range s.Calls() {
					if c.Method == page.CommandScreencastFrameAck {
						acks = append(acks, c.At)
					}
				}
				interval := time.Duration(float64(time.Second) / tc.fps)
				for i := 1; i < len(acks); i++ {
					if d := acks[i].Sub(acks[i-1]); d < interval {
						t.Fatalf("acks %d and %d are %v apart, less than %v", i-1, i, d, interval)
					}
				}
			})
		})
	}
}

// chromeModel is Chrome's side of a screencast: a frame per repaint
// while fewer than three are unacked.
type chromeModel struct {
	tap *Tap
	img []byte

	mu       sync.Mutex
	running  bool
	inFlight int
	next     int64
	total    int
}

func (c *chromeModel) onCall(method string, params json.RawMessage) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch method {
	case page.CommandStartScreencast:
		c.running = true
	case page.CommandStopScreencast:
		c.running = false
	case page.CommandScreencastFrameAck:
		c.inFlight--
	}
	return nil
}

func (c *chromeModel) paint(stop chan struct{}) {
	tick := time.NewTicker(time.Second / 60)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		c.mu.Lock()
		send := c.running && c.inFlight < 3
		if send {
			c.inFlight++
			c.next++
			c.total++
		}
		id := c.next
		c.mu.Unlock()
		if send {
			c.tap.HandleEvent(frameEvent(id, c.img))
		}
	}
}

func (c *chromeModel) sent() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

func TestNoFramesStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tap := newTapIn(t, &fakeSession{}, Config{})
		defer closeTap(tap)
		sub := subscribe(t, tap)
		expect := func(want Status) {
			t.Helper()
			synctest.Wait()
			_, st, _ := sub.Take()
			if st != want {
				t.Fatalf("status = %s, want %s", st, want)
			}
		}
		expect(StatusStarting)
		time.Sleep(1999 * time.Millisecond)
		expect(StatusStarting)
		time.Sleep(time.Millisecond)
		expect(StatusNoFrames)
		tap.HandleEvent(frameEvent(1, testJPEG(t, 8, 8, 1)))
		expect(StatusLive)
		time.Sleep(1500 * time.Millisecond)
		tap.HandleEvent(frameEvent(2, testJPEG(t, 8, 8, 2)))
		time.Sleep(1500 * time.Millisecond)
		expect(StatusLive)
		time.Sleep(500 * time.Millisecond)
		expect(StatusNoFrames)
	})
}

func TestStopOnLastUnsubscribe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeSession{}
		tap := newTapIn(t, s, Config{})
		a, b := subscribe(t, tap), subscribe(t, tap)
		synctest.Wait()
		a.Close()
		a.Close()
		synctest.Wait()
		if n := s.count(page.CommandStopScreencast); n != 0 {
			t.Fatal("stopped while a subscriber remained")
		}
		b.Close()
		<-tap.Done()
		if got := s.methods(); !slices.Equal(got, []string{page.CommandStartScreencast, page.CommandStopScreencast}) {
			t.Errorf("calls = %v", got)
		}
		if _, err := tap.Subscribe(); !errors.Is(err, ErrClosed) {
			t.Errorf("Subscribe after the end: %v, want ErrClosed", err)
		}
		if st := tap.Status(); st != StatusStopped {
			t.Errorf("status = %s, want stopped", st)
		}
	})
}

func TestDetachedEndsTap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeSession{}
		tap := newTapIn(t, s, Config{})
		sub := subscribe(t, tap)
		synctest.Wait()
		tap.HandleEvent(Event{Method: EventDetached, Params: []byte(`{"reason":"tab no longer shared"}`)})
		<-tap.Done()
		_, st, changed := sub.Take()
		if st != StatusDetached || !changed {
			t.Errorf("status = %s, want detached", st)
		}
		// The tab is gone: nothing is sent to it any more.
		if got := s.methods(); !slices.Equal(got, []string{page.CommandStartScreencast}) {
			t.Errorf("calls = %v", got)
		}
		tap.HandleEvent(frameEvent(9, testJPEG(t, 8, 8, 1)))
		sub.Close()
	})
}

func TestRestartOnAttached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeSession{}
		tap := newTapIn(t, s, Config{})
		defer closeTap(tap)
		subscribe(t, tap)
		synctest.Wait()
		tap.HandleEvent(Event{Method: EventAttached})
		synctest.Wait()
		if n := s.count(page.CommandStartScreencast); n != 2 {
			t.Errorf("started %d times, want 2 (once more after the re-attach)", n)
		}
	})
}

// TestClientScreencast: while the CDP client runs its own screencast the
// tap shows its frames and leaves the acks to the client; when the client
// stops, the tap starts its own again.
func TestClientScreencast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeSession{}
		tap := newTapIn(t, s, Config{})
		sub := subscribe(t, tap)
		synctest.Wait()
		tap.HandleEvent(Event{Method: EventClientScreencast, Params: []byte(`{"active":true}`)})
		for i := range 5 {
			tap.HandleEvent(Event{Method: EventFrame, Params: frameParams(int64(50+i), testJPEG(t, 8, 8, i), testMeta), ClientScreencast: true})
			synctest.Wait()
			f, _, _ := sub.Take()
			if f == nil || !f.ClientOwned {
				t.Fatalf("client frame %d not shown: %v", i, f)
			}
		}
		if n := s.count(page.CommandScreencastFrameAck); n != 0 {
			t.Fatalf("the tap acked %d of the client's frames", n)
		}
		tap.HandleEvent(Event{Method: EventClientScreencast, Params: []byte(`{"active":false}`)})
		synctest.Wait()
		if n := s.count(page.CommandStartScreencast); n != 2 {
			t.Errorf("started %d times, want 2 (again after the client stopped)", n)
		}
		// While the client's screencast runs, the tap must not stop it.
		tap.HandleEvent(Event{Method: EventClientScreencast, Params: []byte(`{"active":true}`)})
		synctest.Wait()
		sub.Close()
		<-tap.Done()
		if n := s.count(page.CommandStopScreencast); n != 0 {
			t.Errorf("the tap stopped the client's screencast")
		}
	})
}

// TestClientBacklog: client frames beyond what the tap can decode are
// dropped, the oldest first; our own frames never are.
func TestClientBacklog(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, _ := NewMetrics(reg)
	entered, block := make(chan struct{}), make(chan struct{})
	s := &fakeSession{onCall: func(method string, _ json.RawMessage) error {
		if method == page.CommandStartScreencast {
			close(entered)
			<-block // hold the run loop so that the inbox fills
		}
		return nil
	}}
	tap := newTestTap(t, s, Config{Metrics: m})
	sub := subscribe(t, tap)
	defer sub.Close()
	<-entered
	for i := range 10 {
		tap.HandleEvent(frameEvent(int64(100+i), testJPEG(t, 8, 8, i)))
	}
	for i := range 10 {
		tap.HandleEvent(Event{Method: EventFrame, Params: frameParams(int64(i), testJPEG(t, 10+i, 8, i), testMeta), ClientScreencast: true})
	}
	close(block)
	deadline := time.Now().Add(5 * time.Second)
	for len(s.ackIDs(t)) < 10 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := testutil.ToFloat64(m.framesDropped.WithLabelValues(string(DropBacklog))); got != 8 {
		t.Errorf("dropped{backlog} = %v, want 8", got)
	}
	if got := len(s.ackIDs(t)); got != 10 {
		t.Errorf("acked %d of our 10 frames", got)
	}
	if f := tap.Last(); f == nil || f.Width != 19 {
		t.Errorf("last frame %v, want the newest client frame (width 19)", f)
	}
}

func TestMalformedFrameStillAcked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		m, _ := NewMetrics(reg)
		s := &fakeSession{}
		tap := newTapIn(t, s, Config{Metrics: m})
		defer closeTap(tap)
		sub := subscribe(t, tap)
		synctest.Wait()
		tap.HandleEvent(Event{Method: EventFrame, Params: []byte(`{"data":"!!not base64!!","metadata":{},"sessionId":42}`)})
		tap.HandleEvent(Event{Method: EventFrame, Params: []byte(`{"data":`)})
		synctest.Wait()
		if f, _, _ := sub.Take(); f != nil {
			t.Errorf("a malformed frame was delivered")
		}
		if ids := s.ackIDs(t); !slices.Equal(ids, []int64{42}) {
			t.Errorf("acks = %v, want [42]: an unacked frame stalls Chrome", ids)
		}
		if got := testutil.ToFloat64(m.framesDropped.WithLabelValues(string(DropMalformed))); got != 2 {
			t.Errorf("dropped{malformed} = %v, want 2", got)
		}
	})
}

func TestStartFailureRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fail := true
		var mu sync.Mutex
		s := &fakeSession{onCall: func(method string, _ json.RawMessage) error {
			mu.Lock()
			defer mu.Unlock()
			if method == page.CommandStartScreencast && fail {
				return errors.New("Debugger is not attached")
			}
			return nil
		}}
		tap := newTapIn(t, s, Config{})
		defer closeTap(tap)
		subscribe(t, tap)
		synctest.Wait()
		mu.Lock()
		fail = false
		mu.Unlock()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := s.count(page.CommandStartScreencast); n != 2 {
			t.Errorf("startScreencast tried %d times, want 2", n)
		}
	})
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{Quality: 101}, {Quality: -1}, {MaxFPS: -3}, {MaxWidth: 8}, {NoFramesAfter: -time.Second}} {
		if c.Validate() == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
}

func TestMetricsLint(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	// Every drop reason and source exists from the start, at zero.
	var want strings.Builder
	want.WriteString("# HELP cdprelay_screencast_frames_dropped_total Frames that did not reach a subscriber, by reason.\n# TYPE cdprelay_screencast_frames_dropped_total counter\n")
	for _, r := range []string{"backlog", "malformed", "slow_subscriber", "stopped", "unsubscribed"} {
		want.WriteString(`cdprelay_screencast_frames_dropped_total{reason="` + r + `"} 0` + "\n")
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want.String()), "cdprelay_screencast_frames_dropped_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "cdprelay_screencast_frames_received_total"); n != 2 {
		t.Errorf("frames_received has %d series, want 2 (own, client)", n)
	}
}
