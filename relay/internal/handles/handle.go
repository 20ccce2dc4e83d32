package handles

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/attach"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/origins"
)

// Handle is the relay's own use of a shared tab — the live view's
// screencast and input — beside the CDP client's session. Its commands and
// their replies never reach the client; the tab's Page.screencastFrame
// events go to handles and not to the client, unless the client runs a
// screencast of its own.
type Handle struct {
	in  *core.Instance  // static
	t   *core.Tab       // static
	reg *core.TabHandle // static; on t.Handles while the handle is open
	// (No extension connection of its own: a tab that waited for the
	// extension to come back is the new connection's, and each call goes
	// through the instance's current one.)
	ctx context.Context
	end context.CancelFunc
}

// Open attaches to a shared tab of in for the relay's own use. fn
// receives the tab's screencast frames and the Event* notifications.
func Open(ctx context.Context, in *core.Instance, tabID int64, fn func(api.TabEvent)) (*Handle, error) {
	if in.Wedged.Load() {
		return nil, api.ErrWedged
	}
	st := in.Lock()
	x, t := st.Ext, st.Tabs[tabID]
	in.Unlock()
	if x == nil || !x.IsReady() {
		return nil, errors.New("extension not connected")
	}
	if t == nil {
		return nil, api.ErrNoTab
	}
	hctx, cancel := context.WithCancel(context.Background())
	h := &Handle{in: in, t: t, reg: core.NewTabHandle(hctx, fn), ctx: hctx, end: cancel}
	// Register before attaching, so that a client leaving meanwhile does
	// not detach the tab from under us.
	in.Lock()
	t.Handles = append(slices.Clip(t.Handles), h.reg)
	in.Unlock()
	if err := attach.Tab(ctx, in, x, t); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// TabID is the tab's id.
func (h *Handle) TabID() int64 { return h.t.Id }

// Call sends a command to the tab's own session and returns its result.
func (h *Handle) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if h.ctx.Err() != nil {
		return nil, errors.New("tab handle closed")
	}
	if method == "Page.navigate" {
		// Not to the relay's own pages, whoever asks (the core's
		// ownorigins.go).
		u, ok := navigateURL(params)
		if !ok {
			return nil, fmt.Errorf("%s on tab %d: its url cannot be read", method, h.t.Id)
		}
		if h.in.Srv.OwnURL(u) {
			return nil, fmt.Errorf("%s on tab %d: %s", method, h.t.Id, strings.TrimPrefix(origins.Refusal(u).Message, "cdprelay: "))
		}
	}
	st := h.in.Lock()
	acc, x := h.t.Acc, st.Ext
	if method == "Page.navigate" {
		// The person's own navigation, from the live view: not asked of
		// them again where it ends (the person's asking.go).
		if b, err := json.Marshal(params); err == nil {
			u, _, _ := core.ExactString(b, "url")
			st.ApprovedNavigation(h.t, u)
		}
	}
	h.in.Unlock()
	if x == nil {
		return nil, fmt.Errorf("%s on tab %d: extension not connected", method, h.t.Id)
	}
	if acc.Level == api.Blind && !blindAllowed[method] {
		// Nobody but the person at the browser sees a blind tab: not the
		// live view either.
		return nil, fmt.Errorf("%s on tab %d: the tab is hidden from automation and the live view (%s)", method, h.t.Id, acc.Why)
	}
	ctx, cancel := context.WithTimeout(ctx, h.in.Srv.Cfg.CallTimeout)
	defer cancel()
	res, err := x.SendCommand(ctx, h.t.Id, "", method, params)
	if err != nil {
		return nil, fmt.Errorf("%s on tab %d: %w", method, h.t.Id, err)
	}
	return res, nil
}

// blindAllowed is what a handle may still send to a blind tab: start
// and stop a screencast whose frames the relay withholds, take the tab
// elsewhere, undo its own resizing.
var blindAllowed = map[string]bool{
	"Page.startScreencast":                 true,
	"Page.stopScreencast":                  true,
	"Page.screencastFrameAck":              true,
	"Page.navigate":                        true,
	"Emulation.clearDeviceMetricsOverride": true,
}

// navigateURL is the url of a Page.navigate's params, whatever their Go
// type, or "" (and false) when they have none that can be read.
func navigateURL(params any) (string, bool) {
	b, err := json.Marshal(params)
	if err != nil {
		return "", false
	}
	u, found, err := core.ExactString(b, "url")
	return u, found && err == nil
}

// Close releases the handle. The debugger stays attached while the CDP
// client or another handle uses the tab.
func (h *Handle) Close() {
	h.end()
	in, t := h.in, h.t
	st := in.Lock()
	i := slices.Index(t.Handles, h.reg)
	if i < 0 {
		in.Unlock()
		return
	}
	t.Handles = slices.Delete(slices.Clone(t.Handles), i, i+1)
	unused := len(t.Handles) == 0 && t.Session == nil && st.Shared(t)
	x := st.Ext
	in.Unlock()
	if unused && x != nil {
		in.Tasks.Spawn("release tab", func() { attach.Detach(in, x, t) })
	}
}
