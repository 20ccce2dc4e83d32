package core

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// What a person's Stop undoes.
//
// Stopped, the automation's commands are refused (stop.go). What it had
// already started or set in the person's tabs is undone too, by a task
// that starts with the Stop, on every tab the relay holds:
//
//   - script that keeps the tab, or one of its frames or workers, busy is
//     ended (brake.go);
//   - the tab is detached and attached again. Chrome drops all that a
//     debugging session set when it ends — scripts for new documents,
//     bindings, emulation and network overrides, request interception (the
//     requests it held go on), ignored input, breakpoints, blocked script —
//     whatever the method, known to the relay or not;
//   - the few settings that outlive a debugging session are reset: a
//     frozen lifecycle (Page.setWebLifecycleState, first, since a frozen
//     page answers nothing) and a page scale factor. Virtual time outlives
//     it too, and nothing resets it: it is refused to clients
//     (refusedForStop);
//   - the client's sessions stay, as after a resume (resume.go): the
//     sessions of its frames and workers end, its execution contexts are
//     cleared. What it had set is kept, and set again when the person
//     resumes the automation.
//
// What stays is what the automation's script did inside the page: timers,
// listeners, rewritten functions, DOM changes, workers, storage. Nothing
// tells them from the page's own; a reload by the person ends those that
// live in the document, and none of the automation's scripts runs on the
// new one. The audit log records what the Stop undid.

// liftWait bounds the undoing of one tab.
const liftWait = 15 * time.Second

// lifting is what the last Stop undid. Guarded by mu.
type lifting struct {
	mu sync.Mutex
	// done is closed when the last Stop's undoing has ended; nil when
	// none ran.
	done chan struct{}
	// tabs had their settings lifted: Resume sets them again.
	tabs []*Tab
	// frozen are the tabs whose lifecycle the client set (by tab id).
	frozen map[int64]bool
}

// noteLifecycle records a client's Page.setWebLifecycleState: a frozen
// page stays frozen when the debugging session ends.
func (in *Instance) noteLifecycle(t *Tab) {
	l := &in.lifting
	l.mu.Lock()
	if l.frozen == nil {
		l.frozen = map[int64]bool{}
	}
	l.frozen[t.Id] = true
	l.mu.Unlock()
}

// StopRules refuse what a person's Stop could not undo or end
// (stopRulesOf: virtual time, blackboxing, callFunctionOn under a
// side-effect check; the brake is brake.go's).
//
// And the relay's own Debugger is not the client's: a session that has not
// enabled the Debugger itself gets Chrome's answer for a disabled one.
func (c *ClientConn) StopRules(k *Cmd) (Decision, bool) {
	if k.M.Domain == domainDebugger && !k.M.Enable && !k.M.Disable && k.Route.Via != nil {
		c.Inst.Lock()
		on := k.Route.Via.enabled["Debugger"]
		if k.Route.Sess != nil && !k.Route.Sess.Child {
			on = k.Route.Sess.enabled["Debugger"]
		}
		c.Inst.Unlock()
		if !on {
			return Denial(ruleDebuggerOff, "Debugger agent is not enabled"), false
		}
	}
	return stopRulesOf(k.M.Name, k.Env.Params)
}

// StopRulesStage (core.StopRules) is StopRules as a row of the commands
// table.
func (c *ClientConn) StopRulesStage(k *Cmd) bool {
	if d, ok := c.StopRules(k); !ok {
		return c.Refuse(k, d)
	}
	return true
}

// WantsStopRules wants the methods StopRules has a word on.
func WantsStopRules(m *MethodInfo) bool {
	return hasStopRule(m.Name) || (m.Domain == domainDebugger && !m.Enable && !m.Disable)
}

// domainDebugger is the Debugger domain's index (metrics.go).
var domainDebugger = cdp.DomainIndex("Debugger")

// startLifting starts undoing what the automation set, for the Stop by.
func (in *Instance) startLifting(x *ExtConn, by string) {
	if x == nil {
		return
	}
	st := in.Lock()
	var tabs []*Tab
	for _, t := range st.sortedTabs() {
		if t.State == TabAttached && t.resuming == nil {
			tabs = append(tabs, t)
		}
	}
	in.Unlock()
	done := make(chan struct{})
	l := &in.lifting
	l.mu.Lock()
	prev := l.done
	l.done = done
	l.mu.Unlock()
	in.Tasks.Spawn("undo what the automation set", func() {
		defer close(done)
		if prev != nil {
			<-prev // a Stop, Resume and Stop in quick succession: one at a time
		}
		in.liftAll(x, tabs, by)
	})
}

// liftAll undoes what the automation set on tabs, one task per tab, and
// records it.
func (in *Instance) liftAll(x *ExtConn, tabs []*Tab, by string) {
	res := make([]liftedTab, len(tabs))
	var wg sync.WaitGroup
	for i, t := range tabs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), liftWait)
			defer cancel()
			res[i] = in.liftTab(ctx, x, t)
		}()
	}
	wg.Wait()
	detail := liftedDetail(by, res)
	if detail == "" {
		return
	}
	in.Observe(Event{Actor: ActorRelay, Kind: KindStop, Outcome: OutcomeOK, Detail: detail})
}

