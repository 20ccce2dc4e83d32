package person

import (
	"strconv"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/lines"
	"github.com/cdprelay/cdprelay/relay/internal/switches"
)

// Stop and Resume: the person's brake on a whole instance.
//
// Stopped, an instance refuses every command of its automation with
// api.MsgStopped, and every command that was still waiting for the browser
// fails at once with the same error: the relay's pending replies are
// failed, emulated commands are cancelled, held commands are denied. The
// client stays connected and keeps receiving events. What the automation
// started and set in the tabs is undone (stopundo.go): script that keeps
// a page busy is ended, and its settings are dropped (Resume sets them
// again). While stopped, the relay lets the page go on by itself where
// the automation would have had to answer: it continues the requests the
// client's interception would have paused and resumes the frames that
// wait for a debugger.

// AuthorityHooks is what the person's stage does for the person
// (core.Services.Authority): the Stop and Resume, taking over a tab, and asking
// the person and carrying out their answer.
func AuthorityHooks() core.Authority {
	return core.Authority{Stop: Stop, Resume: Resume, Control: Control,
		AsksNavigation: asksNavigation, AskNavigationLocked: askNavigation, TakeNavAsksLocked: takeNavAsks,
		Answer: answer, UnaskLocked: unask, ApprovalsLocked: approvalsStatus}
}

// Stop stops the instance's automation on behalf of by (a viewer's or a
// token's name).
func Stop(in *core.Instance, by string) error {
	if in.Wedged.Load() {
		return api.ErrWedged
	}
	if by == "" {
		by = "a person"
	}
	st := in.Lock()
	if st.StoppedBy != "" {
		in.Unlock()
		return api.ErrStopped
	}
	st.StoppedBy = by
	st.StoppedAt = time.Now()
	st.RefusedStopped = 0
	in.IsStopped.Store(true)
	in.StopEpoch.Add(1)
	if st.RunCancel != nil {
		st.RunCancel() // emulated commands under way give up
	}
	c := st.Client
	x := st.Ext
	takeNavAsks(st, api.AnswerStopped) // the navigations waiting for a person fail
	held := lines.Take(st, nil)
	tellStopped(in, st, true, by)
	// A page the automation holds paused in the debugger goes on: nobody
	// may resume it while stopped. (Chrome answers an error where the
	// debugger is not on; nobody waits for it.)
	resumed := map[[2]string]bool{}
	for _, s := range st.Sessions {
		if s.Tab == nil || !st.Live(s) {
			continue
		}
		sid := ""
		if s.Child {
			sid = s.Id
		}
		if k := [2]string{strconv.FormatInt(s.Tab.Id, 10), sid}; !resumed[k] {
			resumed[k] = true
			st.Fire(s.Tab.Id, sid, "Debugger.resume", nil)
		}
	}
	st.Notify()
	in.Unlock()

	failed := 0
	if x != nil && c != nil {
		failed = failStopped(x, c)
	}
	startLifting(in, x, by)
	for _, h := range held {
		lines.Answer(h, lines.Stopped, by)
	}
	in.Srv.Cfg.Metrics.Stops.Inc()
	in.Observe(core.Event{Actor: api.ActorViewer, Kind: api.KindStop, Outcome: api.OutcomeOK, By: by,
		Detail: "stopped by " + by + "; " + strconv.Itoa(failed+len(held)) + " commands under way failed"})
	return nil
}

// Resume lets the instance's automation go on.
func Resume(in *core.Instance, by string) error {
	if in.Wedged.Load() {
		return api.ErrWedged
	}
	if by == "" {
		by = "a person"
	}
	awaitLifting(in)
	st := in.Lock()
	if st.StoppedBy == "" {
		in.Unlock()
		return api.ErrNotStopped
	}
	// What the Stop lifted is set again before the client's commands for
	// its tabs go on (stopundo.go).
	afterResume(in, st, st.Ext)
	st.StoppedBy = ""
	// The client's view of the contexts, frozen while stopped, is brought
	// up to date before its commands go through again.
	switches.ResyncContexts(st)
	refused, since := st.RefusedStopped, st.StoppedAt
	in.IsStopped.Store(false)
	st.NewRunContext()
	st.ResumeLifts()
	tellStopped(in, st, false, by)
	st.Notify()
	in.Unlock()
	in.Observe(core.Event{Actor: api.ActorViewer, Kind: api.KindResume, Outcome: api.OutcomeOK, By: by,
		Detail: "resumed by " + by + " after " + time.Since(since).Round(time.Millisecond).String() + "; " + strconv.FormatInt(refused, 10) + " commands refused while stopped"})
	return nil
}

// tellStopped tells the client on its root and every session it has: a
// warning in the log and a CDPRelay.stopped event.
func tellStopped(in *core.Instance, st *core.State, stopped bool, by string) {
	c := st.Client
	if c == nil {
		return
	}
	text := "cdprelay: " + by + " resumed the automation"
	if stopped {
		text = api.MsgStopped + " (" + by + "); every command is refused until they resume it"
	}
	ts := float64(time.Now().UnixMilli())
	tell := func(s *core.Session) {
		c.Event("Log.entryAdded", s, map[string]any{"entry": map[string]any{
			"source": "other", "level": "warning", "text": text, "timestamp": ts,
		}})
		c.Event("CDPRelay.stopped", s, map[string]any{"stopped": stopped, "by": by})
	}
	if c.Page == nil {
		tell(nil)
	}
	for _, s := range st.Sessions {
		if s.Tab != nil && s.Tab.Acc.Level == api.Blind {
			continue // nothing of a blind tab reaches the client
		}
		if st.Live(s) {
			tell(s)
		}
	}
}

// failStopped fails every command of c waiting for the browser. It
// reports how many it failed. The script they run is ended with the rest
// of what the automation started (stopundo.go).
func failStopped(x core.Upstream, c *core.ClientConn) int {
	return core.FailWhere(x, func(pc core.PendingCall) bool { return pc.Client == c }, core.CodeServerError, api.MsgStopped)
}
