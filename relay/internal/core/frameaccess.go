package core

import "github.com/cdprelay/cdprelay/relay/internal/api"

// ChildAccess is what automation may do with a child session's frame at
// u: the tiers of its own site (the tiers' Tiers.FrameLocked; a frame that
// shares its parent's process has no session of its own and goes with the
// tab).
func (st *State) ChildAccess(u string) TabAccess {
	if tiers.FrameLocked == nil {
		return TabAccess{}
	}
	return tiers.FrameLocked(st, u)
}

// ChildAgain decides child session cs's access again where it is (the
// tiers' Tiers.ChildLocked): the policy, or the relay's own origins,
// changed.
func (st *State) ChildAgain(cs *Session) {
	if tiers.ChildLocked != nil {
		tiers.ChildLocked(st, cs)
	}
}

// WentBlind moves t's blind epoch on, so that the replies of commands
// still running in it are withheld, and tells the live view, which
// forgets the tab's last frame (it shows the tab). Called with the lock
// held, when t or one of its frames went blind.
func (t *Tab) WentBlind() {
	t.blindEpoch.Add(1)
	NotifyHandles(t.Handles, api.TabEvent{Method: api.EventHidden})
}
