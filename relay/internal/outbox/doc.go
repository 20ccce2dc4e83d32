// Package outbox carries the commands of the relay's own that a critical
// section of an instance decided (core.State.Fire) to the browser once the
// instance's lock is released, so that waiting for room in the upstream's
// queue (up to the writer's timeout when its socket stalls) never holds
// the lock: the live view, Stop, Status and the other tabs' events go on
// meanwhile.
//
// The order stays what it was when they were sent before the release:
//
//   - between critical sections: the instance's Unlock puts a section's
//     fires in the box under the lock (PutLocked), so the queue holds them
//     in the order of the sections, and one flusher at a time pushes them
//     in queue order (Flush);
//   - before anything sent after the release: PutLocked raises the count
//     of pending fires under the lock, and every other push upstream (the
//     client's commands, the relay's calls, fires outside the lock)
//     flushes the box first when Pending says so. Whoever takes the lock
//     after a release, or hears of it, sees the raised count; it falls
//     only once the fires are in the upstream's queue (a FIFO), so a
//     command pushed after a zero is behind them.
//
// A single goroutine that releases the lock has flushed its own fires (or
// waited for the flusher that took them) when Unlock returns, as when they
// were sent before the release.
//
// Lock order: (the upstream's own, held across calls upstream) → the
// instance's mutex → Box.sending → Box.mu, the upstream's queue mutex.
// Nothing takes the instance's mutex while it holds sending or mu: what a
// command runs once it is over is spawned, never run on the flusher's
// stack.
package outbox
