package browser

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/cdprelay/cdprelay/relay/internal/core"

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

// WindowEmulations are the methods of windows the relay answers.
func WindowEmulations() map[string]core.Emulation {
	return map[string]core.Emulation{
		"Browser.getWindowForTarget": {Fn: func(c *core.ClientConn, k core.Call) { getWindowForTarget(c, k) }, Blocking: true},
		"Browser.getWindowBounds":    {Fn: func(c *core.ClientConn, k core.Call) { getWindowBounds(c, k) }, Blocking: true},
		"Browser.setWindowBounds":    {Fn: func(c *core.ClientConn, k core.Call) { setWindowBounds(c, k) }, Blocking: true},
		"Target.getDevToolsTarget":   {Fn: func(c *core.ClientConn, k core.Call) { getDevToolsTarget(c, k) }},
	}
}

// Chrome's words.
const (
	msgNoWebContents  = "No web contents in the target"
	msgNoWindowTarget = "No target with given id"
	msgNoWindow       = "Browser window not found"
)

// windowsAvailable answers k and reports false when the extension cannot
// reach windows.
func windowsAvailable(c *core.ClientConn, k core.Call) bool {
	st := c.Inst.Lock()
	ok := st.Features[featureWindows]
	c.Inst.Unlock()
	if !ok {
		c.Fail(k, core.CodeMethodNotFound, "cdprelay: '"+k.Method+"' is not available through this extension")
	}
	return ok
}

// windowOf asks for the window that shows tab t.
func windowOf(c *core.ClientConn, k core.Call, t *core.Tab) (Window, bool) {
	ctx, cancel := c.CallCtx()
	defer cancel()
	res, err := c.Ext().Call(ctx, "chrome.tabs.get", t.Id)
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
		c.Fail(k, core.CodeServerError, msgNoWebContents)
		return Window{}, false
	}
	return window(c, k, *et.WindowID)
}

// window asks for window id; unknown to the extension is Chrome's "not
// found".
func window(c *core.ClientConn, k core.Call, id int64) (Window, bool) {
	ctx, cancel := c.CallCtx()
	defer cancel()
	res, err := c.Ext().Call(ctx, "chrome.windows.get", id)
	var w Window
	if err == nil {
		err = json.Unmarshal(res, &w)
	}
	if err != nil {
		c.Fail(k, core.CodeServerError, msgNoWindow)
		return Window{}, false
	}
	return w, true
}

// getWindowForTarget names the window of the target given, or of the
// session's tab.
func getWindowForTarget(c *core.ClientConn, k core.Call) {
	if !windowsAvailable(c, k) {
		return
	}
	var t *core.Tab
	st := c.Inst.Lock()
	switch {
	case k.Args.TargetID != "":
		if t = st.TabByTarget(k.Args.TargetID); t == nil && k.Args.TargetID != c.Inst.BrowserTID {
			c.Inst.Unlock()
			c.Fail(k, core.CodeServerError, msgNoWindowTarget)
			return
		}
	case k.Sess != nil && k.Sess.Tab != nil:
		t = k.Sess.Tab
	}
	c.Inst.Unlock()
	if t == nil {
		c.Fail(k, core.CodeServerError, msgNoWebContents) // the browser target has no window
		return
	}
	w, ok := windowOf(c, k, t)
	if !ok {
		return
	}
	c.Reply(k, struct {
		WindowID int64        `json:"windowId"`
		Bounds   WindowBounds `json:"bounds"`
	}{w.ID, w.Bounds()})
}

// windowArgs reads the params of getWindowBounds and setWindowBounds.
func windowArgs(c *core.ClientConn, k core.Call, needBounds bool) (WindowParams, bool) {
	var p WindowParams
	if err := core.DecodeStruct(k.Params, &p); err != nil {
		c.Fail(k, core.CodeInvalidParams, cdp.InvalidParams(err).Error())
		return p, false
	}
	switch {
	case p.WindowID == nil:
		c.Fail(k, core.CodeInvalidParams, "Invalid parameters: Failed to deserialize params.windowId - BINDINGS: mandatory field missing")
		return p, false
	case needBounds && p.Bounds == nil:
		c.Fail(k, core.CodeInvalidParams, "Invalid parameters: Failed to deserialize params.bounds - BINDINGS: mandatory field missing")
		return p, false
	}
	return p, true
}

func getWindowBounds(c *core.ClientConn, k core.Call) {
	if !windowsAvailable(c, k) {
		return
	}
	p, ok := windowArgs(c, k, false)
	if !ok {
		return
	}
	w, ok := window(c, k, *p.WindowID)
	if !ok {
		return
	}
	c.Reply(k, map[string]WindowBounds{"bounds": w.Bounds()})
}

func setWindowBounds(c *core.ClientConn, k core.Call) {
	if !windowsAvailable(c, k) {
		return
	}
	p, ok := windowArgs(c, k, true)
	if !ok {
		return
	}
	update, err := WindowUpdate(p.Bounds)
	if err != nil {
		c.Fail(k, core.CodeInvalidParams, err.Error())
		return
	}
	ctx, cancel := c.CallCtx()
	defer cancel()
	if _, err := c.Ext().Call(ctx, "chrome.windows.update", *p.WindowID, update); err != nil {
		if strings.Contains(err.Error(), msgNoWindow) || strings.Contains(err.Error(), "No window with id") {
			c.Fail(k, core.CodeServerError, msgNoWindow)
			return
		}
		c.Fail(k, core.CodeServerError, "cdprelay: set window bounds: "+err.Error())
		return
	}
	c.Reply(k, struct{}{})
}

// getDevToolsTarget answers as Chrome does for a target with no DevTools
// window: through the extension the relay knows of none (and a client
// that asks only wants to tell its own page from DevTools' one).
func getDevToolsTarget(c *core.ClientConn, k core.Call) {
	st := c.Inst.Lock()
	known := k.Args.TargetID == c.Inst.BrowserTID || st.TabByTarget(k.Args.TargetID) != nil
	c.Inst.Unlock()
	switch {
	case k.Args.TargetID == "":
		c.Fail(k, core.CodeInvalidParams, "Invalid parameters: Failed to deserialize params.targetId - BINDINGS: mandatory field missing")
	case !known:
		c.Fail(k, core.CodeInvalidParams, "No target with given id found")
	default:
		c.Reply(k, struct{}{})
	}
}
