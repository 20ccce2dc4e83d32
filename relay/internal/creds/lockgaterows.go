package creds

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// What the lock cannot read (internal/creds): while it holds anything,
// the commands that would give it are refused.

// unscannable reports the refusal of k when the lock holds anything and k
// would give what it cannot read.
func unscannable(c *core.ClientConn, k *core.Cmd) (core.Decision, bool) {
	if instanceSlot.Of(c.Inst).Locked.Load() == nil {
		return core.Decision{}, true
	}
	why := Unscannable(k.M.Name, k.Env.Params)
	if why == "" {
		return core.Decision{}, true
	}
	return core.Denial(api.RuleUnscannable, "cdprelay: "+k.M.Name+" is refused while a typed secret or a URL's password is hidden: "+why+", and the relay could not hide the value in it"), false
}

// SecretGates are the secret stage's checks of a command that types no
// secret: what the lock cannot read, and a tab whose password field holds
// one (fieldwatch.go). They report false when they answered or held k.
func SecretGates(c *core.ClientConn, k *core.Cmd) bool {
	if d, ok := unscannable(c, k); !ok {
		return c.Refuse(k, d)
	}
	return secretFieldGate(c, k)
}
