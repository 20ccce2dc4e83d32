package core

import (
	"time"
)

// Why a tab was detached, and who is told.
//
// Chrome detaches chrome.debugger from a tab by itself when the tab goes
// where an extension may not debug: another extension's frame in it (a
// password manager's inline menu), a browser page, the Web Store or another
// extension's page, a discarded tab replaced by a new one, or the person's
// Cancel on the debugging bar. Our extension says which (the third argument
// of chrome.debugger.onDetach, feature "detach-cause"); the relay says it to
// the client (a Log.entryAdded warning on each of the tab's sessions that
// enabled Log, and a reason in the Target.detachedFromTarget it sends), to
// the audit log and to the live view (TabStatus.Detached). The causes, and
// their words, are cdp.DetachCause's.

const FeatureDetachCause = "detach-cause"

// Why the relay itself ends a tab's sessions.
const (
	whyExtensionRestart = "the cdprelay extension restarted (reloaded or updated); the tab comes back as a new target once it has reconnected"
	WhyFrameLoop        = "another extension keeps putting its frame (a password manager's inline menu?) back into the tab as soon as it is removed; the automation cannot stay in this tab"
	WhyResuming         = "another extension put a frame into the tab (a password manager's inline menu?), and Chrome stopped debugging it for a moment; the frame was removed and the automation carries on in the same page (the objects it held there are gone)"
)

// logEntry is a Log.entryAdded of the relay's own.
type logEntry struct {
	Entry struct {
		Source    string  `json:"source"`
		Level     string  `json:"level"`
		Text      string  `json:"text"`
		Timestamp float64 `json:"timestamp"`
	} `json:"entry"`
}

// WarnSessions tells each of t's top-level sessions that enabled Log why
// they are about to end, as a warning the client's console shows.
func (st *State) WarnSessions(t *Tab, why string) {
	c := st.Client
	if c == nil || why == "" {
		return
	}
	var e logEntry
	e.Entry.Source, e.Entry.Level, e.Entry.Text = "other", "warning", "cdprelay: "+why
	e.Entry.Timestamp = float64(time.Now().UnixMicro()) / 1000
	for _, s := range st.TopSessions(t) {
		if s.Enabled["Log"] && s.idJSON != nil {
			c.Event("Log.entryAdded", s, e)
		}
	}
}
