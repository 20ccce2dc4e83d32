package core

import (
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// A client's page lives as long as its tab.
//
// Chrome takes chrome.debugger away from a tab that stays open in several
// passing cases: the person takes it to a browser page (chrome://…), the
// Web Store or another extension's page and comes back; our extension
// reloads or updates, or Chrome stops its service worker (awayext.go). (A
// frame going to a scheme the debugger cannot follow still ends the
// sessions: WaitOnDetach.) Through
// Chrome's own port a client's page lives on through all of them. So
// does it here: the client's top-level sessions on the tab are suspended
// (resume.go's suspend: what died with the debugger session ends, as when
// a password manager's frame takes it away), its commands for the tab
// wait in the tab's line (awayline.go), nothing of the page it is on now
// reaches the client (it is not attached there), and when our extension
// offers the tab again (it does once the tab can be attached: back on a
// web page, or the extension back) the sessions are resumed: the tab is
// attached again as any offered tab is (the tiers and the fence judge the
// page it came back to), the client is shown the document it is on now
// when it is another one (awaydoc.go), and what it had set is set again
// (resume.go's replay). A tab that closes meanwhile closes at once; one
// that is not back within SuspendTimeout ends its sessions, told why, and
// the commands that waited fail with the reason.
//
// The stock Playwright extension does not offer a detached tab again:
// there the sessions end as before (tabgone.go finds out whether the tab
// is still there).

// awayTab is the wait of a tab's client sessions for the debugger. Its
// fields are guarded by the instance's mutex.
type awayTab struct {
	why   string // what the client's console and the live view are told
	short string // the same in a few words, for the audit log
	timer *time.Timer
	// resumer is the extension connection that offered the tab again and
	// resumes it now; nil while the tab waits for an offer. A resume that
	// finds it another (the tab let go of again meanwhile, an offer
	// withdrawn, the extension gone) leaves the wait as it is (stillAway).
	resumer Upstream
	// moved: the tab left its document for a page never shared, so the
	// one it comes back to is another.
	moved bool
	// acc and info are what automation could do with the tab, and what
	// the client was shown of it, when the wait began.
	acc  TabAccess
	info TargetInfo
}

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
func (st *State) mayWait(t *Tab) bool {
	return st.Inst.Srv.Cfg.SuspendTimeout > 0 && st.Client != nil && t.Session != nil && t.Resuming == nil &&
		st.Features[FeatureDetachCause]
}

// suspendAway suspends t's client sessions until the extension offers the
// tab again, for at most SuspendTimeout. Call it only when mayWait.
func (st *State) suspendAway(t *Tab, why, short string, moved bool) {
	info := st.TargetInfo(t)
	st.Suspend(t, why+"; the automation's page waits for it to come back (at most "+st.Inst.Srv.Cfg.SuspendTimeout.String()+"), and so do its commands to it")
	st.newAway(t, why, short, moved).info = info
	st.Observe(Event{Actor: api.ActorRelay, Kind: api.KindDetach, Target: t.TargetID, Outcome: api.OutcomeOK, Detail: "the automation's sessions wait for the tab: " + short})
}

// newAway starts t's wait, bounded by SuspendTimeout.
func (st *State) newAway(t *Tab, why, short string, moved bool) *awayTab {
	in := st.Inst
	a := &awayTab{why: why, short: short, moved: moved, acc: t.Acc, info: st.TargetInfo(t)}
	t.away = a
	a.timer = time.AfterFunc(in.Srv.Cfg.SuspendTimeout, func() { in.awayOver(t, a) })
	st.Notify()
	return a
}

// OfferedBack reports whether t, offered again by the extension, is a tab
// whose client sessions wait for it: the caller then resumes them
// (ResumeAway). Called with the lock held.
func (st *State) OfferedBack(t *Tab, x Upstream) bool {
	a := t.away
	if a == nil || a.resumer != nil || t.Resuming == nil || t.Session == nil {
		return false
	}
	a.resumer = x
	return true
}

// ResumeAway resumes the sessions of t, which the extension x offered
// again, once x's handshake has ended (the network fence of a client goes
// in before anything of the client's does).
func (in *Instance) ResumeAway(x Upstream, t *Tab) {
	select {
	case <-x.Ready():
	case <-x.Done():
		// Gone before it was ready: the tab waits for the next offer.
		in.Lock()
		if a := t.away; a != nil && a.resumer == x {
			a.resumer = nil
		}
		in.Unlock()
		return
	}
	in.ResumeTab(x, t)
}

// stillAway reports whether t's wait goes on without the resume through x
// under way: the tab was let go of again meanwhile (a browser page once
// more), its offer withdrawn, or the extension went. The resume then ends
// without a word; the next offer resumes the tab.
func (st *State) stillAway(t *Tab, x Upstream) bool {
	a := t.away
	if a == nil || !st.Shared(t) || t.Session == nil {
		return false
	}
	if a.resumer == x && st.Ext == x {
		return false // the resume goes on
	}
	if a.resumer == x {
		a.resumer = nil
	}
	return true
}

// awayAgain makes t, whose resume is under way, wait again: Chrome let go
// of it again (why). It reports whether it does; a tab that is not being
// resumed after a wait does not. Called with the lock held.
func (st *State) awayAgain(t *Tab, why string) bool {
	a := t.away
	if a == nil || a.resumer == nil {
		return false
	}
	a.resumer = nil
	a.moved = true
	st.Suspend(t, why)
	return true
}

// WithdrawnWhileAway reports whether t, whose offer the extension took
// back (Chrome refused to attach it), is a tab whose sessions wait: they
// go on waiting for the next offer.
func (st *State) WithdrawnWhileAway(t *Tab) bool {
	a := t.away
	if a == nil || t.Session == nil {
		return false
	}
	a.resumer = nil
	t.SetState(TabDetached, nil)
	return true
}

// awayOver ends a wait that SuspendTimeout ended: the tab did not come
// back. A resume under way ends it itself.
func (in *Instance) awayOver(t *Tab, a *awayTab) {
	if in.Wedged.Load() {
		return
	}
	st := in.Lock()
	if t.away != a || a.resumer != nil {
		in.Unlock()
		return
	}
	why := a.why + "; it was not back within " + in.Srv.Cfg.SuspendTimeout.String()
	target := t.TargetID
	st.endWait(t, why)
	in.Unlock()
	in.Log.Info("a tab's sessions waited for it in vain", "tab", t.Id, "waited", in.Srv.Cfg.SuspendTimeout)
	in.Observe(Event{Actor: api.ActorRelay, Kind: api.KindDetach, Target: target, Outcome: api.OutcomeOK, Detail: "the automation's sessions ended: the tab was not back within " + in.Srv.Cfg.SuspendTimeout.String() + " (" + a.short + ")"})
}

// endWait ends the wait of t's sessions without the tab: the commands
// that waited fail with why, then the sessions end, told why. The tab
// stays shared: offered again, it is a new target.
func (st *State) endWait(t *Tab, why string) {
	st.failHeldFor(t, "cdprelay: "+why)
	st.DropSessions(t, why)
	t.forgetClientSetup()
	t.DetachReason = why
	st.endAway(t)
}

// endAway ends t's wait, if it has one: the commands waiting for it go on
// (and find the sessions as they are). A resume under way ends its own.
func (st *State) endAway(t *Tab) {
	a := t.away
	if a == nil {
		return
	}
	a.timer.Stop()
	t.away = nil
	if t.Resuming != nil && a.resumer == nil {
		close(t.Resuming)
		t.Resuming = nil
	}
	st.Notify()
}

// resumeOver clears t's wait once a resume of it has ended (resume.go),
// and returns it (nil when there was none).
func (st *State) resumeOver(t *Tab) *awayTab {
	a := t.away
	if a == nil {
		return nil
	}
	a.timer.Stop()
	t.away = nil
	st.Notify()
	return a
}

// forgetReplay forgets what a resume would set again: the client's
// sessions on t have ended, and the next ones set their own.
func (t *Tab) forgetReplay() {
	t.Replay, t.ReplayBytes, t.scriptIDs = nil, 0, nil
}

// WaitOnDetach is the answer to Chrome's detaching t by itself for cause
// (ext.Conn.OnDetach), while the tab stays open: the client's sessions wait for it
// when the tab went to a browser page, which our extension offers again
// once it is back on the web. It reports whether they wait. Called with
// the lock held.
//
// A detach for no cause Chrome names (a frame going to a scheme the
// debugger cannot follow, such as an external protocol's) still ends the
// sessions: the tab is offered again at once, but Chrome may keep it busy
// with the external protocol's request long enough that setting again what
// the client had set does not end in time, and the client's page would
// close anyway, later.
func (st *State) WaitOnDetach(t *Tab, d cdp.DetachCause) bool {
	if d.Cause != cdp.CauseRestrictedURL || !st.mayWait(t) {
		return false
	}
	st.suspendAway(t, whyAwayPage, d.Short(), true)
	return true
}

// failLetGo answers the client's commands under way on t, which the relay
// lets go of (letGo): as a detach would, when its sessions wait for it;
// as a gone session's otherwise.
func (in *Instance) failLetGo(x Upstream, t *Tab) {
	in.Lock()
	waits := t.away != nil
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
	if a := t.away; a != nil {
		if a.resumer != nil {
			return "coming back: the automation's page goes on where it was"
		}
		return a.why
	}
	if t.Resuming != nil {
		return "coming back: " + strings.TrimSuffix(WhyResuming, ".")
	}
	return ""
}
