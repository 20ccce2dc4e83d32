package core

import "time"

// The navigation backstop's hold keeps a tab's paused document request
// while a person is asked about where it goes, or while the client's
// settings are lifted for it (package navhold, which says how). Here is
// what the core and the stages name of it.

// HeldRequest is a paused document request the relay holds. Guarded by
// the instance's mutex.
type HeldRequest struct {
	Tab       *Tab     // whose navigation it is
	Child     *Session // the child session it was paused on; nil for the tab's own
	RequestID string
	URL       string // where it goes
	Headers   map[string]string
	Fragment  string // the address's fragment, which its request does not carry
	FrameID   string
	Body      bool // the request carries a body: it cannot be sent again
	MainFrame bool // of the frame the session runs, not a frame inside it
	Timer     *time.Timer
	// Done: let go or failed; nothing more to do.
	Done bool
}

// AskNavigationLocked asks the person whether h may go where it goes
// (the person's Authority.AskNavigationLocked), and reports whether h is
// held for their answer.
func (st *State) AskNavigationLocked(h *HeldRequest) bool {
	return authority.AskNavigationLocked(st, h)
}
