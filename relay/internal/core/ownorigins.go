package core

import (
	"net"
	"net/http"
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
