package fakeext

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The commands: how the fake answers what the relay asks of Chrome
// (chrome.debugger, chrome.tabs, chrome.windows and our extension.*).

type debuggee struct {
	TabID     int    `json:"tabId"`
	SessionID string `json:"sessionId,omitempty"`
}

func (e *Ext) handle(id int64, method string, params []json.RawMessage) {
	if e.opts.Gate != nil {
		e.opts.Gate(method, params)
	}
	arg := func(i int, v any) error {
		if i >= len(params) {
			return fmt.Errorf("missing argument %d", i)
		}
		return json.Unmarshal(params[i], v)
	}
	switch method {
	case "chrome.debugger.attach":
		var d debuggee
		if err := arg(0, &d); err != nil {
			e.reply(id, nil, err)
			return
		}
		e.mu.Lock()
		t := e.tabs[d.TabID]
		var err error
		switch {
		case t == nil:
			err = fmt.Errorf("No tab with given id %d.", d.TabID)
		case t.attached:
			err = fmt.Errorf("Another debugger is already attached to the tab with id: %d.", d.TabID)
		case t.refuse != "":
			err = errors.New(t.refuse)
		case strings.HasPrefix(t.URL, "chrome://"):
			err = errors.New("Cannot access a chrome:// URL")
		default:
			t.attached = true
		}
		e.mu.Unlock()
		e.reply(id, nil, err)
	case "chrome.debugger.detach":
		var d debuggee
		arg(0, &d)
		e.mu.Lock()
		t := e.tabs[d.TabID]
		var err error
		if t == nil || !t.attached {
			err = fmt.Errorf("Debugger is not attached to the tab with id: %d.", d.TabID)
		} else {
			t.attached = false
		}
		e.mu.Unlock()
		e.reply(id, nil, err)
	case "chrome.debugger.sendCommand":
		var d debuggee
		var cdpMethod string
		if err := arg(0, &d); err != nil {
			e.reply(id, nil, err)
			return
		}
		arg(1, &cdpMethod)
		var p json.RawMessage
		if len(params) > 2 {
			p = params[2]
		}
		e.mu.Lock()
		t := e.tabs[d.TabID]
		var tab Tab
		ok := t != nil && t.attached
		if ok {
			tab = t.Tab
		}
		e.mu.Unlock()
		if !ok {
			e.reply(id, nil, fmt.Errorf("Debugger is not attached to the tab with id: %d.", d.TabID))
			return
		}
		if cdpMethod == "Target.getTargetInfo" && d.SessionID == "" {
			e.reply(id, map[string]any{"targetInfo": map[string]any{
				"targetId": tab.TargetID, "type": "page", "title": tab.Title, "url": tab.URL,
				"attached": true, "canAccessOpener": false, "browserContextId": "FAKECONTEXT0000000000000000000000",
			}}, nil)
			return
		}
		if cdpMethod == "Runtime.evaluate" && d.SessionID == "" && strings.Contains(string(p), "navigator.userAgent") {
			// What a page says about its browser: the user agent, and the
			// full version where the page may ask for it.
			e.reply(id, map[string]any{"result": map[string]any{"type": "object", "value": map[string]string{
				"userAgent": e.opts.UserAgent, "full": productVersion(e.opts.Product),
			}}}, nil)
			return
		}
		res, err := e.opts.Handler(d.TabID, d.SessionID, cdpMethod, p)
		e.reply(id, res, err)
	case "chrome.tabs.create":
		var props struct {
			URL    string `json:"url"`
			Active bool   `json:"active"`
		}
		arg(0, &props)
		ft := e.addTab(Tab{URL: props.URL, Active: props.Active})
		e.reply(id, e.offer(ft.Tab), nil)
	case "chrome.tabs.remove":
		var tabID int
		arg(0, &tabID)
		e.mu.Lock()
		_, ok := e.tabs[tabID]
		e.mu.Unlock()
		if !ok {
			e.reply(id, nil, fmt.Errorf("No tab with id: %d.", tabID))
			return
		}
		e.reply(id, nil, nil)
		e.CloseTab(tabID)
	case "extension.downloadFile":
		if e.opts.DownloadFile == nil || e.opts.Stock {
			e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
			return
		}
		var q struct {
			URL   string `json:"url"`
			Bytes int64  `json:"bytes"`
		}
		arg(0, &q)
		path, size, err := e.opts.DownloadFile(q.URL, q.Bytes)
		if err != nil {
			e.reply(id, nil, err)
			return
		}
		e.reply(id, map[string]any{"path": path, "bytes": size}, nil)
	case "extension.keepalive":
		if e.opts.Stock {
			e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
			return
		}
		e.reply(id, nil, nil)
	case "extension.setNavigationFence":
		if !slices.Contains(e.opts.Features, "navigation-fence") {
			e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
			return
		}
		var rules json.RawMessage
		arg(0, &rules)
		e.mu.Lock()
		e.netFence = rules
		e.mu.Unlock()
		e.reply(id, nil, nil)
	case "extension.closedTabs":
		// Ours, feature "wake": which of the tabs named are closed.
		if !slices.Contains(e.opts.Features, "wake") {
			e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
			return
		}
		var ids []int
		arg(0, &ids)
		closed := []int{}
		e.mu.Lock()
		for _, tabID := range ids {
			if e.tabs[tabID] == nil {
				closed = append(closed, tabID)
			}
		}
		e.mu.Unlock()
		e.reply(id, closed, nil)
	case "chrome.tabs.get", "chrome.windows.get", "chrome.windows.update":
		if !slices.Contains(e.opts.Features, "windows") {
			e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
			return
		}
		e.windows(id, method, params)
	case "chrome.tabs.update":
		if e.opts.Stock {
			e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
			return
		}
		var tabID int
		arg(0, &tabID)
		e.mu.Lock()
		t := e.tabs[tabID]
		var tab Tab
		if t != nil {
			t.Active = true
			tab = t.Tab
		}
		e.mu.Unlock()
		if t == nil {
			e.reply(id, nil, fmt.Errorf("No tab with id: %d.", tabID))
			return
		}
		e.reply(id, tab, nil)
	default:
		e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
	}
}

