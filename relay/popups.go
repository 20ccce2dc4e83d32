package relay

import (
	"time"
)

// Tabs opened from a shared tab. A popup the automation opened (a
// window.open in its script, a click it sent on a target=_blank link) is
// the automation's to drive; a tab the person opened from a shared tab
// (a middle click, "open in new tab") is the person's, and sharing it
// would hand the automation a tab nobody offered. Chrome gives both the
// same openerTabId, so the relay tells them apart by what the automation
// was doing: a tab opened while the automation had a command running on
// its opener, or had just sent one (popupWindow), is the automation's.
// In "pick" mode our extension asks (an offer marked "popup") and shares
// the tab only on the relay's yes; the stock extension shares such tabs
// itself, and the relay simply does not take those the person opened.

// popupWindow is how long after a command on a tab a new tab it opens
// still counts as the automation's: a click's popup opens within a few
// hundred milliseconds of the click, even on a loaded machine.
const popupWindow = 2 * time.Second

// openedByAutomation reports whether a tab opened from opener now is the
// automation's.
func (in *Instance) openedByAutomation(x *extConn, opener *tab, now time.Time) bool {
	if opener == nil {
		return false
	}
	if last := opener.lastCommand.Load(); last != 0 && now.Sub(time.Unix(0, last)) < popupWindow {
		return true
	}
	return x.busyOn(opener.id)
}

// judgeOpened decides a tab offered because a shared tab opened it. It
// runs outside the lock (it looks at pending commands) and reports
// whether the relay takes the tab; our extension is told either way.
func (in *Instance) judgeOpened(x *extConn, et extTab, marked bool) bool {
	st := in.lock()
	opener := st.tabs[et.OpenerTabID]
	driven := st.client != nil
	in.unlock()
	yes := driven && in.openedByAutomation(x, opener, time.Now())
	if marked {
		x.fireCall("extension.sharePopup", et.ID, yes)
	}
	if !yes {
		in.observe(Event{Actor: ActorRelay, Kind: KindAttach, Outcome: OutcomeDenied, Detail: "a tab the person opened from a shared tab is not shared"})
	}
	return yes
}
