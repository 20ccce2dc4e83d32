package screencast

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/chromedp/cdproto/page"
)

// Session is the tab a tap drives. The relay's TabHandle satisfies it.
type Session interface {
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// Methods of the events an owner passes to HandleEvent. The relay's tab
// handle events carry the same names.
const (
	EventFrame = "Page.screencastFrame"
	// EventAttached: the debugger is attached again; the screencast it
	// ran is gone and must be started anew.
	EventAttached = "cdprelay.attached"
	// EventDetached: the tab is gone; the tap ends.
	EventDetached = "cdprelay.detached"
	// EventClientScreencast: the CDP client started or stopped its own
	// screencast. Params: {"active": bool}.
	EventClientScreencast = "cdprelay.clientScreencast"
	// EventHidden: the tab now shows what the live view may not see: the
	// last frame is forgotten, so that no new subscriber is given it.
	EventHidden = "cdprelay.hidden"
)

// Event is one event of the tab.
type Event struct {
	Method string
	Params []byte // owned by the tap once passed in
	// ClientScreencast marks a frame of the CDP client's own screencast:
	// shown, never acked by the tap.
	ClientScreencast bool
}

// Status is what a tap's viewers are told about the stream.
type Status string

const (
	// StatusStarting: the screencast was asked for and no frame came yet.
	StatusStarting Status = "starting"
	// StatusLive: frames are coming.
	StatusLive Status = "live"
	// StatusNoFrames: no frame for a while. Chrome sends frames only when
	// the page repaints, so a static page is in this state; the last frame
	// is still what the tab shows.
	StatusNoFrames Status = "no-frames"
	// StatusDetached: the tab went away. Final.
	StatusDetached Status = "detached"
	// StatusStopped: the last subscriber left or the owner closed the tap.
	// Final.
	StatusStopped Status = "stopped"
)

// ErrClosed is returned by Subscribe on a tap that has stopped.
var ErrClosed = errors.New("screencast tap stopped")

// Config configures taps. The zero value of every field means its default.
type Config struct {
	// Quality is the JPEG quality Chrome encodes frames with, 1–100.
	// Default: 70.
	Quality int
	// MaxWidth and MaxHeight bound a frame's size in pixels; Chrome
	// scales a larger viewport down. Default: 1920 × 1080.
	MaxWidth, MaxHeight int
	// MaxFPS caps the frame rate by spacing the acks. Default: 30.
	MaxFPS float64
	// NoFramesAfter is how long without a frame turns the status to
	// no-frames. Default: 2 s.
	NoFramesAfter time.Duration
	// CallTimeout bounds each command the tap sends. Default: 10 s.
	CallTimeout time.Duration
	// Metrics counts frames; nil counts nothing.
	Metrics *Metrics
	// Logger receives the tap's rare logs. Default: discard.
	Logger *slog.Logger
	// OnPanic is called when a tap's goroutine panicked (and the tap
	// stopped), for a metric. Default: nothing.
	OnPanic func()
}

const (
	defaultQuality       = 70
	defaultMaxWidth      = 1920
	defaultMaxHeight     = 1080
	defaultMaxFPS        = 30
	defaultNoFramesAfter = 2 * time.Second
	defaultCallTimeout   = 10 * time.Second

	// maxClientBacklog bounds the CDP client's frames waiting to be
	// decoded.
	maxClientBacklog = 2
	// maxBacklog bounds all frames waiting to be decoded. Chrome holds our
	// own frames back until they are acked, so only a misbehaving peer
	// reaches it; an unacked frame then stalls the stream, which is the
	// peer's own doing.
	maxBacklog = 64
)

// Validate reports what is wrong with c.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.Quality == 0 {
		c.Quality = defaultQuality
	}
	if c.Quality < 1 || c.Quality > 100 {
		errs = append(errs, fmt.Errorf("screencast quality %d is outside 1–100", c.Quality))
	}
	if c.MaxWidth == 0 {
		c.MaxWidth = defaultMaxWidth
	}
	if c.MaxHeight == 0 {
		c.MaxHeight = defaultMaxHeight
	}
	if c.MaxWidth < 16 || c.MaxHeight < 16 {
		errs = append(errs, fmt.Errorf("screencast size %d×%d is too small", c.MaxWidth, c.MaxHeight))
	}
	if c.MaxFPS == 0 {
		c.MaxFPS = defaultMaxFPS
	}
	if !(c.MaxFPS > 0 && c.MaxFPS <= 1000) {
		errs = append(errs, fmt.Errorf("screencast max fps %v is outside (0, 1000]", c.MaxFPS))
	}
	if c.NoFramesAfter == 0 {
		c.NoFramesAfter = defaultNoFramesAfter
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = defaultCallTimeout
	}
	if c.NoFramesAfter < 0 || c.CallTimeout < 0 {
		errs = append(errs, errors.New("screencast durations must not be negative"))
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, errors.Join(errs...)
}

