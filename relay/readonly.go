package relay

import "github.com/cdprelay/cdprelay/relay/internal/cdp"

import tier "github.com/cdprelay/cdprelay/relay/internal/tiers"

// The read-only command table is the tiers' (tier.ReadOnlyRuleOf).

// readOnly returns how a read-only tab treats m.
func readOnly(m *methodInfo) tier.ReadOnlyRule {
	domain := ""
	if m.domain != domainOther {
		domain = cdp.Domains[m.domain]
	}
	return tier.ReadOnlyRuleOf(m.name, m.enable || m.disable, domain)
}

// gate decides a command on a tab whose access is acc, before the
// emulation and the tab see it. It returns the params to forward (rewritten
// for script on a read-only tab) and, when it refuses, the decision.
func (c *clientConn) gate(k *cmd, acc tabAccess) (refusal Decision, ok bool) {
	m := k.m
	switch acc.Level {
	case accessBlind:
		if !tier.BlindAllowed(m.name) && !switchOnly(m) && !(m.name == "Page.addScriptToEvaluateOnNewDocument" && initRunsNothing(k.params)) {
			return accessRefusal(acc), false
		}
	case accessReadOnly:
		switch readOnly(m) {
		case tier.ROAllow:
		case tier.RONoEffects:
			c.inst.lock()
			isolated := k.isolated && k.r.tab.guard != nil
			c.inst.unlock()
			if isolated {
				break // the guard is in that world (tiers/worlds.go)
			}
			p, err := tier.ForceNoSideEffects(k.params)
			if err != nil {
				err = cdp.InvalidParams(err)
				return Decision{Verdict: Deny, Rule: acc.Rule, Message: "cdprelay: " + err.Error()}, false
			}
			k.params = p
		case tier.ROEmptyInit:
			if src, _, err := exactString(k.params, "source"); err != nil || !tier.RunsNothing(src) {
				return accessRefusal(acc), false
			}
		case tier.ROPlainCont:
			if !tier.OnlyKeys(k.params, "requestId") {
				return accessRefusal(acc), false
			}
		default:
			return accessRefusal(acc), false
		}
	}
	return Decision{}, true
}

func accessRefusal(acc tabAccess) Decision {
	return Decision{Verdict: Deny, Rule: acc.Rule, Message: "cdprelay: " + acc.Level.String() + ": " + acc.Why}
}
