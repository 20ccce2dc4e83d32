package tiers

import (
	"strings"

	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// tierChecks are the access stage's rules that hold only while the policy
// has tiers: what names a site by itself (storage by origin, a resource by
// URL, a body by its request, a script or style sheet by id), what acts
// in every page to come (a breakpoint's condition), and input on a page
// with a frame automation may not act on.
func tierChecks(c *core.ClientConn, k *core.Cmd) bool {
	if d, ok := access.SettingRefusal(k.M.Name, k.M.Unknown); !ok {
		return c.Refuse(k, d)
	}
	if access.NamesStorage(k.M.Name) {
		// Storage names its origin itself, whichever tab carries it.
		st := c.Inst.Lock()
		to, where := storageAccess(st, k.Params)
		c.Inst.Unlock()
		if to.Level != api.Full {
			return c.Refuse(k, core.Decision{Verdict: core.Deny, Rule: to.Rule, Message: "cdprelay: " + to.Level.String() + ": " + k.M.Name + " names the storage of " + where + ", which automation may not act on or read: " + to.Why})
		}
	}
	if strings.HasPrefix(k.M.Name, "Debugger.setBreakpoint") {
		// A condition is script that runs, with side effects, in every
		// document the tab shows later, wherever it is.
		if cond, _, err := core.ExactString(k.Params, "condition"); err != nil || cond != "" {
			return c.Refuse(k, core.Decision{Verdict: core.Deny, Rule: api.RuleBreakpointCondition,
				Message: "cdprelay: a breakpoint's condition runs script in every page the tab goes to later, read-only and blind ones too: with tiers, breakpoints take no condition"})
		}
	}
	if k.Route.Tab == nil {
		return true
	}
	if access.ReadsBody(k.M.Name) || k.M.Name == "Page.getResourceContent" || k.M.Name == "Page.searchInResource" || k.M.Name == "Network.loadNetworkResource" {
		// What a page loaded from a blind site is not to be read.
		st := c.Inst.Lock()
		blind := false
		if access.ReadsBody(k.M.Name) {
			id, _, err := core.ExactString(k.Params, "requestId")
			blind = err != nil || k.Route.Tab.BlindReqs[id]
		} else {
			u, _, err := core.ExactString(k.Params, "url")
			blind = err != nil || st.UrlAccess(u).Level == api.Blind
		}
		c.Inst.Unlock()
		if blind {
			return c.Refuse(k, core.Decision{Verdict: core.Deny, Rule: api.RuleBlindFrame, Message: "cdprelay: blind: " + k.M.Name + " would read what the page loaded from a site hidden from automation"})
		}
	}
	if strings.HasPrefix(k.M.Name, "Debugger.") || strings.HasPrefix(k.M.Name, "CSS.") {
		sid := ""
		if k.Route.Via.Child {
			sid = k.Route.Via.Id
		}
		c.Inst.Lock()
		blind := blindSource(k.Route.Tab, sid, k.M.Name, k.Params)
		c.Inst.Unlock()
		if blind {
			return c.Refuse(k, core.Decision{Verdict: core.Deny, Rule: api.RuleBlindFrame, Message: "cdprelay: blind: " + k.M.Name + " names a script or style sheet the page loaded from a site hidden from automation"})
		}
	}
	if strings.HasPrefix(k.M.Name, "Input.") && !k.Route.Via.Child {
		// Input lands where the pointer or the focus is, a frame of
		// another site included: not while one is read-only or blind.
		st := c.Inst.Lock()
		strict := strictFrame(st, k.Route.Tab)
		c.Inst.Unlock()
		if strict.Level != api.Full {
			return c.Refuse(k, core.Decision{Verdict: core.Deny, Rule: strict.Rule, Message: "cdprelay: " + strict.Level.String() + ": a frame of this page is on a site automation may not act on, and " + k.M.Name + " could reach it"})
		}
	}
	return true
}
