package core

import "context"

// Attaching and detaching the debugger, the I/O side of the tab table's
// attach state machine (the states are the tab's: tabs.go), are a part of
// the core in a package of its own (relay/internal/attach). The core
// reaches it through the hooks the facade hands over (Services.Attacher);
// the stages, the upstream, the time away and the live view's handles
// call it directly.

// Attacher is what the core calls of the attach part (package attach).
type Attacher struct {
	// Tab attaches the debugger to t through x and learns its target
	// info; concurrent callers share one attempt.
	Tab func(ctx context.Context, in *Instance, x Upstream, t *Tab) error
	// FinishDetach detaches t, which its caller has moved to TabDetaching
	// (the client left).
	FinishDetach func(in *Instance, x Upstream, t *Tab)
	// BrakeOn puts the relay's own Debugger in place on session sid of
	// tab tabID (a child Chrome holds at its start).
	BrakeOn func(x Upstream, tabID int64, sid string)
}

// attacher is the attach part's hooks, set once before the order
// (Services.Attacher).
var attacher Attacher
