package creds

import (
	"sync/atomic"

	"github.com/cdprelay/cdprelay/secrets"
)

// Instance is what the credentials keep of an instance, embedded in the
// relay's Instance; read without the lock.
type Instance struct {
	// Locked are the secrets typed in the instance's tabs, hidden in
	// everything it sends. Replaced, never changed in place.
	Locked atomic.Pointer[secrets.Lock]
	// Streams joins the pieces of streams the client reads while a secret
	// is locked.
	Streams Streams
	// URLPasswords counts the passwords of URLs the lock took, up to the
	// relay's bound on them.
	URLPasswords atomic.Int32
}
