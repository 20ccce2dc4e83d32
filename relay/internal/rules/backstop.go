package rules

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/methods"
	"github.com/cdprelay/cdprelay/relay/internal/navhold"
	"github.com/cdprelay/cdprelay/relay/internal/origins"
)

// The navigation backstop. The command fence sees Page.navigate and
// Target.createTarget, not a link click, location.href from an
// evaluation, a 30x redirect or a form post. When the policy can refuse a
// host, has tiers or asks about hosts (core.Instance.Fencing), the relay
// enables the Fetch domain on each tab's session (and each out-of-process
// frame's) for Document requests: it fails the disallowed ones as
// blocked-by-client before they leave the browser, and leaves the others
// to the core, which holds them while the client's settings are lifted
// for where they go or a person is asked (navhold.Document).
// Requests of every type to the relay's own origins are paused and failed
// whatever the policy (package origins).
//
// The Fetch setup of a tab's sessions is this stage's (fetch.go's
// FetchState, in the tab's slot below), under the instance's mutex. Its
// share of a tab's life (Backstop, core.AddLifecycle): enabled as the
// debugger attaches, before anything else is sent; forgotten with the
// debugger and with a child session; brought in line with the policy when
// it changes.

// fenceTab is what the backstop keeps of a tab: the Fetch configuration of
// its sessions ("" for the tab's own, else a child's id). Chrome forgets it
// on detach, and so does the stage. Guarded by the instance's mutex.
type fenceTab struct {
	fetch map[string]*FetchState
}

var fenceSlot = core.NewTabSlot[fenceTab]()

// Backstop is the backstop's share of a tab's life and of the policy.
func Backstop() core.Lifecycle {
	return core.Lifecycle{
		Attaching:       attaching,
		DetachedLocked:  func(t *core.Tab) { fenceSlot.Of(t).fetch = nil },
		ChildGoneLocked: func(t *core.Tab, cs *core.Session) { delete(fenceSlot.Of(t).fetch, cs.Id) },
		PolicyChanged:   refreshFences,
	}
}

// Answers is the backstop's answer to the core (core.Services.Backstop).
func Answers() core.Backstop {
	return core.Backstop{
		Fences:   func(in *core.Instance) bool { return in.Srv.PolicyBox.Load().FencesNavigation(in.ProfileName) },
		OnLocked: func(t *core.Tab) bool { return fenced(t, "") },
	}
}

// fenced reports whether the backstop is on for t's session sid.
func fenced(t *core.Tab, sid string) bool {
	fs := fenceSlot.Of(t).fetch[sid]
	return fs != nil && fs.Fence
}

// patternsOf returns the relay's Fetch patterns for in's sessions: every
// Document request when the policy fences navigations, and every request
// to the relay's own origins. Nil: no backstop.
func patternsOf(in *core.Instance) []cdp.FetchPattern {
	pats := in.Srv.Own.FetchPatterns()
	if in.Fencing() {
		pats = append([]cdp.FetchPattern{FencePattern}, pats...)
	}
	return pats
}

// fetchOf returns the Fetch state of t's session sid ("" for the tab's
// own), creating it.
func fetchOf(t *core.Tab, sid string) *FetchState {
	f := fenceSlot.Of(t)
	if f.fetch == nil {
		f.fetch = make(map[string]*FetchState)
	}
	fs := f.fetch[sid]
	if fs == nil {
		fs = &FetchState{}
		f.fetch[sid] = fs
	}
	return fs
}

// attaching puts the backstop in place on a tab being attached, before
// anything else (the wait for a popup's first commit included). Its state
// is recorded before the Fetch.enable goes out, so that a request Chrome
// pauses at once is judged, not left paused.
func attaching(ctx context.Context, in *core.Instance, x core.Upstream, t *core.Tab) error {
	pats := patternsOf(in)
	if len(pats) == 0 {
		return nil
	}
	in.Lock()
	fs := fetchOf(t, "")
	fs.Fence, fs.Patterns = true, pats
	in.Unlock()
	if _, err := x.SendCommand(ctx, t.Id, "", "Fetch.enable", FetchParams(pats, nil)); err != nil {
		return fmt.Errorf("navigation fence on tab %d: %w", t.Id, err)
	}
	return nil
}

// WantsFence reports whether m is the client's share of the Fetch domain.
func WantsFence(m *core.MethodInfo) bool {
	return m.Name == "Fetch.enable" || m.Name == "Fetch.disable"
}

// Fence (rules.Fence): on a fenced session the client's Fetch.enable and
// Fetch.disable become one Fetch.enable that keeps the backstop's pattern,
// whichever session sent them (before the emulation, which would watch
// them as a domain switch). It acts on a resume's replay too
// (core.CmdStage.Replays): the replay sends what it leaves in k.
func Fence(c *core.ClientConn, k *core.Cmd) bool {
	via := k.Route.Via
	if via == nil {
		return true
	}
	sid := ""
	if via.Child {
		sid = via.Id
	}
	enable := k.M.Name == "Fetch.enable"
	in := c.Inst
	in.Lock()
	t := k.Route.Tab
	if !fenced(t, sid) {
		in.Unlock()
		return true
	}
	if enable {
		// A further session on the tab gets the pauses too, as it would
		// through the ordinary domain switch.
		if s := k.Route.ReplyTo; s != nil && !s.Child && s.Tab != nil {
			if s.Enabled == nil {
				s.Enabled = make(map[string]bool)
			}
			s.Enabled["Fetch"] = true
		}
	}
	k.Params = fetchOf(t, sid).Rewrite(k.Args.Patterns, k.Args.HandleAuth, enable)
	if k.Route.Top && !k.Own {
		t.Replay.Switch("Fetch", enable, k.Env.Params)
	}
	in.Unlock()
	if k.Own {
		k.M = methods.FetchEnable // sent by the replay, as rewritten
		return false
	}
	c.SendAs(k, methods.FetchEnable)
	return false
}

