package core

// Suspend ends what died with the debugger session on t and holds the
// client's commands for it until resume is done. why is told to the
// sessions that enabled Log.
func (st *State) Suspend(t *Tab, why string) {
	c := st.Client
	st.WarnSessions(t, why)
	// Children are gone, each told on its parent as Chrome would: Chrome
	// announces them again once the tab's auto-attach is set again.
	var children []*Session
	for _, cs := range st.Sessions {
		if cs.Tab == t && cs.Child {
			children = append(children, cs)
		}
	}
	for _, cs := range children {
		if c != nil && cs.parent != nil && st.Live(cs.parent) {
			c.Event("Target.detachedFromTarget", cs.parent, DetachedParams{SessionID: cs.Id, TargetID: cs.TargetID})
		}
	}
	for _, cs := range children {
		delete(st.Sessions, cs.Id)
	}
	for _, s := range st.TopSessions(t) {
		// While the automation is stopped, its view of the contexts stays
		// as it was until Resume (contextsFrozen), which tells it.
		if s.Enabled["Runtime"] && s.idJSON != nil {
			if st.StoppedBy != "" {
				s.ClearedOwed = true
				continue
			}
			c.EventRaw("Runtime.executionContextsCleared", s, []byte("{}"))
		}
	}
	t.SetState(TabDetached, nil)
	t.ClientScreencast = false
	t.DetachReason = why
	if t.Resuming == nil {
		t.Resuming = make(chan struct{})
	}
}
