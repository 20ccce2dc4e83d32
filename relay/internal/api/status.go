package api

// What an instance shows of itself on the status pages (the core's
// Instance.Status makes it).

// Status is a snapshot of an instance for status pages and tests.
type Status struct {
	ID string `json:"id"`
	// Tenant is whose the instance is; absent: the operator's.
	Tenant    string        `json:"tenant,omitempty"`
	Profile   string        `json:"profile,omitempty"`
	Default   bool          `json:"default"`
	Extension bool          `json:"extension"`
	Ready     bool          `json:"ready"`
	Client    bool          `json:"client"`
	Browser   BrowserStatus `json:"browser"`
	Tabs      []TabStatus   `json:"tabs"`
	// ChildSessions counts the child sessions (out-of-process frames,
	// workers) routed since the instance started.
	ChildSessions int64 `json:"childSessions"`
	// Stopped: a person stopped the automation (StoppedBy), and every
	// command is refused until they resume it.
	Stopped   bool   `json:"stopped"`
	StoppedBy string `json:"stoppedBy,omitempty"`
	// Approvals are the commands waiting for a person's approval, oldest
	// first.
	Approvals []ApprovalStatus `json:"approvals,omitempty"`
	// Waiting says what the client waits for: its extension, expected
	// back (a worker Chrome stopped, a reload); empty otherwise.
	Waiting string `json:"waiting,omitempty"`
	// Refused are the tabs a policy of the browser keeps the debugger out
	// of (chrome://policy), oldest first.
	Refused []RefusalStatus `json:"refused,omitempty"`
}

// BrowserStatus is the browser an instance's extension reported (or the
// relay learnt), as Browser.getVersion says it. It has the fields of
// cdp.BrowserInfo, which api, importing nothing of the relay, cannot name:
// the core converts one to the other, so a field added to one and not to
// the other does not compile.
type BrowserStatus struct {
	Product   string `json:"product"`
	UserAgent string `json:"userAgent"`
	Version   string `json:"version"`
}

// TabStatus describes one shared tab.
type TabStatus struct {
	TabID    int64  `json:"tabId"`
	TargetID string `json:"targetId,omitempty"`
	URL      string `json:"url"`
	Title    string `json:"title"`
	Attached bool   `json:"attached"`
	// Detached is why the browser last detached the debugger from the tab
	// while it stayed shared (target_closed when a frame navigated where
	// the debugger cannot follow); empty once it is attached again.
	Detached string `json:"detached,omitempty"`
	Session  string `json:"sessionId,omitempty"`
	// Waiting says why the client's sessions on the tab wait for it (a
	// browser page, the extension away: relay/internal/away); empty otherwise.
	Waiting string `json:"waiting,omitempty"`
	// Access is what automation may do with the tab: full, read-only or
	// blind. Of a blind tab the URL is its origin and the title empty.
	Access string `json:"access"`
	// Dialog is the JavaScript dialog the tab shows, if any (never of a
	// blind tab).
	Dialog *DialogStatus `json:"dialog,omitempty"`
}
