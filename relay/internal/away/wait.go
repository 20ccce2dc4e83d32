package away

import (
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/lines"
)

// Why a tab's sessions wait, as the client's console and the live view say
// it.
const (
	whyAwayPage = "the tab went to a page Chrome does not let an extension debug (a browser page, the Web Store or another extension's page)"
	whyAwayExt  = "waiting for the browser's extension to come back (it restarted, or Chrome stopped its service worker)"
)

// mayWait reports whether t's client sessions wait for the debugger to
// come back rather than end: the tab has a client's sessions, none waits
// already, and the extension offers a tab again once it can be attached
// (ours: detach-cause).
func mayWait(st *core.State, t *core.Tab) bool {
	return st.Inst.Srv.Cfg.SuspendTimeout > 0 && st.Client != nil && t.Session != nil && t.Resuming == nil &&
		st.Features[core.FeatureDetachCause]
}

// suspend suspends t's client sessions until the extension offers the
// tab again, for at most SuspendTimeout. Call it only when mayWait.
func suspend(st *core.State, t *core.Tab, why, short string, moved bool) {
	info := st.TargetInfo(t)
	st.Suspend(t, why+"; the automation's page waits for it to come back (at most "+st.Inst.Srv.Cfg.SuspendTimeout.String()+"), and so do its commands to it")
	newWait(st, t, why, short, moved).Info = info
	st.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindDetach, Target: t.TargetID, Outcome: api.OutcomeOK, Detail: "the automation's sessions wait for the tab: " + short})
}

// newWait starts t's wait, bounded by SuspendTimeout.
func newWait(st *core.State, t *core.Tab, why, short string, moved bool) *core.Wait {
	in := st.Inst
	a := &core.Wait{Why: why, Short: short, Moved: moved, Acc: t.Acc, Info: st.TargetInfo(t)}
	t.Away = a
	a.Timer = time.AfterFunc(in.Srv.Cfg.SuspendTimeout, func() { waitOver(in, t, a) })
	st.Notify()
	return a
}

// letGoLocked is the core's letting go of t for a page never shared
// (core.Away.LetGoLocked): the client's sessions wait for the tab, which
// our extension offers again once it is back on a web page; a tab being
// resumed after a wait waits again.
func letGoLocked(st *core.State, t *core.Tab) bool {
	if mayWait(st, t) {
		suspend(st, t, whyAwayPage, "a page an extension may not debug", true)
		return true
	}
	return awayAgain(st, t, whyAwayPage)
}

// OfferedBack reports whether t, offered again by the extension x, is a
// tab whose client sessions wait for it: the caller then resumes them
// (ResumeAway). Called with the lock held.
func OfferedBack(st *core.State, t *core.Tab, x core.Upstream) bool {
	a := t.Away
	if a == nil || a.Resumer != nil || t.Resuming == nil || t.Session == nil {
		return false
	}
	a.Resumer = x
	return true
}

// ResumeAway resumes the sessions of t, which the extension x offered
// again, once x's handshake has ended (the network fence of a client goes
// in before anything of the client's does).
func ResumeAway(in *core.Instance, x core.Upstream, t *core.Tab) {
	select {
	case <-x.Ready():
	case <-x.Done():
		// Gone before it was ready: the tab waits for the next offer.
		in.Lock()
		if a := t.Away; a != nil && a.Resumer == x {
			a.Resumer = nil
		}
		in.Unlock()
		return
	}
	ResumeTab(in, x, t)
}

// stillAway reports whether t's wait goes on without the resume through x
// under way: the tab was let go of again meanwhile (a browser page once
// more), its offer withdrawn, or the extension went. The resume then ends
// without a word; the next offer resumes the tab.
func stillAway(st *core.State, t *core.Tab, x core.Upstream) bool {
	a := t.Away
	if a == nil || !st.Shared(t) || t.Session == nil {
		return false
	}
	if a.Resumer == x && st.Ext == x {
		return false // the resume goes on
	}
	if a.Resumer == x {
		a.Resumer = nil
	}
	return true
}

// awayAgain makes t, whose resume is under way, wait again: Chrome let go
// of it again (why). It reports whether it does; a tab that is not being
// resumed after a wait does not. Called with the lock held.
func awayAgain(st *core.State, t *core.Tab, why string) bool {
	a := t.Away
	if a == nil || a.Resumer == nil {
		return false
	}
	a.Resumer = nil
	a.Moved = true
	st.Suspend(t, why)
	return true
}

// Withdrawn reports whether t, whose offer the extension took back
// (Chrome refused to attach it), is a tab whose sessions wait: they go on
// waiting for the next offer. Called with the lock held.
func Withdrawn(t *core.Tab) bool {
	a := t.Away
	if a == nil || t.Session == nil {
		return false
	}
	a.Resumer = nil
	t.SetState(core.TabDetached, nil)
	return true
}

// waitOver ends a wait that SuspendTimeout ended: the tab did not come
// back. A resume under way ends it itself.
func waitOver(in *core.Instance, t *core.Tab, a *core.Wait) {
	if in.Wedged.Load() {
		return
	}
	st := in.Lock()
	if t.Away != a || a.Resumer != nil {
		in.Unlock()
		return
	}
	why := a.Why + "; it was not back within " + in.Srv.Cfg.SuspendTimeout.String()
	target := t.TargetID
	endWait(st, t, why)
	in.Unlock()
	in.Log.Info("a tab's sessions waited for it in vain", "tab", t.Id, "waited", in.Srv.Cfg.SuspendTimeout)
	in.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindDetach, Target: target, Outcome: api.OutcomeOK, Detail: "the automation's sessions ended: the tab was not back within " + in.Srv.Cfg.SuspendTimeout.String() + " (" + a.Short + ")"})
}

// endWait ends the wait of t's sessions without the tab: the commands
// that waited fail with why, then the sessions end, told why. The tab
// stays shared: offered again, it is a new target.
func endWait(st *core.State, t *core.Tab, why string) {
	lines.FailFor(st, t, "cdprelay: "+why)
	st.DropSessions(t, why)
	t.ForgetClientSetup()
	t.DetachReason = why
	st.EndAway(t)
}

// resumeOver clears t's wait once a resume of it has ended (resume.go),
// and returns it (nil when there was none).
func resumeOver(st *core.State, t *core.Tab) *core.Wait {
	a := t.Away
	if a == nil {
		return nil
	}
	a.Timer.Stop()
	t.Away = nil
	st.Notify()
	return a
}

// WaitOnDetach is the answer to Chrome's detaching t by itself for cause
// (package ext's OnDetach), while the tab stays open: the client's
// sessions wait for it when the tab went to a browser page, which our
// extension offers again once it is back on the web. It reports whether
// they wait. Called with the lock held.
//
// A detach for no cause Chrome names (a frame going to a scheme the
// debugger cannot follow, such as an external protocol's) still ends the
// sessions: the tab is offered again at once, but Chrome may keep it busy
// with the external protocol's request long enough that setting again what
// the client had set does not end in time, and the client's page would
// close anyway, later.
func WaitOnDetach(st *core.State, t *core.Tab, d cdp.DetachCause) bool {
	if d.Cause != cdp.CauseRestrictedURL || !mayWait(st, t) {
		return false
	}
	suspend(st, t, whyAwayPage, d.Short(), true)
	return true
}
