package away

import (
	"context"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/attach"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/lines"
)

// Resuming a tab's sessions across a detach.
//
// When another extension puts a frame into a tab (a password manager's
// inline menu, on a login page's load or a field's focus), Chrome detaches
// chrome.debugger from the whole tab as soon as the frame starts loading:
// no script can prevent it, not even one that removes the frame at once.
// With the person's consent our extension's frame guard removes such
// frames from the tabs the automation holds, and then the tab can be
// attached again a few milliseconds later. The relay does that and resumes
// the client's sessions on it, so that a page.goto to a login page or a
// page.fill that focuses a password field carries on instead of finding
// its page closed:
//
//   - the client's top-level sessions stay; its child sessions (frames,
//     workers) end, as Chrome re-announces them; a session with Runtime on
//     hears Runtime.executionContextsCleared, since the objects the client
//     held died with the debugger session (its contexts are reported again,
//     with the same ids, and Playwright re-injects what it needs);
//   - the commands under way get their own answers from Chrome, where a
//     Runtime command's failure reads as the context's end, which clients
//     retry;
//   - the client's commands that arrive meanwhile wait;
//   - the tab is attached again, and what the sessions had switched on
//     (domains, lifecycle events, init scripts, bindings, emulation,
//     auto-attach: replay.Methods) is set again in the order it
//     was set; Chrome replays the document's lifecycle events.
//
// Events of the gap (a few tens of milliseconds) are lost. If the tab
// cannot be attached again within core.ResumeWait, the sessions end as for any
// other detach, told why.

// resumeRetry is the pause before another try, when Chrome detached the
// tab again meanwhile.
const resumeRetry = 50 * time.Millisecond

// ResumeTab attaches t again and sets again what its sessions had set. A
// tab that Chrome detaches again meanwhile (the other extension put its
// frame back at once) is tried again until core.ResumeWait has passed. Called without the
// lock.
func ResumeTab(in *core.Instance, x core.Upstream, t *core.Tab) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), core.ResumeWait)
	defer cancel()
	var err error
	for {
		err = attach.Tab(ctx, in, x, t)
		fresh := false
		if err == nil {
			// Another document than the client knows: it is shown it first
			// (document.go).
			fresh = showDocument(ctx, in, x, t)
			err = Replay(ctx, in, x, t, fresh)
		}
		st := in.Lock()
		if stillAway(st, t, x) {
			// Let go of again meanwhile: the tab waits for its next offer
			// (wait.go).
			in.Unlock()
			return
		}
		again := st.Shared(t) && t.State != core.TabAttached
		shared := st.Shared(t)
		in.Unlock()
		if (err == nil && !again) || !shared || attach.TabGone(err) {
			break
		}
		timer := time.NewTimer(resumeRetry)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
		}
		if ctx.Err() != nil {
			if err == nil {
				err = ctx.Err()
			}
			break
		}
	}
	tellLoaded(ctx, in, x, t, err)
	st := in.Lock()
	if stillAway(st, t, x) {
		in.Unlock()
		return
	}
	done := t.Resuming
	t.Resuming = nil
	detail := "after Chrome detached the tab for another extension's frame"
	if a := resumeOver(st, t); a != nil {
		detail = "the tab is back (" + a.Short + ")"
	}
	hs, target := t.Handles, t.TargetID
	if err != nil && st.Shared(t) {
		why := "the automation's sessions on the tab could not be resumed: " + err.Error()
		in.Log.Info("resume failed", "tab", t.Id, "err", err)
		lines.FailFor(st, t, "cdprelay: "+why)
		st.DropSessions(t, why)
		t.DetachReason = why
	}
	if err == nil {
		t.DetachReason = ""
	}
	in.Unlock()
	if done != nil {
		close(done)
	}
	if err == nil {
		in.Log.Info("resumed the tab's sessions", "tab", t.Id, "took", time.Since(start).Round(time.Millisecond))
		in.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindAttach, Target: target, Outcome: api.OutcomeOK, Detail: "resumed the automation's sessions " + detail})
		core.NotifyHandles(hs, api.TabEvent{Method: api.EventAttached})
	}
	if err != nil && attach.TabGone(err) {
		core.FailTab(x, t.Id)
	}
}
