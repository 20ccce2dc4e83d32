package person

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/attach"
	"github.com/cdprelay/cdprelay/relay/internal/away"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/replay"
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
//   - the client's sessions stay, as after a resume (relay/internal/away): the
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
	tabs []*core.Tab
	// frozen are the tabs whose lifecycle the client set (by tab id).
	frozen map[int64]bool
}

// noteLifecycle records a client's Page.setWebLifecycleState: a frozen
// page stays frozen when the debugging session ends.
func noteLifecycle(in *core.Instance, t *core.Tab) {
	l := &instSlot.Of(in).lifting
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
func StopRules(c *core.ClientConn, k *core.Cmd) (core.Decision, bool) {
	if k.M.Domain == domainDebugger && !k.M.Enable && !k.M.Disable && k.Route.Via != nil {
		c.Inst.Lock()
		on := k.Route.Via.Enabled["Debugger"]
		if k.Route.Sess != nil && !k.Route.Sess.Child {
			on = k.Route.Sess.Enabled["Debugger"]
		}
		c.Inst.Unlock()
		if !on {
			return core.Denial(RuleDebuggerOff, "Debugger agent is not enabled"), false
		}
	}
	return stopRulesOf(k.M.Name, k.Env.Params)
}

// StopRulesStage (person.StopRules) is StopRules as a row of the commands
// table.
func StopRulesStage(c *core.ClientConn, k *core.Cmd) bool {
	if d, ok := StopRules(c, k); !ok {
		return c.Refuse(k, d)
	}
	return true
}

// WantsStopRules wants the methods StopRules has a word on.
func WantsStopRules(m *core.MethodInfo) bool {
	return hasStopRule(m.Name) || (m.Domain == domainDebugger && !m.Enable && !m.Disable)
}

// domainDebugger is the Debugger domain's index (cdp.Domains).
var domainDebugger = cdp.DomainIndex("Debugger")

// startLifting starts undoing what the automation set, for the Stop by.
func startLifting(in *core.Instance, x core.Upstream, by string) {
	if x == nil {
		return
	}
	st := in.Lock()
	var tabs []*core.Tab
	for _, t := range st.SortedTabs() {
		if t.State == core.TabAttached && t.Resuming == nil {
			tabs = append(tabs, t)
		}
	}
	in.Unlock()
	done := make(chan struct{})
	l := &instSlot.Of(in).lifting
	l.mu.Lock()
	prev := l.done
	l.done = done
	l.mu.Unlock()
	in.Tasks.Spawn("undo what the automation set", func() {
		defer close(done)
		if prev != nil {
			<-prev // a Stop, Resume and Stop in quick succession: one at a time
		}
		liftAll(in, x, tabs, by)
	})
}

// liftAll undoes what the automation set on tabs, one task per tab, and
// records it.
func liftAll(in *core.Instance, x core.Upstream, tabs []*core.Tab, by string) {
	res := make([]liftedTab, len(tabs))
	var wg sync.WaitGroup
	for i, t := range tabs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), liftWait)
			defer cancel()
			res[i] = liftTab(ctx, in, x, t)
		}()
	}
	wg.Wait()
	detail := liftedDetail(by, res)
	if detail == "" {
		return
	}
	in.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindStop, Outcome: api.OutcomeOK, Detail: detail})
}

// liftTab ends t's running script and drops what the client set there.
func liftTab(ctx context.Context, in *core.Instance, x core.Upstream, t *core.Tab) liftedTab {
	st := in.Lock()
	if !st.Shared(t) || t.State != core.TabAttached || t.Resuming != nil {
		in.Unlock()
		return liftedTab{}
	}
	r := liftedTab{Target: t.TargetID}
	l := &instSlot.Of(in).lifting
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
			if endScript(ctx, in, x, t.Id, sid, nil) {
				mu.Lock()
				r.Ended++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	st = in.Lock()
	if !st.Shared(t) || t.State != core.TabAttached || t.Resuming != nil {
		in.Unlock()
		return liftedTab{}
	}
	r.Set = keptNames(t.Replay.Cmds)
	scaled := slices.ContainsFunc(t.Replay.Cmds, func(k replay.Cmd) bool { return k.Method == "Emulation.setPageScaleFactor" })
	hasSessions := t.Session != nil
	st.Suspend(t, whyStopLift)
	t.SetState(core.TabDetaching, nil) // Chrome's session ends below
	for _, sc := range t.Scripts {
		if sc.Child == nil {
			sc.Real, sc.Adding = "", false // they go with the session
		}
	}
	if !hasSessions {
		t.Replay.Drop() // nobody to set them again for
	}
	hs := t.Handles
	in.Unlock()
	l.mu.Lock()
	if hasSessions {
		l.tabs = append(l.tabs, t)
	}
	l.mu.Unlock()

	in.LettingGo(x, t)
	if _, err := x.Call(ctx, "chrome.debugger.detach", cdp.Debuggee(t.Id, "")); err != nil {
		in.Log.Debug("stop: detach", "tab", t.Id, "err", err)
	}
	forgetBrakes(in, t.Id)
	in.Lock()
	if t.State == core.TabDetaching {
		t.SetState(core.TabDetached, nil)
	}
	in.Unlock()
	r.Err = attach.Tab(ctx, in, x, t)
	if r.Err == nil && scaled {
		if _, err := x.SendCommand(ctx, t.Id, "", "Emulation.resetPageScaleFactor", nil); err != nil {
			in.Log.Debug("stop: page scale", "tab", t.Id, "err", err)
		}
	}

	st = in.Lock()
	done := t.Resuming
	t.Resuming = nil
	if r.Err != nil && st.Shared(t) {
		why := "the automation's sessions on the tab could not be kept after the Stop: " + r.Err.Error()
		st.DropSessions(t, why)
		t.DetachReason = why
	}
	in.Unlock()
	if done != nil {
		close(done)
	}
	if r.Err == nil {
		core.NotifyHandles(hs, api.TabEvent{Method: api.EventAttached})
	}
	if r.Err != nil && attach.TabGone(r.Err) {
		core.FailTab(x, t.Id)
	}
	return r
}

// keptNames lists the methods of what a tab's sessions set, once each.
func keptNames(kept []replay.Cmd) []string {
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
func afterResume(in *core.Instance, st *core.State, x core.Upstream) {
	l := &instSlot.Of(in).lifting
	l.mu.Lock()
	tabs := l.tabs
	l.tabs = nil
	l.mu.Unlock()
	for _, t := range tabs {
		if !st.Shared(t) || t.State != core.TabAttached || t.Resuming != nil || t.Session == nil || x == nil {
			continue
		}
		t.Resuming = make(chan struct{})
		in.Tasks.Spawn("set again what the automation had set", func() {
			ctx, cancel := context.WithTimeout(context.Background(), core.ResumeWait)
			defer cancel()
			err := away.Replay(ctx, in, x, t, false) // the same document: its scripts ran
			in.Lock()
			done := t.Resuming
			t.Resuming = nil
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
func awaitLifting(in *core.Instance) {
	l := &instSlot.Of(in).lifting
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
