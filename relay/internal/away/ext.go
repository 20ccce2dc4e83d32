package away

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// The connection lives on while the extension is expected back.
//
// What Chrome does to our extension's connection, tried with Chromium 156:
// a reload (chrome.runtime.reload, the Reload button of chrome://extensions,
// an update, which reloads it), a stopped service worker
// (chrome://serviceworker-internals' Stop, ServiceWorker.stopAllWorkers,
// closing the worker's target) and an uninstall all close the relay's
// socket alike: 1001 (going away), no reason, and nothing runs in the
// worker before (runtime.onSuspend does not fire for a service worker). A
// reloaded extension is back within a fraction of a second; a stopped
// worker as soon as an event it listens to comes (a tab update, an event
// of a tab its debugger stayed attached to), else at its alarm, every
// 30 s. The idle stop (30 s without activity) does not come while it is
// connected: the keepalives of both sides are activity. A browser that
// closes removes its tabs first (the client is closed with "All
// controlled tabs detached"), then closes with 1001; one that is killed
// leaves no close frame. The person's Disconnect closes with 1000.
//
// So when our extension (feature wake: an alarm brings its worker back,
// and it offers the shared tabs again as it reconnects) closes with 1001,
// or is replaced by a new connection of its own, the client stays, and
// its sessions on the tabs wait (wait.go), for at most SuspendTimeout.
// When the extension is back, the tabs it offers are matched to the
// waiting ones by tab id (Chrome keeps a tab's id across an extension
// reload within one browser session) and resumed; of those it does not
// offer, it is asked which are closed, and those are gone for the client
// at once. An uninstalled extension looks like a stopped one: its client
// waits SuspendTimeout. Any other end (1000, no close frame, the stock
// extension, which has no alarm) closes the client after ExtensionGrace,
// as before.

const (
	featureWake = "wake"
	// methodClosedTabs asks our extension which of the tabs named are
	// closed (its answer: their ids).
	methodClosedTabs = "extension.closedTabs"
)

// expectBack reports whether the extension whose connection ended with
// close code comes back by itself.
func expectBack(st *core.State, code int) bool {
	return st.Features[featureWake] && code == websocket.CloseGoingAway && st.Inst.Srv.Cfg.SuspendTimeout > 0
}

// replacedLocked is the core's question when the extension's connection
// is replaced while a client is on (core.Away.ReplacedLocked): our
// extension's worker restarted, and its tabs come back with the new
// connection.
func replacedLocked(st *core.State) (gone []*core.TabHandle, waiting map[int64]bool, ok bool) {
	if !expectBack(st, websocket.CloseGoingAway) {
		return nil, nil, false
	}
	gone, waiting = awaitExtension(st)
	return gone, waiting, true
}

// keepForExtension keeps client c while the extension x, whose connection
// ended with code, is expected back, and reports whether it does
// (core.Away.ExtensionGoneLocked). Called with the lock held; when it
// reports true it has released it and done with x.
func keepForExtension(in *core.Instance, st *core.State, x core.Upstream, c *core.ClientConn, reason string, code int) bool {
	if c == nil || st.Closed || !expectBack(st, code) {
		return false
	}
	hs, waiting := awaitExtension(st)
	timeout := in.Srv.Cfg.SuspendTimeout
	st.ExtAway = &core.ExtWait{Reason: reason, Until: time.Now().Add(timeout)}
	st.SetGrace(timeout, func() { extAwayOver(in, c, reason) })
	st.Notify()
	in.Unlock()
	// The commands under way on the waiting tabs end as a detach ends
	// them; the others as the connection's end does.
	core.FailDetached(x, waiting)
	core.EndUpstream(x)
	core.NotifyHandles(hs, api.TabEvent{Method: api.EventDetached, Params: core.JSONObj("reason", "extension disconnected")})
	in.Log.Info("the extension went; its client waits for it to come back", "reason", reason, "wait", timeout, "tabs", len(waiting))
	in.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindDisconnect, Outcome: api.OutcomeOK, Detail: "the client waits: " + whyAwayExt})
	return true
}

