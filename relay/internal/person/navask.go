package person

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/navhold"
)

// What the policy asks a person besides a command (core.Authority): where
// a navigation ends (ask_domains; package navhold holds the document
// request while the person is asked), and a submit
// (api.Asker.AsksSubmit: asks.go).
//
// Asking where a navigation ends. ask_domains holds a client's
// Page.navigate or Target.createTarget to an asked host for a person's
// approval (asks.go); but a tab reaches a host by other ways too: a
// redirect of a URL that was not asked about, a link, a script, a form,
// a Refresh. So the navigation backstop asks too, of every document
// request of a tab's main frame that takes the tab to an asked host from
// another one: the request stays paused while the person is asked, goes
// on if they approve, and is cancelled (the tab stays on the page it was
// on) if they deny or nobody answers within the approval timeout, or the
// automation is stopped or its client leaves.
//
// Not asked again: a navigation a person already approved (the command
// that started it, until a document commits), the person's own navigation
// from the live view, a navigation within the host the tab is on, and
// every navigation while a person holds the tab or no client is
// connected.

// asksNavigation reports whether in's policy asks about the hosts
// navigations go to.
func asksNavigation(in *core.Instance) bool {
	na, ok := in.Srv.PolicyBox.Load().(api.NavigationAsker)
	return ok && na.AsksNavigation(in.ProfileName)
}

// navigationAsk decides whether a document request of t's main frame to
// url is asked, and with what. Not asked: while no client is connected, a
// person holds the tab or the automation is stopped (nobody is there to
// ask for, or the person acts themselves); within the host the tab is on;
// to the host a person approved a navigation to.
func navigationAsk(st *core.State, t *core.Tab, url string) (core.Decision, bool) {
	in := st.Inst
	if st.Client == nil || t.Control != "" || in.IsStopped.Load() {
		return core.Decision{}, false
	}
	na, ok := in.Srv.PolicyBox.Load().(api.NavigationAsker)
	if !ok {
		return core.Decision{}, false
	}
	d := na.AskNavigation(in.ProfileName, url)
	if d.Verdict != core.Ask {
		return core.Decision{}, false
	}
	to := api.NavHost(url)
	if to == "" || to == api.NavHost(t.DocURL) || to == t.NavApproved {
		return core.Decision{}, false
	}
	return d, true
}

// asksSubmit reports whether policy p asks before a submit.
func asksSubmit(p core.Policy, profile string) bool {
	a, ok := p.(api.Asker)
	return ok && a.AsksSubmit(profile)
}

// askNavigation asks the person where document request h takes its tab,
// when the policy asks about it (core.Authority's AskNavigationLocked),
// and reports whether h waits for their answer.
func askNavigation(st *core.State, h *core.HeldRequest) bool {
	d, ask := navigationAsk(st, h.Tab, h.URL)
	if !ask {
		return false
	}
	a := askPerson(st, navhold.Ask(h, d), "go to "+h.URL+" (where the tab's navigation leads: a redirect, a link or the page itself took it there)")
	a.nav = h
	return true
}

// navAnswered carries out a person's answer to a navigation's approval,
// with the lock held: its request goes on (with what the lifts before it
// need) or is failed.
func navAnswered(st *core.State, a *asked) {
	h, hc := a.nav, a.h
	if hc.Stage == core.HoldApproved {
		st.ApprovedNavigation(h.Tab, h.URL)
		navhold.Release(st, h)
		return
	}
	navhold.Fail(st, h, core.Decision{Verdict: core.Deny, Rule: hc.Decision.Rule, Message: hc.Denial})
}

// takeNavAsks fails every navigation waiting for a person
// (core.Authority's TakeNavAsksLocked): the automation was stopped
// (answer "stopped") or its client left ("gone"). The failures go out as
// the lock is released, ahead of any detach (package outbox).
func takeNavAsks(st *core.State, answer string) {
	ps := stateSlot.Of(st)
	for id, a := range ps.approvals {
		if a.nav == nil {
			continue
		}
		delete(ps.approvals, id)
		a.timer.Stop()
		hc := a.h
		navhold.Fail(st, a.nav, core.Decision{Verdict: core.Deny, Rule: hc.Decision.Rule, Message: "nobody may approve it now: " + answer})
		st.Inst.Srv.Cfg.Metrics.Approvals[answer].Inc()
		st.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindApproval, Method: hc.Method, Target: core.TargetOf(hc.Key.Tab), Rule: hc.Decision.Rule, Outcome: api.OutcomeDenied, Detail: answer + ": " + hc.What})
		st.Notify()
	}
}

// approvedCommand notes, of a command a person approved, the navigation
// it starts: its requests to that host are not asked again.
func approvedCommand(c *core.ClientConn, k *core.Cmd) {
	if k.M.Name != "Page.navigate" || k.Route.Tab == nil || k.Route.Via.Child {
		return
	}
	st := c.Inst.Lock()
	st.ApprovedNavigation(k.Route.Tab, k.Args.Url)
	c.Inst.Unlock()
}
