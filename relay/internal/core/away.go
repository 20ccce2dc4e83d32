package core

import (
	"strings"
	"time"
)

// The time away: a client's page lives as long as its tab, through the
// times Chrome takes the debugger away from it (a browser page, the
// extension restarting or its worker stopped), and a client stays while
// its extension is expected back. What is done then is the away
// package's (relay/internal/away); the core keeps the waits (Tab.Away,
// State.ExtAway), has the client's commands for a waiting tab held in
// its line (package lines: Lines.ForTabLocked), keeps a waiting tab's events from the client
// (RouteEvent), and asks the away package at the three places where a
// tab or the extension goes (Away).

// Away is what the core asks of the time away. Each hook runs with the
// instance's lock held.
type Away struct {
	// LetGoLocked: the relay lets go of t, on its way to a page that is
	// never shared. It reports whether the client's sessions on t wait
	// for it (suspended) rather than end.
	LetGoLocked func(st *State, t *Tab) bool
	// ReplacedLocked: the extension's connection was replaced by a new
	// one while a client is on: when the old one is of an extension that
	// comes back by itself (its worker restarted), the client's sessions
	// on the tabs wait for the new one. It returns the handles of the tabs
	// forgotten and the ids of those that wait, and whether they do (false:
	// the tabs end as for any replaced connection).
	ReplacedLocked func(st *State) (gone []*TabHandle, waiting map[int64]bool, ok bool)
	// ExtensionGoneLocked: x, the extension's connection, ended with code
	// while client c (nil: none) is on. It reports whether c stays,
	// waiting for the extension to come back; then it has released the
	// lock and done with x.
	ExtensionGoneLocked func(in *Instance, st *State, x Upstream, c *ClientConn, reason string, code int) bool
}

var away Away

// EndAway ends t's wait, if it has one: the commands waiting for it go on
// (and find the sessions as they are). A resume under way ends its own.
func (st *State) EndAway(t *Tab) {
	a := t.Away
	if a == nil {
		return
	}
	a.Timer.Stop()
	t.Away = nil
	if t.Resuming != nil && a.Resumer == nil {
		close(t.Resuming)
		t.Resuming = nil
	}
	st.Notify()
}

// failLetGo answers the client's commands under way on t, which the relay
// lets go of (letGo): as a detach would, when its sessions wait for it;
// as a gone session's otherwise.
func (in *Instance) failLetGo(x Upstream, t *Tab) {
	in.Lock()
	waits := t.Away != nil
	in.Unlock()
	if waits {
		FailDetached(x, map[int64]bool{t.Id: true})
		return
	}
	FailTab(x, t.Id)
}

// FailDetached answers the client's commands under way on the tabs in ids
// as Chrome answers those of a debugger session that ends: the tabs'
// client sessions go on, waiting for them.
func FailDetached(x Upstream, ids map[int64]bool) {
	if len(ids) == 0 {
		return
	}
	FailWhere(x, func(pc PendingCall) bool { return ids[pc.TabID] }, CodeServerError, MsgDetachedWhile)
}

// tabWaiting is what the live view says of t while its sessions wait ("":
// they do not).
func (st *State) tabWaiting(t *Tab) string {
	if a := t.Away; a != nil {
		if a.Resumer != nil {
			return "coming back: the automation's page goes on where it was"
		}
		return a.Why
	}
	if t.Resuming != nil {
		return "coming back: " + strings.TrimSuffix(WhyResuming, ".")
	}
	return ""
}

// extWaiting is what the live view says of the instance while its client
// waits for the extension ("": it does not).
func (st *State) extWaiting() string {
	if st.ExtAway != nil && st.Client != nil && st.Ext == nil {
		return "waiting for the browser's extension to come back"
	}
	return ""
}

// readyWait is how long a client's commands wait for the extension's
// handshake: ExtensionWait, or as long as the extension is expected back.
func (in *Instance) readyWait() time.Duration {
	wait := in.Srv.Cfg.ExtensionWait
	st := in.Lock()
	if a := st.ExtAway; a != nil {
		wait = max(wait, time.Until(a.Until))
	}
	in.Unlock()
	return wait
}

// leftWhileAway forgets the tabs that waited for the extension when their
// client leaves before it is back. It returns the handles to tell.
func (st *State) leftWhileAway() []*TabHandle {
	if st.Ext != nil || st.ExtAway == nil {
		return nil
	}
	st.ExtAway = nil
	st.StopGrace()
	return st.ResetTabs()
}

// Changed is closed at the next change of the extension, the client or
// the instance's end (Notify).
func (st *State) Changed() <-chan struct{} { return st.changed }

// SetGrace closes the client with over once d has passed, unless an
// extension has connected again by then; it replaces a grace under way.
func (st *State) SetGrace(d time.Duration, over func()) {
	st.StopGrace()
	st.grace = time.AfterFunc(d, over)
}
