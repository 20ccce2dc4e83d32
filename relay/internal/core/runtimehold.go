package core

// The relay's own Runtime: it keeps Runtime enabled on every session of
// the tabs it attaches, so that its view of the tab's contexts
// (relay/internal/contexts) stays true, and answers the client's Runtime
// switch itself (package switches, which says how). Here: the hold, and
// which Runtime events a client session gets.

// holdRuntime turns Runtime on in Chrome for t's session sid, once. It
// goes out as the lock is released, before any later command for the
// session.
func (st *State) holdRuntime(t *Tab, sid string) {
	sc := t.Ctxs.Of(sid)
	if sc.Held {
		return
	}
	sc.Held = true
	st.Fire(t.Id, sid, "Runtime.enable", nil)
}

// RuntimeOn reports whether the client has Runtime on on s.
func (s *Session) RuntimeOn() bool {
	if s.Child {
		return s.ChildRuntime
	}
	return s.Enabled["Runtime"]
}

// runtimeWanted reports whether client session s gets a Runtime event of
// t's session sid: when the client has Runtime on there, or when the relay
// does not hold it (then Chrome sends only what the client asked for).
func (st *State) runtimeWanted(t *Tab, sid string, s *Session, method []byte) bool {
	if string(method) == "Runtime.bindingCalled" {
		return true
	}
	if sc := t.Ctxs.Get(sid); sc == nil || !sc.Held {
		return true
	}
	return s.RuntimeOn() && !st.contextsFrozen(method)
}

// contextsFrozen reports whether an event of method is withheld from the
// client because the automation is stopped: while it is, the client's
// view of a tab's execution contexts stays as it was, and Resume brings it
// up to date (package switches' ResyncContexts). A Stop ends the relay's
// debugger session on the tab (person's stopundo.go), and a client told
// then that its contexts are gone takes a script it had just sent for a
// navigation ("Execution context was destroyed") rather than for the
// person's Stop, which every command meets while stopped.
func (st *State) contextsFrozen(method []byte) bool {
	return st.StoppedBy != "" && BytesHasPrefix(method, "Runtime.executionContext")
}
