package core

import (
	"encoding/json"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
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
// the audit log and to the live view (TabStatus.Detached).

const featureDetachCause = "detach-cause"

// Causes our extension reports.
const (
	causeExtensionFrame = "extension_frame"
	causeRestrictedURL  = "restricted_url"
	causeDiscarded      = "discarded"
	causeCanceledByUser = "canceled_by_user"
	causeTabClosed      = "tab_closed"
	causeUnknown        = "unknown"
)

// detachCause is what our extension says of a detach it did not ask for.
type detachCause struct {
	Cause string `json:"cause"`
	// Cleared: the frame guard removed the other extension's frame, so the
	// tab can be attached again at once.
	Cleared bool `json:"cleared"`
	// Guard: the person allows the frame guard.
	Guard bool `json:"guard"`
	// ReplacedBy is the new id of a discarded tab.
	ReplacedBy int64 `json:"replacedBy"`
}

// ParseDetachCause reads the cause argument; a missing or unreadable one is
// the zero value (what the stock extension sends).
func ParseDetachCause(arg []byte) detachCause {
	var d detachCause
	if len(arg) == 0 || json.Unmarshal(arg, &d) != nil {
		return detachCause{}
	}
	switch d.Cause {
	case causeExtensionFrame, causeRestrictedURL, causeDiscarded, causeCanceledByUser, causeTabClosed, causeUnknown:
		return d
	}
	if cdp.IsPolicyCause(d.Cause) {
		return d
	}
	return detachCause{}
}

// Text says what happened in words a client's log and the live view show.
// "" for a detach whose cause is not known.
func (d detachCause) Text() string {
	switch d.Cause {
	case causeExtensionFrame:
		switch {
		case d.Cleared:
			return "another extension put a frame into the tab (a password manager's inline menu?), and Chrome stopped debugging it; the frame was removed and the tab comes back as a new target"
		case d.Guard:
			return "another extension's frame is in the tab (a password manager's inline menu?), and Chrome does not let a debugger stay in such a tab; the frame could not be removed, and the tab comes back as a new target once it is gone"
		}
		return "another extension's frame is in the tab (a password manager's inline menu?), and Chrome does not let a debugger stay in such a tab; the tab comes back as a new target once the frame is gone. The person can let cdprelay keep such frames out of the tabs the automation holds (the extension's page)"
	case causeRestrictedURL:
		return "the tab went to a page Chrome does not let an extension debug (a browser page, the Web Store or another extension's page); it comes back as a new target once it is on a web page again"
	case causeDiscarded:
		return "Chrome discarded the tab to save memory and replaced it with a new one, which is offered as a new target"
	case causeCanceledByUser:
		return "the person stopped sharing the tab (Cancel on the debugging bar)"
	case causeTabClosed:
		return "the tab was closed"
	case causeUnknown:
		return "Chrome stopped debugging the tab (one of its frames went where a debugger cannot follow); it comes back as a new target"
	}
	return cdp.PolicyText(d.Cause)
}

// short is text's few words, for the audit log.
func (d detachCause) short() string {
	switch d.Cause {
	case causeExtensionFrame:
		if d.Cleared {
			return "another extension's frame (removed)"
		}
		return "another extension's frame"
	case causeRestrictedURL:
		return "a page an extension may not debug"
	case causeDiscarded:
		return "discarded by Chrome"
	case causeCanceledByUser:
		return "cancelled by the person"
	case causeTabClosed:
		return "tab closed"
	case causeUnknown:
		return "a frame the debugger cannot follow"
	}
	if cdp.IsPolicyCause(d.Cause) {
		return "a policy of the browser: " + cdp.PolicyName(d.Cause) + " (chrome://policy)"
	}
	return ""
}

// Why the relay itself ends a tab's sessions.
const (
	whyExtensionRestart = "the cdprelay extension restarted (reloaded or updated); the tab comes back as a new target once it has reconnected"
	whyStockGone        = "the tab is gone or can no longer be debugged (the Playwright extension does not say which)"
	whyFrameLoop        = "another extension keeps putting its frame (a password manager's inline menu?) back into the tab as soon as it is removed; the automation cannot stay in this tab"
	whyResuming         = "another extension put a frame into the tab (a password manager's inline menu?), and Chrome stopped debugging it for a moment; the frame was removed and the automation carries on in the same page (the objects it held there are gone)"
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
	for _, s := range st.topSessions(t) {
		if s.Enabled["Log"] && s.idJSON != nil {
			c.Event("Log.entryAdded", s, e)
		}
	}
}
