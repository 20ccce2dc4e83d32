package fakeext

import (
	"time"

	"github.com/gorilla/websocket"
)

// Scripted faults: Chrome's own behaviour the relay must live with (a
// detach it did not ask for, a refused attach, a discarded tab, a stopped
// service worker).

// DetachByBrowser detaches the debugger from tab id with reason, as Chrome
// does when the person cancels the infobar or a frame navigates to an
// unknown scheme; cause, when given, is what our extension adds to say
// why ({"cause": "extension_frame"}, say).
func (e *Ext) DetachByBrowser(id int, reason string, cause ...any) {
	e.mu.Lock()
	if t := e.tabs[id]; t != nil {
		t.attached = false
	}
	e.mu.Unlock()
	args := append([]any{map[string]int{"tabId": id}, reason}, cause...)
	e.Emit("chrome.debugger.onDetach", args...)
}

// RefuseAttach makes Chrome refuse to attach tab id with msg (as it does
// while another extension's frame is in it: "Cannot access a
// chrome-extension:// URL of different extension"); "" attaches again.
func (e *Ext) RefuseAttach(id int, msg string) {
	e.mu.Lock()
	if t := e.tabs[id]; t != nil {
		t.refuse = msg
	}
	e.mu.Unlock()
}

// DiscardTab discards tab id as Chrome's memory saver does: the tab is
// replaced by a new one with a new id and a new target. Our extension
// reports the old one detached (if it was attached) and removed, and
// offers the new one; the stock extension only forwards the detach.
func (e *Ext) DiscardTab(id int) Tab {
	e.mu.Lock()
	old := e.tabs[id]
	delete(e.tabs, id)
	e.mu.Unlock()
	if old == nil {
		return Tab{}
	}
	nt := e.addTab(Tab{URL: old.URL, Title: old.Title, OpenerTabID: old.OpenerTabID})
	if e.opts.Stock {
		if old.attached {
			e.Emit("chrome.debugger.onDetach", map[string]int{"tabId": id}, "target_closed")
		}
		return nt.Tab
	}
	if old.attached {
		e.Emit("chrome.debugger.onDetach", map[string]int{"tabId": id}, "target_closed", map[string]any{"cause": "discarded", "replacedBy": nt.ID})
	}
	e.Emit("chrome.tabs.onRemoved", id, map[string]any{"windowId": 1, "isWindowClosing": false, "replacedBy": nt.ID})
	e.Emit("chrome.tabs.onCreated", e.offer(nt.Tab))
	return nt.Tab
}

// CloseGoingAway closes the connection as Chrome closes a service worker's
// socket when it stops the worker, reloads, updates or uninstalls the
// extension: 1001 (going away), no reason.
func (e *Ext) CloseGoingAway() {
	e.wmu.Lock()
	_ = e.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""), time.Now().Add(time.Second))
	e.wmu.Unlock()
	select {
	case <-e.closed:
	case <-time.After(2 * time.Second):
	}
	e.conn.Close()
}
