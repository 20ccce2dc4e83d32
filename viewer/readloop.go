package viewer

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wslimit"
)

// The read loop: the only reader of a viewer's messages, handling each in
// turn, and the subscription to one tab it keeps.

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
