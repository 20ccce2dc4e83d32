package cdptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// Message is any frame the client received.
type Message struct {
	ID        *int64          `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *Error          `json:"error,omitempty"`
	Raw       []byte          `json:"-"`
}

// Error is a CDP error reply.
type Error struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("CDP error %d: %s", e.Code, e.Message) }

// Client is a connected test client.
type Client struct {
	conn *websocket.Conn

	wmu sync.Mutex

	mu       sync.Mutex
	nextID   int64
	pending  map[int64]chan Message
	msgs     []Message     // every frame that was not a reply to Call, in order
	frames   [][]byte      // every frame received, replies to Call included
	notify   chan struct{} // closed and replaced when msgs grows
	closed   chan struct{}
	stop     chan struct{} // closed by Close
	stopOnce sync.Once
	frozen   atomic.Bool
	closeErr error
}

// Dial connects to a CDP WebSocket URL.
func Dial(ctx context.Context, url string, header http.Header) (*Client, error) {
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, url, header)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("dial %s: %w (HTTP %d)", url, err, resp.StatusCode)
		}
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	c := &Client{conn: conn, pending: map[int64]chan Message{}, notify: make(chan struct{}), closed: make(chan struct{}), stop: make(chan struct{}), nextID: 1000}
	go c.readLoop()
	return c, nil
}

func (c *Client) readLoop() {
	defer close(c.closed)
	for {
		for c.frozen.Load() {
			select {
			case <-c.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		_, b, err := c.conn.ReadMessage()
		if err != nil {
			c.mu.Lock()
			c.closeErr = err
			for _, ch := range c.pending {
				close(ch)
			}
			c.pending = map[int64]chan Message{}
			c.mu.Unlock()
			return
		}
		var m Message
		if err := json.Unmarshal(b, &m); err != nil {
			m = Message{}
		}
		m.Raw = b
		c.mu.Lock()
		c.frames = append(c.frames, b)
		if m.ID != nil {
			if ch, ok := c.pending[*m.ID]; ok {
				delete(c.pending, *m.ID)
				c.mu.Unlock()
				ch <- m
				continue
			}
		}
		c.msgs = append(c.msgs, m)
		close(c.notify)
		c.notify = make(chan struct{})
		c.mu.Unlock()
	}
}

// Call sends a command and waits for its reply. A CDP error comes back as
// *Error.
func (c *Client) Call(ctx context.Context, sessionID, method string, params any) (json.RawMessage, error) {
	m, err := c.CallMessage(ctx, sessionID, method, params)
	if err != nil {
		return nil, err
	}
	if m.Error != nil {
		return nil, m.Error
	}
	return m.Result, nil
}

// CallMessage is Call returning the whole reply.
func (c *Client) CallMessage(ctx context.Context, sessionID, method string, params any) (Message, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan Message, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	b, err := encodeCommand(id, sessionID, method, params)
	if err != nil {
		return Message{}, err
	}
	if err := c.WriteRaw(b); err != nil {
		return Message{}, err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return Message{}, fmt.Errorf("%s: connection closed: %v", method, c.CloseErr())
		}
		return m, nil
	case <-ctx.Done():
		return Message{}, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Send writes a command without waiting for it. Its reply is recorded
// among Messages, in the order it arrived relative to events, so that a
// test can check what came before it. It returns the id used.
func (c *Client) Send(sessionID, method string, params any) (int64, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	b, err := encodeCommand(id, sessionID, method, params)
	if err != nil {
		return 0, err
	}
	return id, c.WriteRaw(b)
}

// WaitReply waits for the recorded reply to id (a command written with
// Send or WriteRaw) and returns it with its index among Messages.
func (c *Client) WaitReply(ctx context.Context, id int64) (Message, int, error) {
	return c.WaitMessage(ctx, 0, func(m Message) bool { return m.Method == "" && m.ID != nil && *m.ID == id })
}

func encodeCommand(id int64, sessionID, method string, params any) ([]byte, error) {
	cmd := map[string]any{"id": id, "method": method}
	if sessionID != "" {
		cmd["sessionId"] = sessionID
	}
	if params != nil {
		cmd["params"] = params
	}
	b, err := json.Marshal(cmd)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", method, err)
	}
	return b, nil
}

// WriteRaw sends one text frame as is.
func (c *Client) WriteRaw(b []byte) error {
	return c.Write(websocket.TextMessage, b)
}

// Write sends one frame of type mt.
func (c *Client) Write(mt int, b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.conn.WriteMessage(mt, b)
}

// Messages returns every frame that was not a reply to Call, in order.
func (c *Client) Messages() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.msgs...)
}

// Frames returns every frame received so far, replies to Call included,
// in order: what a test searches for data that must never reach a client.
func (c *Client) Frames() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.frames...)
}

// WaitMessage waits for a recorded message (from index from on) that
// matches. It returns the message and its index.
func (c *Client) WaitMessage(ctx context.Context, from int, match func(Message) bool) (Message, int, error) {
	for {
		c.mu.Lock()
		for i := from; i < len(c.msgs); i++ {
			if match(c.msgs[i]) {
				m := c.msgs[i]
				c.mu.Unlock()
				return m, i, nil
			}
		}
		from = len(c.msgs)
		ch := c.notify
		c.mu.Unlock()
		select {
		case <-ch:
		case <-c.closed:
			// One more pass for messages that came before the close.
			c.mu.Lock()
			for i := from; i < len(c.msgs); i++ {
				if match(c.msgs[i]) {
					m := c.msgs[i]
					c.mu.Unlock()
					return m, i, nil
				}
			}
			c.mu.Unlock()
			return Message{}, -1, fmt.Errorf("connection closed: %v", c.CloseErr())
		case <-ctx.Done():
			return Message{}, -1, ctx.Err()
		}
	}
}

// WaitEvent waits for an event named method.
func (c *Client) WaitEvent(ctx context.Context, method string) (Message, error) {
	m, _, err := c.WaitMessage(ctx, 0, func(m Message) bool { return m.Method == method })
	return m, err
}

// Events returns the recorded events named method.
func (c *Client) Events(method string) []Message {
	var out []Message
	for _, m := range c.Messages() {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// Done is closed when the connection ends.
func (c *Client) Done() <-chan struct{} { return c.closed }

// CloseErr is the error that ended the connection (a *websocket.CloseError
// when the relay closed it with a code and reason).
func (c *Client) CloseErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

// Freeze stops reading, as a client that no longer keeps up: what the
// relay sends piles up in the socket and then in the relay's queue.
func (c *Client) Freeze() { c.frozen.Store(true) }

// Close closes the connection.
func (c *Client) Close() {
	c.stopOnce.Do(func() { close(c.stop) })
	c.wmu.Lock()
	_ = c.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	c.wmu.Unlock()
	c.conn.Close()
	<-c.closed
}
