package core

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/cdprelay/cdprelay/relay/internal/browser"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// Browser windows: Browser.getWindowForTarget, getWindowBounds and
// setWindowBounds, which a tab-level chrome.debugger session does not
// serve, answered through chrome.windows as Chrome's browser target
// answers them (the window ids are the same as chrome.windows'). Clients
// resize a page this way (chrome-devtools-mcp's resize_page, agent-browser's
// viewport). Our extension knows only the windows that show a shared tab
// (feature "windows"); the stock one has no such calls, and these stay
// unavailable through it.
// The values (CDP's bounds, chrome.windows' window, setWindowBounds'
// params) are internal/browser's.

const featureWindows = "windows"

// Chrome's words.
const (
	msgNoWebContents  = "No web contents in the target"
	msgNoWindowTarget = "No target with given id"
	msgNoWindow       = "Browser window not found"
)

// windowsAvailable answers k and reports false when the extension cannot
// reach windows.
func (c *ClientConn) windowsAvailable(k call) bool {
	st := c.Inst.Lock()
	ok := st.Features[featureWindows]
	c.Inst.Unlock()
	if !ok {
		c.fail(k, CodeMethodNotFound, "cdprelay: '"+k.method+"' is not available through this extension")
	}
	return ok
}

// windowOf asks for the window that shows tab t.
func (c *ClientConn) windowOf(k call, t *Tab) (browser.Window, bool) {
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.ext().call(ctx, "chrome.tabs.get", t.Id)
	var et struct {
		WindowID *int64 `json:"windowId"`
	}
	if err == nil {
		err = json.Unmarshal(res, &et)
	}
	if err == nil && et.WindowID == nil {
		err = errors.New("the tab has no window")
	}
	if err != nil {
		c.fail(k, codeServerError, msgNoWebContents)
		return browser.Window{}, false
	}
	return c.window(k, *et.WindowID)
}

// window asks for window id; unknown to the extension is Chrome's "not
// found".
func (c *ClientConn) window(k call, id int64) (browser.Window, bool) {
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.ext().call(ctx, "chrome.windows.get", id)
	var w browser.Window
	if err == nil {
		err = json.Unmarshal(res, &w)
	}
	if err != nil {
		c.fail(k, codeServerError, msgNoWindow)
		return browser.Window{}, false
	}
	return w, true
}

// getWindowForTarget names the window of the target given, or of the
// session's tab.
func (c *ClientConn) getWindowForTarget(k call) {
	if !c.windowsAvailable(k) {
		return
	}
	var t *Tab
	st := c.Inst.Lock()
	switch {
	case k.a.TargetID != "":
		if t = st.tabByTarget(k.a.TargetID); t == nil && k.a.TargetID != c.Inst.browserTID {
			c.Inst.Unlock()
			c.fail(k, codeServerError, msgNoWindowTarget)
			return
		}
	case k.sess != nil && k.sess.Tab != nil:
		t = k.sess.Tab
	}
	c.Inst.Unlock()
	if t == nil {
		c.fail(k, codeServerError, msgNoWebContents) // the browser target has no window
		return
	}
	w, ok := c.windowOf(k, t)
	if !ok {
		return
	}
	c.reply(k, struct {
		WindowID int64                `json:"windowId"`
		Bounds   browser.WindowBounds `json:"bounds"`
	}{w.ID, w.Bounds()})
}

// windowArgs reads the params of getWindowBounds and setWindowBounds.
func (c *ClientConn) windowArgs(k call, needBounds bool) (browser.WindowParams, bool) {
	var p browser.WindowParams
	if err := decodeStruct(k.params, &p); err != nil {
		c.fail(k, CodeInvalidParams, cdp.InvalidParams(err).Error())
		return p, false
	}
	switch {
	case p.WindowID == nil:
		c.fail(k, CodeInvalidParams, "Invalid parameters: Failed to deserialize params.windowId - BINDINGS: mandatory field missing")
		return p, false
	case needBounds && p.Bounds == nil:
		c.fail(k, CodeInvalidParams, "Invalid parameters: Failed to deserialize params.bounds - BINDINGS: mandatory field missing")
		return p, false
	}
	return p, true
}

func (c *ClientConn) getWindowBounds(k call) {
	if !c.windowsAvailable(k) {
		return
	}
	p, ok := c.windowArgs(k, false)
	if !ok {
		return
	}
	w, ok := c.window(k, *p.WindowID)
	if !ok {
		return
	}
	c.reply(k, map[string]browser.WindowBounds{"bounds": w.Bounds()})
}

func (c *ClientConn) setWindowBounds(k call) {
	if !c.windowsAvailable(k) {
		return
	}
	p, ok := c.windowArgs(k, true)
	if !ok {
		return
	}
	update, err := browser.WindowUpdate(p.Bounds)
	if err != nil {
		c.fail(k, CodeInvalidParams, err.Error())
		return
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	if _, err := c.ext().call(ctx, "chrome.windows.update", *p.WindowID, update); err != nil {
		if strings.Contains(err.Error(), msgNoWindow) || strings.Contains(err.Error(), "No window with id") {
			c.fail(k, codeServerError, msgNoWindow)
			return
		}
		c.fail(k, codeServerError, "cdprelay: set window bounds: "+err.Error())
		return
	}
	c.reply(k, struct{}{})
}

// getDevToolsTarget answers as Chrome does for a target with no DevTools
// window: through the extension the relay knows of none (and a client
// that asks only wants to tell its own page from DevTools' one).
func (c *ClientConn) getDevToolsTarget(k call) {
	st := c.Inst.Lock()
	known := k.a.TargetID == c.Inst.browserTID || st.tabByTarget(k.a.TargetID) != nil
	c.Inst.Unlock()
	switch {
	case k.a.TargetID == "":
		c.fail(k, CodeInvalidParams, "Invalid parameters: Failed to deserialize params.targetId - BINDINGS: mandatory field missing")
	case !known:
		c.fail(k, CodeInvalidParams, "No target with given id found")
	default:
		c.reply(k, struct{}{})
	}
}
