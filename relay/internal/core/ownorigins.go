package core

import (
	"net"
	"net/http"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/origins"
)

// The relay's own origins (origins.Origins says which they are and why they
// are never shared): what the server does with them.

// LearnFrom notes the local address r arrived on, when a listener is
// configured. When it is new, the fences in force learn it too.
func (s *Relay) LearnFrom(r *http.Request) {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && s.Own.Learn(local) {
		s.AccessGen.Add(1)
		s.policyChanged()
		s.refreshAccess()
	}
}

// OwnURL reports whether u is on one of the relay's own origins.
func (s *Relay) OwnURL(u string) bool { return s.Own.Match(u) }

// OwnRefusal is the refusal of a command that would take a tab to u, one
// of the relay's own origins.
func OwnRefusal(u string) Decision {
	return Denial(origins.RuleOwnOrigin, "cdprelay: "+api.Origin(u)+" is the relay's own page, which is never shared with automation")
}

// OwnAccess is the access of a page or frame at u when it is one of the
// relay's own: blind, as a page that is never shared.
func (s *Relay) OwnAccess(u, what string) (TabAccess, bool) {
	if !s.Own.Match(u) {
		return TabAccess{}, false
	}
	return TabAccess{Level: api.Blind, Rule: origins.RuleOwnOrigin,
		Why: what + " shows " + api.Origin(u) + ", the relay's own page, which is never shared with automation"}, true
}
