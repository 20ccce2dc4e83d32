package core

import (
	"errors"

	"github.com/gorilla/websocket"
)

// Page endpoints.
//
// Chrome serves every page at /devtools/page/<targetId> as well as the
// browser at /devtools/browser/<id>, and /json/list points there.
// chrome-remote-interface, by default, reads /json/list and connects to the
// first page's webSocketDebuggerUrl; on that socket commands carry no
// sessionId and go to the page.
//
// The relay makes such a connection an ordinary client of the instance
// whose commands without a sessionId go to a session of its own on that
// tab, and whose messages on that session carry no sessionId (an idJSON of
// nil). Everything else (emulation, routing, child sessions, the clean-up
// when it leaves) is a client's.
//
// It takes the instance's one client slot like any other client. Chrome can
// serve a page endpoint beside a browser client because each has its own
// DevTools session with its own state; through the extension both would
// share the tab's one chrome.debugger session, so one client's Fetch
// interception, emulation or Runtime.disable would silently change the
// other's page, and the relay would have to decide which of them a
// detached tab or a closed page belongs to. A second client is refused with
// a reason instead.

// openPage attaches a page endpoint client to its tab. It is a no-op for a
// browser-level client (targetID ""). On failure the client has been
// closed with a reason.
func (c *ClientConn) openPage(targetID string) error {
	if targetID == "" {
		return nil
	}
	in := c.Inst
	x, err := in.waitReady(c.Ctx)
	if err != nil {
		c.Close(websocket.CloseTryAgainLater, ReasonExtNotConnected)
		return ErrExtNotConnected
	}
	c.SetExt(x)
	st := in.Lock()
	t := st.TabByTarget(targetID)
	in.Unlock()
	if t == nil {
		c.Close(websocket.CloseNormalClosure, "No target with given id found")
		return errNoPage
	}
	if err := attacher.Tab(c.Ctx, in, x, t); err != nil {
		c.Close(websocket.CloseInternalServerErr, "cdprelay: "+err.Error())
		return err
	}
	st = in.Lock()
	defer in.Unlock()
	if !st.Shared(t) || st.Client != c {
		c.Close(websocket.CloseNormalClosure, "Target closed")
		return errNoPage
	}
	c.Page = st.mintPageSession(t)
	return nil
}

var errNoPage = errors.New("no such page")

// HasTarget reports whether the instance shares a tab with targetID.
func (in *Instance) HasTarget(targetID string) bool {
	st := in.Lock()
	defer in.Unlock()
	return st.TabByTarget(targetID) != nil
}
