package outbox

import (
	"sync"
	"sync/atomic"
)

// Fire is one command of the relay's own for a tab, sent without waiting
// for its reply.
type Fire struct {
	TabID  int64
	Sid    string // the tab's child session; "" for the tab's own
	Method string
	Params any
	Then   func() // run once it is over (Sender.FireQueued); nil: nobody waits
}

// Sender is the upstream a fire goes to (core.Upstream): FireQueued waits
// for room in its queue, and runs then (when not nil) once the command is
// over, whether it failed or not, or the connection ended.
type Sender interface {
	FireQueued(tabID int64, sid, method string, params any, then func())
}

// Box is an instance's outbox. The zero value is not ready: see Init.
type Box struct {
	// spawn runs a fire's Then off the flusher's stack when there is
	// nothing to send the fire to. Static.
	spawn func(name string, fn func())

	// pending counts the fires put in the queue and not yet in an
	// upstream's queue. Raised under the instance's mutex, lowered by the
	// flusher after the push; read without a lock by every push (one
	// atomic load).
	pending atomic.Int64

	mu sync.Mutex // guards q; a leaf
	q  []queued

	// sending is held by the one goroutine that pushes queued fires, so
	// that they go out in queue order.
	sending sync.Mutex
	spare   []queued // guarded by sending: the last batch's array, for reuse
}

// queued is a fire and the upstream that was the instance's when it was
// decided (nil: none; then Then is run at once).
type queued struct {
	x Sender
	Fire
}

// Init readies b; spawn runs a fire's Then on a goroutine of its own (the
// instance's tracked tasks), named for the log.
func (b *Box) Init(spawn func(name string, fn func())) { b.spawn = spawn }

// PutLocked queues fires for x. The caller holds the instance's mutex: the
// order of the queue is the order of the critical sections.
func (b *Box) PutLocked(x Sender, fires []Fire) {
	b.pending.Add(int64(len(fires)))
	b.mu.Lock()
	for _, f := range fires {
		b.q = append(b.q, queued{x: x, Fire: f})
	}
	b.mu.Unlock()
}

// Pending reports whether fires were put in the box and are not yet in an
// upstream's queue: a push upstream flushes first when they are.
func (b *Box) Pending() bool { return b.pending.Load() != 0 }

// Flush pushes every queued fire, in order, waiting for room in the
// upstreams' queues. It must be called without the instance's mutex: it
// may wait.
func (b *Box) Flush() {
	b.sending.Lock()
	defer b.sending.Unlock()
	for {
		b.mu.Lock()
		batch := b.q
		b.q = b.spare[:0]
		b.mu.Unlock()
		if len(batch) == 0 {
			b.spare = batch
			return
		}
		b.pushBatch(batch)
		clear(batch) // drop the params and callbacks
		b.spare = batch[:0]
	}
}

// pushBatch pushes batch's fires; the count falls once they are in the
// upstream's queue, even when one panics, so that a push after it does
// not flush for ever.
func (b *Box) pushBatch(batch []queued) {
	defer b.pending.Add(-int64(len(batch)))
	for i := range batch {
		f := &batch[i]
		switch {
		case f.x != nil:
			f.x.FireQueued(f.TabID, f.Sid, f.Method, f.Params, f.Then)
		case f.Then != nil:
			// Nothing to send it to: over at once, off the flusher.
			b.spawn("relay command over", f.Then)
		}
	}
}
