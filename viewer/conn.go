package viewer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/screencast"
)

const (
	// closeWait bounds sending the close frame.
	closeWait = time.Second
	// pongWait is how long a viewer may be silent, pongs included.
	pongWait = 60 * time.Second
	// pingPeriod keeps a quiet connection alive through pongWait.
	pingPeriod = pongWait * 9 / 10
)

// conn is one viewer.
type conn struct {
	srv         *Server         // static
	ws          *websocket.Conn // static; the read loop reads, the write loop writes; closeWith may add a close frame
	holder      string          // static: how the relay and other viewers name this viewer (with its credential when interactive)
	interactive bool            // static: the person in charge: may take control, send input, stop, approve, answer
	cred        Credential      // static: what it presented
	tenant      string          // static: whose instances it sees ("": every one)
	log         *slog.Logger    // static

	ctx    context.Context    // static: ends with the connection
	cancel context.CancelFunc // static

	out     chan []byte        // never closed: text messages other than frames, for the write loop; bounded, never dropped from
	swap    chan *subscription // never closed: the read loop hands the write loop its subscription (nil for none)
	listNow chan struct{}      // never closed; 1-buffered: the viewer asked for the list

	closeOnce   sync.Once
	closeReason string // written once under closeOnce, read after the read loop ends
	// draining: the read loop hears out a viewer it closed for a message
	// too large (wslimit.Drain); the socket is closed after it.
	draining atomic.Bool

	// lastGeom is the geometry of the newest frame the write loop sent,
	// read by the read loop to map pointer input.
	lastGeom atomic.Pointer[sentGeometry]

	// Owned by the read loop.
	cur     *subscription
	holding bool // this viewer controls cur's tab
}

// subscription is a viewer's watch of one tab.
type subscription struct {
	key tabKey
	w   *watch
	sub *screencast.Subscriber
}

// ended reports whether the subscription's tap has stopped (the tab
// detached): subscribing to the same tab again must start a new one.
func (s *subscription) ended() bool {
	if s.w == nil || s.w.tap == nil {
		return true
	}
	select {
	case <-s.w.tap.Done():
		return true
	default:
		return false
	}
}

type sentGeometry struct {
	key  tabKey
	geom Geometry
}

func newConn(s *Server, ws *websocket.Conn, interactive bool, cred Credential, tenant, remote string) *conn {
	var id [3]byte
	_, _ = rand.Read(id[:])
	name := "viewer " + hex.EncodeToString(id[:])
	ctx, cancel := context.WithCancel(context.Background())
	holder := name
	if interactive && cred.Name != "" {
		// Who acts is named by the credential it acts with: the audit
		// log, the other viewers and the automation see it in every Stop,
		// answer and take-over.
		holder = name + " (" + cred.Name + ")"
	}
	return &conn{
		srv:         s,
		ws:          ws,
		holder:      holder,
		interactive: interactive,
		cred:        cred,
		tenant:      tenant,
		log:         s.log.With("viewer", holder, "remote", remote),
		ctx:         ctx,
		cancel:      cancel,
		out:         make(chan []byte, s.cfg.SendQueue),
		swap:        make(chan *subscription),
		listNow:     make(chan struct{}, 1),
	}
}

// serve runs the connection until either side ends it, then releases what
// the viewer held. It logs the end once.
func (c *conn) serve() {
	c.log.Info("viewer connected", "interactive", c.interactive)
	hello := helloMsg{Type: msgHello, Viewer: c.holder, Interactive: c.interactive}
	if !c.interactive {
		hello.Hint, hello.KeyRefused = c.cred.Hint, c.cred.KeyRefused
	}
	c.send(mustJSON(hello))
	c.listNow <- struct{}{}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		defer c.recoverPanic("viewer writer")
		if err := c.writeLoop(); err != nil {
			c.log.Debug("viewer write", "err", err)
		}
		// Unblock the read loop, unless it hears the viewer out.
		if !c.draining.Load() {
			c.ws.Close()
		}
	}()
	err := c.readLoopGuarded()
	c.cancel()
	c.unsubscribe()
	c.closeWith(websocket.CloseNormalClosure, "")
	<-writerDone
	c.ws.Close()
	reason := "closed"
	var ce *websocket.CloseError
	switch {
	case c.closeReason != "":
		reason = c.closeReason
	case errors.As(err, &ce) && ce.Code == websocket.CloseAbnormalClosure:
		reason = "connection lost"
	case errors.As(err, &ce):
		reason = fmt.Sprintf("closed by the viewer (%d)", ce.Code)
	case err != nil:
		reason = err.Error()
	}
	c.log.Info("viewer disconnected", "reason", reason)
}

// readLoopGuarded is readLoop behind the viewer's panic boundary: a panic
// ends this viewer's connection with a reason, not the live view.
func (c *conn) readLoopGuarded() (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.panicked("viewer reader", r)
			err = errors.New("internal error")
		}
	}()
	return c.readLoop()
}

// recoverPanic, deferred at the top of a viewer's goroutine, contains a
// panic to that viewer.
func (c *conn) recoverPanic(where string) {
	if r := recover(); r != nil {
		c.panicked(where, r)
	}
}

func (c *conn) panicked(where string, r any) {
	c.log.Error("panic; closing this viewer", "in", where, "panic", r, "stack", string(debug.Stack()))
	if c.srv.cfg.OnPanic != nil {
		c.srv.cfg.OnPanic()
	}
	c.closeWith(websocket.CloseInternalServerErr, "cdprelay: internal error (see the relay's log)")
	c.ws.Close()
}

// closeWith sends a close frame and ends the connection. Safe from any
// goroutine; only the first call has an effect.
func (c *conn) closeWith(code int, reason string) {
	c.closeOnce.Do(func() {
		c.closeReason = reason
		c.cancel()
		// A viewer closed for falling behind may never read this frame; it
		// is not waited for long.
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(closeWait))
		if code != websocket.CloseNormalClosure {
			c.ws.Close()
		}
	})
}

// send queues a text message. Frames never come this way: they are
// latest-wins. A viewer whose queue is full cannot be kept consistent, so
// it is closed rather than dropped from.
func (c *conn) send(msg []byte) {
	select {
	case c.out <- msg:
	case <-c.ctx.Done():
	default:
		go c.closeWith(websocket.CloseTryAgainLater, "viewer too slow: messages backed up")
	}
}

func (c *conn) sendError(req *request, msg string) {
	e := errorMsg{Type: msgError, Message: msg}
	if req != nil {
		e.Request, e.ID = req.Type, req.ID
	}
	c.send(mustJSON(e))
}
