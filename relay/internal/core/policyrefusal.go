package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// The browser's policy refusals: the tabs a policy kept the debugger out
// of, for the live view (Status.Refused) and the audit log. Which refusals
// are a policy's, and the words that say so, are Chrome's, read by package
// cdp (cdp.PolicyCauseOf, cdp.PolicyText); what is kept of them is the
// browser stage's (Services.Refusals).

// Refusals is the browser stage's record of the browser's policy
// refusals. Its hooks are called with the instance's lock held.
type Refusals struct {
	// NoteLocked records that a policy (cause) kept the debugger out of
	// tab tabID, at url; command: a command failed on the attached tab,
	// rather than an attach or a detach.
	NoteLocked func(st *State, tabID int64, cause, url string, command bool)
	// StatusLocked lists the refusals still in force, oldest first.
	StatusLocked func(st *State) []api.RefusalStatus
}

var refusals Refusals

// NoteRefusal records that a policy (cause) kept the debugger out of tab
// id.
func (st *State) NoteRefusal(id int64, cause, url string) { st.noteRefused(id, cause, url, false) }

func (st *State) noteRefused(id int64, cause, url string, command bool) {
	if refusals.NoteLocked != nil && cdp.IsPolicyCause(cause) {
		refusals.NoteLocked(st, id, cause, url, command)
	}
}

// refusalsStatus lists the refusals still in force, oldest first.
func (st *State) refusalsStatus() []api.RefusalStatus {
	if refusals.StatusLocked == nil {
		return nil
	}
	return refusals.StatusLocked(st)
}

// notePolicyError records that a policy (cause) made a client command on t
// fail (a site the policy added while the tab was attached).
func (in *Instance) notePolicyError(t *Tab, cause string) {
	if t == nil {
		return
	}
	st := in.Lock()
	st.noteRefused(t.Id, cause, st.TargetInfo(t).URL, true)
	in.Unlock()
}
