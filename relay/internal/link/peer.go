package link

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdprelay/cdprelay/internal/wslimit"
)

const (
	// writeWait bounds every write to a peer.
	writeWait = 10 * time.Second
	// CloseWait bounds the close handshake once we have decided to close.
	CloseWait = 2 * time.Second
	// maxPooledBuf: outgoing buffers larger than this are not pooled.
	maxPooledBuf = 1 << 20
	// maxBatchBytes bounds a batch frame to the extension: messages queued
	// together are written as one frame up to this size, and a message this
	// large travels alone.
	maxBatchBytes = 1 << 20
)

// ReasonInternal is the close reason of a socket whose writer panicked,
// and of the other sockets of the instance its code failed in.
const ReasonInternal = "cdprelay: internal error (see the relay's log)"

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// GetBuf returns an empty buffer from the pool. The caller owns it until it
// hands it to a Peer's Send or TrySend (which own it from then on, whether
// or not they queue it) or returns it with PutBuf.
func GetBuf() *[]byte { return bufPool.Get().(*[]byte) }

// PutBuf returns b to the pool; b must not be used after. Very large
// buffers are left to the garbage collector.
func PutBuf(b *[]byte) {
	if cap(*b) > maxPooledBuf {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// Peer is one WebSocket with a single writer goroutine (WriteLoop) fed by a
// bounded queue. The owner's read loop is the only reader of Conn; WriteLoop
// is the only writer, and it closes the socket once Shutdown is called.
// Any goroutine may Send, TrySend and Shutdown.
type Peer struct {
	conn *websocket.Conn // static

	out  chan *[]byte  // closed by nobody; the writer stops on done
	done chan struct{} // closed once by Shutdown

	closeOnce   sync.Once
	closeCode   int    // written once under closeOnce, read after done
	closeReason string // likewise

	writerDone chan struct{} // closed by WriteLoop on exit
	queued     atomic.Int64  // messages in out, for metrics and tests
	bytes      atomic.Int64  // bytes of the messages in out
	maxBytes   int64         // static: bytes out may hold (beyond one message); 0: unbounded
	// Discarded counts what is still queued when the connection ends and
	// so is never sent. Set by the owner before WriteLoop starts; nil: not
	// counted.
	Discarded prometheus.Counter
	// Batches counts the batch frames the writer writes. Set by the owner
	// before WriteLoop starts; nil: not counted.
	Batches prometheus.Counter

	// Senders waiting for room in bytes (Send) wait on room, which the
	// writer closes and replaces when it takes a message off the queue
	// while anyone waits.
	waiting atomic.Int32
	roomMu  sync.Mutex
	room    chan struct{}

	// batch: the peer takes batches (our extension said so), and the writer
	// writes what is queued together as one frame. Set by the owner's read
	// loop (EnableBatches), read by the writer.
	batch    atomic.Bool
	batchBuf []byte // owned by the writer: the batch being built

	// Cork, when set, lets the writer write a burst of messages to the
	// socket at once (cork.go). Set by the owner before WriteLoop starts.
	Cork *CorkConn
	// NoCloseFrame: the connection ends without a close frame (go-rod's
	// reader panics on one). Set by the owner before WriteLoop starts.
	NoCloseFrame bool
	// linger is how long the socket stays open after the close frame, for
	// the peer's reply (CloseWait when 0). Set before Shutdown.
	linger time.Duration
}

// NewPeer returns the Peer of conn, whose queue holds at most queue
// messages and, beyond one message, at most maxBytes bytes (0: unbounded).
// The caller owns conn's reading and starts WriteLoop, which owns its
// writing and closing from then on.
func NewPeer(conn *websocket.Conn, queue int, maxBytes int64) *Peer {
	return &Peer{
		maxBytes:   maxBytes,
		conn:       conn,
		out:        make(chan *[]byte, queue),
		done:       make(chan struct{}),
		writerDone: make(chan struct{}),
	}
}

// TrySend queues b without blocking. It reports false when the peer is
// closing or its queue is full. The Peer owns b from the call on: it is
// returned to the pool once written, or at once when not queued.
func (p *Peer) TrySend(b *[]byte) bool {
	select {
	case <-p.done:
		PutBuf(b)
		return false
	default:
	}
	n := int64(len(*b)) // before the send: the writer may recycle b at once
	if p.overBudget(int(n)) {
		PutBuf(b)
		return false
	}
	// Counted before the send, so that the writer's dequeued never makes
	// the count negative; undone when the queue is full.
	p.queued.Add(1)
	p.bytes.Add(n)
	select {
	case p.out <- b:
		return true
	default:
		p.queued.Add(-1)
		p.bytes.Add(-n)
		PutBuf(b)
		return false
	}
}

// overBudget reports whether queueing n more bytes would pass maxBytes.
// One message always fits in an empty queue, however large.
func (p *Peer) overBudget(n int) bool {
	q := p.bytes.Load()
	return p.maxBytes > 0 && q > 0 && q+int64(n) > p.maxBytes
}

// dequeued accounts for b leaving the queue.
func (p *Peer) dequeued(b *[]byte) {
	p.queued.Add(-1)
	p.bytes.Add(-int64(len(*b)))
	if p.waiting.Load() > 0 {
		p.roomMu.Lock()
		if p.room != nil {
			close(p.room)
			p.room = nil
		}
		p.roomMu.Unlock()
	}
}

// roomSignal returns a channel closed when the writer next makes room.
func (p *Peer) roomSignal() <-chan struct{} {
	p.roomMu.Lock()
	defer p.roomMu.Unlock()
	if p.room == nil {
		p.room = make(chan struct{})
	}
	return p.room
}

// Send queues b, waiting for room; it gives up, and reports false, when
// the peer closes. The Peer owns b from the call on, as with TrySend.
func (p *Peer) Send(b *[]byte) bool {
	// Room in bytes first: a client sending 100 MB commands faster than the
	// extension takes them waits here, in its own read loop, and holds no
	// more than the budget.
	n := int64(len(*b))
	if p.overBudget(int(n)) {
		p.waiting.Add(1)
		for p.overBudget(int(n)) {
			room := p.roomSignal()
			if !p.overBudget(int(n)) {
				break // made room between the check and the signal
			}
			select {
			case <-p.done:
				p.waiting.Add(-1)
				PutBuf(b)
				return false
			case <-room:
			}
		}
		p.waiting.Add(-1)
	}
	p.queued.Add(1)
	p.bytes.Add(n)
	select {
	case p.out <- b:
		return true
	case <-p.done:
		p.queued.Add(-1)
		p.bytes.Add(-n)
		PutBuf(b)
		return false
	}
}

// Shutdown asks the writer to flush what is queued, send a close frame with
// code and reason and close the socket. Only the first call counts. Any
// goroutine may call it.
func (p *Peer) Shutdown(code int, reason string) {
	p.closeOnce.Do(func() {
		if len(reason) > 120 { // a close frame carries at most 123 bytes
			reason = reason[:120]
		}
		p.closeCode, p.closeReason = code, reason
		close(p.done)
	})
}

// Closed reports whether Shutdown was called.
func (p *Peer) Closed() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Done is closed once Shutdown is called: a goroutine waiting on the
// peer gives up on it.
func (p *Peer) Done() <-chan struct{} { return p.done }

// WriterDone is closed when WriteLoop returns: nothing is written to the
// socket after, and CloseReason may be read.
func (p *Peer) WriterDone() <-chan struct{} { return p.writerDone }

// CloseReason is the reason the first Shutdown gave ("" for none). Read it
// once Done is closed.
func (p *Peer) CloseReason() string { return p.closeReason }

// Conn is the socket. Only the owner's read loop reads it (ReadFrame) and
// sets its read deadline and handlers; writing is WriteLoop's.
func (p *Peer) Conn() *websocket.Conn { return p.conn }

// Queued is the number of messages in the queue.
func (p *Peer) Queued() int64 { return p.queued.Load() }

// QueuedBytes is the size of the messages in the queue.
func (p *Peer) QueuedBytes() int64 { return p.bytes.Load() }

// QueueCap is how many messages the queue holds.
func (p *Peer) QueueCap() int { return cap(p.out) }

// EnableBatches tells the writer that the far end takes batch frames: from
// now on what is queued together goes as one frame. The owner's read loop
// calls it once the far end has said so.
func (p *Peer) EnableBatches() { p.batch.Store(true) }

// WriteLoop is the only writer of the socket; the owner runs it on a
// goroutine of its own, once. ping, when non-zero, sends WebSocket pings at
// that period. It returns once Shutdown was called and the close frame sent
// (or a write failed), closing WriterDone; the socket is closed then or
// soon after. A panic in it closes the socket and is handed to onPanic,
// which contains it to the connection's instance.
func (p *Peer) WriteLoop(ping time.Duration, onPanic func(where string, r any)) {
	defer close(p.writerDone)
	defer func() {
		if r := recover(); r != nil {
			p.Shutdown(websocket.CloseInternalServerErr, ReasonInternal)
			p.conn.Close() // the only writer is gone: nobody else would
			p.drain()
			onPanic("writer", r)
		}
	}()
	var tick <-chan time.Time
	if ping > 0 {
		t := time.NewTicker(ping)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case b := <-p.out:
			p.dequeued(b)
			if err := p.writeBurst(b); err != nil {
				p.Shutdown(websocket.CloseAbnormalClosure, "write failed")
				p.conn.Close()
				p.drain()
				return
			}
		case <-tick:
			_ = p.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait))
		case <-p.done:
			// Flush what was queued before the close was decided (an error
			// reply, say), then say why we close.
			for flushing := true; flushing; {
				select {
				case b := <-p.out:
					p.dequeued(b)
					if p.write(b) != nil {
						flushing = false
					}
				default:
					flushing = false
				}
			}
			p.drain()
			if p.NoCloseFrame {
				p.conn.Close()
				return
			}
			msg := websocket.FormatCloseMessage(p.closeCode, p.closeReason)
			_ = p.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(CloseWait))
			// Give the read loop a moment to see the peer's close reply,
			// then make sure the socket goes.
			wait := CloseWait
			if p.linger > 0 {
				wait = p.linger
			}
			time.AfterFunc(wait, func() { p.conn.Close() })
			return
		}
	}
}