// Pause (rules.Backstop): the backstop sees a paused request first. It
// fails what the fence refuses, leaves what the core holds to the core,
// continues its own pauses, and lets the client have the request only when
// the client's own patterns asked for it. What it sends goes once the lock
// is released (core.State.Fire).
func Pause(in *core.Instance, e *core.EventMsg) bool {
	if fenceSlot.Of(e.Tab).fetch == nil {
		return true
	}
	return !judgePaused(e.State, e.Tab, string(e.Sid), e.Params)
}

// judgePaused decides a Fetch.requestPaused on t's session sid and carries
// the decision out. It reports whether the relay answered the request
// (the client does not get it).
func judgePaused(st *core.State, t *core.Tab, sid string, params []byte) bool {
	fs := fenceSlot.Of(t).fetch[sid]
	if fs == nil || !fs.Fence {
		return false
	}
	var p api.PausedRequest
	if json.Unmarshal(params, &p) != nil || p.RequestID == "" {
		return false
	}
	var cf *ClientFetch
	if fs.Client != nil && st.Client != nil {
		cf = fs.Client
	}
	responseStage := p.ResponseStatusCode != nil || p.ResponseErrorReason != ""
	wants := cf != nil && t.Acc.Level != api.Blind && cf.Matches(p.Request.URL, p.ResourceType, responseStage)
	in := st.Inst
	if in.Srv.OwnURL(p.Request.URL) {
		failPaused(st, t, sid, &p, origins.Refusal(p.Request.URL))
		return true
	}
	if !responseStage && p.ResourceType == "Document" {
		if d := in.Srv.PolicyBox.Load().URL(in.ProfileName, p.Request.URL); d.Verdict != core.Allow {
			failPaused(st, t, sid, &p, d)
			return true
		}
		if navhold.Document(st, t, sid, &p, wants) {
			return true
		}
	}
	if wants {
		return false
	}
	st.Fire(t.Id, sid, "Fetch.continueRequest", map[string]string{"requestId": p.RequestID})
	return true
}

// failPaused fails a paused request the fence refuses, as blocked by the
// client, and records the refusal.
func failPaused(st *core.State, t *core.Tab, sid string, p *api.PausedRequest, d core.Decision) {
	st.Fire(t.Id, sid, "Fetch.failRequest", map[string]string{"requestId": p.RequestID, "errorReason": "BlockedByClient"})
	st.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindNavigate, Target: t.TargetID, Rule: d.Rule, Outcome: api.OutcomeDenied, Detail: p.Request.URL})
	st.Inst.Srv.Cfg.Metrics.CountRefusal(d)
}

// FenceChild (rules.FenceChild): an out-of-process frame navigates
// through its own session: fence it too, before the client (or the relay)
// resumes it. The Fetch.enable is queued under the lock, ahead of
// anything the event leaves to do after it.
func FenceChild(in *core.Instance, e *core.EventMsg) bool {
	if e.NewChild == nil || string(core.ChildType(e)) != "iframe" {
		return true
	}
	pats := patternsOf(in)
	if len(pats) == 0 {
		return true
	}
	fs := fetchOf(e.Tab, e.NewChild.Id)
	if !fs.Fence {
		fs.Fence, fs.Patterns = true, pats
		e.State.Fire(e.Tab.Id, e.NewChild.Id, "Fetch.enable", FetchParams(pats, fs.Client))
	}
	return true
}

// refreshFences brings every attached tab's own session in line with the
// policy (and the relay's own origins) after it changed: the backstop goes
// on where it is now needed, off where it no longer is, and changes its
// patterns where they changed, keeping the client's own Fetch patterns.
func refreshFences(s *core.Relay) {
	for _, in := range s.Instances() {
		want := patternsOf(in)
		st := in.Lock()
		for _, t := range st.Tabs {
			if t.State != core.TabAttached {
				continue
			}
			fs := fenceSlot.Of(t).fetch[""]
			if fs == nil && len(want) == 0 || fs != nil && slices.Equal(fs.Patterns, want) && fs.Fence == (len(want) > 0) {
				continue
			}
			fs = fetchOf(t, "")
			fs.Fence, fs.Patterns = len(want) > 0, want
			params := FetchParams(want, fs.Client)
			if len(params["patterns"].([]cdp.FetchPattern)) == 0 {
				st.Fire(t.Id, "", "Fetch.disable", nil)
			} else {
				st.Fire(t.Id, "", "Fetch.enable", params)
			}
		}
		in.Unlock()
	}
}
