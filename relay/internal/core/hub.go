package core

import (
	"sync/atomic"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/origins"
)

// Relay is what every instance shares: the configuration, the policy, the
// secrets, the relay's own origins. The Server that routes requests to the
// instances holds it; an instance reaches it from its srv.
type Relay struct {
	Cfg config.Config // static

	PolicyBox policyBox        // swapped by SetPolicy
	Secrets   secretBox        // swapped by SetSecrets
	Changes   changes          // any instance's change, for watchers
	Own       *origins.Origins // static; learns the local addresses it is served on
	// AccessGen moves on when what decides a site's access changes (the
	// policy, the relay's own origins), so that what was decided of a
	// frame's site before is decided again (frameAt).
	AccessGen atomic.Uint64

	// Instances lists the live instances (Server.Instances); static.
	Instances func() []*Instance

	slots []any // the stages' own (slots.go); static after NewRelay
}

// NewRelay makes what the instances of a server share, with cfg already
// checked (Config.withDefaults).
func NewRelay(cfg config.Config) *Relay { return &Relay{Cfg: cfg, slots: relaySlots.make()} }

type secretBox struct {
	p atomic.Pointer[config.SecretSource]
}

func (b *secretBox) Load() config.SecretSource {
	if p := b.p.Load(); p != nil {
		return *p
	}
	return nil
}

// SetSecrets replaces the secrets the relay may type; nil: none. Values
// already typed stay locked.
func (s *Relay) SetSecrets(src config.SecretSource) {
	if src == nil {
		s.Secrets.p.Store(nil)
		return
	}
	s.Secrets.p.Store(&src)
}
