package screencast

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"time"

	"github.com/chromedp/cdproto/page"
)

// The tap's goroutine: it decodes and publishes frames, paces the acks and
// (re)starts the screencast.

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
