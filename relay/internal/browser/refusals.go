package browser

import (
	"sort"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// What the relay keeps of the browser's policy refusals: the tabs a policy
// kept the debugger out of, for the live view (the instance's
// Status.Refused) and the audit log. Which refusals are a policy's, and
// the words that say so, are Chrome's, read by package cdp
// (cdp.PolicyCauseOf, cdp.PolicyText). The core tells of them
// (core.Refusals: an attach refused, a detach or a command's error that
// names a policy).

// Refusals is the stage's record of refusals (core.Services.Refusals).
func Refusals() core.Refusals {
	return core.Refusals{NoteLocked: noteRefused, StatusLocked: refusalsStatus}
}

// refused are the tabs a policy kept the debugger out of, for the live
// view: the person reads there why the automation does not get a tab.
// Guarded by the instance's lock.
type refused map[int64]policyRefused

var refusedSlot = core.NewStateSlot[refused]()

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

// noteRefused records that a policy (cause) kept the debugger out of tab
// id, and audits it once per tab and cause.
func noteRefused(st *core.State, id int64, cause, url string, command bool) {
	rs := refusedSlot.Of(st)
	if *rs == nil {
		*rs = refused{}
	}
	m := *rs
	now := time.Now()
	prev, seen := m[id]
	if o := api.Origin(url); o != "" || !seen {
		prev.origin = o
	}
	m[id] = policyRefused{cause: cause, origin: prev.origin, at: now, command: command}
	if len(m) > maxRefusals {
		var oldest int64
		first := true
		for k, r := range m {
			if first || r.at.Before(m[oldest].at) {
				oldest, first = k, false
			}
		}
		delete(m, oldest)
	}
	if !seen || prev.cause != cause {
		st.Observe(core.Event{Actor: api.ActorExtension, Kind: api.KindAttach, Outcome: api.OutcomeDenied, Rule: cdp.RuleBrowserPolicy,
			Detail: "Chrome refuses to debug a tab because of a policy of the browser: " + cdp.PolicyName(cause) + " (chrome://policy)"})
	}
}

// refusalsStatus lists the refusals still in force, oldest first: a tab
// refused an attach and attached since, or refused long ago, is left out
// (and dropped).
func refusalsStatus(st *core.State) []api.RefusalStatus {
	var out []api.RefusalStatus
	now := time.Now()
	m := *refusedSlot.Of(st)
	for id, r := range m {
		t := st.Tabs[id]
		over := now.Sub(r.at) > refusalsKept || (!r.command && t != nil && t.State == core.TabAttached) ||
			(r.command && (t == nil || now.Sub(r.at) > commandRefusalsKept))
		if over {
			delete(m, id)
			continue
		}
		out = append(out, api.RefusalStatus{TabID: id, Origin: r.origin, Policy: cdp.PolicyName(r.cause), Reason: cdp.PolicyText(r.cause), At: r.at})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}
