package core

import (
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// Approvals: the Ask verdict.
//
// A command the policy asks about is held: not forwarded, but shown to the
// person in the live view with what it would do, in their words ("click
// the button "Place order" on shop.example"), until they approve or deny
// it, or ApprovalTimeout passes (a denial). Approved, it goes on through
// the pipeline, judged again by every stage as if it had just arrived
// (only the question it was asked is not asked again); denied, the client
// gets "cdprelay: a person denied …".
//
// A held command waits at the head of its tab's line, the client's later
// commands for that tab behind it (lines.go).
//
// An input event is asked when it acts (a mouse press, a key down, a touch
// start, a drop; person.Acts); the moves and releases around it wait in
// line. With api.Asker.AsksSubmit, the relay looks at the page before a mouse
// press and before Enter (person.SubmitLike): a press on a form's submit
// control, a press into a frame of another origin (whose controls it
// cannot see), and Enter in a form's field are asked.

// AskPerson shows h to the person: it gets an approval id and a deadline.
func (st *State) AskPerson(h *HeldCmd, what string) {
	in := st.Inst
	st.nextApproval++
	h.id = st.nextApproval
	h.Stage = holdAsked
	h.What = what
	h.asked = time.Now()
	timeout := in.Srv.Cfg.ApprovalTimeout
	h.expires = h.asked.Add(timeout)
	id := h.id
	h.timer = time.AfterFunc(timeout, func() {
		_ = in.answerApproval(id, false, api.AnswerTimeout, "")
	})
	st.approvals[id] = h
	st.Notify()
	in.Observe(Event{Actor: api.ActorRelay, Kind: api.KindAsk, Method: h.Method, Target: TargetOf(h.Key.Tab), Rule: h.Decision.Rule, Outcome: api.OutcomeOK, Detail: "asked: " + what})
}

// Approve lets the held command id go on, on behalf of by.
func (in *Instance) Approve(id int64, by string) error {
	return in.answerApproval(id, true, api.AnswerApproved, by)
}

// Deny refuses the held command id, on behalf of by.
func (in *Instance) Deny(id int64, by string) error {
	return in.answerApproval(id, false, api.AnswerDenied, by)
}

func (in *Instance) answerApproval(id int64, approve bool, answer, by string) error {
	if in.Wedged.Load() {
		return api.ErrWedged
	}
	if by == "" {
		by = "a person"
	}
	st := in.Lock()
	h := st.approvals[id]
	if h == nil || h.Stage != holdAsked {
		in.Unlock()
		return api.ErrNoApproval
	}
	delete(st.approvals, id)
	h.timer.Stop()
	outcome, detail := api.OutcomeOK, "approved by "+by+": "+h.What
	if approve {
		h.Stage, h.Approved, h.ByPerson = holdApproved, true, true
	} else {
		h.Stage = HoldDenied
		outcome = api.OutcomeDenied
		h.Denial = "cdprelay: a person denied " + h.What
		detail = "denied by " + by + ": " + h.What
		if answer == api.AnswerTimeout {
			h.Denial += ": nobody answered within " + in.Srv.Cfg.ApprovalTimeout.String()
			detail = "denied: nobody answered within " + in.Srv.Cfg.ApprovalTimeout.String() + ": " + h.What
		}
	}
	st.Notify()
	if h.nav != nil {
		st.navAnswered(h)
	}
	in.StartDrain(st, h.Key)
	target := TargetOf(h.Key.Tab)
	in.Unlock()
	in.Srv.Cfg.Metrics.Approvals[answer].Inc()
	if answer == api.AnswerTimeout {
		by = "" // nobody
	}
	in.Observe(Event{Actor: api.ActorViewer, Kind: api.KindApproval, Method: h.Method, Target: target, Rule: h.Decision.Rule, Outcome: outcome, Detail: detail, By: by})
	return nil
}

// approvalsStatus lists the commands waiting for a person, oldest first.
func (st *State) approvalsStatus() []api.ApprovalStatus {
	var out []api.ApprovalStatus
	for _, h := range st.approvals {
		a := api.ApprovalStatus{ID: h.id, What: st.Inst.ScrubString(h.What), Method: h.Method, Rule: h.Decision.Rule, AskedAt: h.asked, ExpiresAt: h.expires}
		if t := h.Key.Tab; t != nil {
			a.TabID, a.TargetID = t.Id, t.TargetID
		}
		out = append(out, a)
	}
	sortApprovals(out)
	return out
}

// sortApprovals orders a by approval id, oldest first.
func sortApprovals(a []api.ApprovalStatus) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j].ID < a[j-1].ID; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
