package core

// Frames on their way to a site that is not full: the tiers follow them
// (their tabframes.go) in the tab's BlindFrames, from the first event that
// says so until they commit; the core reads them for a session Chrome
// attaches for such a frame, which is as strict as where it is going from
// the start.

// BlindNav is a sub-frame's navigation to a site that is not full (the
// map keeps read-only ones too: the tab's scripts for new documents are
// out of Chrome while one is pending, initscripts.go).
type BlindNav struct {
	Url string
	Req string // the navigation's request id: its Network events name no frame
	Acc TabAccess
}

// MaxPendingFrames bounds what the tiers follow of a tab for its access:
// its frames on their way to a site that is not full, its requests to
// blind sites, the frames of its document and of a child session's
// process; a page with more than that is blind until its next document
// (bounds.go).
const MaxPendingFrames = 4096

// blindNavOf is a sub-frame's pending navigation, for the session Chrome
// attached for it. The entry stays: the navigation's request goes on being
// reported on the session that started it.
func (t *Tab) blindNavOf(targetID string) (string, TabAccess) {
	n := t.BlindFrames[targetID]
	return n.Url, n.Acc
}

// SetFrame records that t's in-process sub-frame id is now at url ("" when
// it is gone), and decides the tab's access again (the tiers'
// Tiers.SetFrameLocked).
func (st *State) SetFrame(t *Tab, id, url string) {
	if tiers.SetFrameLocked != nil {
		tiers.SetFrameLocked(st, t, id, url)
	}
}
