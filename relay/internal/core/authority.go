package core

import "github.com/cdprelay/cdprelay/relay/internal/api"

// The person's authority over an instance: the Stop, and who holds a tab.
// What every part honours is the core's data: Instance.IsStopped and
// State.StoppedBy, Tab.Control. What a Stop and a take-over do (refuse,
// fail, undo, tell the client) is the person's stage's, which the facade
// hands over before the order (Services.Authority); TestAssembly says it does.

// Authority is what the person's stage does for the person.
type Authority struct {
	// Stop stops the instance's automation on behalf of by; Resume lets it
	// go on.
	Stop, Resume func(in *Instance, by string) error
	// Control gives holder control of tab tabID, or gives it back
	// (release).
	Control func(in *Instance, tabID int64, holder string, release bool) error
	// AsksNavigation reports whether in's policy asks a person about the
	// hosts navigations go to.
	AsksNavigation func(in *Instance) bool
	// AskNavigationLocked decides whether document request h of a tab's
	// main frame is asked about, and asks: it reports whether h waits for
	// the person's answer (package navhold holds it).
	AskNavigationLocked func(st *State, h *HeldRequest) bool
	// TakeNavAsksLocked fails every navigation waiting for a person: the
	// automation was stopped (answer api.AnswerStopped) or its client left
	// (api.AnswerGone).
	TakeNavAsksLocked func(st *State, answer string)
	// Answer answers approval id, approving it or not (answer says how
	// it was answered: api.AnswerApproved, …), on behalf of by.
	Answer func(in *Instance, id int64, approve bool, answer, by string) error
	// UnaskLocked takes h, a command shown to a person, off what they are
	// shown: it is answered otherwise (a Stop, its client gone).
	UnaskLocked func(st *State, h *HeldCmd)
	// ApprovalsLocked lists what waits for a person's answer, oldest first.
	ApprovalsLocked func(st *State) []api.ApprovalStatus
}

var authority Authority

// AsksNavigation reports whether the instance's policy asks about hosts
// (the person's Authority.AsksNavigation).
func (in *Instance) AsksNavigation() bool {
	return authority.AsksNavigation != nil && authority.AsksNavigation(in)
}

// Approve lets the held command id go on, on behalf of by.
func (in *Instance) Approve(id int64, by string) error {
	if authority.Answer == nil {
		return api.ErrWedged
	}
	return authority.Answer(in, id, true, api.AnswerApproved, by)
}

// Deny refuses the held command id, on behalf of by.
func (in *Instance) Deny(id int64, by string) error {
	if authority.Answer == nil {
		return api.ErrWedged
	}
	return authority.Answer(in, id, false, api.AnswerDenied, by)
}

// ApprovedNavigation notes that a person approved a navigation to raw on
// t: its requests to that host are not asked again until a document
// commits.
func (st *State) ApprovedNavigation(t *Tab, raw string) {
	if t != nil {
		t.NavApproved = api.NavHost(raw)
	}
}

// Stop stops the instance's automation on behalf of by (a viewer's or a
// token's name).
func (in *Instance) Stop(by string) error {
	if authority.Stop == nil {
		return api.ErrWedged
	}
	return authority.Stop(in, by)
}

// Resume lets the instance's automation go on.
func (in *Instance) Resume(by string) error {
	if authority.Resume == nil {
		return api.ErrWedged
	}
	return authority.Resume(in, by)
}

// TakeControl gives holder (a viewer's description) control of tab id.
func (in *Instance) TakeControl(tabID int64, holder string) error {
	if authority.Control == nil {
		return api.ErrWedged
	}
	return authority.Control(in, tabID, holder, false)
}

// ReleaseControl hands tab id back to automation.
func (in *Instance) ReleaseControl(tabID int64, holder string) error {
	if authority.Control == nil {
		return api.ErrWedged
	}
	return authority.Control(in, tabID, holder, true)
}

// Stopped reports whether the instance's automation is stopped, and who
// stopped it.
func (in *Instance) Stopped() (bool, string) {
	if in.Wedged.Load() {
		return false, ""
	}
	st := in.Lock()
	defer in.Unlock()
	return st.StoppedBy != "", st.StoppedBy
}

// Controller reports who controls tab id ("" when automation does).
func (in *Instance) Controller(tabID int64) string {
	if in.Wedged.Load() {
		return ""
	}
	st := in.Lock()
	defer in.Unlock()
	if t := st.Tabs[tabID]; t != nil {
		return t.Control
	}
	return ""
}
