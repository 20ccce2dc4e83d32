package audit

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// seqs lists the Seq of each record.
func seqs(recs []Record) []uint64 {
	out := make([]uint64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

// span is the Seqs from a to b inclusive.
func span(a, b uint64) []uint64 {
	var out []uint64
	for s := a; s <= b; s++ {
		out = append(out, s)
	}
	return out
}

func TestRingWrap(t *testing.T) {
	tests := []struct {
		capacity    int
		start       uint64
		appends     int
		wantKept    []uint64
		overwritten uint64
	}{
		{capacity: 4, appends: 0, wantKept: nil},
		{capacity: 4, appends: 3, wantKept: span(1, 3)},
		{capacity: 4, appends: 4, wantKept: span(1, 4)},
		{capacity: 4, appends: 5, wantKept: span(2, 5), overwritten: 1},
		{capacity: 4, appends: 11, wantKept: span(8, 11), overwritten: 7},
		{capacity: 1, appends: 3, wantKept: span(3, 3), overwritten: 2},
		{capacity: 3, start: 100, appends: 5, wantKept: span(103, 105), overwritten: 2},
		{capacity: 5, start: 7, appends: 2, wantKept: span(8, 9)},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("cap%d_start%d_n%d", tt.capacity, tt.start, tt.appends), func(t *testing.T) {
			rg := NewRing(tt.capacity, tt.start)
			for i := range tt.appends {
				got := rg.Append(Record{Kind: KindInput, Detail: fmt.Sprint(i)})
				if want := tt.start + uint64(i) + 1; got.Seq != want {
					t.Fatalf("append %d got Seq %d, want %d", i, got.Seq, want)
				}
				if got.Time.IsZero() {
					t.Fatalf("append %d: no time", i)
				}
			}
			recs, oldest, _ := rg.Query(Filter{Since: tt.start})
			if !slices.Equal(seqs(recs), tt.wantKept) {
				t.Errorf("kept %v, want %v", seqs(recs), tt.wantKept)
			}
			for _, r := range recs {
				if want := fmt.Sprint(r.Seq - tt.start - 1); r.Detail != want {
					t.Errorf("record %d holds %q, want %q", r.Seq, r.Detail, want)
				}
			}
			wantOldest := uint64(0)
			if len(tt.wantKept) > 0 {
				wantOldest = tt.wantKept[0]
			}
			if oldest != wantOldest {
				t.Errorf("oldest %d, want %d", oldest, wantOldest)
			}
			if got := rg.Overwritten(); got != tt.overwritten {
				t.Errorf("Overwritten() = %d, want %d", got, tt.overwritten)
			}
			if got, want := rg.Last(), tt.start+uint64(tt.appends); got != want {
				t.Errorf("Last() = %d, want %d", got, want)
			}
		})
	}
}

func TestRingCapacityBounds(t *testing.T) {
	for _, tt := range []struct{ in, want int }{{0, DefaultCapacity}, {-1, DefaultCapacity}, {10, 10}, {MaxCapacity + 1, MaxCapacity}} {
		if got := len(NewRing(tt.in, 0).buf); got != tt.want {
			t.Errorf("NewRing(%d) holds %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestAppendKeepsCallerTime(t *testing.T) {
	rg := NewRing(4, 0)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	if got := rg.Append(Record{Time: at}); !got.Time.Equal(at) {
		t.Errorf("Time %v, want %v", got.Time, at)
	}
	a := rg.Append(Record{})
	b := rg.Append(Record{})
	if b.Time.Before(a.Time) {
		t.Errorf("time went backwards: %v then %v", a.Time, b.Time)
	}
}

func TestQueryFilters(t *testing.T) {
	rg := NewRing(16, 0)
	for _, r := range []Record{
		{Instance: "a", Kind: KindConnect},  // 1
		{Instance: "a", Kind: KindNavigate}, // 2
		{Instance: "b", Kind: KindConnect},  // 3
		{Instance: "a", Kind: KindDenied},   // 4
		{Instance: "b", Kind: KindNavigate}, // 5
		{Instance: "a", Kind: KindNavigate}, // 6
		{Instance: "b", Kind: KindDenied},   // 7
	} {
		rg.Append(r)
	}
	tests := []struct {
		name string
		f    Filter
		want []uint64
	}{
		{"all", Filter{}, span(1, 7)},
		{"instance", Filter{Instance: "a"}, []uint64{1, 2, 4, 6}},
		{"kind", Filter{Kind: KindNavigate}, []uint64{2, 5, 6}},
		{"instance and kind", Filter{Instance: "b", Kind: KindDenied}, []uint64{7}},
		{"since", Filter{Since: 4}, span(5, 7)},
		{"since and instance", Filter{Since: 2, Instance: "a"}, []uint64{4, 6}},
		{"limit", Filter{Limit: 3}, span(1, 3)},
		{"limit with filter", Filter{Instance: "b", Limit: 2}, []uint64{3, 5}},
		{"limit above matches", Filter{Kind: KindDenied, Limit: 10}, []uint64{4, 7}},
		{"since at newest", Filter{Since: 7}, nil},
		{"no match", Filter{Instance: "c"}, nil},
		{"unknown kind", Filter{Kind: "no-such-kind"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, _, gap := rg.Query(tt.f)
			if !slices.Equal(seqs(recs), tt.want) {
				t.Errorf("Query(%+v) = %v, want %v", tt.f, seqs(recs), tt.want)
			}
			if gap {
				t.Errorf("Query(%+v) reports a gap", tt.f)
			}
		})
	}
}

func TestQueryGapAndNext(t *testing.T) {
	tests := []struct {
		name     string
		capacity int
		start    uint64
		appends  int
		f        Filter
		want     []uint64
		gap      bool
		next     uint64
	}{
		{name: "fresh ring, since 0", capacity: 4, appends: 3, want: span(1, 3), next: 3},
		{name: "empty ring", capacity: 4, next: 0},
		{name: "since oldest-1 is no gap", capacity: 4, appends: 10, f: Filter{Since: 6}, want: span(7, 10), next: 10},
		{name: "since before oldest", capacity: 4, appends: 10, f: Filter{Since: 5}, want: span(7, 10), gap: true, next: 10},
		{name: "since 0 after wrap", capacity: 4, appends: 10, want: span(7, 10), gap: true, next: 10},
		{name: "caught up", capacity: 4, appends: 10, f: Filter{Since: 10}, next: 10},
		{name: "since beyond newest: restart", capacity: 4, appends: 3, f: Filter{Since: 500}, want: span(1, 3), gap: true, next: 3},
		{name: "records only on disk", capacity: 4, start: 100, appends: 2, want: span(101, 102), gap: true, next: 102},
		{name: "caught up with disk", capacity: 4, start: 100, appends: 2, f: Filter{Since: 100}, want: span(101, 102), next: 102},
		{name: "empty ring after restart", capacity: 4, start: 100, f: Filter{Since: 100}, next: 100},
		{name: "limit sets next", capacity: 8, appends: 8, f: Filter{Limit: 3}, want: span(1, 3), next: 3},
		{name: "filter scans to newest", capacity: 8, appends: 8, f: Filter{Kind: KindDenied}, next: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rg := NewRing(tt.capacity, tt.start)
			for range tt.appends {
				rg.Append(Record{Kind: KindInput})
			}
			p := rg.query(tt.f)
			if !slices.Equal(seqs(p.records), tt.want) {
				t.Errorf("records %v, want %v", seqs(p.records), tt.want)
			}
			if p.gap != tt.gap {
				t.Errorf("gap %v, want %v", p.gap, tt.gap)
			}
			if p.next != tt.next {
				t.Errorf("next %d, want %d", p.next, tt.next)
			}
		})
	}
}

// TestConcurrentAppend runs 8 writers against one ring and one follower
// that keeps up (the ring is large enough): every Seq is handed out once,
// and the follower sees all of them in order with no gap.
func TestConcurrentAppend(t *testing.T) {
	const writers, each = 8, 2000
	rg := NewRing(writers*each, 0)
	sub := rg.Subscribe(0)
	defer sub.Close()

	var seen []uint64
	followed := make(chan error, 1)
	go func() {
		var buf []Record
		for len(seen) < writers*each {
			recs, gap, err := sub.Next(context.Background(), buf)
			if err != nil {
				followed <- err
				return
			}
			if gap != nil {
				followed <- fmt.Errorf("gap %+v after %d records", *gap, len(seen))
				return
			}
			seen = append(seen, seqs(recs)...)
			buf = recs
		}
		followed <- nil
	}()

	got := make([][]uint64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r := rg.Append(Record{Instance: fmt.Sprint("w", w), Kind: KindInput, Detail: fmt.Sprint(i)})
				got[w] = append(got[w], r.Seq)
			}
		})
	}
	wg.Wait()

	all := slices.Concat(got...)
	for w, g := range got {
		if !slices.IsSorted(g) {
			t.Errorf("writer %d saw its own Seqs out of order", w)
		}
	}
	slices.Sort(all)
	if !slices.Equal(all, span(1, writers*each)) {
		t.Fatalf("Seqs handed out are not 1..%d without duplicates", writers*each)
	}
	select {
	case err := <-followed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("follower did not see every record")
	}
	if !slices.Equal(seen, span(1, writers*each)) {
		t.Errorf("follower saw %d records, not 1..%d in order", len(seen), writers*each)
	}
}