// writeBurst writes b and, when more is queued behind it and the socket
// can be corked, everything queued until the queue is empty, as one write
// to the socket.
func (p *Peer) writeBurst(b *[]byte) error {
	if p.Cork == nil || len(p.out) == 0 {
		return p.writeOut(b)
	}
	p.Cork.cork()
	err := p.writeOut(b)
	for err == nil {
		select {
		case b = <-p.out:
			p.dequeued(b)
			err = p.writeOut(b)
			continue
		default:
		}
		break
	}
	if e := p.Cork.uncork(); err == nil {
		err = e
	}
	return err
}

// writeOut writes b and, when the peer takes batches, whatever else is
// queued behind it, in order: one frame for what is queued together
// rather than a frame (and a wake-up of the peer) per message.
func (p *Peer) writeOut(b *[]byte) error {
	for b != nil {
		if !p.batch.Load() || len(p.out) == 0 || len(*b) >= maxBatchBytes {
			return p.write(b)
		}
		var err error
		if b, err = p.writeBatch(b); err != nil {
			return err
		}
	}
	return nil
}

// writeBatch writes first and the messages queued behind it as one batch
// frame of at most maxBatchBytes. It returns the message it took off the
// queue that did not fit, which goes next.
func (p *Peer) writeBatch(first *[]byte) (next *[]byte, err error) {
	buf := append(p.batchBuf[:0], '[')
	buf = append(buf, *first...)
	PutBuf(first)
more:
	for {
		select {
		case b := <-p.out:
			p.dequeued(b)
			if len(buf)+1+len(*b)+1 > maxBatchBytes {
				next = b
				break more
			}
			buf = append(buf, ',')
			buf = append(buf, *b...)
			PutBuf(b)
		default:
			break more
		}
	}
	buf = append(buf, ']')
	if p.Batches != nil {
		p.Batches.Inc()
	}
	_ = p.conn.SetWriteDeadline(time.Now().Add(writeWait))
	err = p.conn.WriteMessage(websocket.TextMessage, buf)
	p.batchBuf = buf[:0]
	if err != nil && next != nil {
		PutBuf(next)
		next = nil
	}
	return next, err
}

