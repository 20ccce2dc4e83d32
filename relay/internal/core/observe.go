package core

import "github.com/cdprelay/cdprelay/relay/internal/api"

// Observer receives what the relay decides and sees (api.Observer has the
// contract). The audit log and the metrics implement it.
type Observer = api.Observer

// Event is one observation. It never carries params, page text or
// secrets: only the envelope's method, ids and short details.
type Event = api.Event

// Observe stamps ev with the instance and hands it to the observer.
func (in *Instance) Observe(ev Event) {
	ev.Instance = in.Id
	ev.Tenant = in.Tenant()
	ev.Detail = in.ScrubString(ev.Detail)
	in.Srv.Cfg.Observer.Observe(ev)
}

// Observe records an event that is not about one instance (a policy
// reload, say).
func (s *Relay) Observe(ev Event) { s.Cfg.Observer.Observe(ev) }
