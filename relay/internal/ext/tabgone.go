package ext

import (
	"context"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/attach"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// Tabs that are gone without a word.
//
// Our extension reports every closed tab (chrome.tabs.onRemoved) and offers
// a detached tab again once it can be attached. The stock Playwright
// extension does neither: when the person closes a tab it sends only the
// debugger's onDetach (target_closed) and filters the onRemoved out, and a
// tab Chrome detached for a frame is never offered again. So after such a
// detach the relay tries the tab itself: attached again, it is back (and
// announced to an auto-attaching client as a new target); refused with "No
// tab with given id", or still refused once probeDelays have passed, it is
// gone. And whatever the extension, a tab Chrome says does not exist when
// the relay attaches it is forgotten at once (attach.Tab).

// whyStockGone is why the relay ends the sessions of a tab it takes for
// gone.
const whyStockGone = "the tab is gone or can no longer be debugged (the Playwright extension does not say which)"

// probeDelays are the waits before each try of a tab the stock extension
// let detach; after the last one, a tab that still cannot be attached is
// taken for gone.
var probeDelays = []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}

// probeDetached finds out whether t, which the stock extension let detach,
// is still there.
func (x *Conn) probeDetached(t *core.Tab) {
	in := x.Inst
	for _, d := range probeDelays {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-x.Done():
			timer.Stop()
			return
		}
		st := in.Lock()
		waiting := x.isCurrent(st) && st.Shared(t) && t.State == core.TabDetached
		in.Unlock()
		if !waiting {
			return // offered again, attached by someone, or gone
		}
		ctx, cancel := context.WithTimeout(context.Background(), in.Srv.Cfg.CallTimeout)
		err := attach.Tab(ctx, in, x, t)
		cancel()
		if err == nil {
			x.tabBack(t)
			return
		}
		if attach.TabGone(err) {
			return // attach.Tab forgot it
		}
	}
	x.forgetTab(t, whyStockGone)
}

// tabBack hands a tab that is attached again to whoever wants it: an
// auto-attaching client gets it as a new session, the live view restarts
// its screencast; nobody: it is let go again.
func (x *Conn) tabBack(t *core.Tab) {
	in := x.Inst
	st := in.Lock()
	c, hs := st.Client, t.Handles
	if c != nil && c.AutoAttach && st.Shared(t) {
		st.Announce(c, t)
	}
	in.Unlock()
	if len(hs) > 0 {
		core.NotifyHandles(hs, api.TabEvent{Method: api.EventAttached})
	}
	attach.ReleaseIfUnused(in, x, t, false)
}

// forgetTab removes t, which is gone or can no longer be used, telling the
// client why.
func (x *Conn) forgetTab(t *core.Tab, why string) {
	in := x.Inst
	st := in.Lock()
	if !x.isCurrent(st) || !st.Shared(t) {
		in.Unlock()
		return
	}
	target := t.TargetID
	hs := st.RemoveTab(t, why)
	in.Unlock()
	in.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindDetach, Target: target, Outcome: api.OutcomeOK, Detail: why})
	core.NotifyHandles(hs, api.TabEvent{Method: api.EventDetached, Params: core.JSONObj("reason", why)})
	core.FailTab(x, t.Id)
}
