package creds

import (
	"sync/atomic"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// What the credentials (typing.go, keptheaders.go, fieldwatch.go,
// urlpasswords.go, rows.go) keep per tab, per client, per instance and in
// the relay: their slots in the core's structures (core.NewTabSlot, ...).
var (
	tabSlot      = core.NewTabSlot[credsTab]()
	clientSlot   = core.NewClientSlot[credsClient]()
	instanceSlot = core.NewInstanceSlot[Instance]()
	// relaySlot: the header names redacted on the way out
	// (SetRedactHeaders).
	relaySlot = core.NewRelaySlot[atomic.Pointer[Headers]]()
)

// credsTab is what the credentials keep of a tab. Guarded by the
// instance's mutex.
type credsTab struct {
	// paused are the real credential headers of the tab's paused requests,
	// by session and request id, for the client's continue (keptheaders.go).
	paused map[string]*KeptRequest
	// secretField is what the tab's fields hold of typed secrets
	// (fieldwatch.go).
	secretField secretField
}

// credsClient is what the credentials keep of a client.
type credsClient struct {
	// warned is when each console warning was last given (warnOnce).
	// Guarded by the instance's mutex.
	warned map[string]time.Time
}

// What the credentials keep of an instance, read without the lock, is a
// Instance: the lock of secrets.go, the streams of the stream
// pieces, the URL passwords of userinfo.go, up to maxURLPasswords.

// InstanceOf is what the credentials keep of in.
func InstanceOf(in *core.Instance) *Instance { return instanceSlot.Of(in) }
