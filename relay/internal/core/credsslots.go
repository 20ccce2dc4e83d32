package core

import (
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/creds"
)

// What the credentials (secrets.go, credentials.go, streams.go,
// userinfo.go) keep per tab, per client and per instance: their slots,
// embedded in tab, clientConn and Instance.

// credsTab is what the credentials keep of a tab. Guarded by the
// instance's mutex.
type credsTab struct {
	// paused are the real credential headers of the tab's paused requests,
	// by session and request id, for the client's continue (credentials.go).
	paused map[string]*creds.KeptRequest
	// secretField is what the tab's fields hold of typed secrets
	// (secretfield.go).
	secretField secretField
}

// credsClient is what the credentials keep of a client.
type credsClient struct {
	// warned is when each console warning was last given (warnOnce).
	// Guarded by the instance's mutex.
	warned map[string]time.Time
}

// credsInstance is what the credentials keep of an instance, read without
// the lock (creds.Instance: the lock of secrets.go, the streams of
// streams.go, the URL passwords of userinfo.go, up to maxURLPasswords).
type credsInstance = creds.Instance
