package core

import (
	"context"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
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
// the relay attaches it is forgotten at once (attachTab).

// probeDelays are the waits before each try of a tab the stock extension
// let detach; after the last one, a tab that still cannot be attached is
// taken for gone.
var probeDelays = []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}

// tabGone reports whether an attach failed because Chrome has no such tab.
func TabGone(err error) bool {
	return err != nil && strings.Contains(err.Error(), "No tab with given id")
}

// ProbeDetached finds out whether t, which the stock extension let detach,
// is still there.
func (in *Instance) ProbeDetached(x Upstream, t *Tab) {
	for _, d := range probeDelays {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-x.Done():
			timer.Stop()
			return
		}
		st := in.Lock()
		waiting := st.Ext == x && st.Shared(t) && t.State == TabDetached
		in.Unlock()
		if !waiting {
			return // offered again, attached by someone, or gone
		}
		ctx, cancel := context.WithTimeout(context.Background(), in.Srv.Cfg.CallTimeout)
		err := in.AttachTab(ctx, x, t)
		cancel()
		if err == nil {
			in.tabBack(x, t)
			return
		}
		if TabGone(err) {
			return // attachTab forgot it
		}
	}
	in.forgetTab(x, t, whyStockGone)
}

// tabBack hands a tab that is attached again to whoever wants it: an
// auto-attaching client gets it as a new session, the live view restarts
// its screencast; nobody: it is let go again.
func (in *Instance) tabBack(x Upstream, t *Tab) {
	st := in.Lock()
	c, hs := st.Client, t.Handles
	if c != nil && c.AutoAttach && st.Shared(t) {
		st.Announce(c, t)
	}
	in.Unlock()
	if len(hs) > 0 {
		NotifyHandles(hs, api.TabEvent{Method: api.EventAttached})
	}
	in.ReleaseIfUnused(x, t, false)
}

// forgetTab removes t, which is gone or can no longer be used, telling the
// client why.
func (in *Instance) forgetTab(x Upstream, t *Tab, why string) {
	st := in.Lock()
	if st.Ext != x || !st.Shared(t) {
		in.Unlock()
		return
	}
	target := t.TargetID
	hs := st.RemoveTab(t, why)
	in.Unlock()
	in.Observe(Event{Actor: api.ActorRelay, Kind: api.KindDetach, Target: target, Outcome: api.OutcomeOK, Detail: why})
	NotifyHandles(hs, api.TabEvent{Method: api.EventDetached, Params: JSONObj("reason", why)})
	FailTab(x, t.Id)
}