// awaitExtension makes the client's sessions on the tabs wait for an
// extension that is gone and expected back, and forgets the other tabs
// (the extension offers them again). It returns the handles to tell of
// the forgotten ones, outside the lock, and the ids of the waiting ones.
func awaitExtension(st *core.State) (hs []*core.TabHandle, waiting map[int64]bool) {
	waiting = map[int64]bool{}
	for _, t := range st.SortedTabs() {
		switch {
		case t.Away != nil:
			// Waits already (a browser page): for the extension too. A
			// resume under way through the extension that went ends
			// without a word (stillAway).
			t.Away.Resumer = nil
			t.SetState(core.TabDetached, nil)
			st.WarnSessions(t, whyAwayExt)
		case t.Resuming != nil && t.Session != nil:
			// A resume after another extension's frame, under way through
			// the extension that went: the tab waits (stillAway).
			newWait(st, t, whyAwayExt, "the extension went", false)
			t.SetState(core.TabDetached, nil)
			st.WarnSessions(t, whyAwayExt)
		case mayWait(st, t):
			suspend(st, t, whyAwayExt, "the extension went", false)
		default:
			hs = append(hs, st.RemoveTab(t, "")...)
			continue
		}
		waiting[t.Id] = true
	}
	return hs, waiting
}

// extAwayOver closes client c when the extension it waited for is not back
// within SuspendTimeout.
func extAwayOver(in *core.Instance, c *core.ClientConn, reason string) {
	if in.Wedged.Load() {
		return
	}
	st := in.Lock()
	if st.Client != c || st.Ext != nil || st.Closed || st.ExtAway == nil {
		in.Unlock()
		return
	}
	st.Client = nil
	st.StopGrace() // the one that ran this
	st.ExtAway = nil
	hs := st.ResetTabs()
	st.Notify()
	in.Unlock()
	timeout := in.Srv.Cfg.SuspendTimeout
	core.NotifyHandles(hs, api.TabEvent{Method: api.EventDetached, Params: core.JSONObj("reason", "extension disconnected")})
	in.Log.Info("the extension did not come back in time; closing the client", "waited", timeout)
	c.Close(websocket.CloseGoingAway, core.ReasonExtGonePrefix+reason+"; it was not back within "+timeout.String())
}

// NotOfferedBack asks the extension x, whose handshake has ended, which of
// the tabs whose sessions wait for it and that it did not offer again are
// closed: those are gone for the client at once. The others are on a page
// never shared, and wait for their offer.
func NotOfferedBack(in *core.Instance, x core.Upstream) {
	st := in.Lock()
	var ids []int64
	for _, t := range st.SortedTabs() {
		if t.Away != nil && t.Away.Resumer == nil {
			ids = append(ids, t.Id)
		}
	}
	ask := st.Ext == x && st.Features[featureWake]
	in.Unlock()
	if len(ids) == 0 || !ask {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), in.Srv.Cfg.CallTimeout)
	res, err := x.Call(ctx, methodClosedTabs, ids)
	cancel()
	var closed []int64
	if err != nil || json.Unmarshal(res, &closed) != nil {
		return // they wait, bounded
	}
	for _, id := range closed {
		st := in.Lock()
		t := st.Tabs[id]
		if t == nil || t.Away == nil || t.Away.Resumer != nil || st.Ext != x {
			in.Unlock()
			continue
		}
		target := t.TargetID
		hs := st.RemoveTab(t, "")
		in.Unlock()
		in.Observe(core.Event{Actor: api.ActorExtension, Kind: api.KindDetach, Target: target, Outcome: api.OutcomeOK, Detail: "the tab was closed while the extension was away"})
		core.NotifyHandles(hs, api.TabEvent{Method: api.EventDetached, Params: core.JSONObj("reason", "the tab is gone")})
	}
}

// ExtBackFor returns the extension connection that took over from gone,
// once its handshake has ended, if the relay still keeps tab t for its
// client: a call for t that the old connection ended before it was
// answered (our extension's worker stopped under it, and may not have
// made it) can be made again there. It returns nil when t is gone by then
// (its client has been told), or when no extension is back within the
// client's wait for one (the core's readyWait) or before ctx ends.
func ExtBackFor(ctx context.Context, in *core.Instance, gone core.Upstream, t *core.Tab) core.Upstream {
	deadline := time.Now().Add(in.Srv.Cfg.ExtensionWait)
	for {
		st := in.Lock()
		x, ch, closed := st.Ext, st.Changed(), st.Closed
		kept := st.Tabs[t.Id] == t
		if a := st.ExtAway; a != nil && a.Until.After(deadline) {
			deadline = a.Until
		}
		in.Unlock()
		if closed || (x != gone && !kept) {
			return nil
		}
		var ready <-chan struct{}
		if x != nil && x != gone {
			if x.IsReady() {
				return x
			}
			ready = x.Ready()
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-ready:
		case <-ch:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil
		}
		timer.Stop()
	}
}
