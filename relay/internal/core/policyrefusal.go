package core

import (
	"errors"
	"sort"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// What the relay keeps of the browser's policy refusals: the tabs a policy
// kept the debugger out of, for the live view (Status.Refused) and the
// audit log. Which refusals are a policy's, and the words that say so,
// are Chrome's, read by package cdp (cdp.PolicyCauseOf, cdp.PolicyText).

// refusals are the tabs a policy kept the debugger out of, for the live
// view: the person reads there why the automation does not get a tab.
// Guarded by the instance's lock.
type refusals map[int64]policyRefused

type policyRefused struct {
	cause  string
	origin string // the tab's origin when it was refused ("" if not known)
	at     time.Time
	// command: a command failed on the attached tab, rather than an attach
	// or a detach; such a refusal is over when commands stop failing.
	command bool
}

// Bounds of the refusals kept: a browser whose policy refuses every tab
// refuses each of them once, and a person looks at the list later; a
// policy that makes an attached tab's commands fail does so on each.
const (
	maxRefusals         = 64
	refusalsKept        = time.Hour
	commandRefusalsKept = 2 * time.Minute
)

// RefusalStatus is one tab a policy of the browser keeps the debugger out
// of.
type RefusalStatus struct {
	TabID int64 `json:"tabId"`
	// Origin is the tab's origin when Chrome refused it.
	Origin string `json:"origin,omitempty"`
	// Policy names the policy; Reason says it in words, with where to
	// look.
	Policy string    `json:"policy"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// NoteRefusal records that a policy (cause) kept the debugger out of tab
// id, and audits it once per tab and cause.
func (st *State) NoteRefusal(id int64, cause, url string) { st.noteRefused(id, cause, url, false) }

func (st *State) noteRefused(id int64, cause, url string, command bool) {
	if !cdp.IsPolicyCause(cause) {
		return
	}
	if st.refusals == nil {
		st.refusals = refusals{}
	}
	now := time.Now()
	prev, seen := st.refusals[id]
	if o := api.Origin(url); o != "" || !seen {
		prev.origin = o
	}
	st.refusals[id] = policyRefused{cause: cause, origin: prev.origin, at: now, command: command}
	if len(st.refusals) > maxRefusals {
		var oldest int64
		first := true
		for k, r := range st.refusals {
			if first || r.at.Before(st.refusals[oldest].at) {
				oldest, first = k, false
			}
		}
		delete(st.refusals, oldest)
	}
	if !seen || prev.cause != cause {
		st.Observe(Event{Actor: api.ActorExtension, Kind: api.KindAttach, Outcome: api.OutcomeDenied, Rule: cdp.RuleBrowserPolicy,
			Detail: "Chrome refuses to debug a tab because of a policy of the browser: " + cdp.PolicyName(cause) + " (chrome://policy)"})
	}
}

// refusalsStatus lists the refusals still in force, oldest first: a tab
// refused an attach and attached since, or refused long ago, is left out
// (and dropped).
func (st *State) refusalsStatus() []RefusalStatus {
	var out []RefusalStatus
	now := time.Now()
	for id, r := range st.refusals {
		t := st.Tabs[id]
		over := now.Sub(r.at) > refusalsKept || (!r.command && t != nil && t.State == TabAttached) ||
			(r.command && (t == nil || now.Sub(r.at) > commandRefusalsKept))
		if over {
			delete(st.refusals, id)
			continue
		}
		out = append(out, RefusalStatus{TabID: id, Origin: r.origin, Policy: cdp.PolicyName(r.cause), Reason: cdp.PolicyText(r.cause), At: r.at})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// notePolicyError records that a policy (cause) made a client command on t
// fail (a site the policy added while the tab was attached).
func (in *Instance) notePolicyError(t *Tab, cause string) {
	if t == nil {
		return
	}
	st := in.Lock()
	st.noteRefused(t.Id, cause, st.TargetInfo(t).URL, true)
	in.Unlock()
}

// noteAttachRefusal records an attach Chrome refused because of a policy
// (for either extension), and returns err with the explanation added.
func (in *Instance) noteAttachRefusal(t *Tab, err error) error {
	var e *ExtError
	if !errors.As(err, &e) {
		return err
	}
	cause := cdp.PolicyCauseOf("", e.Message)
	if cause == "" {
		return err
	}
	st := in.Lock()
	st.NoteRefusal(t.Id, cause, st.TargetInfo(t).URL)
	in.Unlock()
	return &ExtError{Code: e.Code, Message: cdp.ExplainPolicy("", e.Message)}
}