// Tap is the screencast of one tab, fanned out to its subscribers.
type Tap struct {
	sess     Session       // static
	cfg      Config        // static, defaults filled in
	interval time.Duration // static: the least time between two acks

	mu       sync.Mutex
	subs     []*Subscriber // guarded by mu; replaced, never modified in place
	inbox    []Event       // guarded by mu; drained by run
	backlog  int           // guarded by mu: client frames in inbox
	frames   int           // guarded by mu: frames in inbox
	last     *Frame        // guarded by mu: the newest frame, a new subscriber's first
	status   Status        // guarded by mu; written by run
	ended    bool          // guarded by mu: run is ending; no new subscribers
	closeReq bool          // guarded by mu: Close was called
	hadSub   bool          // guarded by mu: someone subscribed once

	wake chan struct{} // 1-buffered: inbox, subs or closeReq changed
	done chan struct{} // closed by run when it returns
}

// New starts a tap on sess. It sends nothing until the first subscriber
// arrives, and ends when the last one leaves, when the tab detaches, or on
// Close.
func New(sess Session, cfg Config) (*Tap, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	t := &Tap{
		sess:     sess,
		cfg:      cfg,
		interval: time.Duration(float64(time.Second) / cfg.MaxFPS),
		status:   StatusStarting,
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	cfg.Metrics.tapDelta(1)
	go t.run()
	return t, nil
}

// HandleEvent passes the tab's event to the tap. It never blocks: it is
// called on the relay's read loop of the extension.
func (t *Tap) HandleEvent(ev Event) {
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		if ev.Method == EventFrame {
			t.cfg.Metrics.drop(DropStopped)
		}
		return
	}
	if ev.Method == EventFrame {
		if ev.ClientScreencast && t.backlog >= maxClientBacklog {
			// The newest frame wins here too: the oldest waiting client
			// frame makes room. The client acks it, so nothing stalls.
			i := slices.IndexFunc(t.inbox, func(e Event) bool { return e.Method == EventFrame && e.ClientScreencast })
			t.inbox = slices.Delete(t.inbox, i, i+1)
			t.backlog--
			t.frames--
			t.cfg.Metrics.drop(DropBacklog)
		}
		if t.frames >= maxBacklog {
			t.mu.Unlock()
			t.cfg.Metrics.drop(DropBacklog)
			return
		}
		t.frames++
		if ev.ClientScreencast {
			t.backlog++
		}
	}
	t.inbox = append(t.inbox, ev)
	t.mu.Unlock()
	t.poke()
}

func (t *Tap) poke() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Subscribe adds a subscriber. It gets the newest frame at once, if there
// is one. It fails with ErrClosed once the tap has stopped.
func (t *Tap) Subscribe() (*Subscriber, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended || t.closeReq {
		return nil, ErrClosed
	}
	s := &Subscriber{tap: t, ready: make(chan struct{}, 1), frame: t.last, status: t.status, statusNew: true}
	s.ready <- struct{}{}
	t.subs = append(t.subs[:len(t.subs):len(t.subs)], s)
	t.hadSub = true
	t.cfg.Metrics.subDelta(1)
	t.poke()
	return s, nil
}

