package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// conn is a pipelined command client over one WebSocket: any number of
// commands in flight, replies matched by id. The same code drives all three
// paths, so that its own cost is the same on each: as a CDP client of
// Chromium's port and of the relay, and as the relay's stand-in on the
// extension's socket, where only the envelope differs (see route).
type conn struct {
	ws *websocket.Conn // static; written under wmu, read by readLoop only

	wmu  sync.Mutex
	wbuf []byte // guarded by wmu

	mu      sync.Mutex
	nextID  int64                  // guarded by mu
	pending map[int64]chan<- reply // guarded by mu
	err     error                  // guarded by mu: why readLoop ended

	// events receives every frame that is not a reply, for setup code to
	// wait on; when nobody drains it, frames are dropped, never waited for.
	events chan []byte
	done   chan struct{} // closed by readLoop
}

type reply struct {
	result []byte // owned by the receiver
	err    error
	// refused: err is the peer's error reply, not the connection's end.
	refused bool
}

func newConn(ws *websocket.Conn) *conn {
	c := &conn{
		ws:      ws,
		pending: map[int64]chan<- reply{},
		events:  make(chan []byte, 256),
		done:    make(chan struct{}),
	}
	go c.readLoop()
	return c
}

func (c *conn) readLoop() {
	defer close(c.done)
	var buf []byte
	var m wire.ExtMessage
	for {
		frame, err := readFrame(c.ws, &buf)
		if err != nil {
			c.mu.Lock()
			c.err = err
			pending := c.pending
			c.pending = map[int64]chan<- reply{}
			c.mu.Unlock()
			for _, ch := range pending {
				ch <- reply{err: fmt.Errorf("connection ended: %w", err)}
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
			if ch == nil {
				continue
			}
			if m.HasError {
				ch <- reply{err: fmt.Errorf("error reply: %s", m.Error), refused: true}
			} else {
				ch <- reply{result: append([]byte(nil), m.Result...)}
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

// send writes the command that build appends for the next id, and delivers
// its reply to ch.
func (c *conn) send(ch chan<- reply, build func(b []byte, id int64) []byte) error {
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

// call sends method with params (raw JSON, or nil) on sessionID ("" for the
// browser level) and waits for the result.
func (c *conn) call(ctx context.Context, sessionID, method string, params []byte) ([]byte, error) {
	ch := make(chan reply, 1)
	err := c.send(ch, func(b []byte, id int64) []byte {
		return appendCommand(b, id, sessionID, method, params)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%s: %w", method, r.err)
		}
		return r.result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func appendCommand(b []byte, id int64, sessionID, method string, params []byte) []byte {
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

// waitEvent returns the first event frame for which match is true;
// others are discarded.
func (c *conn) waitEvent(ctx context.Context, what string, match func([]byte) bool) ([]byte, error) {
	for {
		select {
		case f := <-c.events:
			if match(f) {
				return f, nil
			}
		case <-c.done:
			return nil, fmt.Errorf("waiting for %s: connection ended: %w", what, c.closeErr())
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}

func (c *conn) closeErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// close ends the connection with a normal close and waits for the read
// loop, briefly: the peer's close reply is a courtesy.
func (c *conn) close() {
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

// route is how one path addresses the benchmark tab: a CDP session on a CDP
// connection, or chrome.debugger.sendCommand on the extension's socket.
type route struct {
	c     *conn
	sess  string // CDP session id; "" on the extension path
	tabID int64  // the extension's tab id, on the extension path
	tap   *tap   // when set, told of every command's send and reply times
}

func (r route) frame(b []byte, id int64, method string, params []byte) []byte {
	if r.sess != "" {
		return appendCommand(b, id, r.sess, method, params)
	}
	b = append(b, `{"id":`...)
	b = wire.AppendInt(b, id)
	b = append(b, `,"method":"chrome.debugger.sendCommand","params":[{"tabId":`...)
	b = wire.AppendInt(b, r.tabID)
	b = append(b, "},"...)
	b = wire.AppendString(b, method)
	if params != nil {
		b = append(b, ',')
		b = append(b, params...)
	}
	return append(b, "]}"...)
}

// call sends one command to the tab and waits for its result.
func (r route) call(ctx context.Context, method string, params []byte) ([]byte, error) {
	ch := make(chan reply, 1)
	if err := r.c.send(ch, func(b []byte, id int64) []byte { return r.frame(b, id, method, params) }); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case res := <-ch:
		if res.err != nil {
			return nil, fmt.Errorf("%s: %w", method, res.err)
		}
		return res.result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}
