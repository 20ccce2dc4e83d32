package core

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/methods"
	"github.com/cdprelay/cdprelay/relay/internal/replay"
)

// The replay: what a client's sessions set on a tab that a resume sets
// again (relay/internal/away, and a person's Resume after a Stop) is
// recorded as the commands go out (Tab.Replay, a replay.Record: send.go),
// and sent again, judged as the client's own commands are (Replay).

// ResumeWait bounds a resume. A tab is resumed at most maxResumes times
// in resumeWindow: an extension that puts its frame back as soon as it is
// removed would make it a loop.
const (
	ResumeWait   = 5 * time.Second
	maxResumes   = 5
	resumeWindow = 10 * time.Second
	// resumeSoon: a resume this soon after the previous one was caused by
	// the previous one's replay. Emulated focus, set again, gives the page
	// focus, and a focused password field brings its menu back; so then
	// focus is not emulated again.
	resumeSoon = time.Second
)

// MayResume reports whether t may be resumed once more now, and records
// the resume.
func (t *Tab) MayResume(now time.Time) bool {
	recent := t.resumes[:0]
	for _, at := range t.resumes {
		if now.Sub(at) < resumeWindow {
			recent = append(recent, at)
		}
	}
	t.resumes = recent
	if len(t.resumes) >= maxResumes {
		return false
	}
	t.resumes = append(t.resumes, now)
	return true
}

// resumedSoon reports whether the resume under way came right after the
// one before it.
func (t *Tab) resumedSoon() bool {
	n := len(t.resumes)
	return n >= 2 && t.resumes[n-1].Sub(t.resumes[n-2]) < resumeSoon
}

// tapScript notes the identifier Chrome gave a client's init script.
func (in *Instance) tapScript(t *Tab, key string) func([]byte) {
	return func(result []byte) {
		id := string(wire.StringField(result, "identifier"))
		in.Lock()
		t.Replay.Noted(key, id)
		in.Unlock()
	}
}

// Replay sends again what the sessions of t had set, in order. Each
// command is judged again as the pipeline judges a client's (decide:
// policy and access as they are now, an ask refusing it) and its params
// rewritten by the fence as a client's are: a reload of the policy, or the
// tab's being somewhere automation may do less, since the command was
// first sent is not gone around. What they refuse is not sent again, and
// the client is told why.
//
// fresh: the tab shows another document than the one the scripts for new
// documents last ran in (relay/internal/away), so they run in it now, as they would
// have had the debugger been there when it loaded.
func (in *Instance) Replay(ctx context.Context, x Upstream, t *Tab, fresh bool) error {
	st := in.Lock()
	cmds := append([]replay.Cmd(nil), t.Replay.Cmds...)
	soon := t.resumedSoon()
	c, s := st.Client, t.Session
	in.Unlock()
	if c == nil || s == nil {
		return nil // nobody's sessions to resume
	}
	ids := map[string]string{}
	for _, r := range cmds {
		if soon && r.Method == "Emulation.setFocusEmulationEnabled" {
			continue
		}
		if r.Method == "Page.addScriptToEvaluateOnNewDocument" && in.HasTiers() && !InitRunsNothing(r.Params) {
			continue // the tiers' own to put back, where it may run (initscripts.go)
		}
		if fresh && r.Method == "Page.addScriptToEvaluateOnNewDocument" {
			r.Params = runNow(r.Params)
		}
		k, ok := c.JudgeReplayed(t, s, r)
		if !ok {
			continue
		}
		var p any
		if len(k.Params) > 0 {
			p = json.RawMessage(k.Params)
		}
		res, err := x.SendCommand(ctx, t.Id, "", k.M.Name, p)
		if err != nil {
			if ctx.Err() != nil || TabGone(err) {
				return err
			}
			// What Chrome refuses now it would have refused before.
			continue
		}
		if r.Script() != "" {
			ids[r.Script()] = string(wire.StringField(res, "identifier"))
		}
	}
	st = in.Lock()
	if in.HasTiers() {
		// The tab's scripts went with the old attach: put back those that
		// may run where it is now.
		for _, sc := range t.Scripts {
			if sc.Child == nil {
				sc.Real, sc.Adding = "", false
			}
		}
		st.SyncScripts(t)
	} else {
		// Set again in order above: the scripts the relay keeps (for a
		// person's take-over, initscripts.go) are Chrome's new ones.
		for _, sc := range t.Scripts {
			if now, ok := ids[sc.Client]; ok && sc.Child == nil {
				sc.Real, sc.Adding = now, false
			}
		}
		st.SyncScripts(t)
	}
	t.Replay.Renamed(ids)
	in.Unlock()
	return nil
}

// JudgeReplayed runs kept command r of tab t (whose top-level session s
// carries it) through the judging stages and then the rows that act on the
// relay's own commands (CmdStage.Replays: the fence's rewrite). It
// returns the command as it is to be sent, or false when a stage refused
// it: then the refusal is counted and audited as a client command's, and
// the tab's sessions are told.
func (c *ClientConn) JudgeReplayed(t *Tab, s *Session, r replay.Cmd) (*Cmd, bool) {
	k := &Cmd{Env: wire.Envelope{Method: []byte(r.Method), Params: r.Params}, Own: true}
	k.M, k.Params, k.Policy = LookupMethod(k.Env.Method), r.Params, c.Inst.policyNow()
	c.Inst.Lock()
	k.Route = route{Sess: s, ReplyTo: s, Via: s, Tab: t, Acc: t.Acc, Top: true}
	c.Inst.Unlock()
	if err := methods.ArgsOf(k.M, k.Params, &k.Args); err != nil {
		c.Failed(k, CodeInvalidParams, err.Error())
		k.Out.d.Message = "cdprelay: " + err.Error()
	} else if c.decide(k) {
		// What acts on the relay's own commands (on a fenced tab,
		// Fetch.enable goes with the backstop's pattern).
		c.runCommand(k, k.M.Plan&replayStages)
		return k, true
	}
	if k.Out.Kind == OutEmulated {
		return k, false // kept by the access stage, for when the tab may have it (a blind tab's settings)
	}
	st := c.Inst.Lock()
	st.WarnSessions(t, r.Method+" was not set again on the tab after it was attached again: "+strings.TrimPrefix(k.Out.d.Message, "cdprelay: "))
	c.Inst.Unlock()
	c.observe(k)
	return k, false
}

// awaitResume waits while a tab is being resumed (until done closes), or
// either context ends: the client's, or the run a person's Stop ends.
func awaitResume(ctx, run context.Context, done <-chan struct{}) {
	select {
	case <-done:
	case <-ctx.Done():
	case <-run.Done():
	}
}

// forgetReplay forgets what a resume would set again: the client's
// sessions on t have ended, and the next ones set their own.
func (t *Tab) forgetReplay() { t.Replay.Forget() }

// runNow is the params of a script for new documents, set again, with
// runImmediately: it runs in the document the tab shows too (and creates
// the isolated world it names there).
func runNow(params []byte) []byte {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p == nil {
		return params
	}
	p["runImmediately"] = json.RawMessage("true")
	b, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return b
}
