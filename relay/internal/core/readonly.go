package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/cdp"

	"github.com/cdprelay/cdprelay/relay/internal/access"
)

// The read-only command table is the tiers' (access.ReadOnlyRuleOf).

// readOnly returns how a read-only tab treats m.
func readOnly(m *MethodInfo) access.ReadOnlyRule {
	domain := ""
	if m.Domain != domainOther {
		domain = cdp.Domains[m.Domain]
	}
	return access.ReadOnlyRuleOf(m.Name, m.enable || m.disable, domain)
}

// gate decides a command on a tab whose access is acc, before the
// emulation and the tab see it. It returns the params to forward (rewritten
// for script on a read-only tab) and, when it refuses, the decision.
func (c *ClientConn) gate(k *Cmd, acc TabAccess) (refusal Decision, ok bool) {
	m := k.M
	switch acc.Level {
	case AccessBlind:
		if !access.BlindAllowed(m.Name) && !switchOnly(m) && !(m.Name == "Page.addScriptToEvaluateOnNewDocument" && initRunsNothing(k.Params)) {
			return accessRefusal(acc), false
		}
	case AccessReadOnly:
		switch readOnly(m) {
		case access.ROAllow:
		case access.RONoEffects:
			c.Inst.Lock()
			isolated := k.isolated && k.Route.Tab.guard != nil
			c.Inst.Unlock()
			if isolated {
				break // the guard is in that world (tiers/worlds.go)
			}
			p, err := access.ForceNoSideEffects(k.Params)
			if err != nil {
				err = cdp.InvalidParams(err)
				return Decision{Verdict: Deny, Rule: acc.Rule, Message: "cdprelay: " + err.Error()}, false
			}
			k.Params = p
		case access.ROEmptyInit:
			if src, _, err := ExactString(k.Params, "source"); err != nil || !access.RunsNothing(src) {
				return accessRefusal(acc), false
			}
		case access.ROPlainCont:
			if !access.OnlyKeys(k.Params, "requestId") {
				return accessRefusal(acc), false
			}
		default:
			return accessRefusal(acc), false
		}
	}
	return Decision{}, true
}
