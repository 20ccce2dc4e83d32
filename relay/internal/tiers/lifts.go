package tiers

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/navhold"
	"github.com/cdprelay/cdprelay/relay/internal/replay"
)

// Lifting the client's settings for a stricter page, taking its scripts
// for new documents out of one, and putting both back (core.Tiers: the
// core calls these, with the lock held, when what decides them changed).
// Which settings are lifted where is package access's table (access.Lift);
// what the relay keeps of them, and counts until Chrome has answered, is
// in the core's tier slots (Tab.Lift, Session.Lift, Session.Kept,
// Tab.Scripts) and in this stage's (the deferred settings), because the core holds a navigation into a
// stricter page until they are answered (package navhold).
//
// When where the tab or frame is, or is on its way to, changes its access,
// the commands that take out what may not act there, or put back what may
// again, go to Chrome in the order the client made them. Each is counted
// in the owner's LiftState until Chrome has answered it (package navhold's
// LiftOver); a navigation into a stricter page that the navigation
// backstop pauses meanwhile is cancelled and sent again once every one is
// answered (package navhold), so that the stricter page's document commits
// without them, however the tab got there.
//
// A setting is lifted by the site's tier, not by a person's hold: a person
// who takes a tab over sees it as the automation set it up. The client's
// scripts for new documents are taken out on a hold too (worldscripts.go
// says why).

// syncSettings brings what Chrome has of t's settings (cs nil) or child
// session cs's in line with where it is, or is on its way to.
func syncSettings(st *core.State, t *core.Tab, cs *core.Session) {
	if cs == nil {
		syncLiftsOf(st, t, "", &t.Lift, t.Replay.Cmds, core.SiteLevel(t.Acc))
		return
	}
	syncLiftsOf(st, t, cs.Id, &cs.Lift, cs.Kept, cs.Acc.Level)
}

func syncLiftsOf(st *core.State, t *core.Tab, sid string, ls *core.LiftState, kept []replay.Cmd, want core.Access) {
	was := ls.Level
	if want == was || st.Ext == nil {
		// Without an extension nothing is in Chrome: what is set again
		// once it is back is the resume's or a new attach's.
		ls.Level = want
		return
	}
	if st.Inst.IsStopped.Load() && want < was {
		// Nothing of the automation's is set again while a person stopped
		// it: put back on Resume (core.State.ResumeLifts).
		return
	}
	ls.Level = want
	for _, r := range kept {
		rule, ok := access.Lift(r.Method)
		if !ok {
			continue
		}
		on, off := was >= rule.At, want >= rule.At
		switch {
		case off && !on:
			m, p := rule.Undo(r.Params)
			fireLift(st, t, ls, rule.At == api.ReadOnly, sid, m, p)
		case on && !off:
			var p any
			if len(r.Params) > 0 {
				p = json.RawMessage(r.Params)
			}
			fireLift(st, t, ls, false, sid, r.Method, p)
		}
	}
}

// fireLift sends a command that lifts or puts back a setting of t's, and
// counts it in ls until Chrome has answered.
func fireLift(st *core.State, t *core.Tab, ls *core.LiftState, critical bool, sid, method string, params any) {
	ls.Pending++
	if critical {
		ls.Critical++
	}
	in := st.Inst
	st.FireThen(t.Id, sid, method, params, func() {
		in.Lock()
		navhold.LiftOver(&in.St, ls, critical)
		in.Unlock()
	})
}

// applyDeferred applies the settings t acknowledged while it was blind,
// in the order they were made.
func applyDeferred(st *core.State, t *core.Tab) {
	if st.Inst.IsStopped.Load() {
		return // nothing of the automation's is set while a person stopped it
	}
	tt := tabSlot.Of(t)
	for _, d := range tt.deferred {
		var p any
		if len(d.params) > 0 {
			p = json.RawMessage(d.params)
		}
		// Kept as if the client had made it now: a resume sets it again,
		// and the tiers lift it again.
		t.Replay.Add(core.LookupMethod([]byte(d.method)).Replay, d.method, d.params)
		fireLift(st, t, &t.Lift, false, "", d.method, p)
	}
	tt.deferred = nil
}

// scriptFull reports whether sc may run where its frame is going.
func scriptFull(t *core.Tab, sc *core.InitScript) bool {
	if sc.Child != nil {
		return sc.Child.Acc.Level == api.Full
	}
	// The tab's scripts run in the frames of its process too: not while
	// one is on its way to a site that is not full.
	return t.Acc.Level == api.Full && len(t.BlindFrames) == 0
}

// syncScripts takes out of Chrome the scripts of t whose frame is on its
// way to a site that is not full, and puts back the others.
func syncScripts(st *core.State, t *core.Tab) {
	kept := t.Scripts[:0]
	for _, sc := range t.Scripts {
		if sc.Child != nil && !st.Live(sc.Child) {
			continue // the frame's session is gone, and its scripts with it
		}
		kept = append(kept, sc)
		switch full := scriptFull(t, sc); {
		case !full && sc.Real != "":
			fireLift(st, t, scriptLift(t, sc), true, sc.Sid, "Page.removeScriptToEvaluateOnNewDocument", map[string]string{"identifier": sc.Real})
			sc.Real = ""
		case full && sc.Real == "" && !sc.Adding && st.Ext != nil && st.StoppedBy == "":
			// (While stopped, none of the client's scripts goes back:
			// person's stopundo.go; Resume puts them back.)
			sc.Adding = true
			ls := scriptLift(t, sc)
			ls.Pending++ // answered when it is back (putScriptBack)
			putScriptBack(st.Inst, st.Ext, t, sc, ls)
		}
	}
	clear(t.Scripts[len(kept):])
	t.Scripts = kept
}

// scriptLift is the lift state a script's removal and return count in:
// its frame session's, or its tab's.
func scriptLift(t *core.Tab, sc *core.InitScript) *core.LiftState {
	if sc.Child != nil {
		return &sc.Child.Lift
	}
	return &t.Lift
}

// putScriptBack adds sc to Chrome again, off the lock, and counts it
// answered in ls once Chrome has.
func putScriptBack(in *core.Instance, x core.Upstream, t *core.Tab, sc *core.InitScript, ls *core.LiftState) {
	in.Tasks.Spawn("init script", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := x.SendCommand(ctx, t.Id, sc.Sid, "Page.addScriptToEvaluateOnNewDocument", json.RawMessage(sc.Params))
		st := in.Lock()
		defer in.Unlock()
		defer navhold.LiftOver(st, ls, false)
		sc.Adding = false
		if err != nil {
			return
		}
		id := string(wire.StringField(res, "identifier"))
		if id == "" {
			return
		}
		sc.Real = id
		tracked := false
		for _, o := range t.Scripts {
			tracked = tracked || o == sc
		}
		if !tracked || !scriptFull(t, sc) {
			// Removed by the client, or gone somewhere not full again
			// while it was being added.
			fireLift(st, t, ls, true, sc.Sid, "Page.removeScriptToEvaluateOnNewDocument", map[string]string{"identifier": id})
			sc.Real = ""
		}
	})
}
