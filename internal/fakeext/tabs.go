package fakeext

import (
	"fmt"
	"slices"
)

// The tabs: the shared tabs the fake offers, and what the person does to
// them (opens, navigates, closes).

func (e *Ext) addTab(t Tab) *fakeTab {
	e.mu.Lock()
	defer e.mu.Unlock()
	if t.ID == 0 {
		e.nextTab++
		t.ID = e.nextTab
	}
	if t.TargetID == "" {
		t.TargetID = fmt.Sprintf("%032X", t.ID*7919)
	}
	if t.URL == "" {
		t.URL = "about:blank"
	}
	t.WindowID = 1
	ft := &fakeTab{Tab: t}
	e.tabs[t.ID] = ft
	return ft
}

// offer is the tab object as the extension announces it.
func (e *Ext) offer(t Tab) Tab {
	if e.opts.NoTargetID {
		t.TargetID = ""
	}
	return t
}

// Tabs returns the tabs, sorted by id.
func (e *Ext) Tabs() []Tab {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Tab, 0, len(e.tabs))
	for id := 0; len(out) < len(e.tabs); id++ {
		if t, ok := e.tabs[id]; ok {
			out = append(out, t.Tab)
		}
	}
	return out
}

// Attached reports whether the debugger is attached to tab id.
func (e *Ext) Attached(id int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.tabs[id]
	return t != nil && t.attached
}

// Event sends a chrome.debugger.onEvent for tab id (and child session sid).
func (e *Ext) Event(tabID int, sid, method string, params any) error {
	src := map[string]any{"tabId": tabID}
	if sid != "" {
		src["sessionId"] = sid
	}
	return e.Emit("chrome.debugger.onEvent", src, method, params)
}

// OpenTab adds a tab and offers it (chrome.tabs.onCreated).
func (e *Ext) OpenTab(t Tab) Tab {
	ft := e.addTab(t)
	e.Emit("chrome.tabs.onCreated", e.offer(ft.Tab))
	return ft.Tab
}

// Navigate moves tab id to url with title, as a finished navigation
// would: an attached tab's session gets Page.frameNavigated and
// Page.loadEventFired, and our extension reports chrome.tabs.onUpdated (the
// stock one does not).
func (e *Ext) Navigate(id int, url, title string) {
	e.mu.Lock()
	t := e.tabs[id]
	if t == nil {
		e.mu.Unlock()
		return
	}
	t.URL, t.Title = url, title
	tab, attached := t.Tab, t.attached
	e.mu.Unlock()
	if attached {
		e.Event(id, "", "Page.frameNavigated", map[string]any{"frame": map[string]any{
			"id": tab.TargetID, "loaderId": "L", "url": url, "domainAndRegistry": "", "securityOrigin": url,
			"mimeType": "text/html", "secureContextType": "Secure", "crossOriginIsolatedContextType": "NotIsolated",
			"gatedAPIFeatures": []string{},
		}, "type": "Navigation"})
		e.Event(id, "", "Page.loadEventFired", map[string]any{"timestamp": 1.5})
	}
	if !e.opts.Stock {
		e.Emit("chrome.tabs.onUpdated", id, map[string]any{"url": url, "title": title}, tab)
	}
}

// CloseTab closes tab id as the person would: the debugger detaches with
// target_closed, then the tab is removed. The stock extension forwards the
// detach and filters the removal out: it says nothing more.
func (e *Ext) CloseTab(id int) {
	e.mu.Lock()
	t := e.tabs[id]
	delete(e.tabs, id)
	e.mu.Unlock()
	if t == nil {
		return
	}
	if t.attached {
		if e.explains() {
			e.Emit("chrome.debugger.onDetach", map[string]int{"tabId": id}, "target_closed", map[string]string{"cause": "tab_closed"})
		} else {
			e.Emit("chrome.debugger.onDetach", map[string]int{"tabId": id}, "target_closed")
		}
	}
	if !e.opts.Stock {
		e.Emit("chrome.tabs.onRemoved", id, map[string]any{"windowId": 1, "isWindowClosing": false})
	}
}

// explains reports whether the fake plays an extension that says why a
// tab detached.
func (e *Ext) explains() bool { return slices.Contains(e.opts.Features, "detach-cause") }

// Offer offers tab id again, as our extension does once a tab Chrome
// detached can be attached again (back on a web page), at url.
func (e *Ext) Offer(id int, url string) {
	e.mu.Lock()
	t := e.tabs[id]
	if t == nil {
		e.mu.Unlock()
		return
	}
	t.URL = url
	tab := t.Tab
	e.mu.Unlock()
	e.Emit("chrome.tabs.onCreated", e.offer(tab))
}
