package tiers

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/relay/internal/access"
)

// The read-only command table is the tiers' (access.ReadOnlyRuleOf).

// readOnly returns how a read-only tab treats m.
func readOnly(m *core.MethodInfo) access.ReadOnlyRule {
	domain := ""
	if m.Domain != cdp.DomainOther {
		domain = cdp.Domains[m.Domain]
	}
	return access.ReadOnlyRuleOf(m.Name, m.Enable || m.Disable, domain)
}

// gate decides a command on a tab whose access is acc, before the
// emulation and the tab see it. It returns the params to forward (rewritten
// for script on a read-only tab) and, when it refuses, the decision.
func gate(c *core.ClientConn, k *core.Cmd, acc core.TabAccess) (refusal core.Decision, ok bool) {
	m := k.M
	switch acc.Level {
	case api.Blind:
		if !access.BlindAllowed(m.Name) && !switchOnly(m) && !(m.Name == "Page.addScriptToEvaluateOnNewDocument" && core.InitRunsNothing(k.Params)) {
			return core.AccessRefusal(acc), false
		}
	case api.ReadOnly:
		switch readOnly(m) {
		case access.ROAllow:
		case access.RONoEffects:
			c.Inst.Lock()
			isolated := k.Isolated && tabSlot.Of(k.Route.Tab).guard != nil
			c.Inst.Unlock()
			if isolated {
				break // the guard is in that world (tiers.Worlds)
			}
			p, err := access.ForceNoSideEffects(k.Params)
			if err != nil {
				err = cdp.InvalidParams(err)
				return core.Decision{Verdict: core.Deny, Rule: acc.Rule, Message: "cdprelay: " + err.Error()}, false
			}
			k.Params = p
		case access.ROEmptyInit:
			if src, _, err := core.ExactString(k.Params, "source"); err != nil || !access.RunsNothing(src) {
				return core.AccessRefusal(acc), false
			}
		case access.ROPlainCont:
			if !access.OnlyKeys(k.Params, "requestId") {
				return core.AccessRefusal(acc), false
			}
		default:
			return core.AccessRefusal(acc), false
		}
	}
	return core.Decision{}, true
}

// switchOnly reports whether m only switches a domain's events on or off.
func switchOnly(m *core.MethodInfo) bool {
	return (m.Enable || m.Disable) && !access.HasEffect(m.Name)
}
