package audit

import (
	"sync"
	"sync/atomic"
	"time"
)

const (
	// DefaultCapacity is the Ring's size when NewRing is given 0.
	DefaultCapacity = 4096
	// MaxCapacity bounds the Ring's size: about 150 bytes a record, so
	// the largest ring holds some 150 MiB.
	MaxCapacity = 1 << 20
)

// Ring keeps the most recent records in memory, for the HTTP endpoints and
// for followers. It is the single place where sequence numbers are handed
// out, so its lock also orders what a Log sends to its Sink.
type Ring struct {
	done chan struct{} // closed by Close

	mu          sync.Mutex
	buf         []Record        // guarded by mu; len fixed at construction; Seq s lives at s % len
	next        uint64          // guarded by mu: Seq of the next record
	n           int             // guarded by mu: records kept, up to len(buf)
	closed      bool            // guarded by mu
	subs        []*Subscription // guarded by mu
	overwritten atomic.Uint64   // written under mu, read anywhere
}

// NewRing returns a ring that keeps the last capacity records (0 or less
// means DefaultCapacity; more than MaxCapacity is cut to it). Its first
// record gets Seq startSeq+1: pass Sink.LastSeq so that numbers continue
// those already in the file.
func NewRing(capacity int, startSeq uint64) *Ring {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	capacity = min(capacity, MaxCapacity)
	return &Ring{
		done: make(chan struct{}),
		buf:  make([]Record, capacity),
		next: startSeq + 1,
	}
}

// Append sanitizes r, gives it the next Seq (and the current time if
// r.Time is zero), keeps it and wakes the followers. It never blocks on a
// reader. Append keeps working after Close; only followers end.
func (rg *Ring) Append(r Record) Record {
	return rg.append(r, nil)
}

// Record makes a bare Ring a Recorder, which is handy in tests of the
// packages that report to one.
func (rg *Ring) Record(r Record) { rg.Append(r) }

// append is Append that also hands the record to sink while the lock
// still orders it: the file then has the same order as the sequence,
// which is what lets OpenSink trust its last line.
func (rg *Ring) append(r Record, sink *Sink) Record {
	r.sanitize()
	rg.mu.Lock()
	r.Seq = rg.next
	rg.next++
	if r.Time.IsZero() {
		// Taken under the lock so that Times follow Seq order, barring a
		// step of the wall clock.
		r.Time = time.Now().UTC()
	}
	if rg.n == len(rg.buf) {
		rg.overwritten.Add(1)
	} else {
		rg.n++
	}
	rg.buf[r.Seq%uint64(len(rg.buf))] = r
	if sink != nil {
		sink.enqueue(r)
	}
	for _, s := range rg.subs {
		select {
		case s.notify <- struct{}{}:
		default: // already pending: one wake-up covers any number of records
		}
	}
	rg.mu.Unlock()
	return r
}

// Overwritten is how many records the ring has dropped to make room.
func (rg *Ring) Overwritten() uint64 { return rg.overwritten.Load() }

// Last is the Seq of the newest record, or startSeq if there is none yet.
func (rg *Ring) Last() uint64 {
	rg.mu.Lock()
	defer rg.mu.Unlock()
	return rg.next - 1
}

// Followers is the number of open subscriptions.
func (rg *Ring) Followers() int {
	rg.mu.Lock()
	defer rg.mu.Unlock()
	return len(rg.subs)
}

// Close ends every subscription once it has read what the ring holds, and
// new ones likewise. Appending and querying go on working, so that records
// made while the relay shuts down are still kept and counted.
func (rg *Ring) Close() {
	rg.mu.Lock()
	defer rg.mu.Unlock()
	if !rg.closed {
		rg.closed = true
		close(rg.done)
	}
}

// floorLocked is the lowest Seq the ring can still return.
func (rg *Ring) floorLocked() uint64 { return rg.next - uint64(rg.n) }

// Filter selects records for Query.
type Filter struct {
	Instance string // "" matches every instance
	Tenant   string // "" matches every tenant's records and the operator's
	Kind     Kind   // "" matches every kind
	Since    uint64 // only records with Seq > Since
	Limit    int    // at most this many, oldest first; 0 or less means no limit
}

func (f *Filter) match(r *Record) bool {
	return (f.Instance == "" || r.Instance == f.Instance) && (f.Tenant == "" || r.Tenant == f.Tenant) && (f.Kind == "" || r.Kind == f.Kind)
}

// Names reports whether a record the ring keeps is about instance and,
// when tenant is not empty, that tenant's.
func (rg *Ring) Names(instance, tenant string) bool {
	rg.mu.Lock()
	defer rg.mu.Unlock()
	f := Filter{Instance: instance, Tenant: tenant}
	for seq := rg.floorLocked(); seq < rg.next; seq++ {
		if f.match(&rg.buf[seq%uint64(len(rg.buf))]) {
			return true
		}
	}
	return false
}

// page is one Query answer with what the HTTP endpoint adds to it.
type page struct {
	records []Record
	oldest  uint64 // Seq of the oldest record kept, 0 if none
	next    uint64 // Since for the next query: everything up to it was examined
	gap     bool
}

// Query returns the kept records that match f, oldest first, the Seq of
// the oldest record kept (0 if none), and whether records after f.Since
// have been lost to this ring: overwritten, written before a restart (they
// are in the Sink's file), or from another run of the relay, when f.Since
// lies beyond every Seq handed out (the sequence restarted without a
// Sink). In that last case f.Since counts as 0.
func (rg *Ring) Query(f Filter) (records []Record, oldest uint64, gap bool) {
	p := rg.query(f)
	return p.records, p.oldest, p.gap
}

func (rg *Ring) query(f Filter) page {
	rg.mu.Lock()
	defer rg.mu.Unlock()
	var p page
	last := rg.next - 1
	since := f.Since
	if since > last {
		since = 0
		p.gap = true
	}
	floor := rg.floorLocked()
	if rg.n > 0 {
		p.oldest = floor
	}
	if since+1 < floor {
		p.gap = true
		since = floor - 1
	}
	p.next = last
	for seq := since + 1; seq <= last; seq++ {
		r := &rg.buf[seq%uint64(len(rg.buf))]
		if !f.match(r) {
			continue
		}
		p.records = append(p.records, *r)
		if f.Limit > 0 && len(p.records) == f.Limit {
			p.next = seq
			break
		}
	}
	return p
}
