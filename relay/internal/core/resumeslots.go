package core

import "time"

// What a tab's sessions need to come through a detach (resume.go) or a
// time away from the debugger (away.go, awayext.go): the tab's slot for
// it, embedded in tab.

// resumeTab is what the resume and the waits keep of a tab. Guarded by the
// instance's mutex.
type resumeTab struct {
	// loaderID is Chrome's id of the document the tab shows (docURL; ""
	// when not known): a resume tells by it whether the tab shows another
	// one (awaydoc.go).
	loaderID string
	loaded   docLoad // what Chrome said of its loading (awayload.go)
	// resuming is closed when a resume of the tab's sessions ends
	// (resume.go); nil when none is under way. replay is what the
	// sessions set that a resume sets again, in order; nextScript numbers
	// its init scripts; scriptIDs maps the client's init script
	// identifiers to Chrome's after a resume.
	Resuming chan struct{}
	// away is set while the sessions wait for Chrome to let the tab be
	// debugged again: a browser page, the extension away (away.go).
	away        *awayTab
	resumes     []time.Time // when the tab was last resumed
	Replay      []Replayed
	ReplayBytes int // of replay's params
	nextScript  int
	scriptIDs   map[string]string
}
