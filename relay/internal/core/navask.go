package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// Asking where a navigation ends. ask_domains holds a client's
// Page.navigate or Target.createTarget to an asked host for a person's
// approval (approvals.go); but a tab reaches a host by other ways too: a
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

// AsksNavigation reports whether the instance's policy asks about hosts
// (the person's Authority.AsksNavigation).
func (in *Instance) AsksNavigation() bool {
	return authority.AsksNavigation != nil && authority.AsksNavigation(in)
}

// asksNavigationTo decides whether the main-frame document request p of
// tab t is asked, and with what (the person's
// Authority.NavigationAskLocked).
func (st *State) asksNavigationTo(t *Tab, p *api.PausedRequest) (Decision, bool) {
	if authority.NavigationAskLocked == nil {
		return Decision{}, false
	}
	return authority.NavigationAskLocked(st, t, p.Request.URL)
}

// askNavigation shows the person where h takes its tab, and holds h until
// they answer.
func (st *State) askNavigation(h *heldRequest, d Decision) {
	hc := &HeldCmd{Key: lineKey{Tab: h.t}, Method: "navigation", nav: h, Decision: d}
	h.ask = hc
	st.AskPerson(hc, "go to "+h.url+" (where the tab's navigation leads: a redirect, a link or the page itself took it there)")
}

// navAnswered carries out a person's answer to a navigation's approval,
// with the lock held: h goes on (with what the lifts before it need) or
// is failed.
func (st *State) navAnswered(hc *HeldCmd) {
	h := hc.nav
	h.ask = nil
	if hc.Stage == holdApproved {
		h.t.NavApproved = NavHost(h.url)
		st.releaseRequest(h)
		return
	}
	st.failRequest(h, Decision{Verdict: Deny, Rule: hc.Decision.Rule, Message: hc.Denial})
}

// takeNavAsks fails every navigation waiting for a person: the automation
// was stopped (answer "stopped") or its client left ("gone"). The
// failures go out as the lock is released, ahead of any detach (outbox.go).
func (st *State) takeNavAsks(answer string) {
	for id, hc := range st.approvals {
		if hc.nav == nil {
			continue
		}
		delete(st.approvals, id)
		if hc.timer != nil {
			hc.timer.Stop()
		}
		hc.nav.ask = nil
		st.failRequest(hc.nav, Decision{Verdict: Deny, Rule: hc.Decision.Rule, Message: "nobody may approve it now: " + answer})
		st.Inst.Srv.Cfg.Metrics.Approvals[answer].Inc()
		st.Observe(Event{Actor: api.ActorRelay, Kind: api.KindApproval, Method: hc.Method, Target: TargetOf(hc.Key.Tab), Rule: hc.Decision.Rule, Outcome: api.OutcomeDenied, Detail: answer + ": " + hc.What})
		st.Notify()
	}
}

// ApprovedNavigation notes that a person approved a navigation command
// to raw on t: its requests to that host are not asked again.
func (st *State) ApprovedNavigation(t *Tab, raw string) {
	if t != nil {
		t.NavApproved = NavHost(raw)
	}
}

// ApprovedCommand notes, of a command a person approved, the navigation
// it starts.
func (c *ClientConn) ApprovedCommand(k *Cmd) {
	if k.M.Name != "Page.navigate" || k.Route.Tab == nil || k.Route.Via.Child {
		return
	}
	c.Inst.Lock()
	c.Inst.St.ApprovedNavigation(k.Route.Tab, k.Args.Url)
	c.Inst.Unlock()
}

// takeNavAsksOf fails the navigations waiting for a person as takeHeld
// takes client c's lines: for a Stop (c nil) or the client leaving.
func (st *State) takeNavAsksOf(c *ClientConn) {
	switch {
	case c == nil:
		st.takeNavAsks(api.AnswerStopped)
	case c == st.Client:
		st.takeNavAsks(api.AnswerGone)
	}
}
