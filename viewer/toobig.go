package viewer

import (
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wslimit"
)

// closeTooBig ends the connection of a viewer that sent a message larger
// than limit: a close frame 1009 with the reason, and what it goes on
// sending read and thrown away until it closes, so that it gets the frame
// rather than a reset.
func (c *conn) closeTooBig(limit int64) {
	c.draining.Store(true)
	c.closeOnce.Do(func() {
		c.closeReason = wslimit.Reason(limit)
		c.cancel()
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseMessageTooBig, c.closeReason), time.Now().Add(closeWait))
	})
	wslimit.Drain(c.ws, wslimit.DrainTime)
}
