package viewer

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/screencast"
)

// The write loop: the only writer of a viewer's data messages (queued
// messages first, then the newest frame of its tab, the instance list).

// sharedFrame is a frame's messages, encoded once for every viewer.
type sharedFrame struct {
	meta, jpeg *websocket.PreparedMessage
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
