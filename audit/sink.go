package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

const (
	// sinkQueue bounds the records waiting for the disk. A Log never
	// waits for it: when it is full the record is counted as dropped (it
	// is still in the ring).
	sinkQueue = 4096
	// sinkBatchBytes bounds one write: a burst is written in one call,
	// but a single call stays small enough not to hold the disk for long.
	sinkBatchBytes = 64 << 10
	// tailWindow is the first guess of how much of an existing file must
	// be read to find its last complete line.
	tailWindow = 64 << 10
)

// sinkFile is what the writer needs from an *os.File; tests put failing
// and short-writing doubles behind it.
type sinkFile interface {
	io.Writer
	Sync() error
	Close() error
}

// Sink appends records to a JSON Lines file: one object per line, in Seq
// order, written only by its own goroutine so that recording never waits
// for the disk. Every write is whole lines, so a tailer never finds a
// record split between two writes; a write that fails halfway leaves a
// broken line, which the next write ends before its own records.
//
// A write error (a full disk, a failing device) is counted and remembered,
// the records in that write are counted as dropped, and the next batch is
// tried as usual: a disk that recovers is used again. Nothing panics and
// nothing is retried, so a dead disk costs one failed write per batch.
type Sink struct {
	lastSeq uint64        // static: Seq of the last record in the file when it was opened
	regular bool          // static: the file is a regular file (it can be synced)
	f       sinkFile      // owned by the writer goroutine after construction
	queue   chan Record   // sent to only under mu; closed by Close, under mu
	done    chan struct{} // closed by the writer goroutine when it has exited
	// closeErr is written by the writer goroutine before it closes done.
	closeErr error

	mu       sync.Mutex
	closed   bool          // guarded by mu
	progress chan struct{} // guarded by mu; closed and replaced by the writer after each batch
	lastErr  error         // guarded by mu

	queued  atomic.Uint64 // records accepted into queue
	handled atomic.Uint64 // records the writer has written or given up on
	errs    atomic.Uint64 // failed writes
	dropped atomic.Uint64 // records that will never be in the file
}

// OpenSink opens (or creates, mode 0600) the file at path for appending
// and starts its writer. If the file already holds records, LastSeq is the
// Seq of the last complete one; a last line cut short by a crash is
// skipped, and the first new record starts on a line of its own.
func OpenSink(path string) (*Sink, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open audit file: %w", err)
	}
	var last uint64
	var partial bool
	if fi.Mode().IsRegular() && fi.Size() > 0 {
		last, partial, err = readLastSeq(path)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("open audit file: %w", err)
		}
	}
	return newSink(f, fi.Mode().IsRegular(), last, partial), nil
}

func newSink(f sinkFile, regular bool, lastSeq uint64, partial bool) *Sink {
	s := &Sink{
		lastSeq:  lastSeq,
		regular:  regular,
		f:        f,
		queue:    make(chan Record, sinkQueue),
		done:     make(chan struct{}),
		progress: make(chan struct{}),
	}
	go s.run(partial)
	return s
}

// readLastSeq finds the last line of the file that is a record, reading
// backwards in growing windows so that a long file costs only its tail.
// partial reports that the file does not end with a newline.
func readLastSeq(path string) (seq uint64, partial bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	size := fi.Size()
	for window := int64(tailWindow); ; window *= 2 {
		off := max(size-window, 0)
		buf := make([]byte, size-off)
		if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
			return 0, false, err
		}
		partial = len(buf) > 0 && buf[len(buf)-1] != '\n'
		lines := bytes.Split(buf, []byte{'\n'})
		if off > 0 {
			// The window may start inside a line.
			lines = lines[1:]
		}
		for i := len(lines) - 1; i >= 0; i-- {
			var r struct {
				Seq uint64 `json:"seq"`
			}
			if json.Unmarshal(lines[i], &r) == nil && r.Seq > 0 {
				return r.Seq, partial, nil
			}
		}
		if off == 0 {
			return 0, partial, nil
		}
	}
}

// LastSeq is the Seq of the last record the file held when it was opened,
// or 0; NewRing continues from it. A nil Sink has none.
func (s *Sink) LastSeq() uint64 {
	if s == nil {
		return 0
	}
	return s.lastSeq
}

// Errors is how many writes have failed.
func (s *Sink) Errors() uint64 {
	if s == nil {
		return 0
	}
	return s.errs.Load()
}