func (t *Tap) unsubscribe(s *Subscriber) {
	t.mu.Lock()
	for i, x := range t.subs {
		if x == s {
			subs := make([]*Subscriber, 0, len(t.subs)-1)
			t.subs = append(append(subs, t.subs[:i]...), t.subs[i+1:]...)
			t.cfg.Metrics.subDelta(-1)
			break
		}
	}
	t.mu.Unlock()
	t.poke()
}

// Close stops the tap: its screencast is stopped and its subscribers are
// told StatusStopped. It does not wait; Done is closed when it is over.
func (t *Tap) Close() {
	t.mu.Lock()
	t.closeReq = true
	t.mu.Unlock()
	t.poke()
}

// Done is closed when the tap has ended and sends nothing more.
func (t *Tap) Done() <-chan struct{} { return t.done }

// Status is the tap's current status.
func (t *Tap) Status() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// Subscribers is the number of subscribers.
func (t *Tap) Subscribers() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.subs)
}

// Last returns the newest frame, or nil.
func (t *Tap) Last() *Frame {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

// pendingAck is a frame of our screencast waiting for its ack time.
type pendingAck struct {
	at time.Time
	id int64
}

// runState is owned by run.
type runState struct {
	running  bool // our screencast was started and not superseded
	client   bool // the CDP client's screencast runs instead of ours
	retry    bool // starting failed; try again at the next idle tick
	acks     []pendingAck
	nextAck  time.Time // the earliest time the next ack may go
	seq      uint64
	ackTimer *time.Timer
	idle     *time.Timer
}

// run is the tap's only goroutine: it decodes, publishes, acks and
// (re)starts. The calls it makes are sequential, so a slow extension slows
// only this tab's screencast.
func (t *Tap) run() {
	defer close(t.done)
	defer t.cfg.Metrics.tapDelta(-1)
	defer func() {
		// A panic stops this tap: its viewers see it stopped; the tab,
		// the automation and every other tap go on.
		if r := recover(); r != nil {
			t.cfg.Logger.Error("panic; this screencast stops", "panic", r, "stack", string(debug.Stack()))
			if t.cfg.OnPanic != nil {
				t.cfg.OnPanic()
			}
			if t.mu.TryLock() {
				t.mu.Unlock()
				t.end(StatusStopped)
			}
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &runState{ackTimer: time.NewTimer(time.Hour), idle: time.NewTimer(time.Hour)}
	st.ackTimer.Stop()
	st.idle.Stop()
	defer st.ackTimer.Stop()
	defer st.idle.Stop()

	for {
		t.mu.Lock()
		events := t.inbox
		t.inbox, t.backlog, t.frames = nil, 0, 0
		nsubs := len(t.subs)
		// Decided under mu with refusing new subscribers, so that nobody
		// joins a tap that is about to stop.
		stopping := t.closeReq || (t.hadSub && nsubs == 0)
		if stopping {
			t.ended = true
		}
		t.mu.Unlock()

		if stopping {
			for _, ev := range events {
				if ev.Method == EventFrame {
					t.cfg.Metrics.drop(DropStopped)
					continue
				}
				// Whose screencast runs, and whether the tab is still
				// there, decide what stopping means.
				if final := t.handle(ctx, st, ev); final != "" {
					t.end(final)
					return
				}
			}
			if st.running && !st.client {
				t.call(ctx, page.CommandStopScreencast, nil)
			}
			t.end(StatusStopped)
			return
		}
		for _, ev := range events {
			if final := t.handle(ctx, st, ev); final != "" {
				t.end(final)
				return
			}
		}
		if nsubs > 0 && !st.running && !st.client && !st.retry {
			t.start(ctx, st)
		}
		t.sendDueAcks(ctx, st)

		select {
		case <-t.wake:
		case <-st.ackTimer.C:
		case <-st.idle.C:
			if st.retry {
				st.retry = false // the loop starts again
			}
			t.setStatus(StatusNoFrames)
		}
	}
}

// handle applies one event. It returns a final status when the tap must
// end.
func (t *Tap) handle(ctx context.Context, st *runState, ev Event) Status {
	switch ev.Method {
	case EventFrame:
		t.frame(st, ev)
	case EventAttached:
		// A new debugger session: what ran on the old one is gone.
		st.running, st.client, st.retry, st.acks = false, false, false, nil
		st.ackTimer.Stop()
	case EventDetached:
		return StatusDetached
	case EventHidden:
		t.mu.Lock()
		t.last = nil
		t.mu.Unlock()
	case EventClientScreencast:
		var p struct {
			Active bool `json:"active"`
		}
		_ = json.Unmarshal(ev.Params, &p)
		st.client = p.Active
		// Either way Chrome's screencast is no longer ours: the client's
		// replaced it, or the client's stop ended it. Acks for our old
		// frames would now pace the client's stream.
		st.running, st.acks = false, nil
		st.ackTimer.Stop()
	}
	return ""
}

func (t *Tap) frame(st *runState, ev Event) {
	f, ackID, hasID, err := decodeFrame(ev.Params)
	now := time.Now()
	if !ev.ClientScreencast && hasID {
		// Ack even a frame we could not read: an unacked frame holds
		// Chrome's stream back for good.
		at := now
		if st.nextAck.After(at) {
			at = st.nextAck
		}
		st.nextAck = at.Add(t.interval)
		st.acks = append(st.acks, pendingAck{at: at, id: ackID})
	}
	if err != nil {
		t.cfg.Metrics.drop(DropMalformed)
		t.cfg.Logger.Debug("screencast frame dropped", "err", err)
		return
	}
	st.seq++
	f.Seq, f.Received, f.ClientOwned = st.seq, now, ev.ClientScreencast
	t.cfg.Metrics.received(f)
	st.idle.Reset(t.cfg.NoFramesAfter)

	t.mu.Lock()
	t.last = f
	subs := t.subs
	t.mu.Unlock()
	for _, s := range subs {
		s.offer(f)
	}
	t.setStatus(StatusLive)
}

func (t *Tap) start(ctx context.Context, st *runState) {
	q := int64(t.cfg.Quality)
	p := &page.StartScreencastParams{
		Format:        page.StartScreencastFormatJpeg,
		Quality:       &q,
		MaxWidth:      int64(t.cfg.MaxWidth),
		MaxHeight:     int64(t.cfg.MaxHeight),
		EveryNthFrame: 1,
	}
	st.nextAck = time.Time{}
	st.idle.Reset(t.cfg.NoFramesAfter)
	if err := t.call(ctx, page.CommandStartScreencast, p); err != nil {
		t.cfg.Logger.Info("screencast did not start", "err", err)
		st.retry = true
		return
	}
	st.running = true
}

func (t *Tap) sendDueAcks(ctx context.Context, st *runState) {
	now := time.Now()
	for len(st.acks) > 0 && !st.acks[0].at.After(now) {
		a := st.acks[0]
		st.acks = st.acks[1:]
		if err := t.call(ctx, page.CommandScreencastFrameAck, &page.ScreencastFrameAckParams{SessionID: a.id}); err != nil {
			t.cfg.Logger.Debug("screencast ack", "err", err)
		}
	}
	if len(st.acks) > 0 {
		st.ackTimer.Reset(st.acks[0].at.Sub(now))
	}
}

func (t *Tap) call(ctx context.Context, method string, params any) error {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.CallTimeout)
	defer cancel()
	_, err := t.sess.Call(ctx, method, params)
	return err
}

func (t *Tap) setStatus(s Status) {
	t.mu.Lock()
	if t.status == s {
		t.mu.Unlock()
		return
	}
	t.status = s
	subs := t.subs
	t.mu.Unlock()
	for _, sub := range subs {
		sub.setStatus(s)
	}
}

// end makes s the final status and refuses new subscribers.
func (t *Tap) end(s Status) {
	t.mu.Lock()
	t.ended = true
	for _, ev := range t.inbox {
		if ev.Method == EventFrame {
			t.cfg.Metrics.drop(DropStopped)
		}
	}
	t.inbox = nil
	t.mu.Unlock()
	t.setStatus(s)
}
