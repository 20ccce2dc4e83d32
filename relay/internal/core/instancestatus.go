package core

import "github.com/cdprelay/cdprelay/relay/internal/api"

// What an instance shows of itself: the status pages' snapshot (its
// types are api's: api.Status, api.TabStatus) and the instances gauge.

// Status returns a snapshot of the instance.
func (in *Instance) Status() api.Status {
	if in.Wedged.Load() {
		return api.Status{ID: in.Id, Profile: in.ProfileName, Default: in.IsDefault, Tabs: []api.TabStatus{}}
	}
	st := in.Lock()
	defer in.Unlock()
	s := api.Status{
		Tenant:        in.Tenant(),
		Profile:       in.ProfileName,
		ID:            in.Id,
		Default:       in.IsDefault,
		Extension:     st.Ext != nil,
		Ready:         st.Ext != nil && st.Ext.IsReady(),
		Client:        st.Client != nil,
		Browser:       api.BrowserStatus(st.Info),
		ChildSessions: in.childSessions.Load(),
		Stopped:       st.StoppedBy != "",
		StoppedBy:     st.StoppedBy,
		Approvals:     authority.ApprovalsLocked(st),
		Waiting:       st.extWaiting(),
		Refused:       st.refusalsStatus(),
	}
	for _, t := range st.SortedTabs() {
		ti := st.TargetInfo(t) // what a blind tab may show
		ts := api.TabStatus{TabID: t.Id, TargetID: t.TargetID, URL: in.ScrubString(ti.URL), Title: in.ScrubString(ti.Title), Attached: t.State == TabAttached, Detached: t.DetachReason, Access: t.Acc.Level.String()}
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
