package core

import (
	"encoding/json"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/replay"
)

// What a tab's sessions need to come through a detach or a time away
// from the debugger (relay/internal/away): the tab's slot for
// it, embedded in tab. The core keeps it because it follows it on the
// event path (the document and its load) and decides by it what reaches
// the client (a waiting tab's events do not); what is done with it when a
// tab goes away and comes back is the away package's.

// resumeTab is what the resume and the waits keep of a tab. Guarded by the
// instance's mutex.
type resumeTab struct {
	// LoaderID is Chrome's id of the document the tab shows (docURL; ""
	// when not known): a resume tells by it whether the tab shows another
	// one.
	LoaderID string
	Loaded   DocLoad // what Chrome said of its loading
	// Resuming is closed when a resume of the tab's sessions ends
	// (relay/internal/away's resume.go, a person's Resume); nil when none is under way. Replay is what the
	// sessions set that a resume sets again, in order.
	Resuming chan struct{}
	// Away is set while the sessions wait for Chrome to let the tab be
	// debugged again: a browser page, the extension away.
	Away    *Wait
	Resumes []time.Time // when the tab was last resumed (package away's MayResume)
	Replay  replay.Record
}

// Wait is the wait of a tab's client sessions for the debugger
// (relay/internal/away). Its fields are guarded by the instance's mutex.
type Wait struct {
	Why   string // what the client's console and the live view are told
	Short string // the same in a few words, for the audit log
	Timer *time.Timer
	// Resumer is the extension connection that offered the tab again and
	// resumes it now; nil while the tab waits for an offer. Only its
	// events reach the client while the tab waits (RouteEvent).
	Resumer Upstream
	// Moved: the tab left its document for a page never shared, so the
	// one it comes back to is another.
	Moved bool
	// Acc and Info are what automation could do with the tab, and what
	// the client was shown of it, when the wait began.
	Acc  TabAccess
	Info TargetInfo
}

// ExtWait is a client's wait for the extension expected back.
type ExtWait struct {
	Reason string    // why its connection ended
	Until  time.Time // when the client is closed if it is not back
}

// DocLoad is what Chrome said of the loading of the document a tab shows
// (LoaderID; Seen: the client saw it commit, or a resume showed it). The
// replay makes Chrome send a document's past lifecycle events again, not
// Page.domContentEventFired, loadEventFired or the main frame's
// frameStoppedLoading: a resume tells the client those it missed from
// this.
type DocLoad struct {
	Seen, DOMContent, Load, Stopped bool
	DOMContentAt, LoadAt            json.RawMessage
}

// note records a Page event of t's own session.
func (d *DocLoad) note(t *Tab, method, params []byte) {
	main := string(wire.StringField(params, "frameId")) == t.TargetID
	switch string(method) {
	case "Page.domContentEventFired":
		d.DOMContent = true
	case "Page.loadEventFired":
		d.Load = true
	case "Page.frameStoppedLoading":
		d.Stopped = d.Stopped || main
	case "Page.lifecycleEvent":
		if !main || string(wire.StringField(params, "loaderId")) != t.LoaderID {
			return
		}
		switch string(wire.StringField(params, "name")) {
		case "DOMContentLoaded":
			d.DOMContentAt = append(json.RawMessage(nil), wire.Field(params, "timestamp")...)
		case "load":
			d.LoadAt = append(json.RawMessage(nil), wire.Field(params, "timestamp")...)
		}
	}
}
