package person

import (
	"cmp"
	"slices"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/lines"
)

// Asking a person: the Ask verdict.
//
// A command the policy asks about is held: not forwarded, but shown to the
// person in the live view with what it would do, in their words ("click
// the button "Place order" on shop.example"), until they approve or deny
// it, or ApprovalTimeout passes (a denial). Approved, it goes on through
// the pipeline, judged again by every stage as if it had just arrived
// (only the question it was asked is not asked again: recheck.go);
// denied, the client gets "cdprelay: a person denied …".
//
// A held command waits at the head of its tab's line, the client's later
// commands for that tab behind it (package lines): the lines hold it,
// this stage asks and answers. A navigation is asked about the same
// way (navask.go): its document request stays paused meanwhile (package
// navhold).

// asked is what a person is shown: a held command, or a navigation's
// document request (nav). Guarded by the instance's mutex.
type asked struct {
	h              *core.HeldCmd
	nav            *core.HeldRequest
	asked, expires time.Time
	timer          *time.Timer
}

// askPerson shows h to the person: it gets an approval id and a deadline.
// Called with the lock held.
func askPerson(st *core.State, h *core.HeldCmd, what string) *asked {
	in := st.Inst
	ps := stateSlot.Of(st)
	ps.nextApproval++
	h.AskID = ps.nextApproval
	h.Stage = core.HoldAsked
	h.What = what
	now := time.Now()
	timeout := in.Srv.Cfg.ApprovalTimeout
	id := h.AskID
	a := &asked{h: h, asked: now, expires: now.Add(timeout)}
	a.timer = time.AfterFunc(timeout, func() {
		_ = answer(in, id, false, api.AnswerTimeout, "")
	})
	if ps.approvals == nil {
		ps.approvals = map[int64]*asked{}
	}
	ps.approvals[id] = a
	st.Notify()
	in.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindAsk, Method: h.Method, Target: core.TargetOf(h.Key.Tab), Rule: h.Decision.Rule, Outcome: api.OutcomeOK, Detail: "asked: " + what})
	return a
}

// answer carries out a person's answer to approval id (core.Authority's
// Answer): approve or deny; answer says how it came (a person's, or the
// timeout's).
func answer(in *core.Instance, id int64, approve bool, answer, by string) error {
	if in.Wedged.Load() {
		return api.ErrWedged
	}
	if by == "" {
		by = "a person"
	}
	st := in.Lock()
	ps := stateSlot.Of(st)
	a := ps.approvals[id]
	if a == nil || a.h.Stage != core.HoldAsked {
		in.Unlock()
		return api.ErrNoApproval
	}
	h := a.h
	delete(ps.approvals, id)
	a.timer.Stop()
	outcome, detail := api.OutcomeOK, "approved by "+by+": "+h.What
	if approve {
		h.Stage, h.Approved, h.ByPerson = core.HoldApproved, true, true
	} else {
		h.Stage = core.HoldDenied
		outcome = api.OutcomeDenied
		h.Denial = "cdprelay: a person denied " + h.What
		detail = "denied by " + by + ": " + h.What
		if answer == api.AnswerTimeout {
			h.Denial += ": nobody answered within " + in.Srv.Cfg.ApprovalTimeout.String()
			detail = "denied: nobody answered within " + in.Srv.Cfg.ApprovalTimeout.String() + ": " + h.What
		}
	}
	st.Notify()
	if a.nav != nil {
		navAnswered(st, a)
	}
	lines.StartDrain(in, st, h.Key)
	target := core.TargetOf(h.Key.Tab)
	in.Unlock()
	in.Srv.Cfg.Metrics.Approvals[answer].Inc()
	if answer == api.AnswerTimeout {
		by = "" // nobody
	}
	in.Observe(core.Event{Actor: api.ActorViewer, Kind: api.KindApproval, Method: h.Method, Target: target, Rule: h.Decision.Rule, Outcome: outcome, Detail: detail, By: by})
	return nil
}

// unask takes h off what the person is shown (core.Authority's
// UnaskLocked): it is answered otherwise.
func unask(st *core.State, h *core.HeldCmd) {
	ps := stateSlot.Of(st)
	if a := ps.approvals[h.AskID]; a != nil && a.h == h {
		a.timer.Stop()
		delete(ps.approvals, h.AskID)
	}
}

// approvalsStatus lists what waits for a person, oldest first
// (core.Authority's ApprovalsLocked).
func approvalsStatus(st *core.State) []api.ApprovalStatus {
	var out []api.ApprovalStatus
	for _, a := range stateSlot.Of(st).approvals {
		h := a.h
		s := api.ApprovalStatus{ID: h.AskID, What: st.Inst.ScrubString(h.What), Method: h.Method, Rule: h.Decision.Rule, AskedAt: a.asked, ExpiresAt: a.expires}
		if t := h.Key.Tab; t != nil {
			s.TabID, s.TargetID = t.Id, t.TargetID
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b api.ApprovalStatus) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
