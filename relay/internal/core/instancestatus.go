package core

import "github.com/cdprelay/cdprelay/relay/internal/api"

// What an instance shows of itself: the status pages' snapshot and the
// instances gauge.

// Status is a snapshot of an instance for status pages and tests.
type Status struct {
	ID string `json:"id"`
	// Tenant is whose the instance is; absent: the operator's.
	Tenant    string      `json:"tenant,omitempty"`
	Profile   string      `json:"profile,omitempty"`
	Default   bool        `json:"default"`
	Extension bool        `json:"extension"`
	Ready     bool        `json:"ready"`
	Client    bool        `json:"client"`
	Browser   BrowserInfo `json:"browser"`
	Tabs      []TabStatus `json:"tabs"`
	// ChildSessions counts the child sessions (out-of-process frames,
	// workers) routed since the instance started.
	ChildSessions int64 `json:"childSessions"`
	// Stopped: a person stopped the automation (StoppedBy), and every
	// command is refused until they resume it.
	Stopped   bool   `json:"stopped"`
	StoppedBy string `json:"stoppedBy,omitempty"`
	// Approvals are the commands waiting for a person's approval, oldest
	// first.
	Approvals []api.ApprovalStatus `json:"approvals,omitempty"`
	// Waiting says what the client waits for: its extension, expected
	// back (a worker Chrome stopped, a reload); empty otherwise.
	Waiting string `json:"waiting,omitempty"`
	// Refused are the tabs a policy of the browser keeps the debugger out
	// of (chrome://policy), oldest first.
	Refused []api.RefusalStatus `json:"refused,omitempty"`
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
	Dialog *api.DialogStatus `json:"dialog,omitempty"`
}

// Status returns a snapshot of the instance.
func (in *Instance) Status() Status {
	if in.Wedged.Load() {
		return Status{ID: in.Id, Profile: in.ProfileName, Default: in.IsDefault, Tabs: []TabStatus{}}
	}
	st := in.Lock()
	defer in.Unlock()
	s := Status{
		Tenant:        in.Tenant(),
		Profile:       in.ProfileName,
		ID:            in.Id,
		Default:       in.IsDefault,
		Extension:     st.Ext != nil,
		Ready:         st.Ext != nil && st.Ext.IsReady(),
		Client:        st.Client != nil,
		Browser:       st.Info,
		ChildSessions: in.childSessions.Load(),
		Stopped:       st.StoppedBy != "",
		StoppedBy:     st.StoppedBy,
		Approvals:     authority.ApprovalsLocked(st),
		Waiting:       st.extWaiting(),
		Refused:       st.refusalsStatus(),
	}
	for _, t := range st.SortedTabs() {
		ti := st.TargetInfo(t) // what a blind tab may show
		ts := TabStatus{TabID: t.Id, TargetID: t.TargetID, URL: in.ScrubString(ti.URL), Title: in.ScrubString(ti.Title), Attached: t.State == TabAttached, Detached: t.DetachReason, Access: t.Acc.Level.String()}
		if t.Session != nil {
			ts.Session = t.Session.Id
		}
		if dialogs.StatusLocked != nil {
			ts.Dialog = dialogs.StatusLocked(in, t)
		}
		if ts.Waiting = st.tabWaiting(t); ts.Waiting != "" {
			ts.Detached = ""
		}
		s.Tabs = append(s.Tabs, ts)
	}
	return s
}

// LifeState is the instance's state for the instances gauge.
func (in *Instance) LifeState() string {
	st := in.Lock()
	defer in.Unlock()
	switch {
	case st.Client != nil:
		return "driven"
	case st.Ext != nil && st.Ext.IsReady():
		return "ready"
	}
	return "waiting"
}
