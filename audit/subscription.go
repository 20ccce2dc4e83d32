package audit

import (
	"context"
	"errors"
	"sync"
)

// ErrClosed is returned by Subscription.Next once the subscription or its
// ring is closed and every record has been delivered.
var ErrClosed = errors.New("audit: subscription closed")

// maxBatch bounds how many records one Next copies while holding the
// ring's lock, so that a follower far behind does not stall writers.
const maxBatch = 256

// Gap tells a follower that records after its cursor are not in the ring.
type Gap struct {
	// Missed is how many records between the cursor and Next the ring no
	// longer holds.
	Missed uint64 `json:"missed"`
	// Next is the Seq the follower resumes with.
	Next uint64 `json:"next"`
	// Reset is set when the cursor was beyond every Seq the ring handed
	// out: it came from an earlier run of the relay without a Sink, and
	// the follower starts again from the oldest record kept.
	Reset bool `json:"reset,omitempty"`
}

// Subscription follows a Ring. The ring itself is its buffer: a follower
// holds only a cursor, so a slow or frozen one costs writers nothing. When
// it falls more than the ring's capacity behind, the records it did not
// read in time are overwritten; its next read reports them as a Gap and it
// resumes with the oldest record kept.
type Subscription struct {
	ring   *Ring         // static
	notify chan struct{} // capacity 1; Append sends without blocking; never closed
	done   chan struct{} // closed by Close

	closeOnce sync.Once

	cursor uint64 // owned by the reader (the caller of Next), written under ring.mu: last Seq delivered
	reset  bool   // owned by the reader, written under ring.mu: report a Reset gap on the next read

	closed bool // guarded by ring.mu
}

// Subscribe returns a follower that receives the records with Seq > since,
// in order: first those the ring holds, then new ones as they come. A
// since beyond the newest Seq counts as 0, reported as a Gap with Reset.
func (rg *Ring) Subscribe(since uint64) *Subscription {
	s := &Subscription{
		ring:   rg,
		notify: make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	rg.mu.Lock()
	defer rg.mu.Unlock()
	if since > rg.next-1 {
		since, s.reset = 0, true
	}
	s.cursor = since
	rg.subs = append(rg.subs, s)
	return s
}

// Next returns the records after the cursor, at most maxBatch of them,
// appended to buf[:0], waiting until there is at least one or a gap to
// report. A non-nil Gap precedes the records returned with it. Next
// returns ErrClosed when the subscription or the ring has been closed and
// nothing is left, or ctx's error. It must not be called concurrently.
func (s *Subscription) Next(ctx context.Context, buf []Record) ([]Record, *Gap, error) {
	for {
		recs, gap, err := s.poll(buf)
		if err != nil || len(recs) > 0 || gap != nil {
			return recs, gap, err
		}
		select {
		case <-s.notify:
		case <-s.done:
		case <-s.ring.done:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// poll is Next without waiting.
func (s *Subscription) poll(buf []Record) ([]Record, *Gap, error) {
	rg := s.ring
	rg.mu.Lock()
	defer rg.mu.Unlock()
	if s.closed {
		return buf[:0], nil, ErrClosed
	}
	var gap *Gap
	floor := rg.floorLocked()
	if s.cursor+1 < floor || s.reset {
		gap = &Gap{Next: floor, Reset: s.reset}
		if s.cursor+1 < floor {
			gap.Missed = floor - 1 - s.cursor
			s.cursor = floor - 1
		}
		s.reset = false
	}
	recs := buf[:0]
	last := min(rg.next-1, s.cursor+maxBatch)
	for seq := s.cursor + 1; seq <= last; seq++ {
		recs = append(recs, rg.buf[seq%uint64(len(rg.buf))])
	}
	s.cursor = max(s.cursor, last)
	if len(recs) == 0 && gap == nil && rg.closed {
		return recs, nil, ErrClosed
	}
	return recs, gap, nil
}

// Close ends the subscription; a Next in progress returns ErrClosed.
func (s *Subscription) Close() {
	s.closeOnce.Do(func() {
		rg := s.ring
		rg.mu.Lock()
		s.closed = true
		for i, x := range rg.subs {
			if x == s {
				last := len(rg.subs) - 1
				rg.subs[i] = rg.subs[last]
				rg.subs[last] = nil
				rg.subs = rg.subs[:last]
				break
			}
		}
		rg.mu.Unlock()
		close(s.done)
	})
}
