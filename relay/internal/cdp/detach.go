package cdp

import "encoding/json"

// Why Chrome detached chrome.debugger from a tab by itself, as our
// extension says (the third argument of chrome.debugger.onDetach), and
// the words a client's log, the live view and the audit log give it.

// Causes our extension reports.
const (
	CauseExtensionFrame = "extension_frame"
	CauseRestrictedURL  = "restricted_url"
	CauseDiscarded      = "discarded"
	CauseCanceledByUser = "canceled_by_user"
	CauseTabClosed      = "tab_closed"
	CauseUnknown        = "unknown"
)

// DetachCause is what our extension says of a detach it did not ask for.
type DetachCause struct {
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
func ParseDetachCause(arg []byte) DetachCause {
	var d DetachCause
	if len(arg) == 0 || json.Unmarshal(arg, &d) != nil {
		return DetachCause{}
	}
	switch d.Cause {
	case CauseExtensionFrame, CauseRestrictedURL, CauseDiscarded, CauseCanceledByUser, CauseTabClosed, CauseUnknown:
		return d
	}
	if IsPolicyCause(d.Cause) {
		return d
	}
	return DetachCause{}
}

// Text says what happened in words a client's log and the live view show.
// "" for a detach whose cause is not known.
func (d DetachCause) Text() string {
	switch d.Cause {
	case CauseExtensionFrame:
		switch {
		case d.Cleared:
			return "another extension put a frame into the tab (a password manager's inline menu?), and Chrome stopped debugging it; the frame was removed and the tab comes back as a new target"
		case d.Guard:
			return "another extension's frame is in the tab (a password manager's inline menu?), and Chrome does not let a debugger stay in such a tab; the frame could not be removed, and the tab comes back as a new target once it is gone"
		}
		return "another extension's frame is in the tab (a password manager's inline menu?), and Chrome does not let a debugger stay in such a tab; the tab comes back as a new target once the frame is gone. The person can let cdprelay keep such frames out of the tabs the automation holds (the extension's page)"
	case CauseRestrictedURL:
		return "the tab went to a page Chrome does not let an extension debug (a browser page, the Web Store or another extension's page); it comes back as a new target once it is on a web page again"
	case CauseDiscarded:
		return "Chrome discarded the tab to save memory and replaced it with a new one, which is offered as a new target"
	case CauseCanceledByUser:
		return "the person stopped sharing the tab (Cancel on the debugging bar)"
	case CauseTabClosed:
		return "the tab was closed"
	case CauseUnknown:
		return "Chrome stopped debugging the tab (one of its frames went where a debugger cannot follow); it comes back as a new target"
	}
	return PolicyText(d.Cause)
}

// Short is Text's few words, for the audit log.
func (d DetachCause) Short() string {
	switch d.Cause {
	case CauseExtensionFrame:
		if d.Cleared {
			return "another extension's frame (removed)"
		}
		return "another extension's frame"
	case CauseRestrictedURL:
		return "a page an extension may not debug"
	case CauseDiscarded:
		return "discarded by Chrome"
	case CauseCanceledByUser:
		return "cancelled by the person"
	case CauseTabClosed:
		return "tab closed"
	case CauseUnknown:
		return "a frame the debugger cannot follow"
	}
	if IsPolicyCause(d.Cause) {
		return "a policy of the browser: " + PolicyName(d.Cause) + " (chrome://policy)"
	}
	return ""
}
