package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/origins"
)

// The relay's own rule ids, listed (the ids themselves are the shared
// vocabulary's: package api), and what the stages share of a refusal.

// RelayRules lists the rule ids of the relay's refusals that more than one
// part gives, for counters that start at zero (the facade adds the stage
// packages' own).
func RelayRules() []string {
	return []string{api.RuleCredentials, api.RuleSecret,
		api.RuleNeverShared, api.RuleOutsideFence, api.RuleTakeOver, api.RuleReadOnly, api.RuleBlindFrame, api.RuleStopped,
		api.RuleDialogAnswered, api.RuleContext, origins.RuleOwnOrigin, api.RuleSecretField, api.RuleUnscannable}
}

// FailPaused fails the paused request of a refused Fetch.continueRequest,
// continueResponse or fulfillRequest: Playwright, among others, does not
// fail the request itself when the relay refuses its answer, and a paused
// request nobody answers hangs the page.
func (c *ClientConn) FailPaused(k *Cmd) {
	id, ok, _ := ExactString(k.Params, "requestId")
	if !ok || id == "" || k.Route.Via == nil {
		return
	}
	sid := ""
	if k.Route.Via.Child {
		sid = k.Route.Via.Id
	}
	st := c.Inst.Lock()
	st.Fire(k.Route.Tab.Id, sid, "Fetch.failRequest", map[string]any{"requestId": id, "errorReason": "BlockedByClient"})
	c.Inst.Unlock()
}

func Denial(rule, msg string) Decision { return Decision{Verdict: Deny, Rule: rule, Message: msg} }
