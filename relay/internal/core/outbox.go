package core

import (
	"sync"
	"sync/atomic"
)

// outbox carries the commands of the relay's own that a critical section
// decided (state.fire) to the extension once the instance's lock is
// released, so that waiting for room in the extension's queue (up to the
// writer's timeout when its socket stalls) never holds the lock: the live
// view, Stop, Status and the other tabs' events go on meanwhile.
//
// The order stays what it was when they were sent before the release:
//
//   - between critical sections: Instance.unlock appends a section's fires
//     under the lock, so the queue holds them in the order of the sections,
//     and one flusher at a time (sending) pushes them in queue order;
//   - before anything sent after the release: unlock raises pending under
//     the lock, and every other push to an extension (ext.Conn.push: the
//     client's commands, the relay's calls, fires outside the lock) flushes
//     the outbox first when pending is not zero. Whoever takes the lock
//     after a release, or hears of it, sees the raised count; it falls only
//     once the fires are in the extension's queue (a FIFO), so a command
//     pushed after a zero is behind them.
//
// A single goroutine that releases the lock has flushed its own fires
// (or waited for the flusher that took them) when unlock returns, as when
// they were sent before the release.
//
// Lock order: (ext.Conn.learning, held across calls upstream) →
// Instance.mu → sending → outbox.mu, the upstream's own mutex
// (ext.Conn.mu). Nothing takes Instance.mu while it holds sending or
// outbox.mu: what a command runs once it is over is spawned, never run on
// the flusher's stack.
type outbox struct {
	in *Instance // static

	// pending counts the fires put in the queue and not yet in an
	// extension's queue. Raised under Instance.mu, lowered by the flusher
	// after the push; read without a lock by every push (one atomic load).
	pending atomic.Int64

	mu sync.Mutex // guards q; a leaf
	q  []outFire

	// sending is held by the one goroutine that pushes queued fires, so
	// that they go out in queue order.
	sending sync.Mutex
	spare   []outFire // guarded by sending: the last batch's array, for reuse
}

// outFire is a queued fire and the extension connection that was the
// instance's when it was decided (nil: none; then is run at once).
type outFire struct {
	x Upstream
	fireCmd
}

// putLocked queues fires for x. The caller holds Instance.mu: the order of
// the queue is the order of the critical sections.
func (o *outbox) putLocked(x Upstream, fires []fireCmd) {
	o.pending.Add(int64(len(fires)))
	o.mu.Lock()
	for _, f := range fires {
		o.q = append(o.q, outFire{x: x, fireCmd: f})
	}
	o.mu.Unlock()
}

// flush pushes every queued fire, in order, waiting for room in the
// extensions' queues. It must be called without Instance.mu: it may wait.
func (o *outbox) flush() {
	o.sending.Lock()
	defer o.sending.Unlock()
	for {
		o.mu.Lock()
		batch := o.q
		o.q = o.spare[:0]
		o.mu.Unlock()
		if len(batch) == 0 {
			o.spare = batch
			return
		}
		o.pushBatch(batch)
		clear(batch) // drop the params and callbacks
		o.spare = batch[:0]
	}
}

// pushBatch pushes batch's fires; the count falls once they are in the
// extension's queue, even when one panics, so that a push after it does
// not flush for ever.
func (o *outbox) pushBatch(batch []outFire) {
	defer o.pending.Add(-int64(len(batch)))
	for i := range batch {
		f := &batch[i]
		switch {
		case f.x != nil:
			f.x.FireQueued(f.tabID, f.sid, f.method, f.params, f.then)
		case f.then != nil:
			// Nothing to send it to: over at once, off the flusher.
			o.in.Tasks.Spawn("relay command over", f.then)
		}
	}
}
