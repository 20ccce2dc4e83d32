package viewer

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wslimit"
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

// sharedFrame is a frame's messages, encoded once for every viewer.
type sharedFrame struct {
	meta, jpeg *websocket.PreparedMessage
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

// writeLoop is the only writer of the socket's data messages.
func (c *conn) writeLoop() error {
	ping := time.NewTicker(pingPeriod)
	defer ping.Stop()
	list := time.NewTicker(c.srv.cfg.ListEvery)
	defer list.Stop()
	var (
		cur      *subscription
		ready    <-chan struct{}
		lastList []byte
		changed  = c.srv.changes()
	)
	write := func(mt int, b []byte) error {
		_ = c.ws.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
		return c.ws.WriteMessage(mt, b)
	}
	sendList := func(force bool) error {
		b := mustJSON(c.srv.snapshot(c.tenant))
		if !force && bytes.Equal(b, lastList) {
			return nil
		}
		lastList = b
		return write(websocket.TextMessage, b)
	}
	for {
		// What is queued goes before any frame: frames may be lost, the
		// rest may not.
		select {
		case m := <-c.out:
			if err := write(websocket.TextMessage, m); err != nil {
				return err
			}
			continue
		default:
		}
		select {
		case <-c.ctx.Done():
			return nil
		case m := <-c.out:
			if err := write(websocket.TextMessage, m); err != nil {
				return err
			}
		case s := <-c.swap:
			cur, ready = s, nil
			if s != nil {
				ready = s.sub.Ready()
			}
		case <-ready:
			if err := c.writeUpdate(cur); err != nil {
				return err
			}
		case <-c.listNow:
			if err := sendList(true); err != nil {
				return err
			}
		case <-list.C:
			if err := sendList(false); err != nil {
				return err
			}
		case <-changed:
			changed = c.srv.changes()
			if err := sendList(false); err != nil {
				return err
			}
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.srv.cfg.WriteTimeout)); err != nil {
				return err
			}
		}
	}
}

// writeUpdate sends what s's subscriber has: a status change, the newest
// frame, or both.
func (c *conn) writeUpdate(s *subscription) error {
	f, st, changed := s.sub.Take()
	_ = c.ws.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
	if changed {
		b := mustJSON(statusMsg{Type: msgStatus, Instance: s.key.instance, Tab: s.key.tab, Status: string(st)})
		if err := c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
			return err
		}
	}
	if f == nil {
		return nil
	}
	sf := f.Memo(func(f *screencast.Frame) any {
		meta, err1 := websocket.NewPreparedMessage(websocket.TextMessage, mustJSON(newFrameMsg(s.key.instance, s.key.tab, f)))
		jpeg, err2 := websocket.NewPreparedMessage(websocket.BinaryMessage, f.JPEG)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		return &sharedFrame{meta: meta, jpeg: jpeg}
	})
	shared, ok := sf.(*sharedFrame)
	if !ok {
		return fmt.Errorf("encode frame: %v", sf)
	}
	// Geometry first: a click on this frame may arrive before the write
	// returns.
	c.lastGeom.Store(&sentGeometry{key: s.key, geom: Geometry{Width: f.Metadata.DeviceWidth, Height: f.Metadata.DeviceHeight}})
	if err := c.ws.WritePreparedMessage(shared.meta); err != nil {
		return err
	}
	return c.ws.WritePreparedMessage(shared.jpeg)
}

// readLoop is the only reader. It handles each request in turn, so a
// viewer's inputs reach the tab in the order it sent them.
func (c *conn) readLoop() error {
	_ = c.ws.SetReadDeadline(time.Now().Add(pongWait))
	c.ws.SetPongHandler(func(string) error {
		return c.ws.SetReadDeadline(time.Now().Add(pongWait))
	})
	limit := c.srv.cfg.MaxMessageBytes
	var buf []byte
	for {
		mt, b, err := wslimit.Read(c.ws, &buf, limit)
		if err != nil {
			if wslimit.IsTooBig(err) {
				c.closeTooBig(limit)
				return err
			}
			var ce *websocket.CloseError
			if errors.As(err, &ce) && (ce.Code == websocket.CloseNormalClosure || ce.Code == websocket.CloseGoingAway) {
				return nil
			}
			return err
		}
		_ = c.ws.SetReadDeadline(time.Now().Add(pongWait))
		if mt != websocket.TextMessage {
			c.sendError(nil, "viewers send JSON text messages only")
			continue
		}
		var req request
		if err := json.Unmarshal(b, &req); err != nil {
			c.sendError(nil, "malformed message: "+err.Error())
			continue
		}
		c.handle(&req)
	}
}

func (c *conn) handle(req *request) {
	switch req.Type {
	case msgList:
		select {
		case c.listNow <- struct{}{}:
		default:
		}
	case msgSubscribe:
		c.subscribe(req)
	case msgUnsubscribe:
		if c.cur == nil {
			c.sendError(req, "not subscribed")
			return
		}
		key := c.cur.key
		c.unsubscribe()
		c.send(mustJSON(statusMsg{Type: msgStatus, Instance: key.instance, Tab: key.tab, Status: statusUnsubscribed}))
	case msgTakeControl:
		c.takeControl(req)
	case msgHandBack:
		if !c.holding {
			c.sendError(req, "this viewer does not control the tab")
			return
		}
		c.release()
	case msgInput:
		if err := c.input(req); err != nil {
			c.sendError(req, err.Error())
		}
	case msgStop, msgResume, msgDialog, msgApprove, msgDeny:
		if err := c.inCharge(req); err != nil {
			c.sendError(req, err.Error())
			return
		}
		select {
		case c.listNow <- struct{}{}:
		default:
		}
	default:
		c.sendError(req, fmt.Sprintf("unknown message type %.32q", req.Type))
	}
}

