package api

import "time"

// Events a TabHandle receives besides the tab's screencast frames.
const (
	// EventAttached: the debugger is (again) attached to the tab; whatever
	// the handle had started on it (a screencast) must be started anew.
	EventAttached = "cdprelay.attached"
	// EventDetached: the tab is gone or no longer shared; the handle is
	// dead. Params: {"reason": "..."}.
	EventDetached = "cdprelay.detached"
	// EventClientScreencast: the CDP client started or stopped a
	// screencast of its own on the tab. Params: {"active": bool}.
	EventClientScreencast = "cdprelay.clientScreencast"
	// EventHidden: the tab, or a frame of it, is now on a site hidden from
	// automation and the live view: the frames seen before must not be
	// shown again.
	EventHidden = "cdprelay.hidden"
)

// TabEvent is an event delivered to a TabHandle.
type TabEvent struct {
	Method string
	Params []byte // owned by the receiver
	// ClientScreencast is true for a Page.screencastFrame of the CDP
	// client's own screencast: the client acks it, not the handle.
	ClientScreencast bool
}

// TargetInfo is CDP's Target.TargetInfo as the relay reports it.
type TargetInfo struct {
	TargetID         string `json:"targetId"`
	Type             string `json:"type"`
	Title            string `json:"title"`
	URL              string `json:"url"`
	Attached         bool   `json:"attached"`
	OpenerID         string `json:"openerId,omitempty"`
	CanAccessOpener  bool   `json:"canAccessOpener"`
	BrowserContextID string `json:"browserContextId,omitempty"`
}

// ApprovalStatus is a command waiting for a person's approval.
type ApprovalStatus struct {
	ID       int64  `json:"id"`
	TabID    int64  `json:"tabId,omitempty"`
	TargetID string `json:"targetId,omitempty"`
	// What says what the command would do, in a person's words.
	What      string    `json:"what"`
	Method    string    `json:"method"`
	Rule      string    `json:"rule"`
	AskedAt   time.Time `json:"askedAt"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// DialogStatus is a dialog a tab shows.
type DialogStatus struct {
	ID            int64     `json:"id"`
	Type          string    `json:"type"` // alert, confirm, prompt, beforeunload
	Message       string    `json:"message"`
	DefaultPrompt string    `json:"defaultPrompt,omitempty"`
	OpenedAt      time.Time `json:"openedAt"`
	// AnsweredBy is who answered it, while the answer is on its way.
	AnsweredBy string `json:"answeredBy,omitempty"`
}

// PointTarget is what the page has at a point, or in focus.
type PointTarget struct {
	Origin string `json:"origin"`
	Kind   string `json:"kind"` // button, link, field, frame, nothing, or a tag name
	Text   string `json:"text"`
	Submit bool   `json:"submit"`
	Frame  string `json:"frame"` // the src of a frame the relay cannot look into
	Form   bool   `json:"form"`  // a field of a form (for Enter)
}

// RefusalStatus is one tab a policy of the browser keeps the debugger out
// of.
type RefusalStatus struct {
	TabID int64 `json:"tabId"`
	// Origin is the tab's origin when Chrome refused it.
	Origin string `json:"origin,omitempty"`
	// Policy names the policy; Reason says it in words, with where to
	// look.
	Policy string    `json:"policy"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}
