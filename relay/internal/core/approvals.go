package core

import (
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/person"
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
// line. With Asker.AsksSubmit, the relay looks at the page before a mouse
// press and before Enter (person.SubmitLike): a press on a form's submit
// control, a press into a frame of another origin (whose controls it
// cannot see), and Enter in a form's field are asked.

// ErrNoApproval answers an approval or denial of a command that is not
// waiting for one (any more).
var ErrNoApproval = api.ErrNoApproval

// Asks is the ask stage, after access: a command the policy asked about,
// or one that may submit a form when that is asked, is held.
func (c *ClientConn) Asks(k *Cmd) bool {
	if !c.CheckApproved(k) {
		return false // looked at again first (recheck.go)
	}
	if k.Held != nil && k.Held.approved {
		c.approvedCommand(k)
		return true
	}
	if k.own {
		// The relay's own command is not held for anyone: what a person is
		// asked about now is not done unasked.
		if k.ask.Verdict == Ask {
			return c.Refuse(k, Denial(k.ask.Rule, "cdprelay: "+k.M.Name+" needs a person's approval now"))
		}
		return true
	}
	d := k.ask
	probe := false
	switch {
	case d.Verdict == Ask && person.Acts(k.M.Name, k.Env.Params):
		probe = person.LooksFirst(k.M.Name)
	case d.Verdict == Ask:
		return true
	case person.SubmitLike(k.M.Name, k.Env.Params) && k.Route.Tab != nil && k.pol.asksSubmit(c.Inst.ProfileName):
		d, probe = Decision{Verdict: Ask, Rule: person.RuleAskSubmit}, true
	default:
		return true
	}
	in := c.Inst
	st := in.Lock()
	h := st.HeldInLine(c, k)
	h.d = d
	var desc person.Description
	if k.Route.Tab != nil {
		desc.Origin = api.Origin(k.Route.Tab.DocURL)
	}
	desc.Method, desc.URL, desc.Files, desc.Params = k.M.Name, k.Args.Url, k.Args.files, h.k.Env.Params
	if probe {
		h.Stage = HoldProbing
		via := k.Route.Via
		in.Unlock()
		c.Wg.Add(1)
		in.Tasks.Spawn("look before asking", func() {
			defer c.Wg.Done()
			c.probeThenAsk(h, via, desc)
		})
	} else {
		st.askPerson(h, desc.Text())
		in.Unlock()
	}
	k.Out.Kind = OutHeld
	return false
}

// askPerson shows h to the person: it gets an approval id and a deadline.
func (st *State) askPerson(h *heldCmd, what string) {
	in := st.Inst
	st.nextApproval++
	h.id = st.nextApproval
	h.Stage = holdAsked
	h.what = what
	h.asked = time.Now()
	timeout := in.Srv.Cfg.ApprovalTimeout
	h.expires = h.asked.Add(timeout)
	id := h.id
	h.timer = time.AfterFunc(timeout, func() {
		_ = in.answerApproval(id, false, answerTimeout, "")
	})
	st.approvals[id] = h
	st.notify()
	in.Observe(Event{Actor: ActorRelay, Kind: KindAsk, Method: h.Method, Target: TargetOf(h.Key.t), Rule: h.d.Rule, Outcome: OutcomeOK, Detail: "asked: " + what})
}

// Approve lets the held command id go on, on behalf of by.
func (in *Instance) Approve(id int64, by string) error {
	return in.answerApproval(id, true, answerApproved, by)
}

// Deny refuses the held command id, on behalf of by.
func (in *Instance) Deny(id int64, by string) error {
	return in.answerApproval(id, false, answerDenied, by)
}

func (in *Instance) answerApproval(id int64, approve bool, answer, by string) error {
	if in.Wedged.Load() {
		return ErrWedged
	}
	if by == "" {
		by = "a person"
	}
	st := in.Lock()
	h := st.approvals[id]
	if h == nil || h.Stage != holdAsked {
		in.Unlock()
		return ErrNoApproval
	}
	delete(st.approvals, id)
	h.timer.Stop()
	outcome, detail := OutcomeOK, "approved by "+by+": "+h.what
	if approve {
		h.Stage, h.approved, h.byPerson = holdApproved, true, true
	} else {
		h.Stage = HoldDenied
		outcome = OutcomeDenied
		h.Denial = "cdprelay: a person denied " + h.what
		detail = "denied by " + by + ": " + h.what
		if answer == answerTimeout {
			h.Denial += ": nobody answered within " + in.Srv.Cfg.ApprovalTimeout.String()
			detail = "denied: nobody answered within " + in.Srv.Cfg.ApprovalTimeout.String() + ": " + h.what
		}
	}
	st.notify()
	if h.nav != nil {
		st.navAnswered(h)
	}
	in.StartDrain(st, h.Key)
	target := TargetOf(h.Key.t)
	in.Unlock()
	in.Srv.Cfg.Metrics.approvals[answer].Inc()
	if answer == answerTimeout {
		by = "" // nobody
	}
	in.Observe(Event{Actor: ActorViewer, Kind: KindApproval, Method: h.Method, Target: target, Rule: h.d.Rule, Outcome: outcome, Detail: detail, By: by})
	return nil
}

// approvalsStatus lists the commands waiting for a person, oldest first.
func (st *State) approvalsStatus() []ApprovalStatus {
	var out []ApprovalStatus
	for _, h := range st.approvals {
		a := ApprovalStatus{ID: h.id, What: st.Inst.ScrubString(h.what), Method: h.Method, Rule: h.d.Rule, AskedAt: h.asked, ExpiresAt: h.expires}
		if t := h.Key.t; t != nil {
			a.TabID, a.TargetID = t.Id, t.TargetID
		}
		out = append(out, a)
	}
	sortApprovals(out)
	return out
}

// approvalAnswers of an approval, as metrics and audit records name them.
const (
	answerApproved = "approved"
	answerDenied   = "denied"
	answerTimeout  = "timeout"
	answerStopped  = "stopped"
	answerGone     = "gone"
)

// approvalAnswers lists every answer of an approval, for counters that start at
// zero.
var approvalAnswers = []string{answerApproved, answerDenied, answerTimeout, answerStopped, answerGone}

// sortApprovals orders a by approval id, oldest first.
func sortApprovals(a []ApprovalStatus) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j].ID < a[j-1].ID; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