func (p *Peer) write(b *[]byte) error {
	_ = p.conn.SetWriteDeadline(time.Now().Add(writeWait))
	err := p.conn.WriteMessage(websocket.TextMessage, *b)
	PutBuf(b)
	return err
}

func (p *Peer) drain() {
	for {
		select {
		case b := <-p.out:
			p.dequeued(b)
			PutBuf(b)
			if p.Discarded != nil {
				p.Discarded.Inc()
			}
		default:
			return
		}
	}
}

// ReadFrame reads one whole message of at most limit bytes into *buf,
// growing it as needed, and returns the message type and the bytes
// (aliasing *buf until the next call). A larger message is a
// *wslimit.TooBigError: see CloseTooBig. Only conn's reader may call it.
func ReadFrame(conn *websocket.Conn, buf *[]byte, limit int64) (int, []byte, error) {
	return wslimit.Read(conn, buf, limit)
}

// CloseTooBig ends p's connection for a message larger than limit: a close
// frame 1009 with the reason, then what the peer goes on sending is read
// and thrown away until it closes (wslimit.Drain), so that the peer gets
// the frame rather than a reset. The caller is p's reader.
func (p *Peer) CloseTooBig(limit int64) {
	p.linger = wslimit.DrainTime
	p.Shutdown(websocket.CloseMessageTooBig, wslimit.Reason(limit))
	wslimit.Drain(p.conn, wslimit.DrainTime)
}

// CloseCodeOf is the WebSocket close code a read loop ended with; 1006
// (abnormal) when it saw no close frame.
func CloseCodeOf(err error) int {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return websocket.CloseAbnormalClosure
}

// CloseReasonOf describes why a read loop ended with err, for logs.
func CloseReasonOf(err error) string {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		if ce.Text != "" {
			return ce.Text
		}
		return closeCodeName(ce.Code)
	}
	if errors.Is(err, websocket.ErrReadLimit) || wslimit.IsTooBig(err) {
		return "message too big"
	}
	return err.Error()
}

func closeCodeName(code int) string {
	switch code {
	case websocket.CloseNormalClosure:
		return "normal closure"
	case websocket.CloseGoingAway:
		return "going away"
	case websocket.CloseAbnormalClosure:
		return "connection lost"
	case websocket.CloseNoStatusReceived:
		return "closed by the peer"
	case websocket.CloseMessageTooBig:
		return "message too big"
	default:
		return "code " + strconv.Itoa(code)
	}
}
