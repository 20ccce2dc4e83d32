package audit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// next reads one batch or fails the test within a second.
func next(t *testing.T, sub *Subscription) ([]Record, *Gap, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return sub.Next(ctx, nil)
}

func TestSubscribeBacklogThenLive(t *testing.T) {
	tests := []struct {
		name     string
		capacity int
		start    uint64
		before   int // records appended before Subscribe
		since    uint64
		wantGap  *Gap
		backlog  []uint64
	}{
		{name: "from the start", capacity: 8, before: 3, since: 0, backlog: span(1, 3)},
		{name: "from the middle", capacity: 8, before: 5, since: 2, backlog: span(3, 5)},
		{name: "caught up", capacity: 8, before: 5, since: 5},
		{name: "empty ring", capacity: 8, since: 0},
		{name: "behind the ring", capacity: 4, before: 10, since: 2, wantGap: &Gap{Missed: 4, Next: 7}, backlog: span(7, 10)},
		{name: "since 0 after wrap", capacity: 4, before: 10, since: 0, wantGap: &Gap{Missed: 6, Next: 7}, backlog: span(7, 10)},
		{name: "restart without sink", capacity: 8, before: 3, since: 900, wantGap: &Gap{Next: 1, Reset: true}, backlog: span(1, 3)},
		{name: "restart, ring wrapped", capacity: 2, before: 5, since: 900, wantGap: &Gap{Missed: 3, Next: 4, Reset: true}, backlog: span(4, 5)},
		{name: "continued from file", capacity: 8, start: 50, before: 2, since: 50, backlog: span(51, 52)},
		{name: "older than the file's end", capacity: 8, start: 50, before: 2, since: 10, wantGap: &Gap{Missed: 40, Next: 51}, backlog: span(51, 52)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rg := NewRing(tt.capacity, tt.start)
			for range tt.before {
				rg.Append(Record{Kind: KindInput})
			}
			sub := rg.Subscribe(tt.since)
			defer sub.Close()
			var got []uint64
			var gap *Gap
			if len(tt.backlog) > 0 || tt.wantGap != nil {
				recs, g, err := next(t, sub)
				if err != nil {
					t.Fatal(err)
				}
				got, gap = seqs(recs), g
			}
			if (gap == nil) != (tt.wantGap == nil) || gap != nil && *gap != *tt.wantGap {
				t.Errorf("gap %+v, want %+v", gap, tt.wantGap)
			}
			if !slices.Equal(got, tt.backlog) {
				t.Errorf("backlog %v, want %v", got, tt.backlog)
			}
			// Then live records, without a gap.
			live := rg.Append(Record{Kind: KindInput})
			recs, g, err := next(t, sub)
			if err != nil || g != nil || !slices.Equal(seqs(recs), []uint64{live.Seq}) {
				t.Errorf("live: %v %+v %v, want [%d]", seqs(recs), g, err, live.Seq)
			}
		})
	}
}

func TestSubscriptionFallsBehind(t *testing.T) {
	rg := NewRing(8, 0)
	sub := rg.Subscribe(0)
	defer sub.Close()
	for range 20 {
		rg.Append(Record{Kind: KindInput})
	}
	recs, gap, err := next(t, sub)
	if err != nil {
		t.Fatal(err)
	}
	if gap == nil || *gap != (Gap{Missed: 12, Next: 13}) {
		t.Errorf("gap %+v, want {Missed:12 Next:13}", gap)
	}
	if !slices.Equal(seqs(recs), span(13, 20)) {
		t.Errorf("resumed with %v, want 13..20", seqs(recs))
	}
	// It goes on as a normal follower.
	rg.Append(Record{})
	if recs, gap, _ := next(t, sub); gap != nil || !slices.Equal(seqs(recs), []uint64{21}) {
		t.Errorf("after the gap: %v %+v", seqs(recs), gap)
	}
}

func TestSubscriptionBatches(t *testing.T) {
	rg := NewRing(4*maxBatch, 0)
	for range 2*maxBatch + 5 {
		rg.Append(Record{})
	}
	sub := rg.Subscribe(0)
	defer sub.Close()
	var sizes []int
	for total := 0; total < 2*maxBatch+5; {
		recs, _, err := next(t, sub)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(recs))
		total += len(recs)
	}
	if !slices.Equal(sizes, []int{maxBatch, maxBatch, 5}) {
		t.Errorf("batches %v", sizes)
	}
}