// Dropped is how many records did not reach the file: the queue was full,
// their write failed, or they came after Close.
func (s *Sink) Dropped() uint64 {
	if s == nil {
		return 0
	}
	return s.dropped.Load()
}

// LastError is the most recent write error, or nil.
func (s *Sink) LastError() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// enqueue hands r to the writer without waiting.
func (s *Sink) enqueue(r Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.dropped.Add(1)
		return
	}
	select {
	case s.queue <- r:
		s.queued.Add(1)
	default:
		s.dropped.Add(1)
	}
}

// Flush waits until every record queued before the call has been written
// (or has failed: see Errors), or until ctx ends.
func (s *Sink) Flush(ctx context.Context) error {
	target := s.queued.Load()
	for {
		s.mu.Lock()
		progress := s.progress
		s.mu.Unlock()
		if s.handled.Load() >= target {
			return nil
		}
		select {
		case <-progress:
		case <-s.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close writes what is queued, syncs and closes the file. Records that
// arrive later are counted as dropped. If ctx ends first, Close returns
// its error and the writer finishes in the background.
func (s *Sink) Close(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.queue)
	}
	s.mu.Unlock()
	select {
	case <-s.done:
		return s.closeErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run is the writer goroutine. partial is true while the file's last line
// is unfinished.
func (s *Sink) run(partial bool) {
	defer close(s.done)
	defer func() {
		// A panic ends the file's writer, not the relay: it is counted as
		// a failed write, and the records that come after are taken off the
		// queue and counted as dropped, so that nothing waits for it.
		if r := recover(); r != nil {
			s.fail(fmt.Errorf("audit file writer: panic: %v", r))
			// The batch it was writing is lost; whoever flushes waits for
			// nothing more of it.
			s.dropped.Add(1)
			s.handled.Store(s.queued.Load())
			s.mu.Lock()
			close(s.progress)
			s.progress = make(chan struct{})
			s.mu.Unlock()
			for range s.queue {
				s.dropped.Add(1)
				s.handled.Add(1)
				s.mu.Lock()
				close(s.progress)
				s.progress = make(chan struct{})
				s.mu.Unlock()
			}
			_ = s.f.Close()
		}
	}()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for r := range s.queue {
		buf.Reset()
		prefix := 0
		if partial {
			// End the broken line, so that the records after it parse.
			buf.WriteByte('\n')
			prefix = 1
		}
		taken, n := 1, 0 // records taken from the queue, lines in buf
		if s.encode(&buf, enc, r) {
			n++
		}
	batch:
		for buf.Len() < sinkBatchBytes {
			select {
			case r, ok := <-s.queue:
				if !ok {
					break batch
				}
				taken++
				if s.encode(&buf, enc, r) {
					n++
				}
			default:
				break batch
			}
		}
		if n > 0 {
			partial = s.write(buf.Bytes(), prefix, n, partial)
		}
		s.handled.Add(uint64(taken))
		s.mu.Lock()
		close(s.progress)
		s.progress = make(chan struct{})
		s.mu.Unlock()
	}
	var err error
	if s.regular {
		err = s.f.Sync()
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.fail(err)
		s.closeErr = fmt.Errorf("close audit file: %w", err)
	}
}

// encode appends r to buf as one line. Ring.Append leaves nothing that
// fails to encode, but a record that did would be counted, not half
// written.
func (s *Sink) encode(buf *bytes.Buffer, enc *json.Encoder, r Record) bool {
	n := buf.Len()
	if err := enc.Encode(r); err != nil {
		buf.Truncate(n)
		s.fail(fmt.Errorf("encode audit record %d: %w", r.Seq, err))
		s.dropped.Add(1)
		return false
	}
	return true
}

// write writes buf (n lines, after prefix bytes that end a broken line)
// in one call and accounts for a failure. It returns whether the file's
// last line is now unfinished.
func (s *Sink) write(buf []byte, prefix, n int, partial bool) bool {
	wrote, err := s.f.Write(buf)
	if err == nil && wrote == len(buf) {
		return false
	}
	if err == nil {
		err = io.ErrShortWrite
	}
	s.fail(err)
	lost := n - bytes.Count(buf[min(prefix, wrote):wrote], []byte{'\n'})
	s.dropped.Add(uint64(lost))
	if wrote > 0 {
		return buf[wrote-1] != '\n'
	}
	return partial
}

func (s *Sink) fail(err error) {
	s.errs.Add(1)
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
}
