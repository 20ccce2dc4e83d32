package handles

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// The screencast: the frames of a tab's own session belong to whoever
// started it, the live view's tap (a handle's Page.startScreencast) or the
// client. A client's own screencast gets the frames, and the tap a copy,
// leaving the acks to the client; otherwise the frames go to the handles
// alone. Two rows of the order (the facade's order.go) say which.

// Screencast (core.Screencast), an event row, under the lock: a frame of
// the tab's own session goes to its handles once the lock is released
// (core's afterEvent), and on to the client only when the client runs a
// screencast of its own.
func Screencast(in *core.Instance, e *core.EventMsg) bool {
	if e.Sid != nil {
		return true
	}
	e.Fx.FrameTo, e.Fx.FrameClient = e.Tab.Handles, e.Tab.ClientScreencast
	return e.Tab.ClientScreencast
}

// WantsScreencastNote reports whether m starts or stops a screencast.
func WantsScreencastNote(m *core.MethodInfo) bool {
	return m.Name == "Page.startScreencast" || m.Name == "Page.stopScreencast"
}

// ScreencastNote (core.ScreencastNote), a command row: the client runs a
// screencast of its own on a tab, or stops it; its frames then go to the
// client (or no longer), and the live view is told.
func ScreencastNote(c *core.ClientConn, k *core.Cmd) bool {
	s := k.Route.Sess
	if s == nil || s.Tab == nil || s.Child {
		return true
	}
	on := k.M.Name == "Page.startScreencast"
	c.Inst.Lock()
	s.Tab.ClientScreencast = on
	hs := s.Tab.Handles
	c.Inst.Unlock()
	core.NotifyHandles(hs, api.TabEvent{Method: api.EventClientScreencast, Params: core.JSONObj("active", on)})
	return true
}