func TestSubscriptionClose(t *testing.T) {
	t.Run("ring closed: drain, then ErrClosed", func(t *testing.T) {
		rg := NewRing(8, 0)
		sub := rg.Subscribe(0)
		defer sub.Close()
		rg.Append(Record{})
		rg.Append(Record{})
		rg.Close()
		recs, _, err := next(t, sub)
		if err != nil || len(recs) != 2 {
			t.Fatalf("got %d records, %v; want the 2 kept", len(recs), err)
		}
		if _, _, err := next(t, sub); !errors.Is(err, ErrClosed) {
			t.Errorf("after draining: %v, want ErrClosed", err)
		}
		// Appending after Close still works.
		if r := rg.Append(Record{}); r.Seq != 3 {
			t.Errorf("append after Close got Seq %d", r.Seq)
		}
	})
	t.Run("ring closed wakes a waiting Next", func(t *testing.T) {
		rg := NewRing(8, 0)
		sub := rg.Subscribe(0)
		defer sub.Close()
		errc := make(chan error, 1)
		go func() {
			_, _, err := sub.Next(context.Background(), nil)
			errc <- err
		}()
		time.Sleep(10 * time.Millisecond)
		rg.Close()
		select {
		case err := <-errc:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("Next returned %v, want ErrClosed", err)
			}
		case <-time.After(time.Second):
			t.Fatal("Next still waiting after the ring closed")
		}
	})
	t.Run("subscription closed wakes a waiting Next", func(t *testing.T) {
		rg := NewRing(8, 0)
		sub := rg.Subscribe(0)
		errc := make(chan error, 1)
		go func() {
			_, _, err := sub.Next(context.Background(), nil)
			errc <- err
		}()
		time.Sleep(10 * time.Millisecond)
		sub.Close()
		sub.Close() // twice is fine
		select {
		case err := <-errc:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("Next returned %v, want ErrClosed", err)
			}
		case <-time.After(time.Second):
			t.Fatal("Next still waiting after Close")
		}
		if n := rg.Followers(); n != 0 {
			t.Errorf("Followers() = %d after Close", n)
		}
	})
	t.Run("context", func(t *testing.T) {
		rg := NewRing(8, 0)
		sub := rg.Subscribe(0)
		defer sub.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, _, err := sub.Next(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Next returned %v, want the context's error", err)
		}
	})
}

// TestFrozenFollower is our TestSendFreeze: followers that never read must
// not slow writers, nor the follower that keeps reading.
func TestFrozenFollower(t *testing.T) {
	const n = 100_000
	rg := NewRing(1024, 0)
	for range 5 {
		frozen := rg.Subscribe(0) // never read
		defer frozen.Close()
	}
	live := rg.Subscribe(0)
	defer live.Close()

	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			rg.Append(Record{Kind: KindInput})
		}
	}()
	var seen, missed uint64
	deadline := time.After(10 * time.Second)
	for seen+missed < n {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		recs, gap, err := live.Next(ctx, nil)
		cancel()
		if err != nil {
			t.Fatalf("live follower: %v after %d", err, seen)
		}
		if gap != nil {
			missed += gap.Missed
		}
		seen += uint64(len(recs))
		select {
		case <-deadline:
			t.Fatalf("live follower stalled at %d", seen)
		default:
		}
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("appends blocked behind frozen followers")
	}
	if seen+missed != n {
		t.Errorf("live follower: %d seen + %d missed != %d", seen, missed, n)
	}
	if got := rg.Overwritten(); got != n-1024 {
		t.Errorf("Overwritten() = %d, want %d", got, n-1024)
	}
}

// TestFollowersAccountForEverything: under concurrent writers and a ring
// too small to hold them, each follower sees Seqs strictly increasing, and
// what it saw plus what it was told it missed is every record.
func TestFollowersAccountForEverything(t *testing.T) {
	const writers, each, followers = 8, 1000, 3
	rg := NewRing(64, 0)
	type tally struct {
		seen, missed uint64
		err          error
	}
	results := make(chan tally, followers)
	var ready sync.WaitGroup
	for f := range followers {
		ready.Add(1)
		sub := rg.Subscribe(0)
		go func() {
			defer sub.Close()
			ready.Done()
			var tl tally
			var last uint64
			var buf []Record
			for tl.seen+tl.missed < writers*each {
				recs, gap, err := sub.Next(context.Background(), buf)
				if err != nil {
					tl.err = err
					break
				}
				if gap != nil {
					if gap.Next != last+gap.Missed+1 {
						tl.err = fmt.Errorf("follower %d: gap %+v after %d", f, *gap, last)
						break
					}
					tl.missed += gap.Missed
					last = gap.Next - 1
				}
				for _, r := range recs {
					if r.Seq != last+1 {
						tl.err = fmt.Errorf("follower %d: %d after %d", f, r.Seq, last)
					}
					last = r.Seq
				}
				tl.seen += uint64(len(recs))
				buf = recs
				if f == 0 {
					time.Sleep(time.Microsecond) // one slow follower
				}
			}
			results <- tl
		}()
	}
	ready.Wait()
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				rg.Append(Record{Kind: KindInput})
			}
		})
	}
	wg.Wait()
	for range followers {
		select {
		case tl := <-results:
			if tl.err != nil {
				t.Error(tl.err)
			} else if tl.seen+tl.missed != writers*each {
				t.Errorf("seen %d + missed %d != %d", tl.seen, tl.missed, writers*each)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a follower did not finish")
		}
	}
}
