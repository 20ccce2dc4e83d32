package api

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
