package cdptest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// Conn is a lean, pipelined command connection over one WebSocket, for
// benchmarks and load: any number of commands in flight, replies matched
// by id, frames built into one reused buffer and read into another, only
// the envelope of each reply decoded. Unlike Client it records nothing.
//
// The same code serves as a CDP client (of Chromium's own port or of the
// relay) and as the relay's stand-in on an extension's socket, where only
// the envelope of a command differs (the caller's build function), so that
// its own cost is the same on every path it is compared on.
type Conn struct {
	ws *websocket.Conn // static; written under wmu, read by readLoop only

	wmu  sync.Mutex
	wbuf []byte // guarded by wmu

	mu      sync.Mutex
	nextID  int64                  // guarded by mu
	pending map[int64]chan<- Reply // guarded by mu
	err     error                  // guarded by mu: why readLoop ended

	// other, when set, gets every reply no Send waits for, from the read
	// loop; frame is valid during the call only.
	other atomic.Pointer[func(id int64, failed bool, frame []byte)]

	// events receives every frame that is not a reply, for setup code to
	// wait on; when nobody drains it, frames are dropped, never waited for.
	events chan []byte
	done   chan struct{} // closed by readLoop
}

// Reply is the answer to one command sent with Send.
type Reply struct {
	Result []byte // owned by the receiver
	Err    error
	// Refused: Err is the peer's error reply, not the connection's end.
	Refused bool
}

// DialConn connects to a WebSocket URL with dialer (nil: the default).
func DialConn(ctx context.Context, dialer *websocket.Dialer, url string, header http.Header) (*Conn, error) {
	if dialer == nil {
		dialer = websocket.DefaultDialer
	}
	ws, resp, err := dialer.DialContext(ctx, url, header)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("dial %s: %w (HTTP %d)", url, err, resp.StatusCode)
		}
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	return NewConn(ws), nil
}

// NewConn runs a Conn over ws, which it owns from now on.
func NewConn(ws *websocket.Conn) *Conn {
	c := &Conn{
		ws:      ws,
		pending: map[int64]chan<- Reply{},
		events:  make(chan []byte, 256),
		done:    make(chan struct{}),
	}
	go c.readLoop()
	return c
}

// LocalAddr is the connection's own address.
func (c *Conn) LocalAddr() net.Addr { return c.ws.LocalAddr() }

// OnOtherReply makes fn receive every reply that no Send waits for (a
// command written with WriteRaw), from the read loop: fn must not block,
// and frame is valid during the call only.
func (c *Conn) OnOtherReply(fn func(id int64, failed bool, frame []byte)) { c.other.Store(&fn) }

func (c *Conn) readLoop() {
	defer close(c.done)
	var buf []byte
	var m wire.ExtMessage
	for {
		frame, err := readFrame(c.ws, &buf)
		if err != nil {
			c.mu.Lock()
			c.err = err
			pending := c.pending
			c.pending = map[int64]chan<- Reply{}
			c.mu.Unlock()
			for _, ch := range pending {
				ch <- Reply{Err: fmt.Errorf("connection ended: %w", err)}
			}
			return
		}
		// A CDP reply and an extension reply share the {id, result|error}
		// shape; a CDP event (params an object) fails this decoder, an
		// extension event passes without an id: both are events here.
		if wire.DecodeExt(frame, &m) == nil && m.HasID {
			c.mu.Lock()
			ch := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			switch {
			case ch == nil:
				if fn := c.other.Load(); fn != nil {
					(*fn)(m.ID, m.HasError, frame)
				}
			case m.HasError:
				ch <- Reply{Err: fmt.Errorf("error reply: %s", m.Error), Refused: true}
			default:
				ch <- Reply{Result: append([]byte(nil), m.Result...)}
			}
			continue
		}
		select {
		case c.events <- append([]byte(nil), frame...):
		default:
		}
	}
}

// readFrame reads one message into *buf, reusing it across calls.
func readFrame(ws *websocket.Conn, buf *[]byte) ([]byte, error) {
	_, r, err := ws.NextReader()
	if err != nil {
		return nil, err
	}
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			*buf = b
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Send writes the command that build appends for the next id, and
// delivers its reply to ch.
func (c *Conn) Send(ch chan<- Reply, build func(b []byte, id int64) []byte) error {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	c.wmu.Lock()
	c.wbuf = build(c.wbuf[:0], id)
	err := c.ws.WriteMessage(websocket.TextMessage, c.wbuf)
	c.wmu.Unlock()
	if err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	return err
}

// WriteRaw writes one text frame as it is. Its reply, if any, goes to the
// OnOtherReply function: choose ids that Send will not (Send counts up
// from 1).
func (c *Conn) WriteRaw(frame []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.WriteMessage(websocket.TextMessage, frame)
}

// Call sends method with params (raw JSON, or nil) on sessionID ("" for
// the browser level) and waits for the result.
func (c *Conn) Call(ctx context.Context, sessionID, method string, params []byte) ([]byte, error) {
	ch := make(chan Reply, 1)
	err := c.Send(ch, func(b []byte, id int64) []byte {
		return AppendCommand(b, id, sessionID, method, params)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, fmt.Errorf("%s: %w", method, r.Err)
		}
		return r.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// AppendCommand appends a CDP command to b.
func AppendCommand(b []byte, id int64, sessionID, method string, params []byte) []byte {
	b = append(b, `{"id":`...)
	b = wire.AppendInt(b, id)
	b = append(b, `,"method":`...)
	b = wire.AppendString(b, method)
	if sessionID != "" {
		b = append(b, `,"sessionId":`...)
		b = wire.AppendString(b, sessionID)
	}
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// WaitEvent returns the first event frame for which match is true; others
// are discarded.
func (c *Conn) WaitEvent(ctx context.Context, what string, match func([]byte) bool) ([]byte, error) {
	for {
		select {
		case f := <-c.events:
			if match(f) {
				return f, nil
			}
		case <-c.done:
			return nil, fmt.Errorf("waiting for %s: connection ended: %w", what, c.Err())
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}

// AutoAttach does what Playwright does first, Target.setAutoAttach with
// flat sessions, and returns the session of the page targetID ("": the
// first page announced).
func (c *Conn) AutoAttach(ctx context.Context, targetID string) (sessionID string, err error) {
	if _, err := c.Call(ctx, "", "Target.setAutoAttach", []byte(`{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":true}`)); err != nil {
		return "", err
	}
	// attachedToTarget comes before the reply, so it is queued by now.
	f, err := c.WaitEvent(ctx, "Target.attachedToTarget", func(f []byte) bool {
		if string(wire.StringField(f, "method")) != "Target.attachedToTarget" {
			return false
		}
		return targetID == "" || string(wire.StringField(wire.Field(wire.Field(f, "params"), "targetInfo"), "targetId")) == targetID
	})
	if err != nil {
		return "", err
	}
	return string(wire.StringField(wire.Field(f, "params"), "sessionId")), nil
}

// Err is why the connection ended, or nil while it runs.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close ends the connection with a normal close and waits for the read
// loop, briefly: the peer's close reply is a courtesy.
func (c *Conn) Close() {
	c.wmu.Lock()
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	c.wmu.Unlock()
	select {
	case <-c.done:
	case <-time.After(2 * time.Second):
	}
	c.ws.Close()
	<-c.done
}