// liftTab ends t's running script and drops what the client set there.
func (in *Instance) liftTab(ctx context.Context, x *ExtConn, t *Tab) liftedTab {
	st := in.Lock()
	if !st.shared(t) || t.State != TabAttached || t.resuming != nil {
		in.Unlock()
		return liftedTab{}
	}
	r := liftedTab{Target: t.TargetID}
	l := &in.lifting
	l.mu.Lock()
	frozen := l.frozen[t.Id]
	delete(l.frozen, t.Id)
	l.mu.Unlock()
	in.Unlock()
	if frozen {
		// First: a frozen page runs nothing, the brake's question and the
		// attach below included. Chrome keeps this beyond the session.
		if _, err := x.SendCommand(ctx, t.Id, "", "Page.setWebLifecycleState", map[string]string{"state": "active"}); err != nil {
			in.Log.Debug("stop: lifecycle", "tab", t.Id, "err", err)
		}
	}
	st = in.Lock()
	sids := []string{""}
	for _, cs := range st.Sessions {
		if cs.Tab == t && cs.Child && st.Live(cs) {
			sids = append(sids, cs.Id)
		}
	}
	in.Unlock()

	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, sid := range sids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if in.endScript(ctx, x, t.Id, sid, nil) {
				mu.Lock()
				r.Ended++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	st = in.Lock()
	if !st.shared(t) || t.State != TabAttached || t.resuming != nil {
		in.Unlock()
		return liftedTab{}
	}
	r.Set = keptNames(t.Replay)
	scaled := slices.ContainsFunc(t.Replay, func(k Replayed) bool { return k.Method == "Emulation.setPageScaleFactor" })
	hasSessions := t.Session != nil
	st.suspend(t, whyStopLift)
	t.setState(tabDetaching, nil) // Chrome's session ends below
	for _, sc := range t.Scripts {
		if sc.Child == nil {
			sc.Real, sc.adding = "", false // they go with the session
		}
	}
	if !hasSessions {
		t.Replay, t.replayBytes = nil, 0 // nobody to set them again for
	}
	hs := t.handles
	in.Unlock()
	l.mu.Lock()
	if hasSessions {
		l.tabs = append(l.tabs, t)
	}
	l.mu.Unlock()

	in.lettingGo(x, t)
	if _, err := x.Call(ctx, "chrome.debugger.detach", debuggee(t.Id, "")); err != nil {
		in.Log.Debug("stop: detach", "tab", t.Id, "err", err)
	}
	in.forgetBrakes(t.Id)
	in.Lock()
	if t.State == tabDetaching {
		t.setState(tabDetached, nil)
	}
	in.Unlock()
	r.Err = in.attachTab(ctx, x, t)
	if r.Err == nil && scaled {
		if _, err := x.SendCommand(ctx, t.Id, "", "Emulation.resetPageScaleFactor", nil); err != nil {
			in.Log.Debug("stop: page scale", "tab", t.Id, "err", err)
		}
	}

	st = in.Lock()
	done := t.resuming
	t.resuming = nil
	if r.Err != nil && st.shared(t) {
		why := "the automation's sessions on the tab could not be kept after the Stop: " + r.Err.Error()
		st.dropSessions(t, why)
		t.detachReason = why
	}
	in.Unlock()
	if done != nil {
		close(done)
	}
	if r.Err == nil {
		notifyHandles(hs, TabEvent{Method: EventAttached})
	}
	if r.Err != nil && tabGone(r.Err) {
		x.failTab(t.Id)
	}
	return r
}

// keptNames lists the methods of what a tab's sessions set, once each.
func keptNames(kept []Replayed) []string {
	var out []string
	n := map[string]int{}
	for _, k := range kept {
		if n[k.Method] == 0 {
			out = append(out, k.Method)
		}
		n[k.Method]++
	}
	for i, m := range out {
		if n[m] > 1 {
			out[i] = m + " ×" + strconv.Itoa(n[m])
		}
	}
	return out
}

// afterResume sets again, on each tab the last Stop lifted, what the
// client's sessions had set, before the client's commands for the tab go
// on. Called with the lock held, as the Resume lets the client go.
func (in *Instance) afterResume(st *State, x *ExtConn) {
	l := &in.lifting
	l.mu.Lock()
	tabs := l.tabs
	l.tabs = nil
	l.mu.Unlock()
	for _, t := range tabs {
		if !st.shared(t) || t.State != TabAttached || t.resuming != nil || t.Session == nil || x == nil {
			continue
		}
		t.resuming = make(chan struct{})
		in.Tasks.Spawn("set again what the automation had set", func() {
			ctx, cancel := context.WithTimeout(context.Background(), resumeWait)
			defer cancel()
			err := in.replay(ctx, x, t, false) // the same document: its scripts ran
			in.Lock()
			done := t.resuming
			t.resuming = nil
			in.Unlock()
			if done != nil {
				close(done)
			}
			if err != nil {
				in.Log.Info("setting again what the automation had set", "tab", t.Id, "err", err)
			}
		})
	}
}

// awaitLifting waits, briefly, for the last Stop's undoing to end, so that
// a Resume sets things again on tabs that are attached again.
func (in *Instance) awaitLifting() {
	l := &in.lifting
	l.mu.Lock()
	done := l.done
	l.mu.Unlock()
	if done == nil {
		return
	}
	timer := time.NewTimer(liftWait + time.Second)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	}
}
