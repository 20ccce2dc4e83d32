package core

import (
	"context"
	"encoding/json"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// TabHandle is what the core knows of a handle on a shared tab, the
// relay's own use of it beside the CDP client's session (package handles:
// the live view's screencast, input and navigation): where the tab's
// events for it go, and whether it is still open. A tab with a handle on
// it stays attached when the client leaves; the tab's Page.screencastFrame
// events go to its handles and not to the client, unless the client runs a
// screencast of its own.
type TabHandle struct {
	fn  func(api.TabEvent) // static; may run under the instance lock: must not block or call the relay
	ctx context.Context    // static; done once the handle is closed
}

// NewTabHandle is a handle's place on a tab's list (Tab.Handles): fn
// receives the tab's screencast frames and the Event* notifications until
// ctx is done.
func NewTabHandle(ctx context.Context, fn func(api.TabEvent)) *TabHandle {
	return &TabHandle{fn: fn, ctx: ctx}
}

// NotifyHandles delivers ev to each handle, with the instance lock held
// or not (a tab going blind tells its handles under it).
func NotifyHandles(hs []*TabHandle, ev api.TabEvent) {
	for _, h := range hs {
		if h.ctx.Err() == nil {
			h.fn(ev)
		}
	}
}

// JSONObj is an object of one key: the params of a handle's event.
func JSONObj(k string, v any) []byte {
	b, _ := json.Marshal(map[string]any{k: v})
	return b
}
