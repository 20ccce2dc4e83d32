package away

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/attach"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/replay"
)

// The replay of what a client's sessions had set on a tab (core.Tab.Replay,
// recorded as the commands went out), sent again when the tab is resumed:
// here (resume.go), and by a person's Resume after a Stop.

// A tab is resumed at most maxResumes times in resumeWindow: an
// extension that puts its frame back as soon as it is removed would make
// it a loop. (core.ResumeWait bounds one resume.)
const (
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
func MayResume(t *core.Tab, now time.Time) bool {
	recent := t.Resumes[:0]
	for _, at := range t.Resumes {
		if now.Sub(at) < resumeWindow {
			recent = append(recent, at)
		}
	}
	t.Resumes = recent
	if len(t.Resumes) >= maxResumes {
		return false
	}
	t.Resumes = append(t.Resumes, now)
	return true
}

// resumedSoon reports whether the resume under way came right after the
// one before it.
func resumedSoon(t *core.Tab) bool {
	n := len(t.Resumes)
	return n >= 2 && t.Resumes[n-1].Sub(t.Resumes[n-2]) < resumeSoon
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
// documents last ran in (document.go), so they run in it now, as they
// would have had the debugger been there when it loaded.
func Replay(ctx context.Context, in *core.Instance, x core.Upstream, t *core.Tab, fresh bool) error {
	st := in.Lock()
	cmds := append([]replay.Cmd(nil), t.Replay.Cmds...)
	soon := resumedSoon(t)
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
		if r.Method == "Page.addScriptToEvaluateOnNewDocument" && in.HasTiers() && !core.InitRunsNothing(r.Params) {
			continue // the tiers' own to put back, where it may run (the tiers' worldscripts.go)
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
			if ctx.Err() != nil || attach.TabGone(err) {
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
		// person's take-over, the tiers' worldscripts.go) are Chrome's new ones.
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
