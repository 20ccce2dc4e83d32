package relay

import (
	"strings"

	tier "github.com/cdprelay/cdprelay/relay/internal/tiers"
)

// tierChecks are the access stage's rules that hold only while the policy
// has tiers: what names a site by itself (storage by origin, a resource by
// URL, a body by its request, a script or style sheet by id), what acts
// in every page to come (a breakpoint's condition), and input on a page
// with a frame automation may not act on.
func (c *clientConn) tierChecks(k *cmd) bool {
	if d, ok := tier.SettingRefusal(k.m.name, k.m.unknown); !ok {
		return c.refuse(k, d)
	}
	if tier.NamesStorage(k.m.name) {
		// Storage names its origin itself, whichever tab carries it.
		st := c.inst.lock()
		to, where := st.storageAccess(k.params)
		c.inst.unlock()
		if to.Level != accessFull {
			return c.refuse(k, Decision{Verdict: Deny, Rule: to.Rule, Message: "cdprelay: " + to.Level.String() + ": " + k.m.name + " names the storage of " + where + ", which automation may not act on or read: " + to.Why})
		}
	}
	if strings.HasPrefix(k.m.name, "Debugger.setBreakpoint") {
		// A condition is script that runs, with side effects, in every
		// document the tab shows later, wherever it is.
		if cond, _, err := exactString(k.params, "condition"); err != nil || cond != "" {
			return c.refuse(k, Decision{Verdict: Deny, Rule: ruleBreakpointCondition,
				Message: "cdprelay: a breakpoint's condition runs script in every page the tab goes to later, read-only and blind ones too: with tiers, breakpoints take no condition"})
		}
	}
	if k.r.tab == nil {
		return true
	}
	if tier.ReadsBody(k.m.name) || k.m.name == "Page.getResourceContent" || k.m.name == "Page.searchInResource" || k.m.name == "Network.loadNetworkResource" {
		// What a page loaded from a blind site is not to be read.
		st := c.inst.lock()
		blind := false
		if tier.ReadsBody(k.m.name) {
			id, _, err := exactString(k.params, "requestId")
			blind = err != nil || k.r.tab.blindReqs[id]
		} else {
			u, _, err := exactString(k.params, "url")
			blind = err != nil || st.urlAccess(u).Level == accessBlind
		}
		c.inst.unlock()
		if blind {
			return c.refuse(k, Decision{Verdict: Deny, Rule: ruleBlindFrame, Message: "cdprelay: blind: " + k.m.name + " would read what the page loaded from a site hidden from automation"})
		}
	}
	if strings.HasPrefix(k.m.name, "Debugger.") || strings.HasPrefix(k.m.name, "CSS.") {
		sid := ""
		if k.r.via.child {
			sid = k.r.via.id
		}
		c.inst.lock()
		blind := k.r.tab.blindSource(sid, k.m.name, k.params)
		c.inst.unlock()
		if blind {
			return c.refuse(k, Decision{Verdict: Deny, Rule: ruleBlindFrame, Message: "cdprelay: blind: " + k.m.name + " names a script or style sheet the page loaded from a site hidden from automation"})
		}
	}
	if strings.HasPrefix(k.m.name, "Input.") && !k.r.via.child {
		// Input lands where the pointer or the focus is, a frame of
		// another site included: not while one is read-only or blind.
		st := c.inst.lock()
		strict := st.strictFrame(k.r.tab)
		c.inst.unlock()
		if strict.Level != accessFull {
			return c.refuse(k, Decision{Verdict: Deny, Rule: strict.Rule, Message: "cdprelay: " + strict.Level.String() + ": a frame of this page is on a site automation may not act on, and " + k.m.name + " could reach it"})
		}
	}
	return true
}