// windows answers chrome.tabs.get and chrome.windows.get and update as our
// extension does: only for the window of a shared tab (the fake's one).
func (e *Ext) windows(id int64, method string, params []json.RawMessage) {
	res, err := e.window1(method, params)
	e.reply(id, res, err)
}

func (e *Ext) window1(method string, params []json.RawMessage) (any, error) {
	var n int
	if len(params) == 0 || json.Unmarshal(params[0], &n) != nil {
		return nil, errors.New("missing argument 0")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if method == "chrome.tabs.get" {
		if t := e.tabs[n]; t != nil {
			return t.Tab, nil
		}
		return nil, fmt.Errorf("Tab %d is not shared", n)
	}
	if n != e.window.ID {
		return nil, errors.New("Browser window not found")
	}
	if method == "chrome.windows.update" && len(params) > 1 {
		var u struct {
			Left, Top, Width, Height *int
			State                    string
		}
		json.Unmarshal(params[1], &u)
		for _, f := range []struct{ v, dst *int }{{u.Left, &e.window.Left}, {u.Top, &e.window.Top}, {u.Width, &e.window.Width}, {u.Height, &e.window.Height}} {
			if f.v != nil {
				*f.dst = *f.v
			}
		}
		if u.State != "" {
			e.window.State = u.State
		}
	}
	return e.window, nil
}

// DefaultHandler answers like a tab would for the few commands tests use
// and echoes everything else: {"method":..., "params":...}. Browser.* is
// not found, as through chrome.debugger.
func DefaultHandler(tabID int, sessionID, method string, params json.RawMessage) (any, error) {
	switch {
	case strings.HasPrefix(method, "Browser."):
		return nil, CDPError(-32601, "'"+method+"' wasn't found")
	case method == "Target.getTargets" || method == "Target.setDiscoverTargets" || method == "Target.attachToTarget":
		return nil, CDPError(-32000, "Not allowed")
	case method == "Runtime.evaluate":
		return map[string]any{"result": map[string]any{"type": "number", "value": 2, "description": "2"}}, nil
	}
	if params == nil {
		params = json.RawMessage("null")
	}
	return map[string]any{"echo": map[string]any{"tabId": tabID, "sessionId": sessionID, "method": method, "params": params}}, nil
}
