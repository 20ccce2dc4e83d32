package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/origins"
)

// The rule ids of the relay's own refusals, and what the stages share of
// a refusal.

// RelayRules lists the rule ids of the core's own refusals and those of
// the stages still in it, for counters that start at zero (the facade adds
// the stage packages').
func RelayRules() []string {
	return []string{RuleCredentials, RuleSecret,
		RuleNeverShared, RuleOutsideFence, api.RuleTakeOver, ruleReadOnlyWrite, RuleBlindFrame, api.RuleStopped,
		api.RuleDialogAnswered, RuleContext, origins.RuleOwnOrigin, RuleSecretField, RuleUnscannable}
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

// The credentials' rules, which the relay's own rules list names
// (RelayRules) and the operator's HeapProfiler check uses.
const (
	RuleSecret      = "relay:secret"
	RuleCredentials = "relay:credentials"
	RuleSecretField = "relay:secret-field"
	RuleUnscannable = "relay:secret-unscannable"
)

// A heap snapshot holds every string of the page, a typed secret among
// them, and HeapProfiler reaches objects by their place in the heap, past
// the contexts they belong to: refused while secrets are configured
// (Chrome refuses the domain to an extension too, today).
var DomainHeapProfiler = cdp.DomainIndex("HeapProfiler")

const MsgHeap = "cdprelay: HeapProfiler would read the page's memory, typed secrets included: refused while the relay has secrets"

// RuleContext is the rule id of a command that names one of the relay's
// own worlds (the tiers' context guard).
const RuleContext = "relay:context"
