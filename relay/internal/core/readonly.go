package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/cdp"

	tier "github.com/cdprelay/cdprelay/relay/internal/tiers"
)

// The read-only command table is the tiers' (tier.ReadOnlyRuleOf).

// readOnly returns how a read-only tab treats m.
func readOnly(m *MethodInfo) tier.ReadOnlyRule {
	domain := ""
	if m.Domain != domainOther {
		domain = cdp.Domains[m.Domain]
	}
	return tier.ReadOnlyRuleOf(m.Name, m.enable || m.disable, domain)
}

// gate decides a command on a tab whose access is acc, before the
// emulation and the tab see it. It returns the params to forward (rewritten
// for script on a read-only tab) and, when it refuses, the decision.
func (c *ClientConn) gate(k *Cmd, acc TabAccess) (refusal Decision, ok bool) {
	m := k.M
	switch acc.Level {
	case AccessBlind:
		if !tier.BlindAllowed(m.Name) && !switchOnly(m) && !(m.Name == "Page.addScriptToEvaluateOnNewDocument" && initRunsNothing(k.Params)) {
			return accessRefusal(acc), false
		}
	case AccessReadOnly:
		switch readOnly(m) {
		case tier.ROAllow:
		case tier.RONoEffects:
			c.Inst.Lock()
			isolated := k.isolated && k.Route.Tab.guard != nil
			c.Inst.Unlock()
			if isolated {
				break // the guard is in that world (tiers/worlds.go)
			}
			p, err := tier.ForceNoSideEffects(k.Params)
			if err != nil {
				err = cdp.InvalidParams(err)
				return Decision{Verdict: Deny, Rule: acc.Rule, Message: "cdprelay: " + err.Error()}, false
			}
			k.Params = p
		case tier.ROEmptyInit:
			if src, _, err := ExactString(k.Params, "source"); err != nil || !tier.RunsNothing(src) {
				return accessRefusal(acc), false
			}
		case tier.ROPlainCont:
			if !tier.OnlyKeys(k.Params, "requestId") {
				return accessRefusal(acc), false
			}
		default:
			return accessRefusal(acc), false
		}
	}
	return Decision{}, true
}