func (c *conn) subscribe(req *request) {
	if req.Instance == "" || req.Tab == 0 {
		c.sendError(req, "subscribe needs an instance and a tab")
		return
	}
	key := tabKey{req.Instance, req.Tab}
	if c.cur != nil && c.cur.key == key && !c.cur.ended() {
		return
	}
	c.unsubscribe()
	w, sub, err := c.srv.subscribe(c.ctx, c.tenant, key)
	if err != nil {
		if c.ctx.Err() == nil {
			c.sendError(req, err.Error())
		}
		return
	}
	s := &subscription{key: key, w: w, sub: sub}
	select {
	case c.swap <- s:
		c.cur = s
		c.log.Debug("subscribed", "instance", key.instance, "tab", key.tab)
	case <-c.ctx.Done():
		sub.Close()
	}
}

// unsubscribe ends the current subscription, handing control back first.
func (c *conn) unsubscribe() {
	if c.cur == nil {
		return
	}
	if c.holding {
		c.release()
	}
	c.cur.sub.Close()
	c.cur = nil
	c.lastGeom.Store(nil)
	select {
	case c.swap <- nil:
	case <-c.ctx.Done():
	}
}

func (c *conn) takeControl(req *request) {
	switch {
	case !c.interactive:
		c.sendError(req, "this viewer may only watch")
		return
	case c.cur == nil:
		c.sendError(req, "subscribe to a tab before taking control")
		return
	}
	k := c.cur.key
	if err := c.cur.w.inst.TakeControl(k.tab, c.holder); err != nil {
		c.sendError(req, "take control: "+err.Error())
		return
	}
	c.holding = true
	c.log.Info("control taken", "instance", k.instance, "tab", k.tab)
	c.srv.broadcast(c.cur.w.inst, mustJSON(controlMsg{Type: msgControl, Instance: k.instance, Tab: k.tab, Holder: c.holder}))
}

// inCharge carries out what a person in charge of an instance does: stop
// or resume its automation, answer a dialog, approve or deny a held
// command. Interactive viewers only.
func (c *conn) inCharge(req *request) error {
	if !c.interactive {
		return errors.New("this viewer may only watch")
	}
	if req.Instance == "" {
		return errors.New(req.Type + " needs an instance")
	}
	in := c.srv.instance(c.tenant, req.Instance)
	if in == nil {
		return errNoInstance // another tenant's is no more there than one that never was
	}
	var err error
	switch req.Type {
	case msgStop:
		err = in.Stop(c.holder)
	case msgResume:
		err = in.Resume(c.holder)
	case msgDialog:
		if req.Tab == 0 || req.Accept == nil {
			return errors.New("answer-dialog needs a tab and accept (true or false)")
		}
		if len(req.PromptText) > 4096 {
			return errors.New("a prompt's text is at most 4096 bytes")
		}
		err = in.AnswerDialog(req.Tab, req.Dialog, *req.Accept, req.PromptText, c.holder)
	case msgApprove, msgDeny:
		if req.Approval == 0 {
			return errors.New(req.Type + " needs an approval id")
		}
		if req.Type == msgApprove {
			err = in.Approve(req.Approval, c.holder)
		} else {
			err = in.Deny(req.Approval, c.holder)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", req.Type, err)
	}
	c.log.Info(req.Type, "instance", req.Instance, "tab", req.Tab, "approval", req.Approval)
	return nil
}

// release hands cur's tab back to automation.
func (c *conn) release() {
	k := c.cur.key
	c.holding = false
	if err := c.cur.w.inst.ReleaseControl(k.tab, c.holder); err != nil {
		// The tab went, and its control with it.
		c.log.Debug("hand back", "tab", k.tab, "err", err)
	}
	c.log.Info("control handed back", "instance", k.instance, "tab", k.tab)
	c.srv.broadcast(c.cur.w.inst, mustJSON(controlMsg{Type: msgControl, Instance: k.instance, Tab: k.tab, Holder: ""}))
}

// input checks that this viewer may act on its tab, maps the input and
// sends the command.
func (c *conn) input(req *request) error {
	switch {
	case !c.interactive:
		return errors.New("this viewer may only watch")
	case c.cur == nil:
		return errors.New("not subscribed to a tab")
	case !c.holding:
		return errors.New("take control of the tab before sending input")
	case req.Input == nil:
		return errors.New("input message without input")
	}
	s := c.cur
	if by := s.w.inst.Controller(s.key.tab); by != c.holder {
		// The relay forgot the take-over (the tab was re-shared, say).
		c.holding = false
		c.srv.broadcast(s.w.inst, mustJSON(controlMsg{Type: msgControl, Instance: s.key.instance, Tab: s.key.tab, Holder: by}))
		return errors.New("this viewer no longer controls the tab")
	}
	in := *req.Input
	if in.Kind == KindNavigate {
		if err := checkNavigateURL(in.URL); err != nil {
			return err
		}
		if ok, why := c.srv.cfg.URLFence(s.key.instance, in.URL); !ok {
			return fmt.Errorf("navigation refused: %s", why)
		}
	}
	var geom Geometry
	if g := c.lastGeom.Load(); g != nil && g.key == s.key {
		geom = g.geom
	}
	method, params, err := Map(in, geom)
	if err != nil {
		return err
	}
	if in.Kind == KindResize {
		s.w.mu.Lock()
		s.w.resized = true
		s.w.mu.Unlock()
	}
	calls := Sequence{params}
	if seq, ok := params.(Sequence); ok {
		calls = seq
	}
	for _, p := range calls {
		ctx, cancel := context.WithTimeout(c.ctx, callTimeout)
		_, err := s.w.tab.Call(ctx, method, p)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", in.Kind, err)
		}
	}
	return nil
}
