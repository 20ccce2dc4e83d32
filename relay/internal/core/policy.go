package core

import (
	"sync/atomic"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// Verdict is a policy's answer for one client command.
type Verdict = api.Verdict

// The verdicts (api.Allow, ...).
const (
	// Allow lets the command through to emulation or the tab.
	Allow = api.Allow
	// Deny answers the command with a CDP error and never forwards it.
	Deny = api.Deny
	// AckAndDrop answers the command with an empty result and never
	// forwards it.
	AckAndDrop = api.AckAndDrop
	// Ask holds the command until a person approves it (then it goes on
	// through the pipeline) or denies it (the person's asking.go).
	Ask = api.Ask
)

// Decision is a verdict with what to tell the client and what to record.
type Decision = api.Decision

// Policy decides client commands before anything is emulated or forwarded
// (api.Policy has the contract).
type Policy = api.Policy

// policyBox holds the current policy; SetPolicy swaps it without touching
// any connection.
type policyBox struct{ p atomic.Pointer[Policy] }

func (b *policyBox) Load() Policy {
	if p := b.p.Load(); p != nil {
		return *p
	}
	return api.AllowAll{}
}

func (b *policyBox) Store(p Policy) {
	if p == nil {
		b.p.Store(nil)
		return
	}
	b.p.Store(&p)
}

// polSnap is the policy as one message sees it: loaded once per message,
// so that a SetPolicy while it is judged does not judge it by two.
type polSnap struct {
	Policy Policy
	// tiers: the policy gives a site another tier than full for the
	// instance's profile.
	Tiers bool
}

// policyNow loads the policy for one message.
func (in *Instance) policyNow() polSnap {
	p := in.Srv.PolicyBox.Load()
	return polSnap{Policy: p, Tiers: tiers.Has != nil && tiers.Has(in, p)}
}

// SetPolicy replaces the policy for every instance; commands already
// decided are not revisited. A nil policy allows everything.
func (s *Relay) SetPolicy(p Policy) {
	s.PolicyBox.Store(p)
	s.AccessGen.Add(1)
	s.policyChanged()
	s.refreshAccess()
}

// Policy returns the policy in force.
func (s *Relay) Policy() Policy { return s.PolicyBox.Load() }
