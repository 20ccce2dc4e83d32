package screencast

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"
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
