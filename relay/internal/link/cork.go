package link

import (
	"bufio"
	"net"
	"net/http"
	"sync"
)

// Corking: one write to the socket for a burst of messages.
//
// The writer of a peer takes messages off its queue one at a time, and
// the WebSocket library writes each as a frame of its own: a system call,
// and a wake-up of the reader on the other side, per message. When the
// writer finds more messages queued behind the one it takes (replies to a
// client with many commands in flight, events of a busy page), it corks
// the socket: the frames of the burst gather in memory and go out in one
// write when the queue is empty, or when corkMax bytes have gathered. One
// message with nothing behind it goes out uncopied (a long one as its head
// and then its payload).

// corkMax bounds what a corked socket gathers before it writes.
const corkMax = 64 << 10

// CorkConn is a net.Conn whose writes a Peer's writer can gather (set it
// as the Peer's Cork). Its mutex orders the writer's frames with the
// control frames the library writes from the read loop (a pong, a close
// reply): a control frame goes out at once, after what was gathered before
// it. The WebSocket connection on top of it owns and closes it.
type CorkConn struct {
	net.Conn
	mu     sync.Mutex
	corked bool   // guarded by mu
	buf    []byte // guarded by mu: gathered while corked
}

func (c *CorkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.corked || isControlFrame(p) {
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
		return c.Conn.Write(p)
	}
	if len(c.buf)+len(p) > corkMax {
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
		if len(p) >= corkMax {
			return c.Conn.Write(p)
		}
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// cork starts gathering writes.
func (c *CorkConn) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// uncork writes what was gathered and stops gathering.
func (c *CorkConn) uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	return c.flushLocked()
}

func (c *CorkConn) flushLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// isControlFrame reports whether p is a whole WebSocket control frame of
// the relay's (close, ping, pong; unmasked, at most 125 bytes of payload):
// the library writes each in one call. A piece of a message's payload
// never starts so: the relay's messages are JSON text.
func isControlFrame(p []byte) bool {
	return len(p) >= 2 && len(p) <= 2+125 && (p[0] == 0x88 || p[0] == 0x89 || p[0] == 0x8A)
}

// CorkWriter hands the upgrader a connection the peer's writer can cork.
type CorkWriter struct {
	http.ResponseWriter
	hj   http.Hijacker
	conn *CorkConn // set by Hijack
}

// WithCork wraps w so that the connection the upgrader hijacks through it
// can be corked: hand the result to the upgrader in w's place, then take
// Conn for the Peer's Cork. Used by the handler that owns w, as w is.
func WithCork(w http.ResponseWriter) *CorkWriter {
	hj, _ := w.(http.Hijacker)
	return &CorkWriter{ResponseWriter: w, hj: hj}
}

// Conn is the connection Hijack returned, or nil when nothing was hijacked
// (w could not hijack, or the upgrade failed before).
func (w *CorkWriter) Conn() *CorkConn { return w.conn }

// Hijack hijacks the connection of the wrapped ResponseWriter and wraps it
// in a CorkConn.
func (w *CorkWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.hj == nil {
		return nil, nil, http.ErrNotSupported
	}
	conn, brw, err := w.hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = &CorkConn{Conn: conn}
	return w.conn, brw, nil
}
