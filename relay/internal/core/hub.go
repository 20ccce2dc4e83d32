package core

import (
	"sync/atomic"

	"github.com/cdprelay/cdprelay/relay/internal/creds"
	"github.com/cdprelay/cdprelay/relay/internal/rules"
)

// Relay is what every instance shares: the configuration, the policy, the
// secrets, the relay's own origins. The Server that routes requests to the
// instances holds it; an instance reaches it from its srv.
type Relay struct {
	Cfg Config // static

	PolicyBox   policyBox                     // swapped by SetPolicy
	credHeaders atomic.Pointer[creds.Headers] // header names redacted on the way out; replaced by SetRedactHeaders
	secrets     secretBox                     // swapped by SetSecrets
	Changes     changes                       // any instance's change, for watchers
	Own         *rules.Origins                // static; learns the local addresses it is served on
	// accessGen moves on when what decides a site's access changes (the
	// policy, the relay's own origins), so that what was decided of a
	// frame's site before is decided again (frameAt).
	accessGen atomic.Uint64

	// Instances lists the live instances (Server.Instances); static.
	Instances func() []*Instance
}
