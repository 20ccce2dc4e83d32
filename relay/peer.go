package relay

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
	// closeWait bounds the close handshake once we have decided to close.
	closeWait = 2 * time.Second
	// maxPooledBuf: outgoing buffers larger than this are not pooled.
	maxPooledBuf = 1 << 20
	// maxBatchBytes bounds a batch frame to the extension: messages queued
	// together are written as one frame up to this size, and a message this
	// large travels alone.
	maxBatchBytes = 1 << 20
)

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > maxPooledBuf {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// peer is one WebSocket with a single writer goroutine fed by a bounded
// queue. The owner's read loop is the only reader.
type peer struct {
	conn *websocket.Conn // static

	out  chan *[]byte  // closed by nobody; the writer stops on done
	done chan struct{} // closed once by shutdown

	closeOnce   sync.Once
	closeCode   int    // written once under closeOnce, read after done
	closeReason string // likewise

	writerDone chan struct{} // closed by writeLoop on exit
	queued     atomic.Int64  // messages in out, for metrics and tests
	bytes      atomic.Int64  // bytes of the messages in out
	maxBytes   int64         // static: bytes out may hold (beyond one message); 0: unbounded
	// discarded counts what is still queued when the connection ends and
	// so is never sent. Set before writeLoop starts; nil: not counted.
	discarded prometheus.Counter
	// batches counts the batch frames the writer writes. Set before
	// writeLoop starts; nil: not counted.
	batches prometheus.Counter

	// Senders waiting for room in bytes (send) wait on room, which the
	// writer closes and replaces when it takes a message off the queue
	// while anyone waits.
	waiting atomic.Int32
	roomMu  sync.Mutex
	room    chan struct{}

	// batch: the peer takes batches (our extension said so), and the writer
	// writes what is queued together as one frame. Set by the owner's read
	// loop, read by the writer.
	batch    atomic.Bool
	batchBuf []byte // owned by the writer: the batch being built

	// cork, when set, lets the writer write a burst of messages to the
	// socket at once (cork.go). Set before writeLoop starts.
	cork *corkConn
	// noCloseFrame: the connection ends without a close frame (go-rod's
	// reader panics on one). Set before writeLoop starts.
	noCloseFrame bool
	// linger is how long the socket stays open after the close frame, for
	// the peer's reply (closeWait when 0). Set before shutdown.
	linger time.Duration
}

func newPeer(conn *websocket.Conn, queue int, maxBytes int64) *peer {
	return &peer{
		maxBytes:   maxBytes,
		conn:       conn,
		out:        make(chan *[]byte, queue),
		done:       make(chan struct{}),
		writerDone: make(chan struct{}),
	}
}

// trySend queues b without blocking. It reports false when the peer is
// closing or its queue is full; b is returned to the pool either way.
func (p *peer) trySend(b *[]byte) bool {
	select {
	case <-p.done:
		putBuf(b)
		return false
	default:
	}
	n := int64(len(*b)) // before the send: the writer may recycle b at once
	if p.overBudget(int(n)) {
		putBuf(b)
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
		putBuf(b)
		return false
	}
}

// overBudget reports whether queueing n more bytes would pass maxBytes.
// One message always fits in an empty queue, however large.
func (p *peer) overBudget(n int) bool {
	q := p.bytes.Load()
	return p.maxBytes > 0 && q > 0 && q+int64(n) > p.maxBytes
}

// dequeued accounts for b leaving the queue.
func (p *peer) dequeued(b *[]byte) {
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
func (p *peer) roomSignal() <-chan struct{} {
	p.roomMu.Lock()
	defer p.roomMu.Unlock()
	if p.room == nil {
		p.room = make(chan struct{})
	}
	return p.room
}

// send queues b, waiting for room; it gives up when the peer closes.
func (p *peer) send(b *[]byte) bool {
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
				putBuf(b)
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
		putBuf(b)
		return false
	}
}

// shutdown asks the writer to flush what is queued, send a close frame with
// code and reason and close the socket. Only the first call counts.
func (p *peer) shutdown(code int, reason string) {
	p.closeOnce.Do(func() {
		if len(reason) > 120 { // a close frame carries at most 123 bytes
			reason = reason[:120]
		}
		p.closeCode, p.closeReason = code, reason
		close(p.done)
	})
}

// closed reports whether shutdown was called.
func (p *peer) closed() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// writeLoop is the only writer of p.conn. ping, when non-zero, sends
// WebSocket pings at that period. A panic in it closes the socket and is
// handed to onPanic, which contains it to the connection's instance.
func (p *peer) writeLoop(ping time.Duration, onPanic func(where string, r any)) {
	defer close(p.writerDone)
	defer func() {
		if r := recover(); r != nil {
			p.shutdown(websocket.CloseInternalServerErr, msgInternal)
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
				p.shutdown(websocket.CloseAbnormalClosure, "write failed")
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
			if p.noCloseFrame {
				p.conn.Close()
				return
			}
			msg := websocket.FormatCloseMessage(p.closeCode, p.closeReason)
			_ = p.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(closeWait))
			// Give the read loop a moment to see the peer's close reply,
			// then make sure the socket goes.
			wait := closeWait
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
func (p *peer) writeBurst(b *[]byte) error {
	if p.cork == nil || len(p.out) == 0 {
		return p.writeOut(b)
	}
	p.cork.cork()
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
	if e := p.cork.uncork(); err == nil {
		err = e
	}
	return err
}

// writeOut writes b and, when the peer takes batches, whatever else is
// queued behind it, in order: one frame for what is queued together
// rather than a frame (and a wake-up of the peer) per message.
func (p *peer) writeOut(b *[]byte) error {
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
func (p *peer) writeBatch(first *[]byte) (next *[]byte, err error) {
	buf := append(p.batchBuf[:0], '[')
	buf = append(buf, *first...)
	putBuf(first)
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
			putBuf(b)
		default:
			break more
		}
	}
	buf = append(buf, ']')
	if p.batches != nil {
		p.batches.Inc()
	}
	_ = p.conn.SetWriteDeadline(time.Now().Add(writeWait))
	err = p.conn.WriteMessage(websocket.TextMessage, buf)
	p.batchBuf = buf[:0]
	if err != nil && next != nil {
		putBuf(next)
		next = nil
	}
	return next, err
}

func (p *peer) write(b *[]byte) error {
	_ = p.conn.SetWriteDeadline(time.Now().Add(writeWait))
	err := p.conn.WriteMessage(websocket.TextMessage, *b)
	putBuf(b)
	return err
}

func (p *peer) drain() {
	for {
		select {
		case b := <-p.out:
			p.dequeued(b)
			putBuf(b)
			if p.discarded != nil {
				p.discarded.Inc()
			}
		default:
			return
		}
	}
}

// readFrame reads one whole message of at most limit bytes into *buf,
// growing it as needed, and returns the message type and the bytes
// (aliasing *buf until the next call). A larger message is a
// *wslimit.TooBigError: see closeTooBig.
func readFrame(conn *websocket.Conn, buf *[]byte, limit int64) (int, []byte, error) {
	return wslimit.Read(conn, buf, limit)
}

// closeTooBig ends p's connection for a message larger than limit: a close
// frame 1009 with the reason, then what the peer goes on sending is read
// and thrown away until it closes (wslimit.Drain), so that the peer gets
// the frame rather than a reset. The caller is p's reader.
func (p *peer) closeTooBig(limit int64) {
	p.linger = wslimit.DrainTime
	p.shutdown(websocket.CloseMessageTooBig, wslimit.Reason(limit))
	wslimit.Drain(p.conn, wslimit.DrainTime)
}

// closeReasonOf describes why a read loop ended, for logs.
func closeReasonOf(err error) string {
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
