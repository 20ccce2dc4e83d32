package core

import (
	"strconv"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// Stop and Resume: the person's brake on a whole instance.
//
// Stopped, an instance refuses every command of its automation with
// msgStopped, and every command that was still waiting for the browser
// fails at once with the same error: the relay's pending replies are
// failed, emulated commands are cancelled, held commands are denied. The
// client stays connected and keeps receiving events. What the automation
// started and set in the tabs is undone (stopundo.go): script that keeps
// a page busy is ended, and its settings are dropped (Resume sets them
// again). While stopped, the relay lets the page go on by itself where
// the automation would have had to answer: it continues the requests the
// client's interception would have paused and resumes the frames that
// wait for a debugger.

// ErrStopped and ErrNotStopped answer a Stop or Resume that changes
// nothing.
var (
	ErrStopped    = api.ErrStopped
	ErrNotStopped = api.ErrNotStopped
)

// Stopped reports whether the instance's automation is stopped, and who
// stopped it.
func (in *Instance) Stopped() (bool, string) {
	if in.Wedged.Load() {
		return false, ""
	}
	st := in.Lock()
	defer in.Unlock()
	return st.stoppedBy != "", st.stoppedBy
}

// Stop stops the instance's automation on behalf of by (a viewer's or a
// token's name).
func (in *Instance) Stop(by string) error {
	if in.Wedged.Load() {
		return ErrWedged
	}
	if by == "" {
		by = "a person"
	}
	st := in.Lock()
	if st.stoppedBy != "" {
		in.Unlock()
		return ErrStopped
	}
	st.stoppedBy = by
	st.stoppedAt = time.Now()
	st.refusedStopped = 0
	in.stopped.Store(true)
	in.stopEpoch.Add(1)
	if st.runCancel != nil {
		st.runCancel() // emulated commands under way give up
	}
	c := st.Client
	x := st.Ext
	held := st.takeHeld(nil)
	in.tellStopped(st, true, by)
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
		failed = x.failStopped(c)
	}
	in.startLifting(x, by)
	for _, h := range held {
		h.answer(heldStopped, by)
	}
	in.Srv.Cfg.Metrics.stops.Inc()
	in.Observe(Event{Actor: ActorViewer, Kind: KindStop, Outcome: OutcomeOK, By: by,
		Detail: "stopped by " + by + "; " + strconv.Itoa(failed+len(held)) + " commands under way failed"})
	return nil
}

// Resume lets the instance's automation go on.
func (in *Instance) Resume(by string) error {
	if in.Wedged.Load() {
		return ErrWedged
	}
	if by == "" {
		by = "a person"
	}
	in.awaitLifting()
	st := in.Lock()
	if st.stoppedBy == "" {
		in.Unlock()
		return ErrNotStopped
	}
	// What the Stop lifted is set again before the client's commands for
	// its tabs go on (stopundo.go).
	in.afterResume(st, st.Ext)
	st.stoppedBy = ""
	refused, since := st.refusedStopped, st.stoppedAt
	in.stopped.Store(false)
	st.newRunContext()
	st.resumeLifts()
	in.tellStopped(st, false, by)
	st.Notify()
	in.Unlock()
	in.Observe(Event{Actor: ActorViewer, Kind: KindResume, Outcome: OutcomeOK, By: by,
		Detail: "resumed by " + by + " after " + time.Since(since).Round(time.Millisecond).String() + "; " + strconv.FormatInt(refused, 10) + " commands refused while stopped"})
	return nil
}

// tellStopped tells the client on its root and every session it has: a
// warning in the log and a CDPRelay.stopped event.
func (in *Instance) tellStopped(st *State, stopped bool, by string) {
	c := st.Client
	if c == nil {
		return
	}
	text := "cdprelay: " + by + " resumed the automation"
	if stopped {
		text = MsgStopped + " (" + by + "); every command is refused until they resume it"
	}
	ts := float64(time.Now().UnixMilli())
	tell := func(s *Session) {
		c.Event("Log.entryAdded", s, map[string]any{"entry": map[string]any{
			"source": "other", "level": "warning", "text": text, "timestamp": ts,
		}})
		c.Event("CDPRelay.stopped", s, map[string]any{"stopped": stopped, "by": by})
	}
	if c.page == nil {
		tell(nil)
	}
	for _, s := range st.Sessions {
		if s.Tab != nil && s.Tab.Acc.Level == AccessBlind {
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
func (x *ExtConn) failStopped(c *ClientConn) int {
	return x.failWhere(func(pc PendingCall) bool { return pc.Client == c }, CodeServerError, MsgStopped)
}
